//! The events bus: what the receiver announces after each commit, and what the worker announces
//! after each attempt and each dead letter, and what the tunnel supervisor announces when the
//! tunnel's state or public URL changes. The CLI prints one line per event; the control API
//! will stream them (SSE) to the UI.
//!
//! Events travel on a `tokio::sync::broadcast` channel: a slow subscriber lags (and is told how
//! many events it missed) but never slows the receiver down.

use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{
    DeadLetter, DeliveryId, DeliverySummary, JobId, KeyOutcome, TimelineEntry,
};
use serde::{Deserialize, Serialize};

/// How many events a subscriber may fall behind before it starts missing some.
pub const EVENT_BUFFER: usize = 1024;

/// Something that happened, serialised as `{"kind": "delivery", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A request was recorded (committed) and answered.
    Delivery(DeliveryEvent),
    /// The worker ran a job's handler once (e.g. forwarded it to the developer's app).
    Attempt(AttemptEvent),
    /// A job exhausted its retries and moved to the dead-letter queue.
    DeadLetter(DeadLetter),
    /// A state machine decided about an event: applied, stale, parked, sent to review.
    Transition(TimelineEntry),
    /// An idempotency key changed status after its job ran (`completed` or `failed`).
    KeyStatus(KeyStatusEvent),
    /// The tunnel changed state: starting, up (with its public URL), down, reconnecting.
    Tunnel(crate::tunnel::TunnelEvent),
}

/// A key's new status, after the worker finished its job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeyStatusEvent {
    pub scope: String,
    pub key: String,
    pub status: hooklab_core::store::KeyStatus,
    /// The delivery whose job decided it.
    pub delivery: DeliveryId,
}

/// One attempt, as recorded, with what the worker decided next. The response body and headers
/// stay in the store (`hooklab events show`); the bus carries what a one-line printout needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptEvent {
    pub job: JobId,
    pub delivery: DeliveryId,
    pub source: String,
    pub event_id: Option<String>,
    /// 1-based.
    pub attempt: u32,
    pub started_at: UnixMillis,
    pub duration_ms: u64,
    /// Where the attempt went (the forward URL).
    pub target: Option<String>,
    /// The answer's status, when one came.
    pub status: Option<u16>,
    /// Why the attempt failed, when it did.
    pub error: Option<String>,
    pub outcome: AttemptOutcome,
    /// When the next attempt is due (`outcome` = `retry`).
    pub next_attempt_at: Option<UnixMillis>,
}

/// What became of the job after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// Handled; the idempotency key is `completed`.
    Done,
    /// Failed; another attempt is scheduled.
    Retry,
    /// Failed for the last time; the job is in the dead-letter queue, the key `failed`.
    Dead,
    /// The job's lease expired during the attempt and another worker took it over; this
    /// attempt's result was not recorded.
    Superseded,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Retry => "retry",
            Self::Dead => "dead",
            Self::Superseded => "superseded",
        }
    }
}

/// One recorded delivery: the list row plus what a one-line printout needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeliveryEvent {
    pub delivery: DeliverySummary,
    /// The verdict in one line, e.g. "valid Stripe signature".
    pub verdict_summary: String,
    /// On a failed signature: why, and what to fix.
    pub diagnosis: Option<String>,
    /// The body exceeded the limit and was not kept.
    pub body_refused: bool,
    pub remote_addr: Option<String>,
    /// What claiming the idempotency key found (`None`: the delivery claimed none).
    pub key: Option<KeyOutcome>,
}
