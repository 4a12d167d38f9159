//! Idempotency by a constraint, as on SQLite: `idempotency_keys` has a primary key on
//! `(scope, key)`, and a delivery claims its key with `INSERT … ON CONFLICT DO UPDATE …
//! RETURNING` in the same statement as its raw record (`deliveries::RECORD`). Across replicas
//! the constraint does the work: a concurrent insert of the same key waits for the first
//! transaction and then takes the `DO UPDATE` branch, so exactly one delivery sees
//! `current_delivery` = its own id. This module sets statuses and lists keys.

use crate::deliveries::limit;
use crate::error::pg_error;
use crate::sql::{Param, Params};
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{IdempotencyRecord, KeyFilter, KeyStatus, StoreError};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row};

pub(crate) const SET_STATUS: &str =
    "UPDATE idempotency_keys SET status = $3 WHERE scope = $1 AND key = $2";

const SELECT: &str = "SELECT scope, key, status, first_delivery, deliveries, first_seen, \
     last_seen FROM idempotency_keys";

/// Sets a key's status; `false` when there is no such key.
pub(crate) async fn set_status(
    client: &Client,
    scope: &str,
    key: &str,
    status: KeyStatus,
) -> Result<bool, StoreError> {
    let changed = client
        .execute_typed(
            SET_STATUS,
            &[
                (&scope, Type::TEXT),
                (&key, Type::TEXT),
                (&status.as_str(), Type::TEXT),
            ],
        )
        .await
        .map_err(pg_error("setting a key's status"))?;
    Ok(changed > 0)
}

/// Keys matching `filter`, most recently seen first.
pub(crate) async fn list(
    client: &Client,
    filter: &KeyFilter,
) -> Result<Vec<IdempotencyRecord>, StoreError> {
    let mut params = Params::new(SELECT);
    if let Some(scope) = &filter.scope {
        params.condition("scope = ", Param::Text(scope.clone()));
    }
    if let Some(status) = filter.status {
        params.condition("status = ", Param::Text(status.as_str().into()));
    }
    if filter.duplicates_only {
        params.raw_condition("deliveries > 1");
    }
    if let Some(key) = &filter.key {
        params.condition("key = ", Param::Text(key.clone()));
    }
    params.tail(
        " ORDER BY last_seen DESC LIMIT ",
        Param::Int(limit(filter.limit)),
    );
    let rows = params
        .query(client)
        .await
        .map_err(pg_error("listing idempotency keys"))?;
    rows.iter().map(record_from_row).collect()
}

fn record_from_row(row: &Row) -> Result<IdempotencyRecord, StoreError> {
    let status: &str = row.get(2);
    Ok(IdempotencyRecord {
        scope: row.get(0),
        key: row.get(1),
        status: KeyStatus::parse(status)
            .ok_or_else(|| StoreError::Storage(format!("unknown key status `{status}`")))?,
        first_delivery: row.get(3),
        deliveries: u64::try_from(row.get::<_, i64>(4)).unwrap_or(0),
        first_seen: UnixMillis(row.get(5)),
        last_seen: UnixMillis(row.get(6)),
    })
}
