//! Each diagnosis is provoked: a developer reading the verdict knows what to fix.

use base64::Engine as _;
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, Digest, ProviderId, ProviderOptions, SignInput, hmac_digest};
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verdict::{Finding, Reason, Status, Verdict};
use hooklab_core::verify::{VerifyConfig, verify};

const NOW: i64 = 1_700_000_000;
const BODY: &str =
    r#"{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}"#;
const SVIX_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn signed(id: ProviderId, secret: &str, body: &str, url: Option<&str>) -> RawRequest {
    let mut input = SignInput::new(body.as_bytes(), UnixMillis::from_secs(NOW));
    input.url = url;
    let s = provider::sign(
        id,
        &ProviderOptions::default(),
        &Secret::new(secret),
        &input,
    )
    .unwrap();
    let mut r = RawRequest::post("/hooks", s.headers_as_pairs(), body.as_bytes().to_vec());
    r.url = url.map(String::from);
    r
}

fn run(id: ProviderId, secret: &str, r: &RawRequest) -> Verdict {
    verify(
        &VerifyConfig::new(id, vec![Secret::new(secret)]),
        r,
        UnixMillis::from_secs(NOW),
    )
}

fn finding(v: &Verdict) -> Finding {
    v.diagnosis
        .as_ref()
        .and_then(|d| d.finding.clone())
        .unwrap_or_else(|| panic!("a finding explains {v:?}"))
}

#[test]
fn signed_with_another_sources_secret() {
    let r = signed(ProviderId::Stripe, "whsec_other_endpoint", BODY, None);
    let mut config =
        VerifyConfig::new(ProviderId::Stripe, vec![Secret::new("whsec_this_endpoint")]);
    config.other_secrets = vec![(
        "source `billing`".into(),
        Secret::new("whsec_other_endpoint"),
    )];
    let v = verify(&config, &r, UnixMillis::from_secs(NOW));
    assert_eq!(v.reason, Some(Reason::SignatureMismatch));
    assert_eq!(
        finding(&v),
        Finding::OtherSecret {
            label: "source `billing`".into()
        }
    );
    assert!(
        v.diagnosis.unwrap().message.contains("billing"),
        "the message names the source"
    );
}

