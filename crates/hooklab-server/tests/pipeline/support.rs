//! Test harness: a tiny axum app on 127.0.0.1:0 that records every request it gets and answers
//! as told; deliveries to feed the handler and the store; and, for paused-time tests, a store
//! and a handler whose real I/O keeps tokio's paused clock from auto-advancing.

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::Header;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::*;
use hooklab_core::verdict::{Reason, Verdict};
use hooklab_server::pipeline::{Handler, HandlerContext, HandlerResult};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Long enough for a loaded CI machine, short enough to fail fast.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// How the app answers.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    Status(u16),
    /// A status and a body.
    Body(u16, Vec<u8>),
    /// Never answers (until the test ends).
    Hold,
}

/// One request as the app saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    /// Path and query.
    pub(crate) target: String,
    /// Lowercase names, in order.
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }
}

struct AppState {
    answer: Mutex<Answer>,
    seen: Mutex<Vec<Seen>>,
    arrived: Notify,
}

/// The developer's app, stand-in: counts and keeps what it receives.
pub(crate) struct App {
    pub(crate) addr: SocketAddr,
    state: Arc<AppState>,
}

impl App {
    pub(crate) async fn start(answer: Answer) -> Self {
        let state = Arc::new(AppState {
            answer: Mutex::new(answer),
            seen: Mutex::new(Vec::new()),
            arrived: Notify::new(),
        });
        let app = axum::Router::new()
            .fallback(receive)
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the app");
        let addr = listener.local_addr().expect("the app's address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, state }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn answer(&self, answer: Answer) {
        *self.state.answer.lock().unwrap() = answer;
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    pub(crate) fn hits(&self) -> usize {
        self.state.seen.lock().unwrap().len()
    }

    /// Waits until the app has received `n` requests.
    pub(crate) async fn wait_for_hits(&self, n: usize) {
        let waited = tokio::time::timeout(PATIENCE, async {
            loop {
                let arrived = self.state.arrived.notified();
                if self.hits() >= n {
                    return;
                }
                arrived.await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "the app got {} of {n} requests",
            self.hits()
        );
    }
}

async fn receive(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body: Bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    state.seen.lock().unwrap().push(Seen {
        method: parts.method.to_string(),
        target: parts.uri.to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec()))
            .collect(),
        body: body.to_vec(),
    });
    state.arrived.notify_waiters();
    let answer = state.answer.lock().unwrap().clone();
    let status = |s: u16| StatusCode::from_u16(s).expect("a valid status");
    match answer {
        Answer::Status(s) => status(s).into_response(),
        Answer::Body(s, body) => (status(s), body).into_response(),
        Answer::Hold => std::future::pending().await,
    }
}

/// A delivery to `source` as the receiver would record it: trusted (no secret), with an
/// idempotency key, enqueued, the key `processing`.
pub(crate) fn new_delivery(source: &str, key: &str, at: UnixMillis) -> NewDelivery {
    let body = format!(r#"{{"id":"{key}","type":"payment_intent.succeeded"}}"#).into_bytes();
    NewDelivery {
        received_at: at,
        source: source.into(),
        provider: Some(ProviderId::Stripe),
        method: "POST".into(),
        path: format!("/{source}"),
        query: None,
        headers: vec![
            Header::new("Host", "hooklab.test"),
            Header::new("Content-Type", "application/json"),
        ],
        body_size: body.len() as u64,
        body,
        body_refused: false,
        remote_addr: None,
        verdict: Verdict::unsigned(Reason::NoSecret, "no secret configured"),
        metadata: Metadata {
            event_id: Some(key.into()),
            event_type: Some("payment_intent.succeeded".into()),
            idempotency_key: Some(key.into()),
            ..Metadata::default()
        },
        response_status: 200,
        idempotency: Some(IdempotencyClaim {
            scope: "stripe".into(),
            key: key.into(),
            status: KeyStatus::Processing,
        }),
        enqueue: true,
    }
}

/// The status of one key.
pub(crate) async fn key_status(store: &dyn Store, key: &str) -> KeyStatus {
    let keys = store.keys(KeyFilter::default()).await.expect("list keys");
    keys.iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| panic!("key {key} claimed: {keys:?}"))
        .status
}

/// Runs `f`'s future on a blocking thread: while it runs, a paused tokio clock does not
/// auto-advance (tokio inhibits it during `spawn_blocking`), so real I/O (SQLite's writer
/// thread, a socket) takes no virtual time and attempt times stay exact.
async fn unadvanced<T: Send + 'static>(
    f: impl FnOnce() -> BoxFuture<'static, T> + Send + 'static,
) -> T {
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(f()))
        .await
        .expect("the blocking task ran")
}

