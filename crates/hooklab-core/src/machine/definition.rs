//! The declarative form of a state machine: what a developer writes in TOML (or gets from
//! [`super::builtin`]) before it is checked. Plain serde data; [`super::Machine`] is the
//! validated, ready-to-run form built from it by [`super::Machine::from_definition`].
//!
//! ```toml
//! name = "generic-payment"
//! provider = "any"                 # or a provider id such as "stripe"
//! event_type = "/type"             # where the body names its event type
//! object = "/data/id"              # default pointer to the object id
//! time = "/created_at"             # default pointer to the provider's timestamp
//! states = ["pending", "confirmed", "failed"]
//! initial = ["pending"]
//! final = ["failed"]
//! waiting = ["pending"]            # shown as `awaiting_confirmation`
//!
//! [transitions]
//! pending = ["confirmed", "failed"]
//!
//! [events."payment.confirmed"]
//! state = "confirmed"              # a constant target state…
//!
//! [events."payment.updated"]
//! status = "/data/status"          # …or a status field and a value → state map
//! values = { ok = "confirmed", ko = "failed" }
//! ```

use crate::provider::ProviderId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A state machine as written: states, transitions as a table, and how each event type of a
/// delivery body maps to (object id, target state, provider time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Definition {
    /// The machine's id, e.g. `stripe-payment-intent`; names timeline rows and stored objects.
    pub name: String,
    /// One line for people: what business object this machine follows.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Which provider's deliveries this machine reads (`any` for a hand-written payload).
    #[serde(default)]
    pub provider: ProviderScope,
    /// JSON pointer to the event type in the body, for callers that have no type at hand.
    #[serde(default = "default_event_type")]
    pub event_type: String,
    /// Default JSON pointer to the object id; an event mapping may override it.
    #[serde(default = "default_object")]
    pub object: String,
    /// Default JSON pointer to the provider's timestamp; an event mapping may override it.
    #[serde(default = "default_time")]
    pub time: String,
    /// Offset from UTC, in minutes, of timestamps written without one (Asaas writes
    /// `2024-06-12 16:45:03` in Brasília time, so its machine says `-180`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub naive_time_offset_minutes: i32,
    /// Every state, in display order.
    pub states: Vec<String>,
    /// States an object may be first seen in; any other first event is parked.
    pub initial: Vec<String>,
    /// States with no way out (validation rejects transitions from them).
    #[serde(rename = "final", default)]
    pub finals: Vec<String>,
    /// Non-final states in which the object waits for the provider: `awaiting_confirmation`.
    #[serde(default)]
    pub waiting: Vec<String>,
    /// Allowed transitions: from state → the states it may move to.
    #[serde(default)]
    pub transitions: BTreeMap<String, Vec<String>>,
    /// Per event type, where the object, the target state and the time come from.
    #[serde(default)]
    pub events: BTreeMap<String, EventMapping>,
}

/// How one event type maps onto the machine. Exactly one of `state` and `status` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventMapping {
    /// Pointer to the object id, when it differs from the machine's default (Stripe charge
    /// events name their PaymentIntent at `/data/object/payment_intent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Pointer to the provider's timestamp, when it differs from the machine's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// A constant target state: the event type alone says where the object goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Pointer to a status field whose value, through `values`, names the target state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Status value → state, used with `status`. Unlisted values are not machine events.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, String>,
}

impl EventMapping {
    /// A mapping whose target is the constant `state`, with the machine's default pointers.
    pub fn to_state(state: &str) -> Self {
        Self {
            state: Some(state.to_string()),
            ..Self::default()
        }
    }
}

/// The provider a machine applies to: one of them, or `any`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ProviderScope {
    /// Deliveries from any provider (or a developer's own payloads).
    #[default]
    Any,
    /// Deliveries from this provider only.
    Only(ProviderId),
}

impl ProviderScope {
    /// Whether deliveries from `provider` are for this machine.
    pub fn includes(self, provider: ProviderId) -> bool {
        match self {
            Self::Any => true,
            Self::Only(p) => p == provider,
        }
    }
}

impl std::fmt::Display for ProviderScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Any => f.write_str("any"),
            Self::Only(p) => f.write_str(p.as_str()),
        }
    }
}

impl From<ProviderScope> for String {
    fn from(scope: ProviderScope) -> Self {
        scope.to_string()
    }
}

impl TryFrom<String> for ProviderScope {
    type Error = UnknownScope;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "any" => Ok(Self::Any),
            other => other
                .parse()
                .map(Self::Only)
                .map_err(|_| UnknownScope(text)),
        }
    }
}

/// A `provider` that is neither `any` nor a known provider id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`; expected `any` or one of: {list}",
    list = ProviderId::ALL.map(|p| p.as_str()).join(", "))]
pub struct UnknownScope(pub String);

impl Definition {
    /// Reads a definition from TOML. Syntax and shape errors only; validation happens in
    /// [`super::Machine::from_definition`].
    pub fn from_toml(text: &str) -> Result<Self, super::DefinitionError> {
        Ok(toml::from_str(text)?)
    }

    /// Writes the definition as TOML, readable back by [`Definition::from_toml`].
    pub fn to_toml(&self) -> Result<String, super::DefinitionError> {
        Ok(toml::to_string(self)?)
    }
}

fn default_event_type() -> String {
    "/type".into()
}

fn default_object() -> String {
    "/data/id".into()
}

fn default_time() -> String {
    "/created_at".into()
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_the_generic_pointers() {
        let def = Definition::from_toml("name = \"m\"\nstates = [\"a\"]\ninitial = [\"a\"]\n")
            .expect("a minimal definition parses");
        assert_eq!(def.provider, ProviderScope::Any, "provider defaults to any");
        assert_eq!(
            (
                def.event_type.as_str(),
                def.object.as_str(),
                def.time.as_str()
            ),
            ("/type", "/data/id", "/created_at"),
            "the generic machine's pointers are the defaults"
        );
    }

    #[test]
    fn provider_scope_reads_any_or_an_id() {
        let scope = |s: &str| ProviderScope::try_from(s.to_string());
        assert_eq!(scope("any"), Ok(ProviderScope::Any));
        assert_eq!(
            scope("mercadopago"),
            Ok(ProviderScope::Only(ProviderId::Mercadopago))
        );
        let err = scope("strype").expect_err("a typo is not a provider");
        assert!(
            err.to_string().contains("expected `any` or one of: stripe"),
            "the error lists the choices: {err}"
        );
        assert!(ProviderScope::Any.includes(ProviderId::Wompi));
        assert!(!ProviderScope::Only(ProviderId::Stripe).includes(ProviderId::Wompi));
    }

    #[test]
    fn unknown_fields_are_rejected_by_name() {
        let err = Definition::from_toml(
            "name = \"m\"\nstates = [\"a\"]\ninitial = [\"a\"]\nfinals = [\"a\"]\n",
        )
        .expect_err("`finals` is a typo of `final`");
        assert!(err.to_string().contains("finals"), "names the field: {err}");
    }
}
