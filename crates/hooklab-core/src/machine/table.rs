//! The validated machine: a [`Definition`] checked once and turned into lookup tables (state
//! flags, transitions, event mappings) so the engine never meets an undeclared state.

use super::definition::{Definition, EventMapping, ProviderScope};
use crate::provider::ProviderId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A definition that cannot run, with the place in it that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    #[error("cannot read the machine definition: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("cannot write the machine definition as TOML: {0}")]
    TomlWrite(#[from] toml::ser::Error),
    #[error("the machine has no `name`")]
    MissingName,
    #[error("machine `{machine}`: `states` is empty; declare at least one state")]
    NoStates { machine: String },
    #[error("machine `{machine}`: state `{state}` is declared twice in `states`")]
    DuplicateState { machine: String, state: String },
    #[error("machine `{machine}`: `initial` is empty; objects could never be first seen")]
    NoInitialState { machine: String },
    #[error(
        "machine `{machine}`: {place} names state `{state}`, which is not in `states` \
         (declared: {declared})"
    )]
    UnknownState {
        machine: String,
        place: String,
        state: String,
        declared: String,
    },
    #[error("machine `{machine}`: state `{state}` is final but `transitions.{state}` leaves it")]
    TransitionFromFinal { machine: String, state: String },
    #[error(
        "machine `{machine}`: `transitions.{state}` lists `{state}` itself; \
         a repeat is a duplicate, not a transition"
    )]
    SelfTransition { machine: String, state: String },
    #[error("machine `{machine}`: state `{state}` is final, so it cannot also be `waiting`")]
    WaitingStateIsFinal { machine: String, state: String },
    #[error(
        "machine `{machine}`: {place} = `{pointer}` must be a JSON pointer \
         starting with `/` (e.g. `/data/id`)"
    )]
    BadPointer {
        machine: String,
        place: String,
        pointer: String,
    },
    #[error("machine `{machine}`: `events` has an empty event type")]
    EmptyEventType { machine: String },
    #[error(
        "machine `{machine}`: `events.\"{event}\"` needs `state = \"…\"` \
         or `status = \"/pointer\"` with `values`"
    )]
    NoTarget { machine: String, event: String },
    #[error("machine `{machine}`: `events.\"{event}\"` sets both `state` and `status`; keep one")]
    TwoTargets { machine: String, event: String },
    #[error(
        "machine `{machine}`: `events.\"{event}\"` has `status` but no `values` to map it to states"
    )]
    NoValues { machine: String, event: String },
    #[error("machine `{machine}`: `events.\"{event}\"` has `values` but no `status` pointer")]
    ValuesWithoutStatus { machine: String, event: String },
    #[error(
        "machine `{machine}`: naive_time_offset_minutes = {minutes} \
         is not a UTC offset (±1080 at most)"
    )]
    BadOffset { machine: String, minutes: i32 },
}

impl DefinitionError {
    /// A stable snake_case code for the UI's `{code, message}`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Toml(_) => "toml_syntax",
            Self::TomlWrite(_) => "toml_write",
            Self::MissingName => "missing_name",
            Self::NoStates { .. } => "no_states",
            Self::DuplicateState { .. } => "duplicate_state",
            Self::NoInitialState { .. } => "no_initial_state",
            Self::UnknownState { .. } => "unknown_state",
            Self::TransitionFromFinal { .. } => "transition_from_final",
            Self::SelfTransition { .. } => "self_transition",
            Self::WaitingStateIsFinal { .. } => "waiting_state_is_final",
            Self::BadPointer { .. } => "bad_pointer",
            Self::EmptyEventType { .. } => "empty_event_type",
            Self::NoTarget { .. } => "no_target",
            Self::TwoTargets { .. } => "two_targets",
            Self::NoValues { .. } => "no_values",
            Self::ValuesWithoutStatus { .. } => "values_without_status",
            Self::BadOffset { .. } => "bad_offset",
        }
    }
}

/// Where an event type's target state comes from, once validated.
#[derive(Debug, Clone)]
pub(super) enum Target {
    Constant(String),
    Field {
        pointer: String,
        values: BTreeMap<String, String>,
    },
}

/// One event type's validated mapping.
#[derive(Debug, Clone)]
pub(super) struct Mapping {
    pub(super) object: String,
    pub(super) time: String,
    pub(super) target: Target,
}

