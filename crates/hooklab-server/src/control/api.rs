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
        }
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

/// Counts one open stream while it lives.
struct StreamGuard(Arc<std::sync::atomic::AtomicUsize>);

impl StreamGuard {
    fn new(count: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self(Arc::clone(count))
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
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
        (&Method::GET, ["api", "providers"]) => list_providers().await,
        (&Method::POST, ["api", "test-event"]) => test_event(data, req).await,
        (
            _,
            [
                "api",
                "events" | "keys" | "objects" | "dlq" | "stream" | "sources" | "test-event",
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

fn id(text: &str) -> Result<DeliveryId, Problem> {
    text.parse()
        .map_err(|_| Problem::bad(format!("`{text}` is not a delivery id")))
}

#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct Page<T> {
    items: Vec<T>,
    /// Pass as `before` for the next (older) page; `null` on the last page.
    next_before: Option<DeliveryId>,
}

async fn list_events(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let limit = limit(&p, 200)?;
    let verdict = match param(&p, "verdict") {
        None => None,
        Some("valid") => Some(Status::Valid),
        Some("invalid") => Some(Status::Invalid),
        Some("unsigned") => Some(Status::Unsigned),
        Some(other) => {
            return Err(Problem::bad(format!(
                "`verdict` is valid, invalid or unsigned, not `{other}`"
            )));
        }
    };
    let filter = DeliveryFilter {
        limit: Some(limit),
        source: param(&p, "source").map(str::to_string),
        verdict,
        before: number(&p, "before")?,
    };
    let items = data
        .store
        .list(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    let next_before = (items.len() == limit as usize)
        .then(|| items.last().map(|d| d.id))
        .flatten();
    ok(&Page { items, next_before })
}

/// One header as the UI shows it: the value as text (lossy) and, when it is not UTF-8, its
/// exact bytes in base64.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct HeaderView {
    name: String,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_base64: Option<String>,
}

/// One delivery, whole.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct DeliveryView {
    id: DeliveryId,
    received_at: UnixMillis,
    source: String,
    provider: Option<String>,
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<HeaderView>,
    /// The exact body bytes, base64.
    body_base64: String,
    /// The body as text, when it is UTF-8.
    body_text: Option<String>,
    body_size: u64,
    body_refused: bool,
    remote_addr: Option<String>,
    verdict: hooklab_core::verdict::Verdict,
    metadata: hooklab_core::metadata::Metadata,
    response_status: u16,
    duplicate_of: Option<DeliveryId>,
    attempts: Vec<hooklab_core::store::Attempt>,
}

async fn show_event(data: &DataState, text: &str) -> Answer {
    use base64::Engine as _;
    let id = id(text)?;
    let delivery = data
        .store
        .get(id)
        .await
        .map_err(|e| Problem::store(&e))?
        .ok_or_else(|| Problem::not_found("delivery"))?;
    let attempts = data
        .store
        .attempts(id)
        .await
        .map_err(|e| Problem::store(&e))?;
    let r = delivery.record;
    let engine = base64::engine::general_purpose::STANDARD;
    let view = DeliveryView {
        id: delivery.id,
        received_at: r.received_at,
        source: r.source,
        provider: r.provider.map(|p| p.as_str().to_string()),
        method: r.method,
        path: r.path,
        query: r.query,
        headers: r
            .headers
            .iter()
            .map(|h| HeaderView {
                name: h.name.clone(),
                value: String::from_utf8_lossy(&h.value).into_owned(),
                value_base64: h.value_str().is_none().then(|| engine.encode(&h.value)),
            })
            .collect(),
        body_base64: engine.encode(&r.body),
        body_text: String::from_utf8(r.body).ok(),
        body_size: r.body_size,
        body_refused: r.body_refused,
        remote_addr: r.remote_addr,
        verdict: r.verdict,
        metadata: r.metadata,
        response_status: r.response_status,
        duplicate_of: delivery.duplicate_of,
        attempts,
    };
    ok(&view)
}

async fn raw_body(data: &DataState, text: &str) -> Answer {
    let id = id(text)?;
    let delivery = data
        .store
        .get(id)
        .await
        .map_err(|e| Problem::store(&e))?
        .ok_or_else(|| Problem::not_found("delivery"))?;
    let mut response = Response::new(Body::from(delivery.record.body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!("attachment; filename=\"delivery-{id}.bin\""))
            .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

async fn list_keys(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let status = match param(&p, "status") {
        None => None,
        Some("processing") => Some(KeyStatus::Processing),
        Some("completed") => Some(KeyStatus::Completed),
        Some("failed") => Some(KeyStatus::Failed),
        Some(other) => {
            return Err(Problem::bad(format!(
                "`status` is processing, completed or failed, not `{other}`"
            )));
        }
    };
    let filter = KeyFilter {
        limit: Some(limit(&p, 500)?),
        scope: param(&p, "scope").map(str::to_string),
        status,
        duplicates_only: param(&p, "duplicates").is_some_and(|v| v == "true" || v == "1"),
    };
    let keys = data
        .store
        .keys(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&keys)
}

async fn list_objects(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let filter = ObjectFilter {
        limit: Some(limit(&p, 500)?),
        machine: param(&p, "machine").map(str::to_string),
        state: param(&p, "state").map(str::to_string),
        updated_before: None,
    };
    let objects = data
        .store
        .objects(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&objects)
}

async fn timeline(data: &DataState, object: &str) -> Answer {
    let object = decode(object);
    let rows = data
        .store
        .timeline(object.clone())
        .await
        .map_err(|e| Problem::store(&e))?;
    if rows.is_empty() {
        return Err(Problem::not_found("object"));
    }
    ok(&super::openapi::Timeline {
        object,
        transitions: rows,
    })
}

async fn list_dlq(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let filter = DeadLetterFilter {
        limit: Some(limit(&p, 500)?),
        source: param(&p, "source").map(str::to_string),
        jobs: None,
    };
    let dead = data
        .store
        .dead_letters(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&dead)
}

/// `{"jobs": [ids]}` or `{"all": true}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Selection {
    #[serde(default)]
    jobs: Option<Vec<i64>>,
    #[serde(default)]
    all: bool,
}

async fn resolve_dlq(data: &DataState, req: Request, redrive: bool) -> Answer {
    let selection: Selection =
        read_json(req, "expected {\"jobs\": [ids]} or {\"all\": true}").await?;
    let jobs = match (selection.jobs, selection.all) {
        (Some(jobs), false) if !jobs.is_empty() => Some(jobs),
        (None, true) => None,
        _ => {
            return Err(Problem::bad(
                "name the jobs ({\"jobs\": [ids]}) or ask for all of them ({\"all\": true})",
            ));
        }
    };
    let filter = DeadLetterFilter {
        limit: None,
        source: None,
        jobs,
    };
    let now = UnixMillis::now();
    let done = if redrive {
        data.store.redrive(filter, now).await
    } else {
        data.store.discard(filter, now).await
    }
    .map_err(|e| Problem::store(&e))?;
    ok(&super::openapi::Resolved {
        redriven: redrive.then_some(done),
        discarded: (!redrive).then_some(done),
    })
}

/// A source as the UI shows it: never its secrets, only how many there are.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct SourceView {
    name: String,
    provider: String,
    /// How many secrets are configured (the secrets themselves are write-only).
    secrets: usize,
    /// The signature tolerance in seconds (`null`: the provider's default).
    tolerance: Option<u64>,
    /// The status and delay of the receiver's answer.
    response_status: u16,
    response_delay_ms: u64,
    /// Where the gateway sends (the receiver's local URL; the UI shows the tunnel's when up).
    path: String,
    forward_to: Option<String>,
    /// Added in the UI, so the UI may change or remove it (the others come from the
    /// configuration file or `--source` flags).
    editable: bool,
}

async fn list_sources(data: &DataState) -> Answer {
    let managed = match &data.sources_file {
        Some(file) => file.managed.lock().await.clone(),
        None => Vec::new(),
    };
    let views: Vec<SourceView> = data
        .source_configs()
        .into_iter()
        .map(|s| SourceView {
            editable: managed.contains(&s.name),
            secrets: s.secrets.len(),
            tolerance: s.tolerance,
            response_status: s.response.status,
            response_delay_ms: s.response.delay_ms,
            path: format!("/{}", s.name),
            provider: s.provider.as_str().to_string(),
            forward_to: s.forward_to,
            name: s.name,
        })
        .collect();
    ok(&views)
}

/// A source to add, or the new settings of one (`PUT`: `secrets` absent keeps the current
/// ones; present replaces them).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SourceInput {
    /// Letters, digits, `-` and `_`: the first path segment the gateway posts to.
    name: Option<String>,
    provider: String,
    /// Write-only: never returned.
    secrets: Option<Vec<String>>,
    /// Seconds; `null`: the provider's default.
    tolerance: Option<u64>,
    /// The status the receiver answers (default 200).
    response_status: Option<u16>,
    /// A delay before answering, to provoke a gateway's timeout and retry (default 0).
    response_delay_ms: Option<u64>,
}

/// Every provider, with what it signs and how (for the provider picker).
async fn list_providers() -> Answer {
    ok(&hooklab_core::provider::catalog())
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Adds (`name: None`) or changes a UI-managed source, then applies every source to the
/// receiver and saves the managed ones. Nothing changes when the settings are refused.
async fn change_source(data: &DataState, req: Request, editing: Option<&str>) -> Answer {
    let (Some(file), Some(receiver)) = (&data.sources_file, &data.receiver) else {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "read_only",
            "this Hooklab keeps no sources file, so sources cannot be changed from the UI",
        ));
    };
    let input: SourceInput = read_json(req, "not a source").await?;
    let provider: hooklab_core::provider::ProviderId = input.provider.parse().map_err(|_| {
        Problem::bad(format!(
            "unknown provider `{}` (see /api/providers)",
            input.provider
        ))
    })?;
    let mut managed = file.managed.lock().await;
    let mut all = receiver.source_configs();
    let name = match (editing, &input.name) {
        (Some(name), _) => {
            if !managed.iter().any(|m| m == name) {
                return Err(if all.iter().any(|s| s.name == name) {
                    Problem::new(
                        StatusCode::CONFLICT,
                        "read_only",
                        format!(
                            "`{name}` comes from the configuration file or --source: change it there"
                        ),
                    )
                } else {
                    Problem::not_found("source")
                });
            }
            name.to_string()
        }
        (None, Some(name)) => {
            if !valid_name(name) {
                return Err(Problem::bad(
                    "a source's name is 1 to 64 letters, digits, `-` or `_` (it is the URL's first segment)",
                ));
            }
            if all.iter().any(|s| &s.name == name) {
                return Err(Problem::new(
                    StatusCode::CONFLICT,
                    "exists",
                    format!("a source named `{name}` exists"),
                ));
            }
            name.clone()
        }
        (None, None) => return Err(Problem::bad("a new source needs a `name`")),
    };
    let previous = all.iter().position(|s| s.name == name);
    let secrets = match (&input.secrets, previous) {
        (Some(secrets), _) => secrets
            .iter()
            .filter(|s| !s.is_empty())
            .map(hooklab_core::secret::Secret::new)
            .collect(),
        (None, Some(i)) => all[i].secrets.clone(),
        (None, None) => Vec::new(),
    };
    let mut source = match previous {
        Some(i) => all[i].clone(),
        None => SourceConfig::new(name.clone(), provider, Vec::new()),
    };
    source.provider = provider;
    source.secrets = secrets;
    source.tolerance = input.tolerance;
    source.response.status = input.response_status.unwrap_or(200);
    source.response.delay_ms = input.response_delay_ms.unwrap_or(0);
    if !(100..=599).contains(&source.response.status) {
        return Err(Problem::bad(
            "the response status must be between 100 and 599",
        ));
    }
    if source.response.delay_ms > crate::config::MAX_DELAY_MS {
        return Err(Problem::bad(format!(
            "the response delay is at most {} ms",
            crate::config::MAX_DELAY_MS
        )));
    }
    match previous {
        Some(i) => all[i] = source,
        None => all.push(source),
    }
    receiver
        .set_sources(&all)
        .map_err(|e| Problem::bad(e.to_string()))?;
    if editing.is_none() {
        managed.push(name.clone());
    }
    save_managed(file, &all, &managed)?;
    ok(&serde_json::json!({ "saved": name }))
}

