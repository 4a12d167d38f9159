//! The processing side of the outbox: what happens to a delivery after it is recorded.
//!
//! The receiver writes a job in the same transaction as the delivery (when the source has a
//! handler) and pokes the worker. The [`Worker`] leases due jobs from the store, runs each
//! job's [`Handler`] with bounded concurrency, and finishes the job: done (the idempotency key
//! becomes `completed`), retry later by the source's [`RetrySchedule`], or dead (the
//! dead-letter queue; the key becomes `failed`). A lease is a visibility timeout: when a process
//! dies mid-attempt, its jobs become due again once their leases expire, so nothing
//! acknowledged is lost and nothing stays stuck.
//!
//! - [`handler`]: the [`Handler`] seam; a production service supplies its own.
//! - [`forward`]: the built-in [`ForwardHandler`], which forwards to the developer's app.
//! - `worker`: the lease loop, its wake-ups, and graceful shutdown.
//! - `attempt`: one attempt: run the handler, decide the outcome, record it, announce it.
//!
//! [`RetrySchedule`]: hooklab_core::retry::RetrySchedule

mod attempt;
pub mod forward;
pub mod handler;
mod worker;

pub use forward::ForwardHandler;
pub use handler::{Handler, HandlerContext, HandlerResult};
pub use worker::{Jitter, Route, Routes, Worker, WorkerOptions};
