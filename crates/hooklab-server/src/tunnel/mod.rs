//! The tunnel: what gives the receiver (and only the receiver) a public URL.
//!
//! - [`TunnelSpec`]: a provider's settings turned into something runnable: the bore client
//!   in-process, or a child process (ssh, localhost.run, cloudflared, ngrok, a custom command)
//!   with a parser that finds the public URL in its output ([`parse`]).
//! - `process`: children run in their own process group and are killed as a group (on stop,
//!   on drop, when the leader exits), so no helper survives Hooklab.
//! - [`supervisor`]: runs the spec, publishes `starting → up(url) → down(reason) →
//!   reconnecting` on the events bus, reconnects with backoff, and hands each new URL to the
//!   receiver ([`crate::receiver::PublicUrl`]) for URL-signed providers.
//!
//! The tunnel forwards to the receiver's port; the control API listens on another loopback
//! port that no tunnel is ever pointed at.

mod bore;
pub mod control;
pub mod parse;
mod process;
pub mod supervisor;

pub use control::TunnelControl;
pub use supervisor::{SupervisorOptions, TunnelHandle, start};

use crate::config::{TunnelKind, TunnelOptions};
use hooklab_core::secret::Secret;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// How long a start may take before it counts as failed, unless configured.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);
/// bore's public server.
pub const DEFAULT_BORE_SERVER: &str = "bore.pub";
/// localhost.run's server and user (no account, no key needed).
pub const LOCALHOST_RUN: &str = "nokey@localhost.run";

/// What a tunnel is doing; serialised as `{"status": "up", "url": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TunnelState {
    /// The first start is under way.
    Starting,
    /// The public URL forwards to the receiver.
    Up { url: String },
    /// The tunnel stopped working (the process exited, the server hung up, a start failed).
    Down { reason: String },
    /// The next start is due in `delay_ms` (the `attempt`-th since it was last up).
    Reconnecting { attempt: u32, delay_ms: u64 },
    /// Hooklab stopped the tunnel.
    Stopped,
}

impl TunnelState {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Up { .. } => "up",
            Self::Down { .. } => "down",
            Self::Reconnecting { .. } => "reconnecting",
            Self::Stopped => "stopped",
        }
    }
}

/// A state change, as published on the events bus (`{"kind": "tunnel", "provider": "bore",
/// "status": "up", "url": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TunnelEvent {
    /// The provider's name, e.g. `bore`.
    pub provider: String,
    #[serde(flatten)]
    pub state: TunnelState,
    /// On `up`: the earlier public URL when this one differs from it. The gateway's dashboard
    /// still points at the old one and must be updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_url: Option<String>,
}

/// The tunnel's current status, for the control API and `hooklab tunnel status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TunnelStatus {
    pub provider: String,
    #[serde(flatten)]
    pub state: TunnelState,
    /// The most recent public URL, kept while the tunnel is down or reconnecting.
    pub public_url: Option<String>,
    /// The public side speaks plain HTTP (bore, ssh): gateways that require HTTPS refuse it.
    pub plain_http: bool,
    /// How many times the public URL changed since Hooklab started.
    pub url_changes: u32,
}

/// A tunnel ready to run. `Debug` redacts secrets.
#[derive(Debug, Clone)]
pub struct TunnelSpec {
    pub kind: TunnelKind,
    pub(crate) runner: Runner,
    /// How long a start may take before it counts as failed.
    pub start_timeout: Duration,
}

/// How the tunnel runs.
#[derive(Debug, Clone)]
pub(crate) enum Runner {
    /// The bore client in this process.
    Bore {
        server: String,
        secret: Option<Secret>,
    },
    /// A child process whose output names the public URL.
    Process(ProcessSpec),
}

/// A child process: program, arguments (`{port}` replaced at start), environment, and how to
/// find the URL in its output.
#[derive(Debug, Clone)]
pub(crate) struct ProcessSpec {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    /// Extra environment (secrets such as ngrok's authtoken travel here, never in `args`).
    pub(crate) env: Vec<(String, Secret)>,
    pub(crate) parser: parse::UrlParser,
    /// Keep a pipe open on the child's stdin (localhost.run ends the session on EOF).
    pub(crate) hold_stdin: bool,
}