async fn delete_source(data: &DataState, name: &str) -> Answer {
    let (Some(file), Some(receiver)) = (&data.sources_file, &data.receiver) else {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "read_only",
            "sources cannot be changed from the UI here",
        ));
    };
    let mut managed = file.managed.lock().await;
    if !managed.iter().any(|m| m == name) {
        return Err(Problem::not_found("source added in the UI"));
    }
    let all: Vec<SourceConfig> = receiver
        .source_configs()
        .into_iter()
        .filter(|s| s.name != name)
        .collect();
    receiver
        .set_sources(&all)
        .map_err(|e| Problem::bad(e.to_string()))?;
    managed.retain(|m| m != name);
    save_managed(file, &all, &managed)?;
    ok(&serde_json::json!({ "deleted": name }))
}

fn save_managed(
    file: &SourcesFile,
    all: &[SourceConfig],
    managed: &[String],
) -> Result<(), Problem> {
    let keep: Vec<SourceConfig> = all
        .iter()
        .filter(|s| managed.contains(&s.name))
        .cloned()
        .collect();
    crate::config::sources_file::save(&file.path, &keep).map_err(|e| {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage",
            format!(
                "the change is live but could not be saved to {} ({e}); it will be lost on restart",
                file.path.display()
            ),
        )
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TestEventRequest {
    source: String,
}

/// Signs a test event of the source's provider with its first secret and sends it through
/// the receiver, so it is recorded, verified, deduplicated and processed like any delivery.
async fn test_event(data: &DataState, req: Request) -> Answer {
    use hooklab_core::provider::{self, SignInput};
    let wanted: TestEventRequest = read_json(req, "expected {\"source\": NAME}").await?;
    let source = data
        .source_configs()
        .into_iter()
        .find(|s| s.name == wanted.source)
        .ok_or_else(|| Problem::not_found("source"))?;
    let receiver = data.receiver_addr.ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "no_receiver",
            "no receiver is running",
        )
    })?;
    let now = UnixMillis::now();
    let salt = format!("{}:{}", source.name, now.0);
    let event = hooklab_core::templates::test_event(source.provider, now, &salt);
    let path = format!("/{}", source.name);
    let url = format!("http://{receiver}{path}");
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut sent_body = event.body.clone();
    if let Some(secret) = source.secrets.first() {
        let mut input = SignInput::new(&event.body, now);
        input.url = Some(&url);
        input.content_type = Some(event.content_type);
        let signed =
            provider::sign(source.provider, &source.options, secret, &input).map_err(|e| {
                Problem::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "cannot_sign",
                    format!("cannot sign a {} test event: {e}", source.provider),
                )
            })?;
        if let Some(body) = signed.body {
            sent_body = body;
        }
        headers = signed.headers;
    }
    let status = send_to_receiver(receiver, &path, event.content_type, &headers, &sent_body)
        .await
        .map_err(|e| {
            Problem::new(
                StatusCode::BAD_GATEWAY,
                "receiver_unreachable",
                format!("the test event could not be sent to the receiver: {e}"),
            )
        })?;
    ok(&super::openapi::TestEventSent {
        source: source.name.clone(),
        event_id: event.event_id,
        event_type: event.event_type,
        signed: !source.secrets.is_empty(),
        status,
    })
}

