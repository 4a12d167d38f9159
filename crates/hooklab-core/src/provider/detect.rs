//! Provider detection: a guess at who sent a request, from the headers only a given provider
//! sends, then (for the providers that sign inside the body) from the body's shape. Used to
//! suggest a provider for an unconfigured source and to explain "this looks like Stripe".
//! Never a basis for trust: verification is separate.

use super::ProviderId;
use crate::request::RawRequest;

/// Headers that name their sender on their own, in the order they are tried. More specific
/// combinations (Lemon Squeezy's and Mercado Pago's `X-Signature`, Meta's and GitHub's
/// `X-Hub-Signature-256`) are handled in [`detect`] before this table.
const BY_HEADER: &[(&str, ProviderId)] = &[
    ("Stripe-Signature", ProviderId::Stripe),
    ("svix-signature", ProviderId::Svix),
    ("svix-id", ProviderId::Svix),
    ("webhook-signature", ProviderId::StandardWebhooks),
    ("X-GitHub-Event", ProviderId::Github),
    ("X-GitHub-Delivery", ProviderId::Github),
    ("X-Slack-Signature", ProviderId::Slack),
    ("X-Shopify-Hmac-Sha256", ProviderId::Shopify),
    ("Paddle-Signature", ProviderId::Paddle),
    ("X-Twilio-Signature", ProviderId::Twilio),
    ("x-square-hmacsha256-signature", ProviderId::Square),
    ("x-square-signature", ProviderId::Square),
    ("asaas-access-token", ProviderId::Asaas),
    ("x-nowpayments-sig", ProviderId::Nowpayments),
    ("X-Razorpay-Signature", ProviderId::Razorpay),
    ("Linear-Signature", ProviderId::Linear),
    ("x-zm-signature", ProviderId::Zoom),
    ("Twitch-Eventsub-Message-Signature", ProviderId::Twitch),
    ("X-Signature-Ed25519", ProviderId::Discord),
    ("HmacSignature", ProviderId::AdyenBalance),
    ("X-HOTMART-HOTTOK", ProviderId::Hotmart),
    ("X-Mollie-Signature", ProviderId::Mollie),
    ("X-Event-Checksum", ProviderId::Wompi),
];

/// Guesses the provider that sent `req` from its distinctive headers, then from the body's
/// shape (Adyen notification items, Wompi's in-body signature, Mollie's `id=tr_…` form).
/// `None` when nothing is distinctive; `generic-hmac` and `token` are never guessed.
pub fn detect(req: &RawRequest) -> Option<ProviderId> {
    let has = |name: &str| req.header(name).is_some();
    if has("X-Signature") && has("X-Event-Name") {
        return Some(ProviderId::Lemonsqueezy);
    }
    // Mercado Pago's `ts=…,v1=…`; a bare `X-Signature` (+ `X-Request-Id`) is anyone's.
    let mp_shape = |v: &str| v.contains("ts=") && v.contains("v1=");
    if req.header_str("x-signature").is_some_and(mp_shape) {
        return Some(ProviderId::Mercadopago);
    }
    if has("X-Hub-Signature-256") && !has("X-GitHub-Event") && !has("X-GitHub-Delivery") {
        return Some(if body_has(req, "\"object\"") {
            ProviderId::Meta
        } else {
            ProviderId::Github
        });
    }
    if let Some(&(_, id)) = BY_HEADER.iter().find(|(name, _)| has(name)) {
        return Some(id);
    }
    if has("X-Hub-Signature") {
        return Some(if body_has(req, "notification_event") {
            ProviderId::Intercom
        } else {
            ProviderId::Pagarme
        });
    }
    by_body(req)
}

