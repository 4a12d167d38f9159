//! `hooklab replay ID --to URL [--resign | --variant V]`: a recorded delivery sent again, so it is
//! recorded (linked to its original by `X-Hooklab-Replay-Of`), verified, deduplicated and
//! processed like any delivery — or delivered straight to the developer's app.

use super::db_path;
use crate::cli::ReplayArgs;
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_core::replay::{self, Original, Variant};
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
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
    let (host, port, path) = parse_http_url(&args.to)?;
    let (delivery, request) =
        prepare(&args.db, args.id, &args.to, args.secret.as_deref(), variant)?;
    let status = send(&host, port, &path, &request)
        .with_context(|| format!("cannot send the replay to {}", args.to))?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "replay_of": delivery.id,
                "variant": variant.as_str(),
                "to": args.to,
                "status": status,
            })
        );
    } else {
        println!(
            "Replayed #{} ({}) to {}: HTTP {status}",
            delivery.id,
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

/// Loads delivery `id` and builds its replay to `to` as `variant`.
fn prepare(
    db: &crate::cli::DbArg,
    id: i64,
    to: &str,
    secret: Option<&str>,
    variant: Variant,
) -> anyhow::Result<(hooklab_core::store::Delivery, replay::ReplayRequest)> {
    let db = db_path(db)?;
    let store = SqliteStore::open_read_only(&db)?;
    let delivery = store
        .get(id)?
        .with_context(|| format!("no delivery #{id} in {}", db.display()))?;
    let record = &delivery.record;
    let secret = match secret {
        Some(s) => Some(secret_from(s)?),
        None => source_secret(&db, &record.source)?,
    };
    let provider = match record.provider {
        Some(p) => p,
        None if variant.signs() => bail!(
            "delivery #{id} came to an unknown source (`{}`): it has no provider to sign for",
            record.source
        ),
        None => hooklab_core::provider::ProviderId::GenericHmac,
    };
    let request = replay::build(
        Original {
            id: delivery.id,
            method: &record.method,
            headers: &record.headers,
            body: &record.body,
        },
        provider,
        &source_options(&db, &record.source)?,
        secret.as_ref(),
        variant,
        to,
        UnixMillis::now(),
    )?;
    Ok((delivery, request))
}

/// `hooklab inject`: N copies, sequential or as a concurrent race.
pub(crate) fn inject(args: crate::cli::InjectArgs) -> anyhow::Result<ExitCode> {
    use hooklab_server::inject::{Mode, send_copies, summarise};
    let variant = if args.resign {
        Variant::Resigned
    } else {
        Variant::AsRecorded
    };
    let (host, port, path) = parse_http_url(&args.to)?;
    let (delivery, request) =
        prepare(&args.db, args.id, &args.to, args.secret.as_deref(), variant)?;
    let bytes = http_bytes(&host, port, &path, &request);
    let mode = if args.concurrent {
        Mode::Concurrent
    } else {
        Mode::Sequential {
            interval: args.interval.unwrap_or_default(),
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let copies = usize::try_from(args.copies).unwrap_or(usize::MAX);
    let results = runtime.block_on(send_copies(&format!("{host}:{port}"), &bytes, copies, mode));
    let summary = summarise(&results);
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "copy_of": delivery.id,
                "to": args.to,
                "mode": if args.concurrent { "concurrent" } else { "sequential" },
                "summary": summary,
                "copies": results,
            })
        );
    } else {
        println!(
            "{} copies of #{} to {} ({}): {}",
            summary.copies,
            delivery.id,
            args.to,
            if args.concurrent {
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
            "  latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} distinct response bodies{}",
            summary.latency_ms_p50,
            summary.latency_ms_p99,
            summary.latency_ms_max,
            summary.distinct_bodies,
            if summary.distinct_bodies > 1 {
                " — the handler answered copies of one event differently"
            } else {
                ""
            }
        );
    }
    let all_ok = results
        .iter()
        .all(|r| r.status.is_some_and(|s| (200..300).contains(&s)));
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn secret_from(value: &str) -> anyhow::Result<Secret> {
    match value.strip_prefix("env:") {
        Some(var) => std::env::var(var).map(Secret::new).with_context(|| {
            format!("the environment variable {var} (named by --secret) is not set")
        }),
        None => Ok(Secret::new(value)),
    }
}

/// The first secret of the source as added in the UI (`<db>.sources.toml`), if it is there.
fn source_secret(db: &std::path::Path, source: &str) -> anyhow::Result<Option<Secret>> {
    let path = hooklab_server::config::sources_file::path_beside(db);
    let sources = hooklab_server::config::sources_file::load(&path)?;
    Ok(sources
        .into_iter()
        .find(|s| s.name == source)
        .and_then(|s| s.secrets.into_iter().next()))
}

fn source_options(
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

/// The request as HTTP/1.1 bytes, headers in order, with `Connection: close`.
fn http_bytes(host: &str, port: u16, path: &str, req: &replay::ReplayRequest) -> Vec<u8> {
    let mut bytes =
        format!("{} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n", req.method).into_bytes();
    for h in &req.headers {
        bytes.extend_from_slice(h.name.as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(&h.value);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            req.body.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(&req.body);
    bytes
}

/// One HTTP/1.1 request; the response's status.
pub(crate) fn send(
    host: &str,
    port: u16,
    path: &str,
    req: &replay::ReplayRequest,
) -> anyhow::Result<u16> {
    let mut stream = TcpStream::connect((host, port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.write_all(&http_bytes(host, port, path, req))?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("the answer is not HTTP")
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
