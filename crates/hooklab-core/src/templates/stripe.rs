//! Stripe events (API version 2024-06-20): the `event` envelope around a PaymentIntent, a
//! Charge, a Dispute or an Invoice, in the shapes Stripe sends. A PaymentIntent's events carry
//! its status as Stripe sets it (a failed payment goes back to `requires_payment_method` with a
//! `last_payment_error`); refunds and disputes name their PaymentIntent in `payment_intent`,
//! which is how the state machine finds the payment. Ids of one event agree with each other
//! (the charge's `payment_intent` is the PaymentIntent's id).

use super::{Ctx, Template};
use serde_json::{Value, json};

pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "payment_intent.succeeded",
        build: |c| {
            event(
                c,
                "payment_intent.succeeded",
                payment_intent(c, "succeeded"),
            )
        },
    },
    Template {
        name: "payment_intent.created",
        build: |c| event(c, "payment_intent.created", payment_intent(c, "created")),
    },
    Template {
        name: "payment_intent.requires_action",
        build: |c| {
            let pi = payment_intent(c, "requires_action");
            event(c, "payment_intent.requires_action", pi)
        },
    },
    Template {
        name: "payment_intent.processing",
        build: |c| {
            event(
                c,
                "payment_intent.processing",
                payment_intent(c, "processing"),
            )
        },
    },
    Template {
        name: "payment_intent.payment_failed",
        build: |c| {
            let pi = payment_intent(c, "payment_failed");
            event(c, "payment_intent.payment_failed", pi)
        },
    },
    Template {
        name: "payment_intent.canceled",
        build: |c| event(c, "payment_intent.canceled", payment_intent(c, "canceled")),
    },
    Template {
        name: "charge.refunded",
        build: |c| {
            let mut e = event(c, "charge.refunded", refunded_charge(c));
            e["data"]["previous_attributes"] = json!({"amount_refunded": 0, "refunded": false});
            e
        },
    },
    Template {
        name: "charge.dispute.created",
        build: |c| event(c, "charge.dispute.created", dispute(c)),
    },
    Template {
        name: "invoice.paid",
        build: |c| event(c, "invoice.paid", invoice(c)),
    },
];

const AMOUNT: i64 = 2000;

/// The ids one event shares: a PaymentIntent, its charge, customer and card.
struct Ids {
    pi: String,
    ch: String,
    cus: String,
    pm: String,
}

fn ids(c: &Ctx) -> Ids {
    Ids {
        pi: format!("pi_3{}", c.ids.alnum("pi", 23)),
        ch: format!("ch_3{}", c.ids.alnum("ch", 23)),
        cus: format!("cus_{}", c.ids.alnum("cus", 14)),
        pm: format!("pm_1{}", c.ids.alnum("pm", 23)),
    }
}

/// The `event` envelope.
fn event(c: &Ctx, kind: &str, object: Value) -> Value {
    json!({
        "id": format!("evt_3{}", c.ids.alnum("evt", 23)),
        "object": "event",
        "api_version": "2024-06-20",
        "created": c.secs(),
        "data": {"object": object},
        "livemode": false,
        "pending_webhooks": 1,
        "request": {
            "id": format!("req_{}", c.ids.alnum("req", 14)),
            "idempotency_key": c.ids.uuid("idempotency"),
        },
        "type": kind,
    })
}

