//! The receiver and the worker together (`runtime::start` with a forward target): a verified
//! delivery is enqueued with its key `processing`, forwarded, and its key `completed`; a forged
//! one is recorded but never forwarded; duplicates are not forwarded again.

use crate::support::*;
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, ProviderId, SignInput};
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{KeyStatus, Store};
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::events::{AttemptOutcome, Event};
use hooklab_server::runtime;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SECRET: &str = "whsec_pipeline_e2e";

/// POSTs `body` to `/pay` with `headers`; returns the status line's code.
async fn post(addr: std::net::SocketAddr, headers: &[(String, Vec<u8>)], body: &[u8]) -> u16 {
    let mut request =
        b"POST /pay?via=test HTTP/1.1\r\nHost: hooklab.test\r\nConnection: close\r\n".to_vec();
    for (name, value) in headers {
        request.extend_from_slice(format!("{name}: ").as_bytes());
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(body);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn signed(body: &[u8]) -> Vec<(String, Vec<u8>)> {
    provider::sign(
        ProviderId::Stripe,
        &Default::default(),
        &Secret::new(SECRET),
        &SignInput::new(body, UnixMillis::now()),
    )
    .unwrap()
    .headers_as_pairs()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_deliveries_are_forwarded_once_and_their_keys_completed() {
    let app = App::start(Answer::Status(204)).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).unwrap());
    let mut config = Config {
        port: 0,
        forward_to: Some(app.url("/webhooks")),
        ..Config::default()
    };
    config.sources.push(SourceConfig::new(
        "pay",
        ProviderId::Stripe,
        vec![Secret::new(SECRET)],
    ));
    let running = runtime::start(config, sqlite.clone() as Arc<dyn Store>)
        .await
        .unwrap();
    let mut events = running.subscribe();

    let body = br#"{"id":"evt_e2e","type":"charge.succeeded","data":{"object":{"id":"ch_1"}}}"#;
    assert_eq!(post(running.addr, &signed(body), body).await, 200);
    app.wait_for_hits(1).await;
    let done = loop {
        match tokio::time::timeout(PATIENCE, events.recv()).await {
            Ok(Ok(Event::Attempt(a))) => break a,
            Ok(Ok(_)) => continue,
            other => panic!("no attempt announced: {other:?}"),
        }
    };
    assert_eq!(
        (done.outcome, done.status, done.attempt),
        (AttemptOutcome::Done, Some(204), 1)
    );
    let seen = &app.seen()[0];
    assert_eq!(seen.body, body, "byte-exact");
    assert_eq!(
        seen.target, "/webhooks?via=test",
        "the target plus the query"
    );
    assert!(
        seen.header("stripe-signature").is_some(),
        "the app can verify the signature"
    );
    assert_eq!(
        key_status(sqlite.as_ref(), "evt_e2e").await,
        KeyStatus::Completed
    );
    let attempts = sqlite.attempts(done.delivery).await.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].record.status, Some(204));

    // A duplicate is acknowledged and recorded, but not forwarded again.
    assert_eq!(post(running.addr, &signed(body), body).await, 200);
    // A forgery is recorded but never reaches the app.
    let forged = br#"{"id":"evt_forged","type":"charge.succeeded"}"#;
    let wrong = vec![("Stripe-Signature".to_string(), b"t=1,v1=00".to_vec())];
    assert_eq!(post(running.addr, &wrong, forged).await, 200);
    // An unrelated, genuine event after them is forwarded: when it arrives, the two before it
    // have long been committed without a job.
    let later = br#"{"id":"evt_later","type":"charge.succeeded"}"#;
    assert_eq!(post(running.addr, &signed(later), later).await, 200);
    app.wait_for_hits(2).await;
    running.shutdown().await.unwrap();
    let ids: Vec<_> = app
        .seen()
        .iter()
        .map(|s| String::from_utf8_lossy(&s.body).into_owned())
        .collect();
    assert_eq!(
        ids.len(),
        2,
        "the duplicate and the forgery were not forwarded: {ids:?}"
    );
    assert!(ids[1].contains("evt_later"));
    let keys = sqlite.keys(Default::default()).await.unwrap();
    assert!(
        keys.iter().all(|k| k.key != "evt_forged"),
        "a forgery claims no key"
    );
}
