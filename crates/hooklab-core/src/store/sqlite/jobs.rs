//! The outbox: `jobs` and the `attempts` each job's runs leave behind. A job is written in the
//! same transaction as the delivery it processes, so no acknowledged event is ever without its
//! job. Workers lease due jobs with a visibility timeout (a crashed worker's job becomes due
//! again when its lease expires), record each attempt, and move a job to `done`, back to
//! `ready` for a retry, or to `dead` (the dead-letter queue), updating the key's status in the
//! same transaction.

use super::connection::storage;
use crate::clock::UnixMillis;
use crate::store::headers;
use crate::store::{
    Attempt, AttemptRecord, DeadLetter, DeadLetterFilter, DeliveryId, JobId, JobOutcome, KeyStatus,
    LeasedJob, StoreError,
};
use rusqlite::types::Type;
use rusqlite::{Connection, Row, ToSql, params};

/// Schema version 3: the outbox and the attempts.
pub(super) const MIGRATION_V3: &str = "
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,                -- deliveries.id
    source      TEXT    NOT NULL,
    scope       TEXT,                            -- the idempotency key it processes, if any
    key         TEXT,
    state       TEXT    NOT NULL CHECK (state IN ('ready', 'leased', 'done', 'dead', 'discarded')),
    attempts    INTEGER NOT NULL DEFAULT 0,      -- leases taken so far
    run_at      INTEGER NOT NULL,                -- Unix ms: due from then (ready)
    lease_until INTEGER,                         -- Unix ms: the lease ends (leased)
    reason      TEXT,                            -- why it is dead
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX jobs_due       ON jobs (run_at)      WHERE state = 'ready';
CREATE INDEX jobs_leased    ON jobs (lease_until) WHERE state = 'leased';
CREATE INDEX jobs_dead      ON jobs (updated_at)  WHERE state = 'dead';
CREATE INDEX jobs_delivery  ON jobs (delivery_id);
CREATE TABLE attempts (
    id               INTEGER PRIMARY KEY,
    job_id           INTEGER NOT NULL,           -- jobs.id
    delivery_id      INTEGER NOT NULL,           -- deliveries.id
    attempt          INTEGER NOT NULL,
    started_at       INTEGER NOT NULL,
    duration_ms      INTEGER NOT NULL,
    target           TEXT,
    status           INTEGER,
    response_headers TEXT    NOT NULL,           -- headers.rs encoding
    response_body    BLOB    NOT NULL,           -- the first 64 KiB
    error            TEXT
) STRICT;
CREATE INDEX attempts_by_delivery ON attempts (delivery_id, id);
";

/// The most response-body bytes an attempt keeps.
pub(super) const MAX_RESPONSE_BODY: usize = 64 * 1024;

const INSERT: &str = "INSERT INTO jobs (delivery_id, source, scope, key, state, run_at, \
     created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 'ready', ?5, ?5, ?5)";

/// Due ready jobs, oldest first, read in the order of their partial index (no sort).
const DUE_READY: &str = "SELECT id FROM jobs WHERE state = 'ready' AND run_at <= ?1 \
     ORDER BY run_at LIMIT ?2";

/// Leases that expired (their worker died), oldest first, in index order.
const DUE_LEASED: &str = "SELECT id FROM jobs WHERE state = 'leased' AND lease_until <= ?1 \
     ORDER BY lease_until LIMIT ?2";

const LEASE_ONE: &str = "UPDATE jobs SET state = 'leased', lease_until = ?2, \
     attempts = attempts + 1, updated_at = ?1 WHERE id = ?3 \
     RETURNING id, delivery_id, attempts, source, scope, key";

const INSERT_ATTEMPT: &str = "INSERT INTO attempts (job_id, delivery_id, attempt, started_at, \
     duration_ms, target, status, response_headers, response_body, error) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

const FINISH: &str = "UPDATE jobs SET state = ?3, run_at = ?4, lease_until = NULL, \
     reason = ?5, updated_at = ?6 WHERE id = ?1 AND state = 'leased' AND attempts = ?2";

const KEY_STATUS: &str = "UPDATE idempotency_keys SET status = ?3 WHERE scope = ?1 AND key = ?2";

const SELECT_DEAD: &str = "SELECT j.id, j.delivery_id, j.source, d.event_id, d.event_type, \
     j.scope, j.key, j.reason, j.attempts, j.updated_at FROM jobs j \
     JOIN deliveries d ON d.id = j.delivery_id WHERE j.state = 'dead'";

const SELECT_ATTEMPTS: &str = "SELECT job_id, delivery_id, attempt, started_at, duration_ms, \
     target, status, response_headers, response_body, error FROM attempts \
     WHERE delivery_id = ?1 ORDER BY id";

