//! A tunnel's child process, from spawn to reaping: its own process group, every output line
//! scanned for the public URL, the group killed when the leader exits, on stop, and on drop
//! (so a helper it started, e.g. a shell's background job, cannot outlive it).
//!
//! Hooklab stops its tunnel on Ctrl-C and SIGTERM (see [`crate::runtime::shutdown_signal`]);
//! only SIGKILL of Hooklab itself leaves the child running, as it would any program's.

use super::parse::PORT;
use super::{ProcessSpec, Session, Update};
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::sync::mpsc;

/// How many recent output lines are kept to explain a failure.
const RECENT_LINES: usize = 6;

/// Starts `spec` with `{port}` replaced by `port`.
pub(crate) fn spawn(spec: &ProcessSpec, port: u16) -> Result<Session, String> {
    let port = port.to_string();
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(spec.args.iter().map(|a| a.replace(PORT, &port)))
        .stdin(if spec.hold_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in &spec.env {
        cmd.env(name, value.expose());
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let program = spec.program.display().to_string();
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "`{program}` was not found; install it or give its path (--tunnel-binary, or \
             `binary` in [tunnel])"
        ),
        _ => format!("cannot start `{program}`: {e}"),
    })?;
    let group = ProcessGroup {
        id: child.id(),
        retired: Arc::default(),
    };
    let (lines_tx, mut lines) = mpsc::channel::<String>(256);
    if let Some(out) = child.stdout.take() {
        tokio::spawn(read_lines(out, lines_tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(read_lines(err, lines_tx));
    }
    let recent = Arc::new(Mutex::new(VecDeque::new()));
    let (updates_tx, updates) = mpsc::channel(16);
    let parser = spec.parser.clone();
    // What the child prints is logged, kept for `down` reasons and printed: never a secret
    // we handed it (an authtoken echoed in an error message).
    let secrets: Vec<String> = spec
        .env
        .iter()
        .map(|(_, secret)| secret.expose().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let recent_for_task = Arc::clone(&recent);
    let group_for_task = group.share();
    let task = tokio::spawn(async move {
        // Held open for the child's lifetime (localhost.run ends the session on EOF).
        let _stdin = child.stdin.take();
        let mut last_url = None;
        let mut scan = |line: String| -> Option<String> {
            let line = secrets
                .iter()
                .fold(line, |line, secret| line.replace(secret.as_str(), "***"));
            tracing::debug!(target: "hooklab::tunnel", "{program}: {line}");
            remember(&recent_for_task, &line);
            let url = parser.scan(&line)?;
            (last_url.as_ref() != Some(&url)).then(|| {
                last_url = Some(url.clone());
                url
            })
        };
        let status = loop {
            tokio::select! {
                line = lines.recv() => match line {
                    Some(line) => {
                        if let Some(url) = scan(line) {
                            let _ = updates_tx.send(Update::Url(url)).await;
                        }
                    }
                    // Both pipes closed: the child is exiting (or closed them itself).
                    None => break child.wait().await,
                },
                status = child.wait() => break status,
            }
        };
        // Lines already written before the exit still explain it.
        let drain = tokio::time::sleep(Duration::from_millis(100));
        tokio::pin!(drain);
        loop {
            tokio::select! {
                line = lines.recv() => match line {
                    Some(line) => { let _ = scan(line); }
                    None => break,
                },
                () = &mut drain => break,
            }
        }
        // The leader is gone; its helpers go with it. Then the group id is retired: once
        // reaped, the leader's pid may be reused, and must not be signalled again.
        group_for_task.kill();
        group_for_task.retire();
        let status = match status {
            Ok(s) => s.to_string(),
            Err(e) => format!("could not be waited for: {e}"),
        };
        let reason = match last_lines(&recent_for_task) {
            Some(said) => format!("{program} {status}: {said}"),
            None => format!("{program} {status}"),
        };
        let _ = updates_tx.send(Update::Ended(reason)).await;
    });
    Ok(Session {
        updates,
        recent,
        group: Some(group),
        _task: super::AbortOnDrop(task),
    })
}

async fn read_lines(from: impl AsyncRead + Unpin, to: mpsc::Sender<String>) {
    let mut reader = BufReader::new(from);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']).to_string();
                if to.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Keeps the last few meaningful lines (not ssh's `debug1:` chatter).
fn remember(recent: &Mutex<VecDeque<String>>, line: &str) {
    let line = line.trim();
    if line.is_empty() || line.starts_with("debug") {
        return;
    }
    if let Ok(mut recent) = recent.lock() {
        if recent.len() == RECENT_LINES {
            recent.pop_front();
        }
        recent.push_back(line.chars().take(300).collect());
    }
}

/// The last lines, joined, to say why a child failed.
pub(crate) fn last_lines(recent: &Mutex<VecDeque<String>>) -> Option<String> {
    let recent = recent.lock().ok()?;
    let lines: Vec<&str> = recent
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(String::as_str)
        .collect();
    (!lines.is_empty()).then(|| lines.join(" | "))
}

/// A child's process group (its id is the leader's pid); killed with SIGKILL on drop, until
/// retired.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: Option<u32>,
    /// Set once the leader was reaped and the group killed: signal it no more.
    retired: Arc<std::sync::atomic::AtomicBool>,
}

impl ProcessGroup {
    /// Another handle on the same group (retiring one retires both).
    fn share(&self) -> Self {
        Self {
            id: self.id,
            retired: Arc::clone(&self.retired),
        }
    }

    fn retire(&self) {
        self.retired
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Asks every process of the group to stop (SIGTERM).
    pub(crate) fn terminate(&self) {
        self.signal(false);
    }

    /// Kills every process of the group (SIGKILL).
    pub(crate) fn kill(&self) {
        self.signal(true);
    }

    #[cfg(unix)]
    fn signal(&self, kill: bool) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if self.retired.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Some(id) = self.id.and_then(|id| i32::try_from(id).ok()) else {
            return;
        };
        let signal = if kill {
            Signal::SIGKILL
        } else {
            Signal::SIGTERM
        };
        // ESRCH (the group is already gone) is the expected case after an exit.
        let _ = killpg(Pid::from_raw(id), signal);
    }

    #[cfg(not(unix))]
    fn signal(&self, _kill: bool) {}
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
