//! Asaas payments (boleto, card and PIX). The event is `/event` (`PAYMENT_RECEIVED`…), the
//! object `/payment/id`. The provider time is the event's top-level `dateCreated`
//! (`2024-06-12 16:45:03`, Brasília time, read at UTC−3); `payment.dateCreated` is the
//! payment's creation *date*, the same for all its events, so it cannot order them.
//!
//! PIX is paid straight to `received`; cards go `confirmed` then `received` when settled. A
//! PIX `PAYMENT_RECEIVED` may arrive before `PAYMENT_CREATED`: it is parked until then.

pub(super) const NAME: &str = "asaas-payment";

pub(super) const TOML: &str = r#"
name = "asaas-payment"
description = "An Asaas payment (boleto, card or PIX): created, received, refunded, charged back."
provider = "asaas"
event_type = "/event"
object = "/payment/id"
time = "/dateCreated"
naive_time_offset_minutes = -180
states = [
    "pending", "awaiting_risk_analysis", "risk_approved", "risk_reproved", "confirmed",
    "received", "overdue", "deleted", "refund_in_progress", "refunded",
    "chargeback_requested", "chargeback_dispute", "awaiting_chargeback_reversal",
]
initial = ["pending"]
final = ["risk_reproved", "refunded"]
waiting = [
    "awaiting_risk_analysis", "risk_approved", "refund_in_progress", "chargeback_dispute",
    "awaiting_chargeback_reversal",
]

[transitions]
pending = ["awaiting_risk_analysis", "confirmed", "received", "overdue", "deleted"]
awaiting_risk_analysis = ["risk_approved", "risk_reproved", "confirmed"]
risk_approved = ["confirmed", "received"]
confirmed = ["received", "refund_in_progress", "refunded", "chargeback_requested"]
received = ["refund_in_progress", "refunded", "chargeback_requested"]
overdue = ["awaiting_risk_analysis", "confirmed", "received", "deleted"]
deleted = ["pending", "overdue"]
refund_in_progress = ["refunded"]
chargeback_requested = ["chargeback_dispute"]
chargeback_dispute = ["awaiting_chargeback_reversal"]
awaiting_chargeback_reversal = ["confirmed", "received"]

[events.PAYMENT_CREATED]
state = "pending"

[events.PAYMENT_RESTORED]
state = "pending"

[events.PAYMENT_AWAITING_RISK_ANALYSIS]
state = "awaiting_risk_analysis"

[events.PAYMENT_APPROVED_BY_RISK_ANALYSIS]
state = "risk_approved"

[events.PAYMENT_REPROVED_BY_RISK_ANALYSIS]
state = "risk_reproved"

[events.PAYMENT_CONFIRMED]
state = "confirmed"

[events.PAYMENT_RECEIVED]
state = "received"

[events.PAYMENT_OVERDUE]
state = "overdue"

[events.PAYMENT_DELETED]
state = "deleted"

[events.PAYMENT_REFUND_IN_PROGRESS]
state = "refund_in_progress"

[events.PAYMENT_REFUNDED]
state = "refunded"

[events.PAYMENT_CHARGEBACK_REQUESTED]
state = "chargeback_requested"

[events.PAYMENT_CHARGEBACK_DISPUTE]
state = "chargeback_dispute"

[events.PAYMENT_AWAITING_CHARGEBACK_REVERSAL]
state = "awaiting_chargeback_reversal"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::clock::UnixMillis;
    use crate::machine::{Decision::*, builtin};
    use serde_json::{Value, json};

    fn event(kind: &str, at: &str) -> Value {
        json!({"id": format!("evt_{kind}"), "event": kind, "dateCreated": at,
               "payment": {"object": "payment", "id": "pay_080225913252",
                           "dateCreated": "2024-06-12", "billingType": "PIX"}})
    }

    #[test]
    fn time_is_the_event_time_in_brasilia() {
        let m = builtin(super::NAME).expect("built in");
        let e = m
            .event_from_body(&event("PAYMENT_RECEIVED", "2024-06-12 16:45:03"))
            .expect("mapped");
        assert_eq!(
            e.provider_time,
            UnixMillis::parse_rfc3339("2024-06-12T19:45:03Z").expect("valid"),
            "Asaas local time is UTC-3"
        );
        assert_eq!(e.object_id, "pay_080225913252");
    }

    #[test]
    fn pix_received_before_created_ends_received() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "pay_080225913252",
            &[
                event("PAYMENT_RECEIVED", "2024-06-12 16:45:40"),
                event("PAYMENT_CREATED", "2024-06-12 16:45:03"),
            ],
        );
        assert_eq!(decisions(&rows), [Parked, Applied, AppliedFromPark]);
        assert_eq!(object.state(), Some("received"));
        assert!(object.parked().is_empty(), "nothing is left waiting");
    }

    #[test]
    fn risk_analysis_awaits_confirmation() {
        let m = builtin(super::NAME).expect("built in");
        let (object, _) = run(
            &m,
            "pay_080225913252",
            &[
                event("PAYMENT_CREATED", "2024-06-12 16:45:03"),
                event("PAYMENT_AWAITING_RISK_ANALYSIS", "2024-06-12 16:45:04"),
            ],
        );
        assert!(
            object.awaiting_confirmation(),
            "Asaas is analysing the card payment"
        );
    }
}
