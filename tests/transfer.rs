//! `hooklab export` / `hooklab import` between the engines: a SQLite database with every kind
//! of row (binary bodies and headers, a key with duplicates, a finished job with its attempts,
//! a dead letter, an object and its timeline) goes to PostgreSQL and back, and each export is
//! byte-identical to the first. After the move, PostgreSQL goes on where SQLite left off: new
//! ids follow the imported ones and a retried event is recognised as a duplicate.

use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::request::Header;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{
    AttemptRecord, IdempotencyClaim, JobOutcome, KeyStatus, NewDelivery, ObjectChange,
    ObjectRecord, Store, TimelineEntry,
};
use hooklab_core::verdict::Verdict;
use hooklab_postgres::PgStore;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

fn delivery(key: &str, body: &[u8]) -> NewDelivery {
    NewDelivery {
        received_at: UnixMillis(1_750_000_000_123),
        source: "pay".into(),
        provider: Some(hooklab_core::provider::ProviderId::Stripe),
        method: "POST".into(),
        path: "/pay".into(),
        query: Some("a=1&a=2".into()),
        headers: vec![
            Header::new("Stripe-Signature", "t=1,v1=abc"),
            Header::new("X-Bin", vec![0xff, 0x00, b'a']),
        ],
        body: body.to_vec(),
        body_size: body.len() as u64,
        body_refused: false,
        remote_addr: Some("203.0.113.7:51234".into()),
        verdict: Verdict::valid(0, Some(1_750_000_000), "ok".into()),
        metadata: Metadata {
            event_id: Some(key.into()),
            event_type: Some("payment_intent.succeeded".into()),
            object_id: Some("pi_1".into()),
            provider_time: Some(UnixMillis(1_749_999_999_000)),
            idempotency_key: Some(key.into()),
        },
        response_status: 200,
        idempotency: Some(IdempotencyClaim {
            scope: "stripe".into(),
            key: key.into(),
            status: KeyStatus::Processing,
        }),
        enqueue: true,
    }
}

fn attempt(status: u16) -> AttemptRecord {
    AttemptRecord {
        started_at: UnixMillis(1_750_000_000_200),
        duration_ms: 3,
        target: Some("http://127.0.0.1:3000/hook".into()),
        status: Some(status),
        response_headers: vec![Header::new("X-App", "yes")],
        response_body: vec![0x80, b'o', b'k'],
        error: None,
    }
}

/// A SQLite database holding every kind of row.
async fn seeded(path: &Path) {
    let store = SqliteStore::open(path).unwrap();
    let first = store
        .record(delivery("evt_1", b"\xff\xfe{\"id\":\"evt_1\"}"))
        .await
        .unwrap();
    store.record(delivery("evt_1", b"again")).await.unwrap();
    store.record(delivery("evt_2", b"{}")).await.unwrap();
    let now = UnixMillis(1_750_000_000_300);
    for job in store.lease_jobs(now, 10, 30_000).await.unwrap() {
        let outcome = if job.delivery == first.id {
            JobOutcome::Done
        } else {
            JobOutcome::Dead {
                reason: "gave up: HTTP 500".into(),
            }
        };
        let status = if job.delivery == first.id { 200 } else { 500 };
        store
            .finish_job(job, attempt(status), outcome, now)
            .await
            .unwrap();
    }
    store
        .update_object(
            "stripe-payment-intent".into(),
            "pi_1".into(),
            Box::new(|_| {
                Some(ObjectChange {
                    object: ObjectRecord {
                        machine: "stripe-payment-intent".into(),
                        object_id: "pi_1".into(),
                        state: Some("succeeded".into()),
                        state_time: Some(UnixMillis(1_749_999_999_000)),
                        flags: vec!["awaiting_confirmation".into()],
                        data: "{\"n\":1}".into(),
                        updated_at: UnixMillis(1_750_000_000_400),
                    },
                    rows: vec![TimelineEntry {
                        machine: "stripe-payment-intent".into(),
                        object_id: "pi_1".into(),
                        from: None,
                        to: Some("succeeded".into()),
                        delivery: Some(1),
                        provider_time: Some(UnixMillis(1_749_999_999_000)),
                        received_at: Some(UnixMillis(1_750_000_000_123)),
                        decision: "applied".into(),
                        reason: "first event".into(),
                        at: UnixMillis(1_750_000_000_400),
                    }],
                })
            }),
        )
        .await
        .unwrap();
    let closing = std::sync::Arc::new(store);
    tokio::task::spawn_blocking(move || closing.close().unwrap())
        .await
        .unwrap();
}

fn hooklab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("hooklab runs")
}

fn ok(out: Output, what: &str) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_moves_from_sqlite_to_postgres_and_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    seeded(&a).await;
    let exported = ok(
        hooklab(&["export", "--db", a.to_str().unwrap()]),
        "export from SQLite",
    );
    let text = String::from_utf8(exported.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        1 + 3 + 2 + 2 + 2 + 1 + 1,
        "a header, 3 deliveries, 2 keys, 2 jobs, 2 attempts, 1 object, 1 timeline row:\n{text}"
    );
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &exported).unwrap();

    let url = hooklab_postgres::cluster::test_server()
        .unwrap_or_else(|e| panic!("no PostgreSQL to test against: {e}"))
        .fresh_database()
        .await
        .unwrap();
    ok(
        hooklab(&[
            "import",
            "--database",
            &url,
            "--file",
            file.to_str().unwrap(),
        ]),
        "import into PostgreSQL",
    );
    let from_postgres = ok(
        hooklab(&["export", "--database", &url]),
        "export from PostgreSQL",
    );
    assert_eq!(
        String::from_utf8_lossy(&from_postgres),
        text,
        "PostgreSQL gives back exactly what SQLite exported: every id, byte and reference"
    );
    let again = hooklab(&[
        "import",
        "--database",
        &url,
        "--file",
        file.to_str().unwrap(),
    ]);
    assert!(
        !again.status.success(),
        "importing into a database that holds data is refused"
    );

    let b = dir.path().join("b.db");
    std::fs::write(&file, &from_postgres).unwrap();
    ok(
        hooklab(&[
            "import",
            "--database",
            b.to_str().unwrap(),
            "--file",
            file.to_str().unwrap(),
        ]),
        "import into SQLite",
    );
    let round_trip = ok(hooklab(&["export", "--db", b.to_str().unwrap()]), "export");
    assert_eq!(String::from_utf8_lossy(&round_trip), text, "and back again");

    // PostgreSQL goes on where SQLite left off.
    let options = hooklab_postgres::PgOptions {
        // scripts/pgbouncer-check.sh: a pooler that cannot keep prepared statements.
        prepared_statements: std::env::var_os("HOOKLAB_NO_PREPARED_STATEMENTS").is_none(),
        ..Default::default()
    };
    let store = PgStore::connect_with(&url, options).await.unwrap();
    let retried = store
        .record(delivery("evt_1", b"late retry"))
        .await
        .unwrap();
    assert_eq!(retried.id, 4, "new ids follow the imported ones");
    let key = retried.key.unwrap();
    assert!(
        key.duplicate && key.first_delivery == 1 && !key.process,
        "a retry of an imported, completed event is a duplicate: {key:?}"
    );
    store.close().await;
}
