//! The single writer and its group commit. One `std::thread` owns the write connection.
//! Callers queue a request with a oneshot reply; the writer blocks for the first request, drains
//! whatever else is already queued (up to `max_batch`), inserts them all in ONE transaction and
//! commits: one fsync for the whole group (`synchronous=FULL` in WAL syncs the log on commit).
//! Only then does each caller hear its id, so an acknowledged delivery is always on disk.
//!
//! A failed insert or commit fails the whole group: every caller in it gets
//! [`StoreError::Storage`] (the receiver answers 503, the gateway retries) and the writer goes
//! on with a fresh transaction for the next group. Closing stops the queue, lets the writer
//! commit what was already queued, and joins the thread.

use super::{connection, deliveries, idempotency, jobs};
use crate::store::{KeyStatus, NewDelivery, Recorded, StoreError};
use rusqlite::{Connection, TransactionBehavior};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// Where the writer answers one request.
pub(super) type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// What the writer can be asked to do, in queue order.
pub(super) enum WriteRequest {
    /// Append a delivery and claim its idempotency key; answered after the commit that holds it.
    Record {
        delivery: Box<NewDelivery>,
        reply: Reply<Recorded>,
    },
    /// Run `op` in its own immediate transaction, after the writes queued before it; it
    /// answers its caller itself. Used by the outbox's lease / finish / redrive / discard.
    Exec(Box<dyn FnOnce(&mut Connection) + Send>),
    /// Set an idempotency key's status, in its own transaction after the writes before it.
    SetKeyStatus {
        scope: String,
        key: String,
        status: KeyStatus,
        reply: Reply<()>,
    },
    /// Change a setting of the write connection, after the writes queued before it.
    Control(Control),
}

/// Settings of the write connection that can change while the store runs.
pub(super) enum Control {
    /// Change the page cap (`None`: SQLite's default); answered with the cap now in force.
    SetMaxPageCount {
        pages: Option<u32>,
        reply: Reply<u32>,
    },
}

/// What the writer has done since the store opened: enough to see group commit at work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreStats {
    /// Transactions committed (each one fsync).
    pub commits: u64,
    /// Deliveries committed. `rows / commits` is the mean group size.
    pub rows: u64,
    /// Groups whose insert or commit failed (every delivery in them was answered with an error).
    pub failed_batches: u64,
    /// The most deliveries committed by one transaction.
    pub largest_batch: u64,
}

#[derive(Default)]
struct Counters {
    commits: AtomicU64,
    rows: AtomicU64,
    failed_batches: AtomicU64,
    largest_batch: AtomicU64,
}

/// The handle the store keeps on its writer thread.
pub(super) struct Writer {
    /// `None` once closed, so later requests fail fast with [`StoreError::Closed`].
    queue: RwLock<Option<Sender<WriteRequest>>>,
    /// Joined on close, after the queue has drained.
    thread: Mutex<Option<JoinHandle<()>>>,
    counters: Arc<Counters>,
}

impl Writer {
    /// Starts the writer thread on `conn`. `default_pages` is SQLite's own page cap, restored by
    /// `Control::SetMaxPageCount { pages: None }`.
    pub(super) fn spawn(
        conn: Connection,
        max_batch: usize,
        default_pages: u32,
    ) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let worker = WriterLoop {
            conn,
            max_batch: max_batch.max(1),
            default_pages,
            counters: Arc::clone(&counters),
        };
        let thread = std::thread::Builder::new()
            .name("hooklab-sqlite-writer".into())
            .spawn(move || worker.run(rx))
            .map_err(|e| StoreError::Storage(format!("starting the writer thread: {e}")))?;
        Ok(Self {
            queue: RwLock::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            counters,
        })
    }

    /// Queues a request; [`StoreError::Closed`] when the store is closed or the writer died.
    pub(super) fn submit(&self, request: WriteRequest) -> Result<(), StoreError> {
        let queue = self.queue.read().unwrap_or_else(PoisonError::into_inner);
        match queue.as_ref() {
            Some(tx) => tx.send(request).map_err(|_| StoreError::Closed),
            None => Err(StoreError::Closed),
        }
    }

    pub(super) fn stats(&self) -> StoreStats {
        let c = &self.counters;
        StoreStats {
            commits: c.commits.load(Ordering::Acquire),
            rows: c.rows.load(Ordering::Acquire),
            failed_batches: c.failed_batches.load(Ordering::Acquire),
            largest_batch: c.largest_batch.load(Ordering::Acquire),
        }
    }

    /// Stops taking requests, waits until everything queued is committed (or failed and
    /// answered), and joins the thread. Blocks; idempotent.
    pub(super) fn close(&self) -> Result<(), StoreError> {
        drop(
            self.queue
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match thread {
            Some(thread) => thread
                .join()
                .map_err(|_| StoreError::Storage("the writer thread panicked".into())),
            None => Ok(()),
        }
    }
}