/// A PaymentIntent as its `payment_intent.{step}` event shows it.
fn payment_intent(c: &Ctx, step: &str) -> Value {
    let id = ids(c);
    let secs = c.secs();
    let status = match step {
        "created" | "payment_failed" => "requires_payment_method",
        other => other,
    };
    let attached = !matches!(step, "created");
    let charged = matches!(step, "succeeded" | "payment_failed" | "processing");
    let mut pi = json!({
        "id": id.pi,
        "object": "payment_intent",
        "amount": AMOUNT,
        "amount_capturable": 0,
        "amount_details": {"tip": {}},
        "amount_received": if step == "succeeded" { AMOUNT } else { 0 },
        "application": null,
        "application_fee_amount": null,
        "automatic_payment_methods": {"allow_redirects": "always", "enabled": true},
        "canceled_at": null,
        "cancellation_reason": null,
        "capture_method": "automatic_async",
        "client_secret": format!("{}_secret_{}", id.pi, c.ids.alnum("secret", 25)),
        "confirmation_method": "automatic",
        "created": secs,
        "currency": "usd",
        "customer": id.cus,
        "description": "Hooklab test payment",
        "invoice": null,
        "last_payment_error": null,
        "latest_charge": if charged { Value::from(id.ch.clone()) } else { Value::Null },
        "livemode": false,
        "metadata": {"order_id": format!("order_{}", c.ids.number("order", 6))},
        "next_action": null,
        "on_behalf_of": null,
        "payment_method": if attached { Value::from(id.pm.clone()) } else { Value::Null },
        "payment_method_options": {"card": {
            "installments": null, "mandate_options": null, "network": null,
            "request_three_d_secure": "automatic",
        }},
        "payment_method_types": ["card"],
        "processing": null,
        "receipt_email": "jenny.rosen@example.com",
        "review": null,
        "setup_future_usage": null,
        "shipping": null,
        "source": null,
        "statement_descriptor": null,
        "statement_descriptor_suffix": null,
        "status": status,
        "transfer_data": null,
        "transfer_group": null,
    });
    match step {
        "requires_action" => {
            pi["next_action"] = json!({
                "type": "use_stripe_sdk",
                "use_stripe_sdk": {
                    "type": "three_d_secure_redirect",
                    "stripe_js": format!("https://hooks.stripe.com/redirect/authenticate/src_{}",
                        c.ids.alnum("src", 24)),
                    "source": format!("src_{}", c.ids.alnum("src", 24)),
                },
            });
        }
        "processing" => {
            pi["processing"] = json!({"type": "card", "card": {"customer_notification": null}});
        }
        "payment_failed" => {
            pi["last_payment_error"] = json!({
                "charge": id.ch,
                "code": "card_declined",
                "decline_code": "generic_decline",
                "doc_url": "https://stripe.com/docs/error-codes/card-declined",
                "message": "Your card was declined.",
                "payment_method": {"id": id.pm, "object": "payment_method", "type": "card"},
                "type": "card_error",
            });
        }
        "canceled" => {
            pi["canceled_at"] = json!(secs);
            pi["cancellation_reason"] = json!("requested_by_customer");
        }
        _ => {}
    }
    pi
}

fn card_details() -> Value {
    json!({
        "card": {
            "brand": "visa", "country": "US", "exp_month": 12, "exp_year": 2034,
            "funding": "credit", "last4": "4242", "network": "visa",
        },
        "type": "card",
    })
}

/// A charge fully refunded, with its refund.
fn refunded_charge(c: &Ctx) -> Value {
    let id = ids(c);
    let secs = c.secs();
    let refund = format!("re_3{}", c.ids.alnum("re", 23));
    json!({
        "id": id.ch,
        "object": "charge",
        "amount": AMOUNT,
        "amount_captured": AMOUNT,
        "amount_refunded": AMOUNT,
        "balance_transaction": format!("txn_3{}", c.ids.alnum("txn", 23)),
        "billing_details": {"address": {"country": "US", "postal_code": "94103"},
                            "email": "jenny.rosen@example.com", "name": "Jenny Rosen", "phone": null},
        "captured": true,
        "created": secs,
        "currency": "usd",
        "customer": id.cus,
        "description": "Hooklab test payment",
        "disputed": false,
        "failure_code": null,
        "failure_message": null,
        "livemode": false,
        "metadata": {},
        "outcome": {"network_status": "approved_by_network", "reason": null,
                    "risk_level": "normal", "seller_message": "Payment complete.", "type": "authorized"},
        "paid": true,
        "payment_intent": id.pi,
        "payment_method": id.pm,
        "payment_method_details": card_details(),
        "receipt_url": format!("https://pay.stripe.com/receipts/payment/{}", c.ids.alnum("receipt", 40)),
        "refunded": true,
        "refunds": {
            "object": "list",
            "data": [{
                "id": refund,
                "object": "refund",
                "amount": AMOUNT,
                "charge": id.ch,
                "created": secs,
                "currency": "usd",
                "metadata": {},
                "payment_intent": id.pi,
                "reason": "requested_by_customer",
                "status": "succeeded",
            }],
            "has_more": false,
            "total_count": 1,
            "url": format!("/v1/charges/{}/refunds", id.ch),
        },
        "status": "succeeded",
    })
}

