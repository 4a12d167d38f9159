//! The data endpoints over a real loopback socket and a real SQLite file: listing and paging,
//! one delivery whole, the raw body, the DLQ's request validation, and the batched stream.

use super::api::DataState;
use super::*;
use crate::events::{DeliveryEvent, Event};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::request::Header;
use hooklab_core::store::{NewDelivery, Store, sqlite::SqliteStore};
use hooklab_core::verdict::Verdict;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::broadcast;

pub(super) fn delivery(i: u8, body: &[u8]) -> NewDelivery {
    NewDelivery {
        received_at: UnixMillis(1_700_000_000_000 + i64::from(i)),
        source: "stripe".into(),
        provider: None,
        method: "POST".into(),
        path: "/stripe".into(),
        query: None,
        headers: vec![
            Header::new("X-Second", "b"),
            Header::new("X-First", "a"),
            Header::new("X-Bytes", vec![0xff, 0x00]),
        ],
        body: body.to_vec(),
        body_size: body.len() as u64,
        body_refused: false,
        remote_addr: None,
        verdict: Verdict::not_verified("test"),
        metadata: Metadata {
            event_id: Some(format!("evt_{i}")),
            ..Metadata::default()
        },
        response_status: 200,
        idempotency: None,
        enqueue: false,
    }
}

pub(super) struct Fixture {
    pub(super) server: ControlServer,
    pub(super) events: broadcast::Sender<Event>,
    pub(super) _dir: tempfile::TempDir,
}

pub(super) async fn fixture(n: u8) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
    for i in 1..=n {
        store.record(delivery(i, &[b'x', i, 0xff])).await.unwrap();
    }
    let (events, _) = broadcast::channel(1024);
    let state = ControlState {
        data: Some(DataState::new(store, events.clone())),
        ..ControlState::default()
    };
    Fixture {
        server: serve(0, state).await.unwrap(),
        events,
        _dir: dir,
    }
}

/// `method path` with the token (and `body`); returns (status, headers, body bytes).
pub(super) async fn call(
    f: &Fixture,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String, Vec<u8>) {
    let addr = f.server.addr;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr.port(),
        f.server.token().expose(),
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, out[split + 4..].to_vec())
}

async fn json(f: &Fixture, path: &str) -> (u16, serde_json::Value) {
    let (status, _, body) = call(f, "GET", path, "").await;
    (status, serde_json::from_slice(&body).unwrap_or_default())
}

#[tokio::test]
async fn events_list_newest_first_and_page_with_next_before() {
    let f = fixture(5).await;
    let (status, page) = json(&f, "/api/events?limit=2").await;
    assert_eq!(status, 200, "{page}");
    let ids: Vec<i64> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [5, 4]);
    assert_eq!(page["next_before"], 4);
    let (_, page) = json(&f, "/api/events?limit=2&before=4").await;
    assert_eq!(page["items"][0]["id"], 3);
    let (_, last) = json(&f, "/api/events?limit=10&before=2").await;
    assert_eq!(last["items"].as_array().unwrap().len(), 1);
    assert_eq!(
        last["next_before"],
        serde_json::Value::Null,
        "the last page says so"
    );
    let (status, bad) = json(&f, "/api/events?verdict=maybe").await;
    assert_eq!((status, bad["code"].as_str()), (400, Some("bad_request")));
    let (status, bad) = json(&f, "/api/events?before=x").await;
    assert_eq!(status, 400, "{bad}");
}

#[tokio::test]
async fn one_event_whole_and_its_exact_raw_body() {
    let f = fixture(2).await;
    let (status, d) = json(&f, "/api/events/2").await;
    assert_eq!(status, 200, "{d}");
    let names: Vec<&str> = d["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["X-Second", "X-First", "X-Bytes"], "arrival order");
    assert_eq!(
        d["headers"][2]["value_base64"], "/wA=",
        "non-UTF-8 values keep their bytes"
    );
    assert_eq!(d["body_base64"], "eAL/");
    assert_eq!(
        d["body_text"],
        serde_json::Value::Null,
        "not UTF-8: no text"
    );
    assert_eq!(d["verdict"]["verdict"], "unsigned");
    assert_eq!(d["metadata"]["event_id"], "evt_2");

    let (status, head, body) = call(&f, "GET", "/api/events/2/raw", "").await;
    assert_eq!(status, 200);
    assert_eq!(body, [b'x', 2, 0xff], "byte-exact");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("content-type: application/octet-stream"),
        "{head}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");

    assert_eq!(json(&f, "/api/events/99").await.0, 404);
    assert_eq!(json(&f, "/api/events/abc").await.0, 400);
}

#[tokio::test]
async fn dlq_actions_need_a_selection_and_wrong_methods_are_refused() {
    let f = fixture(0).await;
    for body in [
        "",
        "{}",
        "{\"jobs\": []}",
        "{\"all\": true, \"jobs\": [1]}",
        "{\"nope\": 1}",
    ] {
        let (status, _, out) = call(&f, "POST", "/api/dlq/redrive", body).await;
        assert_eq!(status, 400, "{body} → {}", String::from_utf8_lossy(&out));
    }
    let (status, _, out) = call(&f, "POST", "/api/dlq/discard", "{\"all\": true}").await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&out));
    let done: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(done["discarded"], 0);
    assert_eq!(call(&f, "DELETE", "/api/events", "").await.0, 405);
    let (status, dlq) = json(&f, "/api/dlq").await;
    assert_eq!((status, dlq), (200, serde_json::json!([])));
}