/// What the engine needs to know about a state.
#[derive(Debug, Clone, Copy, Default)]
struct StateFlags {
    initial: bool,
    is_final: bool,
    waiting: bool,
}

/// A validated state machine, ready for [`super::ObjectState::apply`]. Serializes as (and
/// deserializes, with validation, from) its [`Definition`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Definition", try_from = "Definition")]
pub struct Machine {
    /// What was written, kept to serialize back and to show in the UI.
    definition: Definition,
    /// Each declared state's flags; a state absent here does not exist.
    states: BTreeMap<String, StateFlags>,
    /// Allowed moves, from → to.
    transitions: BTreeMap<String, BTreeSet<String>>,
    /// Per event type, how a body becomes a [`super::MachineEvent`].
    pub(super) events: BTreeMap<String, Mapping>,
}

impl From<Machine> for Definition {
    fn from(machine: Machine) -> Self {
        machine.definition
    }
}

impl TryFrom<Definition> for Machine {
    type Error = DefinitionError;
    fn try_from(def: Definition) -> Result<Self, Self::Error> {
        Self::from_definition(def)
    }
}

impl Machine {
    /// Checks a definition: a name, declared states (unique), at least one initial state,
    /// transitions, finals, waiting states and event targets that name declared states, no
    /// way out of a final state, and pointers that start with `/`.
    pub fn from_definition(definition: Definition) -> Result<Machine, DefinitionError> {
        let def = &definition;
        let machine = || def.name.clone();
        if def.name.trim().is_empty() {
            return Err(DefinitionError::MissingName);
        }
        if def.states.is_empty() {
            return Err(DefinitionError::NoStates { machine: machine() });
        }
        let mut states: BTreeMap<String, StateFlags> = BTreeMap::new();
        for state in &def.states {
            if states
                .insert(state.clone(), StateFlags::default())
                .is_some()
            {
                return Err(DefinitionError::DuplicateState {
                    machine: machine(),
                    state: state.clone(),
                });
            }
        }
        let known = |place: &str, state: &str| match states.contains_key(state) {
            true => Ok(()),
            false => Err(DefinitionError::UnknownState {
                machine: machine(),
                place: place.to_string(),
                state: state.to_string(),
                declared: def.states.join(", "),
            }),
        };
        if def.initial.is_empty() {
            return Err(DefinitionError::NoInitialState { machine: machine() });
        }
        for (place, list) in [
            ("`initial`", &def.initial),
            ("`final`", &def.finals),
            ("`waiting`", &def.waiting),
        ] {
            list.iter().try_for_each(|s| known(place, s))?;
        }
        let mut transitions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, tos) in &def.transitions {
            known("a `transitions` key", from)?;
            let place = format!("`transitions.{from}`");
            for to in tos {
                known(&place, to)?;
                if to == from {
                    return Err(DefinitionError::SelfTransition {
                        machine: machine(),
                        state: from.clone(),
                    });
                }
            }
            if !tos.is_empty() && def.finals.contains(from) {
                return Err(DefinitionError::TransitionFromFinal {
                    machine: machine(),
                    state: from.clone(),
                });
            }
            transitions
                .entry(from.clone())
                .or_default()
                .extend(tos.iter().cloned());
        }
        if let Some(state) = def.waiting.iter().find(|w| def.finals.contains(w)) {
            return Err(DefinitionError::WaitingStateIsFinal {
                machine: machine(),
                state: state.clone(),
            });
        }
        if def.naive_time_offset_minutes.abs() > 18 * 60 {
            return Err(DefinitionError::BadOffset {
                machine: machine(),
                minutes: def.naive_time_offset_minutes,
            });
        }
        let pointer = |place: String, p: &str| match p.starts_with('/') {
            true => Ok(p.to_string()),
            false => Err(DefinitionError::BadPointer {
                machine: machine(),
                place,
                pointer: p.to_string(),
            }),
        };
        pointer("`event_type`".into(), &def.event_type)?;
        pointer("`object`".into(), &def.object)?;
        pointer("`time`".into(), &def.time)?;
        let mut events = BTreeMap::new();
        for (event, mapping) in &def.events {
            if event.trim().is_empty() {
                return Err(DefinitionError::EmptyEventType { machine: machine() });
            }
            let place = |field: &str| format!("`events.\"{event}\".{field}`");
            let object = pointer(
                place("object"),
                mapping.object.as_ref().unwrap_or(&def.object),
            )?;
            let time = pointer(place("time"), mapping.time.as_ref().unwrap_or(&def.time))?;
            let target = target(def, event, mapping, &known, &pointer)?;
            events.insert(
                event.clone(),
                Mapping {
                    object,
                    time,
                    target,
                },
            );
        }
        let mut flag = |list: &[String], set: fn(&mut StateFlags)| {
            for state in list {
                if let Some(flags) = states.get_mut(state) {
                    set(flags);
                }
            }
        };
        flag(&def.initial, |f| f.initial = true);
        flag(&def.finals, |f| f.is_final = true);
        flag(&def.waiting, |f| f.waiting = true);
        Ok(Machine {
            definition,
            states,
            transitions,
            events,
        })
    }

    /// Reads and validates a TOML definition in one step.
    pub fn from_toml(text: &str) -> Result<Machine, DefinitionError> {
        Self::from_definition(Definition::from_toml(text)?)
    }

    /// The machine's name, e.g. `stripe-payment-intent`.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Which provider's deliveries the machine reads.
    pub fn provider(&self) -> ProviderScope {
        self.definition.provider
    }

    /// Whether deliveries from `provider` are for this machine.
    pub fn applies_to(&self, provider: ProviderId) -> bool {
        self.definition.provider.includes(provider)
    }

    /// The definition the machine was built from.
    pub fn definition(&self) -> &Definition {
        &self.definition
    }

    /// Whether `state` is declared.
    pub fn has_state(&self, state: &str) -> bool {
        self.states.contains_key(state)
    }

    /// Whether an object may be first seen in `state`.
    pub fn is_initial(&self, state: &str) -> bool {
        self.states.get(state).is_some_and(|f| f.initial)
    }

    /// Whether `state` has no way out.
    pub fn is_final(&self, state: &str) -> bool {
        self.states.get(state).is_some_and(|f| f.is_final)
    }

    /// Whether an object in `state` is awaiting the provider's confirmation.
    pub fn is_waiting(&self, state: &str) -> bool {
        self.states.get(state).is_some_and(|f| f.waiting)
    }

    /// Whether `from → to` is an allowed transition.
    pub fn allows(&self, from: &str, to: &str) -> bool {
        self.transitions.get(from).is_some_and(|t| t.contains(to))
    }

    /// The states `from` may move to, in name order.
    pub fn next_states(&self, from: &str) -> impl Iterator<Item = &str> {
        self.transitions
            .get(from)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// The event types the machine maps, in name order.
    pub fn event_types(&self) -> impl Iterator<Item = &str> {
        self.events.keys().map(String::as_str)
    }
}

