//! The receiver's configuration: where to listen, where to store, and the *sources* (one per
//! gateway endpoint: a name, a provider, its secrets, and the response to give).
//!
//! Read from TOML ([`Config::load`], [`Config::from_toml_str`]) or built by the CLI from flags
//! ([`SourceConfig::parse_cli`]). A secret written `env:VAR` is read from the environment at
//! load time. Secrets never appear in `Debug` output or error messages: TOML errors are
//! reported by line and column with the parser's message only, never the offending line.
//!
//! ```toml
//! port = 8787
//! public_url = "https://example.trycloudflare.com"
//!
//! [[source]]
//! name = "stripe"
//! provider = "stripe"
//! secret = "env:STRIPE_WEBHOOK_SECRET"
//!
//! [source.response]
//! status = 200
//! headers = { "Content-Type" = "application/json" }
//! body = '{"received":true}'
//! ```
//!
//! Forwarding to the developer's app: global keys above the sources; a source may override
//! `forward_to`, `retry_schedule`, `time_scale` and `success` (`"2xx"`, or `"200"` only, the
//! default for Asaas and Wompi).
//!
//! ```toml
//! forward_to = "http://127.0.0.1:3000/webhooks"   # http:// only (no TLS forwarding yet)
//! retry_schedule = "0.2s,1s,5s,30s,2m,10m"        # the default; or a preset: "stripe", "svix"…
//! time_scale = 4320                               # plays three days in a minute
//! forward_timeout = "30s"
//! concurrency = 8
//! review_after = "1h"                            # parked events → requires_review
//!
//! [reconcile]                                     # optional: ask the providers' APIs
//! every = "5m"
//! older_than = "10m"
//! stripe_key = "env:STRIPE_SECRET_KEY"
//! stripe_api = "http://127.0.0.1:12111"          # http:// only for now
//! ```
//!
//! A tunnel exposes the receiver (never the control API, which listens on its own loopback
//! port, `control_port`, 0 by default: a free one). See [`tunnel`] for every key.
//!
//! ```toml
//! control_port = 0
//!
//! [tunnel]
//! provider = "bore"
//! bore_server = "bore.pub"
//! ```

mod forward;
mod reconcile;
mod response;
mod source;
pub mod sources_file;
#[cfg(test)]
mod tests;
mod tunnel;
pub mod ui_settings;

pub use forward::{DEFAULT_CONCURRENCY, DEFAULT_FORWARD_TIMEOUT, SuccessPolicy, check_forward_url};
pub use reconcile::{DEFAULT_OLDER_THAN, ReconcileSettings};
pub use response::{MAX_DELAY_MS, ResponseConfig};
pub use source::SourceConfig;
pub use tunnel::{TunnelKind, TunnelOptions};

use hooklab_core::retry::{RetrySchedule, TimeScale, parse_duration};
use serde::Deserialize;
use std::env::VarError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default address: loopback only; expose it through a tunnel, not by binding wide.
pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8787;
/// Bodies above this many bytes are refused with 413 (headers and size are still recorded).
pub const DEFAULT_BODY_LIMIT: u64 = 10 * 1024 * 1024;

/// How `env:VAR` secrets are looked up; [`std::env::var`] outside tests.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Result<String, VarError>;

/// Everything the receiver needs to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The interface to bind; loopback by default so only a tunnel exposes the receiver.
    pub host: String,
    /// The port to bind; 0 picks a free one (tests, parallel instances).
    pub port: u16,
    /// The SQLite file; `None` lets the caller pick (the CLI uses the user's data directory).
    pub db: Option<PathBuf>,
    /// The largest body kept, in bytes; larger requests are answered 413 and recorded without
    /// their body.
    pub body_limit: u64,
    /// The URL senders call (a tunnel's), used to verify URL-signed providers (Twilio, Square).
    pub public_url: Option<String>,
    /// The configured sources; a request's first path segment selects one by name.
    pub sources: Vec<SourceConfig>,
    /// Where deliveries are forwarded (an `http://` URL), for every source without a
    /// `forward_to` of its own. `None`: nothing is forwarded and keys complete on receipt.
    pub forward_to: Option<String>,
    /// The retry schedule of sources without their own.
    pub retry_schedule: RetrySchedule,
    /// Divides every delay of sources without their own scale (to watch long schedules).
    pub time_scale: TimeScale,
    /// How long one forward attempt may take before it counts as failed.
    pub forward_timeout: Duration,
    /// How many forward attempts run at once.
    pub concurrency: usize,
    /// How long a parked state-machine event may wait for its object before the object is
    /// flagged `requires_review`.
    pub review_after: Duration,
    /// Periodic reconciliation against the providers' APIs (`None`: off).
    pub reconcile: Option<ReconcileSettings>,
    /// The tunnel that exposes the receiver (`None`: none; the receiver stays local).
    pub tunnel: Option<TunnelOptions>,
    /// The control API's port on 127.0.0.1 (0: a free one); `None`: no control API.
    pub control_port: Option<u16>,
    /// Where the sources added in the UI are kept ([`sources_file`]): loaded at start (after
    /// the configured ones) and rewritten when the UI changes them. `None`: the UI cannot add
    /// sources. Set by the CLI and the desktop app beside the database, never from TOML.
    pub sources_file: Option<std::path::PathBuf>,
    /// Where the UI keeps its own settings ([`ui_settings`]). `None`: the UI's choices last
    /// until it is closed. Set by the CLI and the desktop app beside the database, never from
    /// TOML.
    pub ui_settings_file: Option<std::path::PathBuf>,
}

