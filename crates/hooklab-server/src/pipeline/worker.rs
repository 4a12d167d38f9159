//! The worker: leases due jobs from the store's outbox and runs them, at most `concurrency` at
//! a time, until told to stop.
//!
//! It wakes when the receiver enqueues a job (a [`Notify`] the receiver pokes), when the next
//! retry is due ([`Store::next_due`]), when an attempt finishes (a slot is free), and at least
//! every `poll_interval`: other processes change the database too (`hooklab dlq redrive`, or a
//! crashed listener whose leases expire). Time comes from the [`Clock`] (Unix milliseconds for
//! the store) and sleeping from `tokio::time`, so tests run it under paused time.
//!
//! Shutdown: stop leasing, wait for the attempts in flight (at most `drain_timeout`), return.
//! An attempt cut off there is not lost: its lease expires and the job runs again later.

use super::attempt::{self, Shared};
use super::handler::Handler;
use crate::clock::Clock;
use crate::config::SourceConfig;
use crate::events::Event;
use hooklab_core::retry::RetrySchedule;
use hooklab_core::store::Store;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _, RandomState};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, broadcast};
use tokio::task::JoinSet;

/// A random fraction in `[0, 1)` for retry jitter; tests pass a constant.
pub type Jitter = Arc<dyn Fn() -> f64 + Send + Sync>;

/// What the worker does with one source's jobs.
#[derive(Clone)]
pub struct Route {
    pub handler: Arc<dyn Handler>,
    /// Delays between attempts (time scale already applied); exhausted → dead letter.
    pub schedule: RetrySchedule,
    /// Handed to the handler with every attempt.
    pub source: SourceConfig,
}

/// Source name → [`Route`], shared: the worker reads it for every job, and whoever changes a
/// source's forward target at run time (the control API) replaces that source's route.
#[derive(Clone, Default)]
pub struct Routes(Arc<std::sync::RwLock<HashMap<String, Route>>>);

impl Routes {
    /// Sets (or, with `None`, removes) the route of `source`'s jobs from now on.
    pub fn set(&self, source: &str, route: Option<Route>) {
        let mut routes = self.write();
        match route {
            Some(route) => routes.insert(source.to_string(), route),
            None => routes.remove(source),
        };
    }

    /// `source`'s route now.
    pub fn get(&self, source: &str) -> Option<Route> {
        self.read().get(source).cloned()
    }

    /// The sources that have a route, sorted.
    pub fn sources(&self) -> Vec<String> {
        let mut names: Vec<String> = self.read().keys().cloned().collect();
        names.sort_unstable();
        names
    }

    // A panic while holding the lock cannot leave the map half-changed (insert and remove
    // are single operations), so a poisoned lock is still good to use.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Route>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Route>> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Routes").field(&self.sources()).finish()
    }
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("source", &self.source.name)
            .field("schedule", &self.schedule.to_string())
            .finish_non_exhaustive()
    }
}

/// How the worker runs.
#[derive(Clone)]
pub struct WorkerOptions {
    /// Attempts running at once (a semaphore's permits).
    pub concurrency: usize,
    /// The longest one attempt may run; the handler is cut off after it.
    pub attempt_timeout: Duration,
    /// The longest the worker sleeps without looking at the store.
    pub poll_interval: Duration,
    /// How long shutdown waits for attempts in flight.
    pub drain_timeout: Duration,
    /// Where retry jitter comes from.
    pub jitter: Jitter,
}

impl WorkerOptions {
    /// The visibility timeout: the attempt timeout plus a margin (as long again, at most 5 s)
    /// for recording the result. A job whose worker died becomes due again after it.
    pub fn lease(&self) -> Duration {
        self.attempt_timeout + self.attempt_timeout.min(Duration::from_secs(5))
    }
}

impl Default for WorkerOptions {
    fn default() -> Self {
        Self {
            concurrency: crate::config::DEFAULT_CONCURRENCY,
            attempt_timeout: crate::config::DEFAULT_FORWARD_TIMEOUT,
            poll_interval: Duration::from_secs(1),
            drain_timeout: Duration::from_secs(5),
            jitter: Arc::new(random_fraction),
        }
    }
}

impl std::fmt::Debug for WorkerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerOptions")
            .field("concurrency", &self.concurrency)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("poll_interval", &self.poll_interval)
            .field("drain_timeout", &self.drain_timeout)
            .finish_non_exhaustive()
    }
}