/// Validates one event mapping's target: exactly one of a constant state or a status field.
fn target(
    def: &Definition,
    event: &str,
    mapping: &EventMapping,
    known: &dyn Fn(&str, &str) -> Result<(), DefinitionError>,
    pointer: &dyn Fn(String, &str) -> Result<String, DefinitionError>,
) -> Result<Target, DefinitionError> {
    let machine = || def.name.clone();
    let event_name = || event.to_string();
    match (&mapping.state, &mapping.status) {
        (Some(_), Some(_)) => Err(DefinitionError::TwoTargets {
            machine: machine(),
            event: event_name(),
        }),
        (None, None) => Err(DefinitionError::NoTarget {
            machine: machine(),
            event: event_name(),
        }),
        (Some(_), None) if !mapping.values.is_empty() => {
            Err(DefinitionError::ValuesWithoutStatus {
                machine: machine(),
                event: event_name(),
            })
        }
        (Some(state), None) => {
            known(&format!("`events.\"{event}\".state`"), state)?;
            Ok(Target::Constant(state.clone()))
        }
        (None, Some(_)) if mapping.values.is_empty() => Err(DefinitionError::NoValues {
            machine: machine(),
            event: event_name(),
        }),
        (None, Some(status)) => {
            let status = pointer(format!("`events.\"{event}\".status`"), status)?;
            for (value, state) in &mapping.values {
                known(&format!("`events.\"{event}\".values.{value}`"), state)?;
            }
            Ok(Target::Field {
                pointer: status,
                values: mapping.values.clone(),
            })
        }
    }
}
