//! A `hooklab listen --json` child whose stdout lines can be waited for, raw HTTP requests,
//! and process-table helpers (to prove that no tunnel process outlives Hooklab).

use crate::common::BIN;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a tunnel may take to come up (or down) in these tests.
pub(crate) const TUNNEL_WAIT: Duration = Duration::from_secs(45);

/// A running `hooklab listen --json --port 0 --db DIR/hooklab.db ARGS…`; killed on drop.
pub(crate) struct Listen {
    pub(crate) child: Child,
    pub(crate) port: u16,
    pub(crate) db: PathBuf,
    lines: mpsc::Receiver<String>,
    _dir: tempfile::TempDir,
}

impl Listen {
    pub(crate) fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("hooklab.db");
        let mut child = Command::new(BIN)
            .args(["listen", "--json", "--port", "0", "--db"])
            .arg(&db)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("hooklab listen starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let ready = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("listen prints a ready line");
        let ready: Value = serde_json::from_str(&ready).expect("the ready line is JSON");
        let port = ready["ready"]["receiver"]
            .as_str()
            .expect("ready.receiver")
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Self {
            child,
            port,
            db,
            lines,
            _dir: dir,
        }
    }

    /// The next stdout line that satisfies `wanted`, skipping others; panics after `within`.
    pub(crate) fn wait_for(
        &self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(_) => panic!("no {what} within {within:?}; lines seen: {seen:#?}"),
            };
            let value: Value = serde_json::from_str(&line).expect("listen --json prints JSON");
            if wanted(&value) {
                return value;
            }
            seen.push(line);
        }
    }

    /// Waits for `{"tunnel": {"status": STATUS, …}}`; returns the inner object.
    pub(crate) fn tunnel(&self, status: &str) -> Value {
        let line = self.wait_for(&format!("a tunnel `{status}` line"), TUNNEL_WAIT, |v| {
            v["tunnel"]["status"] == status
        });
        line["tunnel"].clone()
    }

    /// Waits for the next recorded delivery; returns its line.
    pub(crate) fn delivery(&self) -> Value {
        self.wait_for("a delivery line", Duration::from_secs(30), |v| {
            v.get("id").is_some() && v.get("verdict").is_some()
        })
    }

    /// The discovery file `listen` wrote beside the database.
    pub(crate) fn discovery(&self) -> Value {
        let path = self.discovery_path();
        let text = std::fs::read_to_string(&path).expect("the discovery file exists");
        serde_json::from_str(&text).unwrap()
    }

    pub(crate) fn discovery_path(&self) -> PathBuf {
        let mut name = self.db.clone().into_os_string();
        name.push(".control.json");
        PathBuf::from(name)
    }

    /// `hooklab ARGS… --db DB`: stdout bytes.
    pub(crate) fn cli(&self, args: &[&str]) -> Vec<u8> {
        let out = Command::new(BIN)
            .args(args)
            .arg("--db")
            .arg(&self.db)
            .output()
            .unwrap();
        out.stdout
    }

    /// SIGTERM, then the exit status (within 20 s).
    pub(crate) fn terminate(&mut self) -> ExitStatus {
        signal(self.child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "listen did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kill -SIGNAL pid`.
pub(crate) fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status();
}

/// Sends one HTTP/1.1 request to `addr` (`host:port`); returns (status, head and body).
pub(crate) fn request(addr: &str, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    s.write_all(&req).unwrap();
    let mut response = Vec::new();
    s.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer from {addr}: {text:?}"));
    (status, text)
}

/// `host:port` of an `http://host:port` URL.
pub(crate) fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches('/')
}

/// Every descendant of `pid` (children, their children, …), from /proc.
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let after = stat.rsplit(')').next().unwrap_or("");
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent_of.push((child, ppid));
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for &(child, parent) in &parent_of {
            if parent == p && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// The process runs (a zombie runs nothing).
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

/// Waits until none of `pids` runs.
pub(crate) fn all_gone(pids: &[u32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            Instant::now() < deadline,
            "{what}: still running: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Stripe-signed POST of `body` to `http://{addr}{path}`; returns the status.
pub(crate) fn post_stripe(addr: &str, path: &str, secret: &str, body: &str) -> u16 {
    let header = crate::common::stripe_signature(secret, body);
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{header}"
    );
    request(addr, &head, body.as_bytes()).0
}

/// Checks that delivery `id` holds `body` byte-exact with verdict `valid`.
pub(crate) fn assert_recorded_valid(listen: &Listen, id: i64, body: &[u8]) {
    let raw = listen.cli(&["events", "show", &id.to_string(), "--raw"]);
    assert_eq!(
        raw, body,
        "the body is recorded byte-exact through the tunnel"
    );
    let shown: Value =
        serde_json::from_slice(&listen.cli(&["events", "show", &id.to_string(), "--json"]))
            .expect("events show --json");
    assert_eq!(
        shown["verdict"]["verdict"], "valid",
        "the signature verifies: {shown:#}"
    );
}
