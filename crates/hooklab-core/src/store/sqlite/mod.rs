//! The embedded SQLite engine behind [`Store`]: one file, WAL, a single group-committing writer
//! thread and a small pool of reader threads. The only module in Hooklab that names rusqlite.
//!
//! # Layout
//! - `connection`: opening connections with WAL, `synchronous=NORMAL`, busy timeout, foreign keys.
//! - `migrations`: the schema's history, applied atomically, tracked by `user_version`.
//! - `deliveries`: the `deliveries` table (the raw event log): schema, insert, list, get.
//! - `headers`: the byte-exact encoding of a delivery's headers.
//! - `idempotency`: the `idempotency_keys` table: a delivery claims its key by a constraint.
//! - `objects`: business objects and their state-machine timelines.
//! - `jobs`: the outbox (`jobs`, `attempts`): leases, attempts, retries, the dead-letter queue.
//! - `writer`: the writer thread, its group commit, and the syncer that makes groups durable.
//! - `reader`: the reader threads, and [`SqliteReader`] for synchronous reads (the CLI).
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use hooklab_core::store::{sqlite::SqliteStore, DeliveryFilter, Store};
//!
//! let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let listed = runtime.block_on(store.list(DeliveryFilter::default())).unwrap();
//! assert!(listed.is_empty());
//! store.close().unwrap(); // or drop it: queued writes are committed either way
//! ```

mod connection;
mod deliveries;
mod idempotency;
mod jobs;
mod migrations;
mod objects;
mod reader;
pub mod transfer;
mod writer;

pub use reader::SqliteReader;
pub use writer::StoreStats;

use super::{
    Attempt, AttemptRecord, BoxFuture, DeadLetter, DeadLetterFilter, Delivery, DeliveryFilter,
    DeliveryId, DeliverySummary, IdempotencyRecord, JobOutcome, KeyFilter, KeyStatus, LeasedJob,
    NewDelivery, ObjectChange, ObjectFilter, ObjectRecord, ObjectUpdate, Recorded, Store,
    StoreError, TimelineEntry,
};
use crate::clock::UnixMillis;
use reader::ReadPool;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::oneshot;
use writer::{Control, WriteRequest, Writer};

/// The schema version this build reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = migrations::SCHEMA_VERSION;

/// How to open a [`SqliteStore`]. `SqliteOptions::default()` is right for the receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a connection waits for a lock held by another process before failing.
    pub busy_timeout: Duration,
    /// The most deliveries one group commit takes; the rest wait for the next one.
    pub max_batch: usize,
    /// How many reader threads (each with its own connection) serve `list` and `get`.
    pub readers: usize,
    /// Test and operations knob: caps the database at this many pages, so any write that
    /// needs the file to grow fails with `SQLITE_FULL`, exactly as on a full disk. SQLite never
    /// sets the cap below the file's current size, so `Some(1)` pins the file at its size after
    /// migration: the first write that needs a new page fails (any body over one page, 4 KiB,
    /// does), while small rows may still fit into pages already allocated. Change it on a running
    /// store with [`SqliteStore::set_max_page_count`]. `None`: SQLite's default (no practical cap).
    pub max_page_count: Option<u32>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            max_batch: 512,
            readers: 2,
            max_page_count: None,
        }
    }
}

/// Deliveries in one SQLite file. `record` resolves only after the group commit holding the
/// delivery is on disk. Dropping the store (or [`SqliteStore::close`]) commits what is queued
/// and joins its threads.
pub struct SqliteStore {
    path: PathBuf,
    writer: Writer,
    readers: ReadPool,
}

impl SqliteStore {
    /// Opens (creating the file and its folders if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// [`SqliteStore::open`] with explicit options.
    pub fn open_with(path: &Path, options: SqliteOptions) -> Result<Self, StoreError> {
        let mut conn = connection::open_writer(path, &options)?;
        migrations::migrate(&mut conn)?;
        let default_pages = connection::max_page_count(&conn)?;
        if let Some(pages) = options.max_page_count {
            connection::set_max_page_count(&conn, pages)?;
        }
        let connections = (0..options.readers.max(1))
            .map(|_| connection::open_reader(path, &options))
            .collect::<Result<Vec<_>, _>>()?;
        let readers = ReadPool::spawn(connections)?;
        let writer = Writer::spawn(conn, path, options.max_batch, default_pages)?;
        Ok(Self {
            path: path.to_path_buf(),
            writer,
            readers,
        })
    }

