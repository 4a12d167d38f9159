//! Scenarios: a TOML file of steps (what to send, how many copies, in what order, how fast)
//! and expectations (what must hold afterwards), run headless — `hooklab run FILE --target
//! URL` in CI, with JUnit XML for the CI's test report. A lab session in the UI is saved as
//! one ([`Scenario::to_toml`], `POST /api/scenario`). The format is in docs/scenarios.md.
//!
//! ```
//! use hooklab_server::lab::scenario::Scenario;
//!
//! let scenario = Scenario::from_toml(r#"
//!     name = "duplicate-race"
//!     probe = "http://127.0.0.1:3000/count"
//!
//!     [[steps]]
//!     name = "race"
//!     action = "generate"
//!     provider = "stripe"
//!     event_type = "payment_intent.succeeded"
//!     secret = "whsec_test"
//!     copies = 20
//!     concurrent = true
//!
//!     [expect]
//!     handler_ran_once_per_key = true
//! "#).unwrap();
//! assert_eq!(scenario.steps[0].copies, Some(20));
//! assert_eq!(Scenario::from_toml(&scenario.to_toml().unwrap()).unwrap(), scenario);
//! ```
//!
//! - this module: the file's types, parsing, validation and writing;
//! - [`run`]: the engine (prepare each step's requests, send them, read the probe);
//! - [`expect`]: the expectations' checks; [`junit`]: the report as JUnit XML.

pub mod expect;
mod import;
pub mod junit;
pub mod run;

use super::LabError;
use super::sequence::Preset;
use hooklab_core::provider::ProviderId;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use run::{Progress, RunOptions, RunReport, run};

/// The text every `{run}` in a scenario is replaced with: fresh per run, so ids made from it
/// (`pi_{run}`) are new each time and several steps can share them.
pub const RUN_PLACEHOLDER: &str = "{run}";

/// How long expectations on a receiver wait for its pipeline by default.
pub const DEFAULT_SETTLE: Duration = Duration::from_secs(10);

/// A scenario file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Shown in reports and as the JUnit suite's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A URL answering how many times the handler's side effect ran (a number or
    /// `{"count": n}`), read before and after: `handler_ran_once_per_key` needs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
    /// How long `final_state` and `dlq_empty` wait for a receiver's pipeline (e.g. `10s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<String>,
    /// What to send, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// What must hold afterwards.
    #[serde(default)]
    pub expect: Expectations,
}

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A fresh event of `provider` (`event_type`, `overrides`), signed with `secret` or the
    /// `source`'s secret.
    Generate,
    /// A captured request from `file` (Hooklab's JSON of a delivery, or a raw body).
    Import,
    /// Recorded delivery `delivery` of the database, as `variant`.
    Replay,
    /// The very request an earlier step (`of`, its `name`) sent, again.
    Repeat,
    /// A reorder `preset` for `provider`: one object's events sent in the wrong order.
    Sequence,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Generate => "generate",
            Self::Import => "import",
            Self::Replay => "replay",
            Self::Repeat => "repeat",
            Self::Sequence => "sequence",
        }
    }
}

/// One step. Which fields apply depends on `action`; [`Scenario::validate`] says what is
/// missing or out of place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub action: Action,
    /// A label for reports, and for `repeat` to name this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// generate, sequence (and import, replay to re-sign): the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderId>,
    /// generate: the event type (default: the provider's representative event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// generate: body fields to set, by dotted path or JSON pointer (`"data.object.id" =
    /// "pi_{run}"`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub overrides: serde_json::Map<String, serde_json::Value>,
    /// A source of the receiver's database (`--db`) whose provider and first secret sign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The signing secret (`env:VAR` reads it from the environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretText>,
    /// import: the file, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// replay: the delivery id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<i64>,
    /// replay: as-recorded, resigned (default when a secret is known), stale, wrong-secret,
    /// tampered, unsigned, other-body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// repeat: the `name` of the earlier step whose request is sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// sequence: success-before-creation, refund-before-success, failure-then-success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    /// sequence: the object's id (default: a fresh one; `pi_{run}` to name it in `final_state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// How many copies of each request (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<u32>,
    /// Send the copies as a true race: every connection opened, then every request at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrent: Option<bool>,
    /// Between copies sent one after another (and between a sequence's events), e.g. `100ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// A wait before this step, e.g. `1s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
}

impl Step {
    /// A step of `action` with nothing else set.
    pub fn new(action: Action) -> Self {
        Self {
            action,
            name: None,
            provider: None,
            event_type: None,
            overrides: serde_json::Map::new(),
            source: None,
            secret: None,
            file: None,
            delivery: None,
            variant: None,
            of: None,
            preset: None,
            object: None,
            copies: None,
            concurrent: None,
            interval: None,
            delay: None,
        }
    }

    /// `name`, or `#N action`.
    pub fn label(&self, index: usize) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!("#{} {}", index + 1, self.action.as_str()),
        }
    }
}

/// A step's `secret` as written: a secret, or `env:VAR`. `Debug` never shows a secret (only
/// an `env:` name).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct SecretText(pub String);

impl SecretText {
    /// Whether it names an environment variable rather than holding the secret.
    pub fn is_env(&self) -> bool {
        self.0.starts_with("env:")
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.is_env() {
            true => write!(f, "SecretText({:?})", self.0),
            false => f.write_str("SecretText(***)"),
        }
    }
}

