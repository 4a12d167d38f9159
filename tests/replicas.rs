//! Production mode end to end: three `hooklab serve` processes (the real binary) on one
//! PostgreSQL database, the developer's app a real HTTP server counting what it gets.
//!
//! - 999 concurrent deliveries of one signed Stripe event, spread over the three: every one is
//!   acknowledged 2xx and the app gets the event exactly once.
//! - A replica SIGKILLed mid-run, holding leases on forwards in flight: every acknowledged
//!   event still reaches the app, the dead replica's leases expire and another replica
//!   completes those jobs, and no job is left ready or leased.
//!
//! - A replica's feed (its `--json` lines) shows the deliveries another replica recorded.
//!
//! The database is a fresh one on `HOOKLAB_TEST_DATABASE_URL`, or on a throwaway cluster this
//! test process starts (and that stops with it), created with `hooklab migrate`.

#[path = "forward/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;
use support::{Answer, App, BIN, PATIENCE, SECRET, signed_request, stdout_lines, wait_until};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

/// A running `hooklab serve --json`.
struct Serve {
    child: Child,
    addr: String,
    /// Stdout after the ready line, drained on a thread so the pipe never fills.
    lines: Receiver<String>,
}

impl Serve {
    fn start(url: &str, forward_to: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(["serve", "--json", "--port", "0", "--database", url])
            .args(["--source", &format!("pay=stripe:{SECRET}")])
            .args(["--forward-to", forward_to])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("hooklab serve starts");
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

    fn sigkill(&mut self) {
        self.child.kill().expect("SIGKILL the replica");
        self.child.wait().expect("reap it");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh database, migrated by `hooklab migrate`.
async fn database() -> String {
    let server = hooklab_postgres::cluster::test_server()
        .unwrap_or_else(|e| panic!("no PostgreSQL to test against: {e}"));
    let url = server.fresh_database().await.expect("a fresh database");
    let out = Command::new(BIN)
        .args(["migrate", "--database", &url])
        .output()
        .expect("hooklab migrate runs");
    assert!(
        out.status.success(),
        "hooklab migrate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(was 0)"),
        "a new database is migrated from version 0"
    );
    url
}

async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the test database");
    tokio::spawn(connection);
    client
}

async fn count(client: &tokio_postgres::Client, query: &str) -> i64 {
    // query_typed: one unnamed statement, so this works through a transaction-mode pooler too.
    client.query_typed_one(query, &[]).await.unwrap().get(0)
}

fn event(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"payment_intent.succeeded","data":{{"object":{{"id":"pi_{id}"}}}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_forward_one_event_exactly_once() {
    const COPIES: usize = 999;
    let url = database().await;
    let app = App::start(Answer::Status(200)).await;
    let replicas: Vec<Serve> = (0..3).map(|_| Serve::start(&url, &app.url, &[])).collect();
    let request = Arc::new(signed_request(&replicas[0].addr, &event("evt_once")));

    // Open every connection first (a third on each replica), then write all at once.
    let mut streams = Vec::with_capacity(COPIES);
    for i in 0..COPIES {
        let addr = &replicas[i % 3].addr;
        streams.push(TcpStream::connect(addr).await.expect("connect"));
    }
    let barrier = Arc::new(Barrier::new(COPIES));
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            let (barrier, request) = (Arc::clone(&barrier), Arc::clone(&request));
            tokio::spawn(async move {
                barrier.wait().await;
                stream.write_all(&request).await.unwrap();
                let mut response = Vec::new();
                stream.read_to_end(&mut response).await.unwrap();
                String::from_utf8_lossy(&response).to_string()
            })
        })
        .collect();
    for task in tasks {
        let response = task.await.unwrap();
        assert!(
            response.starts_with("HTTP/1.1 2"),
            "every copy is acknowledged by whichever replica got it: {response}"
        );
    }

    app.wait_for_hits(1).await;
    let db = sql(&url).await;
    let deadline = std::time::Instant::now() + PATIENCE;
    while count(&db, "SELECT count(*) FROM jobs WHERE state <> 'done'").await > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the job never finished"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every replica's worker looks at the outbox at least once a second: give a second
    // forward (if there were a second job) ample time to reach the app.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        app.seen().len(),
        1,
        "the developer's app gets the event exactly once across three replicas"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM deliveries").await, 999);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM deliveries WHERE duplicate_of IS NULL"
        )
        .await,
        1,
        "exactly one delivery is the first; the other 998 are its duplicates"
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM jobs").await,
        1,
        "exactly one job was enqueued across the replicas"
    );
    let key = db
        .query_typed_one("SELECT deliveries, status FROM idempotency_keys", &[])
        .await
        .unwrap();
    assert_eq!(
        key.get::<_, i64>(0),
        999,
        "every copy is counted on the key"
    );
    assert_eq!(key.get::<_, &str>(1), "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_run_loses_no_acknowledged_event_and_strands_no_job() {
    // Forwards time out after 2 s, so a lease lasts 4 s; retries come quickly.
    let fast = [
        "--forward-timeout",
        "2s",
        "--retry-schedule",
        "0.2s,0.2s,0.2s,0.2s,0.2s,0.2s,0.2s,0.2s,0.2s,0.2s",
    ];
    let url = database().await;
    // The app holds every request at first: forwards stay in flight, their leases held.
    let app = App::start(Answer::Hold).await;
    let mut replicas: Vec<Serve> = (0..3)
        .map(|_| Serve::start(&url, &app.url, &fast))
        .collect();
    let addrs: Vec<String> = replicas.iter().map(|r| r.addr.clone()).collect();
    let send_batch = |range: std::ops::Range<usize>| {
        range
            .map(|i| {
                let addr = addrs[i % 3].clone();
                let id = format!("evt_{i}");
                let request = signed_request(&addr, &event(&id));
                tokio::spawn(async move { (id, try_send(&addr, &request).await) })
            })
            .collect::<Vec<_>>()
    };

    let mut acknowledged = HashSet::new();
    for task in send_batch(0..150) {
        let (id, status) = task.await.unwrap();
        assert!((200..300).contains(&status), "{id} acknowledged: {status}");
        acknowledged.insert(id);
    }
    // Every worker slot of every replica (3 × 8) is holding a forward: replica 0 holds leases.
    wait_until("24 forwards are in flight", || app.seen().len() >= 24).await;
    let in_flight = tokio::spawn({
        let tasks = send_batch(150..300);
        async move {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        }
    });
    replicas[0].sigkill();
    app.answer(Answer::Status(200));
    for (id, status) in in_flight.await.unwrap() {
        if (200..300).contains(&status) {
            acknowledged.insert(id);
        }
    }
    assert!(
        acknowledged.len() >= 250,
        "the two live replicas acknowledge what they get ({} acknowledged)",
        acknowledged.len()
    );

    let delivered = |app: &App| -> HashSet<String> {
        app.seen()
            .iter()
            .filter_map(|s| {
                let v: serde_json::Value = serde_json::from_slice(&s.body).ok()?;
                Some(v["id"].as_str()?.to_string())
            })
            .collect()
    };
    wait_until("every acknowledged event reaches the app", || {
        acknowledged.is_subset(&delivered(&app))
    })
    .await;
    let db = sql(&url).await;
    let deadline = std::time::Instant::now() + PATIENCE;
    while count(
        &db,
        "SELECT count(*) FROM jobs WHERE state IN ('ready', 'leased')",
    )
    .await
        > 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "a job is stranded in ready or leased"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        count(&db, "SELECT count(*) FROM jobs WHERE state <> 'done'").await,
        0,
        "every job is done (none dead)"
    );
    let acked_ids: Vec<String> = acknowledged.iter().cloned().collect();
    let recorded = count_keys(&db, &acked_ids).await;
    assert_eq!(
        recorded,
        acknowledged.len() as i64,
        "every acknowledged event is recorded with its key completed"
    );
    let taken_over = count(
        &db,
        "SELECT count(*) FROM jobs j WHERE j.attempts > \
         (SELECT count(*) FROM attempts a WHERE a.job_id = j.id)",
    )
    .await;
    assert!(
        taken_over >= 1,
        "some job was leased by the killed replica (a lease with no recorded attempt) and then \
         completed by another replica after the lease expired"
    );
}

