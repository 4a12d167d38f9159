//! Reads. [`ReadPool`] is a few threads, each owning a read connection, that run closures sent
//! over a channel and answer on a oneshot, so a listing never blocks the caller's async runtime
//! and never waits for the writer (WAL lets readers and the writer run at once).
//! [`SqliteReader`] is the synchronous path for the CLI: one read-only connection on the
//! caller's thread, for a database another process (the receiver) may be writing.

use super::{SqliteOptions, connection, deliveries, idempotency, jobs, migrations, objects};
use crate::store::{
    Attempt, BoxFuture, DeadLetter, DeadLetterFilter, Delivery, DeliveryFilter, DeliveryId,
    DeliverySummary, IdempotencyRecord, KeyFilter, ObjectFilter, ObjectRecord, StoreError,
    TimelineEntry,
};
use rusqlite::Connection;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use tokio::sync::oneshot;

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

/// The store's reader threads.
pub(super) struct ReadPool {
    /// `None` once closed.
    queue: RwLock<Option<Sender<ReadJob>>>,
    /// Joined on close, after the queued reads have run.
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl ReadPool {
    /// One thread per connection; they share one queue.
    pub(super) fn spawn(connections: Vec<Connection>) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel::<ReadJob>();
        let rx = Arc::new(Mutex::new(rx));
        let mut threads = Vec::with_capacity(connections.len());
        for (index, conn) in connections.into_iter().enumerate() {
            let rx = Arc::clone(&rx);
            let thread = std::thread::Builder::new()
                .name(format!("hooklab-sqlite-reader-{index}"))
                .spawn(move || serve(&conn, &rx))
                .map_err(|e| StoreError::Storage(format!("starting a reader thread: {e}")))?;
            threads.push(thread);
        }
        Ok(Self {
            queue: RwLock::new(Some(tx)),
            threads: Mutex::new(threads),
        })
    }

    /// Runs `read` on a reader thread; the future resolves with its result.
    pub(super) fn run<T, F>(&self, read: F) -> BoxFuture<'static, Result<T, StoreError>>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = reply.send(read(conn));
        });
        let queued = self.submit(job);
        Box::pin(async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }

    fn submit(&self, job: ReadJob) -> Result<(), StoreError> {
        let queue = self.queue.read().unwrap_or_else(PoisonError::into_inner);
        match queue.as_ref() {
            Some(tx) => tx.send(job).map_err(|_| StoreError::Closed),
            None => Err(StoreError::Closed),
        }
    }

    /// Stops taking reads, lets queued ones finish, joins the threads. Blocks; idempotent.
    pub(super) fn close(&self) -> Result<(), StoreError> {
        drop(
            self.queue
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let threads =
            std::mem::take(&mut *self.threads.lock().unwrap_or_else(PoisonError::into_inner));
        let panicked = threads
            .into_iter()
            .map(JoinHandle::join)
            .filter(Result::is_err)
            .count();
        match panicked {
            0 => Ok(()),
            n => Err(StoreError::Storage(format!(
                "{n} reader thread(s) panicked"
            ))),
        }
    }
}

/// A reader thread: takes the next job from the shared queue until the queue closes.
fn serve(conn: &Connection, queue: &Mutex<Receiver<ReadJob>>) {
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match next {
            Ok(job) => job(conn),
            Err(_) => return,
        }
    }
}

/// Synchronous, read-only access to a Hooklab database, for the CLI. It never creates,
/// migrates or writes the file, and works while a receiver is writing it.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("hooklab.db");
/// use hooklab_core::store::{sqlite::SqliteStore, DeliveryFilter};
///
/// SqliteStore::open(&path).unwrap().close().unwrap();
/// let reader = SqliteStore::open_read_only(&path).unwrap();
/// assert!(reader.list(&DeliveryFilter::default()).unwrap().is_empty());
/// ```
#[derive(Debug)]
pub struct SqliteReader {
    conn: Connection,
}

impl SqliteReader {
    /// Opens an existing database. Fails when there is none, when its schema is older than
    /// this build's (start the receiver once to upgrade it) or newer ([`StoreError::TooNew`]).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = connection::open_reader(path, &SqliteOptions::default())?;
        migrations::require_current(&conn)?;
        Ok(Self { conn })
    }

    /// Deliveries matching `filter`, newest first.
    pub fn list(&self, filter: &DeliveryFilter) -> Result<Vec<DeliverySummary>, StoreError> {
        deliveries::list(&self.conn, filter)
    }

    /// One delivery, whole, or `None`.
    pub fn get(&self, id: DeliveryId) -> Result<Option<Delivery>, StoreError> {
        deliveries::get(&self.conn, id)
    }

    /// Idempotency keys matching `filter`, most recently seen first.
    pub fn keys(&self, filter: &KeyFilter) -> Result<Vec<IdempotencyRecord>, StoreError> {
        idempotency::list(&self.conn, filter)
    }

    /// Every attempt for a delivery's jobs, oldest first.
    pub fn attempts(&self, delivery: DeliveryId) -> Result<Vec<Attempt>, StoreError> {
        jobs::attempts(&self.conn, delivery)
    }

    /// The dead-letter queue, newest first.
    pub fn dead_letters(&self, filter: &DeadLetterFilter) -> Result<Vec<DeadLetter>, StoreError> {
        jobs::dead_letters(&self.conn, filter)
    }

    /// Objects matching `filter`, most recently updated first.
    pub fn objects(&self, filter: &ObjectFilter) -> Result<Vec<ObjectRecord>, StoreError> {
        objects::list(&self.conn, filter)
    }

    /// An object's timeline, oldest first.
    pub fn timeline(&self, object_id: &str) -> Result<Vec<TimelineEntry>, StoreError> {
        objects::timeline(&self.conn, object_id)
    }
}
