//! End to end through the binary: `hooklab listen` on a real socket and a real SQLite file,
//! then `hooklab events list|show` reading it back; config files with `env:` secrets; help.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_hooklab");

/// A running `hooklab listen --json`; its stdout lines arrive on `lines`.
struct Listen {
    child: Child,
    port: u16,
    lines: mpsc::Receiver<String>,
}

impl Listen {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(BIN);
        cmd.args(["listen", "--json", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("hooklab listen starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let ready = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("listen prints a ready line");
        let json: serde_json::Value = serde_json::from_str(&ready).expect("ready line is JSON");
        let url = json["ready"]["receiver"]
            .as_str()
            .expect("ready.receiver")
            .to_string();
        let port = url.rsplit(':').next().unwrap().parse().unwrap();
        Self { child, port, lines }
    }

    fn next_delivery(&self) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a delivery line");
        serde_json::from_str(&line).expect("delivery lines are JSON")
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends raw bytes as one HTTP/1.1 request and returns the status code.
fn send_raw(port: u16, request: &[u8]) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request).unwrap();
    let mut response = Vec::new();
    s.read_to_end(&mut response).unwrap();
    let head = String::from_utf8_lossy(&response);
    head.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn post(port: u16, path: &str, headers: &[(String, String)], body: &[u8]) -> u16 {
    let mut req =
        format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    send_raw(port, &bytes)
}

fn sign(provider: &str, secret: &str, body_file: &Path) -> Vec<(String, String)> {
    let out = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            provider,
            "--secret",
            secret,
            "--body-file",
        ])
        .arg(body_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sign succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(": ").expect("Name: value lines");
            (n.to_string(), v.to_string())
        })
        .collect()
}

fn hooklab(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

#[test]
fn listen_records_and_events_read_back_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let listen = Listen::start(
        &[
            "--db",
            db.to_str().unwrap(),
            "--source",
            "pay=stripe:whsec_e2e",
        ],
        &[],
    );
    // A valid event whose body is not UTF-8 (bytes are sacred, even in JSON strings).
    let mut body = br#"{"id":"evt_e2e","type":"invoice.paid","note":""#.to_vec();
    body.extend_from_slice(&[0xff, 0xfe, 0x00, b'\r', b'\n']);
    body.extend_from_slice(br#""}"#);
    let body_file = dir.path().join("body");
    std::fs::write(&body_file, &body).unwrap();
    let headers = sign("stripe", "whsec_e2e", &body_file);
    assert_eq!(
        post(listen.port, "/pay/hooks?x=1&x=2", &headers, &body),
        200
    );

    let line = listen.next_delivery();
    assert_eq!(line["source"], "pay", "the line names the source");
    assert_eq!(line["path"], "/pay/hooks");
    assert_eq!(line["query"], "x=1&x=2", "the query is kept as sent");
    assert_eq!(line["status"], 200);
    // Not JSON → no event id from the body; the verdict is still computed on raw bytes.
    assert_eq!(
        line["verdict"], "valid",
        "signature verified over the raw bytes: {line}"
    );

    let list = hooklab(&["events", "list", "--json"], &db);
    assert!(list.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let row = &rows[0];
    for key in [
        "id",
        "received_at",
        "source",
        "method",
        "path",
        "verdict",
        "reason",
        "event_id",
        "event_type",
    ] {
        assert!(
            row.get(key).is_some(),
            "events list --json has `{key}`: {row}"
        );
    }
    let id = row["id"].as_i64().unwrap().to_string();
    let raw = hooklab(&["events", "show", &id, "--raw"], &db);
    assert_eq!(raw.stdout, body, "--raw writes the exact body bytes");

    let shown = hooklab(&["events", "show", &id, "--json"], &db);
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let names: Vec<&str> = shown["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Host", "Connection", "Stripe-Signature", "Content-Length"],
        "headers are kept in arrival order with their case"
    );
}

#[test]
fn unknown_sources_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let listen = Listen::start(
        &["--db", db.to_str().unwrap(), "--source", "gh=github:s3cret"],
        &[],
    );
    assert_eq!(
        post(listen.port, "/typo", &[], b"{}"),
        404,
        "unknown source → 404"
    );
    let _ = listen.next_delivery();
    assert_eq!(
        post(
            listen.port,
            "/gh",
            &[("X-Hub-Signature-256".into(), "sha256=00".into())],
            b"{}"
        ),
        200,
        "an invalid signature is still recorded and answered with the source's response"
    );
    let invalid = listen.next_delivery();
    assert_eq!(invalid["verdict"], "invalid");
    assert_eq!(invalid["reason"], "signature_mismatch");

    let only = hooklab(&["events", "list", "--json", "--verdict", "invalid"], &db);
    let rows: serde_json::Value = serde_json::from_slice(&only.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "--verdict filters");
    let typo = hooklab(&["events", "list", "--json", "--source", "typo"], &db);
    let rows: serde_json::Value = serde_json::from_slice(&typo.stdout).unwrap();
    assert_eq!(
        rows[0]["status"], 404,
        "the unknown source's request is recorded"
    );
}

