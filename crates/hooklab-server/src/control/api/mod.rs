//! The control API's data endpoints: everything the UI shows and does, read from and written
//! through the same [`Store`] and events bus the receiver uses (one core: nothing here
//! re-implements the pipeline). Every route runs behind the guard in `mod.rs`.
//!
//! - `GET /api/events?limit&before&source&verdict` — deliveries, newest first, with the id to
//!   page on (`next_before`).
//! - `GET /api/events/{id}` — one delivery, whole: headers in arrival order, the body (base64,
//!   and as text when it is UTF-8), the verdict with its diagnosis, metadata, attempts.
//! - `GET /api/events/{id}/raw` — the exact body bytes (`application/octet-stream`, never
//!   rendered by a browser).
//! - `GET /api/keys?status&duplicates&limit` — idempotency keys.
//! - `GET /api/objects?state&machine&limit`, `GET /api/objects/{id}/timeline`.
//! - `GET /api/dlq?source&limit`; `POST /api/dlq/redrive` and `POST /api/dlq/discard` with
//!   `{"jobs": [ids]}` or `{"all": true}`.
//! - `POST /api/inject` — copies of a recorded delivery (a race or one after another) with the
//!   idempotency oracle's verdict; `POST /api/scenario` — lab actions as a scenario file.
//! - `POST /api/import?format&source` — the body is a captured file (HAR, curl, raw HTTP,
//!   Hooklab JSON, or a provider's event, signed now with the source's secret); each request is
//!   recorded through the receiver. Answers the new deliveries' ids and verdicts.
//! - `GET /api/deliveries/{id}/export?format=har|curl|json|http` — one delivery, byte-exact, as
//!   a download.
//! - `GET /api/stream` — the events bus as Server-Sent Events, batched: at most one message
//!   every [`BATCH_EVERY`], each a JSON array, so a flood of deliveries never floods the UI.

use crate::config::SourceConfig;
use crate::events::Event;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{
    DeadLetterFilter, DeliveryFilter, DeliveryId, KeyFilter, KeyStatus, ObjectFilter, Store,
};
use hooklab_core::verdict::Status;
use http_body_util::BodyExt as _;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

mod capture;
mod lab;
mod records;
mod replay;
mod sources;
mod stream;

pub(super) use capture::Imported;
pub(super) use lab::{InjectAnswer, InjectRequest, ScenarioToml};
pub(super) use records::{DeliveryView, HeaderView, Page, Selection};
use records::{
    list_dlq, list_events, list_keys, list_objects, raw_body, resolve_dlq, show_event, timeline,
};
pub(super) use replay::{ReplayAnswer, ReplayRequest, SequenceAnswer, SequenceRequest};
pub(super) use sources::{SourceInput, SourceView, TemplateSet, TestEventRequest};
use sources::{
    change_source, delete_source, list_providers, list_sources, list_templates, test_event,
};
#[cfg(test)]
use stream::sse_message;
use stream::stream;

/// How often the stream sends what accumulated (one message per tick at most).
pub const BATCH_EVERY: Duration = Duration::from_millis(50);
/// The most events one stream message carries; beyond it the UI is told how many it missed.
const BATCH_MAX: usize = 2_000;
/// The most rows one listing returns.
const PAGE_MAX: u32 = 1_000;

/// What the data endpoints need from the running instance.
#[derive(Clone)]
pub struct DataState {
    pub store: Arc<dyn Store>,
    pub events: broadcast::Sender<Event>,
    /// Open `/api/stream` connections (a UI that is showing live data), for `/api/health`.
    pub streams: Arc<std::sync::atomic::AtomicUsize>,
    /// The running receiver: its sources (secrets included: they sign test events and never
    /// leave here), which the UI may change.
    pub receiver: Option<crate::receiver::Receiver>,
    /// The receiver's local address, where test events are sent.
    pub receiver_addr: Option<std::net::SocketAddr>,
    /// Where sources added in the UI are kept; `None`: sources cannot be changed from the UI.
    pub sources_file: Option<Arc<SourcesFile>>,
    /// The worker's routes: a source's forward target changed in the UI takes effect at once.
    pub forwarding: Option<crate::runtime::Forwarding>,
    /// Where the UI's own settings are kept; `None`: they are not kept.
    pub ui_settings_file: Option<Arc<UiSettingsFile>>,
}

/// The file of the UI's settings; the lock keeps two saves from interleaving.
#[derive(Debug)]
pub struct UiSettingsFile {
    path: std::path::PathBuf,
    lock: tokio::sync::Mutex<()>,
}

impl UiSettingsFile {
    pub fn new(path: std::path::PathBuf) -> Self {
        Self {
            path,
            lock: tokio::sync::Mutex::new(()),
        }
    }
}

