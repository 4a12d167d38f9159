//! The events bus seed: what the receiver announces after each commit. The CLI prints one line
//! per event; the control API will stream them (SSE) to the UI.
//!
//! Events travel on a `tokio::sync::broadcast` channel: a slow subscriber lags (and is told how
//! many events it missed) but never slows the receiver down.

use hooklab_core::store::{DeliverySummary, KeyOutcome};
use serde::{Deserialize, Serialize};

/// How many events a subscriber may fall behind before it starts missing some.
pub const EVENT_BUFFER: usize = 1024;

/// Something that happened, serialised as `{"kind": "delivery", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A request was recorded (committed) and answered.
    Delivery(DeliveryEvent),
}

/// One recorded delivery: the list row plus what a one-line printout needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
