//! The schema and its migrations: the same tables and columns as the SQLite engine
//! (`hooklab_core::store::sqlite`), in PostgreSQL's types (`BIGINT` for SQLite's `INTEGER`,
//! `BYTEA` for `BLOB`, `BOOLEAN` for the 0/1 flag), so export/import maps column to column and
//! the schema version means the same thing on both engines.
//!
//! Every pending step and the version bump run in ONE transaction (PostgreSQL's DDL is
//! transactional) that first takes an advisory lock, so replicas starting together migrate
//! once and a failed step leaves the previous schema intact. A database written by a newer
//! Hooklab is refused, never downgraded. New steps are appended, never made by editing one.

use crate::error::pg_error;
use hooklab_core::store::StoreError;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

/// One step of the schema's history; entry `i` takes the database to version `i + 1`.
struct Migration {
    /// Why this step exists, for error messages.
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "create deliveries",
        sql: DELIVERIES_V1,
    },
    Migration {
        name: "idempotency keys",
        sql: IDEMPOTENCY_V2,
    },
    Migration {
        name: "outbox jobs and attempts",
        sql: JOBS_V3,
    },
    Migration {
        name: "objects and timelines",
        sql: OBJECTS_V4,
    },
];

/// The schema version this build writes and reads: the same number as SQLite's.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Any fixed number: the advisory lock that serialises migrations across replicas.
const MIGRATION_LOCK: i64 = 0x0068_6f6f_6b6c_6162; // "hooklab" in ASCII

/// Version 1: the raw event log. `BIGINT GENERATED … AS IDENTITY` never reuses an id. Ids
/// follow insert order; with several replicas a smaller id may become visible a moment after
/// a larger one (transactions commit in their own order), so a live feed pages by id and
/// re-reads a short window rather than trusting "everything below the last id is seen".
const DELIVERIES_V1: &str = "
CREATE TABLE deliveries (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at     BIGINT  NOT NULL,                -- Unix milliseconds, as passed in
    source          TEXT    NOT NULL,
    provider        TEXT,
    method          TEXT    NOT NULL,
    path            TEXT    NOT NULL,
    query           TEXT,
    headers         TEXT    NOT NULL,                -- JSON [[name, value]…], as SQLite
    body            BYTEA   NOT NULL,                -- exactly the bytes received
    body_size       BIGINT  NOT NULL CHECK (body_size >= 0),
    body_refused    BOOLEAN NOT NULL,
    remote_addr     TEXT,
    verdict         TEXT    NOT NULL CHECK (verdict IN ('valid', 'invalid', 'unsigned')),
    reason          TEXT,
    verdict_json    TEXT    NOT NULL,
    event_id        TEXT,
    event_type      TEXT,
    object_id       TEXT,
    idempotency_key TEXT,
    provider_time   BIGINT,
    response_status INTEGER NOT NULL
);
CREATE INDEX deliveries_by_source  ON deliveries (source, id);
CREATE INDEX deliveries_by_verdict ON deliveries (verdict, id);
CREATE INDEX deliveries_by_event   ON deliveries (event_id) WHERE event_id IS NOT NULL;
";

