//! The `Handler` seam: what the worker does with a delivery. The desktop app and the CLI
//! forward it to the developer's app ([`super::ForwardHandler`]); a production service
//! implements [`Handler`] with its own business logic. Either way the worker owns leasing,
//! retries and the dead-letter queue; a handler runs one attempt and says how it went.

use crate::config::SourceConfig;
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{AttemptRecord, BoxFuture, Delivery, JobId};

/// What a handler is given for one attempt.
#[derive(Debug, Clone, Copy)]
pub struct HandlerContext<'a> {
    /// The recorded delivery, whole: headers in arrival order, exact body bytes.
    pub delivery: &'a Delivery,
    /// This attempt's number, 1-based (the first delivery is attempt 1).
    pub attempt: u32,
    /// The outbox job being processed.
    pub job: JobId,
    /// The source the delivery arrived on.
    pub source: &'a SourceConfig,
    /// When the worker started this attempt (from its clock), for the record.
    pub started_at: UnixMillis,
}

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerResult {
    /// What is stored and shown: target, status, response, latency, error.
    pub record: AttemptRecord,
    /// Handled: no retry. `false` schedules a retry, or dead-letters when none is left.
    pub success: bool,
}

impl HandlerResult {
    /// A failure without a response (the handler could not run), with why.
    pub fn failed(started_at: UnixMillis, duration_ms: u64, error: impl Into<String>) -> Self {
        Self {
            record: AttemptRecord {
                started_at,
                duration_ms,
                target: None,
                status: None,
                response_headers: Vec::new(),
                response_body: Vec::new(),
                error: Some(error.into()),
            },
            success: false,
        }
    }
}

/// Processes one delivery, once. Must not panic; a failure is a [`HandlerResult`] with
/// `success: false` and the reason in `record.error`. The worker bounds every call with its
/// attempt timeout, so a handler that never finishes cannot hold a job past its lease.
pub trait Handler: Send + Sync + 'static {
    fn handle<'a>(&'a self, ctx: &'a HandlerContext<'a>) -> BoxFuture<'a, HandlerResult>;
}
