//! Hooklab's production store: [`PgStore`], the [`Store`] seam on PostgreSQL, for several
//! receiver replicas sharing one database. Same schema and semantics as the embedded SQLite
//! engine (`hooklab_core::store::sqlite`): the raw `deliveries` log, idempotency by the unique
//! `(scope, key)` claimed with `INSERT … ON CONFLICT … RETURNING` in the delivery's own
//! transaction, the outbox job written in that transaction too, leases with a visibility
//! timeout taken with `SELECT … FOR UPDATE SKIP LOCKED`, the dead-letter queue, objects and
//! their timelines.
//!
//! # Layout
//! - `schema`: the tables (one migration per SQLite migration) applied in one transaction.
//! - `deliveries`, `idempotency`, `jobs`, `objects`: one module per table, as on SQLite;
//!   `deliveries` also holds the record statement that writes all three of its tables.
//! - `headers`: the header encoding, byte-identical to SQLite's column.
//! - `sql`: statements whose conditions depend on a filter.
//! - [`transfer`]: export and import, in the same lines as the SQLite engine's.
//! - [`cluster`]: a throwaway PostgreSQL cluster for tests and benchmarks.
//!
//! Durability: `record` is one statement (claim, delivery and job in one implicit transaction,
//! one round trip) and resolves after it committed, which with the default
//! `synchronous_commit = on` means the WAL is flushed (PostgreSQL group-commits concurrent
//! transactions itself). Every statement but the record statement is sent with `query_typed`
//! (an unnamed statement, parameter types given) and no session state is used, so the store
//! works through PgBouncer in transaction mode; the record statement is prepared once per
//! connection unless [`PgOptions::prepared_statements`] is off (PgBouncer before 1.21).
//!
//! TLS: connections use `NoTls` (a database on loopback or a private network). To add TLS,
//! build the pool with `tokio-postgres-rustls` or `postgres-native-tls` in place of `NoTls`
//! in [`PgStore::connect_with`] and put `sslmode=require` in the URL.
//!
//! ```no_run
//! # async fn demo() -> Result<(), hooklab_core::store::StoreError> {
//! use hooklab_core::store::{DeliveryFilter, Store};
//! use hooklab_postgres::PgStore;
//!
//! let store = PgStore::connect("postgres://hooklab@127.0.0.1/hooklab").await?;
//! let listed = store.list(DeliveryFilter::default()).await?;
//! store.close().await;
//! # Ok(()) }
//! ```

pub mod cluster;
mod deliveries;
mod error;
mod idempotency;
mod jobs;
mod objects;
mod schema;
mod sql;
pub mod transfer;

pub use schema::SCHEMA_VERSION;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use error::{pg_error, pool_error};
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{
    Attempt, AttemptRecord, BoxFuture, DeadLetter, DeadLetterFilter, Delivery, DeliveryFilter,
    DeliveryId, DeliverySummary, IdempotencyRecord, JobOutcome, KeyFilter, KeyStatus, LeasedJob,
    NewDelivery, ObjectChange, ObjectFilter, ObjectRecord, ObjectUpdate, Recorded, Store,
    StoreError, TimelineEntry,
};
use std::sync::{Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

/// How to connect. `PgOptions::default()` is right for one `hooklab serve` replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Connections this process keeps (each concurrent `record` holds one until it commits).
    /// Replicas × this must stay under the server's `max_connections` (or the pooler's).
    pub pool_size: usize,
    /// Prepare the hot statement (recording a delivery) once per connection and reuse it,
    /// so PostgreSQL does not parse and plan it for every delivery. Needs a direct connection,
    /// a session-mode pooler, or PgBouncer 1.21+ with `max_prepared_statements` > 0; turn it
    /// off for an older transaction-mode pooler (every statement is then unnamed).
    pub prepared_statements: bool,
    /// Bring the schema up to date on connect (as `hooklab migrate` does). When `false`, a
    /// schema that is not exactly this build's is refused.
    pub migrate: bool,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            pool_size: 32,
            prepared_statements: true,
            migrate: true,
        }
    }
}

