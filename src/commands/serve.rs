//! `hooklab serve`: production mode. The same receiver and workers as `listen`, on a shared
//! PostgreSQL database instead of a SQLite file, so any number of replicas can run behind a
//! load balancer: the unique `(scope, key)` keeps idempotency exact across them and their
//! workers lease jobs with `FOR UPDATE SKIP LOCKED`. No tunnel; the control API (and the UI)
//! only with `--control-port`, on loopback. `hooklab migrate`: create or upgrade a
//! database's schema, PostgreSQL or SQLite.

use super::listen::{print_deliveries, receiver_config};
use crate::cli::{MigrateArgs, ServeArgs};
use anyhow::{Context as _, bail};
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_postgres::{PgOptions, PgStore};
use hooklab_server::feed::{Feed, FeedOptions};
use hooklab_server::runtime;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut config = receiver_config(&args.receiver)?;
    if config.tunnel.is_some() {
        bail!("`hooklab serve` runs no tunnel: remove [tunnel] from the config (use `listen`)");
    }
    config.control_port = args.control_port;
    config.validate()?;
    if !is_postgres(&args.database) {
        bail!(
            "--database must be a PostgreSQL URL (postgres://…); for a SQLite file use \
             `hooklab listen --db FILE`"
        );
    }
    let options = PgOptions {
        pool_size: args
            .pool_size
            .map_or(PgOptions::default().pool_size, usize::from),
        prepared_statements: !(args.no_prepared_statements
            || env_flag("HOOKLAB_NO_PREPARED_STATEMENTS")),
        ..PgOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let control_file = args.control_port.map(|_| args.control_file.clone());
    runtime.block_on(serve(
        config,
        &args.database,
        options,
        args.receiver.json,
        control_file,
    ))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(
    config: hooklab_server::config::Config,
    url: &str,
    options: PgOptions,
    json: bool,
    control_file: Option<PathBuf>,
) -> anyhow::Result<()> {
    let shown = redact(url);
    let store = Arc::new(
        PgStore::connect_with(url, options)
            .await
            .with_context(|| format!("cannot open the database {shown}"))?,
    );
    let sources: Vec<(String, String)> = config
        .sources
        .iter()
        .map(|s| (s.name.clone(), s.provider.to_string()))
        .collect();
    let forward_to = config.forward_to.clone();
    // Made before the receiver takes requests: every later delivery of another replica shows.
    let feed = Feed::new(store.clone()).await;
    let running = runtime::start(config, store.clone()).await?;
    let base = running.url();
    // The optional control API: its address and token go to a private file, never to output.
    let discovery = control_file.as_ref().and_then(|path| {
        let control = running.control()?;
        let found = hooklab_server::control::discovery::Discovery {
            pid: std::process::id(),
            url: control.url(),
            token: control.token().clone(),
            receiver: base.clone(),
        };
        match found.write(path) {
            Ok(()) => Some((found, path.clone())),
            Err(e) => {
                eprintln!(
                    "warning: cannot write {} ({e}); the control API runs but its token is unknown",
                    path.display()
                );
                None
            }
        }
    });
    let events = running.subscribe();
    // Deliveries the other replicas record show here too (polled; see hooklab_server::feed).
    let (stop_feed, feed_stopped) = tokio::sync::oneshot::channel::<()>();
    let feed = tokio::spawn(
        feed.run(running.publisher(), FeedOptions::default(), async move {
            let _ = feed_stopped.await;
        }),
    );
    if json {
        println!(
            "{}",
            serde_json::json!({ "ready": {
                "receiver": base,
                "database": shown,
                "forward_to": forward_to,
                "pid": std::process::id(),
                "control": discovery.as_ref().map(|(d, _)| d.url.clone()),
            } })
        );
    } else {
        println!("Hooklab (production) is listening on {base}");
        for (name, provider) in &sources {
            println!("  {name:<14} {provider:<18} → {base}/{name}");
        }
        if let Some(target) = &forward_to {
            println!("  forwarding to {target}");
        }
        if let Some((d, path)) = &discovery {
            println!(
                "  control API and UI on {} (loopback only; its token is in {})",
                d.url,
                path.display()
            );
        }
        println!("Recording to {shown}. Press Ctrl-C to stop.");
    }
    let names = sources.into_iter().map(|(name, _)| name).collect();
    let printer = tokio::spawn(print_deliveries(events, json, None, names));
    let served = running.run_until(runtime::shutdown_signal()).await;
    if let Some((d, path)) = &discovery {
        d.remove(path);
    }
    let _ = stop_feed.send(());
    let _ = feed.await;
    served?;
    let _ = tokio::time::timeout(Duration::from_secs(2), printer).await;
    store.close().await;
    if !json {
        eprintln!("Stopped. Every acknowledged delivery is in {shown}.");
    }
    Ok(())
}

pub(crate) fn migrate(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    if is_postgres(&args.database) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let (before, after) = runtime
            .block_on(PgStore::migrate(&args.database))
            .with_context(|| format!("cannot migrate {}", redact(&args.database)))?;
        println!(
            "{}: schema version {after}{}",
            redact(&args.database),
            if before == after {
                " (already current)".to_string()
            } else {
                format!(" (was {before})")
            }
        );
    } else {
        let path = sqlite_path(&args.database);
        let store = SqliteStore::open(&path)
            .with_context(|| format!("cannot migrate {}", path.display()))?;
        store.close()?;
        println!(
            "{}: schema version {}",
            path.display(),
            hooklab_core::store::sqlite::SCHEMA_VERSION
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A boolean variable: set and not `0`, `false`, `no`, `off` or empty.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off"
        )
    })
}

pub(crate) fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// A SQLite path from `sqlite://PATH`, `sqlite:PATH` or a plain path.
pub(crate) fn sqlite_path(database: &str) -> PathBuf {
    let path = database
        .strip_prefix("sqlite://")
        .or_else(|| database.strip_prefix("sqlite:"))
        .unwrap_or(database);
    PathBuf::from(path)
}

/// The URL without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end], &rest[at..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_the_output() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/hooklab?sslmode=require"),
            "postgres://app:***@db:5432/hooklab?sslmode=require"
        );
        assert_eq!(redact("postgres://app@db/h"), "postgres://app@db/h");
    }

    #[test]
    fn sqlite_locations() {
        assert_eq!(
            sqlite_path("sqlite:///tmp/a.db"),
            PathBuf::from("/tmp/a.db")
        );
        assert_eq!(sqlite_path("a.db"), PathBuf::from("a.db"));
        assert!(is_postgres("postgresql://x/y") && !is_postgres("/tmp/x.db"));
    }
}
