//! The built-in state machines against realistic deliveries: every history is fed in order,
//! reversed, in every permutation, duplicated, shuffled with its duplicates, and followed by
//! stale redeliveries; it must always end in the same state with a consistent timeline. Then
//! the required scenarios one by one, the review timeout, definitions as TOML, and odd bodies.
//! Shared here: the runner, its timeline invariants, and realistic bodies per provider.

use hooklab_core::clock::UnixMillis;
use hooklab_core::machine::{Decision, Machine, ObjectState, TimelineRow, builtin};
use serde_json::{Value, json};
use std::collections::BTreeMap;

// The capabilities, one module each (the crate root needs their paths spelled out).
#[path = "machines/convergence.rs"]
mod convergence;
#[path = "machines/definitions.rs"]
mod definitions;
#[path = "machines/odd_bodies.rs"]
mod odd_bodies;
#[path = "machines/order.rs"]
mod order;
#[path = "machines/review.rs"]
mod review;
#[path = "machines/scenarios.rs"]
mod scenarios;

/// Runs deliveries through a machine and checks the timeline's invariants.
struct Run {
    object: ObjectState,
    rows: Vec<TimelineRow>,
}

fn run(machine: &Machine, object_id: &str, bodies: &[&Value]) -> Run {
    let mut object = ObjectState::new(machine, object_id);
    let mut rows = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let event = machine
            .event_from_body(body)
            .unwrap_or_else(|| panic!("{}: not a machine event: {body}", machine.name()));
        let now = UnixMillis::from_secs(1_900_000_000 + i as i64);
        rows.extend(object.apply(machine, event.delivered(format!("dlv_{i}"), now), now));
    }
    Run { object, rows }
}

impl Run {
    fn decisions(&self) -> Vec<Decision> {
        self.rows.iter().map(|r| r.decision).collect()
    }

    /// Every delivery ends with one final decision (parked ones leave the park exactly once),
    /// moves chain `from` → `to` from nothing to the object's state, in provider-time order.
    fn assert_consistent(&self, label: &str) {
        let mut per_delivery: BTreeMap<&str, Vec<Decision>> = BTreeMap::new();
        for row in &self.rows {
            let id = row
                .delivery_id
                .as_deref()
                .expect("every test delivery has an id");
            per_delivery.entry(id).or_default().push(row.decision);
        }
        for (id, decisions) in per_delivery {
            use Decision::*;
            let ok = matches!(
                decisions.as_slice(),
                [Applied | Duplicate | IgnoredStale]
                    | [Parked, AppliedFromPark | Duplicate | IgnoredStale]
            );
            assert!(ok, "{label}: {id} decided {decisions:?}");
        }
        let moves: Vec<&TimelineRow> = self.rows.iter().filter(|r| r.decision.moved()).collect();
        let mut state: Option<&str> = None;
        for pair in moves.windows(2) {
            assert!(
                pair[0].provider_time <= pair[1].provider_time,
                "{label}: the object never moves back in provider time"
            );
        }
        for row in moves {
            assert_eq!(row.from.as_deref(), state, "{label}: moves chain");
            state = Some(&row.to);
        }
        assert_eq!(
            state,
            self.object.state(),
            "{label}: the last move is the state"
        );
    }
}

/// One object's true history, oldest first, and the state it must end in.
struct History {
    machine: &'static str,
    object: &'static str,
    bodies: Vec<Value>,
    end: &'static str,
}

impl History {
    fn check(&self, label: &str, order: &[usize]) -> Run {
        let machine = builtin(self.machine).expect("built in");
        let bodies: Vec<&Value> = order.iter().map(|&i| &self.bodies[i]).collect();
        let run = run(&machine, self.object, &bodies);
        let label = format!("{} {label} {order:?}", self.machine);
        assert_eq!(run.object.state(), Some(self.end), "{label}: final state");
        assert!(
            run.object.parked().is_empty(),
            "{label}: nothing left parked"
        );
        assert!(
            !run.object.requires_review(),
            "{label}: no review without a timeout"
        );
        run.assert_consistent(&label);
        run
    }

