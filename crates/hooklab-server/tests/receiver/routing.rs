//! Routing and responses: the first path segment picks the source; unknown ones are recorded
//! and answered 404 without listing what exists; a source's configured response is honoured.

use crate::support::{self, request};
use hooklab_core::verdict::{Reason, Status};
use std::time::{Duration, Instant};

#[tokio::test]
async fn an_unknown_source_is_recorded_and_answered_404() {
    let mut server = support::start(support::config()).await;
    let response = server
        .send(&request("POST", "/nope/x?y=1", &[], b"lost?"))
        .await;
    assert_eq!(response.status, 404);
    let text = response.text();
    assert!(
        text.contains("no source") && text.contains("recorded"),
        "{text}"
    );
    assert!(
        !text.contains("stripe") && !text.contains("plain"),
        "never list sources: {text}"
    );

    let d = server.next_delivery().await;
    assert_eq!(
        d.record.source, "nope",
        "the name is kept even though unknown"
    );
    assert_eq!(d.record.provider, None);
    assert_eq!(d.record.body, b"lost?", "the body is kept for debugging");
    assert_eq!(d.record.verdict.verdict, Status::Unsigned);
    assert_eq!(d.record.verdict.reason, Some(Reason::NotVerified));
    assert_eq!(d.record.response_status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn the_root_path_is_recorded_and_answered_404() {
    let mut server = support::start(support::config()).await;
    let response = server.send(&request("GET", "/", &[], b"")).await;
    assert_eq!(response.status, 404);
    let d = server.next_delivery().await;
    assert_eq!(
        (d.record.source.as_str(), d.record.path.as_str()),
        ("", "/")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_query_string_is_recorded_as_sent() {
    let mut server = support::start(support::config()).await;
    let target = "/plain/hook?b=2&a=%20x+y&a=&=&%ZZ";
    assert_eq!(
        server.send(&request("POST", target, &[], b"")).await.status,
        200
    );
    let d = server.next_delivery().await;
    assert_eq!(d.record.query.as_deref(), Some("b=2&a=%20x+y&a=&=&%ZZ"));
    assert_eq!(d.record.path, "/plain/hook");
    server.shutdown().await;
}

#[tokio::test]
async fn the_configured_status_headers_body_and_delay_are_honoured() {
    let mut config = support::config();
    let response = &mut config.sources[1].response;
    response.status = 202;
    response.headers = vec![
        ("Content-Type".into(), "application/json".into()),
        ("X-Twice".into(), "1".into()),
        ("X-Twice".into(), "2".into()),
    ];
    response.body = r#"{"received":true}"#.into();
    response.delay_ms = 300;
    let mut server = support::start(config).await;

    let started = Instant::now();
    let response = server.send(&request("POST", "/plain", &[], b"{}")).await;
    let elapsed = started.elapsed();
    assert_eq!(response.status, 202);
    assert_eq!(response.text(), r#"{"received":true}"#);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let twice: Vec<&str> = response
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("x-twice"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(twice, ["1", "2"], "repeated headers are all sent, in order");
    assert!(
        elapsed >= Duration::from_millis(300),
        "the delay is applied: {elapsed:?}"
    );
    assert_eq!(server.next_delivery().await.record.response_status, 202);
    server.shutdown().await;
}

#[tokio::test]
async fn the_router_works_without_the_tap_using_header_map_order() {
    use axum::body::Body;
    use axum::http::Request;
    use hooklab_core::store::sqlite::SqliteStore;
    use hooklab_server::clock::Clock;
    use hooklab_server::receiver::Receiver;
    use std::sync::Arc;
    use tower::ServiceExt;

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
    let (events, mut rx) = tokio::sync::broadcast::channel(8);
    let receiver = Receiver::new(
        &support::config(),
        store.clone(),
        events,
        Clock::fixed(support::NOW),
    )
    .unwrap();
    let request = Request::post("/plain/x")
        .header("X-A", "1")
        .header("X-B", "2")
        .header("X-A", "3")
        .body(Body::from("hi"))
        .unwrap();
    let response = receiver.router().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let hooklab_server::events::Event::Delivery(event) = rx.recv().await.unwrap() else {
        panic!("a delivery event")
    };
    let d = hooklab_core::store::Store::get(store.as_ref(), event.delivery.id)
        .await
        .unwrap()
        .unwrap();
    let names: Vec<(&str, &[u8])> = d
        .record
        .headers
        .iter()
        .map(|h| (h.name.as_str(), h.value.as_slice()))
        .collect();
    assert_eq!(
        names,
        [("x-a", &b"1"[..]), ("x-a", b"3"), ("x-b", b"2")],
        "no tap: the HeaderMap's grouping and lowercase are all there is"
    );
    assert_eq!(
        d.record.remote_addr, None,
        "no connection info without a socket"
    );
}
