//! The storage seam. Everything persistent goes through [`Store`]; [`sqlite::SqliteStore`] is
//! the embedded engine, and the `hooklab-postgres` crate the production engine for many
//! replicas (same schema and semantics; one test-suite runs on both). [`transfer`] is the
//! format that moves a database between them. No rusqlite type leaves [`sqlite`].
//!
//! The write path is group-committed: many concurrent [`Store::record`] calls share one
//! transaction and one fsync, and each call resolves only after the commit that holds it, so a
//! receiver that awaits `record` before answering 2xx never acknowledges an event it could lose.

pub mod headers;
pub mod sqlite;
pub mod transfer;

use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::provider::ProviderId;
use crate::request::Header;
use crate::verdict::{Status, Verdict};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A delivery's id: increasing in arrival (commit) order.
pub type DeliveryId = i64;

/// A request about to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub received_at: UnixMillis,
    /// The first path segment: the source's name (kept even when no such source exists).
    pub source: String,
    /// The source's provider; `None` for an unknown source.
    pub provider: Option<ProviderId>,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// In arrival order, with duplicates.
    pub headers: Vec<Header>,
    /// Exactly the bytes received (empty when the body was refused, see `body_refused`).
    pub body: Vec<u8>,
    /// The body's size: received, or declared by `Content-Length` when refused.
    pub body_size: u64,
    /// The body was not kept (it exceeded the limit); headers and size were.
    pub body_refused: bool,
    pub remote_addr: Option<String>,
    pub verdict: Verdict,
    pub metadata: Metadata,
    /// The status the receiver answered (or will answer once this is committed).
    pub response_status: u16,
    /// The idempotency key this delivery claims, in the same transaction as its record.
    /// `None` for deliveries that must not claim one (a forged signature must never make a
    /// genuine event look like a duplicate).
    pub idempotency: Option<IdempotencyClaim>,
    /// The source has a handler: when this delivery is to be processed (no key, or its claim
    /// says so), its job is written to the outbox in the same transaction as the record.
    pub enqueue: bool,
}

/// Processing status of an idempotency key: `processing → completed | failed`. A `failed` key
/// is processed again by its next delivery; a `processing` or `completed` one is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyStatus {
    Processing,
    Completed,
    Failed,
}

impl KeyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyStatus::Processing => "processing",
            KeyStatus::Completed => "completed",
            KeyStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "processing" => Some(KeyStatus::Processing),
            "completed" => Some(KeyStatus::Completed),
            "failed" => Some(KeyStatus::Failed),
            _ => None,
        }
    }
}

impl std::str::FromStr for KeyStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| {
            format!("unknown key status `{s}`; expected processing, completed or failed")
        })
    }
}

/// A delivery's claim on an idempotency key: unique per `(scope, key)` by a database
/// constraint. The insert that loses the race learns that it is a duplicate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    /// The namespace of the key: the provider id (event ids are unique per provider).
    pub scope: String,
    pub key: String,
    /// The status a key gets when this delivery is the one that will be processed:
    /// `processing` when a handler will run, `completed` when there is nothing to run.
    pub status: KeyStatus,
}

/// What the claim found, decided by the constraint inside the delivery's own transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeyOutcome {
    /// The delivery that first claimed the key.
    pub first_delivery: DeliveryId,
    /// This delivery is not the first with this key.
    pub duplicate: bool,
    /// This delivery will be processed: the first one, or the next after a `failed` status.
    pub process: bool,
    /// Deliveries seen with this key, this one included.
    pub deliveries: u64,
    /// The key's status after this delivery.
    pub status: KeyStatus,
}

/// What [`Store::record`] returns once the delivery is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    pub id: DeliveryId,
    /// `None` when the delivery claimed no key.
    pub key: Option<KeyOutcome>,
    /// The outbox job written with it, when one was.
    pub job: Option<JobId>,
}

/// An outbox job's id.
pub type JobId = i64;

/// Where a job is in its life: `ready` (waiting for `run_at`) → `leased` (a worker has it
/// until `lease_until`; an expired lease makes it eligible again) → `done` | `ready` (a retry)
/// | `dead` (in the dead-letter queue) → `ready` (redriven) | `discarded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Ready,
    Leased,
    Done,
    Dead,
    Discarded,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Ready => "ready",
            JobState::Leased => "leased",
            JobState::Done => "done",
            JobState::Dead => "dead",
            JobState::Discarded => "discarded",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ready" => Some(JobState::Ready),
            "leased" => Some(JobState::Leased),
            "done" => Some(JobState::Done),
            "dead" => Some(JobState::Dead),
            "discarded" => Some(JobState::Discarded),
            _ => None,
        }
    }
}

/// A job a worker has leased: run the handler for `delivery`, then call
/// [`Store::finish_job`] with the same `job` and `attempt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeasedJob {
    pub job: JobId,
    pub delivery: DeliveryId,
    /// This attempt's number, 1-based.
    pub attempt: u32,
    pub source: String,
    /// The idempotency key the job processes, when the delivery claimed one.
    pub scope: Option<String>,
    pub key: Option<String>,
}