#[test]
fn stripe_secret_base64_decoded_by_the_sender() {
    // The sender keyed HMAC with the base64-decoded secret (Svix's convention); Stripe uses it
    // verbatim.
    let key = base64::engine::general_purpose::STANDARD
        .decode(SVIX_SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let t = NOW.to_string();
    let sig = hex::encode(hmac_digest(
        Digest::Sha256,
        &key,
        &[t.as_bytes(), b".", BODY.as_bytes()],
    ));
    let r = RawRequest::post(
        "/hooks",
        [("Stripe-Signature", format!("t={t},v1={sig}"))],
        BODY.as_bytes().to_vec(),
    );
    let v = run(ProviderId::Stripe, SVIX_SECRET, &r);
    match finding(&v) {
        Finding::SecretFormat { format, .. } => assert!(format.contains("base64"), "{format}"),
        other => panic!("expected a secret-format finding, got {other:?}"),
    }
}

#[test]
fn svix_secret_used_literally_by_the_sender() {
    let key = SVIX_SECRET.as_bytes();
    let (id, t) = ("msg_1", NOW.to_string());
    let sig = base64::engine::general_purpose::STANDARD.encode(hmac_digest(
        Digest::Sha256,
        key,
        &[id.as_bytes(), b".", t.as_bytes(), b".", BODY.as_bytes()],
    ));
    let r = RawRequest::post(
        "/hooks",
        [
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", t),
            ("webhook-signature", format!("v1,{sig}")),
        ],
        BODY.as_bytes().to_vec(),
    );
    let v = run(ProviderId::StandardWebhooks, SVIX_SECRET, &r);
    match finding(&v) {
        Finding::SecretFormat { format, .. } => assert!(format.contains("literal"), "{format}"),
        other => panic!("expected a secret-format finding, got {other:?}"),
    }
}

#[test]
fn supabase_style_secret_pasted_into_a_standard_webhooks_source() {
    let r = signed(ProviderId::StandardWebhooks, SVIX_SECRET, BODY, None);
    let v = run(
        ProviderId::StandardWebhooks,
        &format!("v1,{SVIX_SECRET}"),
        &r,
    );
    assert_eq!(v.verdict, Status::Invalid);
    match finding(&v) {
        Finding::SecretFormat { format, .. } => assert!(format.contains("v1,whsec_"), "{format}"),
        other => panic!("expected a secret-format finding, got {other:?}"),
    }
}

#[test]
fn authentic_but_outside_the_tolerance_says_by_how_much() {
    let r = signed(ProviderId::Stripe, "whsec_x", BODY, None);
    let v = verify(
        &VerifyConfig::new(ProviderId::Stripe, vec![Secret::new("whsec_x")]),
        &r,
        UnixMillis::from_secs(NOW + 420),
    );
    assert_eq!(v.reason, Some(Reason::TimestampTooOld));
    assert_eq!(
        finding(&v),
        Finding::OutsideTolerance {
            secret_index: 0,
            age_secs: 420,
            by_secs: 120
        }
    );
    assert!(
        v.summary.contains("120 s"),
        "the summary says by how much: {}",
        v.summary
    );
}

#[test]
fn timestamp_in_the_future() {
    let r = signed(ProviderId::Slack, "slack-secret", BODY, None);
    let v = verify(
        &VerifyConfig::new(ProviderId::Slack, vec![Secret::new("slack-secret")]),
        &r,
        UnixMillis::from_secs(NOW - 1000),
    );
    assert_eq!(v.reason, Some(Reason::TimestampInFuture));
    assert!(matches!(
        finding(&v),
        Finding::OutsideTolerance { by_secs: 700, .. }
    ));
}

#[test]
fn body_reencoded_in_transit() {
    let r = signed(ProviderId::Stripe, "whsec_x", BODY, None);
    let pretty =
        serde_json::to_vec_pretty(&serde_json::from_str::<serde_json::Value>(BODY).unwrap())
            .unwrap();
    let received = RawRequest { body: pretty, ..r };
    let v = run(ProviderId::Stripe, "whsec_x", &received);
    match finding(&v) {
        Finding::BodyReencoded { variant, .. } => assert!(variant.contains("compact"), "{variant}"),
        other => panic!("expected a body re-encoding finding, got {other:?}"),
    }
}

#[test]
fn line_endings_and_trailing_newline_changed() {
    let body = "line one\nline two\n";
    let r = signed(ProviderId::Github, "gh", body, None);
    let crlf = RawRequest {
        body: b"line one\r\nline two\r\n".to_vec(),
        ..r.clone()
    };
    match finding(&run(ProviderId::Github, "gh", &crlf)) {
        Finding::BodyReencoded { variant, .. } => assert!(variant.contains("CRLF"), "{variant}"),
        other => panic!("expected CRLF finding, got {other:?}"),
    }
    let extra = RawRequest {
        body: b"line one\nline two\n\n".to_vec(),
        ..r
    };
    match finding(&run(ProviderId::Github, "gh", &extra)) {
        Finding::BodyReencoded { variant, .. } => assert!(variant.contains("newline"), "{variant}"),
        other => panic!("expected newline finding, got {other:?}"),
    }
}

#[test]
fn url_signed_against_the_public_url() {
    let public = "https://abc.lhr.life/twilio/sms";
    let form = "Body=hello&From=%2B15551234567";
    let mut input = SignInput::new(form.as_bytes(), UnixMillis::from_secs(NOW));
    input.url = Some(public);
    input.content_type = Some("application/x-www-form-urlencoded");
    let s = provider::sign(
        ProviderId::Twilio,
        &ProviderOptions::default(),
        &Secret::new("tok"),
        &input,
    )
    .unwrap();
    let mut headers = s.headers_as_pairs();
    headers.push((
        "Content-Type".into(),
        b"application/x-www-form-urlencoded".to_vec(),
    ));
    let r = RawRequest::post("/twilio/sms", headers, form.as_bytes().to_vec())
        .with_url("http://127.0.0.1:8787/twilio/sms");
    let mut config = VerifyConfig::new(ProviderId::Twilio, vec![Secret::new("tok")]);
    config.alt_urls = vec![public.to_string()];
    let v = verify(&config, &r, UnixMillis::from_secs(NOW));
    assert_eq!(v.verdict, Status::Invalid);
    assert_eq!(
        finding(&v),
        Finding::UrlVariant {
            secret_index: 0,
            url: public.into()
        }
    );
}

#[test]
fn url_signed_with_another_port_or_scheme() {
    let signed_url = "https://example.com/square";
    let r = signed(ProviderId::Square, "sq-key", BODY, Some(signed_url))
        .with_url("http://example.com:8080/square");
    let v = run(ProviderId::Square, "sq-key", &r);
    match finding(&v) {
        Finding::UrlVariant { url, .. } => assert_eq!(url, "https://example.com/square"),
        other => panic!("expected URL finding, got {other:?}"),
    }
}

#[test]
fn a_delivery_from_another_provider() {
    let r = signed(ProviderId::Github, "gh", BODY, None);
    let v = run(ProviderId::Stripe, "whsec_x", &r);
    assert_eq!(v.reason, Some(Reason::MissingHeader));
    assert_eq!(
        finding(&v),
        Finding::OtherProvider {
            provider: "github".into()
        }
    );
}

#[test]
fn a_tampered_body_has_no_false_explanation() {
    let r = signed(ProviderId::Stripe, "whsec_x", BODY, None);
    let tampered = RawRequest {
        body: BODY.replace("pi_1", "pi_2").into_bytes(),
        ..r
    };
    let v = run(ProviderId::Stripe, "whsec_x", &tampered);
    assert_eq!(v.reason, Some(Reason::SignatureMismatch));
    let d = v.diagnosis.expect("a mismatch always carries advice");
    assert_eq!(d.finding, None, "nothing explains a forged body");
    assert!(
        d.message.starts_with(
            "No configured secret matches, in any of the usual secret formats, nor with the \
             body re-encoded. Check that the secret is this endpoint's signing secret — the \
             whole whsec_… signing secret"
        ),
        "the advice says what was ruled out and what to check, in plain text: {}",
        d.message
    );
}
