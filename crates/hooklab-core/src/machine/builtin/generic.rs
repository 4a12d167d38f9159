//! The generic payment of the design notes, for a developer's own payloads (or any provider
//! not built in): `pending → confirmed | failed | cancelled`, `confirmed → refunded | disputed`,
//! `failed → pending` (the provider retries). Events are named by `/type` (`payment.confirmed`…),
//! the object is `/data/id` and the time `/created_at` (RFC 3339 or Unix seconds); copy it with
//! [`crate::machine::builtin_toml`] and change the pointers to fit another payload.

pub(super) const NAME: &str = "generic-payment";

pub(super) const TOML: &str = r#"
name = "generic-payment"
description = "A payment: pending, then confirmed, failed or cancelled; then refunded or disputed."
provider = "any"
event_type = "/type"
object = "/data/id"
time = "/created_at"
states = ["pending", "confirmed", "failed", "cancelled", "refunded", "disputed"]
initial = ["pending"]
final = ["cancelled", "refunded", "disputed"]
waiting = ["pending"]

[transitions]
pending = ["confirmed", "failed", "cancelled"]
confirmed = ["refunded", "disputed"]
failed = ["pending"]

[events."payment.created"]
state = "pending"

[events."payment.pending"]
state = "pending"

[events."payment.confirmed"]
state = "confirmed"

[events."payment.failed"]
state = "failed"

[events."payment.cancelled"]
state = "cancelled"

[events."payment.refunded"]
state = "refunded"

[events."payment.disputed"]
state = "disputed"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::machine::{Decision::*, builtin};
    use serde_json::{Value, json};

    fn event(kind: &str, at: &str) -> Value {
        json!({"type": kind, "created_at": at, "data": {"id": "pay_1", "amount": 1000}})
    }

    #[test]
    fn a_refund_before_the_confirmation_ends_refunded() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "pay_1",
            &[
                event("payment.created", "2026-01-01T10:00:00Z"),
                event("payment.refunded", "2026-01-01T10:05:00Z"),
                event("payment.confirmed", "2026-01-01T10:01:00Z"),
            ],
        );
        assert_eq!(
            decisions(&rows),
            [Applied, Parked, Applied, AppliedFromPark]
        );
        assert_eq!(object.state(), Some("refunded"));
    }

    #[test]
    fn a_failed_payment_retried_by_the_provider_confirms() {
        let m = builtin(super::NAME).expect("built in");
        let (object, rows) = run(
            &m,
            "pay_1",
            &[
                event("payment.pending", "2026-01-01T10:00:00Z"),
                event("payment.pending", "2026-01-01T10:02:00Z"),
                event("payment.failed", "2026-01-01T10:01:00Z"),
                event("payment.confirmed", "2026-01-01T10:03:00Z"),
            ],
        );
        assert_eq!(
            decisions(&rows),
            [Applied, Duplicate, IgnoredStale, Applied],
            "the second pending is newer than the failure, so the failure is stale"
        );
        assert_eq!(object.state(), Some("confirmed"));
    }
}
