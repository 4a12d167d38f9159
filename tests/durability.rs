//! Durability: "no acknowledged event is ever lost" (BRIEF.md, Promises).
//!
//! Starts the real `hooklab listen` on a SQLite file, sends thousands of distinct, validly
//! Stripe-signed deliveries over many keep-alive connections at once, SIGKILLs the receiver
//! mid-stream, then reopens the database through the CLI (`events list`, `events show --raw`)
//! and checks that every delivery that got a 2xx is there, byte for byte. It also checks that
//! nothing torn or foreign was stored, and that the receiver restarts on the crashed file and
//! keeps recording.
//!
//! No timing is asserted: the kill lands after a number of acknowledgements, not after a delay.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SECRET: &str = "whsec_test";
const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

/// A receiver process and where its stderr goes (shown when something fails).
struct Listener {
    child: Child,
    addr: SocketAddr,
    stderr: PathBuf,
}

impl Listener {
    /// `hooklab listen --json --port 0` on `db`; waits for the `{"ready": …}` line and drains
    /// the per-delivery lines after it on a thread so the pipe never fills.
    fn start(db: &Path, dir: &Path) -> Self {
        let stderr = dir.join("listen.stderr");
        let mut child = Command::new(BIN)
            .args([
                "listen",
                "--json",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--db",
            ])
            .arg(db)
            .args(["--source", &format!("stripe=stripe:{SECRET}")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("create stderr file"))
            .spawn()
            .expect("hooklab listen starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            for _ in lines {}
        });
        let first = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "hooklab listen printed no ready line; stderr:\n{}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
        };
        let ready: serde_json::Value =
            serde_json::from_str(&first).unwrap_or_else(|e| panic!("ready line {first:?}: {e}"));
        let url = ready["ready"]["receiver"]
            .as_str()
            .unwrap_or_else(|| panic!("the first line announces the receiver: {first}"));
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap_or_else(|e| panic!("receiver URL {url}: {e}"));
        Self {
            child,
            addr,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGKILL: no shutdown hook, no flush, no chance to finish a transaction.
    fn sigkill(mut self) {
        self.child.kill().expect("SIGKILL the receiver");
        self.child.wait().expect("reap the receiver");
    }
}

/// One delivery to send: its id (unique, also inside the body) and the exact bytes.
struct Delivery {
    event_id: String,
    body: Vec<u8>,
}

/// `count` distinct Stripe events of assorted sizes and shapes: compact and pretty-printed,
/// CRLF between tokens, non-ASCII, escaped control characters, a trailing newline or not.
fn deliveries(tag: &str, count: usize, sizes: &[usize]) -> Vec<Delivery> {
    (0..count)
        .map(|i| {
            let event_id = format!("evt_{tag}_{i:06}");
            let size = sizes[i % sizes.len()];
            let sep = match i % 3 {
                0 => "",
                1 => "\n  ",
                _ => "\r\n\t",
            };
            let mut body = format!(
                "{{{sep}\"id\": \"{event_id}\",{sep}\"object\":\"event\",{sep}\
                 \"type\":\"payment_intent.succeeded\",{sep}\"created\":{created},{sep}\
                 \"data\":{{\"object\":{{\"id\":\"pi_{i}\",\"amount\":{amount},\
                 \"description\":\"Caf\u{e9} \u{2615} \\u001B[0m \\/ pago \u{e0} vista\",\"pad\":\"",
                created = 1_700_000_000 + i,
                amount = 100 + i * 7,
            )
            .into_bytes();
            let filler = b"0123456789abcdefghijklmnopqrstuvwxyz";
            while body.len() + 8 < size {
                body.push(filler[(body.len() + i) % filler.len()]);
            }
            body.extend_from_slice(b"\"}}}");
            if i % 2 == 0 {
                body.push(b'\n');
            }
            Delivery { event_id, body }
        })
        .collect()
}

fn stripe_signature(body: &[u8]) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

fn request_bytes(addr: SocketAddr, d: &Delivery) -> Vec<u8> {
    let mut out = format!(
        "POST /stripe HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json; charset=utf-8\r\n\
         Stripe-Signature: {}\r\nContent-Length: {}\r\n\r\n",
        stripe_signature(&d.body),
        d.body.len()
    )
    .into_bytes();
    out.extend_from_slice(&d.body);
    out
}

/// What the senders saw.
#[derive(Default)]
struct Outcome {
    /// Indices of deliveries answered with a 2xx.
    acked: Vec<usize>,
    /// (index, status) of deliveries answered with anything else.
    rejected: Vec<(usize, u16)>,
}

/// Sends `deliveries` over `connections` keep-alive connections, each taking the next unsent
/// one. With `kill_after = Some((n, tx))`, `tx` fires once the n-th 2xx arrives. A connection
/// stops at its first I/O error (the receiver is gone).
async fn send_all(
    addr: SocketAddr,
    deliveries: Arc<Vec<Delivery>>,
    connections: usize,
    kill_after: Option<(usize, tokio::sync::oneshot::Sender<()>)>,
) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let acks = Arc::new(AtomicUsize::new(0));
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let (threshold, kill) = match kill_after {
        Some((n, tx)) => (n, Some(tx)),
        None => (usize::MAX, None),
    };
    let kill = Arc::new(Mutex::new(kill));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (next, acks, outcome, kill, deliveries) = (
            next.clone(),
            acks.clone(),
            outcome.clone(),
            kill.clone(),
            deliveries.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let Ok(mut stream) = TcpStream::connect(addr).await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            let mut buf = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= deliveries.len() {
                    return;
                }
                let req = request_bytes(addr, &deliveries[i]);
                if stream.write_all(&req).await.is_err() {
                    return;
                }
                let Ok(status) = read_status(&mut stream, &mut buf).await else {
                    return;
                };
                if (200..300).contains(&status) {
                    outcome.lock().unwrap().acked.push(i);
                    if acks.fetch_add(1, Ordering::SeqCst) + 1 == threshold {
                        if let Some(tx) = kill.lock().unwrap().take() {
                            let _ = tx.send(());
                        }
                    }
                } else {
                    outcome.lock().unwrap().rejected.push((i, status));
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("sender task panicked");
    }
    Arc::try_unwrap(outcome)
        .ok()
        .expect("all senders done")
        .into_inner()
        .unwrap()
}

/// Reads one HTTP/1.1 response (Content-Length or chunked) and returns its status.
async fn read_status(s: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<u16> {
    async fn fill(s: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
        let mut chunk = [0u8; 8192];
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
    fn find(h: &[u8], n: &[u8]) -> Option<usize> {
        h.windows(n.len()).position(|w| w == n)
    }
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        fill(s, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("status line"))?;
    let header = |name: &str| {
        head.split("\r\n").find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name)
                .then(|| v.trim().to_ascii_lowercase())
        })
    };
    let end = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        let mut pos = head_end;
        loop {
            let line_end = loop {
                if let Some(i) = find(&buf[pos..], b"\r\n") {
                    break pos + i;
                }
                fill(s, buf).await?;
            };
            let size = usize::from_str_radix(
                String::from_utf8_lossy(&buf[pos..line_end])
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim(),
                16,
            )
            .map_err(|_| bad("chunk size"))?;
            pos = line_end + 2;
            while buf.len() < pos + size + 2 {
                fill(s, buf).await?;
            }
            pos += size + 2;
            if size == 0 {
                break pos;
            }
        }
    } else {
        let len: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            fill(s, buf).await?;
        }
        head_end + len
    };
    buf.drain(..end);
    Ok(status)
}

