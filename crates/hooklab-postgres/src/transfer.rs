//! Export and import of a whole PostgreSQL database, in the format of
//! [`hooklab_core::store::transfer`] (the same lines the SQLite engine writes and reads: a
//! database moves between the engines unchanged). PostgreSQL's columns are typed, so each
//! table's columns are listed here with how they are read and bound.

use crate::error::{describe, pg_error};
use crate::schema::{self, SCHEMA_VERSION};
use hooklab_core::store::StoreError;
use hooklab_core::store::transfer::{self, FORMAT_VERSION, Header, RowLine, TABLES};
use serde_json::{Map, Value};
use std::io::{BufRead, Write};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls, Row};

#[derive(Debug, Clone, Copy)]
enum Kind {
    Int,
    Int4,
    Text,
    Bytes,
    /// Written as 0/1, as SQLite stores it.
    Flag,
}

use Kind::{Bytes, Flag, Int, Int4, Text};

/// Each table's columns in schema order, and whether `id` is an identity.
fn columns(table: &str) -> (&'static [(&'static str, Kind)], bool) {
    match table {
        "deliveries" => (
            &[
                ("id", Int),
                ("received_at", Int),
                ("source", Text),
                ("provider", Text),
                ("method", Text),
                ("path", Text),
                ("query", Text),
                ("headers", Text),
                ("body", Bytes),
                ("body_size", Int),
                ("body_refused", Flag),
                ("remote_addr", Text),
                ("verdict", Text),
                ("reason", Text),
                ("verdict_json", Text),
                ("event_id", Text),
                ("event_type", Text),
                ("object_id", Text),
                ("idempotency_key", Text),
                ("provider_time", Int),
                ("response_status", Int4),
                ("duplicate_of", Int),
            ],
            true,
        ),
        "idempotency_keys" => (
            &[
                ("scope", Text),
                ("key", Text),
                ("status", Text),
                ("first_delivery", Int),
                ("current_delivery", Int),
                ("deliveries", Int),
                ("first_seen", Int),
                ("last_seen", Int),
            ],
            false,
        ),
        "jobs" => (
            &[
                ("id", Int),
                ("delivery_id", Int),
                ("source", Text),
                ("scope", Text),
                ("key", Text),
                ("state", Text),
                ("attempts", Int),
                ("run_at", Int),
                ("lease_until", Int),
                ("reason", Text),
                ("created_at", Int),
                ("updated_at", Int),
            ],
            true,
        ),
        "attempts" => (
            &[
                ("id", Int),
                ("job_id", Int),
                ("delivery_id", Int),
                ("attempt", Int),
                ("started_at", Int),
                ("duration_ms", Int),
                ("target", Text),
                ("status", Int4),
                ("response_headers", Text),
                ("response_body", Bytes),
                ("error", Text),
            ],
            true,
        ),
        "objects" => (
            &[
                ("machine", Text),
                ("object_id", Text),
                ("state", Text),
                ("state_time", Int),
                ("flags", Text),
                ("data", Text),
                ("updated_at", Int),
            ],
            false,
        ),
        _ => (
            &[
                ("id", Int),
                ("machine", Text),
                ("object_id", Text),
                ("from_state", Text),
                ("to_state", Text),
                ("delivery_id", Int),
                ("provider_time", Int),
                ("received_at", Int),
                ("decision", Text),
                ("reason", Text),
                ("at", Int),
            ],
            true,
        ),
    }
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> StoreError {
    move |e| StoreError::Storage(format!("{what}: {e}"))
}

async fn connect(url: &str) -> Result<Client, StoreError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(pg_error("connecting to PostgreSQL"))?;
    tokio::spawn(connection);
    Ok(client)
}

fn value_of(row: &Row, i: usize, kind: Kind) -> Value {
    match kind {
        Int => row
            .get::<_, Option<i64>>(i)
            .map_or(Value::Null, Value::from),
        Int4 => row
            .get::<_, Option<i32>>(i)
            .map_or(Value::Null, Value::from),
        Text => row
            .get::<_, Option<String>>(i)
            .map_or(Value::Null, Value::String),
        Bytes => row
            .get::<_, Option<Vec<u8>>>(i)
            .map_or(Value::Null, |b| transfer::bytes_value(&b)),
        Flag => row
            .get::<_, Option<bool>>(i)
            .map_or(Value::Null, |b| Value::from(i64::from(b))),
    }
}

/// Writes every row of the database at `url` to `out` (one repeatable-read snapshot);
/// returns how many rows.
pub async fn export(url: &str, out: &mut dyn Write) -> Result<u64, StoreError> {
    let mut client = connect(url).await?;
    schema::require_current(&client).await?;
    let header = Header {
        hooklab_export: FORMAT_VERSION,
        schema_version: SCHEMA_VERSION,
    };
    writeln!(
        out,
        "{}",
        serde_json::to_string(&header).unwrap_or_default()
    )
    .map_err(io("writing the export"))?;
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg_error("starting the export"))?;
    let mut rows = 0;
    for (table, key) in TABLES {
        let (cols, _) = columns(table);
        let list: Vec<&str> = cols.iter().map(|(name, _)| *name).collect();
        // A cursor, so a large table is never held in memory at once.
        tx.batch_execute(&format!(
            "DECLARE export_rows NO SCROLL CURSOR FOR SELECT {} FROM {table} ORDER BY {key}",
            list.join(", ")
        ))
        .await
        .map_err(pg_error("exporting a table"))?;
        loop {
            let batch = tx
                .query_typed("FETCH 1000 FROM export_rows", &[])
                .await
                .map_err(pg_error("exporting rows"))?;
            if batch.is_empty() {
                break;
            }
            for row in &batch {
                let mut map = Map::new();
                for (i, (name, kind)) in cols.iter().enumerate() {
                    map.insert((*name).to_string(), value_of(row, i, *kind));
                }
                let line = RowLine {
                    table: (*table).to_string(),
                    row: map,
                };
                writeln!(out, "{}", serde_json::to_string(&line).unwrap_or_default())
                    .map_err(io("writing the export"))?;
                rows += 1;
            }
        }
        tx.batch_execute("CLOSE export_rows")
            .await
            .map_err(pg_error("exporting a table"))?;
    }
    tx.commit().await.map_err(pg_error("ending the export"))?;
    Ok(rows)
}