/// The file of UI-managed sources, and which sources it holds (the others come from the
/// configuration file or `--source` flags and are read-only here).
#[derive(Debug)]
pub struct SourcesFile {
    path: std::path::PathBuf,
    managed: tokio::sync::Mutex<Vec<String>>,
}

impl SourcesFile {
    pub fn new(path: std::path::PathBuf, managed: Vec<String>) -> Self {
        Self {
            path,
            managed: tokio::sync::Mutex::new(managed),
        }
    }
}

impl DataState {
    pub fn new(store: Arc<dyn Store>, events: broadcast::Sender<Event>) -> Self {
        Self {
            store,
            events,
            streams: Arc::default(),
            receiver: None,
            receiver_addr: None,
            sources_file: None,
            forwarding: None,
            ui_settings_file: None,
        }
    }

    /// Keeping the UI's settings in `path` (`<db>.ui.json`).
    pub fn with_ui_settings(mut self, path: std::path::PathBuf) -> Self {
        self.ui_settings_file = Some(Arc::new(UiSettingsFile::new(path)));
        self
    }

    /// With the worker's routes, so sources' forward targets can be changed from the UI.
    pub fn with_forwarding(mut self, forwarding: crate::runtime::Forwarding) -> Self {
        self.forwarding = Some(forwarding);
        self
    }

    /// With the running receiver (for `/api/sources` and test events) and, when sources may be
    /// changed from the UI, the file that keeps them.
    pub fn with_receiver(
        mut self,
        receiver: crate::receiver::Receiver,
        addr: std::net::SocketAddr,
        sources_file: Option<SourcesFile>,
    ) -> Self {
        self.receiver = Some(receiver);
        self.receiver_addr = Some(addr);
        self.sources_file = sources_file.map(Arc::new);
        self
    }

    fn source_configs(&self) -> Vec<SourceConfig> {
        self.receiver
            .as_ref()
            .map(crate::receiver::Receiver::source_configs)
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for DataState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataState").finish_non_exhaustive()
    }
}

/// The response for `req` when it names a data endpoint; the request back for any other path.
pub(super) async fn route(data: &DataState, req: Request) -> Result<Response, Request> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let method = req.method().clone();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let response = match (&method, segments.as_slice()) {
        (&Method::GET, ["api", "events"]) => list_events(data, &query).await,
        (&Method::GET, ["api", "events", id]) => show_event(data, id).await,
        (&Method::GET, ["api", "events", id, "raw"]) => raw_body(data, id).await,
        (&Method::GET, ["api", "diff"]) => records::diff(data, &query).await,
        (&Method::GET, ["api", "keys"]) => list_keys(data, &query).await,
        (&Method::GET, ["api", "objects"]) => list_objects(data, &query).await,
        (&Method::GET, ["api", "objects", id, "timeline"]) => timeline(data, id).await,
        (&Method::GET, ["api", "dlq"]) => list_dlq(data, &query).await,
        (&Method::POST, ["api", "dlq", action @ ("redrive" | "discard")]) => {
            let redrive = *action == "redrive";
            resolve_dlq(data, req, redrive).await
        }
        (&Method::GET, ["api", "stream"]) => stream(data),
        (&Method::GET, ["api", "sources"]) => list_sources(data).await,
        (&Method::POST, ["api", "sources"]) => change_source(data, req, None).await,
        (&Method::PUT, ["api", "sources", name]) => {
            let name = decode(name);
            change_source(data, req, Some(&name)).await
        }
        (&Method::DELETE, ["api", "sources", name]) => delete_source(data, &decode(name)).await,
        (&Method::GET, ["api", "ui-settings"]) => ui_settings(data).await,
        (&Method::PUT, ["api", "ui-settings"]) => save_ui_settings(data, req).await,
        (&Method::GET, ["api", "providers"]) => list_providers().await,
        (&Method::GET, ["api", "templates"]) => list_templates().await,
        (&Method::POST, ["api", "import"]) => capture::import(data, &query, req).await,
        (&Method::GET, ["api", "deliveries", id, "export"]) => {
            capture::export(data, id, &query).await
        }
        (&Method::POST, ["api", "test-event"]) => test_event(data, req).await,
        (&Method::POST, ["api", "inject"]) => lab::inject(data, req).await,
        (&Method::POST, ["api", "events", id, "replay"]) => {
            let id = id.to_string();
            replay::replay(data, &id, req).await
        }
        (&Method::POST, ["api", "sequence"]) => replay::sequence(data, req).await,
        (&Method::POST, ["api", "scenario"]) => lab::scenario(req).await,
        (
            _,
            [
                "api",
                "events" | "keys" | "objects" | "dlq" | "stream" | "sources" | "test-event"
                | "diff" | "templates" | "inject" | "scenario" | "import" | "deliveries"
                | "sequence" | "ui-settings",
                ..,
            ],
        ) => Err(Problem::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this endpoint does not take that method",
        )),
        _ => return Err(req),
    };
    Ok(response.unwrap_or_else(Problem::into_response))
}

