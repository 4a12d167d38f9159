//! The receiver's clock: where "received at" (and the "now" of signature tolerance) comes from.
//! The system clock in production; a pinned or scripted one in tests, so verdicts are exact;
//! [`Clock::tokio`] for the worker's tests under paused tokio time.

use hooklab_core::clock::UnixMillis;
use std::sync::Arc;

/// A source of [`UnixMillis`], read once per request.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> UnixMillis + Send + Sync>);

impl Clock {
    /// The wall clock.
    pub fn system() -> Self {
        Self(Arc::new(UnixMillis::now))
    }

    /// Always the same instant.
    pub fn fixed(at: UnixMillis) -> Self {
        Self(Arc::new(move || at))
    }

    /// Unix time that moves with tokio's clock: `base` plus the tokio time elapsed since this
    /// call. Under `tokio::time::pause()` it stands still and jumps with `advance` (or
    /// auto-advance), so the worker's retry schedule can be tested to the millisecond.
    pub fn tokio_at(base: UnixMillis) -> Self {
        let start = tokio::time::Instant::now();
        Self(Arc::new(move || {
            let elapsed = i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
            UnixMillis(base.0.saturating_add(elapsed))
        }))
    }

    /// [`Clock::tokio_at`] starting from the wall clock's now.
    pub fn tokio() -> Self {
        Self::tokio_at(UnixMillis::now())
    }

    /// Any function (e.g. one a test advances).
    pub fn from_fn(f: impl Fn() -> UnixMillis + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    pub fn now(&self) -> UnixMillis {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}
