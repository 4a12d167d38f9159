//! Latin American gateways: Mercado Pago, Asaas and Wompi, in the shapes they post.
//!
//! - **Mercado Pago** posts a notification naming the payment (`data.id`, a numeric string) and
//!   appends `?data.id=…&type=payment` to the notification URL, which its signature covers. It
//!   does not send the payment's status (a handler fetches it); Hooklab's templates add it at
//!   `data.status`, where the built-in machine reads it (`--set data.status=rejected`).
//! - **Asaas** posts `{id, event, dateCreated, payment}`; `dateCreated` is Brasília local time
//!   (UTC−3) without an offset. PIX payments go straight to `RECEIVED`; cards are `CONFIRMED`
//!   first.
//! - **Wompi** posts `transaction.updated` with a `signature` block whose `checksum` the
//!   signer computes over `signature.properties` and the top-level `timestamp`.

use super::{Ctx, Envelope, Template};
use serde_json::{Value, json};

pub(super) const MERCADOPAGO: &[Template] = &[
    Template {
        name: "payment.updated",
        build: |c| mercadopago(c, "payment.updated", "approved"),
    },
    Template {
        name: "payment.created",
        build: |c| mercadopago(c, "payment.created", "pending"),
    },
];

pub(super) const ASAAS: &[Template] = &[
    Template {
        name: "PAYMENT_RECEIVED",
        build: |c| asaas(c, "PAYMENT_RECEIVED"),
    },
    Template {
        name: "PAYMENT_CREATED",
        build: |c| asaas(c, "PAYMENT_CREATED"),
    },
    Template {
        name: "PAYMENT_CONFIRMED",
        build: |c| asaas(c, "PAYMENT_CONFIRMED"),
    },
    Template {
        name: "PAYMENT_OVERDUE",
        build: |c| asaas(c, "PAYMENT_OVERDUE"),
    },
    Template {
        name: "PAYMENT_REFUNDED",
        build: |c| asaas(c, "PAYMENT_REFUNDED"),
    },
];

pub(super) const WOMPI: &[Template] = &[Template {
    name: "transaction.updated",
    build: wompi,
}];

/// A Mercado Pago payment notification.
fn mercadopago(c: &Ctx, action: &str, status: &str) -> Value {
    json!({
        "action": action,
        "api_version": "v1",
        "data": {
            "id": c.ids.number("payment", 11).to_string(),
            "status": status,
        },
        "date_created": c.rfc3339(),
        "id": c.ids.number("notification", 12),
        "live_mode": false,
        "type": "payment",
        "user_id": c.ids.number("user", 10).to_string(),
    })
}