/// `hooklab events list --json` on `db`: (row id, row) for every stored delivery.
fn list_events(db: &Path) -> Vec<(String, serde_json::Value)> {
    let out = Command::new(BIN)
        .args(["events", "list", "--json", "--limit", "1000000", "--db"])
        .arg(db)
        .output()
        .expect("run hooklab events list");
    assert!(
        out.status.success(),
        "events list must open a database left by a SIGKILL: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("events list --json prints a JSON array");
    rows.into_iter()
        .map(|row| {
            let id = match &row["id"] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (id, row)
        })
        .collect()
}

/// The exact stored body of every row, fetched with `events show ID --raw` (4 at a time).
fn raw_bodies(db: &Path, ids: &[String]) -> HashMap<String, Vec<u8>> {
    let bodies = Mutex::new(HashMap::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(id) = ids.get(i) else { return };
                    let out = Command::new(BIN)
                        .args(["events", "show", id, "--raw", "--db"])
                        .arg(db)
                        .output()
                        .expect("run hooklab events show");
                    assert!(
                        out.status.success(),
                        "events show {id} --raw fails: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    bodies.lock().unwrap().insert(id.clone(), out.stdout);
                }
            });
        }
    });
    bodies.into_inner().unwrap()
}

/// The `"id": "evt_…"` our bodies start with.
fn body_event_id(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let start = text.find("\"id\": \"")? + 7;
    let len = text[start..].find('"')?;
    Some(text[start..start + len].to_string())
}