/// What must hold after the steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The probe's count grew by at most one per distinct key sent (needs `probe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler_ran_once_per_key: Option<bool>,
    /// Every copy of one key got the same status class and the same body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistent_responses: Option<bool>,
    /// Every response had this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// No event of the scenario ended in the receiver's dead-letter queue (needs `--db`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dlq_empty: Option<bool>,
    /// Objects' final states in the receiver's state machines (needs `--db`): one
    /// `{object, state}` table or an array of them.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub final_state: Vec<FinalState>,
}

impl Expectations {
    /// Whether nothing is expected.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// An object that must end in a state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalState {
    /// The object's id (`{run}` is replaced, as in the steps).
    pub object: String,
    pub state: String,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<FinalState>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(FinalState),
        Many(Vec<FinalState>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

/// A duration field (`200ms`, `1s`, `5m`).
pub(crate) fn duration(text: Option<&str>, field: &str) -> Result<Option<Duration>, String> {
    text.map(|t| {
        hooklab_core::retry::parse_duration(t).map_err(|e| format!("`{field} = \"{t}\"`: {e}"))
    })
    .transpose()
}

impl Scenario {
    /// Parses and validates a scenario file's text.
    pub fn from_toml(text: &str) -> Result<Self, LabError> {
        let scenario: Self =
            toml::from_str(text).map_err(|e| LabError::Scenario(format!("{e}")))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as a TOML file (what `POST /api/scenario` answers).
    pub fn to_toml(&self) -> Result<String, LabError> {
        self.validate()?;
        toml::to_string(self).map_err(|e| LabError::Scenario(e.to_string()))
    }

    /// How long expectations on a receiver wait.
    pub fn settle(&self) -> Duration {
        duration(self.settle.as_deref(), "settle")
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_SETTLE)
    }

    /// Every problem at once, each naming its step.
    pub fn validate(&self) -> Result<(), LabError> {
        let mut problems = Vec::new();
        if let Err(e) = duration(self.settle.as_deref(), "settle") {
            problems.push(e);
        }
        if self.steps.is_empty() {
            problems.push("a scenario needs at least one [[steps]] table".to_string());
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let at = format!("step {} ({})", i + 1, step.action.as_str());
            for p in step_problems(step, &names) {
                problems.push(format!("{at}: {p}"));
            }
            if let Some(name) = &step.name {
                if names.contains(&name.as_str()) {
                    problems.push(format!("{at}: another step is already named `{name}`"));
                }
                names.push(name);
            }
        }
        match problems.is_empty() {
            true => Ok(()),
            false => Err(LabError::Scenario(problems.join("; "))),
        }
    }
}

/// What is wrong with one step, given the names of the steps before it.
fn step_problems(step: &Step, earlier: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut need = |ok: bool, what: &str| {
        if !ok {
            out.push(what.to_string());
        }
    };
    match step.action {
        Action::Generate => {
            need(
                step.provider.is_some() || step.source.is_some(),
                "needs `provider` (or a `source` of the database)",
            );
        }
        Action::Import => need(step.file.is_some(), "needs `file`"),
        Action::Replay => need(step.delivery.is_some(), "needs `delivery` (an id)"),
        Action::Repeat => match &step.of {
            None => need(false, "needs `of` (the name of an earlier step)"),
            Some(of) => need(
                earlier.contains(&of.as_str()),
                &format!("`of = \"{of}\"` names no earlier step"),
            ),
        },
        Action::Sequence => {
            need(step.preset.is_some(), "needs `preset`");
            need(
                step.provider.is_some() || step.source.is_some(),
                "needs `provider` (or a `source` of the database)",
            );
        }
    }
    let misplaced = [
        (
            "event_type",
            step.event_type.is_some(),
            step.action == Action::Generate,
        ),
        (
            "overrides",
            !step.overrides.is_empty(),
            step.action == Action::Generate,
        ),
        ("file", step.file.is_some(), step.action == Action::Import),
        (
            "delivery",
            step.delivery.is_some(),
            step.action == Action::Replay,
        ),
        (
            "variant",
            step.variant.is_some(),
            step.action == Action::Replay,
        ),
        ("of", step.of.is_some(), step.action == Action::Repeat),
        (
            "preset",
            step.preset.is_some(),
            step.action == Action::Sequence,
        ),
        (
            "object",
            step.object.is_some(),
            step.action == Action::Sequence,
        ),
    ];
    for (field, set, allowed) in misplaced {
        if set && !allowed {
            out.push(format!(
                "`{field}` does not apply to `{}`",
                step.action.as_str()
            ));
        }
    }
    if step.action == Action::Repeat
        && (step.provider.is_some() || step.source.is_some() || step.secret.is_some())
    {
        out.push(
            "`repeat` sends the earlier request as it was: no provider, source or secret".into(),
        );
    }
    if let Some(v) = &step.variant {
        if let Err(e) = v.parse::<hooklab_core::replay::Variant>() {
            out.push(e);
        }
    }
    if step.copies == Some(0) || step.copies.is_some_and(|c| c > 10_000) {
        out.push("`copies` is 1 to 10000".into());
    }
    if step.concurrent == Some(true) && step.interval.is_some() {
        out.push("`interval` is for copies one after another, not with `concurrent`".into());
    }
    for (field, value) in [("interval", &step.interval), ("delay", &step.delay)] {
        if let Err(e) = duration(value.as_deref(), field) {
            out.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests;