/// Mercado Pago's query string (the signed `data.id`, from the body as it ends up) and its
/// request id.
pub(super) fn mercadopago_envelope(body: &Value, c: &Ctx) -> Envelope {
    let data_id = match body.pointer("/data/id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let request_id = c.ids.uuid("x-request-id");
    Envelope {
        headers: vec![("x-request-id".into(), request_id.clone())],
        query: Some(format!("data.id={}&type=payment", query_escape(&data_id))),
        delivery_id: Some(request_id),
    }
}

/// `text` for a query string: unreserved characters as they are, every other byte `%XX`.
fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// An Asaas payment event; PIX unless the event is a card's confirmation.
fn asaas(c: &Ctx, event: &str) -> Value {
    let local = c.brasilia();
    let today = local.date();
    let date = |d: time::Date| format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day());
    let days = |n: i64| date(today.saturating_add(time::Duration::days(n)));
    let payment_id = format!("pay_{}", c.ids.lower("payment", 16));
    let invoice = c.ids.lower("invoice", 16);
    let (status, billing) = match event {
        "PAYMENT_CREATED" => ("PENDING", "PIX"),
        "PAYMENT_CONFIRMED" => ("CONFIRMED", "CREDIT_CARD"),
        "PAYMENT_OVERDUE" => ("OVERDUE", "PIX"),
        "PAYMENT_REFUNDED" => ("REFUNDED", "PIX"),
        _ => ("RECEIVED", "PIX"),
    };
    let paid = matches!(status, "RECEIVED" | "CONFIRMED" | "REFUNDED");
    let due = if status == "OVERDUE" {
        days(-1)
    } else {
        days(3)
    };
    let paid_on = |v: Value| if paid { v } else { Value::Null };
    let mut payment = json!({
        "object": "payment",
        "id": payment_id,
        "dateCreated": if status == "OVERDUE" { days(-4) } else { date(today) },
        "customer": format!("cus_{:012}", c.ids.number("customer", 9)),
        "subscription": null,
        "installment": null,
        "paymentLink": null,
        "value": 100.0,
        "netValue": if billing == "PIX" { 99.01 } else { 96.52 },
        "originalValue": null,
        "interestValue": null,
        "description": "Pedido 056984",
        "billingType": billing,
        "canBePaidAfterDueDate": true,
        "confirmedDate": paid_on(json!(date(today))),
        "pixTransaction": null,
        "status": status,
        "dueDate": due,
        "originalDueDate": due,
        "paymentDate": paid_on(json!(date(today))),
        "clientPaymentDate": paid_on(json!(date(today))),
        "installmentNumber": null,
        "invoiceUrl": format!("https://sandbox.asaas.com/i/{invoice}"),
        "invoiceNumber": format!("{:08}", c.ids.number("invoice-number", 7)),
        "externalReference": "056984",
        "deleted": false,
        "anticipated": false,
        "anticipable": false,
        "creditDate": paid_on(json!(date(today))),
        "estimatedCreditDate": paid_on(json!(date(today))),
        "transactionReceiptUrl": paid_on(json!(format!(
            "https://sandbox.asaas.com/comprovantes/{}", c.ids.number("receipt", 16)
        ))),
        "nossoNumero": null,
        "bankSlipUrl": null,
        "lastInvoiceViewedDate": null,
        "lastBankSlipViewedDate": null,
        "discount": {"value": 0, "limitDate": null, "dueDateLimitDays": 0, "type": "FIXED"},
        "fine": {"value": 0, "type": "FIXED"},
        "interest": {"value": 0, "type": "PERCENTAGE"},
        "postalService": false,
        "custody": null,
        "refunds": null,
    });
    if billing == "PIX" && paid {
        payment["pixTransaction"] = json!(c.ids.uuid("pix"));
    }
    if billing == "CREDIT_CARD" {
        payment["creditCard"] = json!({
            "creditCardNumber": "8829",
            "creditCardBrand": "MASTERCARD",
            "creditCardToken": c.ids.uuid("card-token"),
        });
        // A card payment is credited a month later.
        payment["creditDate"] = json!(days(30));
        payment["estimatedCreditDate"] = json!(days(30));
    }
    if status == "REFUNDED" {
        payment["refunds"] = json!([{
            "dateCreated": c.brasilia_text(),
            "status": "DONE",
            "value": 100.0,
            "endToEndIdentifier": null,
            "description": "Estorno solicitado pelo cliente",
            "effectiveDate": c.brasilia_text(),
            "transactionReceiptUrl": null,
            "refundedSplits": null,
        }]);
    }
    json!({
        "id": format!("evt_{}&{}", c.ids.hex("event", 32), c.ids.number("event-seq", 9)),
        "event": event,
        "dateCreated": c.brasilia_text(),
        "payment": payment,
    })
}

/// A Wompi transaction, approved; `--set data.transaction.status=DECLINED` for another outcome.
fn wompi(c: &Ctx) -> Value {
    let secs = c.secs();
    let id = format!(
        "{}-{secs}-{}",
        c.ids.number("merchant", 5),
        c.ids.number("tx", 5)
    );
    json!({
        "event": "transaction.updated",
        "data": {
            "transaction": {
                "id": id,
                "created_at": c.rfc3339(),
                "finalized_at": c.rfc3339(),
                "amount_in_cents": 4_490_000,
                "reference": c.ids.upper("reference", 12),
                "customer_email": "juan.perez@example.com",
                "currency": "COP",
                "payment_method_type": "CARD",
                "payment_method": {
                    "type": "CARD",
                    "extra": {"bin": "424242", "name": "VISA-4242", "brand": "VISA",
                              "last_four": "4242", "card_type": "CREDIT"},
                    "installments": 1,
                },
                "status": "APPROVED",
                "status_message": null,
                "shipping_address": null,
                "redirect_url": "https://example.com/pagos/redireccion",
                "payment_source_id": null,
                "payment_link_id": null,
                "customer_data": {"full_name": "Juan Pérez", "phone_number": "+573001234567"},
                "billing_data": null,
            }
        },
        "environment": "test",
        "signature": {
            "properties": [
                "transaction.id",
                "transaction.status",
                "transaction.amount_in_cents",
            ],
        },
        "timestamp": secs,
        "sent_at": c.rfc3339(),
    })
}
