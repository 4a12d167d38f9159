//! The single writer, its group commit, and the syncer that makes each group durable.
//!
//! One `std::thread` owns the write connection. Callers queue a request with a oneshot reply;
//! the writer blocks for the first request, drains whatever else is already queued (up to
//! `max_batch`), runs them all in ONE transaction and commits. The commit writes the group's
//! pages to the WAL but does not wait for the disk (`synchronous=NORMAL`): the writer hands the
//! group's answers to the **syncer** thread and starts on the next group at once. The syncer
//! `fdatasync`s the WAL file, which makes every group committed before the call durable, and
//! only then answers their callers. So an acknowledged delivery is always on disk, exactly as
//! with `synchronous=FULL`, but the fsync of one group overlaps the inserts of the next, and one
//! fsync covers every group that committed while the previous one ran (group commit twice over).
//!
//! Nothing read from the database leaves the store before it is durable either: a lease, a
//! redrive or an object update is answered by the syncer too, after the fsync that covers it.
//! Checkpoints stay SQLite's own (automatic, on the writer thread); with `synchronous=NORMAL`
//! SQLite syncs the WAL before copying it into the database and the database after, so a
//! checkpoint never makes a durable frame depend on an unsynced write.
//!
//! A failed delivery insert or a failed commit fails the whole group: every caller in it gets
//! [`StoreError::Storage`] (the receiver answers 503, the gateway retries) and the writer goes
//! on with a fresh transaction for the next group. Any other operation runs in a savepoint of
//! its own, so its failure is its own. A failed `fdatasync` fails its groups and **poisons the
//! store**: after a write error the kernel may have dropped dirty pages, so no later sync could
//! be trusted; every later write fails until the process restarts. Closing stops the queue,
//! lets the writer commit what was already queued, lets the syncer answer it, and joins both.

use super::{connection, deliveries, idempotency, jobs};
use crate::store::{NewDelivery, Recorded, StoreError};
use rusqlite::Connection;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// Where the writer answers one request.
pub(super) type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// Delivers an operation's answer once its group is durable; `Some(error)` when the group's
/// commit or sync failed (the operation's own result is then void).
pub(super) type Deliver = Box<dyn FnOnce(Option<StoreError>) + Send>;

/// An operation run inside a group's transaction, in a savepoint of its own.
pub(super) trait Operation: Send {
    /// Runs in the open transaction; returns how to answer the caller once the group is durable.
    fn run(self: Box<Self>, conn: &Connection) -> Deliver;
    /// Answers the caller with `error` without running (its group failed first).
    fn fail(self: Box<Self>, error: StoreError);
}

pub(super) type Op = Box<dyn Operation>;

/// The usual operation: `op` in a savepoint, its result sent to `reply` once durable.
pub(super) struct Exec<T, F> {
    /// What is being done, for error messages.
    pub(super) what: &'static str,
    pub(super) op: F,
    pub(super) reply: Reply<T>,
}

impl<T, F> Operation for Exec<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection) -> rusqlite::Result<T> + Send,
{
    fn run(self: Box<Self>, conn: &Connection) -> Deliver {
        let Self { what, op, reply } = *self;
        let result = in_savepoint(conn, what, op);
        Box::new(move |failed| {
            let _ = reply.send(match failed {
                Some(e) => Err(e),
                None => result,
            });
        })
    }

    fn fail(self: Box<Self>, error: StoreError) {
        let _ = self.reply.send(Err(error));
    }
}

/// What the writer can be asked to do, in queue order.
pub(super) enum WriteRequest {
    /// Append a delivery and claim its idempotency key; answered after the sync that holds it.
    Record {
        delivery: Box<NewDelivery>,
        reply: Reply<Recorded>,
    },
    /// Run an operation in the next group, after the writes queued before it. Used by the
    /// outbox's lease / finish / redrive / discard, key status and object updates.
    Exec(Op),
    /// Change a setting of the write connection, between groups.
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
    /// Transactions committed.
    pub commits: u64,
    /// Deliveries committed. `rows / commits` is the mean group size.
    pub rows: u64,
    /// Groups whose insert or commit failed (every delivery in them was answered with an error).
    pub failed_batches: u64,
    /// The most deliveries committed by one transaction.
    pub largest_batch: u64,
    /// `fdatasync` calls on the WAL; each one made every group committed before it durable.
    pub syncs: u64,
}

