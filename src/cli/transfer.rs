//! `hooklab export` and `hooklab import`: a whole database (JSON Lines, between engines), or
//! deliveries as JSON, HAR, curl or raw HTTP, and captured requests and provider events in.

use super::AnyDatabaseArg;
use clap::Args;
use hooklab_core::capture::{ExportFormat, Format};
use std::path::PathBuf;

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExportKind {
    /// The whole database as JSON Lines (`jsonl`).
    Database,
    Deliveries(ExportFormat),
}

fn export_kind(s: &str) -> Result<ExportKind, String> {
    match s {
        "jsonl" => Ok(ExportKind::Database),
        other => other.parse().map(ExportKind::Deliveries).map_err(|_| {
            format!("unknown format `{other}` (one of: jsonl, json, har, curl, http)")
        }),
    }
}

/// `--format` of `import`: `None` is `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImportFormat(pub(crate) Option<Format>);

fn import_format(s: &str) -> Result<ImportFormat, String> {
    match s {
        "auto" => Ok(ImportFormat(None)),
        other => other.parse().map(|f| ImportFormat(Some(f))),
    }
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    hooklab export --db ~/.local/share/hooklab/hooklab.db > hooklab.jsonl   # the whole database\n  \
    hooklab export --format har --source stripe --limit 20 > stripe.har\n  \
    hooklab export --format curl --id 42\n\n\
    Only what was received is exported: never a source's configured secret.")]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    pub(crate) database: AnyDatabaseArg,
    /// jsonl: the whole database, to import into a new one (default); json: an array of
    /// deliveries; har: a HAR 1.2 log; curl: one command per delivery; http: raw HTTP/1.1.
    #[arg(long, value_name = "FORMAT", default_value = "jsonl", value_parser = export_kind)]
    pub(crate) format: ExportKind,
    /// Only this delivery. Repeatable.
    #[arg(long = "id", value_name = "ID")]
    pub(crate) ids: Vec<i64>,
    /// Only this source's deliveries.
    #[arg(long, value_name = "NAME")]
    pub(crate) source: Option<String>,
    /// Only the N most recent deliveries (written oldest first).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) limit: Option<u32>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    hooklab import capture.har                                # recorded into the default database\n  \
    hooklab import request.sh --format curl --db test.db      # a \"Copy as cURL\"\n  \
    hooklab import evt.json --source stripe --secret whsec_... # a Stripe event, signed now\n  \
    hooklab import capture.har --to http://127.0.0.1:8787/stripe --json\n  \
    hooklab import hooklab.jsonl --database postgres://hooklab@db.internal/hooklab  # a whole database\n\n\
    Each request is verified and recorded like a delivery from the network (remote address\n\
    `import:FORMAT`). A source's secret comes from --secret or the sources added in the UI\n\
    (<db>.sources.toml).")]
pub(crate) struct ImportArgs {
    /// The file (`-` or nothing: standard input).
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// The file (the older spelling of FILE).
    #[arg(
        long = "file",
        value_name = "FILE",
        hide = true,
        conflicts_with = "file"
    )]
    pub(crate) file_flag: Option<PathBuf>,
    /// auto (default), hooklab (a whole-database export), json, har, curl, http or event
    /// (a provider's event JSON).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = import_format)]
    pub(crate) format: ImportFormat,
    /// Record the requests under this source (default: each request's first path segment);
    /// `NAME=PROVIDER` when the source is not configured and NAME is no provider's id.
    #[arg(long, value_name = "NAME[=PROVIDER]")]
    pub(crate) source: Option<String>,
    /// The source's secret (may be `env:VAR`): verifies the requests and signs an event.
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: Option<String>,
    #[command(flatten)]
    pub(crate) database: AnyDatabaseArg,
    /// Send each request over HTTP instead of recording it: to the receiver's source URL (so
    /// it goes through the pipeline) or to your app. http:// only.
    #[arg(long, value_name = "URL")]
    pub(crate) to: Option<String>,
    /// The outcome as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}