/// Writes `bytes` to `path` atomically: a temporary file beside it (`mode` on Unix, when
/// given), synced, renamed over `path`, and the folder synced so the rename survives a crash.
pub(crate) fn write_atomically(
    path: &std::path::Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        if let Some(mode) = mode {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The default for [`Config::review_after`].
pub const DEFAULT_REVIEW_AFTER: Duration = Duration::from_secs(3600);

impl Default for Config {
    fn default() -> Self {
        Self {
            host: DEFAULT_HOST.into(),
            port: DEFAULT_PORT,
            db: None,
            body_limit: DEFAULT_BODY_LIMIT,
            public_url: None,
            sources: Vec::new(),
            forward_to: None,
            retry_schedule: RetrySchedule::default_forward(),
            time_scale: TimeScale::REAL,
            forward_timeout: DEFAULT_FORWARD_TIMEOUT,
            concurrency: DEFAULT_CONCURRENCY,
            review_after: DEFAULT_REVIEW_AFTER,
            reconcile: None,
            tunnel: None,
            control_port: None,
            sources_file: None,
            ui_settings_file: None,
        }
    }
}

/// A configuration that cannot be used, with where and why. Messages never contain a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("cannot read the config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `at` is `file:line:column` (or `--source` for the CLI flag).
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
    #[error(
        "{at}: environment variable `{var}` (a secret of source `{source_name}`) {problem}; \
         export it, or write the secret in the config"
    )]
    Env {
        at: String,
        var: String,
        source_name: String,
        problem: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(at: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            at: at.into(),
            message: message.into(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default = "default_host")]
    host: String,
    #[serde(default = "default_port")]
    port: u16,
    #[serde(default)]
    db: Option<PathBuf>,
    #[serde(default = "default_body_limit")]
    body_limit: u64,
    #[serde(default)]
    public_url: Option<String>,
    #[serde(default, alias = "sources")]
    source: Vec<toml::Spanned<source::RawSource>>,
    #[serde(default)]
    forward_to: Option<String>,
    #[serde(default)]
    retry_schedule: Option<String>,
    #[serde(default)]
    time_scale: Option<f64>,
    #[serde(default)]
    forward_timeout: Option<String>,
    #[serde(default = "default_concurrency")]
    concurrency: usize,
    #[serde(default)]
    review_after: Option<String>,
    #[serde(default)]
    reconcile: Option<reconcile::RawReconcile>,
    #[serde(default)]
    tunnel: Option<tunnel::RawTunnel>,
    #[serde(default)]
    control_port: Option<u16>,
}

fn default_host() -> String {
    DEFAULT_HOST.into()
}
fn default_port() -> u16 {
    DEFAULT_PORT
}
fn default_body_limit() -> u64 {
    DEFAULT_BODY_LIMIT
}
fn default_concurrency() -> usize {
    DEFAULT_CONCURRENCY
}

