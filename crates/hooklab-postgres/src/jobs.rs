//! The outbox (`jobs`, `attempts`), as on SQLite: a job is written in its delivery's
//! statement (`deliveries::RECORD`); workers of every replica lease due jobs with `SELECT … FOR UPDATE SKIP
//! LOCKED` (two replicas never lease the same job, and neither waits for the other's rows),
//! with a visibility timeout: a crashed replica's job is due again once its lease expires.
//! Finishing checks that the lease is still this attempt's, in the same transaction that
//! records the attempt and moves the job and its key.

use crate::deliveries::limit;
use crate::error::pg_error;
use crate::idempotency::SET_STATUS;
use crate::sql::{Param, Params};
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::headers;
use hooklab_core::store::{
    Attempt, AttemptRecord, DeadLetter, DeadLetterFilter, DeliveryId, JobOutcome, KeyStatus,
    LeasedJob, StoreError,
};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row, Transaction};

/// The most response-body bytes an attempt keeps (as SQLite).
const MAX_RESPONSE_BODY: usize = 64 * 1024;

/// Expired leases first (the oldest work), then ready jobs by `run_at`, each read from its
/// partial index and locked with `SKIP LOCKED`; rows another replica is leasing right now are
/// passed over, never waited for.
const LEASE: &str = "WITH expired AS ( \
       SELECT id, 0 AS rank, lease_until AS due FROM jobs \
       WHERE state = 'leased' AND lease_until <= $1 ORDER BY lease_until LIMIT $3 \
       FOR UPDATE SKIP LOCKED), \
     ready AS ( \
       SELECT id, 1 AS rank, run_at AS due FROM jobs \
       WHERE state = 'ready' AND run_at <= $1 ORDER BY run_at LIMIT $3 \
       FOR UPDATE SKIP LOCKED), \
     picked AS ( \
       SELECT id FROM (SELECT * FROM expired UNION ALL SELECT * FROM ready) due_jobs \
       ORDER BY rank, due LIMIT $3) \
     UPDATE jobs SET state = 'leased', lease_until = $2, attempts = attempts + 1, \
       updated_at = $1 \
     FROM picked WHERE jobs.id = picked.id \
     RETURNING jobs.id, jobs.delivery_id, jobs.attempts, jobs.source, jobs.scope, jobs.key";

const INSERT_ATTEMPT: &str = "INSERT INTO attempts (job_id, delivery_id, attempt, started_at, \
     duration_ms, target, status, response_headers, response_body, error) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

const FINISH: &str = "UPDATE jobs SET state = $3, run_at = $4, lease_until = NULL, \
     reason = $5, updated_at = $6 WHERE id = $1 AND state = 'leased' AND attempts = $2";

const SELECT_DEAD: &str = "SELECT j.id, j.delivery_id, j.source, d.event_id, d.event_type, \
     j.scope, j.key, j.reason, j.attempts, j.updated_at FROM jobs j \
     JOIN deliveries d ON d.id = j.delivery_id";

const SELECT_ATTEMPTS: &str = "SELECT job_id, delivery_id, attempt, started_at, duration_ms, \
     target, status, response_headers, response_body, error FROM attempts \
     WHERE delivery_id = $1 ORDER BY id";

/// Leases up to `limit` due jobs until `now + lease_ms` in one statement.
pub(crate) async fn lease(
    client: &Client,
    now: UnixMillis,
    limit: u32,
    lease_ms: u64,
) -> Result<Vec<LeasedJob>, StoreError> {
    let until = now
        .0
        .saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
    let limit = i64::from(limit);
    let rows = client
        .query_typed(
            LEASE,
            &[
                (&now.0, Type::INT8),
                (&until, Type::INT8),
                (&limit, Type::INT8),
            ],
        )
        .await
        .map_err(pg_error("leasing jobs"))?;
    let mut jobs: Vec<LeasedJob> = rows
        .iter()
        .map(|row| LeasedJob {
            job: row.get(0),
            delivery: row.get(1),
            attempt: u32::try_from(row.get::<_, i64>(2)).unwrap_or(u32::MAX),
            source: row.get(3),
            scope: row.get(4),
            key: row.get(5),
        })
        .collect();
    jobs.sort_by_key(|j| j.job);
    Ok(jobs)
}

/// Records the attempt and applies the outcome; `false` when the lease was lost (the attempt
/// is still recorded: it happened).
pub(crate) async fn finish(
    tx: &Transaction<'_>,
    job: &LeasedJob,
    attempt: &AttemptRecord,
    outcome: &JobOutcome,
    now: UnixMillis,
) -> Result<bool, tokio_postgres::Error> {
    let body = &attempt.response_body[..attempt.response_body.len().min(MAX_RESPONSE_BODY)];
    let number = i64::from(job.attempt);
    let duration = i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX);
    let status = attempt.status.map(i32::from);
    let response_headers = headers::encode(&attempt.response_headers);
    tx.execute_typed(
        INSERT_ATTEMPT,
        &[
            (&job.job, Type::INT8),
            (&job.delivery, Type::INT8),
            (&number, Type::INT8),
            (&attempt.started_at.0, Type::INT8),
            (&duration, Type::INT8),
            (&attempt.target, Type::TEXT),
            (&status, Type::INT4),
            (&response_headers, Type::TEXT),
            (&body, Type::BYTEA),
            (&attempt.error, Type::TEXT),
        ],
    )
    .await?;
    let (state, run_at, reason, key_status) = match outcome {
        JobOutcome::Done => ("done", now, None, Some(KeyStatus::Completed)),
        JobOutcome::Retry { run_at } => ("ready", *run_at, None, None),
        JobOutcome::Dead { reason } => {
            ("dead", now, Some(reason.as_str()), Some(KeyStatus::Failed))
        }
    };
    let changed = tx
        .execute_typed(
            FINISH,
            &[
                (&job.job, Type::INT8),
                (&number, Type::INT8),
                (&state, Type::TEXT),
                (&run_at.0, Type::INT8),
                (&reason, Type::TEXT),
                (&now.0, Type::INT8),
            ],
        )
        .await?;
    if changed == 0 {
        return Ok(false);
    }
    if let (Some(status), Some(scope), Some(key)) = (key_status, &job.scope, &job.key) {
        tx.execute_typed(
            SET_STATUS,
            &[
                (scope, Type::TEXT),
                (key, Type::TEXT),
                (&status.as_str(), Type::TEXT),
            ],
        )
        .await?;
    }
    Ok(true)
}

