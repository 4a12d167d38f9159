//! `[tunnel]`: which tunnel exposes the receiver, and its provider's settings. The CLI's
//! `--tunnel` flags fill the same [`TunnelOptions`] (flags override the file); the tunnel
//! module turns them into a runnable spec ([`crate::tunnel::TunnelSpec`]).
//!
//! ```toml
//! [tunnel]
//! provider = "ssh"                 # localhost.run (the default), bore, ssh, cloudflared, ngrok, custom
//! ssh = "me@tunnel.example.com:22" # ssh: USER@HOST[:PORT]; localhost.run: its server (nokey@localhost.run)
//! remote_port = 8080               # ssh: the port opened on the host (0: the host picks one)
//! identity = "~/.ssh/id_ed25519"   # ssh, localhost.run
//! ssh_options = ["ServerAliveInterval=15"]
//! bore_server = "bore.pub"         # bore (plain HTTP)
//! bore_secret = "env:BORE_SECRET"
//! binary = "/usr/local/bin/cloudflared"   # cloudflared, ngrok, ssh: the executable
//! ngrok_authtoken = "env:NGROK_AUTHTOKEN"
//! command = "mytunnel --to 127.0.0.1:{port}"   # custom: run with sh -c
//! url_regex = "https://[a-z0-9.-]+"            # custom: finds the public URL in its output
//! start_timeout = "30s"
//! ```

use super::{ConfigError, EnvLookup, resolve_secret};
use hooklab_core::retry::parse_duration;
use hooklab_core::secret::Secret;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The tunnel providers Hooklab can supervise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum TunnelKind {
    /// `ssh -R 80:127.0.0.1:PORT nokey@localhost.run`: HTTPS, no account. The default.
    #[serde(rename = "localhost.run", alias = "lhr")]
    LocalhostRun,
    /// The `bore` client, in-process, against `bore.pub` or another bore server. Plain HTTP.
    #[serde(rename = "bore")]
    Bore,
    /// `ssh -R` to any host the user can log in to.
    #[serde(rename = "ssh")]
    Ssh,
    /// A Cloudflare quick tunnel (`cloudflared tunnel --url …`).
    #[serde(rename = "cloudflared", alias = "cloudflare")]
    Cloudflared,
    /// `ngrok http …` with an authtoken.
    #[serde(rename = "ngrok")]
    Ngrok,
    /// Any command line with `{port}`, plus a regex that finds the URL in its output.
    #[serde(rename = "custom")]
    Custom,
}

impl TunnelKind {
    pub const ALL: [Self; 6] = [
        Self::LocalhostRun,
        Self::Bore,
        Self::Ssh,
        Self::Cloudflared,
        Self::Ngrok,
        Self::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::LocalhostRun => "localhost.run",
            Self::Bore => "bore",
            Self::Ssh => "ssh",
            Self::Cloudflared => "cloudflared",
            Self::Ngrok => "ngrok",
            Self::Custom => "custom",
        }
    }
}

impl std::fmt::Display for TunnelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for TunnelKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "localhost.run" | "lhr" | "localhostrun" => Ok(Self::LocalhostRun),
            "bore" => Ok(Self::Bore),
            "ssh" => Ok(Self::Ssh),
            "cloudflared" | "cloudflare" => Ok(Self::Cloudflared),
            "ngrok" => Ok(Self::Ngrok),
            "custom" => Ok(Self::Custom),
            other => Err(format!(
                "unknown tunnel `{other}`; use one of: {}",
                Self::ALL.map(Self::as_str).join(", ")
            )),
        }
    }
}

/// A tunnel as configured: the provider and every provider's settings (only the chosen
/// provider's are used). `Debug` redacts the secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TunnelOptions {
    /// `None`: localhost.run.
    pub provider: Option<TunnelKind>,
    /// bore: the server's host name [default: bore.pub].
    pub bore_server: Option<String>,
    /// bore: the server's secret, when it requires one.
    pub bore_secret: Option<Secret>,
    /// ssh: `USER@HOST[:PORT]`; localhost.run: replaces `nokey@localhost.run`.
    pub ssh: Option<String>,
    /// ssh: the port to open on the host [default: 0, the host picks one].
    pub remote_port: Option<u16>,
    /// ssh, localhost.run: the private key (`ssh -i`).
    pub identity: Option<PathBuf>,
    /// ssh, localhost.run: extra `-o KEY=VALUE` options.
    pub ssh_options: Vec<String>,
    /// The executable of cloudflared, ngrok or ssh [default: found on PATH].
    pub binary: Option<PathBuf>,
    /// ngrok: the authtoken (passed in ngrok's environment, never on its command line).
    pub ngrok_authtoken: Option<Secret>,
    /// custom: the command line, with `{port}` for the receiver's port.
    pub command: Option<String>,
    /// custom: a regex whose first match (or first capture group) in the command's output is
    /// the public URL.
    pub url_regex: Option<String>,
    /// How long a start may take before it counts as failed [default: 30s].
    pub start_timeout: Option<Duration>,
}

impl TunnelOptions {
    /// `other`'s settings where it has one, ours elsewhere (CLI flags over the file).
    pub fn overlay(mut self, other: TunnelOptions) -> Self {
        macro_rules! take {
            ($($field:ident),*) => { $( if other.$field.is_some() { self.$field = other.$field; } )* };
        }
        take!(
            provider,
            bore_server,
            bore_secret,
            ssh,
            remote_port,
            identity,
            binary,
            ngrok_authtoken,
            command,
            url_regex,
            start_timeout
        );
        self.ssh_options.extend(other.ssh_options);
        self
    }

    /// The chosen provider.
    pub fn kind(&self) -> TunnelKind {
        self.provider.unwrap_or(TunnelKind::LocalhostRun)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTunnel {
    #[serde(default)]
    provider: Option<TunnelKind>,
    #[serde(default)]
    bore_server: Option<String>,
    #[serde(default)]
    bore_secret: Option<String>,
    #[serde(default)]
    ssh: Option<String>,
    #[serde(default)]
    remote_port: Option<u16>,
    #[serde(default)]
    identity: Option<PathBuf>,
    #[serde(default)]
    ssh_options: Vec<String>,
    #[serde(default)]
    binary: Option<PathBuf>,
    #[serde(default)]
    ngrok_authtoken: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    url_regex: Option<String>,
    #[serde(default)]
    start_timeout: Option<String>,
}

impl RawTunnel {
    pub(super) fn resolve(
        self,
        at: &str,
        env: EnvLookup<'_>,
    ) -> Result<TunnelOptions, ConfigError> {
        let secret = |v: &str| resolve_secret(v, at, "[tunnel]", env).map(Secret::new);
        Ok(TunnelOptions {
            provider: self.provider,
            bore_server: self.bore_server,
            bore_secret: self.bore_secret.as_deref().map(secret).transpose()?,
            ssh: self.ssh,
            remote_port: self.remote_port,
            identity: self.identity,
            ssh_options: self.ssh_options,
            binary: self.binary,
            ngrok_authtoken: self.ngrok_authtoken.as_deref().map(secret).transpose()?,
            command: self.command,
            url_regex: self.url_regex,
            start_timeout: self
                .start_timeout
                .map(|s| {
                    parse_duration(&s).map_err(|e| {
                        ConfigError::invalid(at, format!("[tunnel] start_timeout: {e}"))
                    })
                })
                .transpose()?,
        })
    }
}
