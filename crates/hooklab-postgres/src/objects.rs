//! Business objects and their timelines. [`Store::update_object`] promises that updates run
//! in the order they were queued, each seeing what the previous one wrote; here one task per
//! store takes the queue in order and applies what has gathered in one transaction (each
//! update in a savepoint of its own, as the SQLite writer does). Across replicas, each object
//! is guarded by a transaction-scoped advisory lock, taken for the whole batch in one global
//! order (so two replicas' batches never deadlock) before any object is read: a replica never
//! computes a change from a state another replica is about to replace.
//!
//! [`Store::update_object`]: hooklab_core::store::Store::update_object

use crate::deliveries::limit;
use crate::error::{describe, pg_error};
use crate::sql::{Param, Params};
use deadpool_postgres::Pool;
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{
    ObjectChange, ObjectFilter, ObjectRecord, ObjectUpdate, StoreError, TimelineEntry,
};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row, Transaction};

/// The most updates one transaction applies.
const MAX_BATCH: usize = 256;

const SELECT: &str =
    "SELECT machine, object_id, state, state_time, flags, data, updated_at FROM objects";

const UPSERT: &str = "INSERT INTO objects (machine, object_id, state, state_time, flags, data, \
     updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (machine, object_id) DO UPDATE \
     SET state = excluded.state, state_time = excluded.state_time, flags = excluded.flags, \
     data = excluded.data, updated_at = excluded.updated_at";

const INSERT_ROW: &str = "INSERT INTO timeline (machine, object_id, from_state, to_state, \
     delivery_id, provider_time, received_at, decision, reason, at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

/// One queued update and where its outcome goes.
pub(crate) struct Queued {
    pub(crate) machine: String,
    pub(crate) object_id: String,
    pub(crate) update: ObjectUpdate,
    pub(crate) reply: oneshot::Sender<Result<Option<ObjectChange>, StoreError>>,
}

