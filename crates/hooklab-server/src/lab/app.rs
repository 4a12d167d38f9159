//! A small, real webhook handler to try the lab on (`hooklab-bench app-server --mode …`, and
//! the lab's own tests). Every `POST` is an event whose *side effect* (say, crediting an
//! order) is counted; `GET /count` answers `{"count": n, "keys": k}` — the probe the
//! idempotency oracle reads. Three handlers, three behaviours:
//!
//! - [`AppMode::Idempotent`] claims the event's key atomically before acting: one side effect
//!   per key however the copies arrive, and the same answer to every copy;
//! - [`AppMode::Naive`] acts on every request (optionally answering copies of a key it has
//!   seen with an error status, like a unique constraint tripping after the side effect, or
//!   with a different body);
//! - [`AppMode::Racy`] checks "seen?" and then acts: right for copies one after another, wrong
//!   for copies that arrive together — what a concurrent race exposes.
//!
//! The key is the first of `Idempotency-Key`, `webhook-id`, `svix-id`, `X-GitHub-Delivery`
//! headers, else the body's `id`, `event_id` or `notification_id`, else the body's hash.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::Digest as _;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How the handler treats copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppMode {
    Idempotent,
    Naive,
    Racy,
}

impl std::str::FromStr for AppMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "idempotent" => Ok(Self::Idempotent),
            "naive" => Ok(Self::Naive),
            "racy" => Ok(Self::Racy),
            other => Err(format!(
                "unknown mode `{other}` (one of: idempotent, naive, racy)"
            )),
        }
    }
}

/// The handler's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppOptions {
    pub mode: AppMode,
    /// How long the side effect takes (the window a race slips through in `racy`).
    pub work: Duration,
    /// `naive`: the status answered to copies of a key already seen (default 200).
    pub duplicate_status: Option<u16>,
    /// `naive`: number each answer, so copies get different bodies.
    pub vary_body: bool,
}

impl AppOptions {
    pub fn new(mode: AppMode) -> Self {
        Self {
            mode,
            work: Duration::from_millis(20),
            duplicate_status: None,
            vary_body: false,
        }
    }
}

#[derive(Default)]
struct Ledger {
    /// Keys whose side effect ran (or, in `idempotent`, is running).
    seen: HashSet<String>,
    /// Side effects so far.
    count: u64,
}

#[derive(Clone)]
struct AppState {
    options: AppOptions,
    ledger: Arc<Mutex<Ledger>>,
}

