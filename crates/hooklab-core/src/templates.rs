//! Test events: a realistic body for a provider, with fresh ids and timestamps, to be signed
//! with a source's secret (`provider::sign`) and sent through the receiver like any delivery.
//! This is the seed of the replay lab's signed test events: one representative event per
//! provider, in the provider's own shape, so its metadata (event id, type, object) and its
//! state machine read it as they would a real one.

use crate::clock::UnixMillis;
use crate::provider::ProviderId;
use serde_json::json;
use sha2::Digest as _;

/// A test event, ready to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestEvent {
    pub body: Vec<u8>,
    pub content_type: &'static str,
    /// The event id the provider's metadata will read from it (or its delivery id).
    pub event_id: String,
    /// What it is, for people: e.g. `payment_intent.succeeded`.
    pub event_type: String,
}

/// A short id, unique per call at millisecond resolution plus `salt`.
fn short_id(now: UnixMillis, salt: &str) -> String {
    let digest = sha2::Sha256::digest(format!("{}:{salt}", now.0).as_bytes());
    hex::encode(&digest[..8])
}

/// One representative event of `provider`, dated `now`; `salt` makes ids unique when several
/// are made in the same millisecond.
pub fn test_event(provider: ProviderId, now: UnixMillis, salt: &str) -> TestEvent {
    let id = short_id(now, salt);
    let secs = now.0 / 1000;
    let rfc3339 = now.to_rfc3339();
    let (event_id, event_type, body) = match provider {
        ProviderId::Stripe => {
            let event_id = format!("evt_test_{id}");
            let body = json!({
                "id": event_id,
                "object": "event",
                "api_version": "2024-06-20",
                "created": secs,
                "livemode": false,
                "type": "payment_intent.succeeded",
                "data": {"object": {
                    "id": format!("pi_test_{id}"),
                    "object": "payment_intent",
                    "amount": 2000,
                    "currency": "usd",
                    "status": "succeeded",
                    "created": secs,
                }},
            });
            (event_id, "payment_intent.succeeded".to_string(), body)
        }
        ProviderId::Github => {
            let body = json!({
                "zen": "Keep it logically awesome.",
                "hook_id": 1,
                "hook": {"type": "Repository", "events": ["push"], "active": true},
                "repository": {"id": 1, "full_name": "hooklab/test"},
            });
            (String::new(), "ping".to_string(), body)
        }
        ProviderId::Shopify => {
            let body = json!({
                "id": u64::from_str_radix(&id[..12], 16).unwrap_or(1),
                "name": "#1001",
                "email": "test@example.com",
                "created_at": rfc3339,
                "total_price": "20.00",
                "currency": "USD",
                "financial_status": "paid",
            });
            (String::new(), "orders/create".to_string(), body)
        }
        ProviderId::Slack => {
            let event_id = format!("Ev{}", id.to_uppercase());
            let body = json!({
                "type": "event_callback",
                "team_id": "T0000TEST",
                "event_id": event_id,
                "event_time": secs,
                "event": {"type": "app_mention", "text": "hello from Hooklab", "user": "U0000TEST"},
            });
            (event_id, "event_callback".to_string(), body)
        }
        ProviderId::Mercadopago => {
            let body = json!({
                "id": u64::from_str_radix(&id[..10], 16).unwrap_or(1),
                "live_mode": false,
                "type": "payment",
                "date_created": rfc3339,
                "action": "payment.updated",
                "api_version": "v1",
                "data": {"id": format!("{}", u64::from_str_radix(&id[..9], 16).unwrap_or(1))},
            });
            (String::new(), "payment.updated".to_string(), body)
        }
        ProviderId::Asaas => {
            let event_id = format!("evt_test_{id}");
            let body = json!({
                "id": event_id,
                "event": "PAYMENT_RECEIVED",
                "dateCreated": rfc3339,
                "payment": {
                    "object": "payment",
                    "id": format!("pay_test_{id}"),
                    "value": 20.0,
                    "billingType": "PIX",
                    "status": "RECEIVED",
                },
            });
            (event_id, "PAYMENT_RECEIVED".to_string(), body)
        }
        ProviderId::Wompi => {
            let body = json!({
                "event": "transaction.updated",
                "data": {"transaction": {
                    "id": format!("test-{id}"),
                    "status": "APPROVED",
                    "amount_in_cents": 2_000_000,
                    "reference": format!("ref-{id}"),
                    "currency": "COP",
                }},
                "environment": "test",
                "sent_at": rfc3339,
                "timestamp": secs,
            });
            (String::new(), "transaction.updated".to_string(), body)
        }
        ProviderId::Paddle => {
            let event_id = format!("evt_test_{id}");
            let body = json!({
                "event_id": event_id,
                "event_type": "transaction.completed",
                "occurred_at": rfc3339,
                "notification_id": format!("ntf_test_{id}"),
                "data": {"id": format!("txn_test_{id}"), "status": "completed"},
            });
            (event_id, "transaction.completed".to_string(), body)
        }
        _ => {
            let event_id = format!("evt_test_{id}");
            let body = json!({
                "id": event_id,
                "type": "hooklab.test",
                "created_at": rfc3339,
                "data": {"message": "A test event sent from Hooklab."},
            });
            (event_id, "hooklab.test".to_string(), body)
        }
    };
    TestEvent {
        body: serde_json::to_vec(&body).unwrap_or_default(),
        content_type: "application/json",
        event_id,
        event_type,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{self, ProviderOptions, SignInput};
    use crate::request::{Header, RawRequest};
    use crate::secret::Secret;
    use crate::verdict::Status;
    use crate::verify::{VerifyConfig, verify};

    #[test]
    fn every_shared_secret_provider_signs_and_verifies_its_test_event() {
        let now = UnixMillis::now();
        let opts = ProviderOptions::default();
        let mut checked = 0;
        for id in ProviderId::ALL {
            let event = test_event(id, now, "t");
            let secret = Secret::new(match id {
                ProviderId::Stripe
                | ProviderId::StandardWebhooks
                | ProviderId::Svix
                | ProviderId::Clerk
                | ProviderId::Resend
                | ProviderId::Supabase => "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                _ => "test_secret_0123456789",
            });
            let url = "http://127.0.0.1:8787/test";
            let mut input = SignInput::new(&event.body, now);
            input.url = Some(url);
            input.content_type = Some(event.content_type);
            let Ok(signed) = provider::sign(id, &opts, &secret, &input) else {
                continue; // providers that cannot sign with a shared secret (Discord's Ed25519)
            };
            let mut headers: Vec<Header> = signed
                .headers
                .iter()
                .map(|(n, v)| Header::new(n.clone(), v.clone()))
                .collect();
            headers.push(Header::new("Content-Type", event.content_type));
            let req = RawRequest {
                method: "POST".into(),
                path: "/test".into(),
                query: None,
                headers,
                body: signed.body.clone().unwrap_or(event.body.clone()),
                url: Some(signed.url.clone().unwrap_or_else(|| url.to_string())),
            };
            let config = VerifyConfig::new(id, vec![secret]);
            let verdict = verify(&config, &req, now);
            assert_eq!(verdict.verdict, Status::Valid, "{id}: {verdict:?}");
            checked += 1;
        }
        assert!(
            checked >= 25,
            "most providers sign their test event ({checked})"
        );
    }

    #[test]
    fn ids_are_fresh_and_bodies_carry_them() {
        let now = UnixMillis::from_secs(1_700_000_000);
        let a = test_event(ProviderId::Stripe, now, "a");
        let b = test_event(ProviderId::Stripe, now, "b");
        assert_ne!(a.event_id, b.event_id);
        let body: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(body["id"], a.event_id.as_str());
        assert_eq!(body["created"], 1_700_000_000);
        assert_eq!(a.event_type, "payment_intent.succeeded");
    }
}
