//! Business objects and their timelines: the state each object's machine left it in (the
//! engine's state as opaque JSON plus the columns a listing needs), and one row per decision.
//! An update reads, computes and writes inside one writer transaction, so two events for the
//! same object never interleave.

use super::connection::storage;
use crate::clock::UnixMillis;
use crate::store::{
    ObjectChange, ObjectFilter, ObjectRecord, ObjectUpdate, StoreError, TimelineEntry,
};
use rusqlite::{Connection, OptionalExtension, Row, ToSql, params};

/// Schema version 4: objects and their timelines.
pub(super) const MIGRATION_V4: &str = "
CREATE TABLE objects (
    machine    TEXT    NOT NULL,
    object_id  TEXT    NOT NULL,
    state      TEXT,
    state_time INTEGER,                          -- Unix ms, provider time of the state
    flags      TEXT    NOT NULL,                 -- JSON array of strings
    data       TEXT    NOT NULL,                 -- the engine's object state, JSON
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (machine, object_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX objects_by_update ON objects (updated_at);
CREATE TABLE timeline (
    id            INTEGER PRIMARY KEY,
    machine       TEXT    NOT NULL,
    object_id     TEXT    NOT NULL,
    from_state    TEXT,
    to_state      TEXT,
    delivery_id   INTEGER,                       -- deliveries.id
    provider_time INTEGER,
    received_at   INTEGER,
    decision      TEXT    NOT NULL,
    reason        TEXT    NOT NULL,
    at            INTEGER NOT NULL
) STRICT;
CREATE INDEX timeline_by_object ON timeline (object_id, id);
";

const SELECT: &str =
    "SELECT machine, object_id, state, state_time, flags, data, updated_at FROM objects";

const UPSERT: &str = "INSERT INTO objects (machine, object_id, state, state_time, flags, data, \
     updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (machine, object_id) DO UPDATE \
     SET state = excluded.state, state_time = excluded.state_time, flags = excluded.flags, \
     data = excluded.data, updated_at = excluded.updated_at";

const INSERT_ROW: &str = "INSERT INTO timeline (machine, object_id, from_state, to_state, \
     delivery_id, provider_time, received_at, decision, reason, at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

/// Reads, updates and writes one object (inside the caller's transaction).
pub(super) fn update(
    conn: &Connection,
    machine: &str,
    object_id: &str,
    update: ObjectUpdate,
) -> rusqlite::Result<Option<ObjectChange>> {
    let current = conn
        .prepare_cached(&format!("{SELECT} WHERE machine = ?1 AND object_id = ?2"))?
        .query_row(params![machine, object_id], object_from_row)
        .optional()?;
    let Some(change) = update(current) else {
        return Ok(None);
    };
    let o = &change.object;
    conn.prepare_cached(UPSERT)?.execute(params![
        o.machine,
        o.object_id,
        o.state,
        o.state_time.map(|t| t.0),
        serde_json::to_string(&o.flags).unwrap_or_else(|_| "[]".into()),
        o.data,
        o.updated_at.0,
    ])?;
    let mut insert = conn.prepare_cached(INSERT_ROW)?;
    for r in &change.rows {
        insert.execute(params![
            r.machine,
            r.object_id,
            r.from,
            r.to,
            r.delivery,
            r.provider_time.map(|t| t.0),
            r.received_at.map(|t| t.0),
            r.decision,
            r.reason,
            r.at.0,
        ])?;
    }
    Ok(Some(change))
}

fn object_from_row(row: &Row<'_>) -> rusqlite::Result<ObjectRecord> {
    let flags: String = row.get(4)?;
    Ok(ObjectRecord {
        machine: row.get(0)?,
        object_id: row.get(1)?,
        state: row.get(2)?,
        state_time: row.get::<_, Option<i64>>(3)?.map(UnixMillis),
        flags: serde_json::from_str(&flags).unwrap_or_default(),
        data: row.get(5)?,
        updated_at: UnixMillis(row.get(6)?),
    })
}

/// Objects matching `filter`, most recently updated first.
pub(super) fn list(
    conn: &Connection,
    filter: &ObjectFilter,
) -> Result<Vec<ObjectRecord>, StoreError> {
    let mut sql = String::from(SELECT);
    let mut args: Vec<&dyn ToSql> = Vec::new();
    let mut conditions = Vec::new();
    if let Some(machine) = &filter.machine {
        conditions.push("machine = ?");
        args.push(machine);
    }
    if let Some(state) = &filter.state {
        conditions.push("state = ?");
        args.push(state);
    }
    let before = filter.updated_before.map(|t| t.0);
    if let Some(before) = &before {
        conditions.push("updated_at < ?");
        args.push(before);
    }
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    sql.push_str(" ORDER BY updated_at DESC LIMIT ?");
    let limit = filter
        .limit
        .unwrap_or(super::deliveries::DEFAULT_LIMIT)
        .min(super::deliveries::MAX_LIMIT);
    args.push(&limit);
    let mut stmt = conn.prepare(&sql).map_err(storage("listing objects"))?;
    let rows = stmt
        .query_map(args.as_slice(), object_from_row)
        .map_err(storage("listing objects"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("reading objects"))
}

/// Every timeline row for `object_id`, oldest first.
pub(super) fn timeline(
    conn: &Connection,
    object_id: &str,
) -> Result<Vec<TimelineEntry>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT machine, object_id, from_state, to_state, delivery_id, provider_time, \
             received_at, decision, reason, at FROM timeline WHERE object_id = ?1 ORDER BY id",
        )
        .map_err(storage("reading a timeline"))?;
    let rows = stmt
        .query_map([object_id], |r| {
            Ok(TimelineEntry {
                machine: r.get(0)?,
                object_id: r.get(1)?,
                from: r.get(2)?,
                to: r.get(3)?,
                delivery: r.get(4)?,
                provider_time: r.get::<_, Option<i64>>(5)?.map(UnixMillis),
                received_at: r.get::<_, Option<i64>>(6)?.map(UnixMillis),
                decision: r.get(7)?,
                reason: r.get(8)?,
                at: UnixMillis(r.get(9)?),
            })
        })
        .map_err(storage("reading a timeline"))?;
    rows.collect::<Result<_, _>>()
        .map_err(storage("reading a timeline"))
}
