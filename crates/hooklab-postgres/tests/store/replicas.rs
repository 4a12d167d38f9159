//! PostgreSQL only: several stores (as several `hooklab serve` processes would hold) on one
//! database. The unique constraint and `SKIP LOCKED` decide across them.

use super::*;
use hooklab_core::store::{
    AttemptRecord, IdempotencyClaim, JobOutcome, KeyFilter, KeyStatus, LeasedJob,
};
use std::collections::HashSet;

async fn replicas(n: usize) -> Vec<Arc<PgStore>> {
    let url = fresh_database().await;
    let mut stores = Vec::new();
    for _ in 0..n {
        stores.push(Arc::new(
            PgStore::connect_with(&url, options()).await.unwrap(),
        ));
    }
    stores
}

fn claiming(key: &str) -> NewDelivery {
    let mut d = delivery("stripe", valid(), b"{}");
    d.enqueue = true;
    d.idempotency = Some(IdempotencyClaim {
        scope: "stripe".into(),
        key: key.into(),
        status: KeyStatus::Processing,
    });
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_on_three_replicas_have_one_winner_and_one_job() {
    let stores = replicas(3).await;
    let tasks: Vec<_> = (0..600)
        .map(|i| {
            let store = Arc::clone(&stores[i % 3]);
            tokio::spawn(async move { store.record(claiming("evt_race")).await.unwrap() })
        })
        .collect();
    let mut recorded = Vec::new();
    for t in tasks {
        recorded.push(t.await.unwrap());
    }
    let winners: Vec<_> = recorded
        .iter()
        .filter(|r| r.key.is_some_and(|k| k.process))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one delivery is to be processed");
    assert_eq!(
        recorded.iter().filter(|r| r.job.is_some()).count(),
        1,
        "exactly one job is written across the replicas"
    );
    let first = winners[0].id;
    assert!(
        recorded
            .iter()
            .all(|r| r.key.unwrap().first_delivery == first)
    );
    let keys = stores[0].keys(KeyFilter::default()).await.unwrap();
    assert_eq!(keys[0].deliveries, 600, "every delivery is counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_leasing_at_once_never_share_a_job() {
    let stores = replicas(3).await;
    for i in 0..300 {
        stores[i % 3]
            .record(claiming(&format!("evt_{i}")))
            .await
            .unwrap();
    }
    let now = UnixMillis(1_750_000_000_123);
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let store = Arc::clone(&stores[w % 3]);
            tokio::spawn(async move {
                let mut mine: Vec<LeasedJob> = Vec::new();
                loop {
                    let batch = store.lease_jobs(now, 7, 60_000).await.unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch);
                }
            })
        })
        .collect();
    let mut all_jobs = Vec::new();
    for w in workers {
        all_jobs.extend(w.await.unwrap());
    }
    let distinct: HashSet<_> = all_jobs.iter().map(|j| j.job).collect();
    assert_eq!(all_jobs.len(), 300, "every job is leased once");
    assert_eq!(distinct.len(), 300, "no job is leased by two workers");
    // A replica dies holding a lease: another replica takes the job once the lease expires.
    let later = UnixMillis(now.0 + 60_000);
    let retaken = stores[2].lease_jobs(later, 1, 60_000).await.unwrap();
    assert_eq!(retaken.len(), 1, "an expired lease is due again");
    assert_eq!(retaken[0].attempt, 2);
    let attempt = AttemptRecord {
        started_at: later,
        duration_ms: 1,
        target: None,
        status: Some(200),
        response_headers: vec![],
        response_body: vec![],
        error: None,
    };
    let orphan = all_jobs
        .iter()
        .find(|j| j.job == retaken[0].job)
        .unwrap()
        .clone();
    assert!(
        !stores[0]
            .finish_job(orphan, attempt.clone(), JobOutcome::Done, later)
            .await
            .unwrap(),
        "the first lease's finish is refused once another replica has the job"
    );
    assert!(
        stores[1]
            .finish_job(retaken[0].clone(), attempt, JobOutcome::Done, later)
            .await
            .unwrap()
    );
}
