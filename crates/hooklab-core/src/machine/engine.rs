//! The engine: one business object's state and the rules that move it. Pure: the caller
//! loads an [`ObjectState`], applies an event with the time passed in, stores the state back
//! and appends the returned [`TimelineRow`]s.
//!
//! The rules, in the order they are checked:
//! 1. older, by provider time, than the current state → `ignored_stale` (equal times are not
//!    stale: providers stamp seconds, and two steps often share one);
//! 2. the current state again → `duplicate` (the state stays; a newer provider time becomes
//!    the state's time, so the provider's latest word on the object is what staleness uses);
//! 3. an allowed transition, or an initial state for an object not seen yet → `applied`;
//! 4. anything else → `parked`. Each time the object moves, parked events are re-evaluated in
//!    provider-time order (→ `applied_from_park`, or `ignored_stale`/`duplicate` and dropped);
//!    [`ObjectState::expire_parked`] turns those parked too long into `requires_review`.

use super::extract::MachineEvent;
use super::table::Machine;
use super::timeline::{Decision, TimelineRow};
use crate::clock::UnixMillis;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The state an object is in, and since when by the provider's clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Current {
    /// A state declared by the machine.
    pub state: String,
    /// The provider time of the event that moved the object here; older events are stale.
    pub since: UnixMillis,
}

/// An event waiting for the object to reach a state it can move from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedEvent {
    /// The event, with its delivery id and arrival time.
    pub event: MachineEvent,
    /// When it was parked; the review timeout counts from here.
    pub parked_at: UnixMillis,
    /// Why it could not apply when it arrived.
    pub reason: String,
}

/// One business object (a payment) as the engine keeps it. Serializes to JSON for a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectState {
    /// The machine whose states these are; events judged by another machine are rejected.
    machine: String,
    /// The object's id at the provider.
    object_id: String,
    /// `None` until an event in an initial state arrives.
    current: Option<Current>,
    /// The current state is one of the machine's `waiting` states.
    awaiting_confirmation: bool,
    /// A parked event outlived its timeout; cleared by [`ObjectState::take_review`].
    requires_review: bool,
    /// Events not valid yet, in provider-time order.
    parked: Vec<ParkedEvent>,
    /// Events that left the park by timeout, kept for the person who reviews them.
    review: Vec<ParkedEvent>,
}

/// What the rules say about one event, before anything changes.
enum Outcome {
    Apply,
    Duplicate,
    Stale,
    Park(String),
}

impl ObjectState {
    /// An object the machine has not seen yet.
    pub fn new(machine: &Machine, object_id: impl Into<String>) -> Self {
        Self {
            machine: machine.name().to_string(),
            object_id: object_id.into(),
            current: None,
            awaiting_confirmation: false,
            requires_review: false,
            parked: Vec::new(),
            review: Vec::new(),
        }
    }

    /// The machine's name.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The object's id.
    pub fn object_id(&self) -> &str {
        &self.object_id
    }

    /// The current state and its provider time, if the object has one.
    pub fn current(&self) -> Option<&Current> {
        self.current.as_ref()
    }

    /// The current state's name.
    pub fn state(&self) -> Option<&str> {
        self.current.as_ref().map(|c| c.state.as_str())
    }

    /// Whether the object waits for the provider (e.g. Stripe `processing`).
    pub fn awaiting_confirmation(&self) -> bool {
        self.awaiting_confirmation
    }

    /// Whether a person should look at the object.
    pub fn requires_review(&self) -> bool {
        self.requires_review
    }

    /// Events waiting to become valid, in provider-time order.
    pub fn parked(&self) -> &[ParkedEvent] {
        &self.parked
    }

    /// Events that timed out in the park.
    pub fn review(&self) -> &[ParkedEvent] {
        &self.review
    }

    /// Hands the timed-out events to the reviewer and clears `requires_review`.
    pub fn take_review(&mut self) -> Vec<ParkedEvent> {
        self.requires_review = false;
        std::mem::take(&mut self.review)
    }

