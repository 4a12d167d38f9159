//! `hooklab replay ID --to URL [--resign | --variant V]`: a recorded delivery sent again, so it is
//! recorded (linked to its original by `X-Hooklab-Replay-Of`), verified, deduplicated and
//! processed like any delivery — or delivered straight to the developer's app. `hooklab inject`
//! sends N copies of it and judges the handler (the idempotency oracle). Both adapt
//! `hooklab_server::lab`.

use super::db_path;
use crate::cli::ReplayArgs;
use anyhow::{Context as _, bail};
use hooklab_core::replay::Variant;
use hooklab_core::secret::Secret;
use hooklab_server::inject::{InjectReport, Mode};
use hooklab_server::lab::records::{SqliteRecords, replay_request};
use hooklab_server::lab::{Outgoing, Target};
use std::process::ExitCode;

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let variant = match (&args.variant, args.resign) {
        (Some(v), _) => v.parse::<Variant>().map_err(anyhow::Error::msg)?,
        (None, true) => Variant::Resigned,
        (None, false) => Variant::AsRecorded,
    };
    let target = Target::parse(&args.to)?;
    let runtime = runtime()?;
    let request = runtime.block_on(prepare(
        &args.db,
        args.id,
        &target,
        args.secret.as_deref(),
        variant,
    ))?;
    let results = runtime.block_on(hooklab_server::inject::send_copies(
        &target.addr(),
        &request.bytes(),
        1,
        Mode::Concurrent,
    ));
    let result = results.into_iter().next().context("nothing was sent")?;
    let Some(status) = result.status else {
        bail!(
            "cannot send the replay to {}: {}",
            args.to,
            result.error.unwrap_or_default()
        );
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "replay_of": args.id,
                "variant": variant.as_str(),
                "to": args.to,
                "status": status,
            })
        );
    } else {
        println!(
            "Replayed #{} ({}) to {}: HTTP {status}",
            args.id,
            variant.as_str(),
            args.to
        );
    }
    Ok(if (200..300).contains(&status) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Delivery `id` of the database as a request to `target`, as `variant`; the secret from
/// `--secret`, else its source's (the sources added in the UI, `<db>.sources.toml`).
async fn prepare(
    db: &crate::cli::DbArg,
    id: i64,
    target: &Target,
    secret: Option<&str>,
    variant: Variant,
) -> anyhow::Result<Outgoing> {
    let db = db_path(db)?;
    let records =
        SqliteRecords::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
    let secret = secret.map(secret_from).transpose()?;
    let request = replay_request(&records, id, target, Some(variant), secret)
        .await
        .with_context(|| format!("cannot replay delivery #{id} of {}", db.display()))?;
    Ok(request)
}

/// `hooklab inject`: N copies, sequential or as a concurrent race, judged by the oracle.
pub(crate) fn inject(args: crate::cli::InjectArgs) -> anyhow::Result<ExitCode> {
    let variant = if args.resign {
        Variant::Resigned
    } else {
        Variant::AsRecorded
    };
    let target = Target::parse(&args.to)?;
    let probe = args.probe.as_deref().map(Target::parse).transpose()?;
    let mode = if args.concurrent {
        Mode::Concurrent
    } else {
        Mode::Sequential {
            interval: args.interval.unwrap_or_default(),
        }
    };
    let runtime = runtime()?;
    let copies = usize::try_from(args.copies).unwrap_or(usize::MAX);
    let report = runtime.block_on(async {
        let request = prepare(&args.db, args.id, &target, args.secret.as_deref(), variant).await?;
        let report = hooklab_server::inject::run(&request, copies, mode, probe.as_ref()).await?;
        Ok::<_, anyhow::Error>(report)
    })?;
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["copy_of"] = args.id.into();
        println!("{value}");
    } else {
        print_inject(args.id, &report);
    }
    let all_ok = report
        .copies
        .iter()
        .all(|r| r.status.is_some_and(|s| (200..300).contains(&s)));
    Ok(if all_ok && report.oracle.idempotent {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_inject(id: i64, report: &InjectReport) {
    let summary = &report.summary;
    println!(
        "{} copies of #{id} to {} ({}): {}",
        summary.copies,
        report.to,
        if report.mode == "concurrent" {
            "concurrent race"
        } else {
            "one after another"
        },
        summary
            .statuses
            .iter()
            .map(|(status, n)| format!("{n} × {status}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} distinct response bodies",
        summary.latency_ms_p50,
        summary.latency_ms_p99,
        summary.latency_ms_max,
        summary.distinct_bodies,
    );
    println!("{}", report.oracle.verdict);
}

pub(crate) fn secret_from(value: &str) -> anyhow::Result<Secret> {
    match value.strip_prefix("env:") {
        Some(var) => std::env::var(var).map(Secret::new).with_context(|| {
            format!("the environment variable {var} (named by --secret) is not set")
        }),
        None => Ok(Secret::new(value)),
    }
}
