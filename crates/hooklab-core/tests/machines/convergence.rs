//! Every built-in machine, fed each history in every arrival order, with duplicates and
//! stale repeats: it always ends in the history's last state with a consistent timeline.

use super::{History, asaas, generic, mercadopago, paddle, stripe, wompi};

#[test]
fn stripe_payment_intents() {
    let h = |kinds: &[&str], end| History {
        machine: "stripe-payment-intent",
        object: "pi_3Mtw",
        bodies: kinds.iter().zip(0..).map(|(k, at)| stripe(k, at)).collect(),
        end,
    };
    h(
        &[
            "payment_intent.created",
            "payment_intent.processing",
            "payment_intent.succeeded",
            "charge.refunded",
        ],
        "refunded",
    )
    .converges();
    h(
        &[
            "payment_intent.created",
            "payment_intent.requires_action",
            "payment_intent.payment_failed",
            "payment_intent.succeeded",
            "charge.dispute.created",
        ],
        "disputed",
    )
    .converges();
    h(
        &[
            "payment_intent.created",
            "payment_intent.amount_capturable_updated",
            "payment_intent.canceled",
        ],
        "canceled",
    )
    .converges();
}

#[test]
fn mercadopago_payments() {
    let h = |steps: &[(&str, &str)], end| History {
        machine: "mercadopago-payment",
        object: "1319283754",
        bodies: steps
            .iter()
            .zip(0..)
            .map(|((a, s), m)| mercadopago(a, s, m))
            .collect(),
        end,
    };
    h(
        &[
            ("payment.created", "pending"),
            ("payment.updated", "in_process"),
            ("payment.updated", "approved"),
            ("payment.updated", "refunded"),
        ],
        "refunded",
    )
    .converges();
    h(
        &[
            ("payment.created", "rejected"),
            ("payment.updated", "approved"),
        ],
        "approved",
    )
    .converges();
    h(
        &[
            ("payment.created", "pending"),
            ("payment.updated", "approved"),
            ("payment.updated", "in_mediation"),
            ("payment.updated", "charged_back"),
        ],
        "charged_back",
    )
    .converges();
}

#[test]
fn asaas_payments() {
    let h = |events: &[&str], end| History {
        machine: "asaas-payment",
        object: "pay_080225913252",
        bodies: events.iter().zip(0..).map(|(e, m)| asaas(e, m)).collect(),
        end,
    };
    h(&["PAYMENT_CREATED", "PAYMENT_RECEIVED"], "received").converges();
    h(
        &[
            "PAYMENT_CREATED",
            "PAYMENT_AWAITING_RISK_ANALYSIS",
            "PAYMENT_APPROVED_BY_RISK_ANALYSIS",
            "PAYMENT_CONFIRMED",
            "PAYMENT_RECEIVED",
            "PAYMENT_REFUNDED",
        ],
        "refunded",
    )
    .converges();
    h(
        &["PAYMENT_CREATED", "PAYMENT_OVERDUE", "PAYMENT_RECEIVED"],
        "received",
    )
    .converges();
    h(
        &[
            "PAYMENT_CREATED",
            "PAYMENT_CONFIRMED",
            "PAYMENT_CHARGEBACK_REQUESTED",
            "PAYMENT_CHARGEBACK_DISPUTE",
            "PAYMENT_AWAITING_CHARGEBACK_REVERSAL",
            "PAYMENT_RECEIVED",
        ],
        "received",
    )
    .converges();
}

#[test]
fn wompi_transactions() {
    let h = |statuses: &[&str], end| History {
        machine: "wompi-transaction",
        object: "1234-1610641025-49201",
        bodies: statuses
            .iter()
            .zip(0..)
            .map(|(s, at)| wompi(s, at))
            .collect(),
        end,
    };
    h(&["PENDING", "APPROVED", "VOIDED"], "voided").converges();
    h(&["PENDING", "DECLINED"], "declined").converges();
    h(&["APPROVED", "VOIDED"], "voided").converges();
}

#[test]
fn paddle_transactions() {
    let h = |steps: &[(&str, &str)], end| History {
        machine: "paddle-transaction",
        object: "txn_01hv8wptq8987qeep44cyrewp9",
        bodies: steps
            .iter()
            .zip(0..)
            .map(|((k, s), at)| paddle(k, s, at))
            .collect(),
        end,
    };
    h(
        &[
            ("transaction.created", "draft"),
            ("transaction.ready", "ready"),
            ("transaction.paid", "paid"),
            ("transaction.completed", "completed"),
        ],
        "completed",
    )
    .converges();
    h(
        &[
            ("transaction.created", "billed"),
            ("transaction.past_due", "past_due"),
            ("transaction.payment_failed", "past_due"),
            ("transaction.paid", "paid"),
            ("transaction.completed", "completed"),
        ],
        "completed",
    )
    .converges();
    h(
        &[
            ("transaction.created", "ready"),
            ("transaction.updated", "canceled"),
        ],
        "canceled",
    )
    .converges();
}

#[test]
fn generic_payments() {
    let h = |kinds: &[&str], end| History {
        machine: "generic-payment",
        object: "pay_42",
        bodies: kinds.iter().zip(0..).map(|(k, m)| generic(k, m)).collect(),
        end,
    };
    h(
        &["payment.created", "payment.confirmed", "payment.refunded"],
        "refunded",
    )
    .converges();
    h(
        &[
            "payment.pending",
            "payment.failed",
            "payment.pending",
            "payment.confirmed",
            "payment.disputed",
        ],
        "disputed",
    )
    .converges();
    h(&["payment.created", "payment.cancelled"], "cancelled").converges();
}
