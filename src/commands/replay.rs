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
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::ExitCode;
use std::time::Duration;

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let variant = match (&args.variant, args.resign) {
        (Some(v), _) => v.parse::<Variant>().map_err(anyhow::Error::msg)?,
        (None, true) => Variant::Resigned,
        (None, false) => Variant::AsRecorded,
    };
    let to = target_url(&args.db, args.id, args.to.as_deref())?;
    let target = Target::parse(&to)?;
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
            to,
            result.error.unwrap_or_default()
        );
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "replay_of": args.id,
                "variant": variant.as_str(),
                "to": to,
                "status": status,
            })
        );
    } else {
        println!(
            "Replayed #{} ({}) to {}: HTTP {status}",
            args.id,
            variant.as_str(),
            to
        );
    }
    Ok(if (200..300).contains(&status) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--to`, else delivery `id`'s path (and query) on the running `hooklab listen` of the
/// database, so the replay goes through its pipeline.
fn target_url(db: &crate::cli::DbArg, id: i64, to: Option<&str>) -> anyhow::Result<String> {
    if let Some(to) = to {
        return Ok(to.to_string());
    }
    let running =
        super::running_instance(db).map_err(|e| anyhow::anyhow!("{e:#}; or give --to URL"))?;
    let store = hooklab_core::store::sqlite::SqliteStore::open_read_only(&db_path(db)?)?;
    let delivery = store.get(id)?.with_context(|| {
        format!("no delivery #{id} in this database (see `hooklab events list`)")
    })?;
    let query = delivery
        .record
        .query
        .as_deref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    Ok(format!(
        "{}{}{query}",
        running.receiver, delivery.record.path
    ))
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
    let target = Target::parse(&target_url(&args.db, args.id, args.to.as_deref())?)?;
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

// `hooklab trigger`'s helpers (its sources, URL and one blocking POST).

/// The first secret of the source as added in the UI (`<db>.sources.toml`), if it is there.
pub(super) fn source_secret(db: &std::path::Path, source: &str) -> anyhow::Result<Option<Secret>> {
    let path = hooklab_server::config::sources_file::path_beside(db);
    let sources = hooklab_server::config::sources_file::load(&path)?;
    Ok(sources
        .into_iter()
        .find(|s| s.name == source)
        .and_then(|s| s.secrets.into_iter().next()))
}

pub(super) fn source_options(
    db: &std::path::Path,
    source: &str,
) -> anyhow::Result<hooklab_core::provider::ProviderOptions> {
    let path = hooklab_server::config::sources_file::path_beside(db);
    let sources = hooklab_server::config::sources_file::load(&path)?;
    Ok(sources
        .into_iter()
        .find(|s| s.name == source)
        .map(|s| s.options)
        .unwrap_or_default())
}

/// `http://HOST[:PORT]/PATH?QUERY` → (host, port, path-and-query).
pub(crate) fn parse_http_url(url: &str) -> anyhow::Result<(String, u16, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--to must be an http:// URL (no TLS client is built in yet), not `{url}`");
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (
            h.to_string(),
            p.parse().with_context(|| format!("bad port in `{url}`"))?,
        ),
        _ => (authority.to_string(), 80),
    };
    if host.is_empty() {
        bail!("no host in `{url}`");
    }
    Ok((host, port, path.to_string()))
}

/// Writes one whole HTTP/1.1 request (`Connection: close`); the response's status.
pub(super) fn post_bytes(host: &str, port: u16, request: &[u8]) -> anyhow::Result<u16> {
    let mut stream = TcpStream::connect((host, port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.write_all(request)?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("the answer is not HTTP")
}

/// `req` to `http://host:port` + `path` (headers in order, exact body); the status answered.
pub(crate) fn send(
    host: &str,
    port: u16,
    path: &str,
    req: &hooklab_core::replay::ReplayRequest,
) -> anyhow::Result<u16> {
    let target = Target::parse(&format!("http://{host}:{port}{path}"))?;
    post_bytes(
        host,
        port,
        &target.request_bytes(&req.method, &req.headers, &req.body),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_and_https_is_refused_with_a_reason() {
        assert_eq!(
            parse_http_url("http://127.0.0.1:8787/stripe?x=1").unwrap(),
            ("127.0.0.1".into(), 8787, "/stripe?x=1".into())
        );
        assert_eq!(
            parse_http_url("http://localhost").unwrap(),
            ("localhost".into(), 80, "/".into())
        );
        let err = parse_http_url("https://x").unwrap_err().to_string();
        assert!(err.contains("http://"), "{err}");
    }
}
