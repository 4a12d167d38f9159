//! `POST /api/import` and `GET /api/deliveries/{id}/export` over a real loopback socket, a
//! real SQLite file and a real receiver: a Stripe event is signed now and recorded `valid`,
//! its HAR export reads back byte-exact and imports as a duplicate of the same event, and bad
//! files get a `{code, message}` that says what is wrong.

use super::api::DataState;
use super::*;
use crate::config::{Config, SourceConfig};
use crate::receiver::Receiver;
use hooklab_core::provider::ProviderId;
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::broadcast;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async fn fixture(dir: &std::path::Path) -> ControlServer {
    let store = Arc::new(SqliteStore::open(&dir.join("h.db")).unwrap());
    let (events, _) = broadcast::channel(1024);
    let config = Config {
        sources: vec![SourceConfig::new(
            "pay",
            ProviderId::Stripe,
            vec![Secret::new(SECRET)],
        )],
        ..Config::default()
    };
    let receiver = Receiver::new(
        &config,
        store.clone(),
        events.clone(),
        crate::clock::Clock::system(),
    )
    .unwrap();
    let data = DataState::new(store, events).with_receiver(
        receiver,
        "127.0.0.1:8787".parse().unwrap(),
        None,
    );
    let state = ControlState {
        data: Some(data),
        ..ControlState::default()
    };
    serve(0, state).await.unwrap()
}

/// `method path` with the token and `body`; (status, head, body).
async fn call(s: &ControlServer, method: &str, path: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut stream = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        s.addr.port(),
        s.token().expose(),
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, out[split + 4..].to_vec())
}

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).unwrap_or_default()
}

#[tokio::test]
async fn an_event_is_signed_recorded_exported_and_imported_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture(dir.path()).await;
    let event = b"{\n  \"id\": \"evt_api_1\",\n  \"object\": \"event\",\n  \"type\": \"charge.succeeded\"\n}\n";
    let (status, _, body) = call(&server, "POST", "/api/import", event).await;
    let answer = json(&body);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["format"], "event");
    let first = &answer["imported"][0];
    assert_eq!(
        (first["source"].as_str(), first["verdict"].as_str()),
        (Some("pay"), Some("valid")),
        "the Stripe shape picks the Stripe source, whose secret signs it now: {answer}"
    );
    let id = first["id"].as_i64().unwrap();

    let (status, head, har) = call(
        &server,
        "GET",
        &format!("/api/deliveries/{id}/export?format=har"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        head.contains(&format!("filename=\"delivery-{id}.har\"")),
        "{head}"
    );
    let requests = hooklab_core::capture::har::parse(&har).unwrap();
    assert_eq!(
        requests[0].body, event,
        "the HAR holds the event's exact bytes"
    );

    let (status, _, body) = call(&server, "POST", "/api/import?format=har", &har).await;
    let again = json(&body);
    assert_eq!(status, 200, "{again}");
    let second = &again["imported"][0];
    assert_eq!(
        second["verdict"], "valid",
        "signed a moment ago: still valid"
    );
    assert_eq!(
        (
            second["key"]["duplicate"].as_bool(),
            second["key"]["first_delivery"].as_i64()
        ),
        (Some(true), Some(id)),
        "the same event again is a duplicate, by the same idempotency key: {again}"
    );

    let (status, head, curl) = call(
        &server,
        "GET",
        &format!("/api/deliveries/{id}/export?format=curl"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    assert!(head.contains("text/plain"), "{head}");
    assert!(
        !String::from_utf8_lossy(&curl).contains(SECRET),
        "the source's secret is never exported"
    );
}

#[tokio::test]
async fn bad_files_and_parameters_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture(dir.path()).await;
    for (path, body, status, code, says) in [
        ("/api/import", &b"curl http://h/pay --data-binary @body.bin"[..], 422, "bad_capture", "body.bin"),
        ("/api/import", b"{\"hooklab_export\":1,\"schema_version\":4}\n", 422, "database_export", "new database"),
        ("/api/import", b"{\"hello\":1}", 422, "which_source", "pass `source`"),
        ("/api/import?source=nope", b"{\"hello\":1}", 422, "unknown_source", "nope"),
        ("/api/import?format=zip", b"x", 400, "bad_request", "unknown format"),
        ("/api/import", br#"{"log":{"entries":[{"request":{"method":"POST","url":"http://x/","postData":{}}}]}}"#, 422, "bad_capture", "HAR entry 1: postData has no text"),
    ] {
        let (got, _, answer) = call(&server, "POST", path, body).await;
        let answer = json(&answer);
        assert_eq!(got, status, "{path}: {answer}");
        assert_eq!(answer["code"], code, "{answer}");
        assert!(answer["message"].as_str().unwrap_or_default().contains(says), "{answer}");
    }
    let (status, _, _) = call(&server, "GET", "/api/deliveries/99/export?format=har", b"").await;
    assert_eq!(status, 404);
    let (status, _, _) = call(&server, "GET", "/api/deliveries/1/export?format=pdf", b"").await;
    assert_eq!(status, 400);
    let (status, _, _) = call(&server, "DELETE", "/api/import", b"").await;
    assert_eq!(status, 405);
}