/// Deliveries in a PostgreSQL database shared by any number of replicas.
pub struct PgStore {
    pool: Pool,
    /// The runtime `record` runs on: the write proceeds even if the caller drops the future.
    runtime: tokio::runtime::Handle,
    /// [`PgOptions::prepared_statements`].
    prepared_statements: bool,
    /// The ordered queue of object updates (`None` once closed).
    updates: Mutex<Option<mpsc::UnboundedSender<objects::Queued>>>,
    /// The task applying object updates, awaited on close.
    updater: Mutex<Option<JoinHandle<()>>>,
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) and migrates.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PgOptions::default()).await
    }

    /// [`PgStore::connect`] with explicit options. Must be called inside a tokio runtime.
    pub async fn connect_with(url: &str, options: PgOptions) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            StoreError::Storage(format!("invalid PostgreSQL URL: {}", error::describe(&e)))
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .build()
            .map_err(|e| StoreError::Storage(format!("building the connection pool: {e}")))?;
        {
            let mut client = pool.get().await.map_err(pool_error)?;
            if options.migrate {
                schema::migrate(&mut client).await?;
            } else {
                schema::require_current(&client).await?;
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let updater = tokio::spawn(objects::run_updates(pool.clone(), rx));
        Ok(Self {
            pool,
            runtime: tokio::runtime::Handle::current(),
            prepared_statements: options.prepared_statements,
            updates: Mutex::new(Some(tx)),
            updater: Mutex::new(Some(updater)),
        })
    }

    /// Brings the schema at `url` up to date; returns the versions before and after.
    pub async fn migrate(url: &str) -> Result<(i64, i64), StoreError> {
        let (mut client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(pg_error("connecting to PostgreSQL"))?;
        let driver = tokio::spawn(connection);
        let before = schema::migrate(&mut client).await;
        drop(client);
        let _ = driver.await;
        Ok((before?, SCHEMA_VERSION))
    }

    /// Stops taking object updates, applies those queued, and closes the pool. Later calls
    /// fail with [`StoreError::Closed`]. Idempotent.
    pub async fn close(&self) {
        drop(
            self.updates
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let updater = self
            .updater
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(updater) = updater {
            let _ = updater.await;
        }
        self.pool.close();
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("pool", &self.pool.status())
            .finish_non_exhaustive()
    }
}

/// Inserts one delivery, claims its key and enqueues its job: one statement, so one round
/// trip and one (implicit) transaction.
async fn record(pool: Pool, delivery: NewDelivery, prepared: bool) -> Result<Recorded, StoreError> {
    let client = pool.get().await.map_err(pool_error)?;
    deliveries::record(&client, &delivery, prepared)
        .await
        .map_err(pg_error("recording a delivery"))
}

impl Store for PgStore {
    /// Runs in a task of its own from the moment of the call: dropping the future does not
    /// cancel the write. Resolves after the commit.
    fn record(&self, delivery: NewDelivery) -> BoxFuture<'_, Result<Recorded, StoreError>> {
        let task = self.runtime.spawn(record(
            self.pool.clone(),
            delivery,
            self.prepared_statements,
        ));
        Box::pin(async move { task.await.map_err(|_| StoreError::Closed)? })
    }

    fn list(
        &self,
        filter: DeliveryFilter,
    ) -> BoxFuture<'_, Result<Vec<DeliverySummary>, StoreError>> {
        Box::pin(async move { deliveries::list(&*self.client().await?, &filter).await })
    }

    fn get(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        Box::pin(async move { deliveries::get(&*self.client().await?, id).await })
    }

    fn keys(&self, filter: KeyFilter) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        Box::pin(async move { idempotency::list(&*self.client().await?, &filter).await })
    }

    fn lease_jobs(
        &self,
        now: UnixMillis,
        limit: u32,
        lease_ms: u64,
    ) -> BoxFuture<'_, Result<Vec<LeasedJob>, StoreError>> {
        Box::pin(async move { jobs::lease(&*self.client().await?, now, limit, lease_ms).await })
    }

    fn finish_job(
        &self,
        job: LeasedJob,
        attempt: AttemptRecord,
        outcome: JobOutcome,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client
                .transaction()
                .await
                .map_err(pg_error("finishing a job"))?;
            let finished = jobs::finish(&tx, &job, &attempt, &outcome, now)
                .await
                .map_err(pg_error("finishing a job"))?;
            tx.commit().await.map_err(pg_error("finishing a job"))?;
            Ok(finished)
        })
    }

    fn next_due(&self) -> BoxFuture<'_, Result<Option<UnixMillis>, StoreError>> {
        Box::pin(async move { jobs::next_due(&*self.client().await?).await })
    }

    fn attempts(&self, delivery: DeliveryId) -> BoxFuture<'_, Result<Vec<Attempt>, StoreError>> {
        Box::pin(async move { jobs::attempts(&*self.client().await?, delivery).await })
    }

    fn dead_letters(
        &self,
        filter: DeadLetterFilter,
    ) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        Box::pin(async move { jobs::dead_letters(&*self.client().await?, &filter).await })
    }

    fn redrive(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(self.resolve_dead(filter, true, now))
    }

    fn discard(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(self.resolve_dead(filter, false, now))
    }

    fn update_object(
        &self,
        machine: String,
        object_id: String,
        update: ObjectUpdate,
    ) -> BoxFuture<'static, Result<Option<ObjectChange>, StoreError>> {
        let (reply, answer) = oneshot::channel();
        let queued = match &*self.updates.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(queue) => queue
                .send(objects::Queued {
                    machine,
                    object_id,
                    update,
                    reply,
                })
                .map_err(|_| StoreError::Closed),
            None => Err(StoreError::Closed),
        };
        Box::pin(async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        })
    }

    fn objects(
        &self,
        filter: ObjectFilter,
    ) -> BoxFuture<'_, Result<Vec<ObjectRecord>, StoreError>> {
        Box::pin(async move { objects::list(&*self.client().await?, &filter).await })
    }

    fn timeline(&self, object_id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        Box::pin(async move { objects::timeline(&*self.client().await?, &object_id).await })
    }

    fn set_key_status(
        &self,
        scope: String,
        key: String,
        status: KeyStatus,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let client = self.client().await?;
            match idempotency::set_status(&client, &scope, &key, status).await? {
                true => Ok(()),
                false => Err(StoreError::Storage(format!(
                    "no idempotency key `{key}` in scope `{scope}`"
                ))),
            }
        })
    }
}

impl PgStore {
    async fn resolve_dead(
        &self,
        filter: DeadLetterFilter,
        redrive: bool,
        now: UnixMillis,
    ) -> Result<u64, StoreError> {
        let what = if redrive {
            "redriving dead letters"
        } else {
            "discarding dead letters"
        };
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error(what))?;
        let moved = jobs::resolve_dead(&tx, &filter, redrive, now)
            .await
            .map_err(pg_error(what))?;
        tx.commit().await.map_err(pg_error(what))?;
        Ok(moved)
    }
}
