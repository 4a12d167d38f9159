//! Stripe PaymentIntents. Each `payment_intent.*` event names its state; refunds and disputes
//! arrive as `charge.*` events whose object is the charge, so they are mapped back to the
//! PaymentIntent through `/data/object/payment_intent`. Provider time is the event's `created`
//! (Unix seconds). `charge.refunded` also fires for partial refunds: `refunded` means "at
//! least partly refunded".

pub(super) const NAME: &str = "stripe-payment-intent";

pub(super) const TOML: &str = r#"
name = "stripe-payment-intent"
description = "A Stripe PaymentIntent: created, succeeded, failed or canceled; refunded, disputed."
provider = "stripe"
event_type = "/type"
object = "/data/object/id"
time = "/created"
states = [
    "created", "requires_action", "requires_capture", "processing", "payment_failed",
    "succeeded", "canceled", "refunded", "disputed",
]
initial = ["created"]
final = ["canceled", "refunded", "disputed"]
waiting = ["processing"]

[transitions]
created = [
    "requires_action", "requires_capture", "processing", "payment_failed", "succeeded", "canceled",
]
requires_action = ["requires_capture", "processing", "payment_failed", "succeeded", "canceled"]
requires_capture = ["succeeded", "canceled"]
processing = ["payment_failed", "succeeded", "canceled"]
payment_failed = ["requires_action", "requires_capture", "processing", "succeeded", "canceled"]
succeeded = ["refunded", "disputed"]

[events."payment_intent.created"]
state = "created"

[events."payment_intent.requires_action"]
state = "requires_action"

[events."payment_intent.amount_capturable_updated"]
state = "requires_capture"

[events."payment_intent.processing"]
state = "processing"

[events."payment_intent.payment_failed"]
state = "payment_failed"

[events."payment_intent.succeeded"]
state = "succeeded"

[events."payment_intent.canceled"]
state = "canceled"

[events."charge.refunded"]
object = "/data/object/payment_intent"
state = "refunded"

[events."charge.dispute.created"]
object = "/data/object/payment_intent"
state = "disputed"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::clock::UnixMillis;
    use crate::machine::{Decision::*, builtin};
    use serde_json::{Value, json};

    fn pi(kind: &str, at: i64) -> Value {
        json!({"id": format!("evt_{at}"), "object": "event", "type": kind, "created": at,
               "data": {"object": {"id": "pi_1", "object": "payment_intent"}}})
    }

    fn charge(kind: &str, at: i64) -> Value {
        json!({"id": format!("evt_{at}"), "object": "event", "type": kind, "created": at,
               "data": {"object": {"id": "ch_1", "object": "charge", "payment_intent": "pi_1"}}})
    }

    #[test]
    fn charge_events_are_about_their_payment_intent() {
        let m = builtin(super::NAME).expect("built in");
        let e = m
            .event_from_body(&charge("charge.refunded", 1_700_000_000))
            .expect("mapped");
        assert_eq!(
            e.object_id, "pi_1",
            "a refund moves the PaymentIntent, not the charge"
        );
        assert_eq!(e.state, "refunded");
        assert_eq!(
            e.provider_time,
            UnixMillis::from_secs(1_700_000_000),
            "`created` is seconds"
        );
        let orphan = json!({"type": "charge.refunded", "created": 1,
                            "data": {"object": {"id": "ch_2", "payment_intent": null}}});
        assert!(
            m.event_from_body(&orphan).is_none(),
            "a charge without a PaymentIntent is not one"
        );
        assert!(
            m.event(&pi("customer.created", 1), "customer.created")
                .is_none(),
            "unmapped type"
        );
        let untyped = json!({"created": 1, "data": {"object": {"id": "pi_1"}}});
        let err = m.extract_from_body(&untyped).expect_err("no type");
        assert_eq!(err.code(), "missing_event_type", "{err}");
    }

    #[test]
    fn processing_is_awaiting_confirmation() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "pi_1",
            &[
                pi("payment_intent.created", 1),
                pi("payment_intent.processing", 2),
            ],
        );
        assert_eq!(decisions(&rows), [Applied, Applied]);
        assert!(
            object.awaiting_confirmation(),
            "processing waits for the bank"
        );
    }

    #[test]
    fn success_before_creation_then_stale_processing_ends_succeeded() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "pi_1",
            &[
                pi("payment_intent.succeeded", 3),
                pi("payment_intent.created", 1),
                pi("payment_intent.processing", 2),
                charge("charge.refunded", 4),
            ],
        );
        assert_eq!(
            decisions(&rows),
            [Parked, Applied, AppliedFromPark, IgnoredStale, Applied],
            "succeeded waits for created, processing is older than succeeded"
        );
        assert_eq!(object.state(), Some("refunded"));
        assert!(
            !object.awaiting_confirmation(),
            "refunded is final, not waiting"
        );
    }
}
