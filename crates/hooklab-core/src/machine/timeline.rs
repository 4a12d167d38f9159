//! The timeline: one row per decision the engine takes, so the UI (and an auditor) can see why
//! a payment is where it is. Rows are plain data, ready to be stored as rows.

use crate::clock::UnixMillis;
use serde::{Deserialize, Serialize};

/// What the engine did with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// An allowed transition (or a first event in an initial state): the object moved.
    Applied,
    /// A parked event became valid after the object changed, and moved it.
    AppliedFromPark,
    /// The object is already in the event's state: nothing changes.
    Duplicate,
    /// The event is older, by provider time, than the object's current state: ignored.
    IgnoredStale,
    /// Not valid now (invalid transition, or an object not seen yet): kept for later.
    Parked,
    /// A parked event outlived the timeout: the object needs a human.
    RequiresReview,
    /// The event cannot belong here (another object, another machine, an unknown state).
    Rejected,
}

impl Decision {
    /// The snake_case name, as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::AppliedFromPark => "applied_from_park",
            Self::Duplicate => "duplicate",
            Self::IgnoredStale => "ignored_stale",
            Self::Parked => "parked",
            Self::RequiresReview => "requires_review",
            Self::Rejected => "rejected",
        }
    }

    /// Whether the object changed state with this decision.
    pub fn moved(self) -> bool {
        match self {
            Self::Applied | Self::AppliedFromPark => true,
            Self::Duplicate
            | Self::IgnoredStale
            | Self::Parked
            | Self::RequiresReview
            | Self::Rejected => false,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One decision about one event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// The machine that decided, e.g. `stripe-payment-intent`.
    pub machine: String,
    /// The business object, e.g. `pi_…`.
    pub object_id: String,
    /// The provider's event type, e.g. `charge.refunded`.
    pub event_type: String,
    /// The object's state when the decision was taken (`None`: not seen yet).
    pub from: Option<String>,
    /// The state the event asked for; the object is in it only if `decision.moved()`.
    pub to: String,
    /// The delivery that carried the event, when known.
    pub delivery_id: Option<String>,
    /// When the provider says the event happened.
    pub provider_time: UnixMillis,
    /// When the delivery arrived.
    pub received_at: UnixMillis,
    /// When the engine decided (later than `received_at` for events leaving the park).
    pub decided_at: UnixMillis,
    /// What the engine did.
    pub decision: Decision,
    /// Why, in words for a person.
    pub reason: String,
}