/// When the next job becomes due: the earliest ready `run_at` or leased `lease_until`.
pub(crate) async fn next_due(client: &Client) -> Result<Option<UnixMillis>, StoreError> {
    let row = client
        .query_typed_one(
            "SELECT LEAST((SELECT min(run_at) FROM jobs WHERE state = 'ready'), \
                          (SELECT min(lease_until) FROM jobs WHERE state = 'leased'))",
            &[],
        )
        .await
        .map_err(pg_error("finding the next due job"))?;
    Ok(row.get::<_, Option<i64>>(0).map(UnixMillis))
}

/// Every attempt for a delivery, oldest first.
pub(crate) async fn attempts(
    client: &Client,
    delivery: DeliveryId,
) -> Result<Vec<Attempt>, StoreError> {
    let rows = client
        .query_typed(SELECT_ATTEMPTS, &[(&delivery, Type::INT8)])
        .await
        .map_err(pg_error("reading attempts"))?;
    rows.iter().map(attempt_from_row).collect()
}

fn attempt_from_row(row: &Row) -> Result<Attempt, StoreError> {
    let response_headers = headers::decode(row.get(7))
        .map_err(|e| StoreError::Storage(format!("reading attempts: damaged headers: {e}")))?;
    Ok(Attempt {
        job: row.get(0),
        delivery: row.get(1),
        attempt: u32::try_from(row.get::<_, i64>(2)).unwrap_or(u32::MAX),
        record: AttemptRecord {
            started_at: UnixMillis(row.get(3)),
            duration_ms: u64::try_from(row.get::<_, i64>(4)).unwrap_or(0),
            target: row.get(5),
            status: row
                .get::<_, Option<i32>>(6)
                .and_then(|s| u16::try_from(s).ok()),
            response_headers,
            response_body: row.get(8),
            error: row.get(9),
        },
    })
}

/// Adds the dead-letter filter's conditions (`j` is the jobs table).
fn dead_conditions(params: &mut Params, filter: &DeadLetterFilter) {
    params.raw_condition("j.state = 'dead'");
    if let Some(source) = &filter.source {
        params.condition("j.source = ", Param::Text(source.clone()));
    }
    if let Some(jobs) = &filter.jobs {
        let placeholder = params.bind(Param::Ints(jobs.clone()));
        params.raw_condition(&format!("j.id = ANY({placeholder})"));
    }
}

/// The dead-letter queue, newest first.
pub(crate) async fn dead_letters(
    client: &Client,
    filter: &DeadLetterFilter,
) -> Result<Vec<DeadLetter>, StoreError> {
    let mut params = Params::new(SELECT_DEAD);
    dead_conditions(&mut params, filter);
    params.tail(
        " ORDER BY j.updated_at DESC, j.id DESC LIMIT ",
        Param::Int(limit(filter.limit)),
    );
    let rows = params
        .query(client)
        .await
        .map_err(pg_error("listing dead letters"))?;
    Ok(rows
        .iter()
        .map(|row| DeadLetter {
            job: row.get(0),
            delivery: row.get(1),
            source: row.get(2),
            event_id: row.get(3),
            event_type: row.get(4),
            scope: row.get(5),
            key: row.get(6),
            reason: row.get::<_, Option<String>>(7).unwrap_or_default(),
            attempts: u32::try_from(row.get::<_, i64>(8)).unwrap_or(u32::MAX),
            dead_at: UnixMillis(row.get(9)),
        })
        .collect())
}

/// Moves matching dead jobs to `ready` at `now` (and their keys to `processing`), or to
/// `discarded`. Returns how many jobs moved.
pub(crate) async fn resolve_dead(
    tx: &Transaction<'_>,
    filter: &DeadLetterFilter,
    redrive: bool,
    now: UnixMillis,
) -> Result<u64, tokio_postgres::Error> {
    let state = if redrive { "ready" } else { "discarded" };
    let mut params = Params::new("UPDATE jobs AS j SET state = ");
    let state = params.bind(Param::Text(state.into()));
    params.push(&state);
    let at = params.bind(Param::Int(now.0));
    let clear = params.bind(Param::Bool(redrive));
    params.push(&format!(
        ", run_at = {at}, updated_at = {at}, \
         reason = CASE WHEN {clear} THEN NULL ELSE reason END"
    ));
    dead_conditions(&mut params, filter);
    params.push(" RETURNING scope, key");
    let rows = params.query_tx(tx).await?;
    if redrive {
        for row in &rows {
            let (scope, key): (Option<String>, Option<String>) = (row.get(0), row.get(1));
            if let (Some(scope), Some(key)) = (scope, key) {
                tx.execute_typed(
                    SET_STATUS,
                    &[
                        (&scope, Type::TEXT),
                        (&key, Type::TEXT),
                        (&KeyStatus::Processing.as_str(), Type::TEXT),
                    ],
                )
                .await?;
            }
        }
    }
    Ok(rows.len() as u64)
}
