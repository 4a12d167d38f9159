//! Printing the pipeline: forward attempts (one line each in `listen`, a list in `events show`)
//! and the dead-letter queue (`dlq list|show`, and a line in `listen` when a job dies).

use super::{bytes_json, truncate};
use hooklab_core::store::{Attempt, DeadLetter, TimelineEntry};
use hooklab_server::events::{AttemptEvent, AttemptOutcome};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// One stored attempt, whole (response headers and the kept body included).
pub(crate) fn attempt_json(a: &Attempt) -> Value {
    let r = &a.record;
    json!({
        "job": a.job,
        "delivery": a.delivery,
        "attempt": a.attempt,
        "started_at": r.started_at.to_rfc3339(),
        "duration_ms": r.duration_ms,
        "target": r.target,
        "status": r.status,
        "error": r.error,
        "response_headers": r.response_headers.iter().map(|h| json!([h.name, bytes_json(&h.value)])).collect::<Vec<_>>(),
        "response_body": bytes_json(&r.response_body),
    })
}

/// The attempts section of `events show` (empty when there were none).
pub(crate) fn attempts_text(attempts: &[Attempt]) -> String {
    let mut out = String::new();
    if attempts.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\nAttempts:");
    for a in attempts {
        let r = &a.record;
        let status = r.status.map_or("-".to_string(), |s| s.to_string());
        let _ = writeln!(
            out,
            "  job {} #{:<3} {}  {:>4}  {:>6} ms  {}",
            a.job,
            a.attempt,
            r.started_at.to_rfc3339(),
            status,
            r.duration_ms,
            r.target.as_deref().unwrap_or("-"),
        );
        if let Some(error) = &r.error {
            out.push_str(&super::wrap(&format!("error: {error}"), 10, 110));
        }
    }
    out
}

/// A dead letter as `dlq list --json` prints it: `job`, `delivery`, `event_id`, and the rest.
pub(crate) fn dead_letter_json(d: &DeadLetter) -> Value {
    json!({
        "job": d.job,
        "delivery": d.delivery,
        "event_id": d.event_id,
        "event_type": d.event_type,
        "source": d.source,
        "scope": d.scope,
        "key": d.key,
        "reason": d.reason,
        "attempts": d.attempts,
        "dead_at": d.dead_at.to_rfc3339(),
    })
}

pub(crate) fn dead_letters_table(rows: &[DeadLetter]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>6} {:>8}  {:<24}  {:<10} {:<24} {:>8}  REASON",
        "JOB", "DELIVERY", "DEAD AT (UTC)", "SOURCE", "EVENT ID", "ATTEMPTS"
    );
    for d in rows {
        let _ = writeln!(
            out,
            "{:>6} {:>8}  {:<24}  {:<10} {:<24} {:>8}  {}",
            d.job,
            d.delivery,
            d.dead_at.to_rfc3339(),
            truncate(&d.source, 10),
            truncate(d.event_id.as_deref().unwrap_or("-"), 24),
            d.attempts,
            truncate(&d.reason, 80),
        );
    }
    let _ = writeln!(
        out,
        "\nRedrive with `hooklab dlq redrive JOB…` (or --all, --source NAME); see one with `hooklab dlq show JOB`."
    );
    out
}

pub(crate) fn dead_letter_text(d: &DeadLetter, attempts: &[Attempt]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Dead job {} — {}", d.job, d.dead_at.to_rfc3339());
    let _ = writeln!(
        out,
        "Delivery: {} (`hooklab events show {}`)",
        d.delivery, d.delivery
    );
    let _ = writeln!(out, "Source:   {}", d.source);
    for (label, value) in [
        ("Event id", &d.event_id),
        ("Type", &d.event_type),
        ("Key", &d.key),
    ] {
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "{label}:{}{v}",
                " ".repeat(10usize.saturating_sub(label.len() + 1))
            );
        }
    }
    let _ = writeln!(out, "Attempts: {}", d.attempts);
    out.push_str(&super::wrap(&format!("Reason: {}", d.reason), 0, 110));
    out.push_str(&attempts_text(attempts));
    if let Some(last) = attempts
        .last()
        .filter(|a| !a.record.response_body.is_empty())
    {
        let body = String::from_utf8_lossy(&last.record.response_body);
        let _ = writeln!(out, "\nLast answer's body:\n{}", body.trim_end());
    }
    let _ = writeln!(out, "\nRedrive it with `hooklab dlq redrive {}`.", d.job);
    out
}

