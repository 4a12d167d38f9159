//! How the CLI prints things: text for people, JSON for machines. Secrets never reach here.
//! Attempts and dead letters have their own file, `pipeline`; the tunnel has `tunnel`.

mod pipeline;
mod tunnel;

pub(crate) use pipeline::{
    attempt_event_json, attempt_event_line, attempt_json, attempts_text, dead_letter_event_line,
    dead_letter_json, dead_letter_text, dead_letters_table, transition_json, transition_line,
};

pub(crate) use tunnel::{tunnel_event_json, tunnel_event_text, tunnel_status_text};

use hooklab_core::provider::{ProviderInfo, Tolerance};
use hooklab_core::store::{Delivery, DeliverySummary, IdempotencyRecord};
use hooklab_core::verdict::{Status, Verdict};
use serde_json::{Value, json};
use std::fmt::Write as _;

pub(crate) fn verdict_text(v: &Verdict) -> String {
    let mut out = String::new();
    let mark = match v.verdict {
        Status::Valid => "✓ valid",
        Status::Invalid => "✗ invalid",
        Status::Unsigned => "• unsigned",
    };
    let reason = v
        .reason
        .map(|r| format!(" ({})", r.as_str()))
        .unwrap_or_default();
    let _ = writeln!(out, "{mark}{reason}: {}", v.summary);
    if let Some(d) = &v.diagnosis {
        let _ = writeln!(out, "  why: {}", d.message);
    }
    out
}

fn tolerance_text(t: Tolerance) -> String {
    match (t.past_secs, t.future_secs) {
        (None, None) => "none".into(),
        (Some(p), None) => format!("{p} s past"),
        (None, Some(f)) => format!("{f} s future"),
        (Some(p), Some(f)) if p == f => format!("±{p} s"),
        (Some(p), Some(f)) => format!("{p} s past, {f} s future"),
    }
}

