//! Definitions as data: TOML and JSON round trips, clear validation errors, the built-in list.

use hooklab_core::machine::{BUILTIN_NAMES, Definition, Machine, builtin, builtins};
use serde_json::json;

const CUSTOM: &str = r#"
name = "acme-order"
description = "An order in ACME's own webhooks."
provider = "generic-hmac"
event_type = "/kind"
object = "/order/ref"
time = "/at"
states = ["open", "paid", "shipped", "void"]
initial = ["open"]
final = ["shipped", "void"]
waiting = ["open"]

[transitions]
open = ["paid", "void"]
paid = ["shipped"]

[events."order.opened"]
state = "open"

[events."order.changed"]
status = "/order/status"
values = { PAID = "paid", SHIPPED = "shipped", VOID = "void" }
"#;

#[test]
fn a_toml_definition_round_trips_and_runs() {
    let machine = Machine::from_toml(CUSTOM).expect("valid");
    let text = machine.definition().to_toml().expect("writes");
    let again = Definition::from_toml(&text).expect("reads back");
    assert_eq!(
        &again,
        machine.definition(),
        "TOML round trip keeps everything"
    );
    let json = serde_json::to_string(&machine).expect("a machine serializes");
    let back: Machine = serde_json::from_str(&json).expect("and deserializes, validated");
    assert_eq!(
        back.definition(),
        machine.definition(),
        "JSON round trip too"
    );

    let body = json!({"kind": "order.changed", "at": "2026-05-01T10:00:00Z",
                      "order": {"ref": 77, "status": "PAID"}});
    let event = machine.event_from_body(&body).expect("mapped");
    assert_eq!(
        (event.object_id.as_str(), event.state.as_str()),
        ("77", "paid")
    );
}

#[test]
fn validation_errors_are_clear() {
    let broken = CUSTOM.replace("paid = [\"shipped\"]", "paid = [\"shiped\"]");
    let err = Machine::from_toml(&broken).expect_err("a typo in a state");
    assert_eq!(
        err.to_string(),
        "machine `acme-order`: `transitions.paid` names state `shiped`, which is not in \
         `states` (declared: open, paid, shipped, void)"
    );
    let broken = CUSTOM.replace("object = \"/order/ref\"", "object = \"order.ref\"");
    let err = Machine::from_toml(&broken).expect_err("not a pointer");
    assert!(
        err.to_string()
            .contains("must be a JSON pointer starting with `/`"),
        "{err}"
    );
    let broken = CUSTOM.replace("initial = [\"open\"]", "initial = []");
    let err = Machine::from_toml(&broken).expect_err("no initial state");
    assert!(err.to_string().contains("`initial` is empty"), "{err}");
    let broken = CUSTOM.replace("generic-hmac", "acme");
    let err = Machine::from_toml(&broken).expect_err("unknown provider");
    assert!(
        err.to_string().contains("expected `any` or one of"),
        "{err}"
    );
}

#[test]
fn builtins_are_listed_and_scoped_to_their_provider() {
    let names: Vec<String> = builtins().iter().map(|m| m.name().to_string()).collect();
    assert_eq!(
        names, BUILTIN_NAMES,
        "one machine per listed name, in order"
    );
    let stripe = builtin("stripe-payment-intent").expect("built in");
    assert!(stripe.applies_to(hooklab_core::provider::ProviderId::Stripe));
    assert!(!stripe.applies_to(hooklab_core::provider::ProviderId::Paddle));
    let generic = builtin("generic-payment").expect("built in");
    assert!(
        generic.applies_to(hooklab_core::provider::ProviderId::Paddle),
        "any provider"
    );
}
