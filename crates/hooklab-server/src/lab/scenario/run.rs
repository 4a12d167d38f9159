//! The scenario engine: each step's requests prepared (generated and signed, imported,
//! replayed from the database, repeated, or a reorder preset), sent with their copies as the
//! step says, the probe read before and after, then the expectations checked.

use super::expect::{self, Check};
use super::{Action, RUN_PLACEHOLDER, Scenario, Step, duration, import};
use crate::inject::{CopyResult, Mode, Summary, send_copies, summarise};
use crate::lab::events::{Outgoing, Override, generate};
use crate::lab::oracle::{KeyCopies, OracleReport, judge, read_probe};
use crate::lab::records::{Records, replay_request};
use crate::lab::{LabError, Target, sequence};
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{ProviderId, ProviderOptions};
use hooklab_core::replay::Variant;
use hooklab_core::secret::Secret;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How a scenario is run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where generated, imported and sequenced requests go (replays and repeats too).
    pub target: Target,
    /// The probe, replacing the file's `probe`.
    pub probe: Option<Target>,
    /// Where the file's relative `file` paths start (the scenario file's folder).
    pub base_dir: Option<PathBuf>,
    /// Replaces the file's `settle`.
    pub settle: Option<Duration>,
}

impl RunOptions {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            probe: None,
            base_dir: None,
            settle: None,
        }
    }
}

/// Where a run is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// Step `index` (0-based) of `total` starts.
    Step {
        index: usize,
        total: usize,
        label: &'a str,
    },
    /// The steps are done; the expectations are being checked (this may wait for a
    /// receiver's pipeline).
    Checking,
}

/// One request of a step and what its copies got.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SendReport {
    pub key: Option<String>,
    pub event_type: Option<String>,
    pub object_id: Option<String>,
    /// `concurrent` or `sequential`.
    pub mode: String,
    pub summary: Summary,
    pub copies: Vec<CopyResult>,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StepReport {
    pub index: usize,
    pub label: String,
    pub action: String,
    pub sends: Vec<SendReport>,
    /// Why the step could not run (its requests were not, or not all, sent).
    pub error: Option<String>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunReport {
    pub scenario: Option<String>,
    pub target: String,
    /// What `{run}` stood for.
    pub run: String,
    pub steps: Vec<StepReport>,
    /// The idempotency oracle over every request sent, grouped by key.
    pub oracle: OracleReport,
    /// One per expectation, in the file's order.
    pub checks: Vec<Check>,
    /// Every step ran and every expectation holds.
    pub passed: bool,
    pub duration_ms: f64,
}

/// What the steps share while a run goes on.
struct Context<'a> {
    options: &'a RunOptions,
    records: Option<&'a dyn Records>,
    run: String,
    now: UnixMillis,
    /// The requests each named step sent, for `repeat`.
    sent: HashMap<String, Vec<Outgoing>>,
}

