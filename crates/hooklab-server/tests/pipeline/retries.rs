//! Retries and the dead-letter queue, in-process under paused time: an app that always answers
//! 500 is retried exactly on the schedule, then the job is dead-lettered and its key `failed`;
//! once the app recovers, a redrive completes the job and the key follows.

use crate::support::*;
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::retry::RetrySchedule;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{DeadLetterFilter, KeyStatus, Store};
use hooklab_server::clock::Clock;
use hooklab_server::config::{SourceConfig, SuccessPolicy};
use hooklab_server::events::{AttemptEvent, AttemptOutcome, Event};
use hooklab_server::pipeline::{ForwardHandler, Route, Worker, WorkerOptions};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

const BASE: UnixMillis = UnixMillis(1_700_000_000_000);

/// The next attempt or dead letter on the bus.
async fn next(events: &mut broadcast::Receiver<Event>) -> Event {
    events.recv().await.expect("the bus is open")
}

fn attempt(event: Event) -> AttemptEvent {
    match event {
        Event::Attempt(a) => a,
        other => panic!("expected an attempt, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_app_is_retried_on_schedule_then_dead_lettered_and_redriven() {
    let app = App::start(Answer::Status(500)).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).unwrap());
    let store: Arc<dyn Store> = Arc::new(Unadvanced(Arc::clone(&sqlite)));
    let clock = Clock::tokio_at(BASE);
    let recorded = store
        .record(new_delivery("pay", "evt_retry", BASE))
        .await
        .unwrap();
    assert!(recorded.job.is_some(), "the delivery wrote its job");

    let (bus, mut events) = broadcast::channel(64);
    let handler = ForwardHandler::new(
        &app.url("/hooks"),
        SuccessPolicy::Any2xx,
        Duration::from_secs(30),
    )
    .unwrap();
    let route = Route {
        handler: Arc::new(UnadvancedHandler(Arc::new(handler))),
        schedule: RetrySchedule::parse("1s,5s,30s").unwrap(),
        source: SourceConfig::new("pay", ProviderId::Stripe, Vec::new()),
    };
    let options = WorkerOptions {
        jitter: Arc::new(|| 0.5), // no jitter: the times are exact
        ..WorkerOptions::default()
    };
    let worker = Worker::new(Arc::clone(&store), clock.clone(), bus, options).route("pay", route);
    let (stop, stopped) = oneshot::channel::<()>();
    let running = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));

    let mut attempts = Vec::new();
    for _ in 0..4 {
        attempts.push(attempt(next(&mut events).await));
    }
    let starts: Vec<i64> = attempts.iter().map(|a| a.started_at.0 - BASE.0).collect();
    assert_eq!(
        starts,
        [0, 1_000, 6_000, 36_000],
        "attempt 1 at once, then 1 s, 5 s and 30 s after each failure"
    );
    assert_eq!(
        attempts.iter().map(|a| a.outcome).collect::<Vec<_>>(),
        [
            AttemptOutcome::Retry,
            AttemptOutcome::Retry,
            AttemptOutcome::Retry,
            AttemptOutcome::Dead
        ]
    );
    assert_eq!(
        attempts[0].next_attempt_at,
        Some(UnixMillis(BASE.0 + 1_000)),
        "the retry is announced with its time"
    );
    assert!(attempts.iter().all(|a| a.status == Some(500)));
    let Event::DeadLetter(dead) = next(&mut events).await else {
        panic!("the last attempt dead-letters the job");
    };
    let Event::KeyStatus(failed) = next(&mut events).await else {
        panic!("the key's new status is announced");
    };
    assert_eq!(failed.status, KeyStatus::Failed);
    assert_eq!(
        (dead.attempts, dead.event_id.as_deref()),
        (4, Some("evt_retry"))
    );
    assert!(
        dead.reason.contains("4 attempts") && dead.reason.contains("HTTP 500"),
        "{}",
        dead.reason
    );

    assert_eq!(app.hits(), 4, "one request per attempt, no more");
    let headers: Vec<String> = app
        .seen()
        .iter()
        .map(|s| s.header("x-hooklab-attempt").unwrap())
        .collect();
    assert_eq!(
        headers,
        ["1", "2", "3", "4"],
        "each request says its attempt"
    );
    let queue = store
        .dead_letters(DeadLetterFilter::default())
        .await
        .unwrap();
    assert_eq!(queue.len(), 1, "the job is in the dead-letter queue");
    assert_eq!(queue[0].delivery, recorded.id);
    assert_eq!(
        key_status(store.as_ref(), "evt_retry").await,
        KeyStatus::Failed
    );
    let stored = store.attempts(recorded.id).await.unwrap();
    assert_eq!(stored.len(), 4, "every attempt is recorded");
    assert_eq!(stored[3].record.status, Some(500));

    // Nothing more happens by itself: a dead job stays dead.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(app.hits(), 4, "no attempt after the dead letter");

    app.answer(Answer::Status(200));
    let moved = store
        .redrive(DeadLetterFilter::default(), clock.now())
        .await
        .unwrap();
    assert_eq!(moved, 1);
    assert_eq!(
        key_status(store.as_ref(), "evt_retry").await,
        KeyStatus::Processing
    );
    let redriven = attempt(next(&mut events).await);
    assert_eq!(redriven.outcome, AttemptOutcome::Done, "{redriven:?}");
    let Event::KeyStatus(completed) = next(&mut events).await else {
        panic!("the key's new status is announced");
    };
    assert_eq!(completed.status, KeyStatus::Completed);
    assert_eq!((redriven.attempt, redriven.status), (5, Some(200)));
    assert!(
        redriven.started_at.0 - clock.now().0 <= 1_000,
        "picked up by the next poll, within a second"
    );
    assert_eq!(
        key_status(store.as_ref(), "evt_retry").await,
        KeyStatus::Completed
    );
    assert!(
        store
            .dead_letters(DeadLetterFilter::default())
            .await
            .unwrap()
            .is_empty()
    );

    let _ = stop.send(());
    running.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn jitter_moves_a_retry_by_at_most_ten_percent() {
    let app = App::start(Answer::Status(503)).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).unwrap());
    let store: Arc<dyn Store> = Arc::new(Unadvanced(sqlite));
    store
        .record(new_delivery("pay", "evt_jitter", BASE))
        .await
        .unwrap();
    let (bus, mut events) = broadcast::channel(64);
    let handler =
        ForwardHandler::new(&app.url("/"), SuccessPolicy::Any2xx, Duration::from_secs(5)).unwrap();
    let route = Route {
        handler: Arc::new(UnadvancedHandler(Arc::new(handler))),
        schedule: RetrySchedule::parse("10s").unwrap(),
        source: SourceConfig::new("pay", ProviderId::Stripe, Vec::new()),
    };
    let options = WorkerOptions {
        jitter: Arc::new(|| 0.999), // the far end of the range: +10 %
        ..WorkerOptions::default()
    };
    let worker = Worker::new(store, Clock::tokio_at(BASE), bus, options).route("pay", route);
    let (stop, stopped) = oneshot::channel::<()>();
    let running = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    let first = attempt(next(&mut events).await);
    let second = attempt(next(&mut events).await);
    let gap = second.started_at.0 - first.started_at.0;
    assert!(
        (10_900..=11_000).contains(&gap),
        "10 s + at most 10 %: {gap} ms"
    );
    assert_eq!(
        second.outcome,
        AttemptOutcome::Dead,
        "the schedule had one retry"
    );
    let _ = stop.send(());
    running.await.unwrap();
}
