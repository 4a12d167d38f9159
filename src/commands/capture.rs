//! `hooklab import FILE` of captured requests and provider events, and `hooklab export
//! --format json|har|curl|http`: an adapter over `hooklab_core::capture` (the formats) and
//! `Receiver::ingest` (the receiver's own verification and record path). Imported requests
//! are recorded into the database, or sent over HTTP with `--to`.

use super::replay::{parse_http_url, secret_from, send};
use super::transfer::{Target, runtime};
use crate::cli::{ExportArgs, ImportArgs};
use anyhow::{Context as _, bail};
use hooklab_core::capture::{self, Capture, ExportFormat, Format};
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::RawRequest;
use hooklab_core::store::{Delivery, DeliveryFilter, Store};
use hooklab_server::config::{Config, SourceConfig};
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

pub(super) fn import(args: &ImportArgs, bytes: &[u8], base: &Path) -> anyhow::Result<ExitCode> {
    let files = |path: &str| -> Result<Vec<u8>, String> {
        let path = base.join(path);
        std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (format, capture) = capture::read(bytes, args.format.0, &files)?;
    let target = Target::of(&args.database)?;
    let sources_file = match &target {
        Target::Sqlite(path) => Some(hooklab_server::config::sources_file::path_beside(path)),
        Target::Postgres(_) => None,
    };
    let mut sources = match &sources_file {
        Some(path) => hooklab_server::config::sources_file::load(path)?,
        None => Vec::new(),
    };
    let secret = args.secret.as_deref().map(secret_from).transpose()?;
    let (requests, source) = match capture {
        Capture::Database => unreachable_database()?,
        Capture::Requests(requests) => (requests, args.source.clone()),
        Capture::Event { body, provider } => {
            let spec = match (&args.source, provider) {
                (Some(spec), _) => spec.clone(),
                (None, Some(p)) => p.as_str().to_string(),
                (None, None) => bail!(
                    "cannot tell which provider sent this event: pass --source NAME (a source \
                     added in the UI, or a provider's id such as `stripe`)"
                ),
            };
            let config = resolve(&mut sources, &spec, secret.as_ref(), provider)?;
            let Some(secret) = config.secrets.first() else {
                bail!(
                    "signing the event for source `{}` needs its secret: pass --secret",
                    config.name
                );
            };
            let url = match &args.to {
                Some(to) => to.clone(),
                None => format!("http://localhost/{}", config.name),
            };
            let request = capture::event::wrap(capture::event::Wrap {
                body: &body,
                provider: config.provider,
                options: &config.options,
                secret,
                url: &url,
                now: UnixMillis::now(),
            })?;
            (vec![request], Some(config.name.clone()))
        }
    };
    if let Some(to) = &args.to {
        return send_all(args, format, &requests, to);
    }
    // The sources the requests go to: `--source`, or each request's first path segment when
    // it names a provider; `--secret` verifies them.
    let name_of = |r: &RawRequest| {
        source
            .clone()
            .map(|spec| spec.split('=').next().unwrap_or_default().to_string())
            .unwrap_or_else(|| first_segment(&r.path).to_string())
    };
    if let Some(spec) = &source {
        resolve(&mut sources, spec, secret.as_ref(), None)?;
    } else {
        let mut names: Vec<String> = requests.iter().map(name_of).collect();
        names.dedup();
        for name in names {
            let known = sources.iter().any(|s| s.name == name);
            if known || name.parse::<ProviderId>().is_ok() {
                resolve(&mut sources, &name, secret.as_ref(), None)?;
            }
        }
    }
    let config = Config {
        sources,
        ..Config::default()
    };
    runtime()?.block_on(record_all(
        args, format, &target, config, requests, &name_of,
    ))
}

fn unreachable_database() -> anyhow::Result<(Vec<RawRequest>, Option<String>)> {
    bail!("a whole-database export is imported with --format hooklab (or auto) into a new database")
}

/// The source `spec` (`NAME[=PROVIDER]`) names, added to `sources` when it is not there (its
/// provider: the one given, NAME when it is a provider's id, or the event's), with `secret`
/// as its secret when given.
fn resolve<'a>(
    sources: &'a mut Vec<SourceConfig>,
    spec: &str,
    secret: Option<&hooklab_core::secret::Secret>,
    detected: Option<ProviderId>,
) -> anyhow::Result<&'a SourceConfig> {
    let (name, provider) = match spec.split_once('=') {
        Some((name, provider)) => (
            name,
            Some(provider.parse::<ProviderId>().map_err(anyhow::Error::msg)?),
        ),
        None => (spec, None),
    };
    let index = match sources.iter().position(|s| s.name == name) {
        Some(i) => i,
        None => {
            let Some(provider) = provider.or_else(|| name.parse().ok()).or(detected) else {
                bail!(
                    "source `{name}` is not configured here (not in the sources added in the UI) \
                     and is no provider's id: pass --source {name}=PROVIDER"
                );
            };
            sources.push(SourceConfig::new(name, provider, Vec::new()));
            sources.len() - 1
        }
    };
    let config = &mut sources[index];
    if let Some(provider) = provider {
        config.provider = provider;
    }
    if let Some(secret) = secret {
        config.secrets = vec![secret.clone()];
    }
    Ok(config)
}

