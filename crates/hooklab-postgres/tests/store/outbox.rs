//! Every store: outbox.

use super::*;
use hooklab_core::store::{
    AttemptRecord, DeadLetterFilter, IdempotencyClaim, JobOutcome, KeyFilter, KeyStatus,
};

fn handled(key: Option<&str>) -> NewDelivery {
    let mut d = delivery("stripe", valid(), b"{}");
    d.enqueue = true;
    d.idempotency = key.map(|k| IdempotencyClaim {
        scope: "stripe".into(),
        key: k.into(),
        status: KeyStatus::Processing,
    });
    d
}

fn attempt(status: u16) -> AttemptRecord {
    AttemptRecord {
        started_at: UnixMillis(1),
        duration_ms: 3,
        target: Some("http://127.0.0.1:9/".into()),
        status: Some(status),
        response_headers: vec![Header::new("X-App", "yes")],
        response_body: vec![b'x'; 70 * 1024],
        error: None,
    }
}

async fn key_status(store: &dyn Store) -> KeyStatus {
    store.keys(KeyFilter::default()).await.unwrap()[0].status
}

pub(crate) async fn jobs_are_written_with_their_delivery_only_when_it_is_to_be_processed(
    engine: Engine,
) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let first = store.record(handled(Some("evt_1"))).await.unwrap();
    let dup = store.record(handled(Some("evt_1"))).await.unwrap();
    let keyless = store.record(handled(None)).await.unwrap();
    let unhandled = store
        .record(delivery("stripe", valid(), b"{}"))
        .await
        .unwrap();
    assert!(
        first.job.is_some(),
        "the first delivery of a key gets a job"
    );
    assert_eq!(dup.job, None, "a duplicate of a processing key gets none");
    assert!(
        keyless.job.is_some(),
        "a delivery without a key is processed"
    );
    assert_eq!(unhandled.job, None, "no handler, no job");
}

pub(crate) async fn a_lease_hides_a_job_until_it_expires(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let recorded = store.record(handled(Some("evt_1"))).await.unwrap();
    let now = UnixMillis(1_750_000_000_123);
    let leased = store.lease_jobs(now, 10, 30_000).await.unwrap();
    assert_eq!(leased.len(), 1);
    assert_eq!(leased[0].delivery, recorded.id);
    assert_eq!(leased[0].attempt, 1);
    assert_eq!(leased[0].key.as_deref(), Some("evt_1"));
    assert!(
        store.lease_jobs(now, 10, 30_000).await.unwrap().is_empty(),
        "a leased job is invisible to other workers"
    );
    assert_eq!(
        store.next_due().await.unwrap(),
        Some(UnixMillis(now.0 + 30_000)),
        "the lease's end is when it is due again"
    );
    let again = store
        .lease_jobs(UnixMillis(now.0 + 30_000), 10, 30_000)
        .await
        .unwrap();
    assert_eq!(
        again.len(),
        1,
        "a crashed worker's job runs again after the lease"
    );
    assert_eq!(again[0].attempt, 2);
    let stale = store
        .finish_job(leased[0].clone(), attempt(200), JobOutcome::Done, now)
        .await
        .unwrap();
    assert!(
        !stale,
        "the first worker lost its lease: its finish changes nothing"
    );
    assert_eq!(key_status(store).await, KeyStatus::Processing);
    assert!(
        store
            .finish_job(again[0].clone(), attempt(200), JobOutcome::Done, now)
            .await
            .unwrap()
    );
    assert_eq!(key_status(store).await, KeyStatus::Completed);
    let attempts = store.attempts(recorded.id).await.unwrap();
    assert_eq!(attempts.len(), 2, "both attempts are recorded");
    assert_eq!(
        attempts[1].record.response_body.len(),
        64 * 1024,
        "a response body is kept up to 64 KiB"
    );
}

pub(crate) async fn retries_then_dead_letter_then_redrive(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let recorded = store.record(handled(Some("evt_9"))).await.unwrap();
    let t0 = UnixMillis(1_750_000_000_123);
    let job = store.lease_jobs(t0, 1, 1000).await.unwrap().remove(0);
    let retry_at = UnixMillis(t0.0 + 5_000);
    store
        .finish_job(
            job,
            attempt(500),
            JobOutcome::Retry { run_at: retry_at },
            t0,
        )
        .await
        .unwrap();
    assert!(
        store
            .lease_jobs(UnixMillis(retry_at.0 - 1), 1, 1000)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.next_due().await.unwrap(), Some(retry_at));
    let job = store.lease_jobs(retry_at, 1, 1000).await.unwrap().remove(0);
    assert_eq!(job.attempt, 2);
    store
        .finish_job(
            job,
            attempt(500),
            JobOutcome::Dead {
                reason: "gave up after 2 attempts: HTTP 500".into(),
            },
            retry_at,
        )
        .await
        .unwrap();
    assert_eq!(key_status(store).await, KeyStatus::Failed);
    let dead = store
        .dead_letters(DeadLetterFilter::default())
        .await
        .unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].delivery, recorded.id);
    assert_eq!(dead[0].attempts, 2);
    assert!(dead[0].reason.contains("HTTP 500"));
    assert_eq!(
        store.next_due().await.unwrap(),
        None,
        "a dead job is never due"
    );

    let other_source = DeadLetterFilter {
        source: Some("github".into()),
        ..Default::default()
    };
    assert_eq!(store.redrive(other_source, retry_at).await.unwrap(), 0);
    assert_eq!(
        store
            .redrive(DeadLetterFilter::default(), retry_at)
            .await
            .unwrap(),
        1
    );
    assert_eq!(key_status(store).await, KeyStatus::Processing);
    assert!(
        store
            .dead_letters(DeadLetterFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    let job = store.lease_jobs(retry_at, 1, 1000).await.unwrap().remove(0);
    assert_eq!(job.attempt, 3, "a redriven job keeps its history");
    store
        .finish_job(job, attempt(200), JobOutcome::Done, retry_at)
        .await
        .unwrap();
    assert_eq!(key_status(store).await, KeyStatus::Completed);
    assert_eq!(store.attempts(recorded.id).await.unwrap().len(), 3);
}

pub(crate) async fn discard_removes_a_dead_letter_by_job_id(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    store.record(handled(None)).await.unwrap();
    let t = UnixMillis(1_750_000_000_123);
    let job = store.lease_jobs(t, 1, 1000).await.unwrap().remove(0);
    let id = job.job;
    store
        .finish_job(
            job,
            attempt(500),
            JobOutcome::Dead {
                reason: "no".into(),
            },
            t,
        )
        .await
        .unwrap();
    let wrong = DeadLetterFilter {
        jobs: Some(vec![id + 100]),
        ..Default::default()
    };
    assert_eq!(store.discard(wrong, t).await.unwrap(), 0);
    let right = DeadLetterFilter {
        jobs: Some(vec![id]),
        ..Default::default()
    };
    assert_eq!(store.discard(right, t).await.unwrap(), 1);
    assert!(
        store
            .dead_letters(DeadLetterFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .lease_jobs(UnixMillis(i64::MAX / 2), 10, 1)
            .await
            .unwrap()
            .is_empty()
    );
}
