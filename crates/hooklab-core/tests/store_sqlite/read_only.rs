//! The SQLite store: read only.

use super::*;

#[tokio::test]
async fn the_cli_reads_while_the_receiver_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooklab.db");
    let store = SqliteStore::open(&path).unwrap();
    let id = store
        .record(delivery("stripe", valid(), b"a"))
        .await
        .unwrap()
        .id;

    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.list(&all()).unwrap().len(), 1);
    assert_eq!(reader.get(id).unwrap().unwrap().record.body, b"a");
    store
        .record(delivery("stripe", valid(), b"b"))
        .await
        .unwrap();
    assert_eq!(
        reader.list(&all()).unwrap().len(),
        2,
        "the reader sees commits made after it opened"
    );
}

#[test]
fn a_missing_database_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.db");
    let err = SqliteStore::open_read_only(&path).unwrap_err();
    assert!(matches!(err, StoreError::Storage(_)), "got {err:?}");
    assert!(!path.exists(), "reading must never create a database");
}
