//! State machines at work: after a delivery is processed, each machine that applies to its
//! provider reads the event from the raw body and moves its business object; the object and
//! its timeline rows are written by the store in one transaction, so two events for the same
//! object never interleave. Parked events that wait too long are expired to `requires_review`.

use hooklab_core::clock::UnixMillis;
use hooklab_core::machine::{Machine, ObjectState, ProviderScope, TimelineRow, builtins};
use hooklab_core::provider::ProviderId;
use hooklab_core::store::{
    BoxFuture, Delivery, ObjectChange, ObjectFilter, ObjectRecord, Store, StoreError, TimelineEntry,
};
use std::sync::Arc;
use std::time::Duration;

/// The flag an object carries while a waiting state (e.g. Stripe `processing`) holds.
pub const AWAITING_CONFIRMATION: &str = "awaiting_confirmation";
/// The flag an object carries once a parked event timed out.
pub const REQUIRES_REVIEW: &str = "requires_review";

/// The machines a runtime applies: the built-ins, plus any loaded from TOML.
#[derive(Debug, Clone)]
pub struct Machines(Arc<Vec<Machine>>);

impl Default for Machines {
    /// The built-in machines made for one provider (Stripe, Mercado Pago, Asaas, Wompi,
    /// Paddle). The generic payment machine applies to any provider, so it runs only when
    /// configured explicitly.
    fn default() -> Self {
        Self::new(
            builtins()
                .into_iter()
                .filter(|m| matches!(m.provider(), ProviderScope::Only(_)))
                .collect(),
        )
    }
}

impl Machines {
    pub fn new(machines: Vec<Machine>) -> Self {
        Self(Arc::new(machines))
    }

    /// Every machine, by name.
    pub fn all(&self) -> &[Machine] {
        &self.0
    }

    /// Whether some machine reads deliveries from `provider`.
    pub fn applies_to(&self, provider: ProviderId) -> bool {
        self.0.iter().any(|m| m.applies_to(provider))
    }

    /// The machine with this name.
    pub fn get(&self, name: &str) -> Option<&Machine> {
        self.0.iter().find(|m| m.name() == name)
    }
}

/// Applies every machine that fits `delivery` (by provider, then by event type); returns the
/// changes written. A body that is not JSON, or not an event a machine knows, changes nothing.
pub async fn apply_delivery(
    store: &dyn Store,
    machines: &Machines,
    delivery: &Delivery,
    now: UnixMillis,
) -> Result<Vec<ObjectChange>, StoreError> {
    queue_delivery(store, machines, delivery, now).await
}

/// [`apply_delivery`], with the object updates queued on the store **now**: the returned future
/// only waits for them. The store applies updates in the order they were queued, each reading
/// the object as the updates before it left it, so a caller may queue the next delivery's
/// updates before this one's are done (the receiver's machine task does, to keep up).
pub fn queue_delivery(
    store: &dyn Store,
    machines: &Machines,
    delivery: &Delivery,
    now: UnixMillis,
) -> BoxFuture<'static, Result<Vec<ObjectChange>, StoreError>> {
    let Some(provider) = delivery.record.provider else {
        return Box::pin(async { Ok(Vec::new()) });
    };
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&delivery.record.body) else {
        return Box::pin(async { Ok(Vec::new()) });
    };
    let mut queued = Vec::new();
    for (index, machine) in machines.all().iter().enumerate() {
        if !machine.applies_to(provider) {
            continue;
        }
        let Some(event) = machine.event_from_body(&body) else {
            continue;
        };
        let event = event.delivered(delivery.id.to_string(), delivery.record.received_at);
        let object_id = event.object_id.clone();
        let target = object_id.clone();
        // The update runs on the store's thread: it takes the shared list, not a deep copy.
        let all = machines.clone();
        let update = Box::new(move |record: Option<ObjectRecord>| {
            let m = &all.all()[index];
            let mut state = restore(m, &object_id, record);
            let rows = state.apply(m, event, now);
            Some(change(&state, rows, now))
        });
        queued.push(store.update_object(machine.name().to_string(), target, update));
    }
    Box::pin(async move {
        let mut changes = Vec::new();
        for update in queued {
            if let Some(c) = update.await? {
                changes.push(c);
            }
        }
        Ok(changes)
    })
}

/// Moves parked events waiting `timeout` or longer to review (`requires_review`).
pub async fn expire_parked(
    store: &dyn Store,
    machines: &Machines,
    now: UnixMillis,
    timeout: Duration,
) -> Result<Vec<ObjectChange>, StoreError> {
    let cutoff = UnixMillis(
        now.0
            .saturating_sub(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX)),
    );
    let candidates = store
        .objects(ObjectFilter {
            limit: Some(10_000),
            ..ObjectFilter::default()
        })
        .await?;
    let mut changes = Vec::new();
    for object in candidates {
        let Some(machine) = machines.get(&object.machine).cloned() else {
            continue;
        };
        let has_old_parked = serde_json::from_str::<ObjectState>(&object.data)
            .is_ok_and(|s| s.parked().iter().any(|p| p.parked_at <= cutoff));
        if !has_old_parked {
            continue;
        }
        let object_id = object.object_id.clone();
        let update = Box::new(move |record: Option<ObjectRecord>| {
            let mut state = restore(&machine, &object_id, record);
            let rows = state.expire_parked(&machine, now, timeout);
            (!rows.is_empty()).then(|| change(&state, rows, now))
        });
        if let Some(c) = store
            .update_object(object.machine.clone(), object.object_id.clone(), update)
            .await?
        {
            changes.push(c);
        }
    }
    Ok(changes)
}