/// Why a tunnel's settings cannot be run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TunnelSpecError {
    #[error("the ssh tunnel needs a host: --ssh USER@HOST[:PORT] (or `ssh` in [tunnel])")]
    MissingSshHost,
    #[error("`{0}` is not of the form USER@HOST[:PORT]")]
    BadSshTarget(String),
    #[error("the custom tunnel needs a command line with {{port}}: --tunnel-command '…{{port}}…'")]
    MissingCommand,
    #[error("the custom tunnel's command has no {{port}} where the receiver's port goes")]
    CommandWithoutPort,
    #[error("the URL regex is invalid: {0}")]
    BadRegex(String),
    #[error("`{0}` is not an ssh option of the form KEY=VALUE")]
    BadSshOption(String),
    #[error("the bore server `{0}` must be a host name or address, without scheme or port")]
    BadBoreServer(String),
}

impl TunnelSpec {
    /// Checks the options and builds the spec for the chosen provider.
    pub fn from_options(o: &TunnelOptions) -> Result<Self, TunnelSpecError> {
        let kind = o.kind();
        for option in &o.ssh_options {
            if !option.contains('=') || option.starts_with('=') {
                return Err(TunnelSpecError::BadSshOption(option.clone()));
            }
        }
        let ssh_program = || o.binary.clone().unwrap_or_else(|| "ssh".into());
        let runner = match kind {
            TunnelKind::Bore => {
                let server = o
                    .bore_server
                    .clone()
                    .unwrap_or_else(|| DEFAULT_BORE_SERVER.into());
                let bad = server.is_empty()
                    || server.contains("://")
                    || server.contains('/')
                    || (server.matches(':').count() == 1);
                if bad {
                    return Err(TunnelSpecError::BadBoreServer(server));
                }
                Runner::Bore {
                    server,
                    secret: o.bore_secret.clone(),
                }
            }
            TunnelKind::Ssh => {
                let target = o.ssh.as_deref().ok_or(TunnelSpecError::MissingSshHost)?;
                let target = SshTarget::parse(target)?;
                Runner::Process(parse::ssh_command(
                    ssh_program(),
                    &target,
                    o.remote_port.unwrap_or(0),
                    o.identity.as_deref(),
                    &o.ssh_options,
                ))
            }
            TunnelKind::LocalhostRun => {
                let target = SshTarget::parse(o.ssh.as_deref().unwrap_or(LOCALHOST_RUN))?;
                Runner::Process(parse::localhost_run_command(
                    ssh_program(),
                    &target,
                    o.identity.as_deref(),
                    &o.ssh_options,
                ))
            }
            TunnelKind::Cloudflared => Runner::Process(parse::cloudflared_command(
                o.binary.clone().unwrap_or_else(|| "cloudflared".into()),
            )),
            TunnelKind::Ngrok => Runner::Process(parse::ngrok_command(
                o.binary.clone().unwrap_or_else(|| "ngrok".into()),
                o.ngrok_authtoken.clone(),
            )),
            TunnelKind::Custom => {
                let command = o
                    .command
                    .as_deref()
                    .ok_or(TunnelSpecError::MissingCommand)?;
                if !command.contains("{port}") {
                    return Err(TunnelSpecError::CommandWithoutPort);
                }
                Runner::Process(parse::custom_command(command, o.url_regex.as_deref())?)
            }
        };
        Ok(Self {
            kind,
            runner,
            start_timeout: o.start_timeout.unwrap_or(DEFAULT_START_TIMEOUT),
        })
    }

    /// The public side speaks plain HTTP (bore, ssh to a host's port).
    pub fn plain_http(&self) -> bool {
        matches!(self.kind, TunnelKind::Bore | TunnelKind::Ssh)
    }
}

/// `USER@HOST[:PORT]` (IPv6 hosts in brackets: `me@[::1]:22`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshTarget {
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
}

impl SshTarget {
    pub(crate) fn parse(s: &str) -> Result<Self, TunnelSpecError> {
        let bad = || TunnelSpecError::BadSshTarget(s.to_string());
        let (user, rest) = s.rsplit_once('@').ok_or_else(bad)?;
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (host, after) = inner.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(bad)?),
            };
            (host, port)
        } else {
            match rest.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        let port = port
            .map(|p| p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad))
            .transpose()?;
        let valid = |part: &str| {
            !part.is_empty() && !part.starts_with('-') && !part.contains(char::is_whitespace)
        };
        if !valid(user) || !valid(host) {
            return Err(bad());
        }
        Ok(Self {
            user: user.to_string(),
            host: host.to_string(),
            port,
        })
    }

    /// The host as it goes in a URL (IPv6 in brackets).
    pub(crate) fn url_host(&self) -> String {
        url_host(&self.host)
    }
}

/// A host as it goes in a URL (IPv6 in brackets).
pub(crate) fn url_host(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// What a running tunnel reports to its supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Update {
    /// The public URL (again, or a new one).
    Url(String),
    /// The tunnel ended, and why.
    Ended(String),
}

