//! `hooklab reconcile`: one reconciliation pass over the database, printed as a report.

use super::db_path;
use crate::cli::{ApiArgs, ReconcileArgs};
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_core::retry::parse_duration;
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_server::config::ReconcileSettings;
use hooklab_server::objects::Machines;
use hooklab_server::reconcile::{Report, reconcile};
use std::process::ExitCode;
use std::time::Duration;

/// Reconciliation settings from flags; an error when no API is named.
pub(crate) fn settings(
    a: &ApiArgs,
    every: Duration,
    older_than: Duration,
) -> anyhow::Result<ReconcileSettings> {
    let settings = ReconcileSettings {
        every,
        older_than,
        stripe: a
            .stripe_key
            .as_ref()
            .map(|k| (Secret::new(k), a.stripe_api.clone())),
        mercadopago: a
            .mercadopago_token
            .as_ref()
            .map(|t| (Secret::new(t), a.mercadopago_api.clone())),
    };
    if settings.stripe.is_none() && settings.mercadopago.is_none() {
        bail!(
            "no provider API configured: pass --stripe-key (or set STRIPE_SECRET_KEY) and/or \
             --mercadopago-token (or MERCADOPAGO_ACCESS_TOKEN)"
        );
    }
    Ok(settings)
}

pub(crate) fn run(args: ReconcileArgs) -> anyhow::Result<ExitCode> {
    let older_than = parse_duration(&args.older_than)
        .with_context(|| format!("--older-than `{}`", args.older_than))?;
    let apis = hooklab_server::runtime::apis(&settings(&args.apis, Duration::ZERO, older_than)?);
    let path = db_path(&args.db)?;
    if !path.exists() {
        bail!(
            "no database at {}: nothing to reconcile yet. Start `hooklab listen`, or pass --db FILE",
            path.display()
        );
    }
    let store =
        SqliteStore::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(reconcile(
        &store,
        &Machines::default(),
        &apis,
        older_than,
        UnixMillis::now(),
    ))?;
    store.close()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn text(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Checked {} object(s): {} corrected, {} already right, {} error(s).",
        r.checked,
        r.corrections.len(),
        r.unchanged.len(),
        r.errors.len()
    );
    for c in &r.corrections {
        let _ = writeln!(
            out,
            "  corrected {} {}: {} → {} ({})",
            c.machine,
            c.object_id,
            c.from.as_deref().unwrap_or("∅"),
            c.to,
            c.decision.as_str()
        );
    }
    for e in &r.errors {
        let _ = writeln!(
            out,
            "  error {} {}: {} ({})",
            e.machine,
            e.object_id.as_deref().unwrap_or("(gap check)"),
            e.message,
            e.code
        );
    }
    for g in &r.gaps {
        if g.missing_events.is_empty() {
            let _ = writeln!(
                out,
                "  no gaps: all {} {} event(s) since {} were received",
                g.listed,
                g.machine,
                g.since.to_rfc3339()
            );
        } else {
            let _ = writeln!(
                out,
                "  {} event(s) the provider sent since {} never arrived: {}",
                g.missing_events.len(),
                g.since.to_rfc3339(),
                g.missing_events.join(", ")
            );
        }
    }
    out
}