#[derive(Default)]
struct Counters {
    commits: AtomicU64,
    rows: AtomicU64,
    failed_batches: AtomicU64,
    largest_batch: AtomicU64,
    syncs: AtomicU64,
    /// Set by the syncer when an `fdatasync` failed: from then on every write fails.
    poisoned: AtomicBool,
}

/// The handle the store keeps on its writer and syncer threads.
pub(super) struct Writer {
    /// `None` once closed, so later requests fail fast with [`StoreError::Closed`].
    queue: RwLock<Option<Sender<WriteRequest>>>,
    /// Joined on close, after the queue has drained (the writer joins the syncer).
    thread: Mutex<Option<JoinHandle<()>>>,
    counters: Arc<Counters>,
}

impl Writer {
    /// Starts the writer and syncer threads on `conn`, the write connection of the database at
    /// `path`. `default_pages` is SQLite's own page cap, restored by
    /// `Control::SetMaxPageCount { pages: None }`.
    pub(super) fn spawn(
        conn: Connection,
        path: &Path,
        max_batch: usize,
        default_pages: u32,
    ) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel();
        let (to_syncer, synced) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let syncer = Syncer {
            wal: wal_path(path),
            file: None,
            counters: Arc::clone(&counters),
        };
        let syncer = std::thread::Builder::new()
            .name("hooklab-sqlite-sync".into())
            .spawn(move || syncer.run(synced))
            .map_err(|e| StoreError::Storage(format!("starting the sync thread: {e}")))?;
        let worker = WriterLoop {
            conn,
            max_batch: max_batch.max(1),
            default_pages,
            counters: Arc::clone(&counters),
            syncer: to_syncer,
        };
        let thread = std::thread::Builder::new()
            .name("hooklab-sqlite-writer".into())
            .spawn(move || {
                worker.run(rx);
                // The writer dropped its sender: the syncer answers what is left, then ends.
                let _ = syncer.join();
            })
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
            syncs: c.syncs.load(Ordering::Acquire),
        }
    }

    /// Stops taking requests, waits until everything queued is committed, synced and answered
    /// (or failed and answered), and joins the threads. Blocks; idempotent.
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

/// The WAL file SQLite keeps beside the database.
fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

/// One answer waiting for its group to be durable.
enum Pending {
    Recorded(Reply<Recorded>, Recorded),
    /// A delivery that was not written (its group failed).
    NotRecorded(Reply<Recorded>),
    Ran(Deliver),
    /// An operation that did not run (its group failed first).
    NotRun(Op),
}

impl Pending {
    fn deliver(self, failed: Option<&StoreError>) {
        let error = || {
            failed
                .cloned()
                .unwrap_or_else(|| StoreError::Storage("the group was not written".into()))
        };
        match (self, failed) {
            // A caller that stopped waiting still has its delivery recorded.
            (Self::Recorded(reply, recorded), None) => {
                let _ = reply.send(Ok(recorded));
            }
            (Self::Recorded(reply, _) | Self::NotRecorded(reply), _) => {
                let _ = reply.send(Err(error()));
            }
            (Self::Ran(deliver), failed) => deliver(failed.cloned()),
            (Self::NotRun(op), _) => op.fail(error()),
        }
    }
}

/// A committed group on its way to the syncer.
type Group = Vec<Pending>;

/// One queued request taken into the current group.
enum Taken {
    Record(Box<NewDelivery>, Reply<Recorded>),
    Exec(Op),
}

/// The writer thread's state.
struct WriterLoop {
    conn: Connection,
    /// The most requests one transaction takes, so one commit never waits on an endless queue.
    max_batch: usize,
    default_pages: u32,
    counters: Arc<Counters>,
    syncer: Sender<Group>,
}