/// Cheap substring test on the body, for telling apart senders that share a header.
fn body_has(req: &RawRequest, needle: &str) -> bool {
    req.body
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn by_body(req: &RawRequest) -> Option<ProviderId> {
    if req.body.starts_with(b"id=tr_") {
        return Some(ProviderId::Mollie);
    }
    if !body_has(req, "notificationItems") && !body_has(req, "\"checksum\"") {
        return None;
    }
    let body: serde_json::Value = serde_json::from_slice(&req.body).ok()?;
    if body
        .pointer("/notificationItems/0/NotificationRequestItem")
        .is_some()
    {
        return Some(ProviderId::Adyen);
    }
    if body.pointer("/signature/checksum").is_some() && body.get("event").is_some() {
        return Some(ProviderId::Wompi);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guess(headers: &[(&str, &str)], body: &str) -> Option<ProviderId> {
        detect(&RawRequest::post(
            "/x",
            headers.iter().copied(),
            body.as_bytes().to_vec(),
        ))
    }

    #[test]
    fn distinctive_headers() {
        use ProviderId::*;
        let cases: &[(&str, ProviderId)] = &[
            ("stripe-signature", Stripe),
            ("svix-id", Svix),
            ("webhook-signature", StandardWebhooks),
            ("X-GitHub-Event", Github),
            ("x-slack-signature", Slack),
            ("X-Shopify-Hmac-Sha256", Shopify),
            ("Paddle-Signature", Paddle),
            ("X-Twilio-Signature", Twilio),
            ("x-square-hmacsha256-signature", Square),
            ("asaas-access-token", Asaas),
            ("x-nowpayments-sig", Nowpayments),
            ("X-Razorpay-Signature", Razorpay),
            ("Linear-Signature", Linear),
            ("x-zm-signature", Zoom),
            ("Twitch-Eventsub-Message-Signature", Twitch),
            ("X-Signature-Ed25519", Discord),
            ("HmacSignature", AdyenBalance),
            ("X-HOTMART-HOTTOK", Hotmart),
            ("X-Mollie-Signature", Mollie),
        ];
        for &(header, id) in cases {
            assert_eq!(guess(&[(header, "x")], "{}"), Some(id), "{header}");
        }
    }

    #[test]
    fn shared_header_names_are_told_apart() {
        use ProviderId::*;
        assert_eq!(
            guess(
                &[("X-Signature", "ab"), ("X-Event-Name", "order_created")],
                "{}"
            ),
            Some(Lemonsqueezy)
        );
        assert_eq!(
            guess(
                &[("x-signature", "ts=1,v1=ab"), ("x-request-id", "r")],
                "{}"
            ),
            Some(Mercadopago)
        );
        assert_eq!(
            guess(&[("X-Signature", "abcdef"), ("X-Request-Id", "r")], "{}"),
            None,
            "a bare X-Signature is anyone's"
        );
        assert_eq!(
            guess(
                &[
                    ("X-Hub-Signature-256", "sha256=ab"),
                    ("X-GitHub-Event", "push")
                ],
                "{}"
            ),
            Some(Github)
        );
        assert_eq!(
            guess(
                &[("X-Hub-Signature-256", "sha256=ab")],
                r#"{"object":"page","entry":[]}"#
            ),
            Some(Meta)
        );
        assert_eq!(
            guess(
                &[("X-Hub-Signature", "sha1=ab")],
                r#"{"type":"notification_event"}"#
            ),
            Some(Intercom)
        );
        assert_eq!(
            guess(
                &[("X-Hub-Signature", "sha1=ab")],
                "id=1&current_status=paid"
            ),
            Some(Pagarme)
        );
    }

    #[test]
    fn body_shapes() {
        use ProviderId::*;
        let adyen = r#"{"live":"false","notificationItems":[{"NotificationRequestItem":{"eventCode":"AUTHORISATION"}}]}"#;
        assert_eq!(
            guess(&[("Content-Type", "application/json")], adyen),
            Some(Adyen)
        );
        let wompi = r#"{"event":"transaction.updated","data":{},"signature":{"properties":[],"checksum":"AB"},"timestamp":1}"#;
        assert_eq!(guess(&[], wompi), Some(Wompi));
        assert_eq!(guess(&[], "id=tr_WDqYK6vllg"), Some(Mollie));
        assert_eq!(
            guess(&[("Content-Type", "application/json")], r#"{"id":"evt_1"}"#),
            None
        );
        assert_eq!(
            guess(&[], "\u{0}notificationItems\u{ff}"),
            None,
            "not JSON: no guess, no panic"
        );
    }
}
