//! Property tests for the parsers of Twilio, Square, Mercado Pago, Asaas, Hotmart, Token,
//! Wompi, NOWPayments, Discord, Adyen (both kinds) and Generic HMAC, and for `detect`:
//! arbitrary header bytes (non-UTF-8 included), bodies and URLs go through `verify` and
//! `metadata`; nothing may panic and nothing forged may come out valid. A second group checks
//! that what Hooklab signs for arbitrary bodies verifies.

use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{
    self, Digest, Encoding, GenericHmacOptions, ProviderId, ProviderOptions, SignInput,
};
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verify::{VerifyConfig, verify};
use proptest::collection::vec;
use proptest::prelude::*;

/// Pieces that reach deep into the parsers: keys, separators, digits, hex, base64, JSON.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    let tokens = [
        "ts=",
        "v1=",
        ",",
        ";",
        "=",
        "&",
        "?",
        "#",
        " ",
        "Bearer ",
        "bearer ",
        "sha256=",
        "{",
        "}",
        "[",
        "]",
        "\"",
        ":",
        "data.id=",
        "bodySHA256=",
        "%",
        "%2B",
        "+",
        "\u{0}",
        "é",
        "https://",
        "http://",
        ":443",
        ":80",
        "@",
        "[::1]",
        "/",
    ];
    prop_oneof![
        vec(any::<u8>(), 0..48),
        "[0-9]{0,20}".prop_map(String::into_bytes),
        "[0-9a-fA-F]{0,130}".prop_map(String::into_bytes),
        "[A-Za-z0-9+/=]{0,48}".prop_map(String::into_bytes),
        proptest::sample::select(tokens.to_vec()).prop_map(|t| t.as_bytes().to_vec()),
    ]
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    vec(fragment(), 0..8).prop_map(|parts| parts.concat())
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Arbitrary bytes, and JSON shaped like each provider's body with arbitrary values.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let s = || text().prop_map(|t| serde_json::to_string(&lossy(t)).unwrap_or_default());
    prop_oneof![
        vec(any::<u8>(), 0..256),
        text(),
        (s(), s(), any::<i64>()).prop_map(|(a, b, n)| format!(
            r#"{{"notificationItems":[{{"NotificationRequestItem":{{"pspReference":{a},"amount":{{"value":{n},"currency":{b}}},"success":{a},"additionalData":{{"hmacSignature":{b}}}}}}},{{"additionalData":{a}}}]}}"#
        ).into_bytes()),
        (s(), s(), any::<i64>()).prop_map(|(a, b, n)| format!(
            r#"{{"event":{a},"data":{{"transaction":{{"id":{a},"status":{b},"n":{n}}}}},"signature":{{"properties":["transaction.id",{b},"transaction.n"],"checksum":{b}}},"timestamp":{n}}}"#
        ).into_bytes()),
        (s(), any::<f64>(), any::<i64>()).prop_map(|(a, f, n)| format!(
            r#"{{"payment_id":{n},"payment_status":{a},"pay_amount":{f},"fee":{{"b":{a},"a":[{n},{{"z":1,"y":{a}}}]}}}}"#
        ).into_bytes()),
        (s(), any::<u64>()).prop_map(|(a, n)| format!(
            r#"{{"id":{a},"type":{n},"event":{{"type":{a},"timestamp":{a}}},"data":{{"id":{a}}},"creation_date":{n}}}"#
        ).into_bytes()),
    ]
}

fn url() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        text().prop_map(|t| Some(lossy(t))),
        (text(), text()).prop_map(|(h, q)| Some(format!(
            "https://{}/hook?data.id={}&bodySHA256={}",
            lossy(h),
            lossy(q.clone()),
            lossy(q)
        ))),
    ]
}

/// Headers drawn from `names` (each may be absent, repeated or in any order).
fn headers(names: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    vec((0..names.len(), text()), 0..8).prop_map(move |picked| {
        picked
            .into_iter()
            .map(|(i, v)| (names[i].to_string(), v))
            .collect()
    })
}

