//! Mercado Pago payments. A notification (`payment.created`, `payment.updated`) names the
//! payment at `/data/id` but, on the wire, not its status: Mercado Pago expects the receiver to
//! fetch `GET /v1/payments/{id}`. This machine reads the status at `/data/status`, where the
//! handler (or Hooklab's generated events) puts the fetched `status`; a custom machine can point
//! elsewhere. The provider time is the notification's `date_created` (RFC 3339).
//!
//! Notifications are snapshots, not steps, so every status a payment can be created in is an
//! initial state. `rejected` may move on (`pending`, `in_process`, `approved`) because a buyer
//! can retry the same payment; `cancelled`, `refunded` and `charged_back` are final.

pub(super) const NAME: &str = "mercadopago-payment";

pub(super) const TOML: &str = r#"
name = "mercadopago-payment"
description = "A Mercado Pago payment, by the status of each notification."
provider = "mercadopago"
event_type = "/action"
object = "/data/id"
time = "/date_created"
states = [
    "pending", "in_process", "authorized", "approved", "rejected", "cancelled",
    "in_mediation", "refunded", "charged_back",
]
initial = ["pending", "in_process", "authorized", "approved", "rejected"]
final = ["cancelled", "refunded", "charged_back"]
waiting = ["in_process"]

[transitions]
pending = ["in_process", "authorized", "approved", "rejected", "cancelled"]
in_process = ["pending", "authorized", "approved", "rejected", "cancelled"]
authorized = ["approved", "cancelled"]
rejected = ["pending", "in_process", "approved"]
approved = ["in_mediation", "refunded", "charged_back"]
in_mediation = ["approved", "refunded", "charged_back"]

[events."payment.created"]
status = "/data/status"

[events."payment.created".values]
pending = "pending"
in_process = "in_process"
authorized = "authorized"
approved = "approved"
rejected = "rejected"
cancelled = "cancelled"
in_mediation = "in_mediation"
refunded = "refunded"
charged_back = "charged_back"

[events."payment.updated"]
status = "/data/status"

[events."payment.updated".values]
pending = "pending"
in_process = "in_process"
authorized = "authorized"
approved = "approved"
rejected = "rejected"
cancelled = "cancelled"
in_mediation = "in_mediation"
refunded = "refunded"
charged_back = "charged_back"
"#;

#[cfg(test)]
mod tests {
    use super::super::test_support::{decisions, run};
    use crate::machine::{Decision::*, ExtractError, builtin};
    use serde_json::{Value, json};

    fn notification(action: &str, status: &str, minute: u32) -> Value {
        json!({"id": 12_000 + minute, "live_mode": false, "type": "payment", "action": action,
               "date_created": format!("2024-01-10T14:{minute:02}:30Z"), "user_id": 44_444,
               "api_version": "v1", "data": {"id": "999999999", "status": status}})
    }

    #[test]
    fn status_values_map_to_states_and_unknown_ones_say_so() {
        let m = builtin(super::NAME).expect("built in");
        let e = m
            .event_from_body(&notification("payment.updated", "in_process", 1))
            .expect("mapped");
        assert_eq!(
            (e.object_id.as_str(), e.state.as_str()),
            ("999999999", "in_process")
        );
        let odd = notification("payment.updated", "teleported", 1);
        match m.extract(&odd, "payment.updated") {
            Err(ExtractError::UnknownStatus { value, .. }) => assert_eq!(value, "teleported"),
            other => panic!("an unknown status is named, got {other:?}"),
        }
        let mut bare = notification("payment.created", "approved", 1);
        bare["data"] = json!({"id": 999_999_999});
        assert!(
            matches!(
                m.extract(&bare, "payment.created"),
                Err(ExtractError::MissingStatus { .. })
            ),
            "a notification without the fetched status is not an event yet"
        );
    }

    #[test]
    fn rejected_then_approved_later_ends_approved_in_any_order() {
        let m = builtin(super::NAME).expect("built in");
        let rejected = notification("payment.created", "rejected", 1);
        let approved = notification("payment.updated", "approved", 5);
        let (object, rows) = run(&m, "999999999", &[rejected.clone(), approved.clone()]);
        assert_eq!(
            decisions(&rows),
            [Applied, Applied],
            "a retry after a rejection"
        );
        assert_eq!(object.state(), Some("approved"));
        let (object, rows) = run(&m, "999999999", &[approved, rejected]);
        assert_eq!(
            decisions(&rows),
            [Applied, IgnoredStale],
            "the older rejection is stale"
        );
        assert_eq!(object.state(), Some("approved"));
    }

    #[test]
    fn in_process_awaits_confirmation() {
        let m = builtin(super::NAME).expect("built in");
        let (object, _) = run(
            &m,
            "999999999",
            &[notification("payment.created", "in_process", 1)],
        );
        assert!(
            object.awaiting_confirmation(),
            "in_process is under review at Mercado Pago"
        );
    }
}
