//! Wompi transactions. Wompi sends one event type, `transaction.updated`, whose status sits at
//! `/data/transaction/status` (PENDING, APPROVED, DECLINED, VOIDED, ERROR); the object is
//! `/data/transaction/id` and the time the top-level `timestamp` (Unix seconds). Wompi usually
//! notifies only outcomes, so an object may be first seen approved, declined or in error; a
//! void needs the approval first.

pub(super) const NAME: &str = "wompi-transaction";

pub(super) const TOML: &str = r#"
name = "wompi-transaction"
description = "A Wompi transaction, by the status in each transaction.updated event."
provider = "wompi"
event_type = "/event"
object = "/data/transaction/id"
time = "/timestamp"
states = ["pending", "approved", "declined", "voided", "error"]
initial = ["pending", "approved", "declined", "error"]
final = ["declined", "voided", "error"]
waiting = ["pending"]

[transitions]
pending = ["approved", "declined", "error"]
approved = ["voided"]

[events."transaction.updated"]
status = "/data/transaction/status"

[events."transaction.updated".values]
PENDING = "pending"
APPROVED = "approved"
DECLINED = "declined"
VOIDED = "voided"
ERROR = "error"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::machine::{Decision::*, builtin};
    use serde_json::{Value, json};

    fn updated(status: &str, at: i64) -> Value {
        json!({"event": "transaction.updated", "environment": "test", "timestamp": at,
               "sent_at": "2018-07-20T16:45:05.000Z",
               "data": {"transaction": {"id": "1234-1610641025-49201", "status": status,
                                        "amount_in_cents": 4_490_000, "reference": "MZQ3X2DE2SMX"}},
               "signature": {"properties": ["transaction.id", "transaction.status"],
                             "checksum": "3476DDA5"}})
    }

    #[test]
    fn a_void_before_its_approval_waits_for_it() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "1234-1610641025-49201",
            &[
                updated("VOIDED", 3),
                updated("APPROVED", 2),
                updated("PENDING", 1),
            ],
        );
        assert_eq!(
            decisions(&rows),
            [Parked, Applied, AppliedFromPark, IgnoredStale]
        );
        assert_eq!(object.state(), Some("voided"));
    }

    #[test]
    fn pending_awaits_confirmation_and_unknown_statuses_are_not_events() {
        let m = builtin(super::NAME).expect("built in");
        let (object, _) = run(&m, "1234-1610641025-49201", &[updated("PENDING", 1)]);
        assert!(
            object.awaiting_confirmation(),
            "PSE and Nequi confirm later"
        );
        assert!(
            m.event_from_body(&updated("approved", 1)).is_none(),
            "statuses are upper case"
        );
    }
}
