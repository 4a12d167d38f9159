//! One reconciliation pass, and its [`Report`].
//!
//! Which objects are checked: those of a machine that is both loaded and served by an API,
//! not updated since `now − older_than`, and either without a state yet, in a non-final
//! state, or flagged `awaiting_confirmation` / `requires_review`.
//!
//! How a disagreement is corrected: as a machine event (`event_type` `reconciliation`, no
//! delivery, the truth's state, at the truth's time or else `now`) applied by the engine in
//! the store's write transaction, exactly like a delivery, so the timeline shows it with a
//! reason starting `reconciliation:`. The engine's rules still hold: a truth the machine
//! cannot reach from the current state (e.g. `processing` → `refunded`, with `succeeded`
//! never delivered) is parked, and reported with that decision. When an event with the
//! truth's state is already parked, the correction reuses its time, so the engine calls it a
//! duplicate instead of parking a copy on every pass.
//!
//! Gaps: for each API with an events API, the event ids it lists since the gap window's start
//! (configured, or else the oldest delivery recorded from the machine's provider), minus
//! every event id Hooklab recorded from that provider. Events still in flight, and event types
//! the endpoint is not subscribed to, show up as missing too: this is a list to look at.

use super::{Apis, ProviderApi, RECONCILIATION_EVENT, ReconcileError, Truth};
use crate::objects::{AWAITING_CONFIRMATION, Machines, REQUIRES_REVIEW, change, restore};
use hooklab_core::clock::UnixMillis;
use hooklab_core::machine::{Decision, Machine, MachineEvent, ObjectState, ProviderScope};
use hooklab_core::provider::ProviderId;
use hooklab_core::store::{DeliveryFilter, ObjectFilter, ObjectRecord, Store};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Objects read per machine in one pass.
const OBJECT_LIMIT: u32 = 10_000;

/// Deliveries read per page while collecting recorded event ids.
const DELIVERY_PAGE: u32 = 10_000;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Objects the providers were asked about.
    pub checked: usize,
    /// Objects whose state differed from the provider's, and what the machine decided.
    pub corrections: Vec<Correction>,
    /// Objects already in the provider's state.
    pub unchanged: Vec<Unchanged>,
    /// What could not be checked, and why (the pass went on).
    pub errors: Vec<Failure>,
    /// Per API with an events API: the events it lists that Hooklab never recorded.
    pub gaps: Vec<Gap>,
}

/// A correction applied through the state machine (its timeline row says the same).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Correction {
    pub machine: String,
    pub object_id: String,
    /// The object's state before (`None`: it had none yet).
    pub from: Option<String>,
    /// The provider's state.
    pub to: String,
    /// What the machine did with it: `applied` when the object moved; `parked` (or
    /// `duplicate` of an already parked event) when the machine cannot go there yet;
    /// `ignored_stale` when the object's state is newer than the provider's time.
    pub decision: Decision,
    /// The timeline row's reason.
    pub reason: String,
    /// The provider time the correction carried.
    pub provider_time: UnixMillis,
}

/// An object the provider agrees with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unchanged {
    pub machine: String,
    pub object_id: String,
    pub state: String,
}

/// Something a pass could not do: check one object (`object_id` set), or look for gaps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub machine: String,
    pub object_id: Option<String>,
    /// A stable snake_case code: a [`ReconcileError::code`], `not_found` (the provider does
    /// not know the object) or `unknown_state` (the API's state is not the machine's).
    pub code: &'static str,
    pub message: String,
}

/// Events the provider created in the window that Hooklab never recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// The machine whose API was asked.
    pub machine: String,
    /// The window's start.
    pub since: UnixMillis,
    /// How many events the provider listed.
    pub listed: usize,
    /// Their ids, in the provider's order, minus those Hooklab recorded.
    pub missing_events: Vec<String>,
}

