//! The `deliveries` table (the raw event log): insert inside the record's transaction, list
//! and get. Statements go out with `query_typed` (one unnamed statement per call, parameter
//! types given), which also works through a transaction-mode pooler.

use crate::error::pg_error;
use crate::headers;
use crate::sql::{Param, Params};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::store::{
    Delivery, DeliveryFilter, DeliveryId, DeliverySummary, NewDelivery, StoreError,
    verdict_from_json, verdict_to_json,
};
use hooklab_core::verdict::Status;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row, Transaction};

const INSERT: &str = "INSERT INTO deliveries (received_at, source, provider, method, path, \
     query, headers, body, body_size, body_refused, remote_addr, verdict, reason, verdict_json, \
     event_id, event_type, object_id, idempotency_key, provider_time, response_status) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19, $20) RETURNING id";

const SELECT_ONE: &str = "SELECT id, received_at, source, provider, method, path, query, \
     headers, body, body_size, body_refused, remote_addr, verdict_json, event_id, event_type, \
     object_id, idempotency_key, provider_time, response_status, duplicate_of FROM deliveries \
     WHERE id = $1";

const SELECT_SUMMARY: &str = "SELECT id, received_at, source, provider, method, path, query, \
     verdict, reason, event_id, event_type, response_status, body_size, idempotency_key, \
     duplicate_of FROM deliveries";

/// Rows a listing returns when the filter names no limit (as SQLite).
pub(crate) const DEFAULT_LIMIT: u32 = 50;
/// The most rows one listing returns (as SQLite).
pub(crate) const MAX_LIMIT: u32 = 10_000;

/// The limit a filter asks for, capped, as a SQL parameter.
pub(crate) fn limit(asked: Option<u32>) -> i64 {
    i64::from(asked.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT))
}

/// Appends one delivery inside the caller's transaction and returns its id.
pub(crate) async fn insert(
    tx: &Transaction<'_>,
    d: &NewDelivery,
) -> Result<DeliveryId, tokio_postgres::Error> {
    let m = &d.metadata;
    let provider = d.provider.map(|p| p.as_str());
    let headers = headers::encode(&d.headers);
    let size = i64::try_from(d.body_size).unwrap_or(i64::MAX);
    let verdict = d.verdict.verdict.as_str();
    let reason = d.verdict.reason.map(|r| r.as_str());
    let verdict_json = verdict_to_json(&d.verdict);
    let provider_time = m.provider_time.map(|t| t.0);
    let status = i32::from(d.response_status);
    let row = tx
        .query_typed_one(
            INSERT,
            &[
                (&d.received_at.0, Type::INT8),
                (&d.source, Type::TEXT),
                (&provider, Type::TEXT),
                (&d.method, Type::TEXT),
                (&d.path, Type::TEXT),
                (&d.query, Type::TEXT),
                (&headers, Type::TEXT),
                (&d.body, Type::BYTEA),
                (&size, Type::INT8),
                (&d.body_refused, Type::BOOL),
                (&d.remote_addr, Type::TEXT),
                (&verdict, Type::TEXT),
                (&reason, Type::TEXT),
                (&verdict_json, Type::TEXT),
                (&m.event_id, Type::TEXT),
                (&m.event_type, Type::TEXT),
                (&m.object_id, Type::TEXT),
                (&m.idempotency_key, Type::TEXT),
                (&provider_time, Type::INT8),
                (&status, Type::INT4),
            ],
        )
        .await?;
    Ok(row.get(0))
}

/// One delivery, whole.
pub(crate) async fn get(client: &Client, id: DeliveryId) -> Result<Option<Delivery>, StoreError> {
    let row = client
        .query_typed_opt(SELECT_ONE, &[(&id, Type::INT8)])
        .await
        .map_err(pg_error("reading a delivery"))?;
    row.map(|r| delivery_from_row(&r)).transpose()
}

/// Deliveries matching `filter`, newest first.
pub(crate) async fn list(
    client: &Client,
    filter: &DeliveryFilter,
) -> Result<Vec<DeliverySummary>, StoreError> {
    let mut params = Params::new(SELECT_SUMMARY);
    if let Some(source) = &filter.source {
        params.condition("source = ", Param::Text(source.clone()));
    }
    if let Some(verdict) = filter.verdict {
        params.condition("verdict = ", Param::Text(verdict.as_str().into()));
    }
    if let Some(before) = filter.before {
        params.condition("id < ", Param::Int(before));
    }
    params.tail(" ORDER BY id DESC LIMIT ", Param::Int(limit(filter.limit)));
    let rows = params
        .query(client)
        .await
        .map_err(pg_error("listing deliveries"))?;
    rows.iter().map(summary_from_row).collect()
}

fn summary_from_row(row: &Row) -> Result<DeliverySummary, StoreError> {
    Ok(DeliverySummary {
        id: row.get(0),
        received_at: UnixMillis(row.get(1)),
        source: row.get(2),
        provider: provider(row.get(3)),
        method: row.get(4),
        path: row.get(5),
        query: row.get(6),
        verdict: status(row.get(7))?,
        reason: row.get(8),
        event_id: row.get(9),
        event_type: row.get(10),
        response_status: u16::try_from(row.get::<_, i32>(11)).unwrap_or(0),
        body_size: u64::try_from(row.get::<_, i64>(12)).unwrap_or(0),
        idempotency_key: row.get(13),
        duplicate_of: row.get(14),
    })
}

fn delivery_from_row(row: &Row) -> Result<Delivery, StoreError> {
    let id: i64 = row.get(0);
    let headers = headers::decode(row.get(7))
        .map_err(|e| StoreError::Storage(format!("delivery {id}: damaged headers: {e}")))?;
    Ok(Delivery {
        id,
        record: NewDelivery {
            received_at: UnixMillis(row.get(1)),
            source: row.get(2),
            provider: provider(row.get(3)),
            method: row.get(4),
            path: row.get(5),
            query: row.get(6),
            headers,
            body: row.get(8),
            body_size: u64::try_from(row.get::<_, i64>(9)).unwrap_or(0),
            body_refused: row.get(10),
            remote_addr: row.get(11),
            verdict: verdict_from_json(row.get(12)),
            metadata: Metadata {
                event_id: row.get(13),
                event_type: row.get(14),
                object_id: row.get(15),
                idempotency_key: row.get(16),
                provider_time: row.get::<_, Option<i64>>(17).map(UnixMillis),
            },
            response_status: u16::try_from(row.get::<_, i32>(18)).unwrap_or(0),
            idempotency: None,
            enqueue: false,
        },
        duplicate_of: row.get(19),
    })
}

/// A provider this build does not know reads as `None`, as on SQLite.
fn provider(text: Option<String>) -> Option<ProviderId> {
    text.and_then(|t| t.parse().ok())
}

fn status(text: String) -> Result<Status, StoreError> {
    text.parse()
        .map_err(|e: String| StoreError::Storage(format!("reading a verdict: {e}")))
}