    /// Judges `event` at `now` and, if valid, moves the object and re-evaluates the park.
    /// Returns one row per decision: the event's, then those of parked events it unblocked.
    pub fn apply(
        &mut self,
        machine: &Machine,
        mut event: MachineEvent,
        now: UnixMillis,
    ) -> Vec<TimelineRow> {
        event.received_at = Some(event.received_at.unwrap_or(now));
        let rejected = if machine.name() != self.machine {
            Some(format!(
                "machine `{}` cannot judge an object of machine `{}`",
                machine.name(),
                self.machine
            ))
        } else if event.object_id != self.object_id {
            Some(format!(
                "the event is about `{}`, not `{}`",
                event.object_id, self.object_id
            ))
        } else if !machine.has_state(&event.state) {
            Some(format!(
                "`{}` is not a state of machine `{}`",
                event.state, self.machine
            ))
        } else {
            None
        };
        if let Some(reason) = rejected {
            return vec![self.row(&event, Decision::Rejected, now, reason)];
        }
        let twin_parked = self
            .parked
            .iter()
            .any(|p| p.event.state == event.state && p.event.provider_time == event.provider_time);
        if twin_parked {
            let reason = format!(
                "the same event (`{}` at {}) is already parked",
                event.state,
                event.provider_time.to_rfc3339()
            );
            return vec![self.row(&event, Decision::Duplicate, now, reason)];
        }
        match self.judge(machine, &event) {
            Outcome::Stale => {
                let reason = self.stale_reason(&event);
                vec![self.row(&event, Decision::IgnoredStale, now, reason)]
            }
            Outcome::Duplicate => {
                let reason = self.duplicate_reason(&event);
                let mut rows = vec![self.row(&event, Decision::Duplicate, now, reason)];
                if self.refresh(&event) {
                    // Parked events older than the refreshed time are now stale.
                    self.drain_park(machine, now, &mut rows);
                }
                rows
            }
            Outcome::Park(why) => {
                let row = self.row(&event, Decision::Parked, now, format!("{why}; parked"));
                let key = (event.provider_time, event.received_at);
                let at = self
                    .parked
                    .partition_point(|p| (p.event.provider_time, p.event.received_at) <= key);
                self.parked.insert(
                    at,
                    ParkedEvent {
                        event,
                        parked_at: now,
                        reason: why,
                    },
                );
                vec![row]
            }
            Outcome::Apply => {
                let reason = self.applied_reason(&event);
                let mut rows = vec![self.row(&event, Decision::Applied, now, reason)];
                self.move_to(machine, &event);
                self.drain_park(machine, now, &mut rows);
                rows
            }
        }
    }

    /// Moves events parked for `timeout` or longer to the review list and flags the object
    /// `requires_review`. Call it periodically; it is a no-op when nothing expired.
    pub fn expire_parked(
        &mut self,
        machine: &Machine,
        now: UnixMillis,
        timeout: Duration,
    ) -> Vec<TimelineRow> {
        let timeout_ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        let (expired, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| now.0.saturating_sub(p.parked_at.0) >= timeout_ms);
        self.parked = kept;
        let rows = expired
            .iter()
            .map(|p| {
                let reason = format!(
                    "parked since {} ({}) and not valid after {} in machine `{}`; needs review",
                    p.parked_at.to_rfc3339(),
                    p.reason,
                    human(timeout),
                    machine.name()
                );
                self.row(&p.event, Decision::RequiresReview, now, reason)
            })
            .collect::<Vec<_>>();
        if !expired.is_empty() {
            self.requires_review = true;
            self.review.extend(expired);
        }
        rows
    }

    /// The rules, without side effects.
    fn judge(&self, machine: &Machine, event: &MachineEvent) -> Outcome {
        let Some(current) = &self.current else {
            return match machine.is_initial(&event.state) {
                true => Outcome::Apply,
                false => Outcome::Park(format!(
                    "object not seen yet and `{}` is not an initial state (initial: {})",
                    event.state,
                    machine.definition().initial.join(", ")
                )),
            };
        };
        if event.provider_time < current.since {
            Outcome::Stale
        } else if event.state == current.state {
            Outcome::Duplicate
        } else if machine.allows(&current.state, &event.state) {
            Outcome::Apply
        } else {
            let allowed = machine.next_states(&current.state).collect::<Vec<_>>();
            Outcome::Park(match allowed.is_empty() {
                true => format!(
                    "`{}` → `{}` is not allowed: `{}` is final",
                    current.state, event.state, current.state
                ),
                false => format!(
                    "`{}` → `{}` is not allowed (from `{}`: {})",
                    current.state,
                    event.state,
                    current.state,
                    allowed.join(", ")
                ),
            })
        }
    }