/// An error answer: `{"code", "message"}` with a status.
struct Problem {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Problem {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such {what}"),
        )
    }

    fn store(e: &hooklab_core::store::StoreError) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string())
    }

    fn into_response(self) -> Response {
        super::error(self.status, self.code, &self.message)
    }
}

type Answer = Result<Response, Problem>;

fn ok(value: &impl Serialize) -> Answer {
    Ok(super::json(StatusCode::OK, value))
}

/// `key=value&…` pairs, percent-decoded.
fn params(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'+', _, _) => out.push(b' '),
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 2;
            }
            (b, _, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

fn number<T: std::str::FromStr>(
    params: &[(String, String)],
    name: &str,
) -> Result<Option<T>, Problem> {
    param(params, name)
        .map(|v| {
            v.parse()
                .map_err(|_| Problem::bad(format!("`{name}` must be a number, not `{v}`")))
        })
        .transpose()
}

fn limit(params: &[(String, String)], default: u32) -> Result<u32, Problem> {
    Ok(number::<u32>(params, "limit")?
        .unwrap_or(default)
        .clamp(1, PAGE_MAX))
}

/// The request's JSON body as a `T`; a 400 that starts with `expected` when it is not one.
/// The UI's settings: the saved ones, else the defaults.
async fn ui_settings(data: &DataState) -> Answer {
    use crate::config::ui_settings;
    let Some(file) = &data.ui_settings_file else {
        return ok(&ui_settings::UiSettings::default());
    };
    let _saving = file.lock.lock().await;
    let settings = ui_settings::load(&file.path)
        .map_err(|e| Problem::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e))?;
    ok(&settings)
}

/// Replaces the UI's settings and answers with them.
async fn save_ui_settings(data: &DataState, req: Request) -> Answer {
    use crate::config::ui_settings;
    let settings: ui_settings::UiSettings =
        read_json(req, "expected {\"theme\": \"auto\" | \"light\" | \"dark\"}").await?;
    let Some(file) = &data.ui_settings_file else {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "not_kept",
            "this instance keeps no UI settings (it has no database file to keep them beside)",
        ));
    };
    let _saving = file.lock.lock().await;
    ui_settings::save(&file.path, &settings).map_err(|e| {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage",
            format!("could not save {} ({e})", file.path.display()),
        )
    })?;
    ok(&settings)
}

async fn read_json<T: serde::de::DeserializeOwned>(
    req: Request,
    expected: &str,
) -> Result<T, Problem> {
    let body = req
        .into_body()
        .collect()
        .await
        .map_err(|_| Problem::bad("the request body could not be read"))?
        .to_bytes();
    serde_json::from_slice(&body).map_err(|e| Problem::bad(format!("{expected}: {e}")))
}

/// Delivery `id`, whole; a 404 when there is none.
async fn load_delivery(
    data: &DataState,
    id: DeliveryId,
) -> Result<hooklab_core::store::Delivery, Problem> {
    data.store
        .get(id)
        .await
        .map_err(|e| Problem::store(&e))?
        .ok_or_else(|| Problem::not_found("delivery"))
}

/// A boolean query parameter: `true` or `1`.
fn flag(params: &[(String, String)], name: &str) -> bool {
    matches!(param(params, name), Some("true" | "1"))
}

fn id(text: &str) -> Result<DeliveryId, Problem> {
    text.parse()
        .map_err(|_| Problem::bad(format!("`{text}` is not a delivery id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_are_decoded_and_bad_numbers_refused() {
        let p = params("source=my%20src&verdict=valid&before=12&q=a+b&empty=");
        assert_eq!(param(&p, "source"), Some("my src"));
        assert_eq!(param(&p, "q"), Some("a b"));
        assert_eq!(param(&p, "empty"), None);
        assert_eq!(number::<i64>(&p, "before").ok().flatten(), Some(12));
        let bad = params("before=abc");
        assert!(number::<i64>(&bad, "before").is_err());
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%41%42"), "AB");
    }

    #[test]
    fn stream_messages_are_one_sse_event_of_one_json_line() {
        let message = sse_message(&[], 3);
        let text = std::str::from_utf8(&message).unwrap();
        assert!(text.starts_with("event: batch\ndata: {"));
        assert!(text.ends_with("\n\n"));
        assert_eq!(text.matches('\n').count(), 3, "{text}");
        assert!(text.contains("\"missed\":3"));
    }
}
