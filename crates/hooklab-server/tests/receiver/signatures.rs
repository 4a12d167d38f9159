//! Signatures: a valid Stripe delivery is recorded byte-exact with a valid verdict; a tampered
//! one is recorded too, with an invalid verdict, and answered as configured (401 only when the
//! source asks for it).

use crate::support::{self, request_owned, stripe_headers};
use hooklab_core::provider::ProviderId;
use hooklab_core::verdict::{Finding, Status};

/// Odd spacing and key order: any re-serialisation would break the signature.
const BODY: &[u8] =
    br#"{"id":"evt_1", "type":"payment_intent.succeeded",  "data":{"object":{"id":"pi_1"}}}"#;

#[tokio::test]
async fn a_signed_stripe_delivery_is_recorded_byte_exact_and_valid() {
    let mut server = support::start(support::config()).await;
    let headers = stripe_headers(BODY);
    let response = server
        .send(&request_owned("/stripe/webhooks?x=1", &headers, BODY))
        .await;
    assert_eq!(response.status, 200, "the default configured response");

    let d = server.next_delivery().await;
    assert_eq!(
        d.record.body, BODY,
        "the body is stored exactly as received"
    );
    assert_eq!(d.record.body_size, BODY.len() as u64);
    assert_eq!(d.record.source, "stripe");
    assert_eq!(d.record.provider, Some(ProviderId::Stripe));
    assert_eq!(d.record.path, "/stripe/webhooks");
    assert_eq!(d.record.query.as_deref(), Some("x=1"));
    assert_eq!(
        d.record.received_at,
        support::NOW,
        "received-at comes from the clock"
    );
    assert_eq!(d.record.response_status, 200);
    assert!(
        d.record
            .remote_addr
            .as_deref()
            .is_some_and(|a| a.starts_with("127.0.0.1:"))
    );
    assert_eq!(
        d.record.verdict.verdict,
        Status::Valid,
        "{:?}",
        d.record.verdict
    );
    assert_eq!(
        d.record.metadata.event_id.as_deref(),
        Some("evt_1"),
        "metadata read"
    );
    assert_eq!(
        d.record.metadata.idempotency_key.as_deref(),
        Some("evt_1"),
        "the event id is the default idempotency key"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_tampered_delivery_is_recorded_invalid_and_still_answered_as_configured() {
    let mut server = support::start(support::config()).await;
    let headers = stripe_headers(BODY);
    let tampered = BODY
        .to_vec()
        .into_iter()
        .map(|b| if b == b'1' { b'2' } else { b })
        .collect::<Vec<_>>();
    let response = server
        .send(&request_owned("/stripe", &headers, &tampered))
        .await;
    assert_eq!(
        response.status, 200,
        "a debugging receiver records and answers as configured"
    );

    let d = server.next_delivery().await;
    assert_eq!(
        d.record.body, tampered,
        "the tampered bytes are what was received"
    );
    assert_eq!(
        d.record.verdict.verdict,
        Status::Invalid,
        "{:?}",
        d.record.verdict
    );
    server.shutdown().await;
}

#[tokio::test]
async fn reject_invalid_answers_401_after_recording() {
    let mut config = support::config();
    config.sources[0].reject_invalid = true;
    config.sources[0].response.body = "ok".into();
    let mut server = support::start(config).await;

    let headers = stripe_headers(b"{}");
    let response = server
        .send(&request_owned("/stripe", &headers, b"{ }"))
        .await;
    assert_eq!(
        response.status, 401,
        "the source asked for production behaviour"
    );
    let d = server.next_delivery().await;
    assert_eq!(d.record.verdict.verdict, Status::Invalid);
    assert_eq!(
        d.record.response_status, 401,
        "the recorded status is the one answered"
    );

    let response = server
        .send(&request_owned("/stripe", &stripe_headers(b"{}"), b"{}"))
        .await;
    assert_eq!(
        (response.status, response.text().as_str()),
        (200, "ok"),
        "valid ones pass"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_source_without_secrets_records_deliveries_as_unsigned() {
    let mut server = support::start(support::config()).await;
    let response = server
        .send(&support::request("POST", "/plain", &[], b"{}"))
        .await;
    assert_eq!(response.status, 200);
    let d = server.next_delivery().await;
    assert_eq!(d.record.verdict.verdict, Status::Unsigned);
    server.shutdown().await;
}

#[tokio::test]
async fn a_mismatch_signed_with_another_sources_secret_names_that_source() {
    let mut config = support::config();
    config
        .sources
        .push(hooklab_server::config::SourceConfig::new(
            "stripe-live",
            ProviderId::Stripe,
            vec![hooklab_core::secret::Secret::new(
                "whsec_the_other_endpoint",
            )],
        ));
    let mut server = support::start(config).await;
    let signed = hooklab_core::provider::sign(
        ProviderId::Stripe,
        &Default::default(),
        &hooklab_core::secret::Secret::new("whsec_the_other_endpoint"),
        &hooklab_core::provider::SignInput::new(BODY, support::NOW),
    )
    .unwrap();
    server
        .send(&request_owned("/stripe", &signed.headers_as_pairs(), BODY))
        .await;
    let d = server.next_delivery().await;
    assert_eq!(d.record.verdict.verdict, Status::Invalid);
    let finding = d.record.verdict.diagnosis.and_then(|x| x.finding);
    assert_eq!(
        finding,
        Some(Finding::OtherSecret {
            label: "source \"stripe-live\"".into()
        }),
        "the other sources' secrets are offered to the diagnosis"
    );
    server.shutdown().await;
}
