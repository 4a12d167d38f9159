//! `hooklab listen`: run the receiver (and, with a forward target, the worker that forwards to
//! the developer's app); print one line per recorded delivery, per attempt, per dead letter.

use super::db_path;
use crate::cli::ListenArgs;
use crate::output;
use anyhow::Context as _;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::verdict::Status;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::events::{DeliveryEvent, Event};
use hooklab_server::runtime;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

pub(crate) fn run(args: ListenArgs) -> anyhow::Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    if let Some(host) = &args.host {
        config.host = host.clone();
    }
    if let Some(port) = args.port {
        config.port = port;
    }
    if let Some(url) = &args.public_url {
        config.public_url = Some(url.clone());
    }
    if let Some(limit) = args.body_limit {
        config.body_limit = limit;
    }
    if let Some(url) = &args.forward_to {
        config.forward_to = Some(url.clone());
    }
    if let Some(schedule) = &args.retry_schedule {
        config.retry_schedule = schedule.clone();
    }
    if let Some(scale) = args.time_scale {
        config.time_scale = scale;
    }
    if let Some(every) = args.reconcile_every {
        let older_than = args
            .reconcile_older_than
            .unwrap_or(hooklab_server::config::DEFAULT_OLDER_THAN);
        config.reconcile = Some(super::reconcile::settings(
            &args.reconcile_apis,
            every,
            older_than,
        )?);
    }
    if let Some(after) = args.review_after {
        config.review_after = after;
    }
    if let Some(timeout) = args.forward_timeout {
        config.forward_timeout = timeout;
    }
    if let Some(n) = args.concurrency {
        config.concurrency = usize::from(n);
    }
    for spec in &args.sources {
        let source = SourceConfig::parse_cli(spec)?;
        config.sources.retain(|s| s.name != source.name);
        config.sources.push(source);
    }
    let db = match (&args.db.db, &config.db) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) => db_path(&args.db)?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(config, db, args.json))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(config: Config, db: std::path::PathBuf, json: bool) -> anyhow::Result<()> {
    let store = Arc::new(
        SqliteStore::open(&db)
            .with_context(|| format!("cannot open the database {}", db.display()))?,
    );
    let sources: Vec<(String, String, usize, Option<String>)> = config
        .sources
        .iter()
        .map(|s| {
            let forward = config
                .forward_target(s)
                .map(|target| format!("{target} (retries: {})", config.schedule_for(s)));
            (
                s.name.clone(),
                s.provider.to_string(),
                s.secrets.len(),
                forward,
            )
        })
        .collect();
    let forward_to = config.forward_to.clone();
    let running = runtime::start(config, store.clone()).await?;
    let base = running.url();
    if json {
        println!(
            "{}",
            serde_json::json!({ "ready": { "receiver": base, "db": db, "forward_to": forward_to } })
        );
    } else {
        println!("Hooklab is listening on {base}");
        if sources.is_empty() {
            println!(
                "  No sources yet: every request is recorded and answered 404.\n  Add one with --source NAME=PROVIDER:SECRET (see `hooklab providers`)."
            );
        }
        for (name, provider, secrets, forward) in &sources {
            let secrets = match secrets {
                0 => "no secret: verdicts will be `unsigned`".to_string(),
                1 => "1 secret".to_string(),
                n => format!("{n} secrets"),
            };
            println!("  {name:<14} {provider:<18} {secrets:<40} → {base}/{name}");
            if let Some(forward) = forward {
                println!("  {:<14} forwarded to {forward}", "");
            }
        }
        println!("Recording to {}. Press Ctrl-C to stop.", db.display());
    }
    let events = running.subscribe();
    let printer = tokio::spawn(print_deliveries(events, json));
    running.run_until(runtime::shutdown_signal()).await?;
    // The bus closes with the server; the printer then flushes what it holds and ends.
    if tokio::time::timeout(Duration::from_secs(2), printer)
        .await
        .is_err()
    {
        eprintln!("(some delivery lines were not printed; `hooklab events list` has them all)");
    }
    store.close()?;
    if !json {
        eprintln!(
            "Stopped. Every acknowledged delivery is in {}.",
            db.display()
        );
    }
    Ok(())
}

/// Prints one line per delivery. Lines are buffered and flushed whenever no further delivery
/// is waiting, so a burst costs one write, and a lone delivery still shows at once.
async fn print_deliveries(mut events: broadcast::Receiver<Event>, json: bool) {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let mut next = events.recv().await;
    loop {
        match next {
            Ok(Event::Delivery(d)) => {
                let _ = if json {
                    writeln!(out, "{}", output::summary_json(&d.delivery))
                } else {
                    write_text(&mut out, &d)
                };
            }
            Ok(Event::Attempt(a)) => {
                let _ = if json {
                    writeln!(out, "{}", output::attempt_event_json(&a))
                } else {
                    writeln!(out, "{}", output::attempt_event_line(&a))
                };
            }
            Ok(Event::DeadLetter(d)) => {
                let _ = if json {
                    let mut value = output::dead_letter_json(&d);
                    value["kind"] = "dead_letter".into();
                    writeln!(out, "{value}")
                } else {
                    writeln!(out, "{}", output::dead_letter_event_line(&d))
                };
            }
            Ok(Event::Transition(t)) => {
                let _ = if json {
                    writeln!(out, "{}", output::transition_json(&t))
                } else {
                    writeln!(out, "{}", output::transition_line(&t))
                };
            }
            Ok(event @ Event::KeyStatus(_)) => {
                // Text mode: the attempt line already says how the job ended.
                if json {
                    if let Ok(line) = serde_json::to_string(&event) {
                        let _ = writeln!(out, "{line}");
                    }
                }
            }
            Ok(_) => {}
            Err(RecvError::Lagged(n)) => {
                let _ = out.flush();
                eprintln!("({n} deliveries recorded but not printed: output fell behind)");
            }
            Err(RecvError::Closed) => break,
        }
        next = match events.try_recv() {
            Ok(event) => Ok(event),
            Err(TryRecvError::Lagged(n)) => Err(RecvError::Lagged(n)),
            Err(TryRecvError::Closed) => Err(RecvError::Closed),
            Err(TryRecvError::Empty) => {
                let _ = out.flush();
                events.recv().await
            }
        };
    }
    let _ = out.flush();
}

fn write_text(out: &mut impl Write, d: &DeliveryEvent) -> std::io::Result<()> {
    writeln!(out, "{}", output::summary_line(&d.delivery))?;
    match &d.diagnosis {
        Some(why) => write!(out, "{}", output::wrap(&format!("why: {why}"), 14, 110)),
        None if d.delivery.verdict != Status::Valid => write!(
            out,
            "{}",
            output::wrap(&format!("note: {}", d.verdict_summary), 14, 110)
        ),
        None => Ok(()),
    }
}
