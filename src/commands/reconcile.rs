//! `hooklab reconcile`: one reconciliation pass over the database, printed as a report.

use super::db_path;
use crate::cli::ReconcileArgs;
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_core::retry::parse_duration;
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_server::objects::Machines;
use hooklab_server::reconcile::{Apis, MercadoPagoApi, Report, StripeApi, reconcile};
use std::process::ExitCode;

pub(crate) fn run(args: ReconcileArgs) -> anyhow::Result<ExitCode> {
    let older_than = parse_duration(&args.older_than)
        .with_context(|| format!("--older-than `{}`", args.older_than))?;
    let mut apis = Apis::new();
    if let Some(key) = &args.stripe_key {
        apis = apis.with(
            StripeApi::MACHINE,
            StripeApi::new(Secret::new(key)).with_base_url(args.stripe_api.clone()),
        );
    }
    if let Some(token) = &args.mercadopago_token {
        apis = apis.with(
            MercadoPagoApi::MACHINE,
            MercadoPagoApi::new(Secret::new(token)).with_base_url(args.mercadopago_api.clone()),
        );
    }
    if apis.is_empty() {
        bail!(
            "no provider API configured: pass --stripe-key (or set STRIPE_SECRET_KEY) and/or \
             --mercadopago-token (or MERCADOPAGO_ACCESS_TOKEN)"
        );
    }
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
