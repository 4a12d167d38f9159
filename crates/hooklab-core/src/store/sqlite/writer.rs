//! The single writer, its group commit, and the syncer that makes each group durable.
//!
//! One `std::thread` owns the write connection. Callers queue a request with a oneshot reply;
//! the writer writes each request into the open transaction as it arrives. Commits do not wait
//! for the disk (`synchronous=NORMAL`): a committed group goes to the **syncer** thread, which
//! `fdatasync`s the WAL file — making every group committed before the call durable — and only
//! then answers its callers. While the syncer syncs one group, the writer keeps writing the next
//! one and commits it the moment the syncer is free (or the group is full). So an acknowledged
//! delivery is always on disk, exactly as with `synchronous=FULL`, each fsync covers everything
//! that arrived while the previous one ran, and the inserts of one group overlap the fsync of
//! the one before.
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
    /// From the syncer: the groups it was given are durable and answered.
    Synced,
    /// From `close`: commit what was queued before, then stop.
    Close,
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
            writer: tx.clone(),
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
            group: OpenGroup::default(),
            syncing: false,
        };
        let thread = std::thread::Builder::new()
            .name("hooklab-sqlite-writer".into())
            .spawn(move || {
                worker.run(rx);
                // The writer dropped the syncer's queue: it answers what is left, then ends.
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
        let queue = self
            .queue
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // The syncer holds a sender too, so the queue never disconnects by itself.
        if let Some(queue) = queue {
            let _ = queue.send(WriteRequest::Close);
        }
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

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.close();
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

/// The group being written: its transaction is open while the previous group syncs.
#[derive(Default)]
struct OpenGroup {
    /// Answers, in queue order.
    pending: Group,
    /// Deliveries in it.
    rows: u64,
    /// Why the group will fail, once something in it failed; nothing more runs in it.
    failure: Option<String>,
    /// Whether `BEGIN` was issued (and succeeded or failed).
    begun: bool,
}

/// The writer thread's state.
struct WriterLoop {
    conn: Connection,
    /// The most requests one transaction takes, so one commit never waits on an endless queue.
    max_batch: usize,
    default_pages: u32,
    counters: Arc<Counters>,
    syncer: Sender<Group>,
    group: OpenGroup,
    /// A committed group is being synced: the open group keeps growing until it is done.
    syncing: bool,
}

impl WriterLoop {
    /// Runs until told to close (or every sender is gone), then commits what is left and lets
    /// the syncer answer it.
    ///
    /// The rhythm: requests are written into the open transaction as they arrive; the group is
    /// committed as soon as the syncer is free (or the group is full), so each fsync covers
    /// everything that arrived while the previous one ran, and the inserts of one group overlap
    /// the fsync of the one before.
    fn run(mut self, rx: Receiver<WriteRequest>) {
        while let Ok(first) = rx.recv() {
            let mut next = Some(first);
            let mut control = None;
            let mut closing = false;
            while let Some(request) = next.take() {
                match request {
                    WriteRequest::Record { delivery, reply } => self.add_record(&delivery, reply),
                    WriteRequest::Exec(op) => self.add_op(op),
                    WriteRequest::Synced => self.syncing = false,
                    WriteRequest::Control(c) => {
                        // Between groups: what was queued before it is committed first.
                        control = Some(c);
                        break;
                    }
                    WriteRequest::Close => {
                        closing = true;
                        break;
                    }
                }
                if self.group.pending.len() < self.max_batch {
                    next = rx.try_recv().ok();
                }
            }
            let full = self.group.pending.len() >= self.max_batch;
            if !self.syncing || full || control.is_some() || closing {
                self.commit();
            }
            if let Some(control) = control {
                self.apply(control);
            }
            if closing {
                break;
            }
        }
        self.commit();
        // Dropping `self` drops the syncer's queue: it answers what is left, then ends.
    }

    /// Starts the transaction for a new group if needed; false once the group has failed.
    fn ready(&mut self) -> bool {
        if !self.group.begun {
            self.group.begun = true;
            if self.counters.poisoned.load(Ordering::Acquire) {
                self.group.failure = Some(poisoned().to_string());
            } else if let Err(e) = begin(&self.conn) {
                self.group.failure = Some(e.to_string());
            }
        }
        self.group.failure.is_none()
    }

    fn add_record(&mut self, delivery: &NewDelivery, reply: Reply<Recorded>) {
        self.group.rows += 1;
        if !self.ready() {
            self.group.pending.push(Pending::NotRecorded(reply));
            return;
        }
        match record(&self.conn, delivery) {
            Ok(recorded) => self.group.pending.push(Pending::Recorded(reply, recorded)),
            Err(e) => {
                self.group.failure = Some(e.to_string());
                self.group.pending.push(Pending::NotRecorded(reply));
            }
        }
    }

    fn add_op(&mut self, op: Op) {
        if !self.ready() {
            // Never run against a transaction that is being abandoned.
            self.group.pending.push(Pending::NotRun(op));
            return;
        }
        self.group.pending.push(Pending::Ran(op.run(&self.conn)));
        if self.conn.is_autocommit() {
            // Some errors (a full disk) make SQLite roll the whole transaction back: nothing
            // before this point will be committed, so the group fails.
            self.group.failure = Some("SQLite rolled the transaction back".into());
        }
    }

    /// Commits the open group (if any) and hands its answers to the syncer; a failed group is
    /// rolled back and answered with its error at once.
    fn commit(&mut self) {
        let group = std::mem::take(&mut self.group);
        if group.pending.is_empty() {
            return;
        }
        let failure = match group.failure {
            Some(e) => Some(e),
            None => self
                .conn
                .execute_batch("COMMIT")
                .err()
                .map(|e| e.to_string()),
        };
        if let Some(e) = failure {
            if !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
            self.counters.failed_batches.fetch_add(1, Ordering::AcqRel);
            tracing::error!(error = %e, requests = group.pending.len(), "group commit failed");
            let e = StoreError::Storage(format!(
                "recording a group of {} deliveries and operations: {e}",
                group.pending.len()
            ));
            for pending in group.pending {
                pending.deliver(Some(&e));
            }
            return;
        }
        let c = &self.counters;
        c.commits.fetch_add(1, Ordering::AcqRel);
        c.rows.fetch_add(group.rows, Ordering::AcqRel);
        c.largest_batch.fetch_max(group.rows, Ordering::AcqRel);
        self.syncing = true;
        if let Err(mpsc::SendError(pending)) = self.syncer.send(group.pending) {
            let e = StoreError::Storage("the sync thread stopped".into());
            for p in pending {
                p.deliver(Some(&e));
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
    /// Told after each sync, so it commits the group it has been growing meanwhile.
    writer: Sender<WriteRequest>,
}

impl Syncer {
    /// Runs until the writer is gone and every committed group has been answered.
    fn run(mut self, rx: Receiver<Group>) {
        let mut groups: Vec<Group> = Vec::new();
        while let Ok(first) = rx.recv() {
            groups.push(first);
            groups.extend(rx.try_iter());
            let failed = self.sync().err();
            // The writer may commit its next group while these callers are being answered.
            let _ = self.writer.send(WriteRequest::Synced);
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
