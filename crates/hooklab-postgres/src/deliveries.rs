//! The `deliveries` table (the raw event log): insert inside the record's transaction, list
//! and get. Statements go out with `query_typed` (one unnamed statement per call, parameter
//! types given), which also works through a transaction-mode pooler.

use crate::error::pg_error;
use crate::sql::{Param, Params};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::store::headers;
use hooklab_core::store::{
    Delivery, DeliveryFilter, DeliveryId, DeliverySummary, KeyOutcome, KeyStatus, NewDelivery,
    Recorded, StoreError, verdict_from_json, verdict_to_json,
};
use hooklab_core::verdict::Status;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row};

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

/// The whole write path of one delivery as ONE statement (one round trip, one implicit
/// transaction): take the delivery's id, claim its key with `INSERT … ON CONFLICT … DO UPDATE
/// … RETURNING` (a concurrent claim of the same key waits for this statement's commit and then
/// takes the `DO UPDATE` branch), insert the delivery with `duplicate_of` already decided by
/// the claim, and enqueue its job when it is to be processed (no key, or the claim made it the
/// key's current delivery). The same steps, in the same transaction, as SQLite's writer.
const RECORD: &str = "WITH i AS (SELECT nextval(pg_get_serial_sequence('deliveries', 'id')) AS id), \
     k AS (INSERT INTO idempotency_keys AS k (scope, key, status, first_delivery, \
             current_delivery, deliveries, first_seen, last_seen) \
           SELECT $21, $22, $23, i.id, i.id, 1, $1, $1 FROM i WHERE $24 \
           ON CONFLICT (scope, key) DO UPDATE SET \
             deliveries = k.deliveries + 1, \
             last_seen = GREATEST(k.last_seen, excluded.last_seen), \
             current_delivery = CASE WHEN k.status = 'failed' THEN excluded.current_delivery \
                                     ELSE k.current_delivery END, \
             status = CASE WHEN k.status = 'failed' THEN excluded.status ELSE k.status END \
           RETURNING first_delivery, current_delivery, deliveries, status), \
     d AS (INSERT INTO deliveries (id, received_at, source, provider, method, path, query, \
             headers, body, body_size, body_refused, remote_addr, verdict, reason, verdict_json, \
             event_id, event_type, object_id, idempotency_key, provider_time, response_status, \
             duplicate_of) OVERRIDING SYSTEM VALUE \
           SELECT i.id, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
             $17, $18, $19, $20, NULLIF(k.first_delivery, i.id) \
           FROM i LEFT JOIN k ON true RETURNING id), \
     j AS (INSERT INTO jobs (delivery_id, source, scope, key, state, run_at, created_at, \
             updated_at) \
           SELECT i.id, $2, $21, $22, 'ready', $1, $1, $1 FROM i LEFT JOIN k ON true \
           WHERE $25 AND (NOT $24 OR k.current_delivery = i.id) RETURNING id) \
     SELECT i.id, k.first_delivery, k.current_delivery, k.deliveries, k.status, \
       (SELECT id FROM j) \
     FROM i LEFT JOIN k ON true";

/// Records one delivery (see [`RECORD`]).
/// With `prepared`, the statement is prepared once per connection and reused (PostgreSQL plans
/// it once); without, it is sent unnamed each time (parsed and planned each time), which any
/// transaction-mode pooler accepts.
pub(crate) async fn record(
    client: &deadpool_postgres::Object,
    d: &NewDelivery,
    prepared: bool,
) -> Result<Recorded, tokio_postgres::Error> {
    let m = &d.metadata;
    let provider = d.provider.map(|p| p.as_str());
    let headers = headers::encode(&d.headers);
    let size = i64::try_from(d.body_size).unwrap_or(i64::MAX);
    let verdict = d.verdict.verdict.as_str();
    let reason = d.verdict.reason.map(|r| r.as_str());
    let verdict_json = verdict_to_json(&d.verdict);
    let provider_time = m.provider_time.map(|t| t.0);
    let status = i32::from(d.response_status);
    let claimed = d.idempotency.is_some();
    let scope = d.idempotency.as_ref().map(|c| c.scope.as_str());
    let key = d.idempotency.as_ref().map(|c| c.key.as_str());
    let key_status = d.idempotency.as_ref().map(|c| c.status.as_str());
    let params: [(&(dyn ToSql + Sync), Type); 25] = [
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
        (&scope, Type::TEXT),
        (&key, Type::TEXT),
        (&key_status, Type::TEXT),
        (&claimed, Type::BOOL),
        (&d.enqueue, Type::BOOL),
    ];
    let row = if prepared {
        let types: Vec<Type> = params.iter().map(|(_, t)| t.clone()).collect();
        let statement = client.prepare_typed_cached(RECORD, &types).await?;
        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|(v, _)| *v).collect();
        client.query_one(&statement, &values).await?
    } else {
        client.query_typed_one(RECORD, &params).await?
    };
    let id: DeliveryId = row.get(0);
    let key = match row.get::<_, Option<i64>>(1) {
        Some(first) => {
            let current: i64 = row.get(2);
            let status: &str = row.get(4);
            Some(KeyOutcome {
                first_delivery: first,
                duplicate: first != id,
                process: current == id,
                deliveries: u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
                status: KeyStatus::parse(status).unwrap_or(KeyStatus::Processing),
            })
        }
        None => None,
    };
    Ok(Recorded {
        id,
        key,
        job: row.get(5),
    })
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
    if let Some(event_type) = &filter.event_type {
        params.condition("event_type = ", Param::Text(event_type.clone()));
    }
    if filter.duplicates_only {
        params.raw_condition("duplicate_of IS NOT NULL");
    }
    if let Some(first) = filter.duplicate_of {
        params.condition("duplicate_of = ", Param::Int(first));
    }
    if let Some(status) = filter.key_status {
        let status = params.bind(Param::Text(status.as_str().into()));
        params.raw_condition(&format!(
            "EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.scope = deliveries.provider \
             AND k.key = deliveries.idempotency_key AND deliveries.verdict <> 'invalid' AND k.status = {status})"
        ));
    }
    if let Some(search) = &filter.search {
        // As SQLite: text columns case-insensitively (`ILIKE`), the body as bytes (exact),
        // then the id.
        let pattern = params.bind(Param::Text(hooklab_core::store::like_pattern(search)));
        let needle = params.bind(Param::Text(search.clone()));
        let id = params.bind(Param::Int(search.trim().parse().unwrap_or(-1)));
        params.raw_condition(&format!(
            "(path ILIKE {pattern} OR event_id ILIKE {pattern} OR event_type ILIKE {pattern} \
             OR idempotency_key ILIKE {pattern} OR headers ILIKE {pattern} \
             OR position(convert_to({needle}, 'UTF8') IN body) > 0 OR id = {id})"
        ));
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
