//! From tokio-postgres errors to [`StoreError`]: the server's message (and detail) is kept,
//! since `tokio_postgres::Error`'s own `Display` says only "db error".

use hooklab_core::store::StoreError;

/// The error with the server's message when there is one.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => e.to_string(),
    }
}

/// `map_err(pg_error("doing what"))`.
pub(crate) fn pg_error(what: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::Storage(format!("{what}: {}", describe(&e)))
}

/// The pool could not give a connection.
pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Closed => StoreError::Closed,
        deadpool_postgres::PoolError::Backend(e) => {
            StoreError::Storage(format!("connecting to PostgreSQL: {}", describe(&e)))
        }
        other => StoreError::Storage(format!("connecting to PostgreSQL: {other}")),
    }
}
