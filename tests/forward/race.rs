//! The issue's acceptance test: 500 copies of one signed event on 500 connections, opened
//! first and released together, through `hooklab listen --forward-to`. Every copy gets a 2xx,
//! 499 are recorded as duplicates, and the app receives the event exactly once.

use crate::support::*;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

const COPIES: usize = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_copies_are_forwarded_exactly_once() {
    let app = App::start(Answer::Status(200)).await;
    let (_dir, db) = temp_db();
    let listen = Listen::start(&db, &["--forward-to", &app.url]);
    let body = r#"{"id":"evt_race_fwd","type":"payment_intent.succeeded","data":{"object":{"id":"pi_r"}}}"#;
    let request = Arc::new(signed_request(&listen.addr, body));

    let mut streams = Vec::with_capacity(COPIES);
    for _ in 0..COPIES {
        streams.push(TcpStream::connect(&listen.addr).await.expect("connect"));
    }
    let barrier = Arc::new(Barrier::new(COPIES));
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            let (barrier, request) = (Arc::clone(&barrier), Arc::clone(&request));
            tokio::spawn(async move {
                barrier.wait().await;
                stream.write_all(&request).await.unwrap();
                let mut response = Vec::new();
                stream.read_to_end(&mut response).await.unwrap();
                String::from_utf8_lossy(&response).into_owned()
            })
        })
        .collect();
    for task in tasks {
        let response = task.await.unwrap();
        assert!(
            response.starts_with("HTTP/1.1 2"),
            "every copy is acknowledged: {response}"
        );
    }

    // The first copy's job runs; when its key is `completed`, the forward is done.
    wait_until("the key is completed", || {
        key_status(&db, "evt_race_fwd").as_deref() == Some("completed")
    })
    .await;
    let rows = cli_json(&db, &["events", "list", "--limit", "1000"]);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), COPIES, "every copy is recorded");
    let duplicates = rows.iter().filter(|r| !r["duplicate_of"].is_null()).count();
    assert_eq!(duplicates, COPIES - 1, "499 recorded as duplicates");
    let first = rows.iter().find(|r| r["duplicate_of"].is_null()).unwrap();

    let seen = app.seen();
    assert_eq!(seen.len(), 1, "the app receives the event exactly once");
    assert_eq!(seen[0].body, body.as_bytes(), "byte-exact");
    assert_eq!(
        seen[0].header("x-hooklab-delivery"),
        first["id"].as_i64().map(|id| id.to_string()),
        "the first copy is the one forwarded"
    );
    assert_eq!(seen[0].header("x-hooklab-attempt").as_deref(), Some("1"));
    assert!(
        cli_json(&db, &["dlq", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
    drop(listen);
}
