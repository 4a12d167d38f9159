//! Harness: `hooklab listen` as a child process (JSON lines on a channel), the developer's app
//! as a tiny HTTP/1.1 server that records what it gets and answers as told, and helpers to run
//! the other CLI commands against the same database.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_hooklab");
pub(crate) const SECRET: &str = "whsec_forward_e2e";
/// Long enough for a loaded CI machine, short enough to fail fast.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// A running `hooklab listen --json`; every stdout line after the ready one arrives on `lines`.
pub(crate) struct Listen {
    child: Child,
    pub(crate) addr: String,
    lines: mpsc::Receiver<String>,
}

impl Listen {
    pub(crate) fn start(db: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(["listen", "--json", "--port", "0", "--db"])
            .arg(db)
            .args(["--source", &format!("pay=stripe:{SECRET}")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("hooklab listen starts");
        let lines = stdout_lines(&mut child);
        let ready = lines.recv_timeout(PATIENCE).expect("a ready line");
        let ready: serde_json::Value = serde_json::from_str(&ready).expect("JSON");
        let addr = ready["ready"]["receiver"]
            .as_str()
            .expect("ready.receiver")
            .trim_start_matches("http://")
            .to_string();
        Self { child, addr, lines }
    }

    /// The next printed line that is a JSON object with `"kind": kind`.
    pub(crate) fn next_kind(&self, kind: &str) -> serde_json::Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{kind}` line in time"));
            let value: serde_json::Value = serde_json::from_str(&line).expect("JSON lines");
            if value["kind"] == kind {
                return value;
            }
        }
    }

    /// SIGKILL: no shutdown, no drain, nothing finished.
    pub(crate) fn sigkill(mut self) {
        self.child.kill().expect("SIGKILL the listener");
        self.child.wait().expect("reap it");
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child's stdout, line by line, on a channel (read on a thread so the pipe never fills).
pub(crate) fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    lines
}

/// How the app answers the next requests.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    Status(u16),
    /// Never answers.
    Hold,
}

/// One request the app received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

/// The developer's app: a minimal HTTP/1.1 server (one request per connection).
#[derive(Clone)]
pub(crate) struct App {
    pub(crate) url: String,
    answer: Arc<Mutex<Answer>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl App {
    pub(crate) async fn start(answer: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the app");
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let app = Self {
            url,
            answer: Arc::new(Mutex::new(answer)),
            seen: Arc::new(Mutex::new(Vec::new())),
        };
        let serving = app.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serving.clone().serve(stream));
            }
        });
        app
    }

    async fn serve(self, mut stream: TcpStream) {
        let mut buf = Vec::new();
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = buf[head_end..head_end + length].to_vec();
        let answer = *self.answer.lock().unwrap();
        self.seen.lock().unwrap().push(Seen { head, body });
        match answer {
            Answer::Status(status) => {
                let response = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
                let _ = stream.write_all(response.as_bytes()).await;
            }
            Answer::Hold => {
                let mut rest = Vec::new();
                let _ = stream.read_to_end(&mut rest).await; // until the caller hangs up
            }
        }
    }

    pub(crate) fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub(crate) async fn wait_for_hits(&self, n: usize) {
        wait_until(&format!("the app gets {n} request(s)"), || {
            self.seen().len() >= n
        })
        .await;
    }
}

/// Polls `done` every 20 ms until it holds (panics after [`PATIENCE`]).
pub(crate) async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `hooklab ARGS… --db DB`.
pub(crate) fn cli(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("hooklab runs")
}

/// `hooklab ARGS… --db DB --json`, parsed.
pub(crate) fn cli_json(db: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = cli(db, &all);
    assert!(
        out.status.success(),
        "hooklab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// The status of the key `key` (from `hooklab keys --json`).
pub(crate) fn key_status(db: &Path, key: &str) -> Option<String> {
    let keys = cli_json(db, &["keys"]);
    keys.as_array()?
        .iter()
        .find(|k| k["key"] == key)
        .and_then(|k| k["status"].as_str())
        .map(str::to_string)
}

/// A raw request to `/pay` carrying `body`, signed now by `hooklab sign`.
pub(crate) fn signed_request(addr: &str, body: &str) -> Vec<u8> {
    let signed = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            "stripe",
            "--secret",
            SECRET,
            "--body",
            body,
        ])
        .output()
        .expect("hooklab sign runs");
    let header = String::from_utf8(signed.stdout).expect("a header line");
    let mut request = format!(
        "POST /pay HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{}\r\nContent-Length: {}\r\n\r\n",
        header.trim(),
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

/// Sends one request and returns the response's status.
pub(crate) async fn send(addr: &str, request: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A database path in a fresh temp dir (kept alive by the returned guard).
pub(crate) fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("hooklab.db");
    (dir, db)
}
