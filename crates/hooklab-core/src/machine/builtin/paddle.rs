//! Paddle Billing transactions. The object is `/data/id` (`txn_…`), the time `occurred_at`
//! (RFC 3339, microseconds). `transaction.created` and `transaction.updated` carry the status
//! at `/data/status`; the other events name their state. `transaction.payment_failed` leaves
//! Paddle's status unchanged, so it is a state of its own here, from which a retry may pay.

pub(super) const NAME: &str = "paddle-transaction";

pub(super) const TOML: &str = r#"
name = "paddle-transaction"
description = "A Paddle Billing transaction, from draft to completed, canceled or past due."
provider = "paddle"
event_type = "/event_type"
object = "/data/id"
time = "/occurred_at"
states = [
    "draft", "ready", "billed", "paid", "completed", "canceled", "past_due", "payment_failed",
]
initial = ["draft", "ready", "billed"]
final = ["completed", "canceled"]
waiting = ["paid"]

[transitions]
draft = ["ready", "billed", "paid", "canceled"]
ready = ["billed", "paid", "canceled", "payment_failed"]
billed = ["paid", "canceled", "past_due", "payment_failed"]
past_due = ["paid", "canceled", "payment_failed"]
payment_failed = ["ready", "billed", "paid", "canceled", "past_due"]
paid = ["completed"]

[events."transaction.created"]
status = "/data/status"

[events."transaction.created".values]
draft = "draft"
ready = "ready"
billed = "billed"
paid = "paid"
completed = "completed"
canceled = "canceled"
past_due = "past_due"

[events."transaction.updated"]
status = "/data/status"

[events."transaction.updated".values]
draft = "draft"
ready = "ready"
billed = "billed"
paid = "paid"
completed = "completed"
canceled = "canceled"
past_due = "past_due"

[events."transaction.ready"]
state = "ready"

[events."transaction.billed"]
state = "billed"

[events."transaction.paid"]
state = "paid"

[events."transaction.completed"]
state = "completed"

[events."transaction.canceled"]
state = "canceled"

[events."transaction.past_due"]
state = "past_due"

[events."transaction.payment_failed"]
state = "payment_failed"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::machine::{Decision::*, builtin};
    use serde_json::{Value, json};

    fn event(kind: &str, status: &str, second: u32) -> Value {
        json!({"event_id": format!("evt_{second}"), "event_type": kind,
               "occurred_at": format!("2024-04-12T10:18:{second:02}.621022Z"),
               "notification_id": format!("ntf_{second}"),
               "data": {"id": "txn_01hv8wptq8987qeep44cyrewp9", "status": status}})
    }

    #[test]
    fn created_reads_the_status_and_a_failed_payment_can_be_retried() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "txn_01hv8wptq8987qeep44cyrewp9",
            &[
                event("transaction.created", "ready", 1),
                event("transaction.payment_failed", "ready", 2),
                event("transaction.paid", "paid", 3),
            ],
        );
        assert_eq!(decisions(&rows), [Applied, Applied, Applied]);
        assert_eq!(
            rows[0].to, "ready",
            "the created transaction was already ready"
        );
        assert!(
            object.awaiting_confirmation(),
            "paid waits for Paddle to complete it"
        );
    }

    #[test]
    fn completed_before_paid_is_parked_then_applied() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "txn_01hv8wptq8987qeep44cyrewp9",
            &[
                event("transaction.completed", "completed", 4),
                event("transaction.created", "draft", 1),
                event("transaction.paid", "paid", 3),
            ],
        );
        assert_eq!(
            decisions(&rows),
            [Parked, Applied, Applied, AppliedFromPark]
        );
        assert_eq!(object.state(), Some("completed"));
    }
}