/// One pass: asks each served machine's API about its stuck objects, corrects those that
/// disagree through the machine, then looks for gaps. Provider failures are per object, in
/// [`Report::errors`]; only a store failure ends the pass with an error.
pub async fn reconcile(
    store: &dyn Store,
    machines: &Machines,
    apis: &Apis,
    older_than: Duration,
    now: UnixMillis,
) -> Result<Report, ReconcileError> {
    let older_ms = i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
    let cutoff = UnixMillis(now.0.saturating_sub(older_ms));
    let mut report = Report::default();
    for (machine, api) in served(machines, apis) {
        let objects = store
            .objects(ObjectFilter {
                limit: Some(OBJECT_LIMIT),
                machine: Some(machine.name().to_string()),
                state: None,
                updated_before: Some(cutoff),
            })
            .await?;
        for object in objects.iter().filter(|o| stuck(machine, o)) {
            report.checked += 1;
            check(store, machine, api, object, now, &mut report).await?;
        }
    }
    look_for_gaps(store, machines, apis, &mut report).await?;
    Ok(report)
}

/// The machines both loaded and served, with their APIs.
fn served<'a>(
    machines: &'a Machines,
    apis: &'a Apis,
) -> impl Iterator<Item = (&'a Machine, &'a dyn ProviderApi)> {
    apis.machines()
        .filter_map(|name| Some((machines.get(name)?, apis.get(name)?)))
}

/// Whether the object may still be waiting for news from the provider.
fn stuck(machine: &Machine, object: &ObjectRecord) -> bool {
    let flagged = object
        .flags
        .iter()
        .any(|f| f == AWAITING_CONFIRMATION || f == REQUIRES_REVIEW);
    match &object.state {
        None => true,
        Some(state) => flagged || !machine.is_final(state),
    }
}

/// Asks about one object and, if the provider disagrees, corrects it.
async fn check(
    store: &dyn Store,
    machine: &Machine,
    api: &dyn ProviderApi,
    object: &ObjectRecord,
    now: UnixMillis,
    report: &mut Report,
) -> Result<(), ReconcileError> {
    let id = object.object_id.as_str();
    let mut fail = |code: &'static str, message: String| {
        tracing::warn!(
            machine = machine.name(),
            object_id = id,
            code,
            "reconciliation: {message}"
        );
        report.errors.push(Failure {
            machine: machine.name().to_string(),
            object_id: Some(id.to_string()),
            code,
            message,
        });
    };
    let truth = match api.fetch(id).await {
        Ok(Some(truth)) => truth,
        Ok(None) => {
            let why = format!(
                "the provider does not know `{id}`: it may belong to another account or mode \
                 (test/live), or come from a generated event"
            );
            fail("not_found", why);
            return Ok(());
        }
        Err(e) => {
            fail(e.code(), e.to_string());
            return Ok(());
        }
    };
    if !machine.has_state(&truth.state) {
        let why = format!(
            "the provider's state `{}` is not a state of machine `{}`",
            truth.state,
            machine.name()
        );
        fail("unknown_state", why);
        return Ok(());
    }
    let in_sync = Unchanged {
        machine: machine.name().to_string(),
        object_id: id.to_string(),
        state: truth.state.clone(),
    };
    if object.state.as_deref() == Some(truth.state.as_str()) {
        report.unchanged.push(in_sync);
        return Ok(());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let m = machine.clone();
    let object_id = id.to_string();
    let update = Box::new(move |record: Option<ObjectRecord>| {
        let mut state = restore(&m, &object_id, record);
        if state.state() == Some(truth.state.as_str()) {
            // A delivery moved it there since the object was listed.
            let _ = tx.send(None);
            return None;
        }
        let from = state.state().map(str::to_string);
        let event = correction(&state, &object_id, &truth, now);
        let mut rows = state.apply(&m, event, now);
        let first = rows.first_mut().map(|row| {
            row.reason = format!(
                "{RECONCILIATION_EVENT}: the provider's API says `{}`; {}",
                row.to, row.reason
            );
            Correction {
                machine: row.machine.clone(),
                object_id: row.object_id.clone(),
                from,
                to: row.to.clone(),
                decision: row.decision,
                reason: row.reason.clone(),
                provider_time: row.provider_time,
            }
        });
        let _ = tx.send(first);
        Some(change(&state, rows, now))
    });
    store
        .update_object(machine.name().to_string(), id.to_string(), update)
        .await?;
    match rx.await {
        Ok(Some(c)) => {
            tracing::info!(
                machine = %c.machine,
                object_id = %c.object_id,
                from = c.from.as_deref().unwrap_or("(none)"),
                to = %c.to,
                decision = %c.decision,
                "reconciliation: {}",
                c.reason
            );
            report.corrections.push(c);
        }
        Ok(None) | Err(_) => report.unchanged.push(in_sync),
    }
    Ok(())
}

