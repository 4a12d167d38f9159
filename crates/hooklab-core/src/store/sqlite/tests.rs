//! Unit tests of the engine's moving parts: group commit, a real storage failure (the 503
//! path) and recovery from it, and shutdown that commits what is queued.

use super::*;
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::Header;
use crate::verdict::Verdict;

fn delivery(body: Vec<u8>) -> NewDelivery {
    NewDelivery {
        received_at: UnixMillis(1_700_000_000_000),
        source: "stripe".into(),
        provider: None,
        method: "POST".into(),
        path: "/stripe".into(),
        query: None,
        headers: vec![Header::new("Content-Type", "application/json")],
        body_size: body.len() as u64,
        body,
        body_refused: false,
        remote_addr: Some("127.0.0.1:9".into()),
        verdict: Verdict::not_verified("test"),
        metadata: Metadata::default(),
        response_status: 200,
        idempotency: None,
        enqueue: false,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a test runtime")
}

fn count(store: &SqliteStore, rt: &tokio::runtime::Runtime) -> usize {
    let filter = DeliveryFilter {
        limit: Some(10_000),
        ..Default::default()
    };
    rt.block_on(store.list(filter)).unwrap().len()
}

#[test]
fn a_full_database_fails_the_write_without_panicking_and_the_writer_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        max_page_count: Some(1),
        ..Default::default()
    };
    let store = SqliteStore::open_with(&dir.path().join("full.db"), options).unwrap();
    let rt = runtime();
    let big = vec![7u8; 64 * 1024];

    let err = rt
        .block_on(store.record(delivery(big.clone())))
        .expect_err("a body that needs new pages cannot fit in a pinned file");
    assert!(
        matches!(&err, StoreError::Storage(m) if m.contains("full")),
        "the caller must learn it is a storage failure (the receiver answers 503): {err:?}"
    );
    assert_eq!(store.stats().failed_batches, 1);
    assert_eq!(
        count(&store, &rt),
        0,
        "a failed group must leave no row behind"
    );

    rt.block_on(store.record(delivery(b"{}".to_vec())))
        .expect("the writer keeps serving: a small row still fits in allocated pages");

    let cap = rt.block_on(store.set_max_page_count(None)).unwrap();
    assert!(cap > 1_000_000, "the default cap is restored, got {cap}");
    let id = rt
        .block_on(store.record(delivery(big.clone())))
        .expect("once space is available again, writes succeed")
        .id;
    let stored = rt.block_on(store.get(id)).unwrap().unwrap();
    assert_eq!(stored.record.body, big);
    assert_eq!(count(&store, &rt), 2);
}

#[test]
fn the_cap_can_be_lowered_on_a_running_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("cap.db")).unwrap();
    let rt = runtime();
    rt.block_on(store.record(delivery(vec![1; 10_000])))
        .unwrap();
    rt.block_on(store.set_max_page_count(Some(1))).unwrap();
    assert!(
        rt.block_on(store.record(delivery(vec![2; 10_000])))
            .is_err(),
        "with the file pinned, a write needing new pages must fail"
    );
}

#[test]
fn a_group_never_exceeds_max_batch() {
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions {
        max_batch: 4,
        ..Default::default()
    };
    let store = SqliteStore::open_with(&dir.path().join("batch.db"), options).unwrap();
    let rt = runtime();
    // `record` queues at call time, so all 40 are queued before the first is awaited.
    let pending: Vec<_> = (0..40u8).map(|i| store.record(delivery(vec![i]))).collect();
    let ids: Vec<DeliveryId> = pending
        .into_iter()
        .map(|f| rt.block_on(f).unwrap().id)
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids follow call order: {ids:?}"
    );
    let stats = store.stats();
    assert_eq!(stats.rows, 40);
    assert!(stats.largest_batch <= 4, "{stats:?}");
    assert!(
        stats.commits >= 10,
        "40 rows in groups of at most 4: {stats:?}"
    );
}

#[test]
fn close_commits_everything_already_queued_then_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("close.db");
    let store = SqliteStore::open(&path).unwrap();
    let rt = runtime();
    let pending: Vec<_> = (0..100u8)
        .map(|i| store.record(delivery(vec![i])))
        .collect();
    // A future dropped unawaited still has its delivery recorded.
    drop(store.record(delivery(b"dropped".to_vec())));
    store.close().unwrap();
    for f in pending {
        rt.block_on(f)
            .expect("a write queued before close is committed and answered");
    }
    assert!(matches!(
        rt.block_on(store.record(delivery(vec![]))),
        Err(StoreError::Closed)
    ));
    assert!(matches!(
        rt.block_on(store.list(DeliveryFilter::default())),
        Err(StoreError::Closed)
    ));
    store.close().expect("closing twice is harmless");
    drop(store);

    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(
        count(&reopened, &rt),
        101,
        "every queued write survived close"
    );
}

#[test]
fn a_declared_size_beyond_i64_does_not_fail_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("size.db")).unwrap();
    let rt = runtime();
    let mut forged = delivery(vec![]);
    forged.body_refused = true;
    forged.body_size = u64::MAX;
    let id = rt.block_on(store.record(forged)).unwrap().id;
    let stored = rt.block_on(store.get(id)).unwrap().unwrap();
    assert_eq!(
        stored.record.body_size,
        i64::MAX as u64,
        "saturated, not failed"
    );
}

#[test]
fn a_database_from_a_newer_hooklab_is_refused_by_writer_and_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.db");
    SqliteStore::open(&path).unwrap().close().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);
    for result in [
        SqliteStore::open(&path).map(drop),
        SqliteStore::open_read_only(&path).map(drop),
    ] {
        match result {
            Err(StoreError::TooNew { found, supported }) => {
                assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
            }
            other => panic!("a newer schema must be refused, got {other:?}"),
        }
    }
}

#[test]
fn every_answer_waits_for_a_sync_and_one_sync_covers_many_groups() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
    let rt = runtime();
    let futures: Vec<_> = (0..300)
        .map(|i| store.record(delivery(vec![b'x'; i])))
        .collect();
    for f in futures {
        rt.block_on(f).expect("recorded");
    }
    let stats = store.stats();
    assert!(stats.syncs >= 1, "answers come from the syncer: {stats:?}");
    assert!(
        stats.syncs <= stats.commits,
        "never more syncs than groups: {stats:?}"
    );
    assert!(
        dir.path().join("hooklab.db-wal").exists(),
        "the WAL the syncer syncs is where it expects it"
    );
}

#[test]
fn a_failing_operation_fails_alone_and_the_deliveries_around_it_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
    let rt = runtime();
    // Queued back to back, so they usually share one group; the outcome must hold either way.
    let before = store.record(delivery(b"before".to_vec()));
    let missing = store.set_key_status("stripe".into(), "evt_none".into(), KeyStatus::Completed);
    let after = store.record(delivery(b"after".to_vec()));
    rt.block_on(before).expect("the delivery before commits");
    let err = rt.block_on(missing).unwrap_err();
    assert!(err.to_string().contains("evt_none"), "{err}");
    rt.block_on(after).expect("the delivery after commits");
    assert_eq!(count(&store, &rt), 2);
}