/// The lock of one object: a stable 64-bit hash (FNV-1a) of machine and id, the same in every
/// process. Two objects sharing a hash only wait for each other.
fn lock_key(machine: &str, object_id: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in machine.bytes().chain([0]).chain(object_id.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// The task that applies queued updates, in order, until the queue closes.
pub(crate) async fn run_updates(pool: Pool, mut queue: mpsc::UnboundedReceiver<Queued>) {
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        apply_batch(&pool, batch).await;
    }
}

async fn apply_batch(pool: &Pool, batch: Vec<Queued>) {
    let mut client = match pool.get().await {
        Ok(client) => client,
        Err(e) => {
            let error = crate::error::pool_error(e);
            for q in batch {
                let _ = q.reply.send(Err(error.clone()));
            }
            return;
        }
    };
    let tx = match client.transaction().await {
        Ok(tx) => tx,
        Err(e) => {
            let error = pg_error("starting an object update")(e);
            for q in batch {
                let _ = q.reply.send(Err(error.clone()));
            }
            return;
        }
    };
    let mut keys: Vec<i64> = batch
        .iter()
        .map(|q| lock_key(&q.machine, &q.object_id))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut failed: Option<StoreError> = None;
    for key in &keys {
        if let Err(e) = tx
            .execute_typed("SELECT pg_advisory_xact_lock($1)", &[(key, Type::INT8)])
            .await
        {
            failed = Some(pg_error("locking an object")(e));
            break;
        }
    }
    let mut replies = Vec::with_capacity(batch.len());
    for q in batch {
        replies.push(q.reply);
        if failed.is_some() {
            continue;
        }
        outcomes.push(in_savepoint(&tx, &q.machine, &q.object_id, q.update).await);
    }
    let committed = match failed {
        Some(e) => Err(e),
        None => tx
            .commit()
            .await
            .map_err(pg_error("committing object updates")),
    };
    match committed {
        Ok(()) => {
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let _ = reply.send(outcome);
            }
        }
        Err(e) => {
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
    }
}

/// One update in a savepoint: its failure rolls back only its own writes.
async fn in_savepoint(
    tx: &Transaction<'_>,
    machine: &str,
    object_id: &str,
    update: ObjectUpdate,
) -> Result<Option<ObjectChange>, StoreError> {
    tx.batch_execute("SAVEPOINT object_update")
        .await
        .map_err(pg_error("updating an object"))?;
    match update_one(tx, machine, object_id, update).await {
        Ok(change) => {
            tx.batch_execute("RELEASE object_update")
                .await
                .map_err(pg_error("updating an object"))?;
            Ok(change)
        }
        Err(e) => {
            let _ = tx
                .batch_execute("ROLLBACK TO object_update; RELEASE object_update")
                .await;
            Err(StoreError::Storage(format!(
                "updating an object: {}",
                describe(&e)
            )))
        }
    }
}

/// Reads, updates and writes one object (inside the caller's transaction).
async fn update_one(
    tx: &Transaction<'_>,
    machine: &str,
    object_id: &str,
    update: ObjectUpdate,
) -> Result<Option<ObjectChange>, tokio_postgres::Error> {
    let current = tx
        .query_typed_opt(
            &format!("{SELECT} WHERE machine = $1 AND object_id = $2"),
            &[(&machine, Type::TEXT), (&object_id, Type::TEXT)],
        )
        .await?
        .map(|row| object_from_row(&row));
    let Some(change) = update(current) else {
        return Ok(None);
    };
    let o = &change.object;
    let flags = serde_json::to_string(&o.flags).unwrap_or_else(|_| "[]".into());
    let state_time = o.state_time.map(|t| t.0);
    tx.execute_typed(
        UPSERT,
        &[
            (&o.machine, Type::TEXT),
            (&o.object_id, Type::TEXT),
            (&o.state, Type::TEXT),
            (&state_time, Type::INT8),
            (&flags, Type::TEXT),
            (&o.data, Type::TEXT),
            (&o.updated_at.0, Type::INT8),
        ],
    )
    .await?;
    for r in &change.rows {
        let provider_time = r.provider_time.map(|t| t.0);
        let received_at = r.received_at.map(|t| t.0);
        tx.execute_typed(
            INSERT_ROW,
            &[
                (&r.machine, Type::TEXT),
                (&r.object_id, Type::TEXT),
                (&r.from, Type::TEXT),
                (&r.to, Type::TEXT),
                (&r.delivery, Type::INT8),
                (&provider_time, Type::INT8),
                (&received_at, Type::INT8),
                (&r.decision, Type::TEXT),
                (&r.reason, Type::TEXT),
                (&r.at.0, Type::INT8),
            ],
        )
        .await?;
    }
    Ok(Some(change))
}

fn object_from_row(row: &Row) -> ObjectRecord {
    let flags: &str = row.get(4);
    ObjectRecord {
        machine: row.get(0),
        object_id: row.get(1),
        state: row.get(2),
        state_time: row.get::<_, Option<i64>>(3).map(UnixMillis),
        flags: serde_json::from_str(flags).unwrap_or_default(),
        data: row.get(5),
        updated_at: UnixMillis(row.get(6)),
    }
}

/// Objects matching `filter`, most recently updated first.
pub(crate) async fn list(
    client: &Client,
    filter: &ObjectFilter,
) -> Result<Vec<ObjectRecord>, StoreError> {
    let mut params = Params::new(SELECT);
    if let Some(machine) = &filter.machine {
        params.condition("machine = ", Param::Text(machine.clone()));
    }
    if let Some(state) = &filter.state {
        params.condition("state = ", Param::Text(state.clone()));
    }
    if let Some(before) = filter.updated_before {
        params.condition("updated_at < ", Param::Int(before.0));
    }
    params.tail(
        " ORDER BY updated_at DESC LIMIT ",
        Param::Int(limit(filter.limit)),
    );
    let rows = params
        .query(client)
        .await
        .map_err(pg_error("listing objects"))?;
    Ok(rows.iter().map(object_from_row).collect())
}

/// Every timeline row for `object_id`, oldest first.
pub(crate) async fn timeline(
    client: &Client,
    object_id: &str,
) -> Result<Vec<TimelineEntry>, StoreError> {
    let rows = client
        .query_typed(
            "SELECT machine, object_id, from_state, to_state, delivery_id, provider_time, \
             received_at, decision, reason, at FROM timeline WHERE object_id = $1 ORDER BY id",
            &[(&object_id, Type::TEXT)],
        )
        .await
        .map_err(pg_error("reading a timeline"))?;
    Ok(rows
        .iter()
        .map(|r| TimelineEntry {
            machine: r.get(0),
            object_id: r.get(1),
            from: r.get(2),
            to: r.get(3),
            delivery: r.get(4),
            provider_time: r.get::<_, Option<i64>>(5).map(UnixMillis),
            received_at: r.get::<_, Option<i64>>(6).map(UnixMillis),
            decision: r.get(7),
            reason: r.get(8),
            at: UnixMillis(r.get(9)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::lock_key;

    #[test]
    fn lock_keys_are_stable_and_separate_machine_from_id() {
        assert_eq!(lock_key("m", "pi_1"), lock_key("m", "pi_1"));
        assert_ne!(lock_key("ab", "c"), lock_key("a", "bc"));
    }
}
