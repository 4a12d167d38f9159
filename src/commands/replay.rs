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
    let db = db_path(&args.db)?;
    let store = SqliteStore::open_read_only(&db)?;
    let delivery = store
        .get(args.id)?
        .with_context(|| format!("no delivery #{} in {}", args.id, db.display()))?;
    let record = &delivery.record;
    let (host, port, path) = parse_http_url(&args.to)?;
    let secret = match &args.secret {
        Some(s) => Some(secret_from(s)?),
        None => source_secret(&db, &record.source)?,
    };
    let provider = match record.provider {
        Some(p) => p,
        None if variant.signs() => bail!(
            "delivery #{} came to an unknown source (`{}`): it has no provider to sign for",
            args.id,
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
        &args.to,
        UnixMillis::now(),
    )?;
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

fn secret_from(value: &str) -> anyhow::Result<Secret> {
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
fn parse_http_url(url: &str) -> anyhow::Result<(String, u16, String)> {
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

/// One HTTP/1.1 request; the response's status.
fn send(host: &str, port: u16, path: &str, req: &replay::ReplayRequest) -> anyhow::Result<u16> {
    let mut stream = TcpStream::connect((host, port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let head = format!("{} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n", req.method);
    let mut bytes = Vec::new();
    for h in &req.headers {
        bytes.extend_from_slice(h.name.as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(&h.value);
        bytes.extend_from_slice(b"\r\n");
    }
    let tail = format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        req.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&bytes)?;
    stream.write_all(tail.as_bytes())?;
    stream.write_all(&req.body)?;
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
