//! Layer 5 of the pipeline: a state machine per business object (a payment). Once a delivery
//! is verified and first-seen, its body becomes a [`MachineEvent`] (object id, target state,
//! provider time) and the object's [`ObjectState`] judges it: valid transitions only, ordered
//! by the provider's timestamp rather than the arrival time, stale events ignored, invalid or
//! early events parked and re-evaluated, and `requires_review` after a timeout instead of a
//! silent failure. Every decision is a [`TimelineRow`].
//!
//! Machines are data: a [`Definition`] (serde, TOML) validated into a [`Machine`]. Built-ins
//! cover Stripe PaymentIntents, Mercado Pago payments, Asaas payments (PIX included), Wompi
//! and Paddle transactions, and the generic payment of the design notes ([`builtins`]).
//! Nothing here stores, reads a clock, or does I/O: time is passed in.
//!
//! ```
//! use hooklab_core::clock::UnixMillis;
//! use hooklab_core::machine::{builtin, Decision, ObjectState};
//! use serde_json::json;
//!
//! let machine = builtin("stripe-payment-intent").unwrap();
//! let event = |kind: &str, at: i64| json!({
//!     "type": kind, "created": at, "data": {"object": {"id": "pi_1"}}
//! });
//! let now = UnixMillis::from_secs(1_700_000_100);
//! let created = machine.event_from_body(&event("payment_intent.created", 1_700_000_001));
//! let succeeded = machine.event_from_body(&event("payment_intent.succeeded", 1_700_000_002));
//!
//! let mut payment = ObjectState::new(&machine, "pi_1");
//! let rows = payment.apply(&machine, succeeded.unwrap(), now); // arrives first…
//! assert_eq!(rows[0].decision, Decision::Parked); // …so it waits
//! let rows = payment.apply(&machine, created.unwrap(), now);
//! assert_eq!(rows[0].decision, Decision::Applied);
//! assert_eq!(rows[1].decision, Decision::AppliedFromPark); // then applies after `created`
//! assert_eq!(payment.state(), Some("succeeded"));
//! ```

mod builtin;
mod definition;
mod engine;
mod extract;
mod table;
mod timeline;

pub use builtin::{BUILTIN_NAMES, builtin, builtin_toml, builtins};
pub use definition::{Definition, EventMapping, ProviderScope, UnknownScope};
pub use engine::{Current, ObjectState, ParkedEvent};
pub use extract::{ExtractError, MachineEvent};
pub use table::{DefinitionError, Machine};
pub use timeline::{Decision, TimelineRow};

#[cfg(test)]
mod tests;
