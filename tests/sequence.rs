//! `hooklab sequence`: one object's events sent in a realistic wrong order to a real
//! `hooklab listen` with a Stripe source. Every preset ends in its true final state, and the
//! timeline (`hooklab timeline OBJ --json`) shows the state machine parking what came early
//! and ignoring what came stale. Recorded deliveries are sent in the order given.

#[path = "forward/support.rs"]
#[allow(dead_code)]
mod support;

use std::time::{Duration, Instant};
use support::{Answer, App, Listen, SECRET, cli, cli_json, send, signed_request, temp_db};

/// `hooklab timeline OBJ --json` once the object has `rows` decisions (20 s at most).
fn timeline(db: &std::path::Path, object: &str, rows: usize) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = cli(db, &["timeline", object, "--json"]);
        let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if t["transitions"].as_array().is_some_and(|a| a.len() >= rows) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "{object} never had {rows} decisions: {t}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_stripe_preset_ends_in_its_true_state_and_the_timeline_says_why() {
    let (_dir, db) = temp_db();
    let listen = Listen::start(&db, &[]);
    let to = format!("http://{}/pay", listen.addr);
    for (preset, sent, decisions, final_state) in [
        (
            "success-before-creation",
            ["payment_intent.succeeded", "payment_intent.created"].as_slice(),
            ["parked", "applied", "applied_from_park"].as_slice(),
            "succeeded",
        ),
        (
            "refund-before-success",
            &[
                "payment_intent.created",
                "charge.refunded",
                "payment_intent.succeeded",
            ],
            &["applied", "parked", "applied", "applied_from_park"],
            "refunded",
        ),
        (
            "failure-then-success",
            &[
                "payment_intent.created",
                "payment_intent.succeeded",
                "payment_intent.payment_failed",
            ],
            &["applied", "applied", "ignored_stale"],
            "succeeded",
        ),
    ] {
        let out = cli_json(
            &db,
            &[
                "sequence",
                "--to",
                &to,
                "--preset",
                preset,
                "--provider",
                "stripe",
                "--secret",
                SECRET,
            ],
        );
        assert_eq!(out["final_state"], final_state, "{out}");
        let types: Vec<&str> = out["sent"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["event_type"].as_str().unwrap())
            .collect();
        assert_eq!(types, sent, "{preset}: the misordered order");
        assert!(
            out["sent"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["status"] == 200),
            "{out}"
        );
        let object = out["object"].as_str().unwrap();
        let t = timeline(&db, object, decisions.len());
        let got: Vec<&str> = t["transitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["decision"].as_str().unwrap())
            .collect();
        assert_eq!(got, decisions, "{preset}: {t}");
        assert_eq!(t["state"], final_state, "{preset}: {t}");
    }
    // Every event was signed with the source's secret: all recorded valid.
    let listed = cli_json(&db, &["events", "list"]);
    let verdicts: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["verdict"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(verdicts.len(), 8);
    assert!(verdicts.iter().all(|v| *v == "valid"), "{verdicts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_deliveries_go_out_in_the_order_given_with_the_delay() {
    let (_dir, db) = temp_db();
    let listen = Listen::start(&db, &[]);
    for n in 1..=3 {
        let body = format!(r#"{{"id":"evt_order_{n}","type":"charge.succeeded"}}"#);
        assert_eq!(
            send(&listen.addr, &signed_request(&listen.addr, &body)).await,
            200
        );
    }
    let app = App::start(Answer::Status(200)).await;
    let started = Instant::now();
    let out = tokio::task::spawn_blocking({
        let db = db.clone();
        let url = app.url.clone();
        move || {
            cli_json(
                &db,
                &[
                    "sequence", "--to", &url, "3", "1", "2", "--delay", "150ms", "--resign",
                    "--secret", SECRET,
                ],
            )
        }
    })
    .await
    .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "two delays of 150 ms between three deliveries"
    );
    assert_eq!(out["deliveries"], serde_json::json!([3, 1, 2]));
    app.wait_for_hits(3).await;
    let order: Vec<String> = app
        .seen()
        .iter()
        .map(|r| r.header("X-Hooklab-Replay-Of").unwrap_or_default())
        .collect();
    assert_eq!(order, ["3", "1", "2"]);
    let keys: Vec<&str> = out["sent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["evt_order_3", "evt_order_1", "evt_order_2"]);
    // Re-signed: each carries a fresh Stripe signature.
    assert!(
        app.seen()
            .iter()
            .all(|r| r.header("Stripe-Signature").is_some())
    );
}

#[test]
fn a_preset_a_provider_has_no_states_for_is_refused_with_the_reason() {
    let (_dir, db) = temp_db();
    let out = cli(
        &db,
        &[
            "sequence",
            "--to",
            "http://127.0.0.1:9/x",
            "--preset",
            "refund-before-success",
            "--provider",
            "paddle",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("paddle has no `refund-before-success`"),
        "{err}"
    );
}
