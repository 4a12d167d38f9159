//! `hooklab inject`: copies of one recorded delivery. Through the pipeline, a 1,000-copy
//! concurrent race is all acknowledged, the developer's app sees exactly one forward, and every
//! copy is recorded as a duplicate of the first; the per-copy results agree with the database.
//! Straight at an app, every copy reaches it (and the same answers hash the same).

mod common;
#[path = "forward/support.rs"]
#[allow(dead_code)]
mod support;

use std::process::Command;
use std::time::Duration;
use support::{Answer, App, BIN, Listen, SECRET, signed_request};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

fn inject(db: &std::path::Path, to: &str, extra: &[&str]) -> serde_json::Value {
    let args = ["inject", "1", "--to", to, "--json"];
    common::ok_json(&[&args[..], extra].concat(), db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_copy_race_through_the_pipeline_is_forwarded_once() {
    const COPIES: u64 = 1000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let app = App::start(Answer::Status(200)).await;
    let listen = Listen::start(&db, &["--forward-to", &app.url]);
    let body = r#"{"id":"evt_inject","type":"payment_intent.succeeded","data":{"object":{"id":"pi_inject"}}}"#;
    let mut s = TcpStream::connect(&listen.addr).await.unwrap();
    s.write_all(&signed_request(&listen.addr, body))
        .await
        .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"));
    app.wait_for_hits(1).await;

    let to = format!("http://{}/pay", listen.addr);
    let copies = COPIES.to_string();
    let result = inject(&db, &to, &["--copies", &copies, "--concurrent"]);
    assert_eq!(result["mode"], "concurrent");
    assert_eq!(
        result["summary"]["statuses"]["200"], COPIES,
        "{}",
        result["summary"]
    );
    assert_eq!(result["copies"].as_array().unwrap().len() as u64, COPIES);

    // The app still counts one forward, and the database agrees with the copies' results.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.seen().len(), 1, "exactly one forward");
    let keys = common::json_of(&["keys", "--json"], &db);
    let key = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "evt_inject")
        .expect("the event's key");
    assert_eq!(
        key["deliveries"],
        COPIES + 1,
        "the first and every copy: {key}"
    );
    assert_eq!(key["first_delivery"], 1);
    let listed = common::json_of(&["events", "list", "--json", "--limit", "2000"], &db);
    let duplicates = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["duplicate_of"] == 1)
        .count() as u64;
    assert_eq!(duplicates, COPIES, "every copy is a duplicate of #1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_sent_straight_at_an_app_all_reach_it_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let listen = Listen::start(&db, &[]);
    let body = r#"{"id":"evt_seq","type":"charge.succeeded"}"#;
    let mut s = TcpStream::connect(&listen.addr).await.unwrap();
    s.write_all(&signed_request(&listen.addr, body))
        .await
        .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.unwrap();

    let app = App::start(Answer::Status(200)).await;
    let result = inject(
        &db,
        &app.url,
        &[
            "--copies",
            "3",
            "--interval",
            "20ms",
            "--resign",
            "--secret",
            SECRET,
        ],
    );
    assert_eq!(result["mode"], "sequential");
    assert_eq!(result["summary"]["statuses"]["200"], 3);
    assert_eq!(
        result["summary"]["distinct_bodies"], 1,
        "the same answer every time"
    );
    app.wait_for_hits(3).await;
    let seen = app.seen();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|r| r.header("X-Hooklab-Replay-Of").as_deref() == Some("1")),
        "every copy names its original"
    );
}

/// The lab's test app on a free port (a real HTTP server); its base URL.
async fn lab_app(mode: hooklab_server::lab::app::AppMode) -> String {
    use hooklab_server::lab::app::{AppOptions, serve};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut options = AppOptions::new(mode);
    options.duplicate_status = Some(500);
    tokio::spawn(serve(listener, options, std::future::pending()));
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oracle_tells_an_idempotent_handler_from_a_naive_one() {
    use hooklab_server::lab::app::AppMode;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let listen = Listen::start(&db, &[]);
    let body =
        r#"{"id":"evt_oracle","type":"payment_intent.succeeded","data":{"object":{"id":"pi_o"}}}"#;
    let mut s = TcpStream::connect(&listen.addr).await.unwrap();
    s.write_all(&signed_request(&listen.addr, body))
        .await
        .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.unwrap();

    for (mode, side_effects, idempotent) in
        [(AppMode::Idempotent, 1, true), (AppMode::Naive, 50, false)]
    {
        let base = lab_app(mode).await;
        let (to, probe) = (format!("{base}/webhooks"), format!("{base}/count"));
        let args = [
            "inject",
            "1",
            "--to",
            &to,
            "--copies",
            "50",
            "--concurrent",
            "--probe",
            &probe,
        ];
        let text = tokio::task::spawn_blocking({
            let db = db.clone();
            let args = args.map(str::to_string);
            move || {
                Command::new(BIN)
                    .args(&args)
                    .arg("--db")
                    .arg(&db)
                    .output()
                    .unwrap()
            }
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&text.stdout);
        assert_eq!(text.status.success(), idempotent, "{mode:?}: {stdout}");
        let verdict = stdout.lines().last().unwrap_or_default();
        match mode {
            AppMode::Idempotent => assert_eq!(
                verdict,
                "idempotent: 1 side effect for 50 copies; responses consistent: 200×50"
            ),
            _ => assert_eq!(
                verdict,
                "NOT idempotent: 50 side effects for 50 copies; responses differ: 200×1, 500×49"
            ),
        }
        // The JSON says the same, from a fresh app so its count starts at zero.
        let base = lab_app(mode).await;
        let (to, probe) = (format!("{base}/webhooks"), format!("{base}/count"));
        let json = tokio::task::spawn_blocking({
            let db = db.clone();
            move || {
                Command::new(BIN)
                    .args(["inject", "1", "--to", &to, "--copies", "50", "--concurrent"])
                    .args(["--probe", &probe, "--json", "--db"])
                    .arg(&db)
                    .output()
                    .unwrap()
            }
        })
        .await
        .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(report["copy_of"], 1);
        assert_eq!(report["key"], "evt_oracle");
        assert_eq!(report["oracle"]["side_effects"], side_effects, "{report}");
        assert_eq!(report["oracle"]["idempotent"], idempotent);
        assert_eq!(report["oracle"]["extra_side_effects"], side_effects - 1);
    }
}