impl Config {
    /// Reads and validates a TOML file; `env:VAR` secrets come from the process environment.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string(), &|v| std::env::var(v))
    }

    /// Parses and validates TOML text; `env:VAR` secrets come from the process environment.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        Self::parse(text, "config", &|v| std::env::var(v))
    }

    /// [`Config::from_toml_str`] with another environment (tests, embedding).
    pub fn from_toml_str_with_env(text: &str, env: EnvLookup<'_>) -> Result<Self, ConfigError> {
        Self::parse(text, "config", env)
    }

    fn parse(text: &str, file: &str, env: EnvLookup<'_>) -> Result<Self, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            // The error's Display quotes the offending line, which may hold a secret: report
            // the position and the parser's message only.
            let at = e
                .span()
                .map_or_else(|| file.to_string(), |span| locate(file, text, span.start));
            ConfigError::invalid(at, e.message().trim_end())
        })?;
        let sources = raw
            .source
            .into_iter()
            .map(|spanned| {
                let at = locate(file, text, spanned.span().start);
                spanned.into_inner().resolve(&at, env)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let invalid =
            |e: hooklab_core::retry::RetryScheduleError| ConfigError::invalid(file, e.to_string());
        let config = Self {
            host: raw.host,
            port: raw.port,
            db: raw.db,
            body_limit: raw.body_limit,
            public_url: raw.public_url,
            sources,
            forward_to: raw.forward_to,
            retry_schedule: match raw.retry_schedule {
                Some(s) => RetrySchedule::parse(&s).map_err(invalid)?,
                None => RetrySchedule::default_forward(),
            },
            time_scale: match raw.time_scale {
                Some(f) => parse_time_scale(f).map_err(invalid)?,
                None => TimeScale::REAL,
            },
            forward_timeout: match raw.forward_timeout {
                Some(s) => parse_duration(&s).map_err(invalid)?,
                None => DEFAULT_FORWARD_TIMEOUT,
            },
            concurrency: raw.concurrency,
            review_after: match raw.review_after {
                Some(s) => parse_duration(&s).map_err(invalid)?,
                None => DEFAULT_REVIEW_AFTER,
            },
            reconcile: raw.reconcile.map(|r| r.resolve(file, env)).transpose()?,
            tunnel: raw.tunnel.map(|t| t.resolve(file, env)).transpose()?,
            control_port: raw.control_port,
            sources_file: None,
            ui_settings_file: None,
        };
        config.validate_at(file)?;
        Ok(config)
    }

    /// Checks what the types cannot: names, statuses, provider options, the public URL.
    /// [`crate::runtime::start`] calls it, so hand-built configs are checked too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_at("config")
    }

    fn validate_at(&self, at: &str) -> Result<(), ConfigError> {
        if self.host.trim().is_empty() {
            return Err(ConfigError::invalid(
                at,
                "`host` is empty; use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)",
            ));
        }
        if let Some(url) = &self.public_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains('?') {
                return Err(ConfigError::invalid(
                    at,
                    format!(
                        "`public_url` must be an absolute http(s) URL without a query, like \
                         https://example.trycloudflare.com (got `{url}`)"
                    ),
                ));
            }
        }
        self.validate_forwarding(at)?;
        if let Some(tunnel) = &self.tunnel {
            crate::tunnel::TunnelSpec::from_options(tunnel)
                .map_err(|e| ConfigError::invalid(at, format!("[tunnel]: {e}")))?;
            // Tunnels connect to 127.0.0.1:PORT.
            let host = self.host.trim_matches(['[', ']']);
            let reachable = host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_unspecified() || ip == std::net::Ipv4Addr::LOCALHOST);
            if !reachable {
                return Err(ConfigError::invalid(
                    at,
                    format!(
                        "a tunnel connects to 127.0.0.1, but `host` is {}; use 127.0.0.1 (the \
                         default) with a tunnel",
                        self.host
                    ),
                ));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for source in &self.sources {
            source.validate(&format!("{at}: source `{}`", source.name))?;
            if !seen.insert(source.name.as_str()) {
                return Err(ConfigError::invalid(
                    at,
                    format!(
                        "two sources are named `{}`; source names must be unique",
                        source.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The source with this name.
    pub fn source(&self, name: &str) -> Option<&SourceConfig> {
        self.sources.iter().find(|s| s.name == name)
    }
}

/// A TOML number as a [`TimeScale`].
pub(crate) fn parse_time_scale(
    f: f64,
) -> Result<TimeScale, hooklab_core::retry::RetryScheduleError> {
    TimeScale::parse(&f.to_string())
}

/// `file:line:column` (1-based) of a byte offset in `text`.
fn locate(file: &str, text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{file}:{line}:{column}")
}

/// Reads `value`, or the variable it names when written `env:VAR`.
pub(crate) fn resolve_secret(
    value: &str,
    at: &str,
    source_name: &str,
    env: EnvLookup<'_>,
) -> Result<String, ConfigError> {
    let Some(var) = value.strip_prefix("env:") else {
        return Ok(value.to_string());
    };
    let problem = match env(var) {
        Ok(v) if v.is_empty() => "is empty",
        Ok(v) => return Ok(v),
        Err(VarError::NotPresent) => "is not set",
        Err(VarError::NotUnicode(_)) => "is not valid UTF-8",
    };
    if var.is_empty() {
        return Err(ConfigError::invalid(
            at,
            format!("source `{source_name}`: `env:` must be followed by a variable name"),
        ));
    }
    Err(ConfigError::Env {
        at: at.to_string(),
        var: var.to_string(),
        source_name: source_name.to_string(),
        problem: problem.to_string(),
    })
}
