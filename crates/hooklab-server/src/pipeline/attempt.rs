//! One attempt of one leased job: load the delivery, run its source's handler (bounded by the
//! attempt timeout), decide the outcome (done; retry at now + the schedule's delay; dead when
//! the schedule is exhausted), record attempt and outcome in one store call, announce both.

use super::handler::{HandlerContext, HandlerResult};
use super::worker::Jitter;
use crate::clock::Clock;
use crate::events::{AttemptEvent, AttemptOutcome, Event, KeyStatusEvent};
use hooklab_core::clock::UnixMillis;
use hooklab_core::retry::format_duration;
use hooklab_core::store::{
    AttemptRecord, DeadLetter, Delivery, JobOutcome, KeyStatus, LeasedJob, Store,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// What every attempt task needs, shared by the worker.
pub(super) struct Shared {
    pub(super) store: Arc<dyn Store>,
    pub(super) clock: Clock,
    pub(super) events: broadcast::Sender<Event>,
    /// Source name → handler, schedule and settings.
    pub(super) routes: super::worker::Routes,
    pub(super) attempt_timeout: Duration,
    pub(super) jitter: Jitter,
    /// Applied to a delivery once its job is done.
    pub(super) machines: crate::objects::Machines,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sources = self.routes.sources();
        f.debug_struct("Shared")
            .field("sources", &sources)
            .field("attempt_timeout", &self.attempt_timeout)
            .finish_non_exhaustive()
    }
}

/// Runs one attempt of `job` and finishes it. Storage failures are logged: the job's lease then
/// expires and it runs again, so nothing is lost.
pub(super) async fn run(shared: &Shared, job: LeasedJob) {
    let delivery = match shared.store.get(job.delivery).await {
        Ok(Some(delivery)) => delivery,
        Ok(None) => {
            let why = format!("delivery {} is not in the store", job.delivery);
            return give_up(shared, job, None, why).await;
        }
        Err(e) => {
            tracing::warn!(job = job.job, "cannot load delivery {}: {e}", job.delivery);
            return;
        }
    };
    let Some(route) = shared.routes.get(&job.source) else {
        let why = format!(
            "source `{}` has nothing to run in this listener (no forward target?); \
             redrive the job once it has one",
            job.source
        );
        return give_up(shared, job, Some(&delivery), why).await;
    };

    let started_at = shared.clock.now();
    let started = Instant::now();
    let ctx = HandlerContext {
        delivery: &delivery,
        attempt: job.attempt,
        job: job.job,
        source: &route.source,
        started_at,
    };
    let result =
        match tokio::time::timeout(shared.attempt_timeout, route.handler.handle(&ctx)).await {
            Ok(result) => result,
            Err(_) => HandlerResult::failed(
                started_at,
                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                format!(
                    "the handler did not finish within {}",
                    format_duration(shared.attempt_timeout)
                ),
            ),
        };
    let now = shared.clock.now();
    let outcome = if result.success {
        JobOutcome::Done
    } else {
        match route.schedule.delay_before(job.attempt, (shared.jitter)()) {
            Some(delay) => JobOutcome::Retry {
                run_at: UnixMillis(now.0.saturating_add(millis(delay))),
            },
            None => JobOutcome::Dead {
                reason: dead_reason(job.attempt, &result.record),
            },
        }
    };
    let done = outcome == JobOutcome::Done;
    let finished = finish(shared, job, Some(&delivery), result.record, outcome, now).await;
    if done && finished {
        // Processed: now the state machines see the event.
        let store = shared.store.as_ref();
        match crate::objects::apply_delivery(store, &shared.machines, &delivery, now).await {
            Ok(changes) => crate::objects::announce(&shared.events, changes),
            Err(e) => tracing::warn!(
                delivery = delivery.id,
                "could not apply state machines: {e}"
            ),
        }
    }
}