/// Writes the job for delivery `id` (inside the delivery's own transaction).
pub(super) fn enqueue(
    conn: &Connection,
    delivery: DeliveryId,
    source: &str,
    key: Option<(&str, &str)>,
    at: UnixMillis,
) -> rusqlite::Result<JobId> {
    conn.prepare_cached(INSERT)?.insert(params![
        delivery,
        source,
        key.map(|k| k.0),
        key.map(|k| k.1),
        at.0
    ])
}

/// Leases up to `limit` due jobs until `now + lease_ms`: expired leases first (they are the
/// oldest work), then ready jobs by `run_at`. Each candidate list is read from its partial
/// index in order, so leasing costs the same whatever the queue's length.
pub(super) fn lease(
    conn: &Connection,
    now: UnixMillis,
    limit: u32,
    lease_ms: u64,
) -> rusqlite::Result<Vec<LeasedJob>> {
    let until = now
        .0
        .saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
    let mut ids: Vec<JobId> = conn
        .prepare_cached(DUE_LEASED)?
        .query_map(params![now.0, limit], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let room = limit.saturating_sub(u32::try_from(ids.len()).unwrap_or(u32::MAX));
    if room > 0 {
        let ready: Vec<JobId> = conn
            .prepare_cached(DUE_READY)?
            .query_map(params![now.0, room], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        ids.extend(ready);
    }
    let mut lease = conn.prepare_cached(LEASE_ONE)?;
    let mut jobs = Vec::with_capacity(ids.len());
    for id in ids {
        jobs.push(lease.query_row(params![now.0, until, id], |row| {
            Ok(LeasedJob {
                job: row.get(0)?,
                delivery: row.get(1)?,
                attempt: u32::try_from(row.get::<_, i64>(2)?).unwrap_or(u32::MAX),
                source: row.get(3)?,
                scope: row.get(4)?,
                key: row.get(5)?,
            })
        })?);
    }
    jobs.sort_by_key(|j| j.job);
    Ok(jobs)
}

/// Records the attempt and applies the outcome; `false` when the lease was lost.
pub(super) fn finish(
    conn: &Connection,
    job: &LeasedJob,
    attempt: &AttemptRecord,
    outcome: &JobOutcome,
    now: UnixMillis,
) -> rusqlite::Result<bool> {
    let body = &attempt.response_body[..attempt.response_body.len().min(MAX_RESPONSE_BODY)];
    conn.prepare_cached(INSERT_ATTEMPT)?.execute(params![
        job.job,
        job.delivery,
        job.attempt,
        attempt.started_at.0,
        i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX),
        attempt.target,
        attempt.status,
        headers::encode(&attempt.response_headers),
        body,
        attempt.error,
    ])?;
    let (state, run_at, reason, key_status) = match outcome {
        JobOutcome::Done => ("done", now, None, Some(KeyStatus::Completed)),
        JobOutcome::Retry { run_at } => ("ready", *run_at, None, None),
        JobOutcome::Dead { reason } => {
            ("dead", now, Some(reason.as_str()), Some(KeyStatus::Failed))
        }
    };
    let changed = conn.prepare_cached(FINISH)?.execute(params![
        job.job,
        job.attempt,
        state,
        run_at.0,
        reason,
        now.0
    ])?;
    if changed == 0 {
        return Ok(false);
    }
    if let (Some(status), Some(scope), Some(key)) = (key_status, &job.scope, &job.key) {
        conn.prepare_cached(KEY_STATUS)?
            .execute(params![scope, key, status.as_str()])?;
    }
    Ok(true)
}

/// When the next job becomes due: the earliest ready `run_at` or leased `lease_until`.
pub(super) fn next_due(conn: &Connection) -> Result<Option<UnixMillis>, StoreError> {
    let ready: Option<i64> = conn
        .query_row(
            "SELECT min(run_at) FROM jobs WHERE state = 'ready'",
            [],
            |r| r.get(0),
        )
        .map_err(storage("finding the next due job"))?;
    let leased: Option<i64> = conn
        .query_row(
            "SELECT min(lease_until) FROM jobs WHERE state = 'leased'",
            [],
            |r| r.get(0),
        )
        .map_err(storage("finding the next expiring lease"))?;
    Ok(match (ready, leased) {
        (Some(a), Some(b)) => Some(UnixMillis(a.min(b))),
        (a, b) => a.or(b).map(UnixMillis),
    })
}

/// Every attempt for a delivery, oldest first.
pub(super) fn attempts(
    conn: &Connection,
    delivery: DeliveryId,
) -> Result<Vec<Attempt>, StoreError> {
    let mut stmt = conn
        .prepare_cached(SELECT_ATTEMPTS)
        .map_err(storage("reading attempts"))?;
    let rows = stmt
        .query_map([delivery], attempt_from_row)
        .map_err(storage("reading attempts"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("reading attempts"))
}

fn attempt_from_row(row: &Row<'_>) -> rusqlite::Result<Attempt> {
    let header_text: String = row.get(7)?;
    let response_headers = headers::decode(&header_text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(7, Type::Text, Box::new(e)))?;
    Ok(Attempt {
        job: row.get(0)?,
        delivery: row.get(1)?,
        attempt: u32::try_from(row.get::<_, i64>(2)?).unwrap_or(u32::MAX),
        record: AttemptRecord {
            started_at: UnixMillis(row.get(3)?),
            duration_ms: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
            target: row.get(5)?,
            status: row.get(6)?,
            response_headers,
            response_body: row.get(8)?,
            error: row.get(9)?,
        },
    })
}

/// The `WHERE` conditions and arguments that select dead letters by `filter`.
fn dead_conditions(filter: &DeadLetterFilter) -> (String, Vec<Box<dyn ToSql>>) {
    let mut sql = String::new();
    let mut args: Vec<Box<dyn ToSql>> = Vec::new();
    if let Some(source) = &filter.source {
        sql.push_str(" AND j.source = ?");
        args.push(Box::new(source.clone()));
    }
    if let Some(jobs) = &filter.jobs {
        if jobs.is_empty() {
            sql.push_str(" AND 0");
        } else {
            sql.push_str(" AND j.id IN (");
            sql.push_str(&vec!["?"; jobs.len()].join(", "));
            sql.push(')');
            args.extend(jobs.iter().map(|j| Box::new(*j) as Box<dyn ToSql>));
        }
    }
    (sql, args)
}

/// The dead-letter queue, newest first.
pub(super) fn dead_letters(
    conn: &Connection,
    filter: &DeadLetterFilter,
) -> Result<Vec<DeadLetter>, StoreError> {
    let (conditions, mut args) = dead_conditions(filter);
    let limit = filter
        .limit
        .unwrap_or(super::deliveries::DEFAULT_LIMIT)
        .min(super::deliveries::MAX_LIMIT);
    args.push(Box::new(limit));
    let sql = format!("{SELECT_DEAD}{conditions} ORDER BY j.updated_at DESC, j.id DESC LIMIT ?");
    let mut stmt = conn
        .prepare(&sql)
        .map_err(storage("listing dead letters"))?;
    let params: Vec<&dyn ToSql> = args.iter().map(|a| a.as_ref()).collect();
    let rows = stmt
        .query_map(params.as_slice(), |row| {
            Ok(DeadLetter {
                job: row.get(0)?,
                delivery: row.get(1)?,
                source: row.get(2)?,
                event_id: row.get(3)?,
                event_type: row.get(4)?,
                scope: row.get(5)?,
                key: row.get(6)?,
                reason: row.get::<_, Option<String>>(7)?.unwrap_or_default(),
                attempts: u32::try_from(row.get::<_, i64>(8)?).unwrap_or(u32::MAX),
                dead_at: UnixMillis(row.get(9)?),
            })
        })
        .map_err(storage("listing dead letters"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("reading dead letters"))
}

/// Moves matching dead jobs to `ready` at `now` (and their keys to `processing`), or to
/// `discarded`. Returns how many jobs moved.
pub(super) fn resolve_dead(
    conn: &Connection,
    filter: &DeadLetterFilter,
    redrive: bool,
    now: UnixMillis,
) -> rusqlite::Result<u64> {
    let (conditions, mut args) = dead_conditions(filter);
    let state = if redrive { "ready" } else { "discarded" };
    let sql = format!(
        "UPDATE jobs AS j SET state = '{state}', run_at = ?, reason = CASE WHEN ?  THEN NULL \
         ELSE reason END, updated_at = ? WHERE j.state = 'dead'{conditions} \
         RETURNING scope, key"
    );
    let mut all: Vec<Box<dyn ToSql>> = vec![Box::new(now.0), Box::new(redrive), Box::new(now.0)];
    all.append(&mut args);
    let params: Vec<&dyn ToSql> = all.iter().map(|a| a.as_ref()).collect();
    let keys: Vec<(Option<String>, Option<String>)> = conn
        .prepare(&sql)?
        .query_map(params.as_slice(), |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if redrive {
        for (scope, key) in &keys {
            if let (Some(scope), Some(key)) = (scope, key) {
                conn.prepare_cached(KEY_STATUS)?.execute(params![
                    scope,
                    key,
                    KeyStatus::Processing.as_str()
                ])?;
            }
        }
    }
    Ok(keys.len() as u64)
}