    /// Synchronous read-only access for the CLI: see [`SqliteReader`].
    pub fn open_read_only(path: &Path) -> Result<SqliteReader, StoreError> {
        SqliteReader::open(path)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Commits and rows written since the store opened.
    pub fn stats(&self) -> StoreStats {
        self.writer.stats()
    }

    /// Changes the page cap on the running writer (see [`SqliteOptions::max_page_count`];
    /// `None` restores SQLite's default) after the writes queued before it. Resolves with the
    /// cap now in force. A test and operations knob.
    pub fn set_max_page_count(
        &self,
        pages: Option<u32>,
    ) -> impl Future<Output = Result<u32, StoreError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let queued = self
            .writer
            .submit(WriteRequest::Control(Control::SetMaxPageCount {
                pages,
                reply,
            }));
        async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Stops taking requests, commits every write already queued, and joins the writer and
    /// reader threads. Later calls fail with [`StoreError::Closed`]. Blocks (for at most the
    /// queued work): from async code call it on a blocking thread. Idempotent; `Drop` does it too.
    pub fn close(&self) -> Result<(), StoreError> {
        let written = self.writer.close();
        let read = self.readers.close();
        written.and(read)
    }
}

impl SqliteStore {
    /// Runs `op` on the writer thread, in the next group commit (in a savepoint of its own),
    /// after the writes queued before it; resolves once that group is on disk.
    fn exec<T, F>(&self, what: &'static str, op: F) -> BoxFuture<'static, Result<T, StoreError>>
    where
        F: FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let queued = self
            .writer
            .submit(WriteRequest::Exec(Box::new(writer::Exec {
                what,
                op,
                reply,
            })));
        Box::pin(async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!(error = %e, path = %self.path.display(), "closing the store failed");
        }
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Store for SqliteStore {
    /// Queues the delivery for the next group commit right away (so ids follow call order), and
    /// resolves after that commit. Dropping the future does not cancel the write.
    fn record(&self, delivery: NewDelivery) -> BoxFuture<'_, Result<Recorded, StoreError>> {
        let (reply, answer) = oneshot::channel();
        let queued = self.writer.submit(WriteRequest::Record {
            delivery: Box::new(delivery),
            reply,
        });
        Box::pin(async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }

    fn list(
        &self,
        filter: DeliveryFilter,
    ) -> BoxFuture<'_, Result<Vec<DeliverySummary>, StoreError>> {
        self.readers
            .run(move |conn| deliveries::list(conn, &filter))
    }

    fn get(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        self.readers.run(move |conn| deliveries::get(conn, id))
    }

    fn keys(&self, filter: KeyFilter) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        self.readers
            .run(move |conn| idempotency::list(conn, &filter))
    }

    fn lease_jobs(
        &self,
        now: UnixMillis,
        limit: u32,
        lease_ms: u64,
    ) -> BoxFuture<'_, Result<Vec<LeasedJob>, StoreError>> {
        self.exec("leasing jobs", move |tx| {
            jobs::lease(tx, now, limit, lease_ms)
        })
    }

    fn finish_job(
        &self,
        job: LeasedJob,
        attempt: AttemptRecord,
        outcome: JobOutcome,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.exec("finishing a job", move |tx| {
            jobs::finish(tx, &job, &attempt, &outcome, now)
        })
    }

    fn next_due(&self) -> BoxFuture<'_, Result<Option<UnixMillis>, StoreError>> {
        self.readers.run(jobs::next_due)
    }

    fn attempts(&self, delivery: DeliveryId) -> BoxFuture<'_, Result<Vec<Attempt>, StoreError>> {
        self.readers.run(move |conn| jobs::attempts(conn, delivery))
    }

    fn dead_letters(
        &self,
        filter: DeadLetterFilter,
    ) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        self.readers
            .run(move |conn| jobs::dead_letters(conn, &filter))
    }

    fn redrive(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        self.exec("redriving dead letters", move |tx| {
            jobs::resolve_dead(tx, &filter, true, now)
        })
    }

    fn discard(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        self.exec("discarding dead letters", move |tx| {
            jobs::resolve_dead(tx, &filter, false, now)
        })
    }

    fn update_object(
        &self,
        machine: String,
        object_id: String,
        update: ObjectUpdate,
    ) -> BoxFuture<'static, Result<Option<ObjectChange>, StoreError>> {
        self.exec("updating an object", move |tx| {
            objects::update(tx, &machine, &object_id, update)
        })
    }

    fn objects(
        &self,
        filter: ObjectFilter,
    ) -> BoxFuture<'_, Result<Vec<ObjectRecord>, StoreError>> {
        self.readers.run(move |conn| objects::list(conn, &filter))
    }

    fn timeline(&self, object_id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        self.readers
            .run(move |conn| objects::timeline(conn, &object_id))
    }

    fn set_key_status(
        &self,
        scope: String,
        key: String,
        status: KeyStatus,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let missing = format!("no idempotency key `{key}` in scope `{scope}`");
        let set = self.exec("setting a key's status", move |conn| {
            idempotency::set_status(conn, &scope, &key, status)
        });
        Box::pin(async move {
            match set.await? {
                true => Ok(()),
                false => Err(StoreError::Storage(missing)),
            }
        })
    }
}

#[cfg(test)]
mod tests;
