//! The replay lab over the control API: `POST /api/inject` (copies of a recorded delivery, a
//! true race or one after another, judged by the idempotency oracle) and `POST /api/scenario`
//! (a list of lab actions written as a scenario file). Both run [`crate::lab`], the code the
//! CLI runs.

use super::*;
use crate::inject::{InjectReport, Mode};
use crate::lab::records::{StoreRecords, replay_request};
use crate::lab::scenario::Scenario;
use crate::lab::{LabError, Target};
use hooklab_core::replay::Variant;

/// The most copies one request may ask for.
const MAX_COPIES: u32 = 10_000;

/// Copies of a recorded delivery to send.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InjectRequest {
    /// The recorded delivery to copy.
    delivery: DeliveryId,
    /// Where to send the copies (http:// only): a source of the receiver (Hooklab's dedupe)
    /// or the developer's app (their handler's).
    to: String,
    /// How many copies, 1–10000 (default 2).
    copies: Option<u32>,
    /// A true race: every connection opened, then every copy written at once.
    #[serde(default)]
    concurrent: bool,
    /// Between copies sent one after another, in milliseconds (default 0).
    interval_ms: Option<u64>,
    /// Re-sign the copies now with the source's first secret (else as recorded).
    #[serde(default)]
    resign: bool,
    /// A URL answering how many times the handler's side effect ran (a number or
    /// `{"count": n}`), read before and after the copies.
    probe: Option<String>,
}

/// The answer of `POST /api/inject`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct InjectAnswer {
    /// The delivery copied.
    copy_of: DeliveryId,
    #[serde(flatten)]
    report: InjectReport,
}

pub(super) async fn inject(data: &DataState, req: Request) -> Answer {
    let wanted: InjectRequest =
        read_json(req, "expected {\"delivery\": ID, \"to\": URL, …}").await?;
    let copies = wanted.copies.unwrap_or(2);
    if !(1..=MAX_COPIES).contains(&copies) {
        return Err(Problem::bad(format!("`copies` is 1 to {MAX_COPIES}")));
    }
    if wanted.concurrent && wanted.interval_ms.is_some() {
        return Err(Problem::bad(
            "`interval_ms` is for copies one after another, not with `concurrent`",
        ));
    }
    let target = Target::parse(&wanted.to).map_err(|e| Problem::bad(e.to_string()))?;
    let probe = wanted
        .probe
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| Problem::bad(e.to_string()))?;
    let records = StoreRecords {
        store: Arc::clone(&data.store),
        sources: data.source_configs(),
    };
    let variant = match wanted.resign {
        true => Variant::Resigned,
        false => Variant::AsRecorded,
    };
    let request = replay_request(&records, wanted.delivery, &target, Some(variant), None)
        .await
        .map_err(lab_problem)?;
    let mode = match wanted.concurrent {
        true => Mode::Concurrent,
        false => Mode::Sequential {
            interval: Duration::from_millis(wanted.interval_ms.unwrap_or(0)),
        },
    };
    let report = crate::inject::run(&request, copies as usize, mode, probe.as_ref())
        .await
        .map_err(lab_problem)?;
    ok(&InjectAnswer {
        copy_of: wanted.delivery,
        report,
    })
}

/// `{"toml": …}`: a scenario file.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct ScenarioToml {
    toml: String,
}

/// A list of lab actions (a UI session) written as a scenario file.
pub(super) async fn scenario(req: Request) -> Answer {
    let scenario: Scenario = read_json(req, "expected a scenario ({\"steps\": […], …})").await?;
    // A saved file travels (a repository, a CI log): it names secrets, never holds them.
    if let Some(i) = scenario
        .steps
        .iter()
        .position(|s| s.secret.as_ref().is_some_and(|t| !t.is_env()))
    {
        return Err(Problem::bad(format!(
            "step {}: a scenario file names its secret (`env:VAR`) or a `source`; it never \
             holds one",
            i + 1
        )));
    }
    let toml = scenario.to_toml().map_err(lab_problem)?;
    ok(&ScenarioToml { toml })
}

fn lab_problem(e: LabError) -> Problem {
    match e {
        LabError::NoDelivery(_) => Problem::not_found("delivery"),
        LabError::Store(e) => Problem::store(&e),
        LabError::Probe(m) => Problem::new(StatusCode::BAD_GATEWAY, "probe_failed", m),
        LabError::Sign(m) => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "cannot_sign", m),
        other => Problem::bad(other.to_string()),
    }
}
