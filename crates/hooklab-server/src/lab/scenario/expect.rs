//! The expectations' checks. Those about responses and side effects read what the run saw;
//! those about a Hooklab receiver (`final_state`, `dlq_empty`) read its database, waiting up to
//! the scenario's `settle` for the pipeline (state machines and forwards run after the answer).

use super::run::StepReport;
use super::{Expectations, RUN_PLACEHOLDER};
use crate::lab::oracle::OracleReport;
use crate::lab::records::Records;
use hooklab_core::store::KeyStatus;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often a receiver's database is read while waiting.
const POLL: Duration = Duration::from_millis(100);

/// One expectation's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Check {
    /// The expectation as written, e.g. `status = 200`, `final_state pi_1 = succeeded`.
    pub expectation: String,
    pub passed: bool,
    /// What was found, in words.
    pub message: String,
}

/// What the run saw.
pub(super) struct Evidence<'a> {
    pub(super) steps: &'a [StepReport],
    pub(super) oracle: &'a OracleReport,
    /// Why the probe could not be read, when it could not.
    pub(super) probe_error: Option<&'a str>,
    pub(super) run: &'a str,
}

/// Every expectation set in `expect`, in the file's order.
pub(super) async fn check_all(
    expect: &Expectations,
    evidence: &Evidence<'_>,
    records: Option<&dyn Records>,
    settle: Duration,
) -> Vec<Check> {
    let mut checks = Vec::new();
    if expect.handler_ran_once_per_key == Some(true) {
        checks.push(once_per_key(evidence));
    }
    if expect.consistent_responses == Some(true) {
        checks.push(consistent(evidence.oracle));
    }
    if let Some(status) = expect.status {
        checks.push(all_status(evidence, status));
    }
    if expect.dlq_empty == Some(true) {
        checks.push(dlq_empty(evidence, records, settle).await);
    }
    for wanted in &expect.final_state {
        let object = wanted.object.replace(RUN_PLACEHOLDER, evidence.run);
        checks.push(final_state(&object, &wanted.state, records, settle).await);
    }
    checks
}

fn check(expectation: impl Into<String>, passed: bool, message: impl Into<String>) -> Check {
    Check {
        expectation: expectation.into(),
        passed,
        message: message.into(),
    }
}

fn once_per_key(evidence: &Evidence<'_>) -> Check {
    const NAME: &str = "handler_ran_once_per_key";
    let o = evidence.oracle;
    match (o.side_effects, evidence.probe_error) {
        (_, Some(error)) => check(NAME, false, error),
        (None, None) => check(
            NAME,
            false,
            "needs a probe: `probe = \"http://…/count\"` in the file, or --probe URL",
        ),
        (Some(n), None) => {
            let extra = o.extra_side_effects.unwrap_or(0);
            let keys = o.keys;
            let what = format!(
                "{n} side effect(s) for {} request(s) of {keys} distinct key(s)",
                o.copies
            );
            match extra {
                0 => check(NAME, true, format!("{what}: at most one per key")),
                _ => check(
                    NAME,
                    false,
                    format!(
                        "{what}: {extra} more than one per key — the handler is not idempotent"
                    ),
                ),
            }
        }
    }
}

fn consistent(o: &OracleReport) -> Check {
    const NAME: &str = "consistent_responses";
    if !o.responses_differ {
        let keys = o.keys;
        return check(
            NAME,
            true,
            format!("every copy of each of {keys} key(s) got the same answer"),
        );
    }
    let detail: Vec<String> = o
        .inconsistent
        .iter()
        .map(|i| format!("{}: {}", i.key.as_deref().unwrap_or("(no key)"), i.what))
        .collect();
    let statuses: Vec<String> = o.statuses.iter().map(|(s, n)| format!("{s}×{n}")).collect();
    check(
        NAME,
        false,
        format!(
            "copies of one event were answered differently ({}); responses: {}",
            detail.join("; "),
            statuses.join(", ")
        ),
    )
}

fn all_status(evidence: &Evidence<'_>, status: u16) -> Check {
    let name = format!("status = {status}");
    let mut total = 0;
    let mut others: BTreeMap<String, usize> = BTreeMap::new();
    for r in evidence
        .steps
        .iter()
        .flat_map(|s| &s.sends)
        .flat_map(|s| &s.copies)
    {
        total += 1;
        if r.status != Some(status) {
            let got = r.status.map_or_else(|| "failed".into(), |s| s.to_string());
            *others.entry(got).or_insert(0) += 1;
        }
    }
    if total == 0 {
        return check(name, false, "no response at all: nothing was sent");
    }
    let wrong: usize = others.values().sum();
    match wrong {
        0 => check(name, true, format!("all {total} responses were {status}")),
        _ => {
            let list: Vec<String> = others.iter().map(|(s, n)| format!("{s}×{n}")).collect();
            check(
                name,
                false,
                format!(
                    "{wrong} of {total} responses were not {status}: {}",
                    list.join(", ")
                ),
            )
        }
    }
}