type Pending = (Box<NewDelivery>, Reply<Recorded>);

/// The writer thread's state.
struct WriterLoop {
    conn: Connection,
    /// The most deliveries one transaction takes, so one commit never waits on an endless queue.
    max_batch: usize,
    default_pages: u32,
    counters: Arc<Counters>,
}

impl WriterLoop {
    /// Runs until every sender is gone and the queue is empty.
    fn run(mut self, rx: Receiver<WriteRequest>) {
        let mut batch: Vec<Pending> = Vec::with_capacity(self.max_batch);
        while let Ok(first) = rx.recv() {
            let mut after = None;
            let mut next = Some(first);
            while let Some(request) = next.take() {
                match request {
                    WriteRequest::Record { delivery, reply } => batch.push((delivery, reply)),
                    other => {
                        // Records queued before it are committed first; it runs after.
                        after = Some(other);
                        break;
                    }
                }
                if batch.len() < self.max_batch {
                    next = rx.try_recv().ok();
                }
            }
            if !batch.is_empty() {
                self.commit(&mut batch);
            }
            match after {
                Some(WriteRequest::Control(control)) => self.apply(control),
                Some(WriteRequest::SetKeyStatus {
                    scope,
                    key,
                    status,
                    reply,
                }) => {
                    let _ = reply.send(idempotency::set_status(&self.conn, &scope, &key, status));
                }
                Some(WriteRequest::Exec(op)) => op(&mut self.conn),
                Some(WriteRequest::Record { .. }) | None => {}
            }
        }
    }

    /// Writes the group in one transaction and answers every caller in it.
    fn commit(&mut self, batch: &mut Vec<Pending>) {
        match write_batch(&mut self.conn, batch) {
            Ok(recorded) => {
                let rows = recorded.len() as u64;
                let c = &self.counters;
                c.commits.fetch_add(1, Ordering::AcqRel);
                c.rows.fetch_add(rows, Ordering::AcqRel);
                c.largest_batch.fetch_max(rows, Ordering::AcqRel);
                for ((_, reply), r) in batch.drain(..).zip(recorded) {
                    // A caller that stopped waiting still has its delivery recorded.
                    let _ = reply.send(Ok(r));
                }
            }
            Err(e) => {
                self.counters.failed_batches.fetch_add(1, Ordering::AcqRel);
                tracing::error!(error = %e, deliveries = batch.len(), "group commit failed");
                let message = format!("recording a group of {} deliveries: {e}", batch.len());
                for (_, reply) in batch.drain(..) {
                    let _ = reply.send(Err(StoreError::Storage(message.clone())));
                }
            }
        }
    }

    fn apply(&mut self, control: Control) {
        match control {
            Control::SetMaxPageCount { pages, reply } => {
                let pages = pages.unwrap_or(self.default_pages);
                let _ = reply.send(connection::set_max_page_count(&self.conn, pages));
            }
        }
    }
}

/// Inserts the group in one immediate transaction, each delivery claiming its idempotency key
/// right after its insert, and commits it.
fn write_batch(conn: &mut Connection, batch: &[Pending]) -> rusqlite::Result<Vec<Recorded>> {
    if !conn.is_autocommit() {
        // A failure SQLite did not roll back itself: start clean.
        conn.execute_batch("ROLLBACK")?;
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let recorded = batch
        .iter()
        .map(|(delivery, _)| {
            let id = deliveries::insert(&tx, delivery)?;
            let key = delivery
                .idempotency
                .as_ref()
                .map(|claim| idempotency::claim(&tx, id, claim, delivery.received_at))
                .transpose()?;
            // The job goes in with its delivery: no acknowledged event is ever without it.
            let job = if delivery.enqueue && key.is_none_or(|k| k.process) {
                let claimed = delivery
                    .idempotency
                    .as_ref()
                    .map(|c| (c.scope.as_str(), c.key.as_str()));
                Some(jobs::enqueue(
                    &tx,
                    id,
                    &delivery.source,
                    claimed,
                    delivery.received_at,
                )?)
            } else {
                None
            };
            Ok(Recorded { id, key, job })
        })
        .collect::<rusqlite::Result<Vec<_>>>()?;
    tx.commit()?;
    Ok(recorded)
}

/// Runs `op` in an immediate transaction on the writer's connection and commits it; a failed
/// `op` or commit rolls back and becomes a [`StoreError::Storage`] saying what was being done.
pub(super) fn in_transaction<T>(
    conn: &mut Connection,
    what: &'static str,
    op: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    let run = |conn: &mut Connection| {
        if !conn.is_autocommit() {
            conn.execute_batch("ROLLBACK")?;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = op(&tx)?;
        tx.commit()?;
        Ok(value)
    };
    run(conn).map_err(|e: rusqlite::Error| StoreError::Storage(format!("{what}: {e}")))
}