#[tokio::test]
async fn the_stream_batches_bus_events_as_server_sent_events() {
    let f = fixture(0).await;
    let addr = f.server.addr;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\r\n",
        addr.port(),
        f.server.token().expose()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    // Wait for the stream to open (its first comment), then publish a burst.
    while !String::from_utf8_lossy(&seen).contains(": open") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream closed early");
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&seen).contains("text/event-stream"));
    let summary = |id| hooklab_core::store::DeliverySummary {
        id,
        received_at: UnixMillis(1),
        source: "s".into(),
        provider: None,
        method: "POST".into(),
        path: "/s".into(),
        query: None,
        verdict: hooklab_core::verdict::Status::Valid,
        reason: None,
        event_id: None,
        event_type: None,
        response_status: 200,
        body_size: 0,
        idempotency_key: None,
        duplicate_of: None,
    };
    for id in 1..=100 {
        f.events
            .send(Event::Delivery(DeliveryEvent {
                delivery: summary(id),
                verdict_summary: String::new(),
                diagnosis: None,
                body_refused: false,
                remote_addr: None,
                key: None,
            }))
            .unwrap();
    }
    let mut ids = Vec::new();
    let mut messages = 0;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while ids.len() < 100 && tokio::time::Instant::now() < deadline {
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).into_owned();
        // Whole messages only (a read may end mid-message).
        let text = &text[..text.rfind("\n\n").map_or(0, |end| end + 2)];
        ids.clear();
        messages = 0;
        for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
            messages += 1;
            let batch: serde_json::Value = serde_json::from_str(line).unwrap();
            for e in batch["events"].as_array().unwrap() {
                ids.push(e["delivery"]["id"].as_i64().unwrap());
            }
        }
    }
    assert_eq!(ids, (1..=100).collect::<Vec<_>>(), "every event, in order");
    assert!(messages < 10, "batched: {messages} messages for 100 events");
}

#[tokio::test]
async fn test_events_need_a_known_source_and_sources_never_show_secrets() {
    let f = fixture(0).await;
    let (status, sources) = json(&f, "/api/sources").await;
    assert_eq!((status, sources), (200, serde_json::json!([])));
    let (status, _, out) = call(&f, "POST", "/api/test-event", "{\"source\": \"nope\"}").await;
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&out));
    let (status, _, _) = call(&f, "POST", "/api/test-event", "{\"src\": 1}").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn ui_settings_are_kept_beside_the_database_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let file = crate::config::ui_settings::path_beside(&db);
    let store = Arc::new(SqliteStore::open(&db).unwrap());
    let (events, _) = broadcast::channel(16);
    let state = ControlState {
        data: Some(DataState::new(store, events.clone()).with_ui_settings(file.clone())),
        ..ControlState::default()
    };
    let f = Fixture {
        server: serve(0, state).await.unwrap(),
        events,
        _dir: dir,
    };
    // Nothing saved yet: the defaults.
    let (status, settings) = json(&f, "/api/ui-settings").await;
    assert_eq!(
        (status, settings),
        (200, serde_json::json!({"theme": "auto"}))
    );
    assert!(!file.exists());

    let (status, _, out) = call(&f, "PUT", "/api/ui-settings", "{\"theme\": \"dark\"}").await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&out));
    let (_, settings) = json(&f, "/api/ui-settings").await;
    assert_eq!(settings, serde_json::json!({"theme": "dark"}));
    assert_eq!(
        crate::config::ui_settings::load(&file),
        Ok(crate::config::ui_settings::UiSettings {
            theme: crate::config::ui_settings::Theme::Dark
        })
    );

    // A value the UI does not know, or an unknown field, changes nothing.
    for bad in [
        "{\"theme\": \"purple\"}",
        "{\"theme\": \"dark\", \"font\": 3}",
        "dark",
    ] {
        let (status, _, out) = call(&f, "PUT", "/api/ui-settings", bad).await;
        assert_eq!(status, 400, "{bad}: {}", String::from_utf8_lossy(&out));
    }
    let (_, settings) = json(&f, "/api/ui-settings").await;
    assert_eq!(settings, serde_json::json!({"theme": "dark"}));
    let (status, _, _) = call(&f, "DELETE", "/api/ui-settings", "").await;
    assert_eq!(status, 405);
}

#[tokio::test]
async fn without_a_settings_file_the_ui_gets_the_defaults_and_a_save_is_refused() {
    let f = fixture(0).await;
    let (status, settings) = json(&f, "/api/ui-settings").await;
    assert_eq!(
        (status, settings),
        (200, serde_json::json!({"theme": "auto"}))
    );
    let (status, _, out) = call(&f, "PUT", "/api/ui-settings", "{\"theme\": \"light\"}").await;
    assert_eq!(status, 409);
    assert!(String::from_utf8_lossy(&out).contains("not_kept"));
}