async fn count_keys(db: &tokio_postgres::Client, ids: &[String]) -> i64 {
    db.query_typed_one(
        "SELECT count(*) FROM idempotency_keys WHERE key = ANY($1) AND status = 'completed'",
        &[(&ids, tokio_postgres::types::Type::TEXT_ARRAY)],
    )
    .await
    .unwrap()
    .get(0)
}

/// Sends one request; the response's status, or 0 when the replica is gone (not acknowledged).
async fn try_send(addr: &str, request: &[u8]) -> u16 {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return 0;
    };
    if stream.write_all(request).await.is_err() {
        return 0;
    }
    let mut response = Vec::new();
    if stream.read_to_end(&mut response).await.is_err() {
        return 0;
    }
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_announces_what_another_replica_recorded() {
    let url = database().await;
    let app = App::start(Answer::Status(200)).await;
    let a = Serve::start(&url, &app.url, &[]);
    let b = Serve::start(&url, &app.url, &[]);
    let status = try_send(&a.addr, &signed_request(&a.addr, &event("evt_feed"))).await;
    assert_eq!(status, 200);
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = b
            .lines
            .recv_timeout(left)
            .expect("replica B prints the delivery replica A recorded");
        let value: serde_json::Value = serde_json::from_str(&line).expect("JSON lines");
        // Delivery lines are summaries (no `kind`); attempts and key changes have one.
        if value.get("kind").is_none() && value["event_id"] == "evt_feed" {
            assert_eq!(value["verdict"], "valid", "{value}");
            break;
        }
    }
    // Replica A announced its own delivery once, not again when its feed polled the database.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let own = a
        .lines
        .try_iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter(|v| v.get("kind").is_none() && v["event_id"] == "evt_feed")
        .count();
    assert_eq!(
        own, 1,
        "the receiving replica prints its delivery exactly once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_the_control_api_only_when_asked_and_it_reads_postgresql() {
    let url = database().await;
    let app = App::start(Answer::Status(200)).await;
    let dir = tempfile::tempdir().unwrap();
    let control_file = dir.path().join("serve.control.json");
    // Without --control-port: no control API, no file.
    let plain = Serve::start(&url, &app.url, &[]);
    assert_eq!(
        try_send(&plain.addr, &signed_request(&plain.addr, &event("evt_ctl"))).await,
        200
    );
    drop(plain);
    let file_arg = control_file.to_string_lossy().to_string();
    let serve = Serve::start(
        &url,
        &app.url,
        &["--control-port", "0", "--control-file", &file_arg],
    );
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&control_file).expect("the control file is written"))
            .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&control_file)
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "the token stays private");
    }
    let control = found["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .to_string();
    let token = found["token"].as_str().unwrap();
    let mut stream = TcpStream::connect(&control).await.unwrap();
    let head = format!(
        "GET /api/events HTTP/1.1\r\nHost: {control}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("evt_ctl"),
        "the UI's data comes from PostgreSQL: {response}"
    );
    drop(serve);
}
