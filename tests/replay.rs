//! `hooklab replay` end to end: a delivery signed an hour ago is recorded `invalid`
//! (`timestamp_too_old`); replayed re-signed through the receiver it is `valid`; every negative
//! variant is recorded with its expected reason; each replay names its original.

mod common;

use common::{BIN, Listener, json_of, ok_json, unix_now};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::Command;

const SECRET: &str = "whsec_replay_test_secret";

fn replay(db: &std::path::Path, id: i64, to: &str, extra: &[&str]) -> serde_json::Value {
    let id = id.to_string();
    let args = ["replay", &id, "--to", to, "--json", "--secret", SECRET];
    ok_json(&[&args[..], extra].concat(), db)
}

fn newest(db: &std::path::Path) -> serde_json::Value {
    let list = json_of(&["events", "list", "--json", "--limit", "1"], db);
    list[0].clone()
}

#[test]
fn replays_resign_and_every_negative_variant_gets_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let listener = Listener::start(&["--source", &format!("stripe=stripe:{SECRET}")], &db);

    // Captured an hour ago: the signature is authentic but stale.
    let body =
        r#"{"id":"evt_replay","object":"event","type":"charge.succeeded","created":1700000000}"#;
    let hour_ago = (unix_now() - 3600).to_string();
    let signed = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            "stripe",
            "--secret",
            SECRET,
            "--body",
            body,
            "--now",
            &hour_ago,
        ])
        .output()
        .unwrap();
    let header = String::from_utf8(signed.stdout).unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", listener.port)).unwrap();
    write!(
        s,
        "POST /stripe HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n{}\r\nContent-Length: {}\r\n\r\n{body}",
        header.trim(),
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let original = newest(&db);
    assert_eq!(original["verdict"], "invalid");
    assert_eq!(original["reason"], "timestamp_too_old");
    let id = original["id"].as_i64().unwrap();

    let to = format!("http://{}/stripe", listener.addr());
    let outcome = replay(&db, id, &to, &["--resign"]);
    assert_eq!(outcome["status"], 200);
    let resigned = newest(&db);
    assert_eq!(resigned["verdict"], "valid", "{resigned}");
    let shown = json_of(
        &["events", "show", &resigned["id"].to_string(), "--json"],
        &db,
    );
    let shown_text = shown.to_string();
    assert!(
        shown_text.contains("X-Hooklab-Replay-Of") && shown_text.contains(&format!("\"{id}\"")),
        "the replay names its original: {shown}"
    );
    let raw = Command::new(BIN)
        .args([
            "events",
            "show",
            &resigned["id"].to_string(),
            "--raw",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        raw.stdout,
        body.as_bytes(),
        "re-signing keeps the body byte-exact"
    );

    // Without --to: through the running listener of this database, at the delivery's path.
    let out = Command::new(BIN)
        .args([
            "replay",
            &id.to_string(),
            "--resign",
            "--json",
            "--secret",
            SECRET,
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sent["to"], format!("http://{}/stripe", listener.addr()));
    assert_eq!(newest(&db)["verdict"], "valid");

    // The byte diff: re-signing changed the signature header and added the link, not the body.
    let diff = |b: &serde_json::Value, json: bool| {
        let mut cmd = Command::new(BIN);
        cmd.args(["events", "diff", &id.to_string(), &b["id"].to_string()]);
        if json {
            cmd.arg("--json");
        }
        cmd.arg("--db").arg(&db).output().unwrap()
    };
    let out = diff(&resigned, true);
    assert_eq!(out.status.code(), Some(1), "they differ: exit 1");
    let compared: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(compared["body"]["identical"], true, "{compared}");
    let changed: Vec<(String, String)> = compared["headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["change"] != "equal")
        .map(|h| {
            (
                h["change"].as_str().unwrap().to_string(),
                h["name"].as_str().unwrap().to_ascii_lowercase(),
            )
        })
        .collect();
    assert!(
        changed.contains(&("removed".into(), "stripe-signature".into())),
        "{changed:?}"
    );
    assert!(
        changed.contains(&("added".into(), "stripe-signature".into())),
        "{changed:?}"
    );
    assert!(
        changed.contains(&("added".into(), "x-hooklab-replay-of".into())),
        "{changed:?}"
    );
    let same = Command::new(BIN)
        .args(["events", "diff", &id.to_string(), &id.to_string(), "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&same.stdout).contains("byte-identical"));

    for (variant, reason) in [
        ("stale", "timestamp_too_old"),
        ("wrong-secret", "signature_mismatch"),
        ("tampered", "signature_mismatch"),
        ("unsigned", "missing_header"),
        ("other-body", "signature_mismatch"),
    ] {
        replay(&db, id, &to, &["--variant", variant]);
        let got = newest(&db);
        assert_eq!(got["verdict"], "invalid", "{variant}: {got}");
        assert_eq!(got["reason"], reason, "{variant}: {got}");
        if variant == "tampered" {
            let out = diff(&got, false);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("first difference at byte"), "{text}");
            assert!(
                text.contains("[-") && text.contains("{+"),
                "word-diff markers: {text}"
            );
        }
    }
}
