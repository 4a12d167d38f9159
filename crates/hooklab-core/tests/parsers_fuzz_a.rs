//! Property tests for the signature-header parsers of Stripe, the Standard Webhooks family,
//! GitHub, Slack, Shopify, Paddle, Razorpay, Lemon Squeezy, Linear, Zoom, Twitch, Meta,
//! Intercom, Mollie and Pagar.me: arbitrary header bytes (non-UTF-8 included) and bodies go
//! through `verify` and `metadata`; nothing may panic and nothing forged may come out valid.

use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, ProviderId, ProviderOptions};
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verify::{VerifyConfig, verify};
use proptest::collection::vec;
use proptest::prelude::*;

/// Pieces that reach deep into the parsers: keys, separators, digits, hex, base64, dates.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    let tokens = [
        "t=",
        "v1=",
        "v0=",
        "ts=",
        "h1=",
        "h2=",
        "sha256=",
        "sha1=",
        "v1,",
        "v1a,",
        "v0=",
        ",",
        ";",
        " ",
        "  ",
        "=",
        "\t",
        "whsec_",
        "-",
        "2019-11-16T10:11:12.634234626Z",
        "\u{0}",
    ];
    prop_oneof![
        vec(any::<u8>(), 0..48),
        "[0-9]{0,20}".prop_map(String::into_bytes),
        "[0-9a-fA-F]{0,70}".prop_map(String::into_bytes),
        "[A-Za-z0-9+/=]{0,48}".prop_map(String::into_bytes),
        proptest::sample::select(tokens.to_vec()).prop_map(|t| t.as_bytes().to_vec()),
    ]
}

fn header_value() -> impl Strategy<Value = Vec<u8>> {
    vec(fragment(), 0..8).prop_map(|parts| parts.concat())
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..256),
        (any::<i64>(), "[a-z_.]{0,12}").prop_map(|(ts, kind)| {
            format!(r#"{{"type":"{kind}","webhookTimestamp":{ts},"data":{{"id":"x"}}}}"#)
                .into_bytes()
        }),
        Just(b"id=tr_123".to_vec()),
    ]
}

/// Headers drawn from `names` (each may be absent, repeated or in any order).
fn headers(names: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    vec((0..names.len(), header_value()), 0..8).prop_map(move |picked| {
        picked
            .into_iter()
            .map(|(i, v)| (names[i].to_string(), v))
            .collect()
    })
}

/// Verifies and reads metadata; panics (failing the property) only if the forgery is valid.
fn assert_not_valid(
    id: ProviderId,
    secret: &str,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    now: i64,
) -> Result<(), TestCaseError> {
    let req = RawRequest::post("/hook", headers, body);
    let config = VerifyConfig::new(id, vec![Secret::new(secret)]);
    let verdict = verify(&config, &req, UnixMillis(now));
    prop_assert!(
        !verdict.is_valid(),
        "{id}: forged request accepted: {verdict:?}"
    );
    let scheme = provider::scheme(id, &ProviderOptions::default()).expect("no options needed");
    let _ = scheme.metadata(&req);
    Ok(())
}

const WHSEC: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SW: &[&str] = &["webhook-id", "webhook-timestamp", "webhook-signature"];
const SVIX: &[&str] = &[
    "svix-id",
    "svix-timestamp",
    "svix-signature",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
];

macro_rules! fuzz {
    ($($name:ident: $id:expr, $secret:expr, $headers:expr;)*) => {
        proptest! {
            $(
                #[test]
                fn $name(h in headers($headers), b in body(), now in any::<i64>()) {
                    assert_not_valid($id, $secret, h, b, now)?;
                }
            )*
        }
    };
}

fuzz! {
    stripe: ProviderId::Stripe, "whsec_test_secret", &["Stripe-Signature"];
    standard_webhooks: ProviderId::StandardWebhooks, WHSEC, SW;
    svix: ProviderId::Svix, WHSEC, SVIX;
    clerk: ProviderId::Clerk, WHSEC, SVIX;
    resend: ProviderId::Resend, WHSEC, SVIX;
    supabase: ProviderId::Supabase, "v1,whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", SW;
    github: ProviderId::Github, "secret", &["X-Hub-Signature-256", "X-Hub-Signature", "X-GitHub-Delivery", "X-GitHub-Event"];
    slack: ProviderId::Slack, "secret", &["X-Slack-Signature", "X-Slack-Request-Timestamp"];
    shopify: ProviderId::Shopify, "secret", &["X-Shopify-Hmac-Sha256", "X-Shopify-Event-Id", "X-Shopify-Triggered-At"];
    paddle: ProviderId::Paddle, "pdl_ntfset_secret", &["Paddle-Signature"];
    razorpay: ProviderId::Razorpay, "secret", &["X-Razorpay-Signature", "x-razorpay-event-id"];
    lemonsqueezy: ProviderId::Lemonsqueezy, "secret", &["X-Signature", "X-Event-Name"];
    linear: ProviderId::Linear, "secret", &["Linear-Signature", "Linear-Delivery", "Linear-Event"];
    zoom: ProviderId::Zoom, "secret", &["x-zm-signature", "x-zm-request-timestamp"];
    twitch: ProviderId::Twitch, "s3cRe7s3cRe7", &["Twitch-Eventsub-Message-Id", "Twitch-Eventsub-Message-Timestamp", "Twitch-Eventsub-Message-Signature", "Twitch-Eventsub-Message-Type"];
    meta: ProviderId::Meta, "secret", &["X-Hub-Signature-256", "X-Hub-Signature"];
    intercom: ProviderId::Intercom, "secret", &["X-Hub-Signature"];
    mollie: ProviderId::Mollie, "secret", &["X-Mollie-Signature"];
    pagarme: ProviderId::Pagarme, "secret", &["X-Hub-Signature"];
}