/// A dispute opened on a charge; Stripe gives the respondent a week.
fn dispute(c: &Ctx) -> Value {
    let id = ids(c);
    json!({
        "id": format!("dp_1{}", c.ids.alnum("dp", 23)),
        "object": "dispute",
        "amount": AMOUNT,
        "balance_transactions": [],
        "charge": id.ch,
        "created": c.secs(),
        "currency": "usd",
        "evidence": {"customer_email_address": "jenny.rosen@example.com", "product_description": null,
                     "uncategorized_text": null},
        "evidence_details": {"due_by": c.secs() + 7 * 86_400, "has_evidence": false,
                             "past_due": false, "submission_count": 0},
        "is_charge_refundable": false,
        "livemode": false,
        "metadata": {},
        "payment_intent": id.pi,
        "payment_method_details": {"card": {"brand": "visa", "network_reason_code": "10.4"}, "type": "card"},
        "reason": "fraudulent",
        "status": "needs_response",
    })
}

/// A subscription's first invoice, paid.
fn invoice(c: &Ctx) -> Value {
    let id = ids(c);
    let secs = c.secs();
    let invoice = format!("in_1{}", c.ids.alnum("in", 23));
    let subscription = format!("sub_1{}", c.ids.alnum("sub", 23));
    json!({
        "id": invoice,
        "object": "invoice",
        "account_country": "US",
        "account_name": "Hooklab Test",
        "amount_due": AMOUNT,
        "amount_paid": AMOUNT,
        "amount_remaining": 0,
        "attempt_count": 1,
        "attempted": true,
        "billing_reason": "subscription_create",
        "charge": id.ch,
        "collection_method": "charge_automatically",
        "created": secs,
        "currency": "usd",
        "customer": id.cus,
        "customer_email": "jenny.rosen@example.com",
        "hosted_invoice_url": format!("https://invoice.stripe.com/i/acct_1{}/test_{}",
            c.ids.alnum("acct", 15), c.ids.alnum("hosted", 40)),
        "lines": {
            "object": "list",
            "data": [{
                "id": format!("il_1{}", c.ids.alnum("il", 23)),
                "object": "line_item",
                "amount": AMOUNT,
                "currency": "usd",
                "description": "1 × Hooklab Pro (at $20.00 / month)",
                "period": {"end": secs + 30 * 86_400, "start": secs},
                "quantity": 1,
                "subscription": subscription,
                "type": "subscription",
            }],
            "has_more": false,
            "total_count": 1,
            "url": format!("/v1/invoices/{invoice}/lines"),
        },
        "livemode": false,
        "metadata": {},
        "number": format!("{}-0001", c.ids.upper("number", 8)),
        "paid": true,
        "payment_intent": id.pi,
        "period_end": secs,
        "period_start": secs,
        "status": "paid",
        "status_transitions": {"finalized_at": secs, "marked_uncollectible_at": null,
                               "paid_at": secs, "voided_at": null},
        "subscription": subscription,
        "subtotal": AMOUNT,
        "total": AMOUNT,
    })
}
