//! Export and import of a whole SQLite database (see [`crate::store::transfer`]). Values are
//! written by their SQLite type (integer, real, text, blob as base64, null), so this module
//! needs no column list: the schema is the migrations'.

use super::connection::{self, storage};
use super::{SqliteOptions, migrations};
use crate::store::StoreError;
use crate::store::transfer::{self, FORMAT_VERSION, Header, RowLine, TABLES};
use rusqlite::types::{Value as SqlValue, ValueRef};
use serde_json::{Map, Value};
use std::io::{BufRead, Write};
use std::path::Path;

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> StoreError {
    move |e| StoreError::Storage(format!("{what}: {e}"))
}

/// Writes every row of the database at `path` to `out`; returns how many rows.
pub fn export(path: &Path, out: &mut dyn Write) -> Result<u64, StoreError> {
    let conn = connection::open_reader(path, &SqliteOptions::default())?;
    migrations::require_current(&conn)?;
    let header = Header {
        hooklab_export: FORMAT_VERSION,
        schema_version: migrations::SCHEMA_VERSION,
    };
    writeln!(
        out,
        "{}",
        serde_json::to_string(&header).unwrap_or_default()
    )
    .map_err(io("writing the export"))?;
    // One read transaction: the export is a consistent snapshot while a receiver writes.
    conn.execute_batch("BEGIN")
        .map_err(storage("starting the export"))?;
    let mut rows = 0;
    for (table, key) in TABLES {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY {key}"))
            .map_err(storage("exporting a table"))?;
        let names: Vec<String> = stmt.column_names().iter().map(|n| n.to_string()).collect();
        let mut cursor = stmt.query([]).map_err(storage("exporting a table"))?;
        while let Some(row) = cursor.next().map_err(storage("exporting a row"))? {
            let mut map = Map::new();
            for (i, name) in names.iter().enumerate() {
                let value = match row.get_ref(i).map_err(storage("exporting a value"))? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => Value::from(n),
                    ValueRef::Real(f) => Value::from(f),
                    ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => transfer::bytes_value(b),
                };
                map.insert(name.clone(), value);
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
    conn.execute_batch("COMMIT")
        .map_err(storage("ending the export"))?;
    Ok(rows)
}

/// Reads an export into the database at `path` (created and migrated if needed), which must
/// hold no rows yet; all or nothing (one transaction). Returns how many rows.
pub fn import(path: &Path, input: &mut dyn BufRead) -> Result<u64, StoreError> {
    let mut conn = connection::open_writer(path, &SqliteOptions::default())?;
    migrations::migrate(&mut conn)?;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(storage("starting the import"))?;
    for (table, _) in TABLES {
        let any: bool = tx
            .query_row(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), [], |r| {
                r.get(0)
            })
            .map_err(storage("checking the database is empty"))?;
        if any {
            return Err(StoreError::Storage(format!(
                "{} already holds data (table {table}); import into a new database",
                path.display()
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
    transfer::check_header(&header, migrations::SCHEMA_VERSION)?;
    let mut rows = 0;
    for (n, line) in lines.enumerate() {
        let line = line.map_err(io("reading the export"))?;
        if line.trim().is_empty() {
            continue;
        }
        let row: RowLine = serde_json::from_str(&line)
            .map_err(|e| StoreError::Storage(format!("export line {}: {e}", n + 2)))?;
        if !transfer::is_table(&row.table) {
            return Err(StoreError::Storage(format!(
                "export line {}: unknown table `{}`",
                n + 2,
                row.table
            )));
        }
        let columns: Vec<&String> = row.row.keys().collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            row.table,
            columns
                .iter()
                .map(|c| format!("\"{}\"", c.replace('"', "")))
                .collect::<Vec<_>>()
                .join(", "),
            vec!["?"; columns.len()].join(", ")
        );
        let values: Vec<SqlValue> = row.row.values().map(sql_value).collect();
        tx.prepare_cached(&sql)
            .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(values)))
            .map_err(|e| StoreError::Storage(format!("export line {}: {e}", n + 2)))?;
        rows += 1;
    }
    tx.commit().map_err(storage("committing the import"))?;
    Ok(rows)
}

fn sql_value(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        other => match transfer::value_bytes(other) {
            Some(bytes) => SqlValue::Blob(bytes),
            None => SqlValue::Text(other.to_string()),
        },
    }
}
