//! The SQLite store: idempotency keys in a file written by an older Hooklab. The claims
//! themselves are tested on both engines by `crates/hooklab-postgres/tests/store`.

use super::*;
use hooklab_core::store::{IdempotencyClaim, KeyStatus};

fn claiming(key: &str, status: KeyStatus) -> NewDelivery {
    let mut d = delivery("stripe", valid(), key.as_bytes());
    d.idempotency = Some(IdempotencyClaim {
        scope: "stripe".into(),
        key: key.into(),
        status,
    });
    d
}

#[test]
fn a_version_1_database_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        // What a Hooklab with schema version 1 wrote.
        let store = SqliteStore::open(&path).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(store.record(delivery("stripe", valid(), b"old")))
            .unwrap();
        store.close().unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE objects; DROP TABLE timeline; DROP TABLE jobs; DROP TABLE attempts; \
             DROP TABLE idempotency_keys; DROP INDEX deliveries_duplicates; \
             ALTER TABLE deliveries DROP COLUMN duplicate_of; PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).expect("version 1 upgrades to the current schema");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let rows = rt.block_on(store.list(all())).unwrap();
    assert_eq!(rows.len(), 1, "old deliveries survive the upgrade");
    assert_eq!(rows[0].duplicate_of, None);
    let r = rt
        .block_on(store.record(claiming("evt_new", KeyStatus::Completed)))
        .unwrap();
    assert!(r.key.is_some(), "the upgraded file takes claims");
}
