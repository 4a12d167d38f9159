//! `hooklab reconcile` through the binary, against a local stand-in of the part of Stripe's API
//! it uses (the real API cannot be reached from here): a PaymentIntent stuck in `processing`
//! is corrected to `succeeded`, and an event Stripe sent that never arrived is reported.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

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

#[test]
fn a_stuck_payment_is_corrected_and_a_missing_event_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut child = Command::new(BIN)
        .args([
            "listen",
            "--json",
            "--port",
            "0",
            "--source",
            "pay=stripe:whsec_r",
        ])
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let port: u16 = ready["ready"]["receiver"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    std::thread::spawn(move || for _ in lines {});

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    for (id, kind, at) in [
        ("evt_created", "payment_intent.created", now - 60),
        ("evt_seen", "payment_intent.processing", now - 30),
    ] {
        let body = format!(
            r#"{{"id":"{id}","type":"{kind}","created":{at},"data":{{"object":{{"id":"pi_stuck","object":"payment_intent"}}}}}}"#
        );
        let signed = Command::new(BIN)
            .args([
                "sign",
                "--provider",
                "stripe",
                "--secret",
                "whsec_r",
                "--body",
                &body,
            ])
            .output()
            .unwrap();
        let header = String::from_utf8(signed.stdout).unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "POST /pay HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{}\r\nContent-Length: {}\r\n\r\n{body}",
            header.trim(),
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }

    // Wait for the machine to put the payment in `processing`.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new(BIN)
            .args(["objects", "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let objects: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if objects[0]["state"] == "processing" {
            break;
        }
        assert!(Instant::now() < deadline, "the object reached `processing`");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();

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

    let timeline = Command::new(BIN)
        .args(["timeline", "pi_stuck", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let timeline: serde_json::Value = serde_json::from_slice(&timeline.stdout).unwrap();
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
    let mut child = Command::new(BIN)
        .args([
            "listen",
            "--json",
            "--port",
            "0",
            "--source",
            "pay=stripe:whsec_r",
        ])
        .args(["--reconcile-every", "300ms", "--reconcile-older-than", "0s"])
        .args([
            "--stripe-api",
            &api,
            "--stripe-key",
            "sk_test_standin",
            "--db",
        ])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let port: u16 = ready["ready"]["receiver"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    std::thread::spawn(move || for _ in lines {});
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (id, kind, at) in [
        ("evt_created", "payment_intent.created", now - 60),
        ("evt_seen", "payment_intent.processing", now - 30),
    ] {
        let body = format!(
            r#"{{"id":"{id}","type":"{kind}","created":{at},"data":{{"object":{{"id":"pi_stuck","object":"payment_intent"}}}}}}"#
        );
        let signed = Command::new(BIN)
            .args([
                "sign",
                "--provider",
                "stripe",
                "--secret",
                "whsec_r",
                "--body",
                &body,
            ])
            .output()
            .unwrap();
        let header = String::from_utf8(signed.stdout).unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "POST /pay HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{}\r\nContent-Length: {}\r\n\r\n{body}",
            header.trim(),
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new(BIN)
            .args(["timeline", "pi_stuck", "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if t["state"] == "succeeded" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a periodic pass corrected the stuck payment: {t}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}
