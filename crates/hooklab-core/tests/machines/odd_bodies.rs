//! Bodies no provider sends: no machine panics on them.

use hooklab_core::clock::UnixMillis;
use hooklab_core::machine::{ObjectState, builtins};
use serde_json::json;

#[test]
fn no_body_panics_any_machine() {
    let odd = [
        json!(null),
        json!([]),
        json!("payment_intent.succeeded"),
        json!(1e308),
        json!({"type": 5, "event": [], "action": {}, "event_type": null}),
        json!({"type": "payment_intent.succeeded", "created": "yesterday",
               "data": {"object": {"id": {"nested": true}}}}),
        json!({"type": "payment_intent.succeeded", "created": -9_223_372_036_854_775_808i64,
               "data": {"object": {"id": "pi_1"}}}),
        json!({"event": "PAYMENT_RECEIVED", "dateCreated": "2024-13-45 99:99:99",
               "payment": {"id": "pay_1"}}),
        json!({"action": "payment.updated", "date_created": "2024-01-01T00:00:00Z",
               "data": {"id": "1", "status": "ünknöwn ✓"}}),
        json!({"event": "transaction.updated", "timestamp": 1.5e300,
               "data": {"transaction": {"id": "", "status": "APPROVED"}}}),
    ];
    for machine in builtins() {
        let types: Vec<String> = machine.event_types().map(str::to_string).collect();
        for body in &odd {
            let _ = machine.event_from_body(body);
            for event_type in &types {
                if let Ok(event) = machine.extract(body, event_type) {
                    // Whatever came out must still be judged without a panic.
                    let mut object = ObjectState::new(&machine, &event.object_id);
                    let _ = object.apply(&machine, event, UnixMillis(0));
                }
            }
        }
    }
}