    /// In order, reversed, every permutation, duplicated, shuffled duplicates, stale repeats.
    fn converges(&self) {
        let n = self.bodies.len();
        let in_order: Vec<usize> = (0..n).collect();
        let run = self.check("in order", &in_order);
        assert!(
            run.decisions().iter().all(|d| *d == Decision::Applied),
            "{}: a history in order applies step by step: {:?}",
            self.machine,
            run.decisions()
        );
        let reversed: Vec<usize> = (0..n).rev().collect();
        self.check("reversed", &reversed);
        for perm in order::all(n) {
            self.check("permutation", &perm);
        }
        let twice: Vec<usize> = (0..n).flat_map(|i| [i, i]).collect();
        let run = self.check("each twice", &twice);
        let dupes = run
            .decisions()
            .iter()
            .filter(|d| **d == Decision::Duplicate)
            .count();
        assert_eq!(
            dupes, n,
            "{}: every second copy is a duplicate",
            self.machine
        );
        let doubled: Vec<usize> = (0..2 * n).map(|i| i % n).collect();
        for seed in 0..100 {
            let order: Vec<usize> = order::shuffled(2 * n, seed)
                .into_iter()
                .map(|i| doubled[i])
                .collect();
            self.check("shuffled duplicates", &order);
        }
        let stale: Vec<usize> = (0..n).chain((0..n - 1).rev()).collect();
        let run = self.check("then stale repeats", &stale);
        let tail: Vec<Decision> = run.decisions().split_off(n);
        assert!(
            tail.iter().all(|d| *d == Decision::IgnoredStale),
            "{}: older events after the last one are stale: {tail:?}",
            self.machine
        );
    }
}

fn stripe(kind: &str, at: i64) -> Value {
    let object = match kind.starts_with("charge.") {
        true => json!({"id": "ch_3Mtw", "object": "charge", "payment_intent": "pi_3Mtw",
                       "amount_refunded": 2000}),
        false => json!({"id": "pi_3Mtw", "object": "payment_intent", "amount": 2000,
                        "currency": "usd", "status": kind.rsplit('.').next()}),
    };
    json!({"id": format!("evt_{at}"), "object": "event", "api_version": "2024-06-20",
           "created": 1_712_000_000 + at, "livemode": false, "pending_webhooks": 1,
           "type": kind, "data": {"object": object}})
}

fn mercadopago(action: &str, status: &str, minute: i64) -> Value {
    json!({"id": 114_000_000 + minute, "live_mode": true, "type": "payment",
           "date_created": format!("2024-03-01T12:{minute:02}:07.000-04:00"), "user_id": 123_456,
           "api_version": "v1", "action": action,
           "data": {"id": "1319283754", "status": status}})
}

fn asaas(event: &str, minute: i64) -> Value {
    json!({"id": format!("evt_05b708f961d739ea7eba7e4db318f621&{minute}"), "event": event,
           "dateCreated": format!("2024-06-12 16:{minute:02}:03"),
           "payment": {"object": "payment", "id": "pay_080225913252", "dateCreated": "2024-06-12",
                       "customer": "cus_G7Dvo4iphUNk", "value": 100.0, "billingType": "PIX",
                       "status": event.trim_start_matches("PAYMENT_")}})
}

fn wompi(status: &str, at: i64) -> Value {
    json!({"event": "transaction.updated", "environment": "prod", "timestamp": 1_530_291_411 + at,
           "sent_at": "2018-07-20T16:45:05.000Z",
           "data": {"transaction": {"id": "1234-1610641025-49201", "amount_in_cents": 4_490_000,
                                    "reference": "MZQ3X2DE2SMX", "status": status,
                                    "payment_method_type": "NEQUI"}},
           "signature": {"properties": ["transaction.id", "transaction.status"],
                         "checksum": "3476DDA50F64CD7CBD160689640506FEBEA93239BC524FC0469B2C68A3CC8BD0"}})
}

fn paddle(kind: &str, status: &str, second: i64) -> Value {
    json!({"event_id": format!("evt_01hv8x{second}"), "event_type": kind,
           "occurred_at": format!("2024-04-12T10:18:{second:02}.621022Z"),
           "notification_id": format!("ntf_01hv8x{second}"),
           "data": {"id": "txn_01hv8wptq8987qeep44cyrewp9", "status": status,
                    "origin": "subscription_recurring", "currency_code": "USD"}})
}

fn generic(kind: &str, minute: i64) -> Value {
    json!({"type": kind, "created_at": format!("2026-02-01T09:{minute:02}:00Z"),
           "data": {"id": "pay_42", "amount": 1990, "currency": "BRL"}})
}