/// POSTs one request to the receiver over loopback; the status it answered.
async fn send_to_receiver(
    receiver: std::net::SocketAddr,
    path: &str,
    content_type: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<u16> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {receiver}\r\nUser-Agent: Hooklab-Test-Event\r\n\
         Content-Type: {content_type}\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut stream = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(receiver),
    )
    .await
    .map_err(|_| std::io::Error::other("connecting timed out"))??;
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .map_err(|_| std::io::Error::other("the receiver did not answer within 30 s"))??;
    let status = std::str::from_utf8(&answer)
        .ok()
        .and_then(|text| text.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other("the receiver's answer is not HTTP"))?;
    Ok(status)
}

/// The events bus as Server-Sent Events, batched every [`BATCH_EVERY`].
fn stream(data: &DataState) -> Answer {
    let (mut tx, body) = http_body_util::channel::Channel::<Bytes>::new(4);
    let mut events = data.events.subscribe();
    let guard = StreamGuard::new(&data.streams);
    tokio::spawn(async move {
        let _open = guard;
        // Tell the client at once that the stream is open.
        if tx
            .send_data(Bytes::from_static(b": open\n\n"))
            .await
            .is_err()
        {
            return;
        }
        let mut tick = tokio::time::interval(BATCH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut batch: Vec<Event> = Vec::new();
        let mut missed: u64 = 0;
        let mut idle_ticks = 0u32;
        loop {
            tokio::select! {
                received = events.recv() => match received {
                    Ok(event) if batch.len() < BATCH_MAX => batch.push(event),
                    Ok(_) => missed += 1,
                    Err(broadcast::error::RecvError::Lagged(n)) => missed += n,
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = tick.tick() => {
                    let message = if batch.is_empty() && missed == 0 {
                        idle_ticks += 1;
                        // A comment every ~15 s keeps proxies and the client's timer happy.
                        if idle_ticks < 300 {
                            continue;
                        }
                        Bytes::from_static(b": keep-alive\n\n")
                    } else {
                        sse_message(&std::mem::take(&mut batch), std::mem::take(&mut missed))
                    };
                    idle_ticks = 0;
                    if tx.send_data(message).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut response = Response::new(Body::new(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `event: batch` with `{"events": […], "missed": N}` as its data (one line: JSON never
/// contains a raw newline).
fn sse_message(batch: &[Event], missed: u64) -> Bytes {
    #[derive(Serialize)]
    struct Message<'a> {
        events: &'a [Event],
        missed: u64,
    }
    // The shape documented as `StreamBatch` in the OpenAPI description.
    let data = serde_json::to_string(&Message {
        events: batch,
        missed,
    })
    .unwrap_or_default();
    Bytes::from(format!("event: batch\ndata: {data}\n\n"))
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