impl AppState {
    fn with_ledger<T>(&self, f: impl FnOnce(&mut Ledger) -> T) -> T {
        f(&mut self.ledger.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The app: `GET /count`, and every other request is an event.
pub fn router(options: AppOptions) -> Router {
    let state = AppState {
        options,
        ledger: Arc::default(),
    };
    Router::new()
        .route("/count", get(count))
        .fallback(event)
        .with_state(state)
}

/// Serves the app on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    options: AppOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(options))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn count(State(app): State<AppState>) -> Response {
    let (count, keys) = app.with_ledger(|l| (l.count, l.seen.len()));
    json(
        StatusCode::OK,
        &serde_json::json!({"count": count, "keys": keys}),
    )
}

async fn event(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let key = key_of(&headers, &body);
    let work = app.options.work;
    let accepted = || json(StatusCode::OK, &serde_json::json!({"received": true}));
    match app.options.mode {
        AppMode::Idempotent => {
            let first = app.with_ledger(|l| {
                let first = l.seen.insert(key);
                if first {
                    l.count += 1;
                }
                first
            });
            if first {
                tokio::time::sleep(work).await;
            }
            accepted()
        }
        AppMode::Racy => {
            let seen = app.with_ledger(|l| l.seen.contains(&key));
            if !seen {
                tokio::time::sleep(work).await; // the window between the check and the act
                app.with_ledger(|l| {
                    l.seen.insert(key);
                    l.count += 1;
                });
            }
            accepted()
        }
        AppMode::Naive => {
            let (n, repeat) = app.with_ledger(|l| {
                l.count += 1;
                (l.count, !l.seen.insert(key))
            });
            tokio::time::sleep(work).await;
            match app.options.duplicate_status {
                Some(status) if repeat => json(
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    &serde_json::json!({"error": "duplicate key value violates unique constraint"}),
                ),
                _ if app.options.vary_body => json(
                    StatusCode::OK,
                    &serde_json::json!({"received": true, "charge": n}),
                ),
                _ => accepted(),
            }
        }
    }
}

/// The event's idempotency key.
fn key_of(headers: &HeaderMap, body: &[u8]) -> String {
    for name in [
        "idempotency-key",
        "webhook-id",
        "svix-id",
        "x-github-delivery",
    ] {
        if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) {
            return format!("{name}:{value}");
        }
    }
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    for field in ["id", "event_id", "notification_id"] {
        match parsed.as_ref().and_then(|b| b.get(field)) {
            Some(serde_json::Value::String(s)) => return format!("{field}:{s}"),
            Some(n @ serde_json::Value::Number(_)) => return format!("{field}:{n}"),
            _ => {}
        }
    }
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(body)))
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inject::{Mode, send_copies};

    /// Starts the app on a free port; its base URL.
    async fn start(options: AppOptions) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, options, std::future::pending()));
        format!("127.0.0.1:{}", addr.port())
    }

    fn event_bytes(addr: &str, id: &str) -> Vec<u8> {
        let body = format!(r#"{{"id":"{id}","type":"payment_intent.succeeded"}}"#);
        format!(
            "POST /hook HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    async fn count(addr: &str) -> u64 {
        let target = crate::lab::Target::parse(&format!("http://{addr}/count")).unwrap();
        crate::lab::oracle::read_probe(&target).await.unwrap()
    }

    #[tokio::test]
    async fn each_mode_counts_a_race_and_a_replay_as_it_should() {
        let race = Mode::Concurrent;
        let one_by_one = Mode::Sequential {
            interval: Duration::ZERO,
        };
        for (mode, race_count, sequential_count) in [
            (AppMode::Idempotent, 1, 1),
            (AppMode::Naive, 10, 5),
            (AppMode::Racy, 10, 1),
        ] {
            let mut options = AppOptions::new(mode);
            options.work = Duration::from_millis(50);
            let addr = start(options).await;
            let results = send_copies(&addr, &event_bytes(&addr, "evt_race"), 10, race).await;
            assert!(results.iter().all(|r| r.status == Some(200)), "{mode:?}");
            assert_eq!(count(&addr).await, race_count, "{mode:?}: a race of 10");
            let results = send_copies(&addr, &event_bytes(&addr, "evt_seq"), 5, one_by_one).await;
            assert!(results.iter().all(|r| r.status == Some(200)), "{mode:?}");
            assert_eq!(
                count(&addr).await,
                race_count + sequential_count,
                "{mode:?}: then 5 copies one after another"
            );
        }
    }

    #[tokio::test]
    async fn a_naive_app_can_answer_copies_with_an_error_or_another_body() {
        let mut options = AppOptions::new(AppMode::Naive);
        options.work = Duration::ZERO;
        options.duplicate_status = Some(500);
        let addr = start(options).await;
        let one_by_one = Mode::Sequential {
            interval: Duration::ZERO,
        };
        let results = send_copies(&addr, &event_bytes(&addr, "evt_1"), 3, one_by_one).await;
        let statuses: Vec<_> = results.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [Some(200), Some(500), Some(500)]);

        options.duplicate_status = None;
        options.vary_body = true;
        let addr = start(options).await;
        let results = send_copies(&addr, &event_bytes(&addr, "evt_1"), 2, one_by_one).await;
        assert_ne!(results[0].body_sha256, results[1].body_sha256);
    }

    #[test]
    fn keys_come_from_headers_then_the_body_then_its_hash() {
        let mut headers = HeaderMap::new();
        assert_eq!(key_of(&headers, br#"{"id":"evt_1"}"#), "id:evt_1");
        assert_eq!(key_of(&headers, br#"{"id":12}"#), "id:12");
        assert_eq!(key_of(&headers, br#"{"event_id":"e"}"#), "event_id:e");
        assert!(key_of(&headers, b"not json").starts_with("sha256:"));
        headers.insert("webhook-id", "msg_1".parse().unwrap());
        assert_eq!(key_of(&headers, br#"{"id":"evt_1"}"#), "webhook-id:msg_1");
    }
}
