//! A parked event past the timeout: `requires_review`, then a reviewer's redrive.

use super::{UnixMillis, asaas, builtin};
use hooklab_core::machine::{Decision, ObjectState};
use std::time::Duration;

#[test]
fn a_parked_event_past_the_timeout_requires_review_and_can_be_redriven() {
    let m = builtin("asaas-payment").expect("built in");
    let received = m
        .event_from_body(&asaas("PAYMENT_RECEIVED", 5))
        .expect("mapped");
    let arrived = UnixMillis::from_secs(1_900_000_000);
    let mut object = ObjectState::new(&m, "pay_080225913252");
    let rows = object.apply(&m, received.delivered("dlv_r", arrived), arrived);
    assert_eq!(
        rows[0].decision,
        Decision::Parked,
        "PAYMENT_CREATED never came"
    );
    let timeout = Duration::from_secs(15 * 60);
    let early = UnixMillis(arrived.0 + 14 * 60 * 1000);
    assert!(
        object.expire_parked(&m, early, timeout).is_empty(),
        "within the timeout"
    );
    let late = UnixMillis(arrived.0 + 15 * 60 * 1000);
    let rows = object.expire_parked(&m, late, timeout);
    assert_eq!(rows.len(), 1, "one parked event expired");
    assert_eq!(rows[0].decision, Decision::RequiresReview);
    assert_eq!(
        rows[0].delivery_id.as_deref(),
        Some("dlv_r"),
        "links the delivery"
    );
    assert!(rows[0].reason.contains("15 min"), "{}", rows[0].reason);
    assert!(
        object.requires_review(),
        "the object is flagged, not silently stuck"
    );
    assert_eq!(object.state(), None, "still never created");
    let json = serde_json::to_value(&object).expect("serializes");
    assert_eq!(json["requires_review"], true, "a store sees the flag");

    let created = m
        .event_from_body(&asaas("PAYMENT_CREATED", 0))
        .expect("mapped");
    let rows = object.apply(&m, created, late);
    assert_eq!(
        rows.len(),
        1,
        "an expired event is no longer re-evaluated on its own"
    );
    for event in object.take_review() {
        let rows = object.apply(&m, event.event, late);
        assert_eq!(
            rows[0].decision,
            Decision::Applied,
            "the reviewer redrives it"
        );
    }
    assert_eq!(object.state(), Some("received"));
    assert!(!object.requires_review(), "review resolved");
}