#[test]
fn config_file_with_env_secret_and_custom_response() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let config = dir.path().join("hooklab.toml");
    std::fs::write(
        &config,
        r#"
[[source]]
name = "shop"
provider = "shopify"
secrets = ["env:HOOKLAB_TEST_SHOP_SECRET"]
[source.response]
status = 202
body = "ok"
"#,
    )
    .unwrap();
    let listen = Listen::start(
        &[
            "--db",
            db.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        &[("HOOKLAB_TEST_SHOP_SECRET", "shpss_from_env")],
    );
    let body_file = dir.path().join("body");
    std::fs::write(&body_file, br#"{"id":1}"#).unwrap();
    let headers = sign("shopify", "shpss_from_env", &body_file);
    assert_eq!(
        post(listen.port, "/shop", &headers, br#"{"id":1}"#),
        202,
        "configured status"
    );
    assert_eq!(
        listen.next_delivery()["verdict"],
        "valid",
        "the env: secret was used"
    );
}

#[test]
fn a_missing_env_secret_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args([
            "listen",
            "--port",
            "0",
            "--source",
            "s=stripe:env:HOOKLAB_SURELY_UNSET_VAR",
        ])
        .arg("--db")
        .arg(dir.path().join("h.db"))
        .env_remove("HOOKLAB_SURELY_UNSET_VAR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HOOKLAB_SURELY_UNSET_VAR"),
        "the error names the variable: {err}"
    );
}

#[test]
fn every_command_has_help() {
    for args in [
        vec!["--help"],
        vec!["listen", "--help"],
        vec!["verify", "--help"],
        vec!["sign", "--help"],
        vec!["events", "--help"],
        vec!["events", "list", "--help"],
        vec!["events", "show", "--help"],
        vec!["keys", "--help"],
        vec!["providers", "--help"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?} succeeds");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{args:?} prints usage"
        );
    }
}

#[test]
fn providers_json_lists_every_id() {
    let out = Command::new(BIN)
        .args(["providers", "--json"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 31);
    for id in [
        "stripe",
        "discord",
        "adyen-balance",
        "generic-hmac",
        "token",
    ] {
        assert!(ids.contains(&id), "{id} is listed");
    }
    let stripe = &list[0];
    assert_eq!(stripe["tolerance"]["past_secs"], 300);
    assert!(
        stripe["tolerance"]["future_secs"].is_null(),
        "Stripe's tolerance is past-only"
    );
}

#[test]
fn events_on_a_missing_database_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = hooklab(&["events", "list"], &dir.path().join("none.db"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hooklab listen"));
    assert!(
        !dir.path().join("none.db").exists(),
        "reading never creates a database"
    );
}
