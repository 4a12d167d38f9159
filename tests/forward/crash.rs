//! A listener killed (SIGKILL) while a forward is in flight: the job's lease expires, the
//! restarted listener runs it again and completes it. Nothing is lost, nothing stays stuck.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_cut_off_by_a_crash_runs_again_after_the_lease() {
    let app = App::start(Answer::Hold).await;
    let (_dir, db) = temp_db();
    // A 1 s attempt timeout: the lease (visibility timeout) is 2 s.
    let flags = ["--forward-to", app.url.as_str(), "--forward-timeout", "1s"];
    let listen = Listen::start(&db, &flags);
    let body = r#"{"id":"evt_crash","type":"invoice.paid"}"#;
    assert_eq!(
        send(&listen.addr, &signed_request(&listen.addr, body)).await,
        200
    );
    app.wait_for_hits(1).await; // the app holds this request: the forward is in flight
    listen.sigkill();
    assert_eq!(
        key_status(&db, "evt_crash").as_deref(),
        Some("processing"),
        "the crash left the key mid-processing"
    );

    app.answer(Answer::Status(200));
    let listen = Listen::start(&db, &flags);
    let done = listen.next_kind("attempt");
    assert_eq!(done["outcome"], "done", "{done}");
    assert_eq!(
        done["attempt"], 2,
        "the lease taken by the dead process counted as attempt 1"
    );
    let seen = app.seen();
    assert_eq!(seen.len(), 2, "forwarded again after the crash, once");
    assert_eq!(seen[1].body, body.as_bytes());
    assert_eq!(seen[1].header("x-hooklab-attempt").as_deref(), Some("2"));
    assert_eq!(key_status(&db, "evt_crash").as_deref(), Some("completed"));
    assert!(
        cli_json(&db, &["dlq", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );

    let delivery = done["delivery"].as_i64().unwrap().to_string();
    let shown = cli_json(&db, &["events", "show", &delivery]);
    let attempts = shown["attempts"].as_array().unwrap();
    assert_eq!(
        attempts.len(),
        1,
        "the cut-off attempt left no record; the second did"
    );
    assert_eq!(
        (
            attempts[0]["attempt"].as_i64(),
            attempts[0]["status"].as_i64()
        ),
        (Some(2), Some(200))
    );
    drop(listen);
}
