//! Moving a whole database between engines (`hooklab export` / `hooklab import`): JSON Lines,
//! one header line then one line per row, table by table in [`TABLES`] order, each table in
//! primary-key order. Every engine writes the same columns (the schema is the same on SQLite and
//! PostgreSQL), with the same values: integers as numbers, text as strings, bytes (bodies) as
//! `{"base64": …}`, flags as `0`/`1`. Ids are kept, so every reference between tables
//! (`duplicate_of`, `first_delivery`, jobs and timelines to deliveries) survives the move.
//!
//! ```text
//! {"hooklab_export":1,"schema_version":4}
//! {"table":"deliveries","row":{"id":1,"received_at":1750000000123,…,"body":{"base64":"…"}}}
//! ```

use crate::store::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format's version (the first line's `hooklab_export`).
pub const FORMAT_VERSION: i64 = 1;

/// Every table, in the order rows are written and read back, with its primary key (each
/// table's rows are written in that key's order, on every engine).
pub const TABLES: &[(&str, &str)] = &[
    ("deliveries", "id"),
    ("idempotency_keys", "scope, key"),
    ("jobs", "id"),
    ("attempts", "id"),
    ("objects", "machine, object_id"),
    ("timeline", "id"),
];

/// Whether `name` is one of [`TABLES`].
pub fn is_table(name: &str) -> bool {
    TABLES.iter().any(|(table, _)| *table == name)
}

/// The first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub hooklab_export: i64,
    /// The schema version of the database the rows come from; import needs the same.
    pub schema_version: i64,
}

/// Every other line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowLine {
    pub table: String,
    /// Column name → value (see the module's documentation).
    pub row: Map<String, Value>,
}

/// Bytes as the export writes them.
pub fn bytes_value(bytes: &[u8]) -> Value {
    use base64::Engine as _;
    let mut m = Map::new();
    m.insert(
        "base64".into(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
    );
    Value::Object(m)
}

/// Bytes from an export's `{"base64": …}`; `None` when `value` is not that shape.
pub fn value_bytes(value: &Value) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = value.as_object()?.get("base64")?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// The header must be this format and this schema version.
pub fn check_header(header: &Header, schema: i64) -> Result<(), StoreError> {
    if header.hooklab_export != FORMAT_VERSION {
        return Err(StoreError::Storage(format!(
            "export format {} is not supported (this Hooklab reads {FORMAT_VERSION})",
            header.hooklab_export
        )));
    }
    if header.schema_version != schema {
        return Err(StoreError::Storage(format!(
            "the export has schema version {}, this Hooklab {schema}; use the same version \
             on both sides",
            header.schema_version
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_other_values_are_not_bytes() {
        let raw = [0u8, 0xff, b'a'];
        assert_eq!(value_bytes(&bytes_value(&raw)).unwrap(), raw);
        assert_eq!(value_bytes(&Value::String("x".into())), None);
    }
}
