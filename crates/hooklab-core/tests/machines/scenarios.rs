//! The scenarios the product issue names, one by one, with their key decisions.

use super::{asaas, builtin, mercadopago, run, stripe};
use hooklab_core::machine::Decision::*;

#[test]
fn stripe_success_before_creation_then_stale_processing_ends_succeeded() {
    let m = builtin("stripe-payment-intent").expect("built in");
    let (created, processing, succeeded) = (
        stripe("payment_intent.created", 0),
        stripe("payment_intent.processing", 1),
        stripe("payment_intent.succeeded", 2),
    );
    let r = run(&m, "pi_3Mtw", &[&succeeded, &created, &processing]);
    assert_eq!(
        r.decisions(),
        [Parked, Applied, AppliedFromPark, IgnoredStale],
        "succeeded waits for created; processing is older than succeeded"
    );
    assert_eq!(r.object.state(), Some("succeeded"));
    assert!(
        !r.object.awaiting_confirmation(),
        "stale processing did not flag it"
    );
    assert_eq!(
        r.rows[2].delivery_id.as_deref(),
        Some("dlv_0"),
        "the parked delivery"
    );
    assert_eq!(r.rows[2].from.as_deref(), Some("created"));
    r.assert_consistent("stripe scenario");
}

#[test]
fn asaas_received_before_created_ends_received() {
    let m = builtin("asaas-payment").expect("built in");
    let (created, received) = (asaas("PAYMENT_CREATED", 0), asaas("PAYMENT_RECEIVED", 1));
    let r = run(&m, "pay_080225913252", &[&received, &created]);
    assert_eq!(r.decisions(), [Parked, Applied, AppliedFromPark]);
    assert!(
        r.rows[0].reason.contains("not seen yet"),
        "{}",
        r.rows[0].reason
    );
    assert_eq!(r.object.state(), Some("received"), "the PIX is paid");
}

#[test]
fn a_refund_before_the_success_ends_refunded() {
    let m = builtin("stripe-payment-intent").expect("built in");
    let (created, succeeded, refunded) = (
        stripe("payment_intent.created", 0),
        stripe("payment_intent.succeeded", 1),
        stripe("charge.refunded", 2),
    );
    let r = run(&m, "pi_3Mtw", &[&created, &refunded, &succeeded]);
    assert_eq!(r.decisions(), [Applied, Parked, Applied, AppliedFromPark]);
    assert!(
        r.rows[1]
            .reason
            .contains("`created` → `refunded` is not allowed")
    );
    assert_eq!(r.object.state(), Some("refunded"));
}

#[test]
fn mercadopago_rejected_then_approved_later_ends_approved() {
    let m = builtin("mercadopago-payment").expect("built in");
    let rejected = mercadopago("payment.created", "rejected", 1);
    let approved = mercadopago("payment.updated", "approved", 9);
    let r = run(&m, "1319283754", &[&rejected, &approved]);
    assert_eq!(
        r.decisions(),
        [Applied, Applied],
        "the buyer retried and paid"
    );
    assert_eq!(r.object.state(), Some("approved"));
    let r = run(&m, "1319283754", &[&approved, &rejected, &approved]);
    assert_eq!(
        r.decisions(),
        [Applied, IgnoredStale, Duplicate],
        "late rejection is old"
    );
    assert_eq!(r.object.state(), Some("approved"));
}

#[test]
fn waiting_states_flag_awaiting_confirmation() {
    let cases = [
        (
            "stripe-payment-intent",
            "pi_3Mtw",
            stripe("payment_intent.processing", 1),
            stripe("payment_intent.created", 0),
        ),
        (
            "mercadopago-payment",
            "1319283754",
            mercadopago("payment.updated", "in_process", 1),
            mercadopago("payment.created", "pending", 0),
        ),
        (
            "asaas-payment",
            "pay_080225913252",
            asaas("PAYMENT_AWAITING_RISK_ANALYSIS", 1),
            asaas("PAYMENT_CREATED", 0),
        ),
    ];
    for (name, object, waiting, first) in cases {
        let m = builtin(name).expect("built in");
        let r = run(&m, object, &[&first, &waiting]);
        assert!(
            r.object.awaiting_confirmation(),
            "{name}: waits for the provider"
        );
        let json = serde_json::to_value(&r.object).expect("serializes");
        assert_eq!(
            json["awaiting_confirmation"], true,
            "{name}: stored with the object"
        );
    }
}