/// The whole scenario: load, SIGKILL after `kill_after` acknowledgements, read back, restart.
async fn crash_mid_stream(
    tag: &str,
    total: usize,
    connections: usize,
    kill_after: usize,
    sizes: &[usize],
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("h.db");
    let sent = Arc::new(deliveries(tag, total, sizes));

    let listener = Listener::start(&db, dir.path());
    let (kill_tx, kill_rx) = tokio::sync::oneshot::channel();
    let sender = tokio::spawn(send_all(
        listener.addr,
        sent.clone(),
        connections,
        Some((kill_after, kill_tx)),
    ));
    let killed = tokio::time::timeout(Duration::from_secs(300), kill_rx).await;
    let stderr = listener.stderr();
    listener.sigkill();
    assert!(
        matches!(killed, Ok(Ok(()))),
        "the receiver never acknowledged {kill_after} deliveries; stderr:\n{stderr}"
    );
    let outcome = tokio::time::timeout(Duration::from_secs(120), sender)
        .await
        .expect("senders stop once the receiver is gone")
        .expect("sender panicked");

    assert!(
        outcome.rejected.is_empty(),
        "every delivery was validly signed, so none may be refused: {:?}",
        &outcome.rejected[..outcome.rejected.len().min(10)]
    );
    assert!(
        outcome.acked.len() >= kill_after,
        "the kill fired only after {kill_after} acknowledgements"
    );
    assert!(
        outcome.acked.len() < total,
        "the kill must land mid-stream (some deliveries unanswered) or it proves nothing"
    );

    // Reopen through the CLI and read every stored delivery back.
    let rows = list_events(&db);
    let ids: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
    let bodies = raw_bodies(&db, &ids);
    let by_event: HashMap<&str, usize> = sent
        .iter()
        .enumerate()
        .map(|(i, d)| (d.event_id.as_str(), i))
        .collect();
    let mut stored: HashMap<usize, &str> = HashMap::new();
    for (id, row) in &rows {
        let body = &bodies[id];
        let event_id = body_event_id(body)
            .unwrap_or_else(|| panic!("stored row {id} holds a body we never sent (torn?)"));
        let index = *by_event
            .get(event_id.as_str())
            .unwrap_or_else(|| panic!("stored row {id} has unknown event id {event_id}"));
        assert_eq!(
            body, &sent[index].body,
            "row {id} ({event_id}) must be byte-exact: no torn or re-encoded write"
        );
        assert!(
            stored.insert(index, id.as_str()).is_none(),
            "{event_id} was sent once and must be stored once"
        );
        assert_eq!(row["source"], "stripe", "row {id} was sent to /stripe");
        assert_eq!(row["method"], "POST", "row {id} was a POST");
        assert_eq!(
            row["verdict"], "valid",
            "row {id} was validly signed with the source's secret: {row}"
        );
        if let Some(listed) = row["event_id"].as_str() {
            assert_eq!(
                listed, event_id,
                "events list reports the body's Stripe event id"
            );
        }
    }
    eprintln!(
        "{tag}: sent {total}, acknowledged {} before the kill, {} stored (acknowledged or not)",
        outcome.acked.len(),
        rows.len()
    );
    let lost: Vec<&str> = outcome
        .acked
        .iter()
        .filter(|i| !stored.contains_key(i))
        .map(|&i| sent[i].event_id.as_str())
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged deliveries are missing after SIGKILL (a 2xx promises a durable \
         commit), e.g. {:?}",
        lost.len(),
        outcome.acked.len(),
        &lost[..lost.len().min(10)]
    );

    // The crashed file is usable: a new receiver on it records new deliveries next to the old.
    let listener = Listener::start(&db, dir.path());
    let more = Arc::new(deliveries(&format!("{tag}after"), 20, &[300, 2048]));
    let after = send_all(listener.addr, more.clone(), 4, None).await;
    let stderr = listener.stderr();
    listener.sigkill();
    assert_eq!(
        after.acked.len(),
        more.len(),
        "a receiver restarted on the crashed database acknowledges every delivery; \
         rejected {:?}; stderr:\n{stderr}",
        after.rejected
    );
    let rows_after = list_events(&db);
    assert_eq!(
        rows_after.len(),
        rows.len() + more.len(),
        "the restart keeps every earlier row and adds the new ones"
    );
    let old: HashSet<&String> = ids.iter().collect();
    let new_ids: Vec<String> = rows_after
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| !old.contains(id))
        .collect();
    let new_bodies = raw_bodies(&db, &new_ids);
    let mut new_sent: Vec<&[u8]> = more.iter().map(|d| d.body.as_slice()).collect();
    let mut new_got: Vec<&[u8]> = new_bodies.values().map(Vec::as_slice).collect();
    new_sent.sort();
    new_got.sort();
    assert_eq!(
        new_got, new_sent,
        "the deliveries after the restart are stored byte-exact"
    );
}

/// 3000 ~1 KiB deliveries over 64 connections, killed after 1000 acknowledgements.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_stream_loses_no_acknowledged_delivery() {
    crash_mid_stream("many", 3000, 64, 1000, &[200, 700, 1024, 1500, 4096]).await;
}

/// 400 large deliveries (16 KiB to 512 KiB) over 16 connections, killed after 120.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_stream_with_large_bodies_loses_nothing() {
    crash_mid_stream(
        "large",
        400,
        16,
        120,
        &[16 << 10, 100 << 10, 512 << 10, 40_000],
    )
    .await;
}
