//! `hooklab export --format json|har|curl|http` and `hooklab import FILE`, end to end: a real
//! `hooklab listen` records deliveries sent over a real socket (a body that is not UTF-8 and
//! holds NUL, a body with CRLF, duplicate headers, a signed Stripe event); each format is
//! exported, imported into a fresh database, and exported again: the bodies' bytes and the
//! headers' order come back unchanged. A Stripe event JSON imports `valid`, signed now with the
//! given secret; `--to` sends a capture through a running receiver; bad files fail with a
//! message that says where.

mod common;

use common::{BIN, Listener, stripe_signature};
use serde_json::Value;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

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

/// Sends `head` (without Content-Length) and `body` as one HTTP/1.1 request; the status.
fn send(port: u16, head: &str, body: &[u8]) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut bytes = head.replace('\n', "\r\n").into_bytes();
    bytes.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(body);
    s.write_all(&bytes).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn deliveries_json(db: &Path) -> Vec<Value> {
    let out = ok(
        hooklab(&["export", "--db", db.to_str().unwrap(), "--format", "json"]),
        "export --format json",
    );
    serde_json::from_slice::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// What must survive a round trip: the request as sent.
fn request_of(d: &Value) -> Value {
    serde_json::json!({
        "method": d["method"],
        "path": d["path"],
        "query": d["query"],
        "headers": d["headers"],
        "body": d["body"],
    })
}

const EVENT: &str = "{\n  \"id\": \"evt_capture_1\",\n  \"object\": \"event\",\n  \"type\": \"payment_intent.created\",\n  \"created\": 1750000000,\n  \"data\": {\"object\": {\"id\": \"pi_capture\", \"object\": \"payment_intent\"}}\n}\n";

/// A database recorded by a real `hooklab listen`: three awkward deliveries.
fn recorded(dir: &Path) -> (std::path::PathBuf, Listener) {
    let db = dir.join("a.db");
    let listener = Listener::start(&["--source", &format!("stripe={}", stripe_src())], &db);
    let binary = b"\xff\xfe\x00\x01 not UTF-8 \x80\r\n";
    let status = send(
        listener.port,
        "POST /stripe?a=1&a=2 HTTP/1.1\nHost: 127.0.0.1\nX-Dup: one\nX-Other: between\nX-Dup: two\nContent-Type: application/octet-stream\n",
        binary,
    );
    assert_eq!(status, 200);
    let crlf = b"line one\r\nline two\r\n\r\nlast";
    send(
        listener.port,
        "PUT /stripe/sub HTTP/1.1\nHost: 127.0.0.1\nContent-Type: text/plain\n",
        crlf,
    );
    let signature = stripe_signature(SECRET, EVENT);
    send(
        listener.port,
        &format!(
            "POST /stripe HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n{signature}\n"
        ),
        EVENT.as_bytes(),
    );
    (db, listener)
}

fn stripe_src() -> String {
    format!("stripe:{SECRET}")
}

#[test]
fn every_export_format_imports_into_a_fresh_database_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (db, listener) = recorded(dir.path());
    drop(listener);
    // A source added in the UI, with a secret that was never sent: no export may carry it.
    let hidden = "whsec_ONLY_IN_THE_SOURCES_FILE";
    std::fs::write(
        dir.path().join("a.db.sources.toml"),
        format!("[[source]]\nname = \"extra\"\nprovider = \"stripe\"\nsecrets = [\"{hidden}\"]\n"),
    )
    .unwrap();
    let original = deliveries_json(&db);
    assert_eq!(original.len(), 3, "three deliveries recorded");
    assert_eq!(
        original[0]["body"]["base64"], "//4AASBub3QgVVRGLTgggA0K",
        "the recorded body is not UTF-8, so JSON carries it in base64"
    );
    assert_eq!(original[2]["verdict"]["verdict"], "valid");

    for format in ["har", "curl", "json", "http"] {
        let exported = ok(
            hooklab(&["export", "--db", db.to_str().unwrap(), "--format", format]),
            &format!("export --format {format}"),
        );
        assert!(
            !String::from_utf8_lossy(&exported).contains(hidden),
            "{format}: a source's configured secret is never exported"
        );
        let file = dir.path().join(format!("export.{format}"));
        std::fs::write(&file, &exported).unwrap();
        let fresh = dir.path().join(format!("from-{format}.db"));
        let out = ok(
            hooklab(&[
                "import",
                file.to_str().unwrap(),
                "--db",
                fresh.to_str().unwrap(),
                "--secret",
                SECRET,
                "--json",
            ]),
            &format!("import of the {format} export"),
        );
        let answer: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(answer["format"], format, "auto-detected: {answer}");
        assert_eq!(answer["imported"].as_array().unwrap().len(), 3, "{answer}");
        let imported = deliveries_json(&fresh);
        for (a, b) in original.iter().zip(&imported) {
            assert_eq!(
                request_of(b),
                request_of(a),
                "{format}: method, path, query, headers in order with duplicates, body bytes"
            );
            assert_eq!(
                b["remote_addr"],
                format!("import:{format}"),
                "marked as imported"
            );
            assert_eq!(b["source"], "stripe");
        }
        assert_eq!(
            imported[2]["metadata"]["event_id"], "evt_capture_1",
            "{format}: verified and read like any delivery"
        );
        assert_eq!(
            imported[2]["verdict"]["verdict"], "valid",
            "{format}: the recorded signature still verifies with the secret"
        );
    }

    // HAR → import → HAR: the requests are the same, byte for byte.
    let har = |db: &Path| -> Vec<Value> {
        let out = ok(
            hooklab(&["export", "--db", db.to_str().unwrap(), "--format", "har"]),
            "export --format har",
        );
        let log: Value = serde_json::from_slice(&out).unwrap();
        log["log"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["request"].clone())
            .collect()
    };
    assert_eq!(
        har(&dir.path().join("from-har.db")),
        har(&db),
        "HAR export → import → export gives the same requests"
    );

    // The whole-database format is still the default and still goes into a new database only.
    let jsonl = dir.path().join("all.jsonl");
    std::fs::write(
        &jsonl,
        ok(hooklab(&["export", "--db", db.to_str().unwrap()]), "export"),
    )
    .unwrap();
    let copy = dir.path().join("copy.db");
    let out = ok(
        hooklab(&[
            "import",
            jsonl.to_str().unwrap(),
            "--db",
            copy.to_str().unwrap(),
        ]),
        "whole-database import",
    );
    assert!(
        String::from_utf8_lossy(&out).starts_with("imported "),
        "rows imported"
    );
    let again = hooklab(&[
        "import",
        jsonl.to_str().unwrap(),
        "--db",
        copy.to_str().unwrap(),
    ]);
    assert!(
        !again.status.success(),
        "a database that holds data is refused"
    );
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("new, empty database"), "{stderr}");
}

