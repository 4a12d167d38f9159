//! `hooklab objects` and `hooklab timeline`: what the state machines made of the events.

use super::events::open;
use crate::cli::{ObjectsArgs, TimelineArgs};
use anyhow::bail;
use hooklab_core::store::{ObjectFilter, ObjectRecord, TimelineEntry};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::process::ExitCode;

pub(crate) fn list(args: ObjectsArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let mut objects = store.objects(&ObjectFilter {
        limit: Some(if args.review { 10_000 } else { args.limit }),
        machine: args.machine.clone(),
        state: args.state.clone(),
        updated_before: None,
    })?;
    if args.review {
        objects.retain(|o| o.flags.iter().any(|f| f == "requires_review"));
        objects.truncate(args.limit as usize);
    }
    if args.json {
        let rows: Vec<Value> = objects.iter().map(object_json).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if objects.is_empty() {
        println!(
            "No objects yet. Events that a state machine knows (Stripe payment_intent.*, \
             Mercado Pago, Asaas, Wompi and Paddle payments) create them once processed."
        );
    } else {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<26} {:<24} {:<18} {:<26} FLAGS",
            "OBJECT", "MACHINE", "STATE", "UPDATED (UTC)"
        );
        for o in &objects {
            let _ = writeln!(
                out,
                "{:<26} {:<24} {:<18} {:<26} {}",
                o.object_id,
                o.machine,
                o.state.as_deref().unwrap_or("(parked only)"),
                o.updated_at.to_rfc3339(),
                o.flags.join(", ")
            );
        }
        print!("{out}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn timeline(args: TimelineArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let rows = store.timeline(&args.object_id)?;
    let objects: Vec<ObjectRecord> = store
        .objects(&ObjectFilter {
            limit: Some(10_000),
            ..ObjectFilter::default()
        })?
        .into_iter()
        .filter(|o| o.object_id == args.object_id)
        .collect();
    if rows.is_empty() && objects.is_empty() {
        bail!(
            "no object `{}`; list them with `hooklab objects`",
            args.object_id
        );
    }
    let state = objects.first().and_then(|o| o.state.clone());
    if args.json {
        let value = json!({
            "object": args.object_id,
            "machine": objects.first().map(|o| o.machine.clone()),
            "state": state,
            "flags": objects.first().map(|o| o.flags.clone()).unwrap_or_default(),
            "transitions": rows.iter().map(row_json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} — {}{}",
        args.object_id,
        state.as_deref().unwrap_or("no state yet"),
        objects
            .first()
            .filter(|o| !o.flags.is_empty())
            .map(|o| format!(" ({})", o.flags.join(", ")))
            .unwrap_or_default()
    );
    for r in &rows {
        println!(
            "  {}  {:<18} {:>16} → {:<16} {:<8} {}",
            r.provider_time.map_or("-".into(), |t| t.to_rfc3339()),
            r.decision,
            r.from.as_deref().unwrap_or("∅"),
            r.to.as_deref().unwrap_or("-"),
            r.delivery.map_or("-".into(), |d| format!("#{d}")),
            r.reason
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn object_json(o: &ObjectRecord) -> Value {
    json!({
        "object": o.object_id,
        "machine": o.machine,
        "state": o.state,
        "state_time": o.state_time.map(|t| t.to_rfc3339()),
        "flags": o.flags,
        "updated_at": o.updated_at.to_rfc3339(),
    })
}

fn row_json(r: &TimelineEntry) -> Value {
    json!({
        "machine": r.machine,
        "from": r.from,
        "to": r.to,
        "decision": r.decision,
        "reason": r.reason,
        "delivery": r.delivery,
        "provider_time": r.provider_time.map(|t| t.to_rfc3339()),
        "received_at": r.received_at.map(|t| t.to_rfc3339()),
        "decided_at": r.at.to_rfc3339(),
    })
}
