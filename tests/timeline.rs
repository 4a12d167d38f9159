//! State machines through the binary: Stripe events sent out of order to `hooklab listen`
//! end in the right state, and `hooklab timeline` / `hooklab objects` show it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

fn post(port: u16, body: &str, secret: &str) {
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

fn event(kind: &str, created: i64) -> String {
    format!(
        r#"{{"id":"evt_{created}","type":"{kind}","created":{created},"data":{{"object":{{"id":"pi_e2e","object":"payment_intent"}}}}}}"#
    )
}

#[test]
fn out_of_order_events_end_succeeded_and_the_timeline_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut child = Command::new(BIN)
        .args([
            "listen",
            "--json",
            "--port",
            "0",
            "--source",
            "pay=stripe:whsec_t",
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
    // Success before creation, then a stale `processing`.
    post(
        port,
        &event("payment_intent.succeeded", now - 10),
        "whsec_t",
    );
    post(port, &event("payment_intent.created", now - 30), "whsec_t");
    post(
        port,
        &event("payment_intent.processing", now - 20),
        "whsec_t",
    );

    let deadline = Instant::now() + Duration::from_secs(20);
    let timeline = loop {
        let out = Command::new(BIN)
            .args(["timeline", "pi_e2e", "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        if out.status.success() {
            let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            if t["transitions"].as_array().is_some_and(|a| a.len() >= 4) {
                break t;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the machine applied the three events"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(timeline["object"], "pi_e2e");
    assert_eq!(timeline["state"], "succeeded", "{timeline}");
    let decisions: Vec<&str> = timeline["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["parked", "applied", "applied_from_park", "ignored_stale"]
    );

    let objects = Command::new(BIN)
        .args(["objects", "--json", "--state", "succeeded", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let objects: serde_json::Value = serde_json::from_slice(&objects.stdout).unwrap();
    assert_eq!(objects[0]["object"], "pi_e2e");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_parked_event_past_review_after_flags_its_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut child = Command::new(BIN)
        .args(["listen", "--json", "--port", "0", "--review-after", "300ms"])
        .args(["--source", "pay=stripe:whsec_t", "--db"])
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
    // A refund for a payment Hooklab never saw: parked, then sent to review.
    let refund = r#"{"id":"evt_rf","type":"charge.refunded","created":1700000000,"data":{"object":{"id":"ch_1","object":"charge","payment_intent":"pi_orphan"}}}"#;
    post(port, refund, "whsec_t");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new(BIN)
            .args(["objects", "--review", "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let objects: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if objects[0]["object"] == "pi_orphan" {
            assert!(
                objects[0]["flags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f == "requires_review")
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the orphan refund went to review"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}
