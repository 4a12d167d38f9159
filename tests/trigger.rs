//! `hooklab trigger` end to end, against a real `hooklab listen`: a template signed with the
//! source's secret is recorded `valid` with the event's type and id; two triggers with the same
//! `--set data.object.id` build one payment's out-of-order timeline; without `--to` the event
//! goes to the running instance, signed there with the source's own secret; an unknown event
//! type is a usage error that lists the known ones.

mod common;

use common::{BIN, Listener, json_of, unix_now};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SECRET: &str = "whsec_trigger_test_secret";

fn trigger(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("trigger")
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("hooklab trigger runs")
}

/// `hooklab trigger ARGS --json`, which must succeed; its JSON outcome.
fn trigger_json(db: &Path, args: &[&str]) -> serde_json::Value {
    let out = trigger(db, &[args, &["--json"]].concat());
    assert!(
        out.status.success(),
        "hooklab trigger {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Polls `check` until it returns `Some`, for at most 20 s.
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn newest(db: &Path) -> serde_json::Value {
    json_of(&["events", "list", "--json", "--limit", "1"], db)[0].clone()
}

#[test]
fn a_triggered_event_is_recorded_valid_with_its_type_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let listen = Listener::start(&["--source", &format!("pay=stripe:{SECRET}")], &db);
    let to = format!("http://{}/pay", listen.addr());

    let sent = trigger_json(
        &db,
        &[
            "stripe",
            "payment_intent.succeeded",
            "--to",
            &to,
            "--secret",
            SECRET,
        ],
    );
    assert_eq!(sent["status"], 200, "{sent}");
    assert_eq!(sent["event_type"], "payment_intent.succeeded");
    let event_id = sent["event_id"].as_str().expect("an event id");
    assert!(event_id.starts_with("evt_"), "{sent}");
    assert!(
        sent["object_id"].as_str().unwrap().starts_with("pi_"),
        "{sent}"
    );
    let recorded = newest(&db);
    assert_eq!(recorded["verdict"], "valid", "{recorded}");
    assert_eq!(recorded["event_type"], "payment_intent.succeeded");
    assert_eq!(
        recorded["event_id"], event_id,
        "the receiver reads the id the CLI announced"
    );

    // Another secret is refused by the receiver: the signature is real.
    let wrong = trigger_json(
        &db,
        &["stripe", "--to", &to, "--secret", "whsec_another_endpoint"],
    );
    assert_eq!(
        wrong["status"], 200,
        "the receiver records, and answers 200"
    );
    assert_eq!(newest(&db)["verdict"], "invalid");
}

#[test]
fn two_triggers_on_one_payment_intent_build_an_out_of_order_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let listen = Listener::start(&["--source", &format!("pay=stripe:{SECRET}")], &db);
    let to = format!("http://{}/pay", listen.addr());
    let object = "--set=data.object.id=pi_trigger_e2e";
    // `succeeded` first; then `created`, dated 30 s earlier, as a late retry would be.
    let earlier = format!("--set=created={}", unix_now() - 30);
    let first = trigger_json(
        &db,
        &[
            "stripe",
            "payment_intent.succeeded",
            object,
            "--to",
            &to,
            "--secret",
            SECRET,
        ],
    );
    let second = trigger_json(
        &db,
        &[
            "stripe",
            "payment_intent.created",
            object,
            &earlier,
            "--to",
            &to,
            "--secret",
            SECRET,
        ],
    );
    assert_eq!(first["object_id"], "pi_trigger_e2e");
    assert_eq!(second["object_id"], "pi_trigger_e2e");
    assert_ne!(first["event_id"], second["event_id"], "two events");

    let timeline = eventually("both events reach the payment's timeline", || {
        let t = json_of(&["timeline", "pi_trigger_e2e", "--json"], &db);
        t["transitions"]
            .as_array()
            .is_some_and(|rows| rows.len() >= 3)
            .then_some(t)
    });
    let decisions: Vec<&str> = timeline["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["parked", "applied", "applied_from_park"],
        "succeeded waits for created: {timeline}"
    );
    assert_eq!(timeline["state"], "succeeded");
}

#[test]
fn without_to_the_running_listen_signs_it_with_its_own_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let _listen = Listener::start(
        &[
            "--source",
            &format!("pay=stripe:{SECRET}"),
            "--source",
            "gh=github:gh_secret",
        ],
        &db,
    );
    // No --to, no --secret: found through the discovery file; the source is the only stripe one.
    let sent = trigger_json(
        &db,
        &[
            "stripe",
            "payment_intent.canceled",
            "--set",
            "data.object.id=pi_delegated",
        ],
    );
    assert_eq!(sent["status"], 200, "{sent}");
    assert_eq!(sent["source"], "pay");
    assert_eq!(sent["signed"], true);
    assert_eq!(sent["object_id"], "pi_delegated", "the override went along");
    let recorded = newest(&db);
    assert_eq!(recorded["verdict"], "valid", "{recorded}");
    assert_eq!(recorded["event_type"], "payment_intent.canceled");
    assert_eq!(recorded["event_id"], sent["event_id"]);

    // GitHub's metadata lives in headers; they follow the event type.
    let push = trigger_json(&db, &["github", "push"]);
    assert_eq!(push["status"], 200, "{push}");
    let recorded = newest(&db);
    assert_eq!(recorded["verdict"], "valid", "{recorded}");
    assert_eq!(recorded["event_type"], "push");
    assert_eq!(recorded["source"], "gh");

    // A named source must be of the provider: a Stripe event is never signed for GitHub's.
    let out = trigger(&db, &["stripe", "--source", "gh"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`gh` is a github source"));

    // The control API refuses an unknown event type with the known ones, as `{code, message}`.
    let (status, answer) = control_post(
        &db,
        "/api/test-event",
        r#"{"source": "pay", "event_type": "payment_intent.teleported"}"#,
    );
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["code"], "unknown_event_type");
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("charge.refunded"),
        "{answer}"
    );
    let (status, answer) = control_post(
        &db,
        "/api/test-event",
        r#"{"source": "pay", "overrides": [{"path": "data.object.id.x", "value": 1}]}"#,
    );
    assert_eq!(
        (status, &answer["code"]),
        (422, &serde_json::json!("bad_path")),
        "{answer}"
    );
}

/// `POST path` to the running instance's control API, authenticated with the token in the
/// discovery file beside `db`; the status and the JSON answer.
fn control_post(db: &Path, path: &str, body: &str) -> (u16, serde_json::Value) {
    use std::io::{Read as _, Write as _};
    let mut discovery = db.as_os_str().to_os_string();
    discovery.push(".control.json");
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&discovery).expect("the discovery file")).unwrap();
    let authority = found["url"].as_str().unwrap().trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        found["token"].as_str().unwrap(),
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split_whitespace().nth(1).unwrap().parse().unwrap();
    let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(json).unwrap_or_default())
}

#[test]
fn an_unknown_event_type_is_a_usage_error_listing_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let out = trigger(
        &db,
        &[
            "stripe",
            "payment_intent.teleported",
            "--to",
            "http://127.0.0.1:9/x",
            "--secret",
            SECRET,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("payment_intent.teleported")
            && err.contains("payment_intent.succeeded")
            && err.contains("charge.dispute.created"),
        "{err}"
    );
    let out = trigger(
        &db,
        &[
            "stripe",
            "--set",
            "no-equals-sign",
            "--print",
            "--secret",
            SECRET,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad --set is a usage error too"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("path=value"));
}
