//! The `deliveries` table: the raw event log. One row per request exactly as it arrived (body
//! bytes, headers in order, query as sent) with its verdict and what the provider said about
//! itself. Rows are only ever appended; business tables that come later (idempotency keys,
//! outbox jobs, attempts, timelines, dead letters) point at `deliveries.id`, so a mapping bug
//! can be fixed by reprocessing this log.

use super::connection::storage;
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::store::headers;
use crate::store::{
    Delivery, DeliveryFilter, DeliveryId, DeliverySummary, KeyStatus, NewDelivery, StoreError,
    verdict_from_json, verdict_to_json,
};
use crate::verdict::Status;
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, ToSql, params};

/// Schema version 1. `AUTOINCREMENT` so an id is never reused, even after retention deletes
/// the newest rows: ids are cursors for paging and the UI's live feed, and later tables
/// reference them. `STRICT` so a wrong type is an error, not a silent conversion. Listing
/// newest-first walks the primary key backwards, so `id DESC` needs no index of its own.
pub(super) const MIGRATION_V1: &str = "
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at     INTEGER NOT NULL,                -- Unix milliseconds, as passed in
    source          TEXT    NOT NULL,                -- first path segment, even if unknown
    provider        TEXT,                            -- ProviderId; NULL for an unknown source
    method          TEXT    NOT NULL,
    path            TEXT    NOT NULL,
    query           TEXT,                            -- as sent, without '?'
    headers         TEXT    NOT NULL,                -- JSON [[name, value]…], see headers.rs
    body            BLOB    NOT NULL,                -- exactly the bytes received
    body_size       INTEGER NOT NULL CHECK (body_size >= 0),
    body_refused    INTEGER NOT NULL CHECK (body_refused IN (0, 1)),
    remote_addr     TEXT,
    verdict         TEXT    NOT NULL CHECK (verdict IN ('valid', 'invalid', 'unsigned')),
    reason          TEXT,                            -- Reason::as_str, NULL when valid
    verdict_json    TEXT    NOT NULL,                -- the whole Verdict, with its diagnosis
    event_id        TEXT,
    event_type      TEXT,
    object_id       TEXT,
    idempotency_key TEXT,
    provider_time   INTEGER,                         -- Unix milliseconds, the provider's clock
    response_status INTEGER NOT NULL
) STRICT;
CREATE INDEX deliveries_by_source  ON deliveries (source, id);
CREATE INDEX deliveries_by_verdict ON deliveries (verdict, id);
CREATE INDEX deliveries_by_event   ON deliveries (event_id) WHERE event_id IS NOT NULL;
";

const INSERT: &str = "INSERT INTO deliveries (received_at, source, provider, method, path, \
     query, headers, body, body_size, body_refused, remote_addr, verdict, reason, verdict_json, \
     event_id, event_type, object_id, idempotency_key, provider_time, response_status) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, \
     ?19, ?20)";

const SELECT_ONE: &str = "SELECT id, received_at, source, provider, method, path, query, \
     headers, body, body_size, body_refused, remote_addr, verdict_json, event_id, event_type, \
     object_id, idempotency_key, provider_time, response_status, duplicate_of FROM deliveries \
     WHERE id = ?1";

const SELECT_SUMMARY: &str = "SELECT id, received_at, source, provider, method, path, query, \
     verdict, reason, event_id, event_type, response_status, body_size, idempotency_key, \
     duplicate_of FROM deliveries";

/// Full-text search: each column that holds text, and the body's bytes read as text (`LIKE`
/// is case-insensitive for ASCII and compares other bytes exactly), then the id.
const SEARCH: &str = "(path LIKE ? ESCAPE '\\' OR event_id LIKE ? ESCAPE '\\' \
     OR event_type LIKE ? ESCAPE '\\' OR idempotency_key LIKE ? ESCAPE '\\' \
     OR headers LIKE ? ESCAPE '\\' OR CAST(body AS TEXT) LIKE ? ESCAPE '\\' OR id = ?)";
/// How many times [`SEARCH`] takes the pattern (then the id once).
const SEARCH_ARGS: usize = 6;

/// Rows a listing returns when the filter names no limit.
pub(super) const DEFAULT_LIMIT: u32 = 50;
/// The most rows one listing returns, whatever the filter asks.
pub(super) const MAX_LIMIT: u32 = 10_000;

/// Appends one delivery inside the caller's transaction and returns its id.
///
/// Nothing about the request itself can make this fail: a declared body size beyond
/// `i64::MAX` (only a forged `Content-Length` can claim one) is stored as `i64::MAX`, so one
/// hostile request cannot fail the neighbours that share its group commit.
pub(super) fn insert(conn: &Connection, d: &NewDelivery) -> rusqlite::Result<DeliveryId> {
    let mut stmt = conn.prepare_cached(INSERT)?;
    let m = &d.metadata;
    stmt.insert(params![
        d.received_at.0,
        d.source,
        d.provider.map(|p| p.as_str()),
        d.method,
        d.path,
        d.query,
        headers::encode(&d.headers),
        d.body,
        i64::try_from(d.body_size).unwrap_or(i64::MAX),
        d.body_refused,
        d.remote_addr,
        d.verdict.verdict.as_str(),
        d.verdict.reason.map(|r| r.as_str()),
        verdict_to_json(&d.verdict),
        m.event_id,
        m.event_type,
        m.object_id,
        m.idempotency_key,
        m.provider_time.map(|t| t.0),
        d.response_status,
    ])
}

