//! `hooklab listen`: run the receiver (and, with a forward target, the worker that forwards to
//! the developer's app; with `--tunnel`, the supervised tunnel); print one line per recorded
//! delivery, per attempt, per dead letter, per tunnel change. The control API's discovery file
//! (`<db>.control.json`) lets `hooklab tunnel status` find this instance; it is removed on exit.

use super::db_path;
use crate::cli::{ListenArgs, ReceiverArgs, TunnelArgs};
use crate::output;
use anyhow::Context as _;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::verdict::Status;
use hooklab_server::config::{Config, SourceConfig, TunnelOptions};
use hooklab_server::control::discovery::{self, Discovery};
use hooklab_server::events::{DeliveryEvent, Event};
use hooklab_server::runtime;
use hooklab_server::tunnel::{TunnelEvent, TunnelStatus};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

pub(crate) fn run(args: ListenArgs) -> anyhow::Result<ExitCode> {
    let mut config = receiver_config(&args.receiver)?;
    apply_tunnel_args(&mut config, &args.tunnel)?;
    let db = match (&args.db.db, &config.db) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) => db_path(&args.db)?,
    };
    // Sources added in the UI, and the UI's settings, live beside the database.
    config.sources_file = Some(hooklab_server::config::sources_file::path_beside(&db));
    config.ui_settings_file = Some(hooklab_server::config::ui_settings::path_beside(&db));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(config, db, args.receiver.json, args.ui))?;
    Ok(ExitCode::SUCCESS)
}

/// The config file (`--config`) with the receiver's flags over it: what `listen` and `serve`
/// share. Sources given with `--source` replace the file's sources of the same name.
pub(crate) fn receiver_config(args: &ReceiverArgs) -> anyhow::Result<Config> {
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
    Ok(config)
}

async fn serve(
    config: Config,
    db: std::path::PathBuf,
    json: bool,
    args_ui: bool,
) -> anyhow::Result<()> {
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
    // Subscribed before anything is printed: the tunnel's changes from now on reach the
    // printer, and its state so far is printed from the snapshot taken just after.
    let events = running.subscribe();
    let tunnel = running.tunnel_status();
    let discovery_path = discovery::path_beside(&db);
    let discovery = running.control().map(|control| Discovery {
        pid: std::process::id(),
        url: control.url(),
        token: control.token().clone(),
        receiver: base.clone(),
    });
    if let Some(d) = &discovery {
        if let Err(e) = d.write(&discovery_path) {
            eprintln!(
                "warning: cannot write {} ({e}); `hooklab tunnel status` will not find this instance",
                discovery_path.display()
            );
        }
    }
    let control_url = discovery.as_ref().map(|d| d.url.clone());
    let ui_url = discovery
        .as_ref()
        .filter(|_| args_ui)
        .map(|d| format!("{}/#token={}", d.url, d.token.expose()));
    if json {
        println!(
            "{}",
            serde_json::json!({ "ready": {
                "receiver": base,
                "db": db,
                "forward_to": forward_to,
                "control": control_url,
                "tunnel": tunnel.as_ref().map(|t| t.provider.clone()),
                "ui": ui_url,
            } })
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
        if let Some(url) = &control_url {
            println!(
                "Control API on {url} (this machine only, never through the tunnel; its token is in {}).",
                discovery_path.display()
            );
        }
        if let Some(url) = &ui_url {
            println!("UI: {url}  (this run's access token is in the address: keep it private)");
        }
        println!("Recording to {}. Press Ctrl-C to stop.", db.display());
    }
    let names: Vec<String> = sources.iter().map(|(name, ..)| name.clone()).collect();
    let printer = tokio::spawn(print_deliveries(events, json, tunnel, names));
    let served = running.run_until(runtime::shutdown_signal()).await;
    if let Some(d) = &discovery {
        d.remove(&discovery_path);
    }
    served?;
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
pub(crate) async fn print_deliveries(
    mut events: broadcast::Receiver<Event>,
    json: bool,
    tunnel: Option<TunnelStatus>,
    sources: Vec<String>,
) {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let plain_http = tunnel.as_ref().is_some_and(|t| t.plain_http);
    // The last tunnel change printed: the snapshot and the bus may both carry it.
    let mut last_tunnel: Option<TunnelEvent> = None;
    if let Some(status) = tunnel {
        let snapshot = TunnelEvent {
            provider: status.provider,
            state: status.state,
            previous_url: None,
        };
        let _ = write_tunnel(&mut out, &snapshot, json, plain_http, &sources);
        let _ = out.flush();
        last_tunnel = Some(snapshot);
    }
    let mut next = events.recv().await;
    loop {
        match next {
            Ok(Event::Tunnel(t)) => {
                if last_tunnel.as_ref() != Some(&t) {
                    let _ = write_tunnel(&mut out, &t, json, plain_http, &sources);
                    last_tunnel = Some(t);
                }
            }
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

fn write_tunnel(
    out: &mut impl Write,
    t: &TunnelEvent,
    json: bool,
    plain_http: bool,
    sources: &[String],
) -> std::io::Result<()> {
    if json {
        writeln!(out, "{}", output::tunnel_event_json(t))
    } else {
        write!(out, "{}", output::tunnel_event_text(t, plain_http, sources))
    }
}

/// `--tunnel` and its flags over `[tunnel]`; the control API always runs (loopback, token).
fn apply_tunnel_args(config: &mut Config, args: &TunnelArgs) -> anyhow::Result<()> {
    let flags = TunnelOptions {
        provider: args.tunnel,
        bore_server: args.bore_server.clone(),
        bore_secret: args
            .bore_secret
            .clone()
            .map(hooklab_core::secret::Secret::new),
        ssh: args.ssh.clone(),
        remote_port: args.ssh_remote_port,
        identity: args.ssh_identity.clone(),
        ssh_options: args.ssh_option.clone(),
        binary: args.tunnel_binary.clone(),
        ngrok_authtoken: args
            .ngrok_authtoken
            .clone()
            .map(hooklab_core::secret::Secret::new),
        command: args.tunnel_command.clone(),
        url_regex: args.tunnel_url_regex.clone(),
        start_timeout: args.tunnel_start_timeout,
    };
    // Secrets may come from the environment (BORE_SECRET, NGROK_AUTHTOKEN) without a tunnel.
    let settings_without_tunnel = args.bore_server.is_some()
        || args.ssh.is_some()
        || args.ssh_remote_port.is_some()
        || args.ssh_identity.is_some()
        || !args.ssh_option.is_empty()
        || args.tunnel_binary.is_some()
        || args.tunnel_command.is_some()
        || args.tunnel_url_regex.is_some()
        || args.tunnel_start_timeout.is_some();
    match config.tunnel.take() {
        Some(file) => config.tunnel = Some(file.overlay(flags)),
        None if args.tunnel.is_some() => config.tunnel = Some(flags),
        None if settings_without_tunnel => anyhow::bail!(
            "tunnel settings were given without a tunnel: add --tunnel PROVIDER (or [tunnel] \
             in the config)"
        ),
        None => {}
    }
    config.control_port = Some(args.control_port.or(config.control_port).unwrap_or(0));
    config.validate()?;
    Ok(())
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
