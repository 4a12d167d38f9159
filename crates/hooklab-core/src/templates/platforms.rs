//! Platforms whose metadata lives in headers as much as in the body: GitHub (`X-GitHub-Event`,
//! `X-GitHub-Delivery`), Shopify (`X-Shopify-Topic`, `X-Shopify-Event-Id`…) and Slack (the
//! Events API), plus the one generic event every other provider gets.

use super::{Ctx, Envelope, Template};
use serde_json::{Value, json};

pub(super) const GITHUB: &[Template] = &[
    Template {
        name: "ping",
        build: github_ping,
    },
    Template {
        name: "push",
        build: github_push,
    },
];

pub(super) const SHOPIFY: &[Template] = &[Template {
    name: "orders/create",
    build: shopify_order,
}];

pub(super) const SLACK: &[Template] = &[
    Template {
        name: "event_callback",
        build: slack_event,
    },
    Template {
        name: "url_verification",
        build: |c| {
            json!({
                "token": c.ids.alnum("token", 24),
                "challenge": c.ids.alnum("challenge", 48),
                "type": "url_verification",
            })
        },
    },
];

/// Linear signs the delivery time inside the body (`webhookTimestamp`, milliseconds).
pub(super) const LINEAR: &[Template] = &[Template {
    name: "Issue",
    build: |c| {
        let team = c.ids.uuid("team");
        json!({
            "action": "create",
            "actor": {"id": c.ids.uuid("actor"), "name": "Hooklab Test", "type": "user"},
            "createdAt": c.rfc3339(),
            "data": {
                "id": c.ids.uuid("issue"),
                "identifier": "ENG-42",
                "number": 42,
                "title": "Webhook retries arrive out of order",
                "priority": 2,
                "teamId": team,
                "stateId": c.ids.uuid("state"),
                "createdAt": c.rfc3339(),
                "updatedAt": c.rfc3339(),
            },
            "url": "https://linear.app/hooklab-test/issue/ENG-42",
            "type": "Issue",
            "organizationId": c.ids.uuid("organization"),
            "webhookTimestamp": c.now.0,
            "webhookId": c.ids.uuid("webhook"),
        })
    },
}];

/// Adyen's standard notification: a batch of items, each signed inside its `additionalData`.
pub(super) const ADYEN: &[Template] = &[Template {
    name: "AUTHORISATION",
    build: |c| {
        let item = json!({
            "additionalData": {
                "authCode": format!("{:06}", c.ids.number("auth", 6)),
                "cardSummary": "1111",
                "expiryDate": "03/2030",
            },
            "amount": {"currency": "EUR", "value": 1000},
            "eventCode": "AUTHORISATION",
            "eventDate": c.rfc3339(),
            "merchantAccountCode": "HooklabTestECOM",
            "merchantReference": format!("order-{}", c.ids.number("order", 6)),
            "operations": ["CANCEL", "CAPTURE", "REFUND"],
            "paymentMethod": "visa",
            "pspReference": c.ids.upper("psp", 16),
            "reason": "033899:1111:03/2030",
            "success": "true",
        });
        json!({
            "live": "false",
            "notificationItems": [{"NotificationRequestItem": item}],
        })
    },
}];

/// Every other provider: a small event in the common `{id, type, created_at, data}` shape.
pub(super) const DEFAULT: &[Template] = &[Template {
    name: "hooklab.test",
    build: |c| {
        json!({
            "id": format!("evt_test_{}", c.ids.hex("evt", 16)),
            "type": "hooklab.test",
            "created_at": c.rfc3339(),
            "data": {"message": "A test event sent from Hooklab."},
        })
    },
}];

fn repository(c: &Ctx) -> Value {
    json!({
        "id": c.ids.number("repo", 9),
        "node_id": format!("R_kgDO{}", c.ids.alnum("repo-node", 6)),
        "name": "webhooks",
        "full_name": "hooklab-test/webhooks",
        "private": false,
        "owner": user(c),
        "html_url": "https://github.com/hooklab-test/webhooks",
        "url": "https://api.github.com/repos/hooklab-test/webhooks",
        "default_branch": "main",
        "created_at": c.secs() - 86_400,
        "pushed_at": c.secs(),
    })
}

fn user(c: &Ctx) -> Value {
    json!({
        "login": "hooklab-test",
        "id": c.ids.number("user", 8),
        "node_id": format!("U_kgDO{}", c.ids.alnum("user-node", 6)),
        "type": "User",
        "site_admin": false,
        "html_url": "https://github.com/hooklab-test",
    })
}

fn github_ping(c: &Ctx) -> Value {
    let hook_id = c.ids.number("hook", 9);
    json!({
        "zen": "Keep it logically awesome.",
        "hook_id": hook_id,
        "hook": {
            "type": "Repository",
            "id": hook_id,
            "name": "web",
            "active": true,
            "events": ["push"],
            "config": {"content_type": "json", "insecure_ssl": "0",
                       "url": "https://example.com/webhooks/github"},
            "updated_at": c.rfc3339(),
            "created_at": c.rfc3339(),
            "url": format!("https://api.github.com/repos/hooklab-test/webhooks/hooks/{hook_id}"),
            "last_response": {"code": null, "status": "unused", "message": null},
        },
        "repository": repository(c),
        "sender": user(c),
    })
}