/// The machine event that tells the object the provider's truth.
fn correction(
    state: &ObjectState,
    object_id: &str,
    truth: &Truth,
    now: UnixMillis,
) -> MachineEvent {
    let parked = state
        .parked()
        .iter()
        .find(|p| p.event.state == truth.state)
        .map(|p| p.event.provider_time);
    MachineEvent {
        object_id: object_id.to_string(),
        event_type: RECONCILIATION_EVENT.to_string(),
        state: truth.state.clone(),
        provider_time: parked.or(truth.provider_time).unwrap_or(now),
        delivery_id: None,
        received_at: Some(now),
    }
}

/// Compares each events API's list with the event ids Hooklab recorded.
async fn look_for_gaps(
    store: &dyn Store,
    machines: &Machines,
    apis: &Apis,
    report: &mut Report,
) -> Result<(), ReconcileError> {
    let mut recorded: Option<RecordedEvents> = None;
    for (machine, api) in served(machines, apis) {
        let provider = match machine.provider() {
            ProviderScope::Only(p) => Some(p),
            ProviderScope::Any => None,
        };
        let seen = match &mut recorded {
            Some(seen) => seen,
            None => recorded.insert(RecordedEvents::scan(store).await?),
        };
        let Some(since) = apis
            .configured_gaps_since()
            .or_else(|| seen.oldest(provider))
        else {
            continue; // Nothing recorded from this provider: no listening window to check.
        };
        match api.event_ids_since(since).await {
            Ok(None) => {}
            Ok(Some(ids)) => {
                let listed = ids.len();
                let missing_events: Vec<String> = ids
                    .into_iter()
                    .filter(|id| !seen.has(provider, id))
                    .collect();
                if !missing_events.is_empty() {
                    tracing::info!(
                        machine = machine.name(),
                        missing = missing_events.len(),
                        "reconciliation: events the provider created since {} that Hooklab never \
                         recorded: {}",
                        since.to_rfc3339(),
                        missing_events.join(", ")
                    );
                }
                report.gaps.push(Gap {
                    machine: machine.name().to_string(),
                    since,
                    listed,
                    missing_events,
                });
            }
            Err(e) => {
                tracing::warn!(machine = machine.name(), "reconciliation: gap check: {e}");
                report.errors.push(Failure {
                    machine: machine.name().to_string(),
                    object_id: None,
                    code: e.code(),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Every event id Hooklab recorded, by provider, and when each provider was first heard.
#[derive(Default)]
struct RecordedEvents {
    ids: HashMap<Option<ProviderId>, HashSet<String>>,
    oldest: HashMap<Option<ProviderId>, UnixMillis>,
}

impl RecordedEvents {
    /// Reads every delivery summary, newest first, page by page.
    async fn scan(store: &dyn Store) -> Result<Self, ReconcileError> {
        let mut seen = Self::default();
        let mut before = None;
        loop {
            let page = store
                .list(DeliveryFilter {
                    limit: Some(DELIVERY_PAGE),
                    before,
                    ..DeliveryFilter::default()
                })
                .await?;
            let Some(last) = page.last() else {
                return Ok(seen);
            };
            before = Some(last.id);
            for delivery in page {
                let oldest = seen
                    .oldest
                    .entry(delivery.provider)
                    .or_insert(delivery.received_at);
                *oldest = (*oldest).min(delivery.received_at);
                if let Some(id) = delivery.event_id {
                    seen.ids.entry(delivery.provider).or_default().insert(id);
                }
            }
        }
    }

    /// Whether `id` was recorded from `provider` (from any source, for `None`).
    fn has(&self, provider: Option<ProviderId>, id: &str) -> bool {
        match provider {
            Some(p) => self.ids.get(&Some(p)).is_some_and(|ids| ids.contains(id)),
            None => self.ids.values().any(|ids| ids.contains(id)),
        }
    }

    /// The first delivery recorded from `provider` (from any source, for `None`).
    fn oldest(&self, provider: Option<ProviderId>) -> Option<UnixMillis> {
        match provider {
            Some(p) => self.oldest.get(&Some(p)).copied(),
            None => self.oldest.values().min().copied(),
        }
    }
}