impl WriterLoop {
    /// Runs until every sender is gone and the queue is empty.
    fn run(mut self, rx: Receiver<WriteRequest>) {
        let mut batch: Vec<Taken> = Vec::with_capacity(self.max_batch);
        while let Ok(first) = rx.recv() {
            let mut control = None;
            let mut next = Some(first);
            while let Some(request) = next.take() {
                match request {
                    WriteRequest::Record { delivery, reply } => {
                        batch.push(Taken::Record(delivery, reply));
                    }
                    WriteRequest::Exec(op) => batch.push(Taken::Exec(op)),
                    WriteRequest::Control(c) => {
                        // Between groups: what was queued before it is committed first.
                        control = Some(c);
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
            if let Some(control) = control {
                self.apply(control);
            }
        }
    }

    /// Runs the group in one transaction and hands its answers to the syncer.
    fn commit(&mut self, batch: &mut Vec<Taken>) {
        if self.counters.poisoned.load(Ordering::Acquire) {
            let e = poisoned();
            for taken in batch.drain(..) {
                match taken {
                    Taken::Record(_, reply) => {
                        let _ = reply.send(Err(e.clone()));
                    }
                    Taken::Exec(op) => op.fail(e.clone()),
                }
            }
            return;
        }
        let rows = batch
            .iter()
            .filter(|t| matches!(t, Taken::Record(..)))
            .count() as u64;
        match write_group(&mut self.conn, batch) {
            Ok(group) => {
                let c = &self.counters;
                c.commits.fetch_add(1, Ordering::AcqRel);
                c.rows.fetch_add(rows, Ordering::AcqRel);
                c.largest_batch.fetch_max(rows, Ordering::AcqRel);
                if let Err(mpsc::SendError(group)) = self.syncer.send(group) {
                    let e = StoreError::Storage("the sync thread stopped".into());
                    for pending in group {
                        pending.deliver(Some(&e));
                    }
                }
            }
            Err((e, group)) => {
                self.counters.failed_batches.fetch_add(1, Ordering::AcqRel);
                tracing::error!(error = %e, requests = group.len(), "group commit failed");
                let e = StoreError::Storage(format!(
                    "recording a group of {} deliveries and operations: {e}",
                    group.len()
                ));
                for pending in group {
                    pending.deliver(Some(&e));
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

fn poisoned() -> StoreError {
    StoreError::Storage(
        "an earlier write to the disk failed, so nothing written since can be trusted to be on \
         disk; restart Hooklab (and check the disk)"
            .into(),
    )
}

/// Runs the group in one immediate transaction — each delivery claiming its idempotency key
/// right after its insert, each operation in a savepoint — and commits it. On failure, why,
/// and every answer (to be failed).
fn write_group(conn: &mut Connection, batch: &mut Vec<Taken>) -> Result<Group, (String, Group)> {
    let mut group: Group = Vec::with_capacity(batch.len());
    let mut failure = begin(conn).err().map(|e| e.to_string());
    for taken in batch.drain(..) {
        match taken {
            Taken::Record(delivery, reply) => {
                if failure.is_some() {
                    group.push(Pending::NotRecorded(reply));
                    continue;
                }
                match record(conn, &delivery) {
                    Ok(recorded) => group.push(Pending::Recorded(reply, recorded)),
                    Err(e) => {
                        failure = Some(e.to_string());
                        group.push(Pending::NotRecorded(reply));
                    }
                }
            }
            Taken::Exec(op) => {
                if failure.is_some() {
                    // Never run against a transaction that is being abandoned.
                    group.push(Pending::NotRun(op));
                    continue;
                }
                group.push(Pending::Ran(op.run(conn)));
                if conn.is_autocommit() {
                    // Some errors (a full disk) make SQLite roll the whole transaction back:
                    // nothing before this point will be committed, so the group fails.
                    failure = Some("SQLite rolled the transaction back".into());
                }
            }
        }
    }
    if let Some(e) = failure {
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        return Err((e, group));
    }
    match conn.execute_batch("COMMIT") {
        Ok(()) => Ok(group),
        Err(e) => {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Err((e.to_string(), group))
        }
    }
}

fn begin(conn: &Connection) -> rusqlite::Result<()> {
    if !conn.is_autocommit() {
        // A failure SQLite did not roll back itself: start clean.
        conn.execute_batch("ROLLBACK")?;
    }
    conn.execute_batch("BEGIN IMMEDIATE")
}

/// Inserts one delivery, claims its key and enqueues its job, in the open transaction.
fn record(conn: &Connection, delivery: &NewDelivery) -> rusqlite::Result<Recorded> {
    let id = deliveries::insert(conn, delivery)?;
    let key = delivery
        .idempotency
        .as_ref()
        .map(|claim| idempotency::claim(conn, id, claim, delivery.received_at))
        .transpose()?;
    // The job goes in with its delivery: no acknowledged event is ever without it.
    let job = if delivery.enqueue && key.is_none_or(|k| k.process) {
        let claimed = delivery
            .idempotency
            .as_ref()
            .map(|c| (c.scope.as_str(), c.key.as_str()));
        Some(jobs::enqueue(
            conn,
            id,
            &delivery.source,
            claimed,
            delivery.received_at,
        )?)
    } else {
        None
    };
    Ok(Recorded { id, key, job })
}

/// Runs `op` in a savepoint of the open group transaction: its failure rolls back only its own
/// writes and becomes a [`StoreError::Storage`] saying what was being done.
pub(super) fn in_savepoint<T>(
    conn: &Connection,
    what: &'static str,
    op: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    let run = || {
        conn.execute_batch("SAVEPOINT op")?;
        match op(conn) {
            Ok(value) => {
                conn.execute_batch("RELEASE op")?;
                Ok(value)
            }
            Err(e) => {
                conn.execute_batch("ROLLBACK TO op; RELEASE op")?;
                Err(e)
            }
        }
    };
    run().map_err(|e: rusqlite::Error| StoreError::Storage(format!("{what}: {e}")))
}

/// The syncer thread's state: the WAL file, opened on first use.
struct Syncer {
    wal: PathBuf,
    file: Option<File>,
    counters: Arc<Counters>,
}

impl Syncer {
    /// Runs until the writer is gone and every committed group has been answered.
    fn run(mut self, rx: Receiver<Group>) {
        let mut groups: Vec<Group> = Vec::new();
        while let Ok(first) = rx.recv() {
            groups.push(first);
            groups.extend(rx.try_iter());
            let failed = self.sync().err();
            for pending in groups.drain(..).flatten() {
                pending.deliver(failed.as_ref());
            }
        }
    }

    /// Makes every WAL frame written so far durable.
    fn sync(&mut self) -> Result<(), StoreError> {
        if self.counters.poisoned.load(Ordering::Acquire) {
            return Err(poisoned());
        }
        let result = self.open().and_then(|file| {
            file.sync_data()
                .map_err(|e| StoreError::Storage(format!("syncing the WAL to disk: {e}")))
        });
        self.counters.syncs.fetch_add(1, Ordering::AcqRel);
        if let Err(e) = &result {
            self.counters.poisoned.store(true, Ordering::Release);
            tracing::error!(error = %e, "syncing the database to disk failed; every later write will fail");
        }
        result
    }

    /// The WAL file; the first time, also syncs its folder so the file itself survives a crash.
    fn open(&mut self) -> Result<&File, StoreError> {
        if self.file.is_none() {
            let file = File::options()
                .read(true)
                .write(true)
                .open(&self.wal)
                .map_err(|e| {
                    StoreError::Storage(format!("opening the WAL {}: {e}", self.wal.display()))
                })?;
            if let Some(dir) = self.wal.parent().filter(|d| !d.as_os_str().is_empty()) {
                File::open(dir).and_then(|d| d.sync_all()).map_err(|e| {
                    StoreError::Storage(format!("syncing the folder {}: {e}", dir.display()))
                })?;
            }
            self.file = Some(file);
        }
        Ok(self.file.as_ref().expect("opened above"))
    }
}
