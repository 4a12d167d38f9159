//! Statements whose conditions depend on a filter: the SQL text grows with `$n` placeholders
//! and the parameters (with their types, for `query_typed`) follow in the same order. Each
//! combination of filters is its own text, never `$1 IS NULL OR …`, so each can use its index.

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row, Transaction};

/// One parameter value.
#[derive(Debug, Clone)]
pub(crate) enum Param {
    Text(String),
    Int(i64),
    Bool(bool),
    Ints(Vec<i64>),
}

impl Param {
    fn typed(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Param::Text(v) => (v, Type::TEXT),
            Param::Int(v) => (v, Type::INT8),
            Param::Bool(v) => (v, Type::BOOL),
            Param::Ints(v) => (v, Type::INT8_ARRAY),
        }
    }
}

/// A statement being built.
#[derive(Debug)]
pub(crate) struct Params {
    sql: String,
    values: Vec<Param>,
    /// Whether a `WHERE` was written already.
    conditions: usize,
}

impl Params {
    pub(crate) fn new(sql: &str) -> Self {
        Self {
            sql: sql.to_string(),
            values: Vec::new(),
            conditions: 0,
        }
    }

    /// Appends a parameter and returns its placeholder (`$n`).
    pub(crate) fn bind(&mut self, value: Param) -> String {
        self.values.push(value);
        format!("${}", self.values.len())
    }

    /// `WHERE`/`AND` + `prefix` + the value's placeholder.
    pub(crate) fn condition(&mut self, prefix: &str, value: Param) {
        let placeholder = self.bind(value);
        self.raw_condition(&format!("{prefix}{placeholder}"));
    }

    /// `WHERE`/`AND` + a condition without a parameter.
    pub(crate) fn raw_condition(&mut self, condition: &str) {
        self.sql.push_str(if self.conditions == 0 {
            " WHERE "
        } else {
            " AND "
        });
        self.conditions += 1;
        self.sql.push_str(condition);
    }

    /// Appends text followed by the value's placeholder (e.g. ` LIMIT $n`).
    pub(crate) fn tail(&mut self, text: &str, value: Param) {
        let placeholder = self.bind(value);
        self.sql.push_str(text);
        self.sql.push_str(&placeholder);
    }

    /// Appends plain text.
    pub(crate) fn push(&mut self, text: &str) {
        self.sql.push_str(text);
    }

    fn typed(&self) -> Vec<(&(dyn ToSql + Sync), Type)> {
        self.values.iter().map(Param::typed).collect()
    }

    pub(crate) async fn query(&self, client: &Client) -> Result<Vec<Row>, tokio_postgres::Error> {
        client.query_typed(&self.sql, &self.typed()).await
    }

    pub(crate) async fn query_tx(
        &self,
        tx: &Transaction<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        tx.query_typed(&self.sql, &self.typed()).await
    }
}