pub(crate) fn providers_table(catalog: &[ProviderInfo]) -> String {
    let rows: Vec<[String; 5]> = catalog
        .iter()
        .map(|p| {
            let headers = if p.headers.is_empty() {
                "(signature inside the body)".to_string()
            } else {
                p.headers.join(", ")
            };
            [
                p.id.as_str().to_string(),
                p.algorithm.clone(),
                p.encoding.clone(),
                tolerance_text(p.tolerance),
                headers,
            ]
        })
        .collect();
    let titles = ["PROVIDER", "ALGORITHM", "ENCODING", "TOLERANCE", "HEADERS"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([titles[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2), width(3)];
    let mut out = String::new();
    let mut line = |cols: [&str; 5]| {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {:<w3$}  {}",
            cols[0],
            cols[1],
            cols[2],
            cols[3],
            cols[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    };
    line(titles);
    for r in &rows {
        line([&r[0], &r[1], &r[2], &r[3], &r[4]]);
    }
    out
}

/// The JSON object for one listed delivery (also printed per line by `listen --json`).
pub(crate) fn summary_json(s: &DeliverySummary) -> Value {
    json!({
        "id": s.id,
        "received_at": s.received_at.to_rfc3339(),
        "source": s.source,
        "provider": s.provider,
        "method": s.method,
        "path": s.path,
        "query": s.query,
        "verdict": s.verdict,
        "reason": s.reason,
        "event_id": s.event_id,
        "event_type": s.event_type,
        "status": s.response_status,
        "body_size": s.body_size,
        "idempotency_key": s.idempotency_key,
        "duplicate_of": s.duplicate_of,
    })
}

/// One line per delivery, like `stripe listen`: time (UTC), source, request, verdict, event.
pub(crate) fn summary_line(s: &DeliverySummary) -> String {
    let time = s.received_at.to_rfc3339();
    let time = time.get(11..23).unwrap_or(&time);
    format!("{time}  {}", columns(s))
}

fn columns(s: &DeliverySummary) -> String {
    let verdict = match (s.verdict, &s.reason) {
        (Status::Valid, _) => "✓ valid".to_string(),
        (Status::Invalid, Some(r)) => format!("✗ {r}"),
        (Status::Unsigned, Some(r)) => format!("• unsigned: {r}"),
        (v, None) => v.as_str().to_string(),
    };
    let target = match &s.query {
        Some(q) => format!("{} {}?{q}", s.method, s.path),
        None => format!("{} {}", s.method, s.path),
    };
    let duplicate = s
        .duplicate_of
        .map(|first| format!("  duplicate of #{first}"))
        .unwrap_or_default();
    format!(
        "{:<10} {:<22} {:<28} {:<26} {:<22} → {}{duplicate}",
        truncate(&s.source, 10),
        truncate(&target, 22),
        verdict,
        truncate(s.event_type.as_deref().unwrap_or("-"), 26),
        truncate(s.event_id.as_deref().unwrap_or("-"), 22),
        s.response_status
    )
}

/// `text` wrapped at `width` columns, each line indented by `indent` spaces.
pub(crate) fn wrap(text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{}{line}", " ".repeat(indent));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{}{line}", " ".repeat(indent));
    }
    out
}

pub(crate) fn summary_table(rows: &[DeliverySummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>6}  {:<24}  {:<10} {:<22} {:<28} {:<26} {:<22}   STATUS",
        "ID", "RECEIVED (UTC)", "SOURCE", "REQUEST", "VERDICT", "EVENT TYPE", "EVENT ID"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:>6}  {:<24}  {}",
            r.id,
            r.received_at.to_rfc3339(),
            columns(r)
        );
    }
    out
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Bytes as JSON: the text when UTF-8, else `{"base64": …}` (the core's).
pub(crate) fn bytes_json(b: &[u8]) -> Value {
    hooklab_core::capture::json::bytes_value(b)
}

/// One delivery as JSON: the shape `hooklab import` reads back (the core's, so the two never
/// drift apart).
pub(crate) fn delivery_json(d: &Delivery) -> Value {
    hooklab_core::capture::json::delivery_value(d)
}

pub(crate) fn delivery_text(d: &Delivery) -> String {
    let r = &d.record;
    let mut out = String::new();
    let query = r
        .query
        .as_ref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let _ = writeln!(out, "Delivery {} — {}", d.id, r.received_at.to_rfc3339());
    let _ = writeln!(
        out,
        "Source:   {}{}",
        r.source,
        r.provider
            .map(|p| format!(" ({p})"))
            .unwrap_or_else(|| " (unknown source)".into())
    );
    if let Some(addr) = &r.remote_addr {
        let _ = writeln!(out, "From:     {addr}");
    }
    let _ = writeln!(out, "Answered: {}", r.response_status);
    if let Some(first) = d.duplicate_of {
        let _ = writeln!(out, "Duplicate of delivery {first} (same idempotency key)");
    }
    out.push_str("Verdict:  ");
    out.push_str(&verdict_text(&r.verdict));
    let m = &r.metadata;
    for (label, value) in [
        ("Event id", &m.event_id),
        ("Type", &m.event_type),
        ("Object", &m.object_id),
        ("Key", &m.idempotency_key),
    ] {
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "{label}: {}{v}",
                " ".repeat(9usize.saturating_sub(label.len()))
            );
        }
    }
    let _ = writeln!(out, "\n{} {}{query}", r.method, r.path);
    for h in &r.headers {
        let _ = writeln!(out, "{}: {}", h.name, String::from_utf8_lossy(&h.value));
    }
    out.push('\n');
    if r.body_refused {
        let _ = writeln!(
            out,
            "[body of {} bytes refused: over the size limit]",
            r.body_size
        );
    } else {
        match std::str::from_utf8(&r.body) {
            Ok(text) => {
                out.push_str(text);
                if !text.ends_with('\n') && !text.is_empty() {
                    out.push('\n');
                }
            }
            Err(_) => {
                let _ = writeln!(
                    out,
                    "[{} bytes, not UTF-8; use --raw to write them, or --json for base64]",
                    r.body.len()
                );
            }
        }
    }
    out
}

pub(crate) fn key_json(k: &IdempotencyRecord) -> Value {
    json!({
        "scope": k.scope,
        "key": k.key,
        "status": k.status,
        "first_delivery": k.first_delivery,
        "deliveries": k.deliveries,
        "duplicates": k.deliveries.saturating_sub(1),
        "first_seen": k.first_seen.to_rfc3339(),
        "last_seen": k.last_seen.to_rfc3339(),
    })
}

pub(crate) fn keys_table(keys: &[IdempotencyRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<34} {:<11} {:>6} {:>10}  {:<24}  LAST SEEN (UTC)",
        "SCOPE", "KEY", "STATUS", "FIRST", "DELIVERIES", "FIRST SEEN (UTC)"
    );
    for k in keys {
        let marker = if k.deliveries > 1 { " ◆" } else { "" };
        let _ = writeln!(
            out,
            "{:<12} {:<34} {:<11} {:>6} {:>10}  {:<24}  {}{marker}",
            truncate(&k.scope, 12),
            truncate(&k.key, 34),
            k.status.as_str(),
            format!("#{}", k.first_delivery),
            k.deliveries,
            k.first_seen.to_rfc3339(),
            k.last_seen.to_rfc3339(),
        );
    }
    out
}
