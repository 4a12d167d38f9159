//! The SQLite store: reopen.

use super::*;

#[tokio::test]
async fn reopening_keeps_data_and_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooklab.db");
    let id = {
        let store = SqliteStore::open(&path).unwrap();
        store
            .record(delivery("stripe", valid(), b"1"))
            .await
            .unwrap()
            .id
    };
    for _ in 0..2 {
        let store = SqliteStore::open(&path).expect("a current schema reopens as is");
        assert!(store.get(id).await.unwrap().is_some());
    }
    let next = SqliteStore::open(&path)
        .unwrap()
        .record(delivery("stripe", valid(), b"2"))
        .await
        .unwrap()
        .id;
    assert!(next > id, "ids keep increasing across reopen");
}
