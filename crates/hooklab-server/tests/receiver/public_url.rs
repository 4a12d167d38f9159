//! URL-signed providers (Square here): the URL verified is the public URL when one is
//! configured, else `http://{Host}{path}?{query}`; the other form feeds the diagnosis.

use crate::support::{self, request_owned};
use hooklab_core::provider::{self, ProviderId, SignInput};
use hooklab_core::secret::Secret;
use hooklab_core::verdict::{Finding, Status};
use hooklab_server::config::{Config, SourceConfig};

const KEY: &str = "Ibxx_5AKakO-3qeNVR61Dw";
const BODY: &[u8] = br#"{"event_id":"e-1","type":"payment.updated"}"#;

fn config(public_url: Option<&str>) -> Config {
    let mut config = support::config();
    config.public_url = public_url.map(str::to_string);
    config.sources.push(SourceConfig::new(
        "square",
        ProviderId::Square,
        vec![Secret::new(KEY)],
    ));
    config
}

fn signed_for(url: &str) -> Vec<(String, Vec<u8>)> {
    let mut input = SignInput::new(BODY, support::NOW);
    input.url = Some(url);
    provider::sign(
        ProviderId::Square,
        &Default::default(),
        &Secret::new(KEY),
        &input,
    )
    .unwrap()
    .headers_as_pairs()
}

#[tokio::test]
async fn the_public_url_is_what_gets_verified() {
    let mut server = support::start(config(Some("https://hooks.example/"))).await;
    let headers = signed_for("https://hooks.example/square/n?k=a%20b");
    server
        .send(&request_owned("/square/n?k=a%20b", &headers, BODY))
        .await;
    let d = server.next_delivery().await;
    assert_eq!(
        d.record.verdict.verdict,
        Status::Valid,
        "{:?}",
        d.record.verdict
    );
    server.shutdown().await;
}

#[tokio::test]
async fn without_a_public_url_the_host_header_rebuilds_the_url() {
    let mut server = support::start(config(None)).await;
    // `support::request` sends `Host: hooklab.test`.
    let headers = signed_for("http://hooklab.test/square/n");
    server
        .send(&request_owned("/square/n", &headers, BODY))
        .await;
    let d = server.next_delivery().await;
    assert_eq!(
        d.record.verdict.verdict,
        Status::Valid,
        "{:?}",
        d.record.verdict
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_signature_over_the_local_url_is_diagnosed_when_a_public_url_is_set() {
    let mut server = support::start(config(Some("https://hooks.example"))).await;
    let headers = signed_for("http://hooklab.test/square/n");
    server
        .send(&request_owned("/square/n", &headers, BODY))
        .await;
    let d = server.next_delivery().await;
    assert_eq!(d.record.verdict.verdict, Status::Invalid);
    match d.record.verdict.diagnosis.and_then(|x| x.finding) {
        Some(Finding::UrlVariant { url, .. }) => assert_eq!(url, "http://hooklab.test/square/n"),
        other => panic!("the local URL should explain the mismatch: {other:?}"),
    }
    server.shutdown().await;
}
