//! Shared by the end-to-end tests: a `hooklab listen --json` child process on a free port,
//! and signed deliveries sent to it over a plain socket.

#![allow(dead_code)] // each test binary uses its own subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

/// A running `hooklab listen --json --port 0 … --db DB`; killed on drop.
pub(crate) struct Listener {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Listener {
    /// Starts it with `args` and waits for its `{"ready": …}` line; later lines are drained.
    pub(crate) fn start(args: &[&str], db: &Path) -> Self {
        let mut child = Command::new(BIN)
            .args(["listen", "--json", "--port", "0"])
            .args(args)
            .arg("--db")
            .arg(db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("hooklab listen starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready: serde_json::Value =
            serde_json::from_str(&lines.next().unwrap().unwrap()).expect("a JSON ready line");
        let port = ready["ready"]["receiver"]
            .as_str()
            .expect("ready.receiver")
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        std::thread::spawn(move || for _ in lines {});
        Self { child, port }
    }

    /// `host:port` of the receiver.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `Stripe-Signature: …` header line `hooklab sign` makes for `body`.
pub(crate) fn stripe_signature(secret: &str, body: &str) -> String {
    let signed = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            "stripe",
            "--secret",
            secret,
            "--body",
            body,
        ])
        .output()
        .expect("hooklab sign runs");
    String::from_utf8(signed.stdout).unwrap().trim().to_string()
}

/// POSTs `body` to `path` with a Stripe signature; returns the whole response.
pub(crate) fn post_stripe(port: u16, path: &str, secret: &str, body: &str) -> String {
    let header = stripe_signature(secret, body);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{header}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response
}

/// A Stripe PaymentIntent event.
pub(crate) fn payment_intent_event(id: &str, kind: &str, created: i64, pi: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"{kind}","created":{created},"data":{{"object":{{"id":"{pi}","object":"payment_intent"}}}}}}"#
    )
}

/// `hooklab ARGS… --db DB` → stdout parsed as JSON (`Null` when it is not JSON).
pub(crate) fn json_of(args: &[&str], db: &Path) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// `hooklab ARGS… --db DB`, which must succeed (else the test fails with its stderr) → stdout
/// parsed as JSON.
pub(crate) fn ok_json(args: &[&str], db: &Path) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hooklab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Unix seconds now.
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
