//! Idempotency by a constraint: `idempotency_keys` has a primary key on `(scope, key)`, and a
//! delivery claims its key with `INSERT … ON CONFLICT DO UPDATE … RETURNING` in the same
//! transaction as its raw record. The insert that loses the race learns it is a duplicate from
//! what the statement returns; nothing checks first and inserts later.
//!
//! `current_delivery` is the delivery whose processing the status describes: the first one,
//! or the next delivery after a `failed` status (which is processed again). A delivery is to
//! be processed exactly when `current_delivery` comes back as its own id.

use super::connection::storage;
use crate::clock::UnixMillis;
use crate::store::{
    DeliveryId, IdempotencyClaim, IdempotencyRecord, KeyFilter, KeyOutcome, KeyStatus, StoreError,
};
use rusqlite::types::Type;
use rusqlite::{Connection, Row, ToSql, params};

/// Schema version 2: the keys, and each delivery's link to the first one with its key.
pub(super) const MIGRATION_V2: &str = "
CREATE TABLE idempotency_keys (
    scope            TEXT    NOT NULL,                 -- the provider id
    key              TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
    first_delivery   INTEGER NOT NULL,                 -- deliveries.id
    current_delivery INTEGER NOT NULL,                 -- deliveries.id
    deliveries       INTEGER NOT NULL CHECK (deliveries >= 1),
    first_seen       INTEGER NOT NULL,                 -- Unix milliseconds
    last_seen        INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;
ALTER TABLE deliveries ADD COLUMN duplicate_of INTEGER;      -- deliveries.id of the first
CREATE INDEX deliveries_duplicates ON deliveries (duplicate_of) WHERE duplicate_of IS NOT NULL;
";

const CLAIM: &str = "INSERT INTO idempotency_keys \
     (scope, key, status, first_delivery, current_delivery, deliveries, first_seen, last_seen) \
     VALUES (?1, ?2, ?3, ?4, ?4, 1, ?5, ?5) \
     ON CONFLICT (scope, key) DO UPDATE SET \
       deliveries = deliveries + 1, \
       last_seen = max(last_seen, excluded.last_seen), \
       current_delivery = CASE WHEN status = 'failed' THEN excluded.current_delivery \
                               ELSE current_delivery END, \
       status = CASE WHEN status = 'failed' THEN excluded.status ELSE status END \
     RETURNING first_delivery, current_delivery, deliveries, status";

const MARK_DUPLICATE: &str = "UPDATE deliveries SET duplicate_of = ?1 WHERE id = ?2";

const SET_STATUS: &str = "UPDATE idempotency_keys SET status = ?3 WHERE scope = ?1 AND key = ?2";

const SELECT: &str = "SELECT scope, key, status, first_delivery, deliveries, first_seen, \
     last_seen FROM idempotency_keys";

/// Claims `claim.key` for delivery `id` (already inserted in this transaction).
pub(super) fn claim(
    conn: &Connection,
    id: DeliveryId,
    claim: &IdempotencyClaim,
    at: UnixMillis,
) -> rusqlite::Result<KeyOutcome> {
    let mut stmt = conn.prepare_cached(CLAIM)?;
    let (first, current, deliveries, status): (i64, i64, i64, String) = stmt.query_row(
        params![claim.scope, claim.key, claim.status.as_str(), id, at.0],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
    )?;
    let duplicate = first != id;
    if duplicate {
        conn.prepare_cached(MARK_DUPLICATE)?
            .execute(params![first, id])?;
    }
    Ok(KeyOutcome {
        first_delivery: first,
        duplicate,
        process: current == id,
        deliveries: u64::try_from(deliveries).unwrap_or(0),
        status: KeyStatus::parse(&status).unwrap_or(KeyStatus::Processing),
    })
}

/// Sets a key's status; an unknown key is an error (the caller names a key it saw).
pub(super) fn set_status(
    conn: &Connection,
    scope: &str,
    key: &str,
    status: KeyStatus,
) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(SET_STATUS)?
        .execute(params![scope, key, status.as_str()])?;
    Ok(changed > 0)
}

/// Keys matching `filter`, most recently seen first.
pub(super) fn list(
    conn: &Connection,
    filter: &KeyFilter,
) -> Result<Vec<IdempotencyRecord>, StoreError> {
    let mut sql = String::from(SELECT);
    let mut args: Vec<&dyn ToSql> = Vec::with_capacity(3);
    let status = filter.status.map(KeyStatus::as_str);
    let mut conditions = Vec::new();
    if let Some(scope) = &filter.scope {
        conditions.push("scope = ?");
        args.push(scope);
    }
    if let Some(status) = &status {
        conditions.push("status = ?");
        args.push(status);
    }
    if filter.duplicates_only {
        conditions.push("deliveries > 1");
    }
    if let Some(key) = &filter.key {
        conditions.push("key = ?");
        args.push(key);
    }
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    sql.push_str(" ORDER BY last_seen DESC LIMIT ?");
    let limit = filter
        .limit
        .unwrap_or(super::deliveries::DEFAULT_LIMIT)
        .min(super::deliveries::MAX_LIMIT);
    args.push(&limit);
    let mut stmt = conn
        .prepare_cached(&sql)
        .map_err(storage("listing idempotency keys"))?;
    let rows = stmt
        .query_map(args.as_slice(), record_from_row)
        .map_err(storage("listing idempotency keys"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("reading idempotency keys"))
}

fn record_from_row(row: &Row<'_>) -> rusqlite::Result<IdempotencyRecord> {
    let status: String = row.get(2)?;
    Ok(IdempotencyRecord {
        scope: row.get(0)?,
        key: row.get(1)?,
        status: KeyStatus::parse(&status).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(2, Type::Text, "unknown key status".into())
        })?,
        first_delivery: row.get(3)?,
        deliveries: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
        first_seen: UnixMillis(row.get(5)?),
        last_seen: UnixMillis(row.get(6)?),
    })
}