/// Dead-letters `job` without running a handler, with `why` as the attempt's error.
async fn give_up(shared: &Shared, job: LeasedJob, delivery: Option<&Delivery>, why: String) {
    let now = shared.clock.now();
    let record = HandlerResult::failed(now, 0, why.clone()).record;
    let outcome = JobOutcome::Dead { reason: why };
    finish(shared, job, delivery, record, outcome, now).await;
}

/// Records the attempt and its outcome and announces them; `true` when this worker still
/// held the job (its finish counted).
async fn finish(
    shared: &Shared,
    job: LeasedJob,
    delivery: Option<&Delivery>,
    record: AttemptRecord,
    outcome: JobOutcome,
    now: UnixMillis,
) -> bool {
    let finished = shared
        .store
        .finish_job(job.clone(), record.clone(), outcome.clone(), now)
        .await;
    let recorded = match finished {
        Ok(recorded) => recorded,
        Err(e) => {
            tracing::warn!(
                job = job.job,
                "cannot record attempt {}: {e}; it runs again once its lease expires",
                job.attempt
            );
            return false;
        }
    };
    let metadata = delivery.map(|d| &d.record.metadata);
    let event_id = metadata.and_then(|m| m.event_id.clone());
    let (kind, next_attempt_at) = match (&outcome, recorded) {
        (_, false) => (AttemptOutcome::Superseded, None),
        (JobOutcome::Done, true) => (AttemptOutcome::Done, None),
        (JobOutcome::Retry { run_at }, true) => (AttemptOutcome::Retry, Some(*run_at)),
        (JobOutcome::Dead { .. }, true) => (AttemptOutcome::Dead, None),
    };
    if !recorded {
        tracing::info!(
            job = job.job,
            "attempt {} finished after its lease expired; another worker has the job",
            job.attempt
        );
    }
    // No subscriber is fine; a lagging one misses events but never slows the worker.
    let _ = shared.events.send(Event::Attempt(AttemptEvent {
        job: job.job,
        delivery: job.delivery,
        source: job.source.clone(),
        event_id: event_id.clone(),
        attempt: job.attempt,
        started_at: record.started_at,
        duration_ms: record.duration_ms,
        target: record.target,
        status: record.status,
        error: record.error,
        outcome: kind,
        next_attempt_at,
    }));
    let outcome_kind = match &outcome {
        JobOutcome::Done => Some(true),
        JobOutcome::Dead { .. } => Some(false),
        JobOutcome::Retry { .. } => None,
    };
    if let (JobOutcome::Dead { reason }, true) = (outcome, recorded) {
        let _ = shared.events.send(Event::DeadLetter(DeadLetter {
            job: job.job,
            delivery: job.delivery,
            source: job.source,
            event_id,
            event_type: metadata.and_then(|m| m.event_type.clone()),
            scope: job.scope.clone(),
            key: job.key.clone(),
            reason,
            attempts: job.attempt,
            dead_at: now,
        }));
    }
    let key_status = match (outcome_kind, recorded) {
        (Some(true), true) => Some(KeyStatus::Completed),
        (Some(false), true) => Some(KeyStatus::Failed),
        _ => None,
    };
    if let (Some(status), Some(scope), Some(key)) = (key_status, &job.scope, &job.key) {
        let _ = shared.events.send(Event::KeyStatus(KeyStatusEvent {
            scope: scope.clone(),
            key: key.clone(),
            status,
            delivery: job.delivery,
        }));
    }
    recorded
}

/// Why a job was given up: how many attempts, and what the last one said.
fn dead_reason(attempts: u32, last: &AttemptRecord) -> String {
    let what = match (&last.error, last.status) {
        (Some(error), _) => error.clone(),
        (None, Some(status)) => format!("HTTP {status}"),
        (None, None) => "failed".to_string(),
    };
    let plural = if attempts == 1 { "" } else { "s" };
    format!("gave up after {attempts} attempt{plural}: {what}")
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