/// Leases jobs and runs their source's [`Route`]. Build it, hand [`Worker::waker`] to the
/// receiver, then [`Worker::run`] it in a task.
#[derive(Debug)]
pub struct Worker {
    shared: Shared,
    /// Poked by the receiver when it enqueues a job.
    wake: Arc<Notify>,
    options: WorkerOptions,
}

impl Worker {
    pub fn new(
        store: Arc<dyn Store>,
        clock: Clock,
        events: broadcast::Sender<Event>,
        options: WorkerOptions,
    ) -> Self {
        Self {
            shared: Shared {
                store,
                clock,
                events,
                routes: Routes::default(),
                attempt_timeout: options.attempt_timeout,
                jitter: Arc::clone(&options.jitter),
                machines: crate::objects::Machines::default(),
            },
            wake: Arc::new(Notify::new()),
            options,
        }
    }

    /// Runs `route` for jobs of the source named `source`. A job of a source without a route
    /// goes to the dead-letter queue (redrive it once the source is configured again).
    pub fn route(self, source: impl Into<String>, route: Route) -> Self {
        self.shared.routes.set(&source.into(), Some(route));
        self
    }

    /// The worker's routes, to change them while it runs.
    pub fn routes(&self) -> Routes {
        self.shared.routes.clone()
    }

    /// Notify this when a job is enqueued, so the worker does not wait for its next poll.
    pub fn waker(&self) -> Arc<Notify> {
        Arc::clone(&self.wake)
    }

    /// Runs until `shutdown` resolves, then drains (bounded) and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Worker {
            shared,
            wake,
            options,
        } = self;
        let shared = Arc::new(shared);
        let permits = Arc::new(Semaphore::new(options.concurrency.max(1)));
        let lease_ms = u64::try_from(options.lease().as_millis()).unwrap_or(u64::MAX);
        let mut running = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            let free = permits.available_permits();
            let mut leased_all = false;
            if free > 0 {
                let now = shared.clock.now();
                let limit = u32::try_from(free).unwrap_or(u32::MAX);
                match shared.store.lease_jobs(now, limit, lease_ms).await {
                    Ok(jobs) => {
                        leased_all = jobs.len() == free;
                        for job in jobs {
                            let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                                break; // cannot happen: this loop is the only taker
                            };
                            let shared = Arc::clone(&shared);
                            running.spawn(async move {
                                attempt::run(&shared, job).await;
                                drop(permit);
                            });
                        }
                    }
                    Err(e) => tracing::warn!("the worker could not lease jobs: {e}"),
                }
            }
            let wait = if leased_all {
                Duration::ZERO // more may be due: look again as soon as a slot frees
            } else {
                until_next_due(&shared, options.poll_interval).await
            };
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                Some(ended) = running.join_next(), if !running.is_empty() => {
                    if let Err(e) = ended {
                        tracing::error!("an attempt task failed: {e}");
                    }
                }
                () = wake.notified(), if permits.available_permits() > 0 => {}
                () = tokio::time::sleep(wait), if permits.available_permits() > 0 => {}
            }
        }
        drain(running, options.drain_timeout).await;
    }
}

/// How long to sleep: until the next retry is due, at most `poll`.
async fn until_next_due(shared: &Shared, poll: Duration) -> Duration {
    match shared.store.next_due().await {
        Ok(Some(due)) => {
            let now = shared.clock.now();
            let ms = u64::try_from(due.0.saturating_sub(now.0)).unwrap_or(0);
            poll.min(Duration::from_millis(ms))
        }
        Ok(None) => poll,
        Err(e) => {
            tracing::warn!("the worker could not read the next due job: {e}");
            poll
        }
    }
}

/// Waits for the attempts in flight, at most `timeout`; the rest are abandoned (their leases
/// expire and the jobs run again later).
async fn drain(mut running: JoinSet<()>, timeout: Duration) {
    let all = async { while running.join_next().await.is_some() {} };
    if tokio::time::timeout(timeout, all).await.is_err() {
        tracing::warn!(
            "{} attempt(s) still running after {timeout:?}; they will run again once their leases expire",
            running.len()
        );
        running.abort_all();
    }
}

/// A fraction in `[0, 1)` from std's randomly keyed hasher (no extra dependency; jitter needs
/// spread, not cryptographic quality).
fn random_fraction() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(0x9e37_79b9_7f4a_7c15);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}