const NEEDS_DB: &str = "needs the receiver's database: pass --db FILE (the `hooklab listen` \
                        whose source --target is)";

async fn dlq_empty(
    evidence: &Evidence<'_>,
    records: Option<&dyn Records>,
    settle: Duration,
) -> Check {
    const NAME: &str = "dlq_empty";
    let Some(records) = records else {
        return check(NAME, false, NEEDS_DB);
    };
    let ours: BTreeSet<&str> = evidence
        .steps
        .iter()
        .flat_map(|s| &s.sends)
        .filter_map(|s| s.key.as_deref())
        .collect();
    if ours.is_empty() {
        return check(
            NAME,
            false,
            "the scenario sent no event with an idempotency key",
        );
    }
    // Wait until none of our keys is still being processed (forwards, retries).
    let deadline = Instant::now() + settle;
    let settled = loop {
        let keys = match records.recent_keys().await {
            Ok(keys) => keys,
            Err(e) => return check(NAME, false, format!("cannot read the database: {e}")),
        };
        let found: Vec<_> = keys
            .iter()
            .filter(|k| ours.contains(k.key.as_str()))
            .collect();
        let processing = found
            .iter()
            .filter(|k| k.status == KeyStatus::Processing)
            .count();
        if !found.is_empty() && processing == 0 {
            break Ok(found.len());
        }
        if Instant::now() >= deadline {
            break Err((found.len(), processing));
        }
        tokio::time::sleep(POLL).await;
    };
    match settled {
        Err((0, _)) => {
            return check(
                NAME,
                false,
                format!(
                    "none of the scenario's {} key(s) is in the database: is --target a source \
                     of the receiver whose database is --db, with the secret the steps sign \
                     with? (a delivery whose signature fails claims no key)",
                    ours.len()
                ),
            );
        }
        Err((_, processing)) => {
            return check(
                NAME,
                false,
                format!(
                    "{processing} event(s) still processing after {:.1} s (retrying?): raise \
                     `settle`",
                    settle.as_secs_f64()
                ),
            );
        }
        Ok(_) => {}
    }
    let dead = match records.dead_letters().await {
        Ok(dead) => dead,
        Err(e) => return check(NAME, false, format!("cannot read the database: {e}")),
    };
    let ours_dead: Vec<String> = dead
        .iter()
        .filter(|d| d.key.as_deref().is_some_and(|k| ours.contains(k)))
        .map(|d| {
            format!(
                "job {} ({}): {}",
                d.job,
                d.key.as_deref().unwrap_or(""),
                d.reason
            )
        })
        .collect();
    match ours_dead.is_empty() {
        true => check(
            NAME,
            true,
            format!(
                "none of the scenario's {} key(s) is dead-lettered",
                ours.len()
            ),
        ),
        false => check(
            NAME,
            false,
            format!("dead-lettered: {}", ours_dead.join("; ")),
        ),
    }
}

async fn final_state(
    object: &str,
    state: &str,
    records: Option<&dyn Records>,
    settle: Duration,
) -> Check {
    let name = format!("final_state {object} = {state}");
    let Some(records) = records else {
        return check(name, false, NEEDS_DB);
    };
    let deadline = Instant::now() + settle;
    let found = loop {
        let found = match records.object(object.to_string()).await {
            Ok(found) => found,
            Err(e) => return check(name, false, format!("cannot read the database: {e}")),
        };
        let reached = found.as_ref().and_then(|o| o.state.as_deref()) == Some(state);
        if reached || Instant::now() >= deadline {
            break found;
        }
        tokio::time::sleep(POLL).await;
    };
    let timeline = records
        .timeline(object.to_string())
        .await
        .map(|rows| {
            rows.iter()
                .map(|r| format!("{} {}", r.to.as_deref().unwrap_or("?"), r.decision))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    match found {
        None => check(
            name,
            false,
            format!(
                "no object `{object}` in the database after {:.1} s",
                settle.as_secs_f64()
            ),
        ),
        Some(o) if o.state.as_deref() == Some(state) => check(
            name,
            true,
            format!("{object} is {state} (timeline: {timeline})"),
        ),
        Some(o) => check(
            name,
            false,
            format!(
                "{object} is {}, not {state}, after {:.1} s (timeline: {timeline})",
                o.state.as_deref().unwrap_or("not in any state yet"),
                settle.as_secs_f64()
            ),
        ),
    }
}
