//! The SQLite store: group commit.

use super::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

/// Records `tasks * per_task` deliveries from concurrent tasks; returns ids and rows/s.
async fn record_concurrently(
    store: &Arc<SqliteStore>,
    tasks: usize,
    per_task: usize,
    body: &'static [u8],
) -> (Vec<i64>, f64) {
    let started = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(per_task);
                for i in 0..per_task {
                    let mut d = delivery("stripe", valid(), body);
                    d.metadata.event_id = Some(format!("evt_{t}_{i}"));
                    ids.push(store.record(d).await.expect("every record commits").id);
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for h in handles {
        ids.extend(h.await.unwrap());
    }
    let rate = ids.len() as f64 / started.elapsed().as_secs_f64();
    (ids, rate)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_thousand_concurrent_records_group_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooklab.db");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    let (ids, rate) = record_concurrently(&store, 200, 10, br#"{"id":"evt"}"#).await;

    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), 2_000, "every record got its own id");
    let stats = store.stats();
    println!("2 000 records from 200 tasks: {rate:.0} rows/s, {stats:?}");
    assert_eq!(stats.rows, 2_000);
    assert!(
        stats.commits < stats.rows,
        "concurrent records must share commits (one fsync for many): {stats:?}"
    );

    drop(Arc::try_unwrap(store).expect("no other handle"));
    let reopened = SqliteStore::open(&path).unwrap();
    let listed = reopened.list(all()).await.unwrap();
    assert_eq!(listed.len(), 2_000, "every acknowledged record is on disk");
    let listed_ids: HashSet<_> = listed.iter().map(|s| s.id).collect();
    assert_eq!(listed_ids, ids.iter().copied().collect::<HashSet<_>>());
}

/// Not a timed assertion: prints throughput for a quick look (`--nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prints_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).unwrap());
    static BODY: [u8; 1024] = [b'x'; 1024];
    for (tasks, per_task) in [(1, 200), (64, 100), (512, 40)] {
        let before = store.stats();
        let (ids, rate) = record_concurrently(&store, tasks, per_task, &BODY).await;
        let after = store.stats();
        println!(
            "{tasks:>3} concurrent writers, {} × 1 KiB: {rate:>8.0} rows/s, {} commits",
            ids.len(),
            after.commits - before.commits
        );
    }
}
