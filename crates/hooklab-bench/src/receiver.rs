//! Starting and stopping the receiver under test, each in its own process.
//!
//! Both print `{"ready":{"receiver":"http://127.0.0.1:PORT"}}` as their first stdout line.
//! Stdout goes to a file, not a pipe: `hooklab listen --json` prints a line per delivery, and a
//! pipe nobody drains would stall it (draining it here would steal CPU from the measurement).

use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The secret both the source and the load generator use.
pub(crate) const STRIPE_SECRET: &str = "whsec_hooklab_bench_0123456789abcdef";

/// Where and how `hooklab listen` forwards.
pub(crate) struct Forward {
    /// The `--forward-to` URL.
    pub(crate) url: String,
    /// `--concurrency` (hooklab's default when `None`).
    pub(crate) concurrency: Option<usize>,
}

pub(crate) struct Receiver {
    pub(crate) addr: SocketAddr,
    child: Child,
    /// Holds the database and the captured stdout/stderr; removed on drop.
    _dir: tempfile::TempDir,
}

impl Receiver {
    /// The bare axum server: this binary re-executed as `bare-server`.
    pub(crate) fn bare() -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut cmd = Command::new(exe);
        cmd.args(["bare-server", "--port", "0"]);
        Self::start(cmd, "bare axum server")
    }

    /// The developer app of the pipeline benchmark: this binary re-executed as `app-server`.
    pub(crate) fn app() -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut cmd = Command::new(exe);
        cmd.args(["app-server", "--port", "0"]);
        Self::start(cmd, "developer app")
    }

    /// `hooklab listen` on a fresh SQLite file with one Stripe source; with `forward`, every
    /// verified delivery is also forwarded there (`--forward-to`).
    pub(crate) fn hooklab(bin: &Path, forward: Option<&Forward>) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let mut cmd = Command::new(bin);
        cmd.arg("listen")
            .arg("--json")
            .args(["--host", "127.0.0.1", "--port", "0"])
            .arg("--db")
            .arg(dir.path().join("bench.db"))
            .arg("--source")
            .arg(format!("stripe=stripe:{STRIPE_SECRET}"));
        if let Some(forward) = forward {
            cmd.arg("--forward-to").arg(&forward.url);
            if let Some(n) = forward.concurrency {
                cmd.arg("--concurrency").arg(n.to_string());
            }
        }
        Self::start_in(cmd, dir, "hooklab listen")
    }

    fn start(cmd: Command, what: &str) -> anyhow::Result<Self> {
        Self::start_in(cmd, tempfile::tempdir()?, what)
    }

    fn start_in(mut cmd: Command, dir: tempfile::TempDir, what: &str) -> anyhow::Result<Self> {
        let out_path = dir.path().join("stdout");
        let err_path = dir.path().join("stderr");
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path)?)
            .stderr(std::fs::File::create(&err_path)?)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            );
        let mut child = cmd.spawn().with_context(|| format!("starting {what}"))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = std::fs::read_to_string(&out_path).unwrap_or_default();
            if let Some(line) = out.lines().next().filter(|_| out.contains('\n')) {
                let addr = ready_addr(line)
                    .with_context(|| format!("{what} printed an unexpected first line: {line}"))?;
                return Ok(Self {
                    addr,
                    child,
                    _dir: dir,
                });
            }
            if let Some(status) = child.try_wait()? {
                let err = std::fs::read_to_string(&err_path).unwrap_or_default();
                bail!("{what} exited with {status} before it was ready:\n{err}");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                bail!("{what} printed no ready line within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process (the database is a throwaway) and reaps it.
    pub(crate) fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in `{"ready":{"receiver":"http://127.0.0.1:PORT"}}`.
fn ready_addr(line: &str) -> anyhow::Result<SocketAddr> {
    let v: serde_json::Value = serde_json::from_str(line)?;
    let url = v["ready"]["receiver"]
        .as_str()
        .context("no ready.receiver in the first line")?;
    let hostport = url
        .strip_prefix("http://")
        .context("receiver URL is not http://")?
        .trim_end_matches('/');
    Ok(hostport.parse()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_ready_line() {
        let addr = super::ready_addr(r#"{"ready":{"receiver":"http://127.0.0.1:4242"}}"#).unwrap();
        assert_eq!(addr.port(), 4242);
    }
}