/// One delivery, whole.
pub(super) fn get(conn: &Connection, id: DeliveryId) -> Result<Option<Delivery>, StoreError> {
    let mut stmt = conn
        .prepare_cached(SELECT_ONE)
        .map_err(storage("reading a delivery"))?;
    stmt.query_row([id], delivery_from_row)
        .optional()
        .map_err(|e| StoreError::Storage(format!("reading delivery {id}: {e}")))
}

/// Deliveries matching `filter`, newest first. Each combination of filters is its own SQL text
/// (so each can use its index and stays in the statement cache), never `? IS NULL OR …`.
pub(super) fn list(
    conn: &Connection,
    filter: &DeliveryFilter,
) -> Result<Vec<DeliverySummary>, StoreError> {
    let mut sql = String::from(SELECT_SUMMARY);
    let mut args: Vec<&dyn ToSql> = Vec::with_capacity(12);
    let verdict = filter.verdict.map(Status::as_str);
    let key_status = filter.key_status.map(KeyStatus::as_str);
    let conditions = [
        (
            "source = ?",
            filter.source.as_ref().map(|s| s as &dyn ToSql),
        ),
        ("verdict = ?", verdict.as_ref().map(|v| v as &dyn ToSql)),
        ("id < ?", filter.before.as_ref().map(|b| b as &dyn ToSql)),
        (
            "event_type = ?",
            filter.event_type.as_ref().map(|t| t as &dyn ToSql),
        ),
        (
            "duplicate_of = ?",
            filter.duplicate_of.as_ref().map(|d| d as &dyn ToSql),
        ),
        (
            "EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.scope = deliveries.provider \
             AND k.key = deliveries.idempotency_key AND deliveries.verdict <> 'invalid' AND k.status = ?)",
            key_status.as_ref().map(|s| s as &dyn ToSql),
        ),
    ];
    let mut written = 0;
    let mut push = |sql: &mut String, condition: &str| {
        sql.push_str(if written == 0 { " WHERE " } else { " AND " });
        sql.push_str(condition);
        written += 1;
    };
    for (condition, value) in conditions {
        if let Some(value) = value {
            push(&mut sql, condition);
            args.push(value);
        }
    }
    if filter.duplicates_only {
        push(&mut sql, "duplicate_of IS NOT NULL");
    }
    let pattern = filter.search.as_deref().map(crate::store::like_pattern);
    let search_id = filter
        .search
        .as_deref()
        .and_then(|s| s.trim().parse::<i64>().ok());
    if let Some(pattern) = &pattern {
        push(&mut sql, SEARCH);
        for _ in 0..SEARCH_ARGS {
            args.push(pattern);
        }
        args.push(&search_id);
    }
    sql.push_str(" ORDER BY id DESC LIMIT ?");
    let limit = filter.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
    args.push(&limit);

    let mut stmt = conn
        .prepare_cached(&sql)
        .map_err(storage("listing deliveries"))?;
    let rows = stmt
        .query_map(args.as_slice(), summary_from_row)
        .map_err(storage("listing deliveries"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("listing deliveries"))
}

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<DeliverySummary> {
    Ok(DeliverySummary {
        id: row.get(0)?,
        received_at: UnixMillis(row.get(1)?),
        source: row.get(2)?,
        provider: provider(row.get(3)?),
        method: row.get(4)?,
        path: row.get(5)?,
        query: row.get(6)?,
        verdict: status(row, 7)?,
        reason: row.get(8)?,
        event_id: row.get(9)?,
        event_type: row.get(10)?,
        response_status: row.get(11)?,
        body_size: size(row, 12)?,
        idempotency_key: row.get(13)?,
        duplicate_of: row.get(14)?,
    })
}

fn delivery_from_row(row: &Row<'_>) -> rusqlite::Result<Delivery> {
    let header_text: String = row.get(7)?;
    let headers = headers::decode(&header_text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(7, Type::Text, Box::new(e)))?;
    let verdict_json: String = row.get(12)?;
    Ok(Delivery {
        id: row.get(0)?,
        record: NewDelivery {
            received_at: UnixMillis(row.get(1)?),
            source: row.get(2)?,
            provider: provider(row.get(3)?),
            method: row.get(4)?,
            path: row.get(5)?,
            query: row.get(6)?,
            headers,
            body: row.get(8)?,
            body_size: size(row, 9)?,
            body_refused: row.get(10)?,
            remote_addr: row.get(11)?,
            verdict: verdict_from_json(&verdict_json),
            metadata: Metadata {
                event_id: row.get(13)?,
                event_type: row.get(14)?,
                object_id: row.get(15)?,
                idempotency_key: row.get(16)?,
                provider_time: row.get::<_, Option<i64>>(17)?.map(UnixMillis),
            },
            response_status: row.get(18)?,
            idempotency: None,
            enqueue: false,
        },
        duplicate_of: row.get(19)?,
    })
}

/// A provider this build does not know (a newer Hooklab wrote it) reads as `None`, like an
/// unknown source, rather than failing the whole listing.
fn provider(text: Option<String>) -> Option<crate::provider::ProviderId> {
    text.and_then(|t| t.parse().ok())
}

fn status(row: &Row<'_>, index: usize) -> rusqlite::Result<Status> {
    let text: String = row.get(index)?;
    text.parse()
        .map_err(|e: String| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, e.into()))
}

fn size(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(index)?;
    u64::try_from(value)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Integer, Box::new(e)))
}