fn github_push(c: &Ctx) -> Value {
    let before = c.ids.hex("before", 40);
    let after = c.ids.hex("after", 40);
    let commit = json!({
        "id": after,
        "tree_id": c.ids.hex("tree", 40),
        "distinct": true,
        "message": "Handle payment_intent.succeeded idempotently",
        "timestamp": c.rfc3339(),
        "url": format!("https://github.com/hooklab-test/webhooks/commit/{after}"),
        "author": {"name": "Hooklab Test", "email": "test@example.com", "username": "hooklab-test"},
        "committer": {"name": "Hooklab Test", "email": "test@example.com", "username": "hooklab-test"},
        "added": [],
        "removed": [],
        "modified": ["src/webhooks.rs"],
    });
    json!({
        "ref": "refs/heads/main",
        "before": before,
        "after": after,
        "repository": repository(c),
        "pusher": {"name": "hooklab-test", "email": "test@example.com"},
        "sender": user(c),
        "created": false,
        "deleted": false,
        "forced": false,
        "base_ref": null,
        "compare": format!(
            "https://github.com/hooklab-test/webhooks/compare/{}...{}",
            &before[..12],
            &after[..12]
        ),
        "commits": [commit.clone()],
        "head_commit": commit,
    })
}

/// GitHub's headers besides the signatures: the event, the delivery GUID, the hook.
pub(super) fn github_envelope(event: &str, c: &Ctx) -> Envelope {
    let delivery = c.ids.uuid("delivery");
    Envelope {
        headers: vec![
            ("X-GitHub-Event".into(), event.into()),
            ("X-GitHub-Delivery".into(), delivery.clone()),
            (
                "X-GitHub-Hook-ID".into(),
                c.ids.number("hook", 9).to_string(),
            ),
            (
                "X-GitHub-Hook-Installation-Target-Type".into(),
                "repository".into(),
            ),
            (
                "X-GitHub-Hook-Installation-Target-ID".into(),
                c.ids.number("repo", 9).to_string(),
            ),
        ],
        query: None,
        delivery_id: Some(delivery),
    }
}

fn shopify_order(c: &Ctx) -> Value {
    let id = c.ids.number("order", 13);
    let at = c.rfc3339();
    let customer = c.ids.number("customer", 13);
    let customer_json = json!({
        "id": customer,
        "admin_graphql_api_id": format!("gid://shopify/Customer/{customer}"),
        "email": "jon@example.com",
        "first_name": "Jon",
        "last_name": "Snow",
        "currency": "USD",
    });
    let line_items = json!([{
        "id": c.ids.number("line", 14),
        "admin_graphql_api_id": format!("gid://shopify/LineItem/{}", c.ids.number("line", 14)),
        "name": "Webhook Debugger - Pro",
        "price": "20.00",
        "product_id": c.ids.number("product", 13),
        "quantity": 1,
        "sku": "HOOK-PRO",
        "taxable": true,
        "title": "Webhook Debugger",
        "variant_id": c.ids.number("variant", 14),
        "variant_title": "Pro",
    }]);
    json!({
        "id": id,
        "admin_graphql_api_id": format!("gid://shopify/Order/{id}"),
        "app_id": 580_111,
        "browser_ip": "203.0.113.7",
        "buyer_accepts_marketing": false,
        "cancel_reason": null,
        "cancelled_at": null,
        "checkout_id": c.ids.number("checkout", 13),
        "confirmation_number": c.ids.upper("confirmation", 9),
        "confirmed": true,
        "contact_email": "jon@example.com",
        "created_at": at,
        "currency": "USD",
        "current_subtotal_price": "20.00",
        "current_total_price": "20.00",
        "current_total_tax": "0.00",
        "email": "jon@example.com",
        "financial_status": "paid",
        "fulfillment_status": null,
        "name": "#1001",
        "order_number": 1001,
        "presentment_currency": "USD",
        "processed_at": at,
        "source_name": "web",
        "subtotal_price": "20.00",
        "tags": "",
        "test": true,
        "total_discounts": "0.00",
        "total_price": "20.00",
        "total_tax": "0.00",
        "updated_at": at,
        "customer": customer_json,
        "line_items": line_items,
    })
}

/// Shopify's headers besides the HMAC: the topic, the shop, the API version, the ids.
pub(super) fn shopify_envelope(topic: &str, c: &Ctx) -> Envelope {
    let webhook_id = c.ids.uuid("webhook");
    Envelope {
        headers: vec![
            ("X-Shopify-Topic".into(), topic.into()),
            (
                "X-Shopify-Shop-Domain".into(),
                "hooklab-test.myshopify.com".into(),
            ),
            ("X-Shopify-API-Version".into(), "2024-10".into()),
            ("X-Shopify-Webhook-Id".into(), webhook_id.clone()),
            ("X-Shopify-Event-Id".into(), webhook_id.clone()),
            ("X-Shopify-Triggered-At".into(), c.rfc3339()),
        ],
        query: None,
        delivery_id: Some(webhook_id),
    }
}

fn slack_event(c: &Ctx) -> Value {
    let team = format!("T{}", c.ids.upper("team", 10));
    let bot = format!("U{}", c.ids.upper("bot", 10));
    let ts = format!("{}.{:06}", c.secs(), c.ids.number("ts", 6));
    json!({
        "token": c.ids.alnum("token", 24),
        "team_id": team,
        "context_team_id": team,
        "api_app_id": format!("A{}", c.ids.upper("app", 10)),
        "event": {
            "type": "app_mention",
            "user": format!("U{}", c.ids.upper("user", 10)),
            "text": format!("<@{bot}> hello from Hooklab"),
            "ts": ts,
            "channel": format!("C{}", c.ids.upper("channel", 10)),
            "event_ts": ts,
        },
        "type": "event_callback",
        "event_id": format!("Ev{}", c.ids.upper("event", 10)),
        "event_time": c.secs(),
        "authorizations": [{
            "enterprise_id": null,
            "team_id": team,
            "user_id": bot,
            "is_bot": true,
            "is_enterprise_install": false,
        }],
        "is_ext_shared_channel": false,
        "event_context": format!("4-{}", c.ids.alnum("context", 40)),
    })
}