    /// Re-evaluates the park after a move, in provider-time order, until nothing changes.
    fn drain_park(&mut self, machine: &Machine, now: UnixMillis, rows: &mut Vec<TimelineRow>) {
        'pass: loop {
            let mut i = 0;
            while let Some(parked) = self.parked.get(i) {
                let outcome = self.judge(machine, &parked.event);
                if let Outcome::Park(_) = outcome {
                    i += 1;
                    continue;
                }
                let parked = self.parked.remove(i);
                let event = &parked.event;
                let changed = match outcome {
                    Outcome::Park(_) => false,
                    Outcome::Stale => {
                        let reason = format!("left the park: {}", self.stale_reason(event));
                        rows.push(self.row(event, Decision::IgnoredStale, now, reason));
                        false
                    }
                    Outcome::Duplicate => {
                        let reason = format!("left the park: {}", self.duplicate_reason(event));
                        rows.push(self.row(event, Decision::Duplicate, now, reason));
                        self.refresh(event)
                    }
                    Outcome::Apply => {
                        let reason = format!(
                            "parked at {}; {}",
                            parked.parked_at.to_rfc3339(),
                            self.applied_reason(event)
                        );
                        rows.push(self.row(event, Decision::AppliedFromPark, now, reason));
                        self.move_to(machine, event);
                        true
                    }
                };
                if changed {
                    // Events passed over earlier may now be stale or valid: start again.
                    continue 'pass;
                }
            }
            break;
        }
    }

    fn move_to(&mut self, machine: &Machine, event: &MachineEvent) {
        self.awaiting_confirmation = machine.is_waiting(&event.state);
        self.current = Some(Current {
            state: event.state.clone(),
            since: event.provider_time,
        });
    }

    /// A same-state event with a newer provider time: the state is confirmed as of that time,
    /// so events older than it become stale. Returns whether the time advanced.
    fn refresh(&mut self, event: &MachineEvent) -> bool {
        match &mut self.current {
            Some(c) if c.state == event.state && event.provider_time > c.since => {
                c.since = event.provider_time;
                true
            }
            _ => false,
        }
    }

    fn duplicate_reason(&self, event: &MachineEvent) -> String {
        match &self.current {
            Some(c) if event.provider_time > c.since => format!(
                "already `{}`; the state's time advances to {}",
                c.state,
                event.provider_time.to_rfc3339()
            ),
            _ => format!("already `{}`; nothing changes", event.state),
        }
    }

    fn applied_reason(&self, event: &MachineEvent) -> String {
        match &self.current {
            None => format!("first seen in initial state `{}`", event.state),
            Some(c) => format!("`{}` → `{}` is allowed", c.state, event.state),
        }
    }

    fn stale_reason(&self, event: &MachineEvent) -> String {
        match &self.current {
            Some(c) => format!(
                "happened at {}, before the current state `{}` (since {})",
                event.provider_time.to_rfc3339(),
                c.state,
                c.since.to_rfc3339()
            ),
            None => "older than the current state".to_string(),
        }
    }

    fn row(
        &self,
        event: &MachineEvent,
        decision: Decision,
        now: UnixMillis,
        reason: String,
    ) -> TimelineRow {
        TimelineRow {
            machine: self.machine.clone(),
            object_id: event.object_id.clone(),
            event_type: event.event_type.clone(),
            from: self.state().map(str::to_string),
            to: event.state.clone(),
            delivery_id: event.delivery_id.clone(),
            provider_time: event.provider_time,
            received_at: event.received_at.unwrap_or(now),
            decided_at: now,
            decision,
            reason,
        }
    }
}

/// A timeout in the unit a person would say it in.
fn human(timeout: Duration) -> String {
    let secs = timeout.as_secs();
    match (secs % 3600, secs % 60) {
        _ if secs == 0 => format!("{} ms", timeout.as_millis()),
        (0, _) => format!("{} h", secs / 3600),
        (_, 0) => format!("{} min", secs / 60),
        _ => format!("{secs} s"),
    }
}
