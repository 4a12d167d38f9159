//! `hooklab listen`: run the receiver, print one line per recorded delivery.

use super::db_path;
use crate::cli::ListenArgs;
use crate::output;
use anyhow::Context as _;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::verdict::Status;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::events::Event;
use hooklab_server::runtime;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

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
    let sources: Vec<(String, String, usize)> = config
        .sources
        .iter()
        .map(|s| (s.name.clone(), s.provider.to_string(), s.secrets.len()))
        .collect();
    let running = runtime::start(config, store.clone()).await?;
    let base = running.url();
    if json {
        println!(
            "{}",
            serde_json::json!({ "ready": { "receiver": base, "db": db } })
        );
    } else {
        println!("Hooklab is listening on {base}");
        if sources.is_empty() {
            println!(
                "  No sources yet: every request is recorded and answered 404.\n  Add one with --source NAME=PROVIDER:SECRET (see `hooklab providers`)."
            );
        }
        for (name, provider, secrets) in &sources {
            let secrets = match secrets {
                0 => "no secret: verdicts will be `unsigned`".to_string(),
                1 => "1 secret".to_string(),
                n => format!("{n} secrets"),
            };
            println!("  {name:<14} {provider:<18} {secrets:<40} → {base}/{name}");
        }
        println!("Recording to {}. Press Ctrl-C to stop.", db.display());
    }
    let mut events = running.subscribe();
    let printer = tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(Event::Delivery(d)) => {
                    if json {
                        println!("{}", output::summary_json(&d.delivery));
                    } else {
                        println!("{}", output::summary_line(&d.delivery));
                        match &d.diagnosis {
                            Some(why) => {
                                print!("{}", output::wrap(&format!("why: {why}"), 14, 110))
                            }
                            None if d.delivery.verdict != Status::Valid => {
                                print!(
                                    "{}",
                                    output::wrap(&format!("note: {}", d.verdict_summary), 14, 110)
                                );
                            }
                            None => {}
                        }
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    eprintln!("({n} deliveries recorded but not printed: output fell behind)");
                }
                Err(RecvError::Closed) => break,
            }
        }
    });
    running.run_until(runtime::shutdown_signal()).await?;
    printer.abort();
    store.close()?;
    if !json {
        eprintln!(
            "Stopped. Every acknowledged delivery is in {}.",
            db.display()
        );
    }
    Ok(())
}