/// A Generic HMAC with every option in use.
fn full_generic() -> ProviderOptions {
    ProviderOptions {
        generic: Some(GenericHmacOptions {
            header: "X-Sig".into(),
            algorithm: Digest::Sha512,
            encoding: Encoding::Base64,
            prefix: Some("v1=".into()),
            template: "{id}.{timestamp}.{url}.{body}".into(),
            timestamp_header: Some("X-Ts".into()),
            id_header: Some("X-Id".into()),
            tolerance_secs: Some(0),
        }),
        token: None,
    }
}

fn config(id: ProviderId, secret: &str, options: ProviderOptions) -> VerifyConfig {
    let mut config = VerifyConfig::new(id, vec![Secret::new(secret)]);
    config.options = options;
    config
}

/// Verifies, reads metadata and detects; fails the property only if the forgery is valid.
fn assert_not_valid(
    config: &VerifyConfig,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    url: Option<String>,
    now: i64,
) -> Result<(), TestCaseError> {
    let mut req = RawRequest::post("/hook", headers, body);
    req.url = url;
    let verdict = verify(config, &req, UnixMillis(now));
    let id = config.provider;
    prop_assert!(
        !verdict.is_valid(),
        "{id}: forged request accepted: {verdict:?}"
    );
    let scheme = provider::scheme(id, &config.options).expect("valid options");
    let _ = scheme.metadata(&req);
    let _ = provider::detect(&req);
    Ok(())
}

const ADYEN_KEY: &str = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const DISCORD_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const DISCORD_SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const TOKEN: &str = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0";

macro_rules! fuzz {
    ($($name:ident: $id:expr, $secret:expr, $options:expr, $headers:expr;)*) => {
        proptest! {
            $(
                #[test]
                fn $name(h in headers($headers), b in body(), u in url(), now in any::<i64>()) {
                    assert_not_valid(&config($id, $secret, $options), h, b, u, now)?;
                }
            )*
        }
    };
}

fuzz! {
    twilio: ProviderId::Twilio, "12345", ProviderOptions::default(), &["X-Twilio-Signature", "Content-Type", "I-Twilio-Idempotency-Token"];
    square: ProviderId::Square, "Ibxx_5AKakO-3qeNVR61Dw", ProviderOptions::default(), &["x-square-hmacsha256-signature", "x-square-signature"];
    mercadopago: ProviderId::Mercadopago, "mp_secret", ProviderOptions::default(), &["x-signature", "x-request-id"];
    asaas: ProviderId::Asaas, TOKEN, ProviderOptions::default(), &["asaas-access-token"];
    hotmart: ProviderId::Hotmart, TOKEN, ProviderOptions::default(), &["X-HOTMART-HOTTOK"];
    token: ProviderId::Token, TOKEN, ProviderOptions::default(), &["Authorization"];
    wompi: ProviderId::Wompi, "prod_events_secret", ProviderOptions::default(), &["X-Event-Checksum"];
    nowpayments: ProviderId::Nowpayments, "np_secret", ProviderOptions::default(), &["x-nowpayments-sig"];
    discord: ProviderId::Discord, DISCORD_PUBLIC, ProviderOptions::default(), &["X-Signature-Ed25519", "X-Signature-Timestamp"];
    adyen: ProviderId::Adyen, ADYEN_KEY, ProviderOptions::default(), &["HmacSignature"];
    adyen_balance: ProviderId::AdyenBalance, ADYEN_KEY, ProviderOptions::default(), &["HmacSignature"];
    generic_default: ProviderId::GenericHmac, "secret", ProviderOptions::default(), &["X-Signature"];
    generic_full: ProviderId::GenericHmac, "secret", full_generic(), &["X-Sig", "X-Ts", "X-Id"];
}

/// Any finite double (JSON has no NaN or infinity).
fn finite() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NORMAL, SUBNORMAL, ZERO};
    NORMAL | SUBNORMAL | ZERO
}