/// `listen --json`: one object per attempt, `"kind": "attempt"`.
pub(crate) fn attempt_event_json(a: &AttemptEvent) -> Value {
    json!({
        "kind": "attempt",
        "job": a.job,
        "delivery": a.delivery,
        "source": a.source,
        "event_id": a.event_id,
        "attempt": a.attempt,
        "started_at": a.started_at.to_rfc3339(),
        "duration_ms": a.duration_ms,
        "target": a.target,
        "status": a.status,
        "error": a.error,
        "outcome": a.outcome.as_str(),
        "next_attempt_at": a.next_attempt_at.map(|t| t.to_rfc3339()),
    })
}

/// `listen`: one line per attempt, under the delivery lines' time column.
pub(crate) fn attempt_event_line(a: &AttemptEvent) -> String {
    let time = a.started_at.to_rfc3339();
    let time = time.get(11..23).unwrap_or(&time);
    let answer = match a.status {
        Some(status) => format!("{status} in {} ms", a.duration_ms),
        None => format!("no answer after {} ms", a.duration_ms),
    };
    let (mark, then) = match a.outcome {
        AttemptOutcome::Done => ("✓", "done".to_string()),
        AttemptOutcome::Retry => {
            let wait = a
                .next_attempt_at
                .map(|t| {
                    t.0.saturating_sub(a.started_at.0 + a.duration_ms as i64)
                        .max(0)
                })
                .map(|ms| {
                    format!(
                        "retry in {}",
                        hooklab_core::retry::format_duration(std::time::Duration::from_millis(
                            ms as u64
                        ))
                    )
                })
                .unwrap_or_else(|| "retry".into());
            ("✗", wait)
        }
        AttemptOutcome::Dead => ("✗", "gave up: dead-letter queue".into()),
        AttemptOutcome::Superseded => ("•", "lease expired: another worker had it".into()),
    };
    let mut line = format!(
        "{time}  ↳ forward #{} attempt {} {mark} {answer}, {then}",
        a.delivery, a.attempt
    );
    if let (Some(error), AttemptOutcome::Retry | AttemptOutcome::Dead) = (&a.error, a.outcome) {
        let _ = write!(
            line,
            "\n{}",
            super::wrap(&format!("why: {error}"), 14, 110).trim_end()
        );
    }
    line
}

/// `listen`: the line printed when a job moves to the dead-letter queue.
pub(crate) fn dead_letter_event_line(d: &DeadLetter) -> String {
    let time = d.dead_at.to_rfc3339();
    let time = time.get(11..23).unwrap_or(&time);
    let plural = if d.attempts == 1 { "" } else { "s" };
    format!(
        "{time}  ☠ dead letter: job {} (delivery #{}, {}) after {} attempt{plural}; `hooklab dlq redrive {}`",
        d.job,
        d.delivery,
        d.event_id.as_deref().unwrap_or("no event id"),
        d.attempts,
        d.job
    )
}

/// A state-machine decision as one JSON line of `listen --json`.
pub(crate) fn transition_json(t: &TimelineEntry) -> Value {
    json!({
        "kind": "transition",
        "machine": t.machine,
        "object": t.object_id,
        "from": t.from,
        "to": t.to,
        "decision": t.decision,
        "reason": t.reason,
        "delivery": t.delivery,
        "provider_time": t.provider_time.map(|p| p.to_rfc3339()),
    })
}

/// A state-machine decision as one indented line under the deliveries.
pub(crate) fn transition_line(t: &TimelineEntry) -> String {
    format!(
        "              ↳ {} {}: {} → {} ({})",
        t.machine,
        t.object_id,
        t.from.as_deref().unwrap_or("∅"),
        t.to.as_deref().unwrap_or("-"),
        t.decision
    )
}
