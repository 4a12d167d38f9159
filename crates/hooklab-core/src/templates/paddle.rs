//! Paddle Billing transaction events: `{event_id, event_type, occurred_at, notification_id,
//! data}` with a full transaction entity (items, totals, payments) as Paddle sends it, so the
//! official SDKs can parse what they verify. Times are RFC 3339 with microseconds; ids are
//! `{prefix}_01…` ULIDs. A `transaction.payment_failed` leaves the status where it was
//! (`ready`) and records an errored payment attempt.

use super::{Ctx, Template};
use serde_json::{Value, json};

pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "transaction.completed",
        build: |c| event(c, "transaction.completed", "completed"),
    },
    Template {
        name: "transaction.created",
        build: |c| event(c, "transaction.created", "ready"),
    },
    Template {
        name: "transaction.paid",
        build: |c| event(c, "transaction.paid", "paid"),
    },
    Template {
        name: "transaction.payment_failed",
        build: |c| event(c, "transaction.payment_failed", "ready"),
    },
];

const AMOUNT: &str = "2000";

fn event(c: &Ctx, kind: &str, status: &str) -> Value {
    json!({
        "event_id": format!("evt_{}", c.ids.ulid("evt")),
        "event_type": kind,
        "occurred_at": c.rfc3339_micros(),
        "notification_id": format!("ntf_{}", c.ids.ulid("ntf")),
        "data": transaction(c, kind, status),
    })
}

fn totals() -> Value {
    json!({
        "subtotal": AMOUNT, "tax": "0", "discount": "0", "total": AMOUNT,
        "grand_total": AMOUNT, "fee": null, "credit": "0", "credit_to_balance": "0",
        "balance": "0", "earnings": null, "currency_code": "USD",
    })
}

fn transaction(c: &Ctx, kind: &str, status: &str) -> Value {
    let at = c.rfc3339_micros();
    let txn = format!("txn_{}", c.ids.ulid("txn"));
    let price_id = format!("pri_{}", c.ids.ulid("pri"));
    let product_id = format!("pro_{}", c.ids.ulid("pro"));
    let paid = matches!(status, "paid" | "completed");
    let price = json!({
        "id": price_id,
        "product_id": product_id,
        "type": "standard",
        "description": "Monthly",
        "name": "Monthly plan",
        "billing_cycle": {"interval": "month", "frequency": 1},
        "trial_period": null,
        "tax_mode": "account_setting",
        "unit_price": {"amount": AMOUNT, "currency_code": "USD"},
        "unit_price_overrides": [],
        "quantity": {"minimum": 1, "maximum": 1},
        "status": "active",
        "custom_data": null,
        "import_meta": null,
        "created_at": at,
        "updated_at": at,
    });
    let payment = |status: &str, error: Value| {
        json!({
            "payment_attempt_id": c.ids.uuid("attempt"),
            "stored_payment_method_id": c.ids.uuid("stored"),
            "payment_method_id": format!("paymtd_{}", c.ids.ulid("paymtd")),
            "amount": AMOUNT,
            "status": status,
            "error_code": error,
            "method_details": {
                "type": "card",
                "card": {"type": "visa", "last4": "4242", "expiry_month": 1,
                         "expiry_year": 2030, "cardholder_name": "Sam Miller"},
            },
            "created_at": at,
            "captured_at": if status == "captured" { json!(at) } else { Value::Null },
        })
    };
    let payments = match (kind, paid) {
        ("transaction.payment_failed", _) => json!([payment("error", json!("declined"))]),
        (_, true) => json!([payment("captured", Value::Null)]),
        _ => json!([]),
    };
    json!({
        "id": txn,
        "status": status,
        "customer_id": format!("ctm_{}", c.ids.ulid("ctm")),
        "address_id": format!("add_{}", c.ids.ulid("add")),
        "business_id": null,
        "custom_data": null,
        "currency_code": "USD",
        "origin": "web",
        "subscription_id": null,
        "invoice_id": if status == "completed" { json!(format!("inv_{}", c.ids.ulid("inv"))) } else { Value::Null },
        "invoice_number": if status == "completed" { json!(format!("325-{}", c.ids.number("invoice", 5))) } else { Value::Null },
        "collection_mode": "automatic",
        "discount_id": null,
        "billing_details": null,
        "billing_period": null,
        "items": [{"price": price, "quantity": 1, "proration": null}],
        "details": details(c, &price_id, &product_id, &at),
        "payments": payments,
        "checkout": {"url": format!("https://example.com/pay?_ptxn={txn}")},
        "created_at": at,
        "updated_at": at,
        "billed_at": if paid { json!(at) } else { Value::Null },
    })
}

/// The transaction's `details`: totals and one line item.
fn details(c: &Ctx, price_id: &str, product_id: &str, at: &str) -> Value {
    json!({
        "tax_rates_used": [{"tax_rate": "0", "totals": {
            "subtotal": AMOUNT, "discount": "0", "tax": "0", "total": AMOUNT,
        }}],
        "totals": totals(),
        "adjusted_totals": {
            "subtotal": AMOUNT, "tax": "0", "total": AMOUNT, "grand_total": AMOUNT,
            "fee": null, "earnings": null, "currency_code": "USD",
        },
        "payout_totals": null,
        "adjusted_payout_totals": null,
        "line_items": [{
            "id": format!("txnitm_{}", c.ids.ulid("txnitm")),
            "price_id": price_id,
            "quantity": 1,
            "proration": null,
            "tax_rate": "0",
            "unit_totals": {"subtotal": AMOUNT, "discount": "0", "tax": "0", "total": AMOUNT},
            "totals": {"subtotal": AMOUNT, "discount": "0", "tax": "0", "total": AMOUNT},
            "product": {
                "id": product_id,
                "name": "Hooklab Pro",
                "description": null,
                "type": "standard",
                "tax_category": "standard",
                "image_url": null,
                "custom_data": null,
                "status": "active",
                "import_meta": null,
                "created_at": at,
                "updated_at": at,
            },
        }],
    })
}
