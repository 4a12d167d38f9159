//! `hooklab reconcile` through the binary, against a local stand-in of the part of Stripe's API
//! it uses (the real API cannot be reached from here): a PaymentIntent stuck in `processing`
//! is corrected to `succeeded`, and an event Stripe sent that never arrived is reported.

mod common;

use common::{BIN, Listener, json_of, payment_intent_event, post_stripe, unix_now};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

/// Answers Stripe-shaped JSON: the PaymentIntent has succeeded; `/v1/events` lists one event
/// Hooklab recorded and one it never saw. Requests without the key get 401.
fn stripe_stand_in() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap_or_default();
            let mut authorized = false;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                authorized |= line
                    .to_ascii_lowercase()
                    .starts_with("authorization: bearer sk_test_standin");
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .to_string();
            let (status, body) = if !authorized {
                (
                    "401 Unauthorized",
                    r#"{"error":{"message":"Invalid API Key"}}"#.to_string(),
                )
            } else if path.starts_with("/v1/payment_intents/pi_stuck") {
                ("200 OK", r#"{"id":"pi_stuck","object":"payment_intent","status":"succeeded","latest_charge":null}"#.to_string())
            } else if path.starts_with("/v1/events") {
                ("200 OK", r#"{"object":"list","data":[{"id":"evt_seen"},{"id":"evt_never_arrived"},{"id":"evt_created"}],"has_more":false}"#.to_string())
            } else {
                (
                    "404 Not Found",
                    r#"{"error":{"message":"No such object"}}"#.to_string(),
                )
            };
            let mut stream: TcpStream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// Records a created and then a processing event for `pi_stuck`, and waits until the machine
/// has the payment in `processing`.
fn stuck_payment(listen: &Listener, db: &std::path::Path) {
    let now = unix_now();
    for (id, kind, at) in [
        ("evt_created", "payment_intent.created", now - 60),
        ("evt_seen", "payment_intent.processing", now - 30),
    ] {
        let event = payment_intent_event(id, kind, at, "pi_stuck");
        let response = post_stripe(listen.port, "/pay", "whsec_r", &event);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while json_of(&["objects", "--json"], db)[0]["state"] != "processing" {
        assert!(Instant::now() < deadline, "the object reached `processing`");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_stuck_payment_is_corrected_and_a_missing_event_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let listen = Listener::start(&["--source", "pay=stripe:whsec_r"], &db);
    stuck_payment(&listen, &db);
    drop(listen);

    let api = format!("http://127.0.0.1:{}", stripe_stand_in());
    let out = Command::new(BIN)
        .args([
            "reconcile",
            "--json",
            "--older-than",
            "0s",
            "--stripe-api",
            &api,
        ])
        .args(["--stripe-key", "sk_test_standin", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "a JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(0), "no errors: {report}");
    assert_eq!(report["corrections"][0]["object_id"], "pi_stuck");
    assert_eq!(report["corrections"][0]["from"], "processing");
    assert_eq!(report["corrections"][0]["to"], "succeeded");
    assert_eq!(
        report["gaps"][0]["missing_events"],
        serde_json::json!(["evt_never_arrived"])
    );
    let timeline = json_of(&["timeline", "pi_stuck", "--json"], &db);
    assert_eq!(
        timeline["state"], "succeeded",
        "the correction went through the machine: {timeline}"
    );

    let denied = Command::new(BIN)
        .args([
            "reconcile",
            "--json",
            "--older-than",
            "0s",
            "--stripe-api",
            &api,
        ])
        .args(["--stripe-key", "sk_wrong_key_do_not_print", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&denied.stderr)
    );
    assert!(
        !all.contains("sk_wrong_key_do_not_print"),
        "the key never appears in output"
    );
}

#[test]
fn listen_reconciles_periodically() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let api = format!("http://127.0.0.1:{}", stripe_stand_in());
    let listen = Listener::start(
        &[
            "--source",
            "pay=stripe:whsec_r",
            "--reconcile-every",
            "300ms",
            "--reconcile-older-than",
            "0s",
            "--stripe-api",
            &api,
            "--stripe-key",
            "sk_test_standin",
        ],
        &db,
    );
    let now = unix_now();
    for (id, kind, at) in [
        ("evt_created", "payment_intent.created", now - 60),
        ("evt_seen", "payment_intent.processing", now - 30),
    ] {
        post_stripe(
            listen.port,
            "/pay",
            "whsec_r",
            &payment_intent_event(id, kind, at, "pi_stuck"),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = json_of(&["timeline", "pi_stuck", "--json"], &db);
        if t["state"] == "succeeded" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a periodic pass corrected the stuck payment: {t}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