/// One run of a handler, as recorded (the forward handler: the developer's app's answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttemptRecord {
    pub started_at: UnixMillis,
    pub duration_ms: u64,
    /// Where the attempt went (the forward URL), for display.
    pub target: Option<String>,
    /// The response status, when a response came.
    pub status: Option<u16>,
    pub response_headers: Vec<Header>,
    /// The first 64 KiB of the response body.
    #[serde(with = "crate::request::bytes_as_lossless")]
    #[schemars(with = "crate::request::LosslessBytes")]
    pub response_body: Vec<u8>,
    /// Why the attempt failed without a response (connection refused, timeout…), or why a
    /// response counted as a failure.
    pub error: Option<String>,
}

/// A recorded attempt, with its job and number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attempt {
    pub job: JobId,
    pub delivery: DeliveryId,
    pub attempt: u32,
    #[serde(flatten)]
    pub record: AttemptRecord,
}

/// What the worker decided after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    /// Handled: the job is done and its key `completed`.
    Done,
    /// Try again at `run_at` (the key stays `processing`).
    Retry { run_at: UnixMillis },
    /// Give up: the job moves to the dead-letter queue and its key becomes `failed`.
    Dead { reason: String },
}

/// A job in the dead-letter queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeadLetter {
    pub job: JobId,
    pub delivery: DeliveryId,
    pub source: String,
    pub event_id: Option<String>,
    pub event_type: Option<String>,
    pub scope: Option<String>,
    pub key: Option<String>,
    pub reason: String,
    pub attempts: u32,
    pub dead_at: UnixMillis,
}

/// A business object's persisted state, as its state machine left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObjectRecord {
    /// The machine's name, e.g. `stripe-payment-intent`.
    pub machine: String,
    pub object_id: String,
    /// The current state (`None` while only parked events exist).
    pub state: Option<String>,
    /// The provider time of the event that set the state.
    pub state_time: Option<UnixMillis>,
    /// e.g. `awaiting_confirmation`, `requires_review`.
    pub flags: Vec<String>,
    /// The engine's whole object state (parked events included), as JSON; opaque to the store.
    pub data: String,
    pub updated_at: UnixMillis,
}

/// One decision of a state machine, as the timeline shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineEntry {
    pub machine: String,
    pub object_id: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub delivery: Option<DeliveryId>,
    pub provider_time: Option<UnixMillis>,
    pub received_at: Option<UnixMillis>,
    /// e.g. `applied`, `ignored_stale`, `parked`, `requires_review`.
    pub decision: String,
    pub reason: String,
    pub at: UnixMillis,
}

/// What an object update writes: the new object and the timeline rows it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectChange {
    pub object: ObjectRecord,
    pub rows: Vec<TimelineEntry>,
}

/// Computes an object's change from its stored record (`None`: not seen yet), inside the
/// store's write transaction, so concurrent updates of one object never interleave. Returning
/// `None` writes nothing.
pub type ObjectUpdate = Box<dyn FnOnce(Option<ObjectRecord>) -> Option<ObjectChange> + Send>;

/// Which objects to list, most recently updated first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectFilter {
    pub limit: Option<u32>,
    pub machine: Option<String>,
    pub state: Option<String>,
    /// Only objects not updated since this time (reconciliation looks for stuck ones).
    pub updated_before: Option<UnixMillis>,
}

/// Which dead letters to list (newest first) or act on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeadLetterFilter {
    pub limit: Option<u32>,
    pub source: Option<String>,
    /// Only these jobs.
    pub jobs: Option<Vec<JobId>>,
}

/// One idempotency key, as the idempotency view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdempotencyRecord {
    pub scope: String,
    pub key: String,
    pub status: KeyStatus,
    pub first_delivery: DeliveryId,
    /// Deliveries seen with this key (1 + duplicates).
    pub deliveries: u64,
    pub first_seen: UnixMillis,
    pub last_seen: UnixMillis,
}

/// Which keys to list, most recently seen first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyFilter {
    pub limit: Option<u32>,
    pub scope: Option<String>,
    pub status: Option<KeyStatus>,
    /// Only keys delivered more than once.
    pub duplicates_only: bool,
    /// Only this key (with `scope`, at most one record).
    pub key: Option<String>,
}

/// A recorded delivery, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: DeliveryId,
    pub record: NewDelivery,
    /// The first delivery with the same idempotency key, when this one is a duplicate.
    pub duplicate_of: Option<DeliveryId>,
}

/// One row of a listing: what a list view shows, without headers and body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeliverySummary {
    pub id: DeliveryId,
    pub received_at: UnixMillis,
    pub source: String,
    pub provider: Option<ProviderId>,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub verdict: Status,
    pub reason: Option<String>,
    pub event_id: Option<String>,
    pub event_type: Option<String>,
    pub response_status: u16,
    pub body_size: u64,
    pub idempotency_key: Option<String>,
    /// The first delivery with the same idempotency key, when this one is a duplicate.
    pub duplicate_of: Option<DeliveryId>,
}