/// Version 2: the keys, unique per `(scope, key)` by the primary key; each delivery's link to
/// the first one with its key.
const IDEMPOTENCY_V2: &str = "
CREATE TABLE idempotency_keys (
    scope            TEXT   NOT NULL,
    key              TEXT   NOT NULL,
    status           TEXT   NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
    first_delivery   BIGINT NOT NULL,
    current_delivery BIGINT NOT NULL,
    deliveries       BIGINT NOT NULL CHECK (deliveries >= 1),
    first_seen       BIGINT NOT NULL,
    last_seen        BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_by_last_seen ON idempotency_keys (last_seen);
ALTER TABLE deliveries ADD COLUMN duplicate_of BIGINT;
CREATE INDEX deliveries_duplicates ON deliveries (duplicate_of) WHERE duplicate_of IS NOT NULL;
";

/// Version 3: the outbox and the attempts. The partial indexes are what `FOR UPDATE SKIP
/// LOCKED` walks, so leasing costs the same whatever the table's length.
const JOBS_V3: &str = "
CREATE TABLE jobs (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id BIGINT NOT NULL,
    source      TEXT   NOT NULL,
    scope       TEXT,
    key         TEXT,
    state       TEXT   NOT NULL CHECK (state IN ('ready', 'leased', 'done', 'dead', 'discarded')),
    attempts    BIGINT NOT NULL DEFAULT 0,
    run_at      BIGINT NOT NULL,
    lease_until BIGINT,
    reason      TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX jobs_due      ON jobs (run_at)      WHERE state = 'ready';
CREATE INDEX jobs_leased   ON jobs (lease_until) WHERE state = 'leased';
CREATE INDEX jobs_dead     ON jobs (updated_at)  WHERE state = 'dead';
CREATE INDEX jobs_delivery ON jobs (delivery_id);
CREATE TABLE attempts (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id           BIGINT NOT NULL,
    delivery_id      BIGINT NOT NULL,
    attempt          BIGINT NOT NULL,
    started_at       BIGINT NOT NULL,
    duration_ms      BIGINT NOT NULL,
    target           TEXT,
    status           INTEGER,
    response_headers TEXT   NOT NULL,
    response_body    BYTEA  NOT NULL,
    error            TEXT
);
CREATE INDEX attempts_by_delivery ON attempts (delivery_id, id);
";

/// Version 4: objects and their timelines.
const OBJECTS_V4: &str = "
CREATE TABLE objects (
    machine    TEXT   NOT NULL,
    object_id  TEXT   NOT NULL,
    state      TEXT,
    state_time BIGINT,
    flags      TEXT   NOT NULL,
    data       TEXT   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (machine, object_id)
);
CREATE INDEX objects_by_update ON objects (updated_at);
CREATE TABLE timeline (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    machine       TEXT   NOT NULL,
    object_id     TEXT   NOT NULL,
    from_state    TEXT,
    to_state      TEXT,
    delivery_id   BIGINT,
    provider_time BIGINT,
    received_at   BIGINT,
    decision      TEXT   NOT NULL,
    reason        TEXT   NOT NULL,
    at            BIGINT NOT NULL
);
CREATE INDEX timeline_by_object ON timeline (object_id, id);
";

/// Brings the database up to [`SCHEMA_VERSION`], atomically; a no-op when it is current.
/// Returns the version found before.
pub(crate) async fn migrate(client: &mut Client) -> Result<i64, StoreError> {
    let tx = client
        .transaction()
        .await
        .map_err(pg_error("starting the migration"))?;
    tx.execute_typed(
        "SELECT pg_advisory_xact_lock($1)",
        &[(&MIGRATION_LOCK, Type::INT8)],
    )
    .await
    .map_err(pg_error("locking the schema"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS hooklab_schema (
             singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
             version   BIGINT  NOT NULL
         )",
    )
    .await
    .map_err(pg_error("creating the schema version table"))?;
    let found: i64 = tx
        .query_typed_opt("SELECT version FROM hooklab_schema", &[])
        .await
        .map_err(pg_error("reading the schema version"))?
        .map(|row| row.get(0))
        .unwrap_or(0);
    check_not_newer(found)?;
    let start = usize::try_from(found).unwrap_or(0);
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(start) {
        tx.batch_execute(migration.sql).await.map_err(|e| {
            StoreError::Storage(format!(
                "migration {} ({}) failed: {}",
                index + 1,
                migration.name,
                crate::error::describe(&e)
            ))
        })?;
    }
    if found != SCHEMA_VERSION {
        tx.execute_typed(
            "INSERT INTO hooklab_schema (version) VALUES ($1)
             ON CONFLICT (singleton) DO UPDATE SET version = excluded.version",
            &[(&SCHEMA_VERSION, Type::INT8)],
        )
        .await
        .map_err(pg_error("recording the schema version"))?;
    }
    tx.commit()
        .await
        .map_err(pg_error("committing the migration"))?;
    Ok(found)
}

/// For a store opened without migrating: the schema must be exactly this build's.
pub(crate) async fn require_current(client: &Client) -> Result<(), StoreError> {
    let exists: bool = client
        .query_typed_one("SELECT to_regclass('hooklab_schema') IS NOT NULL", &[])
        .await
        .map_err(pg_error("reading the schema version"))?
        .get(0);
    let found: i64 = if exists {
        client
            .query_typed_opt("SELECT version FROM hooklab_schema", &[])
            .await
            .map_err(pg_error("reading the schema version"))?
            .map(|row| row.get(0))
            .unwrap_or(0)
    } else {
        0
    };
    check_not_newer(found)?;
    if found < SCHEMA_VERSION {
        return Err(StoreError::Storage(format!(
            "the database schema version {found} is older than this Hooklab's \
             ({SCHEMA_VERSION}); run `hooklab migrate --database URL`"
        )));
    }
    Ok(())
}

fn check_not_newer(found: i64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}
