//! What a provider's delivery says about itself: event id, type, the business object it is
//! about, and the provider's own timestamp. Read from headers or the JSON body, never trusted
//! for security (verification is separate) but used for display, idempotency and ordering.

use crate::clock::UnixMillis;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// The provider's event (or delivery) id, e.g. Stripe `evt_…`, Svix `msg_…`.
    pub event_id: Option<String>,
    /// The event type, e.g. `payment_intent.succeeded`, `push`, `PAYMENT_RECEIVED`.
    pub event_type: Option<String>,
    /// The business object the event is about, e.g. a PaymentIntent id `pi_…`.
    pub object_id: Option<String>,
    /// When the provider says the event happened (for ordering), not when it arrived.
    pub provider_time: Option<UnixMillis>,
    /// The key that makes two deliveries "the same event" for idempotency. Usually the event
    /// id; resource-based (`object:status`) for providers without a stable event id.
    pub idempotency_key: Option<String>,
}

impl Metadata {
    /// Fills `idempotency_key` from `event_id` when the provider set no key of its own.
    pub fn with_default_key(mut self) -> Self {
        if self.idempotency_key.is_none() {
            self.idempotency_key = self.event_id.clone();
        }
        self
    }
}