#[test]
fn a_stripe_event_is_signed_now_and_recorded_valid() {
    let dir = tempfile::tempdir().unwrap();
    let event = dir.path().join("evt.json");
    std::fs::write(&event, EVENT).unwrap();
    let db = dir.path().join("e.db");
    let out = ok(
        hooklab(&[
            "import",
            event.to_str().unwrap(),
            "--source",
            "stripe",
            "--secret",
            SECRET,
            "--db",
            db.to_str().unwrap(),
        ]),
        "import of a Stripe event",
    );
    let line = String::from_utf8_lossy(&out);
    assert!(line.starts_with("#1 POST /stripe valid"), "{line}");
    let shown = ok(
        hooklab(&[
            "events",
            "show",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ]),
        "events show",
    );
    let shown: Value = serde_json::from_slice(&shown).unwrap();
    assert_eq!(shown["body"], EVENT, "the event's bytes as given");
    assert_eq!(shown["verdict"]["verdict"], "valid");
    assert_eq!(shown["remote_addr"], "import:event");
    assert!(
        shown["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "Stripe-Signature"),
        "signed by the provider's own signing"
    );

    // `events show --json` output imports too (its body is lossless).
    let file = dir.path().join("shown.json");
    std::fs::write(&file, serde_json::to_vec(&shown).unwrap()).unwrap();
    let out = ok(
        hooklab(&[
            "import",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--secret",
            SECRET,
        ]),
        "import of events show --json",
    );
    let line = String::from_utf8_lossy(&out);
    assert!(
        line.contains("valid") && line.contains("duplicate of #1"),
        "{line}"
    );

    // The secret of a source added in the UI (`<db>.sources.toml`) signs it just as well.
    let ui_db = dir.path().join("ui.db");
    std::fs::write(
        dir.path().join("ui.db.sources.toml"),
        format!("[[source]]\nname = \"pay\"\nprovider = \"stripe\"\nsecrets = [\"{SECRET}\"]\n"),
    )
    .unwrap();
    let out = ok(
        hooklab(&[
            "import",
            event.to_str().unwrap(),
            "--source",
            "pay",
            "--db",
            ui_db.to_str().unwrap(),
        ]),
        "import for a source added in the UI",
    );
    let line = String::from_utf8_lossy(&out);
    assert!(line.starts_with("#1 POST /pay valid (pay)"), "{line}");

    let wrong = hooklab(&[
        "import",
        event.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(
        !wrong.status.success(),
        "an event cannot be signed without a secret"
    );
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--secret"));
}

#[test]
fn to_sends_through_a_running_receiver_and_bad_files_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let (db, listener) = recorded(dir.path());
    let har = dir.path().join("a.har");
    std::fs::write(
        &har,
        ok(
            hooklab(&["export", "--db", db.to_str().unwrap(), "--format", "har"]),
            "export",
        ),
    )
    .unwrap();
    let one = ok(
        hooklab(&[
            "export",
            "--db",
            db.to_str().unwrap(),
            "--format",
            "curl",
            "--id",
            "2",
        ]),
        "export --id",
    );
    let one = String::from_utf8(one).unwrap();
    assert!(
        one.starts_with("# Hooklab delivery #2 (source stripe)")
            && one.matches("curl ").count() == 1,
        "--id picks one delivery: {one}"
    );
    let url = format!("http://{}/stripe", listener.addr());
    let out = ok(
        hooklab(&["import", har.to_str().unwrap(), "--to", &url, "--json"]),
        "import --to",
    );
    let answer: Value = serde_json::from_slice(&out).unwrap();
    let statuses: Vec<i64> = answer["sent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_i64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 200, 200], "{answer}");
    let all = deliveries_json(&db);
    assert_eq!(
        all.len(),
        6,
        "the receiver recorded the three sent requests"
    );
    assert_eq!(
        all[3]["body"], all[0]["body"],
        "sent with the exact bytes it was recorded with"
    );
    assert_eq!(
        all[5]["metadata"]["event_id"], "evt_capture_1",
        "and verified by the receiver"
    );
    drop(listener);

    let bad = dir.path().join("bad.sh");
    std::fs::write(&bad, "curl http://h/stripe \\\n  -H 'X-A: 1\n").unwrap();
    let out = hooklab(&[
        "import",
        bad.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unbalanced quote `'` at line 2, column 6"),
        "{stderr}"
    );
    let body = dir.path().join("body.bin");
    std::fs::write(&body, b"\x00\xff from a file").unwrap();
    let beside = dir.path().join("file.sh");
    std::fs::write(&beside, "curl http://h/stripe --data-binary @body.bin").unwrap();
    let fresh = dir.path().join("f.db");
    ok(
        hooklab(&[
            "import",
            beside.to_str().unwrap(),
            "--db",
            fresh.to_str().unwrap(),
        ]),
        "a curl command reading a file beside it",
    );
    let raw = ok(
        hooklab(&[
            "events",
            "show",
            "1",
            "--raw",
            "--db",
            fresh.to_str().unwrap(),
        ]),
        "events show --raw",
    );
    assert_eq!(
        raw, b"\x00\xff from a file",
        "@file is read relative to the imported file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_import_into_and_export_from_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let (db, listener) = recorded(dir.path());
    drop(listener);
    let har = dir.path().join("a.har");
    std::fs::write(
        &har,
        ok(
            hooklab(&["export", "--db", db.to_str().unwrap(), "--format", "har"]),
            "export",
        ),
    )
    .unwrap();
    let url = hooklab_postgres::cluster::test_server()
        .unwrap_or_else(|e| panic!("no PostgreSQL to test against: {e}"))
        .fresh_database()
        .await
        .unwrap();
    ok(
        hooklab(&["migrate", "--database", &url]),
        "migrate the PostgreSQL database",
    );
    let out = ok(
        hooklab(&[
            "import",
            har.to_str().unwrap(),
            "--database",
            &url,
            "--secret",
            SECRET,
            "--json",
        ]),
        "import into PostgreSQL",
    );
    let answer: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(answer["imported"][2]["verdict"], "valid", "{answer}");
    let exported = ok(
        hooklab(&[
            "export",
            "--database",
            &url,
            "--format",
            "json",
            "--limit",
            "2",
        ]),
        "export from PostgreSQL",
    );
    let from_postgres: Vec<Value> = serde_json::from_slice(&exported).unwrap();
    let original = deliveries_json(&db);
    assert_eq!(from_postgres.len(), 2, "--limit 2: the two most recent");
    for (a, b) in original[1..].iter().zip(&from_postgres) {
        assert_eq!(
            request_of(b),
            request_of(a),
            "byte-exact through PostgreSQL"
        );
    }
}