/// Signs `body` for `id` at a fixed time and verifies the result at the same time.
fn assert_round_trip(
    id: ProviderId,
    sign_secret: &str,
    verify_secret: &str,
    options: ProviderOptions,
    body: &[u8],
    url: Option<&str>,
    content_type: Option<&str>,
) -> Result<(), TestCaseError> {
    let now = UnixMillis::from_secs(1_700_000_000);
    let mut input = SignInput::new(body, now);
    input.url = url;
    input.content_type = content_type;
    let signed = provider::sign(id, &options, &Secret::new(sign_secret), &input)
        .map_err(|e| TestCaseError::fail(format!("{id}: signing failed: {e}")))?;
    let body = signed.body.clone().unwrap_or_else(|| body.to_vec());
    let mut req = RawRequest::post("/hook", signed.headers_as_pairs(), body);
    req.url = signed.url.clone().or(url.map(str::to_string));
    let verdict = verify(&config(id, verify_secret, options), &req, now);
    prop_assert!(
        verdict.is_valid(),
        "{id}: what we sign must verify: {verdict:?}"
    );
    Ok(())
}

proptest! {
    #[test]
    fn signed_arbitrary_bodies_verify(body in vec(any::<u8>(), 0..200), data_id in "[A-Za-z0-9-]{1,20}") {
        let url = "https://hooks.example.com:8443/in?x=1";
        let mp_url = format!("https://hooks.example.com/mp?data.id={data_id}&type=payment");
        let form = Some("application/x-www-form-urlencoded");
        let plain = ProviderOptions::default;
        assert_round_trip(ProviderId::Twilio, "12345", "12345", plain(), &body, Some(url), form)?;
        assert_round_trip(ProviderId::Twilio, "12345", "12345", plain(), &body, Some(url), Some("application/json"))?;
        assert_round_trip(ProviderId::Square, "k", "k", plain(), &body, Some(url), None)?;
        assert_round_trip(ProviderId::Mercadopago, "k", "k", plain(), &body, Some(&mp_url), None)?;
        assert_round_trip(ProviderId::Asaas, TOKEN, TOKEN, plain(), &body, None, None)?;
        assert_round_trip(ProviderId::Hotmart, TOKEN, TOKEN, plain(), &body, None, None)?;
        assert_round_trip(ProviderId::Token, TOKEN, TOKEN, plain(), &body, None, None)?;
        assert_round_trip(ProviderId::Discord, DISCORD_SEED, DISCORD_PUBLIC, plain(), &body, None, None)?;
        assert_round_trip(ProviderId::AdyenBalance, ADYEN_KEY, ADYEN_KEY, plain(), &body, None, None)?;
        assert_round_trip(ProviderId::GenericHmac, "s", "s", plain(), &body, None, None)?;
        assert_round_trip(ProviderId::GenericHmac, "s", "s", full_generic(), &body, Some(url), None)?;
    }

    #[test]
    fn signed_arbitrary_json_verifies(a in any::<String>(), n in any::<i64>(), f in finite()) {
        let a = serde_json::to_string(&a).unwrap_or_default();
        let plain = ProviderOptions::default;
        let nowpayments = format!(r#"{{"z":{a},"payment_id":{n},"pay_amount":{f},"fee":{{"y":{a},"x":[{f},{{"b":1,"a":{a}}}]}}}}"#);
        assert_round_trip(ProviderId::Nowpayments, "k", "k", plain(), nowpayments.as_bytes(), None, None)?;
        let wompi = format!(r#"{{"event":"transaction.updated","data":{{"transaction":{{"id":{a},"status":{a},"amount_in_cents":{n}}}}}}}"#);
        assert_round_trip(ProviderId::Wompi, "k", "k", plain(), wompi.as_bytes(), None, None)?;
        let adyen = format!(r#"{{"notificationItems":[{{"NotificationRequestItem":{{"pspReference":{a},"amount":{{"value":{n},"currency":"EUR"}},"eventCode":{a},"success":"true"}}}}]}}"#);
        assert_round_trip(ProviderId::Adyen, ADYEN_KEY, ADYEN_KEY, plain(), adyen.as_bytes(), None, None)?;
    }
}
