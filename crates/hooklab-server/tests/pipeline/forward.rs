//! The forward handler against a real app: what arrives (method, headers, exact body, query,
//! Hooklab's headers), what is recorded (status, headers, the first 64 KiB, latency), and what
//! counts as failure (non-2xx, only-200 sources, timeouts, refused connections).

use crate::support::*;
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::Header;
use hooklab_core::store::Delivery;
use hooklab_server::config::{SourceConfig, SuccessPolicy};
use hooklab_server::pipeline::forward::RESPONSE_BODY_CAP;
use hooklab_server::pipeline::{ForwardHandler, Handler, HandlerContext, HandlerResult};
use std::time::Duration;

const AT: UnixMillis = UnixMillis(1_700_000_000_000);

/// A PUT with a query, hop-by-hop headers, and a body that is not UTF-8.
fn delivery() -> Delivery {
    let mut record = new_delivery("pay", "evt_fidelity", AT);
    record.method = "PUT".into();
    record.query = Some("data.id=123&type=payment".into());
    record.headers = vec![
        Header::new("Host", "public.example"),
        Header::new("Stripe-Signature", "t=1700000000,v1=abc"),
        Header::new("Connection", "keep-alive, X-Per-Hop"),
        Header::new("X-Per-Hop", "for the last hop only"),
        Header::new("Transfer-Encoding", "chunked"),
        Header::new("Proxy-Authorization", "Basic Zm9v"),
        Header::new("X-Multi", "one"),
        Header::new("X-Multi", "two"),
        Header::new("Content-Type", "application/octet-stream"),
    ];
    record.body = b"{\"a\":1}\r\n\x00\xff\xfe binary \xc3\x28 tail".to_vec();
    record.body_size = record.body.len() as u64;
    Delivery {
        id: 7,
        record,
        duplicate_of: None,
    }
}

async fn run(handler: &ForwardHandler, delivery: &Delivery, attempt: u32) -> HandlerResult {
    let source = SourceConfig::new("pay", ProviderId::Stripe, Vec::new());
    let ctx = HandlerContext {
        delivery,
        attempt,
        job: 1,
        source: &source,
        started_at: AT,
    };
    handler.handle(&ctx).await
}

fn handler(url: &str, success: SuccessPolicy) -> ForwardHandler {
    ForwardHandler::new(url, success, Duration::from_secs(10)).unwrap()
}

#[tokio::test]
async fn the_app_gets_the_method_headers_and_exact_body() {
    let app = App::start(Answer::Body(200, b"thanks".to_vec())).await;
    let delivery = delivery();
    let result = run(
        &handler(&app.url("/in?token=x"), SuccessPolicy::Any2xx),
        &delivery,
        2,
    )
    .await;
    assert!(result.success, "{:?}", result.record.error);

    let seen = app.seen();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert_eq!(got.method, "PUT", "the original method");
    assert_eq!(
        got.target, "/in?token=x&data.id=123&type=payment",
        "the target's path and query, then the delivery's query"
    );
    assert_eq!(got.body, delivery.record.body, "the exact body bytes");
    assert_eq!(
        got.header("stripe-signature").as_deref(),
        Some("t=1700000000,v1=abc")
    );
    assert_eq!(
        got.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    let multi: Vec<_> = got.headers.iter().filter(|(n, _)| n == "x-multi").collect();
    assert_eq!(multi.len(), 2, "repeated headers are all sent");
    assert_eq!(got.header("x-hooklab-delivery").as_deref(), Some("7"));
    assert_eq!(got.header("x-hooklab-attempt").as_deref(), Some("2"));
    assert_eq!(
        got.header("host"),
        Some(app.addr.to_string()),
        "Host names the app, not the public host"
    );
    assert_eq!(
        got.header("content-length"),
        Some(delivery.record.body.len().to_string()),
        "the length of the exact body"
    );
    for gone in [
        "connection",
        "x-per-hop",
        "transfer-encoding",
        "proxy-authorization",
    ] {
        assert_eq!(
            got.header(gone),
            None,
            "{gone} belongs to the gateway's hop only"
        );
    }

    let record = &result.record;
    assert_eq!(record.status, Some(200));
    assert_eq!(record.response_body, b"thanks");
    assert!(
        record
            .response_headers
            .iter()
            .any(|h| h.name == "content-length")
    );
    assert_eq!(
        record.target.as_deref(),
        Some(app.url("/in?token=x&data.id=123&type=payment").as_str())
    );
    assert_eq!(record.started_at, AT, "the worker's start time");
    assert_eq!(record.error, None);
}

#[tokio::test]
async fn the_response_body_is_kept_up_to_64_kib() {
    let big: Vec<u8> = (0..100 * 1024).map(|i| (i % 251) as u8).collect();
    let app = App::start(Answer::Body(200, big.clone())).await;
    let result = run(
        &handler(&app.url("/"), SuccessPolicy::Any2xx),
        &delivery(),
        1,
    )
    .await;
    assert!(result.success);
    assert_eq!(result.record.response_body.len(), RESPONSE_BODY_CAP);
    assert_eq!(
        result.record.response_body,
        big[..RESPONSE_BODY_CAP],
        "the first 64 KiB"
    );
}

#[tokio::test]
async fn non_2xx_is_a_failure_with_its_status() {
    let app = App::start(Answer::Body(500, b"boom".to_vec())).await;
    let result = run(
        &handler(&app.url("/"), SuccessPolicy::Any2xx),
        &delivery(),
        1,
    )
    .await;
    assert!(!result.success);
    assert_eq!(result.record.status, Some(500));
    assert_eq!(result.record.response_body, b"boom", "the body says why");
    let error = result.record.error.unwrap();
    assert!(
        error.contains("HTTP 500") && error.contains("2xx"),
        "{error}"
    );
}

#[tokio::test]
async fn asaas_counts_only_200() {
    let source = SourceConfig::new("asaas", ProviderId::Asaas, Vec::new());
    assert_eq!(
        source.success_policy(),
        SuccessPolicy::Only200,
        "the provider's rule"
    );
    let app = App::start(Answer::Status(201)).await;
    let only_200 = handler(&app.url("/"), source.success_policy());
    let result = run(&only_200, &delivery(), 1).await;
    assert!(!result.success, "201 is a failure for Asaas");
    assert!(result.record.error.unwrap().contains("only 200"));
    let result = run(
        &handler(&app.url("/"), SuccessPolicy::Any2xx),
        &delivery(),
        1,
    )
    .await;
    assert!(result.success, "…but any 2xx elsewhere");
    app.answer(Answer::Status(200));
    assert!(run(&only_200, &delivery(), 2).await.success);
}

#[tokio::test]
async fn an_app_that_never_answers_times_out() {
    let app = App::start(Answer::Hold).await;
    let slow = ForwardHandler::new(
        &app.url("/"),
        SuccessPolicy::Any2xx,
        Duration::from_millis(300),
    )
    .unwrap();
    let result = run(&slow, &delivery(), 1).await;
    assert!(!result.success);
    assert_eq!(result.record.status, None);
    let error = result.record.error.unwrap();
    assert!(error.contains("no answer within 300ms"), "{error}");
    assert!(result.record.duration_ms >= 300, "it waited the timeout");
}

#[tokio::test]
async fn an_app_that_is_down_is_a_failure_that_says_so() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let down = handler(&format!("http://127.0.0.1:{port}/"), SuccessPolicy::Any2xx);
    let result = run(&down, &delivery(), 1).await;
    assert!(!result.success);
    let error = result.record.error.unwrap();
    assert!(
        error.contains("could not reach") && error.to_lowercase().contains("refused"),
        "{error}"
    );
}
