//! `hooklab sequence` and `hooklab run`: adapters over `hooklab_server::lab` (reorder presets,
//! the scenario engine, JUnit XML). Parsing, printing and the exit status live here; the
//! behaviour lives in the library, which the control API and the UI share.

use super::db_path;
use super::replay::{runtime, secret_from};
use crate::cli::{DbArg, RunArgs, SequenceArgs};
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_server::lab::records::{Records, SqliteRecords, replay_request};
use hooklab_server::lab::scenario::{self, Progress, RunOptions, Scenario};
use hooklab_server::lab::{Outgoing, Target, sequence};
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

/// The database's records when there is a database: the one `--db`/`HOOKLAB_DB` names (it
/// must exist), else the default one if it exists.
fn records(db: &DbArg) -> anyhow::Result<Option<SqliteRecords>> {
    let explicit = db.db.is_some();
    let path = db_path(db)?;
    if !path.exists() {
        if explicit {
            bail!("no database at {}", path.display());
        }
        return Ok(None);
    }
    let records =
        SqliteRecords::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(Some(records))
}

pub(crate) fn sequence(args: SequenceArgs) -> anyhow::Result<ExitCode> {
    let target = Target::parse(&args.to)?;
    // A preset signed with --secret needs no database.
    let records = match args.source.is_some() || args.preset.is_none() {
        true => records(&args.db)?,
        false => None,
    };
    let source = match (&args.source, &records) {
        (Some(name), Some(r)) => Some(r.source(name).with_context(|| {
            format!("no source `{name}` among the sources added in the UI (<db>.sources.toml)")
        })?),
        (Some(name), None) => bail!("--source {name} needs the database it was added to (--db)"),
        (None, _) => None,
    };
    let secret = match &args.secret {
        Some(s) => Some(secret_from(s)?),
        None => source.as_ref().and_then(|s| s.secrets.first().cloned()),
    };
    let runtime = runtime()?;
    let (requests, about) = match args.preset {
        Some(preset) => {
            let provider = args
                .provider
                .or(source.as_ref().map(|s| s.provider))
                .context("give --provider (or --source NAME)")?;
            let now = UnixMillis::now();
            let seq = sequence::build(
                preset,
                provider,
                args.object.as_deref(),
                now,
                &std::process::id().to_string(),
            )?;
            let options = source.map(|s| s.options).unwrap_or_default();
            let requests = seq.requests(&options, secret.as_ref(), &target, now)?;
            let about = serde_json::json!({
                "preset": preset.as_str(),
                "provider": provider.as_str(),
                "object": seq.object_id,
                "final_state": seq.final_state,
                "signed": secret.is_some(),
                "true_positions": seq.events.iter().map(|e| e.true_position).collect::<Vec<_>>(),
                "provider_times": seq.events.iter().map(|e| e.provider_time.to_rfc3339()).collect::<Vec<_>>(),
            });
            (requests, about)
        }
        None => {
            let records = records
                .as_ref()
                .context("replaying recorded deliveries needs their database (--db)")?;
            let variant = match args.resign {
                true => hooklab_core::replay::Variant::Resigned,
                false => hooklab_core::replay::Variant::AsRecorded,
            };
            let requests = runtime.block_on(async {
                let mut out = Vec::new();
                for &id in &args.ids {
                    let request =
                        replay_request(records, id, &target, Some(variant), secret.clone())
                            .await
                            .with_context(|| format!("cannot replay delivery #{id}"))?;
                    out.push(request);
                }
                Ok::<_, anyhow::Error>(out)
            })?;
            (requests, serde_json::json!({ "deliveries": args.ids }))
        }
    };
    let results = runtime.block_on(sequence::send_in_order(
        &requests,
        args.delay.unwrap_or_default(),
    ));
    let all_ok = results
        .iter()
        .all(|r| r.status.is_some_and(|s| (200..300).contains(&s)));
    if args.json {
        let sent: Vec<_> = requests
            .iter()
            .zip(&results)
            .map(|(req, r)| {
                serde_json::json!({
                    "event_type": req.event_type,
                    "key": req.key,
                    "object": req.object_id,
                    "status": r.status,
                    "latency_ms": r.latency_ms,
                    "error": r.error,
                })
            })
            .collect();
        let mut out = about;
        out["to"] = target.url.clone().into();
        out["sent"] = sent.into();
        println!("{out}");
    } else {
        print_sequence(&about, &requests, &results);
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_sequence(
    about: &serde_json::Value,
    requests: &[Outgoing],
    results: &[hooklab_server::inject::CopyResult],
) {
    if let Some(preset) = about["preset"].as_str() {
        println!(
            "{preset} ({}) for {}, sent in this order:",
            about["provider"].as_str().unwrap_or(""),
            about["object"].as_str().unwrap_or("")
        );
    }
    for (i, (req, r)) in requests.iter().zip(results).enumerate() {
        let answer = match (r.status, &r.error) {
            (Some(s), _) => format!("HTTP {s}"),
            (None, e) => format!("failed: {}", e.as_deref().unwrap_or("")),
        };
        let happened = match about["true_positions"].get(i).and_then(|p| p.as_u64()) {
            Some(p) => format!(
                " (happened {}, at {})",
                ordinal(p + 1),
                about["provider_times"][i].as_str().unwrap_or("")
            ),
            None => String::new(),
        };
        println!(
            "  {}. {}{happened} → {answer}",
            i + 1,
            req.event_type.as_deref().unwrap_or("(no type)")
        );
    }
    if let (Some(object), Some(state)) = (about["object"].as_str(), about["final_state"].as_str()) {
        println!(
            "Expected final state: {state}. Through a Hooklab receiver: hooklab timeline {object}"
        );
    }
}

fn ordinal(n: u64) -> String {
    match n {
        1 => "1st".into(),
        2 => "2nd".into(),
        3 => "3rd".into(),
        n => format!("{n}th"),
    }
}

pub(crate) fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("cannot read {}", args.scenario.display()))?;
    let scenario =
        Scenario::from_toml(&text).with_context(|| format!("in {}", args.scenario.display()))?;
    let mut options = RunOptions::new(Target::parse(&args.target)?);
    options.probe = args.probe.as_deref().map(Target::parse).transpose()?;
    options.base_dir = args.scenario.parent().map(std::path::Path::to_path_buf);
    options.settle = args.settle;
    let records = records(&args.db)?;
    let bar = ProgressBar::new(std::io::stderr().is_terminal());
    let progress = |p: Progress<'_>| bar.show(p);
    let report = runtime()?.block_on(scenario::run(
        &scenario,
        &options,
        records.as_ref().map(|r| r as &dyn Records),
        &progress,
    ));
    bar.finish();
    if let Some(path) = &args.junit {
        std::fs::write(path, scenario::junit::to_xml(&report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(report: &scenario::RunReport) {
    let name = report.scenario.as_deref().unwrap_or("scenario");
    println!("{name} → {} (run {})", report.target, report.run);
    for step in &report.steps {
        let mut counts = std::collections::BTreeMap::new();
        for (status, n) in step.sends.iter().flat_map(|s| s.summary.statuses.iter()) {
            *counts.entry(status.as_str()).or_insert(0) += n;
        }
        let statuses: Vec<String> = counts
            .iter()
            .map(|(status, n)| format!("{n} × {status}"))
            .collect();
        match &step.error {
            Some(e) => println!("  ✗ {}: {e}", step.label),
            None => println!("  · {}: {}", step.label, statuses.join(", ")),
        }
    }
    println!("  {}", report.oracle.verdict);
    for check in &report.checks {
        let mark = if check.passed { "✓" } else { "✗" };
        println!("{mark} {} — {}", check.expectation, check.message);
    }
    let failed = report.checks.iter().filter(|c| !c.passed).count();
    let step_errors = report.steps.iter().filter(|s| s.error.is_some()).count();
    if report.passed {
        println!("PASSED: {} expectation(s) hold", report.checks.len());
    } else {
        println!(
            "FAILED: {failed} of {} expectation(s){}",
            report.checks.len(),
            match step_errors {
                0 => String::new(),
                n => format!(", {n} step(s) could not run"),
            }
        );
    }
}

/// A progress bar on standard error: redrawn in place on a terminal, one line per step
/// otherwise (CI logs).
struct ProgressBar {
    terminal: bool,
}

impl ProgressBar {
    fn new(terminal: bool) -> Self {
        Self { terminal }
    }

    fn show(&self, p: Progress<'_>) {
        let mut err = std::io::stderr().lock();
        let line = match p {
            Progress::Step {
                index,
                total,
                label,
            } => {
                const WIDTH: usize = 20;
                let filled = WIDTH * index / total.max(1);
                format!(
                    "[{}{}] {}/{total} {label}",
                    "#".repeat(filled),
                    "-".repeat(WIDTH - filled),
                    index + 1
                )
            }
            Progress::Checking => format!("[{}] checking expectations", "#".repeat(20)),
        };
        let _ = if self.terminal {
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.terminal {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