/// The source name of a path: its first segment.
fn first_segment(path: &str) -> &str {
    path.trim_start_matches('/').split('/').next().unwrap_or("")
}

async fn record_all(
    args: &ImportArgs,
    format: Format,
    target: &Target,
    config: Config,
    requests: Vec<RawRequest>,
    name_of: &dyn Fn(&RawRequest) -> String,
) -> anyhow::Result<ExitCode> {
    let (store, closing): (Arc<dyn Store>, Closing) = match target {
        Target::Sqlite(path) => {
            let store = Arc::new(
                hooklab_core::store::sqlite::SqliteStore::open(path)
                    .with_context(|| format!("cannot open the database {}", path.display()))?,
            );
            (store.clone(), Closing::Sqlite(store))
        }
        Target::Postgres(url) => {
            let store = Arc::new(
                hooklab_postgres::PgStore::connect(url)
                    .await
                    .with_context(|| format!("cannot connect to {}", target.shown()))?,
            );
            (store.clone(), Closing::Postgres(store))
        }
    };
    let (events, _) = tokio::sync::broadcast::channel(16);
    let receiver = hooklab_server::receiver::Receiver::new(
        &config,
        store,
        events,
        hooklab_server::clock::Clock::system(),
    )?;
    let origin = format!("import:{format}");
    let mut imported = Vec::with_capacity(requests.len());
    let mut failure = None;
    for request in requests {
        let name = name_of(&request);
        match receiver.ingest(Some(&name), request, &origin).await {
            Ok(done) => {
                if !args.json {
                    println!("{}", line(&done));
                }
                imported.push(done);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    drop(receiver);
    match closing {
        Closing::Sqlite(store) => store.close()?,
        Closing::Postgres(store) => store.close().await,
    }
    if let Some(e) = failure {
        bail!("{e}; {} imported before it", imported.len());
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "format": format.as_str(), "imported": imported })
        );
    } else {
        eprintln!(
            "imported {} deliveries ({format}) into {}",
            imported.len(),
            target.shown()
        );
    }
    Ok(ExitCode::SUCCESS)
}

enum Closing {
    Sqlite(Arc<hooklab_core::store::sqlite::SqliteStore>),
    Postgres(Arc<hooklab_postgres::PgStore>),
}

/// `#12 POST /stripe?x=1 valid`, with the reason when not valid.
fn line(d: &hooklab_server::receiver::Ingested) -> String {
    let target = match &d.query {
        Some(q) => format!("{}?{q}", d.path),
        None => d.path.clone(),
    };
    let mut line = format!(
        "#{} {} {} {} ({})",
        d.id,
        d.method,
        target,
        d.verdict.as_str(),
        d.source
    );
    if let Some(reason) = &d.reason {
        line.push_str(&format!(": {reason}"));
    }
    if let Some(key) = d.key.filter(|k| k.duplicate) {
        line.push_str(&format!(", duplicate of #{}", key.first_delivery));
    }
    line
}

