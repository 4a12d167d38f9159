//! The dead-letter queue through the CLI, while `hooklab listen` runs in another process: an
//! app answering 500 exhausts the schedule; `dlq list|show` and `events show` say what
//! happened; once the app recovers, `dlq redrive` completes the job (the listener picks it up
//! by polling); `dlq discard` gives up on another.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_are_listed_shown_redriven_and_discarded() {
    let app = App::start(Answer::Status(500)).await;
    let (_dir, db) = temp_db();
    let listen = Listen::start(
        &db,
        &["--forward-to", &app.url, "--retry-schedule", "50ms,50ms"],
    );
    let body = r#"{"id":"evt_dlq","type":"payment_intent.payment_failed"}"#;
    assert_eq!(
        send(&listen.addr, &signed_request(&listen.addr, body)).await,
        200
    );
    for n in 1..=3 {
        let line = listen.next_kind("attempt");
        assert_eq!(line["attempt"], n);
        assert_eq!(line["status"], 500);
        assert_eq!(line["outcome"], if n < 3 { "retry" } else { "dead" });
    }
    let dead = listen.next_kind("dead_letter");
    assert_eq!(dead["event_id"], "evt_dlq");

    let list = cli_json(&db, &["dlq", "list"]);
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{list}");
    let row = &rows[0];
    assert_eq!(
        (row["event_id"].as_str(), row["source"].as_str()),
        (Some("evt_dlq"), Some("pay"))
    );
    assert_eq!(row["attempts"], 3);
    assert!(
        row["reason"].as_str().unwrap().contains("HTTP 500"),
        "{row}"
    );
    let (job, delivery) = (
        row["job"].as_i64().unwrap(),
        row["delivery"].as_i64().unwrap(),
    );
    assert_eq!(delivery, dead["delivery"].as_i64().unwrap());
    assert_eq!(key_status(&db, "evt_dlq").as_deref(), Some("failed"));

    let shown = cli(&db, &["dlq", "show", &job.to_string()]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success() && text.contains("Attempts:") && text.contains("500"),
        "{text}"
    );
    let events_show = cli(&db, &["events", "show", &delivery.to_string()]);
    let text = String::from_utf8_lossy(&events_show.stdout);
    assert_eq!(
        text.matches("HTTP 500 is not a success").count(),
        3,
        "every attempt: {text}"
    );

    app.answer(Answer::Status(200));
    let redriven = cli(&db, &["dlq", "redrive", "--all"]);
    assert!(String::from_utf8_lossy(&redriven.stdout).contains("1 job redriven"));
    let done = listen.next_kind("attempt");
    assert_eq!(
        (done["attempt"].as_i64(), done["outcome"].as_str()),
        (Some(4), Some("done"))
    );
    assert_eq!(key_status(&db, "evt_dlq").as_deref(), Some("completed"));
    assert!(
        cli_json(&db, &["dlq", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(app.seen().len(), 4);

    // Another one dies, and is discarded instead.
    app.answer(Answer::Status(503));
    let body = r#"{"id":"evt_discard","type":"charge.failed"}"#;
    assert_eq!(
        send(&listen.addr, &signed_request(&listen.addr, body)).await,
        200
    );
    let dead = listen.next_kind("dead_letter");
    let job = dead["job"].as_i64().unwrap().to_string();
    assert_eq!(cli_json(&db, &["dlq", "discard", &job])["count"], 1);
    assert!(
        cli_json(&db, &["dlq", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
    let again = cli(&db, &["dlq", "redrive", &job]);
    assert_eq!(
        again.status.code(),
        Some(1),
        "a discarded job is not in the queue"
    );
    assert_eq!(key_status(&db, "evt_discard").as_deref(), Some("failed"));
    drop(listen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_prints_a_line_per_attempt_in_text_mode() {
    let app = App::start(Answer::Status(200)).await;
    let (_dir, db) = temp_db();
    let mut child = std::process::Command::new(BIN)
        .args(["listen", "--port", "0", "--forward-to", &app.url, "--db"])
        .arg(&db)
        .args(["--source", &format!("pay=stripe:{SECRET}")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = stdout_lines(&mut child);
    let mut printed = Vec::new();
    let mut next_line = || {
        let line = lines.recv_timeout(PATIENCE).expect("another line in time");
        printed.push(line.clone());
        line
    };
    let addr = loop {
        if let Some(rest) = next_line().strip_prefix("Hooklab is listening on http://") {
            break rest.to_string();
        }
    };
    let body = r#"{"id":"evt_text","type":"charge.succeeded"}"#;
    assert_eq!(send(&addr, &signed_request(&addr, body)).await, 200);
    let forwarded = loop {
        let line = next_line();
        if line.contains("↳ forward") {
            break line;
        }
    };
    assert!(forwarded.contains("attempt 1 ✓ 200"), "{forwarded}");
    assert!(
        printed
            .iter()
            .any(|l| l.contains("forwarded to http://") && l.contains("retries: 200ms,1s")),
        "the banner says where and how: {printed:?}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