/// One start of a tunnel, until it ends. Dropping it kills what it runs.
pub(crate) struct Session {
    pub(crate) updates: tokio::sync::mpsc::Receiver<Update>,
    /// Recent output lines, to explain a start that never printed a URL.
    pub(crate) recent: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    /// A child's process group (`None` in-process).
    pub(crate) group: Option<process::ProcessGroup>,
    pub(crate) _task: AbortOnDrop,
}

impl Session {
    /// Starts the tunnel that forwards to `127.0.0.1:local_port`.
    pub(crate) fn open(runner: &Runner, local_port: u16) -> Result<Self, String> {
        match runner {
            Runner::Bore { server, secret } => Ok(bore::open(server, secret.as_ref(), local_port)),
            Runner::Process(spec) => process::spawn(spec, local_port),
        }
    }

    /// Stops gracefully: SIGTERM to the group, up to `grace` for it to exit, then SIGKILL.
    pub(crate) async fn stop(mut self, grace: Duration) {
        if let Some(group) = &self.group {
            group.terminate();
            let ended = async {
                while let Some(update) = self.updates.recv().await {
                    if matches!(update, Update::Ended(_)) {
                        return;
                    }
                }
            };
            let _ = tokio::time::timeout(grace, ended).await;
        }
        // Dropping kills the group (if anything is left) and aborts the task.
    }

    /// The last lines the tunnel printed.
    pub(crate) fn last_output(&self) -> Option<String> {
        process::last_lines(&self.recent)
    }
}

/// Aborts a task when dropped.
#[derive(Debug)]
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_targets_parse_with_and_without_port() {
        let t = SshTarget::parse("me@example.com:2222").unwrap();
        assert_eq!(
            (t.user.as_str(), t.host.as_str(), t.port),
            ("me", "example.com", Some(2222))
        );
        let t = SshTarget::parse("nokey@localhost.run").unwrap();
        assert_eq!(t.port, None);
        let t = SshTarget::parse("me@[::1]:22").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", Some(22)));
        assert_eq!(t.url_host(), "[::1]");
        for bad in [
            "example.com",
            "me@",
            "@h",
            "me@h:0",
            "me@h:x",
            "-oProxy=x@h",
            "me@[::1",
        ] {
            assert!(SshTarget::parse(bad).is_err(), "{bad} must be refused");
        }
    }

    #[test]
    fn options_are_checked_per_provider() {
        let mut o = TunnelOptions {
            provider: Some(TunnelKind::Ssh),
            ..TunnelOptions::default()
        };
        assert_eq!(
            TunnelSpec::from_options(&o).unwrap_err(),
            TunnelSpecError::MissingSshHost
        );
        o.ssh = Some("u@h".into());
        assert!(TunnelSpec::from_options(&o).unwrap().plain_http());
        o.provider = Some(TunnelKind::Custom);
        o.command = Some("tunnel --to 8080".into());
        assert_eq!(
            TunnelSpec::from_options(&o).unwrap_err(),
            TunnelSpecError::CommandWithoutPort
        );
        o.provider = Some(TunnelKind::Bore);
        o.bore_server = Some("bore.pub:7835".into());
        assert!(
            TunnelSpec::from_options(&o).is_err(),
            "no port: bore's is fixed"
        );
        o.provider = None;
        let spec = TunnelSpec::from_options(&o).unwrap();
        assert_eq!(spec.kind, TunnelKind::LocalhostRun, "the default");
        assert!(!spec.plain_http(), "localhost.run terminates TLS");
    }

    #[test]
    fn debug_never_shows_secrets() {
        let o = TunnelOptions {
            provider: Some(TunnelKind::Ngrok),
            ngrok_authtoken: Some(Secret::new("2abcNGROKTOKEN")),
            bore_secret: Some(Secret::new("boresecretvalue")),
            ..TunnelOptions::default()
        };
        let spec = TunnelSpec::from_options(&o).unwrap();
        let shown = format!("{o:?} {spec:?}");
        assert!(!shown.contains("NGROKTOKEN"), "{shown}");
        assert!(!shown.contains("boresecretvalue"), "{shown}");
    }

    #[test]
    fn events_serialise_flat() {
        let e = crate::events::Event::Tunnel(TunnelEvent {
            provider: "bore".into(),
            state: TunnelState::Up {
                url: "http://bore.pub:4242".into(),
            },
            previous_url: None,
        });
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "tunnel", "provider": "bore", "status": "up", "url": "http://bore.pub:4242"})
        );
        let back: crate::events::Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, e, "the bus's JSON reads back");
    }
}