/// Runs `scenario`; never fails as a whole: what went wrong is in the report.
pub async fn run(
    scenario: &Scenario,
    options: &RunOptions,
    records: Option<&dyn Records>,
    progress: &(dyn Fn(Progress<'_>) + Send + Sync),
) -> RunReport {
    let started = Instant::now();
    let mut ctx = Context {
        options,
        records,
        run: run_id(),
        now: UnixMillis::now(),
        sent: HashMap::new(),
    };
    let probe = match options.probe.clone() {
        Some(p) => Some(Ok(p)),
        None => scenario.probe.as_deref().map(Target::parse),
    };
    let mut probe_error = None;
    let probe = match probe {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            probe_error = Some(e.to_string());
            None
        }
        None => None,
    };
    let before = match &probe {
        Some(p) => match read_probe(p).await {
            Ok(n) => Some(n),
            Err(e) => {
                probe_error = Some(e.to_string());
                None
            }
        },
        None => None,
    };
    let total = scenario.steps.len();
    let mut steps = Vec::with_capacity(total);
    for (index, step) in scenario.steps.iter().enumerate() {
        let label = step.label(index);
        progress(Progress::Step {
            index,
            total,
            label: &label,
        });
        steps.push(run_step(&mut ctx, index, step, label).await);
    }
    let after = match (&probe, before) {
        (Some(p), Some(_)) => match read_probe(p).await {
            Ok(n) => Some(n),
            Err(e) => {
                probe_error = Some(e.to_string());
                None
            }
        },
        _ => None,
    };
    progress(Progress::Checking);
    let oracle = oracle_of(&steps, before.zip(after));
    let evidence = expect::Evidence {
        steps: &steps,
        oracle: &oracle,
        probe_error: probe_error.as_deref(),
        run: &ctx.run,
    };
    let settle = options.settle.unwrap_or_else(|| scenario.settle());
    let checks = expect::check_all(&scenario.expect, &evidence, records, settle).await;
    let passed = steps.iter().all(|s| s.error.is_none()) && checks.iter().all(|c| c.passed);
    RunReport {
        scenario: scenario.name.clone(),
        target: options.target.url.clone(),
        run: ctx.run,
        steps,
        oracle,
        checks,
        passed,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

/// The oracle over every send, copies of one key judged together (a `repeat` joins the
/// step it repeats).
fn oracle_of(steps: &[StepReport], probe: Option<(u64, u64)>) -> OracleReport {
    let mut by_key: BTreeMap<Option<&str>, Vec<CopyResult>> = BTreeMap::new();
    for send in steps.iter().flat_map(|s| &s.sends) {
        by_key
            .entry(send.key.as_deref())
            .or_default()
            .extend(send.copies.iter().cloned());
    }
    let groups: Vec<KeyCopies<'_>> = by_key
        .iter()
        .map(|(key, results)| KeyCopies { key: *key, results })
        .collect();
    judge(&groups, probe)
}

/// 8 random bytes, hex: what `{run}` stands for.
fn run_id() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::getrandom(&mut bytes).is_err() {
        bytes = UnixMillis::now().0.to_le_bytes()[..6]
            .try_into()
            .unwrap_or_default();
    }
    hex::encode(bytes)
}

async fn run_step(ctx: &mut Context<'_>, index: usize, step: &Step, label: String) -> StepReport {
    let mut report = StepReport {
        index,
        label,
        action: step.action.as_str().to_string(),
        sends: Vec::new(),
        error: None,
    };
    let prepared = prepare(ctx, index, step).await;
    let requests = match prepared {
        Ok(requests) => requests,
        Err(e) => {
            report.error = Some(e.to_string());
            return report;
        }
    };
    // Validated with the file; a bad value here cannot happen, and means "none".
    let interval = duration(step.interval.as_deref(), "interval")
        .ok()
        .flatten()
        .unwrap_or_default();
    let delay = duration(step.delay.as_deref(), "delay").ok().flatten();
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let mode = match step.concurrent {
        Some(true) => Mode::Concurrent,
        _ => Mode::Sequential { interval },
    };
    let copies = step.copies.unwrap_or(1) as usize;
    for (i, request) in requests.iter().enumerate() {
        if i > 0 && !interval.is_zero() {
            tokio::time::sleep(interval).await;
        }
        let results = send_copies(&request.target.addr(), &request.bytes(), copies, mode).await;
        if results.iter().all(|r| r.status.is_none()) {
            let why = results
                .first()
                .and_then(|r| r.error.clone())
                .unwrap_or_default();
            report.error = Some(format!("no answer from {}: {why}", request.target.url));
        }
        report.sends.push(SendReport {
            key: request.key.clone(),
            event_type: request.event_type.clone(),
            object_id: request.object_id.clone(),
            mode: mode.as_str().to_string(),
            summary: summarise(&results),
            copies: results,
        });
    }
    if let Some(name) = &step.name {
        ctx.sent.insert(name.clone(), requests);
    }
    report
}

/// The requests a step sends (a sequence sends several; the others one).
async fn prepare(ctx: &Context<'_>, index: usize, step: &Step) -> Result<Vec<Outgoing>, LabError> {
    let target = &ctx.options.target;
    let salt = format!("{}:{index}", ctx.run);
    match step.action {
        Action::Generate => {
            let signer = signer(ctx, step, None)?;
            let overrides = step
                .overrides
                .iter()
                .map(|(path, value)| Override {
                    path: path.clone(),
                    value: substitute(value, &ctx.run),
                })
                .collect::<Vec<_>>();
            let event = generate(
                signer.provider,
                step.event_type.as_deref(),
                &overrides,
                ctx.now,
                &salt,
            )?;
            let out = Outgoing::signed_event(
                &signer.options,
                signer.secret.as_ref(),
                &event,
                target,
                UnixMillis::now(),
            )?;
            Ok(vec![out])
        }
        Action::Sequence => {
            let signer = signer(ctx, step, None)?;
            let preset = step
                .preset
                .ok_or_else(|| LabError::Scenario("a sequence needs `preset`".into()))?;
            let object = step
                .object
                .as_deref()
                .map(|o| o.replace(RUN_PLACEHOLDER, &ctx.run));
            let seq = sequence::build(preset, signer.provider, object.as_deref(), ctx.now, &salt)?;
            seq.requests(
                &signer.options,
                signer.secret.as_ref(),
                target,
                UnixMillis::now(),
            )
        }
        Action::Import => {
            let file = step.file.as_deref().unwrap_or_default();
            let path = match &ctx.options.base_dir {
                Some(dir) => dir.join(file),
                None => PathBuf::from(file),
            };
            let bytes = std::fs::read(&path)
                .map_err(|e| LabError::Scenario(format!("cannot read {}: {e}", path.display())))?;
            let captured = import::parse(&bytes)
                .map_err(|e| LabError::Scenario(format!("{}: {e}", path.display())))?;
            let signer = signer(ctx, step, captured.provider).ok();
            let provider = signer.as_ref().map(|s| s.provider).or(captured.provider);
            let options = signer
                .as_ref()
                .map(|s| s.options.clone())
                .unwrap_or_default();
            let out = Outgoing::captured(
                provider,
                &options,
                signer.as_ref().and_then(|s| s.secret.as_ref()),
                &captured.method,
                &captured.headers,
                &captured.body,
                target,
                UnixMillis::now(),
            )?;
            Ok(vec![out])
        }
        Action::Replay => {
            let records = ctx.records.ok_or_else(|| {
                LabError::Scenario(
                    "a replay step reads the delivery from the database: pass --db".into(),
                )
            })?;
            let id = step.delivery.unwrap_or_default();
            let secret = step
                .secret
                .as_ref()
                .map(|s| secret_from(&s.0))
                .transpose()?;
            let variant = step
                .variant
                .as_deref()
                .map(|v| v.parse::<Variant>().map_err(LabError::Scenario))
                .transpose()?;
            let out = replay_request(records, id, target, variant, secret).await?;
            Ok(vec![out])
        }
        Action::Repeat => {
            let of = step.of.as_deref().unwrap_or_default();
            ctx.sent
                .get(of)
                .cloned()
                .ok_or_else(|| LabError::Scenario(format!("step `{of}` sent nothing to repeat")))
        }
    }
}

/// Who signs a step's requests.
struct Signer {
    provider: ProviderId,
    options: ProviderOptions,
    secret: Option<Secret>,
}

/// The step's provider and secret: its own `provider`/`secret`, or its `source`'s in the
/// database's sources; `fallback` is the provider a capture names.
fn signer(
    ctx: &Context<'_>,
    step: &Step,
    fallback: Option<ProviderId>,
) -> Result<Signer, LabError> {
    let source = match &step.source {
        Some(name) => Some(ctx.records.and_then(|r| r.source(name)).ok_or_else(|| {
            LabError::Scenario(format!(
                "no source `{name}` among the sources added in the UI (<db>.sources.toml) \
                         of --db; give `provider` and `secret` instead"
            ))
        })?),
        None => None,
    };
    let provider = step
        .provider
        .or(source.as_ref().map(|s| s.provider))
        .or(fallback)
        .ok_or_else(|| LabError::Scenario("no provider to sign for: give `provider`".into()))?;
    let secret = match &step.secret {
        Some(s) => Some(secret_from(&s.0)?),
        None => source.as_ref().and_then(|s| s.secrets.first().cloned()),
    };
    Ok(Signer {
        provider,
        options: source.map(|s| s.options).unwrap_or_default(),
        secret,
    })
}

/// A secret, or `env:VAR`'s value.
fn secret_from(value: &str) -> Result<Secret, LabError> {
    match value.strip_prefix("env:") {
        Some(var) => std::env::var(var).map(Secret::new).map_err(|_| {
            LabError::Sign(format!(
                "the environment variable {var} (named by a step's `secret`) is not set"
            ))
        }),
        None => Ok(Secret::new(value)),
    }
}

/// `value` with every `{run}` in its strings replaced.
fn substitute(value: &serde_json::Value, run: &str) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(s.replace(RUN_PLACEHOLDER, run)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, run)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, run)))
                .collect(),
        ),
        other => other.clone(),
    }
}