/// What to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryFilter {
    /// At most this many rows (the store caps it).
    pub limit: Option<u32>,
    pub source: Option<String>,
    pub verdict: Option<Status>,
    /// Only deliveries with an id below this one (paging).
    pub before: Option<DeliveryId>,
    /// Only this event type (exact).
    pub event_type: Option<String>,
    /// Only duplicates (deliveries whose key was claimed by an earlier one).
    pub duplicates_only: bool,
    /// Only the duplicates of this delivery (those whose key it claimed first).
    pub duplicate_of: Option<DeliveryId>,
    /// Only deliveries whose idempotency key has this status now.
    pub key_status: Option<KeyStatus>,
    /// Full-text search: deliveries whose body, headers, path, event id, event type or
    /// idempotency key contain this text (case-insensitive for ASCII letters; the body is
    /// searched as bytes, so any UTF-8 text is found), or whose id is this number. A scan:
    /// it reads every row it passes, newest first, until the page is full.
    pub search: Option<String>,
}

/// `text` as a `LIKE` pattern that matches it anywhere, with `\` as the escape character.
pub fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database could not be opened, migrated, written or read.
    #[error("storage failed: {0}")]
    Storage(String),
    /// The store is shutting down or its writer has stopped.
    #[error("the store is closed")]
    Closed,
    /// The database was written by a newer Hooklab.
    #[error(
        "the database schema version {found} is newer than this Hooklab supports ({supported}); upgrade Hooklab"
    )]
    TooNew { found: i64, supported: i64 },
}

/// Everything persistent. Implementations must make `record` durable before it resolves.
pub trait Store: Send + Sync + 'static {
    /// Records a delivery durably, claiming its idempotency key in the same transaction;
    /// resolves after the commit (and fsync) that holds it. The write is queued when this is
    /// called: dropping the future does not cancel it.
    fn record(&self, delivery: NewDelivery) -> BoxFuture<'_, Result<Recorded, StoreError>>;

    /// Deliveries matching `filter`, newest first.
    fn list(
        &self,
        filter: DeliveryFilter,
    ) -> BoxFuture<'_, Result<Vec<DeliverySummary>, StoreError>>;

    /// One delivery, whole, or `None`.
    fn get(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>>;

    /// Idempotency keys matching `filter`, most recently seen first.
    fn keys(&self, filter: KeyFilter) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>>;

    /// Leases up to `limit` jobs that are due at `now` (ready with `run_at <= now`, or leased
    /// with an expired lease), each for `lease_ms`; every leased job's attempt count goes up.
    fn lease_jobs(
        &self,
        now: UnixMillis,
        limit: u32,
        lease_ms: u64,
    ) -> BoxFuture<'_, Result<Vec<LeasedJob>, StoreError>>;

    /// Records an attempt and applies its outcome in one transaction: the job's state, and
    /// the key's status (`completed` on done, `failed` when dead). Returns `false` (changing
    /// nothing) when the job is no longer leased for this attempt (its lease expired and
    /// another worker took it).
    fn finish_job(
        &self,
        job: LeasedJob,
        attempt: AttemptRecord,
        outcome: JobOutcome,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// The earliest `run_at` of a ready job, so an idle worker knows when to look again.
    fn next_due(&self) -> BoxFuture<'_, Result<Option<UnixMillis>, StoreError>>;

    /// Every attempt for a delivery's jobs, oldest first.
    fn attempts(&self, delivery: DeliveryId) -> BoxFuture<'_, Result<Vec<Attempt>, StoreError>>;

    /// The dead-letter queue, newest first.
    fn dead_letters(
        &self,
        filter: DeadLetterFilter,
    ) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>>;

    /// Moves the matching dead jobs back to `ready` at `now` (their keys to `processing`);
    /// returns how many moved.
    fn redrive(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>>;

    /// Discards the matching dead jobs (kept, marked `discarded`); returns how many.
    fn discard(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>>;

    /// Updates one object with `update`, atomically; returns what was written. The update is
    /// queued when this is called and updates run in the order they were queued, each seeing
    /// the object as the ones before left it; the returned future only waits for the outcome
    /// (hence `'static`), so a caller may queue several before awaiting any.
    fn update_object(
        &self,
        machine: String,
        object_id: String,
        update: ObjectUpdate,
    ) -> BoxFuture<'static, Result<Option<ObjectChange>, StoreError>>;

    /// Objects matching `filter`, most recently updated first.
    fn objects(&self, filter: ObjectFilter)
    -> BoxFuture<'_, Result<Vec<ObjectRecord>, StoreError>>;

    /// An object's timeline (every machine that tracks this id), oldest first.
    fn timeline(&self, object_id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>>;

    /// Sets a key's status (the worker: `completed` or `failed` after the handler ran).
    fn set_key_status(
        &self,
        scope: String,
        key: String,
        status: KeyStatus,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// Small helper so `Verdict` round-trips through storage as JSON.
pub fn verdict_to_json(v: &Verdict) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

/// The inverse of [`verdict_to_json`]; a damaged value reads back as "not verified".
pub fn verdict_from_json(s: &str) -> Verdict {
    serde_json::from_str(s).unwrap_or_else(|_| Verdict::not_verified("stored verdict unreadable"))
}