/// The engine state stored for an object, or a new one (also when the stored JSON is from an
/// incompatible version: the timeline keeps the history either way).
pub(crate) fn restore(
    machine: &Machine,
    object_id: &str,
    record: Option<ObjectRecord>,
) -> ObjectState {
    record
        .and_then(|r| serde_json::from_str(&r.data).ok())
        .unwrap_or_else(|| ObjectState::new(machine, object_id))
}

/// The store write for `state` after a decision: the object record (state, flags, engine
/// JSON) and the timeline rows.
pub(crate) fn change(state: &ObjectState, rows: Vec<TimelineRow>, now: UnixMillis) -> ObjectChange {
    let mut flags = Vec::new();
    if state.awaiting_confirmation() {
        flags.push(AWAITING_CONFIRMATION.to_string());
    }
    if state.requires_review() {
        flags.push(REQUIRES_REVIEW.to_string());
    }
    ObjectChange {
        object: ObjectRecord {
            machine: state.machine().to_string(),
            object_id: state.object_id().to_string(),
            state: state.state().map(str::to_string),
            state_time: state.current().map(|c| c.since),
            flags,
            data: serde_json::to_string(state).unwrap_or_else(|_| "{}".into()),
            updated_at: now,
        },
        rows: rows.into_iter().map(entry).collect(),
    }
}

fn entry(row: TimelineRow) -> TimelineEntry {
    TimelineEntry {
        machine: row.machine,
        object_id: row.object_id,
        from: row.from,
        to: Some(row.to),
        delivery: row.delivery_id.and_then(|d| d.parse().ok()),
        provider_time: Some(row.provider_time),
        received_at: Some(row.received_at),
        decision: row.decision.as_str().to_string(),
        reason: row.reason,
        at: row.decided_at,
    }
}

/// Announces every timeline row of `changes` on the events bus.
pub fn announce(
    events: &tokio::sync::broadcast::Sender<crate::events::Event>,
    changes: Vec<ObjectChange>,
) {
    for row in changes.into_iter().flat_map(|c| c.rows) {
        // No subscriber is fine; a lagging one misses events but never blocks.
        let _ = events.send(crate::events::Event::Transition(row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooklab_core::metadata::Metadata;
    use hooklab_core::provider::ProviderId;
    use hooklab_core::store::NewDelivery;
    use hooklab_core::store::sqlite::SqliteStore;
    use hooklab_core::verdict::Verdict;

    async fn deliver(store: &SqliteStore, body: serde_json::Value) -> Delivery {
        let body = serde_json::to_vec(&body).unwrap();
        let d = NewDelivery {
            received_at: UnixMillis(1_700_000_100_000),
            source: "stripe".into(),
            provider: Some(ProviderId::Stripe),
            method: "POST".into(),
            path: "/stripe".into(),
            query: None,
            headers: vec![],
            body_size: body.len() as u64,
            body,
            body_refused: false,
            remote_addr: None,
            verdict: Verdict::valid(0, None, "valid".into()),
            metadata: Metadata::default(),
            response_status: 200,
            idempotency: None,
            enqueue: false,
        };
        let id = store.record(d).await.unwrap().id;
        store.get(id).await.unwrap().unwrap()
    }

    fn pi(kind: &str, created: i64) -> serde_json::Value {
        serde_json::json!({"id": format!("evt_{created}"), "type": kind, "created": created,
            "data": {"object": {"id": "pi_1", "object": "payment_intent"}}})
    }

    #[tokio::test]
    async fn out_of_order_stripe_events_end_in_the_right_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let machines = Machines::default();
        let now = UnixMillis(1_700_000_200_000);
        for (kind, at) in [
            ("payment_intent.succeeded", 1_700_000_030),
            ("payment_intent.created", 1_700_000_010),
            ("payment_intent.processing", 1_700_000_020),
        ] {
            let d = deliver(&store, pi(kind, at)).await;
            apply_delivery(&store, &machines, &d, now).await.unwrap();
        }
        let objects = store.objects(ObjectFilter::default()).await.unwrap();
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0].state.as_deref(), Some("succeeded"));
        assert!(
            objects[0].flags.is_empty(),
            "nothing waits, nothing to review"
        );
        let decisions: Vec<_> = store
            .timeline("pi_1".into())
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.decision)
            .collect();
        assert_eq!(
            decisions,
            ["parked", "applied", "applied_from_park", "ignored_stale"],
            "succeeded waits for created, then applies; processing is stale"
        );
    }

    #[tokio::test]
    async fn a_parked_event_past_the_timeout_flags_the_object_for_review() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let machines = Machines::default();
        let refund = serde_json::json!({"id": "evt_r", "type": "charge.refunded",
            "created": 1_700_000_050,
            "data": {"object": {"id": "ch_1", "object": "charge", "payment_intent": "pi_9"}}});
        let d = deliver(&store, refund).await;
        let t0 = UnixMillis(1_700_000_100_000);
        apply_delivery(&store, &machines, &d, t0).await.unwrap();
        let early = expire_parked(&store, &machines, t0, Duration::from_secs(60))
            .await
            .unwrap();
        assert!(early.is_empty(), "not yet past the timeout");
        let later = UnixMillis(t0.0 + 61_000);
        let changes = expire_parked(&store, &machines, later, Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(changes.len(), 1);
        let object = &store.objects(ObjectFilter::default()).await.unwrap()[0];
        assert!(
            object.flags.contains(&REQUIRES_REVIEW.to_string()),
            "{object:?}"
        );
    }

    #[tokio::test]
    async fn bodies_that_are_not_events_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let d = deliver(&store, serde_json::json!({"hello": "world"})).await;
        let changes = apply_delivery(&store, &Machines::default(), &d, UnixMillis(1))
            .await
            .unwrap();
        assert!(changes.is_empty());
    }
}