/// Sends every request to `to` (its path; the request's query when `to` has none).
fn send_all(
    args: &ImportArgs,
    format: Format,
    requests: &[RawRequest],
    to: &str,
) -> anyhow::Result<ExitCode> {
    let (host, port, path) = parse_http_url(to)?;
    let mut sent = Vec::new();
    let mut all_ok = true;
    for r in requests {
        let target = match (&r.query, path.contains('?')) {
            (Some(q), false) if format != Format::Event => format!("{path}?{q}"),
            _ => path.clone(),
        };
        let request = hooklab_core::replay::ReplayRequest {
            method: r.method.clone(),
            headers: r
                .headers
                .iter()
                .filter(|h| {
                    !matches!(
                        h.name.to_ascii_lowercase().as_str(),
                        "host" | "content-length" | "connection" | "transfer-encoding"
                    )
                })
                .cloned()
                .collect(),
            body: r.body.clone(),
        };
        let status = send(&host, port, &target, &request)
            .with_context(|| format!("cannot send {} {} to {to}", r.method, r.path))?;
        all_ok &= (200..300).contains(&status);
        if !args.json {
            println!("{} {} → {to}: HTTP {status}", r.method, r.path);
        }
        sent.push(serde_json::json!({"method": r.method, "path": r.path, "status": status}));
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "format": format.as_str(), "to": to, "sent": sent })
        );
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `hooklab export --format json|har|curl|http`.
pub(super) fn export(
    target: &Target,
    format: ExportFormat,
    args: &ExportArgs,
) -> anyhow::Result<ExitCode> {
    let deliveries = match target {
        Target::Sqlite(path) => {
            if !path.exists() {
                bail!("no database at {}", path.display());
            }
            let store = hooklab_core::store::sqlite::SqliteStore::open_read_only(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            select(
                args,
                |filter| Ok(store.list(&filter)?),
                |id| Ok(store.get(id)?),
            )?
        }
        Target::Postgres(url) => {
            let rt = runtime()?;
            let store = rt
                .block_on(hooklab_postgres::PgStore::connect(url))
                .with_context(|| format!("cannot connect to {}", target.shown()))?;
            let chosen = select(
                args,
                |filter| Ok(rt.block_on(store.list(filter))?),
                |id| Ok(rt.block_on(store.get(id))?),
            );
            rt.block_on(store.close());
            chosen?
        }
    };
    let bytes = capture::export(&deliveries, format);
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes).context("writing the export")?;
    out.flush().context("writing the export")?;
    eprintln!(
        "exported {} deliveries as {} from {}",
        deliveries.len(),
        format.as_str(),
        target.shown()
    );
    Ok(ExitCode::SUCCESS)
}

/// The deliveries `--id`, `--source` and `--limit` choose, oldest first.
fn select(
    args: &ExportArgs,
    list: impl Fn(DeliveryFilter) -> anyhow::Result<Vec<hooklab_core::store::DeliverySummary>>,
    get: impl Fn(i64) -> anyhow::Result<Option<Delivery>>,
) -> anyhow::Result<Vec<Delivery>> {
    let mut ids: Vec<i64> = if args.ids.is_empty() {
        const PAGE: u32 = 1_000;
        let mut ids = Vec::new();
        let mut before = None;
        loop {
            let want = args.limit.map_or(PAGE, |l| PAGE.min(l - ids.len() as u32));
            let page = list(DeliveryFilter {
                limit: Some(want),
                source: args.source.clone(),
                before,
                ..DeliveryFilter::default()
            })?;
            let done = page.len() < want as usize;
            before = page.last().map(|d| d.id);
            ids.extend(page.iter().map(|d| d.id));
            if done || args.limit.is_some_and(|l| ids.len() >= l as usize) {
                break;
            }
        }
        ids
    } else {
        args.ids.clone()
    };
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|id| get(id)?.with_context(|| format!("no delivery #{id}")))
        .filter(|d| match (d, &args.source) {
            (Ok(d), Some(source)) => &d.record.source == source,
            _ => true,
        })
        .collect()
}