/// A [`SqliteStore`] whose every call holds tokio's paused clock still (see [`unadvanced`]).
pub(crate) struct Unadvanced(pub(crate) Arc<SqliteStore>);

macro_rules! unadvanced {
    ($self:ident . $method:ident ( $($arg:ident),* )) => {{
        let store = Arc::clone(&$self.0);
        Box::pin(unadvanced(move || Box::pin(async move { store.$method($($arg),*).await })))
    }};
}

impl Store for Unadvanced {
    fn record(&self, d: NewDelivery) -> BoxFuture<'_, Result<Recorded, StoreError>> {
        unadvanced!(self.record(d))
    }
    fn list(&self, f: DeliveryFilter) -> BoxFuture<'_, Result<Vec<DeliverySummary>, StoreError>> {
        unadvanced!(self.list(f))
    }
    fn get(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        unadvanced!(self.get(id))
    }
    fn keys(&self, f: KeyFilter) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        unadvanced!(self.keys(f))
    }
    fn lease_jobs(
        &self,
        now: UnixMillis,
        limit: u32,
        lease_ms: u64,
    ) -> BoxFuture<'_, Result<Vec<LeasedJob>, StoreError>> {
        unadvanced!(self.lease_jobs(now, limit, lease_ms))
    }
    fn finish_job(
        &self,
        job: LeasedJob,
        attempt: AttemptRecord,
        outcome: JobOutcome,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        unadvanced!(self.finish_job(job, attempt, outcome, now))
    }
    fn next_due(&self) -> BoxFuture<'_, Result<Option<UnixMillis>, StoreError>> {
        unadvanced!(self.next_due())
    }
    fn attempts(&self, d: DeliveryId) -> BoxFuture<'_, Result<Vec<Attempt>, StoreError>> {
        unadvanced!(self.attempts(d))
    }
    fn dead_letters(
        &self,
        f: DeadLetterFilter,
    ) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        unadvanced!(self.dead_letters(f))
    }
    fn redrive(
        &self,
        f: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        unadvanced!(self.redrive(f, now))
    }
    fn discard(
        &self,
        f: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        unadvanced!(self.discard(f, now))
    }
    fn update_object(
        &self,
        machine: String,
        object_id: String,
        update: ObjectUpdate,
    ) -> BoxFuture<'static, Result<Option<ObjectChange>, StoreError>> {
        unadvanced!(self.update_object(machine, object_id, update))
    }
    fn objects(&self, f: ObjectFilter) -> BoxFuture<'_, Result<Vec<ObjectRecord>, StoreError>> {
        unadvanced!(self.objects(f))
    }
    fn timeline(&self, id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        unadvanced!(self.timeline(id))
    }
    fn set_key_status(
        &self,
        scope: String,
        key: String,
        status: KeyStatus,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        unadvanced!(self.set_key_status(scope, key, status))
    }
}

/// A handler whose attempts hold tokio's paused clock still (see [`unadvanced`]).
pub(crate) struct UnadvancedHandler<H>(pub(crate) Arc<H>);

impl<H: Handler> Handler for UnadvancedHandler<H> {
    fn handle<'a>(&'a self, ctx: &'a HandlerContext<'a>) -> BoxFuture<'a, HandlerResult> {
        let inner = Arc::clone(&self.0);
        let delivery = ctx.delivery.clone();
        let source = ctx.source.clone();
        let (attempt, job, started_at) = (ctx.attempt, ctx.job, ctx.started_at);
        Box::pin(unadvanced(move || {
            Box::pin(async move {
                let ctx = HandlerContext {
                    delivery: &delivery,
                    attempt,
                    job,
                    source: &source,
                    started_at,
                };
                inner.handle(&ctx).await
            })
        }))
    }
}