/// A value bound for `kind`.
enum Bound {
    Int(Option<i64>),
    Int4(Option<i32>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
    Flag(Option<bool>),
}

impl Bound {
    fn new(value: &Value, kind: Kind) -> Result<Self, String> {
        let null = value.is_null();
        Ok(match kind {
            Int => Bound::Int(if null {
                None
            } else {
                Some(value.as_i64().ok_or("expected an integer")?)
            }),
            Int4 => Bound::Int4(if null {
                None
            } else {
                let n = value.as_i64().ok_or("expected an integer")?;
                Some(i32::try_from(n).map_err(|e| e.to_string())?)
            }),
            Text => Bound::Text(if null {
                None
            } else {
                Some(value.as_str().ok_or("expected a string")?.to_string())
            }),
            Bytes => Bound::Bytes(if null {
                None
            } else {
                Some(transfer::value_bytes(value).ok_or("expected {\"base64\": …}")?)
            }),
            Flag => Bound::Flag(if null {
                None
            } else {
                Some(
                    value
                        .as_i64()
                        .map(|n| n != 0)
                        .or(value.as_bool())
                        .ok_or("expected 0 or 1")?,
                )
            }),
        })
    }

    fn typed(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Bound::Int(v) => (v, Type::INT8),
            Bound::Int4(v) => (v, Type::INT4),
            Bound::Text(v) => (v, Type::TEXT),
            Bound::Bytes(v) => (v, Type::BYTEA),
            Bound::Flag(v) => (v, Type::BOOL),
        }
    }
}

/// Reads an export into the database at `url` (migrated if needed), which must hold no rows
/// yet; all or nothing (one transaction). Identity sequences continue after the imported ids.
pub async fn import(url: &str, input: &mut dyn BufRead) -> Result<u64, StoreError> {
    let mut client = connect(url).await?;
    schema::migrate(&mut client).await?;
    let tx = client
        .transaction()
        .await
        .map_err(pg_error("starting the import"))?;
    for (table, _) in TABLES {
        let any: bool = tx
            .query_typed_one(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), &[])
            .await
            .map_err(pg_error("checking the database is empty"))?
            .get(0);
        if any {
            return Err(StoreError::Storage(format!(
                "the database already holds data (table {table}); import into a new database"
            )));
        }
    }
    let mut lines = input.lines();
    let first = lines
        .next()
        .transpose()
        .map_err(io("reading the export"))?
        .ok_or_else(|| StoreError::Storage("the export is empty".into()))?;
    let header: Header = serde_json::from_str(&first)
        .map_err(|e| StoreError::Storage(format!("not a Hooklab export: {e}")))?;
    transfer::check_header(&header, SCHEMA_VERSION)?;
    let mut rows = 0;
    for (n, line) in lines.enumerate() {
        let line = line.map_err(io("reading the export"))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| StoreError::Storage(format!("export line {}: {e}", n + 2));
        let row: RowLine = serde_json::from_str(&line).map_err(|e| at(e.to_string()))?;
        if !transfer::is_table(&row.table) {
            return Err(at(format!("unknown table `{}`", row.table)));
        }
        let (cols, identity) = columns(&row.table);
        let mut names = Vec::new();
        let mut bound = Vec::new();
        for (name, value) in &row.row {
            let kind = cols
                .iter()
                .find(|(c, _)| c == name)
                .map(|(_, k)| *k)
                .ok_or_else(|| at(format!("unknown column `{}.{name}`", row.table)))?;
            names.push(name.as_str());
            bound.push(Bound::new(value, kind).map_err(|e| at(format!("{name}: {e}")))?);
        }
        let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO {} ({}){} VALUES ({})",
            row.table,
            names.join(", "),
            if identity {
                " OVERRIDING SYSTEM VALUE"
            } else {
                ""
            },
            placeholders.join(", ")
        );
        let params: Vec<_> = bound.iter().map(Bound::typed).collect();
        tx.execute_typed(&sql, &params)
            .await
            .map_err(|e| at(describe(&e)))?;
        rows += 1;
    }
    for (table, _) in TABLES {
        if columns(table).1 {
            tx.batch_execute(&format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                 COALESCE((SELECT max(id) FROM {table}), 0) + 1, false)"
            ))
            .await
            .map_err(pg_error("moving the id sequences past the imported rows"))?;
        }
    }
    tx.commit()
        .await
        .map_err(pg_error("committing the import"))?;
    Ok(rows)
}
