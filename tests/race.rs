//! A true concurrent race through `hooklab listen`: 500 copies of one signed event on 500
//! connections, all opened first and then written at once. Every copy is acknowledged, and the
//! database constraint makes exactly one of them the first: 499 are recorded as its duplicates.

mod common;

use common::{BIN, Listener};
use std::process::Command;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

const COPIES: usize = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_copies_collapse_onto_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("race.db");
    let listen = Listener::start(&["--source", "pay=stripe:whsec_race"], &db);
    let addr = listen.addr();

    let body =
        br#"{"id":"evt_race","type":"payment_intent.succeeded","data":{"object":{"id":"pi_r"}}}"#;
    let signed = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            "stripe",
            "--secret",
            "whsec_race",
            "--body",
        ])
        .arg(std::str::from_utf8(body).unwrap())
        .output()
        .unwrap();
    let header = String::from_utf8(signed.stdout).unwrap();
    let mut request = format!(
        "POST /pay HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{}\r\nContent-Length: {}\r\n\r\n",
        header.trim(),
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    let request = Arc::new(request);

    // Open every connection first, then release all the writes together.
    let mut streams = Vec::with_capacity(COPIES);
    for _ in 0..COPIES {
        streams.push(TcpStream::connect(&addr).await.expect("connect"));
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
                String::from_utf8_lossy(&response).to_string()
            })
        })
        .collect();
    for task in tasks {
        let response = task.await.unwrap();
        assert!(
            response.starts_with("HTTP/1.1 200"),
            "every copy is acknowledged: {response}"
        );
    }

    let list = Command::new(BIN)
        .args(["events", "list", "--json", "--limit", "1000"])
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(rows.len(), COPIES, "every copy is recorded");
    let firsts: Vec<_> = rows
        .iter()
        .filter(|r| r["duplicate_of"].is_null())
        .collect();
    assert_eq!(firsts.len(), 1, "exactly one copy is the first");
    let first = firsts[0]["id"].as_i64().unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| r["duplicate_of"].as_i64() == Some(first))
            .count(),
        COPIES - 1,
        "the other 499 are duplicates of the first"
    );
    let keys = Command::new(BIN)
        .args(["keys", "--json"])
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let keys: serde_json::Value = serde_json::from_slice(&keys.stdout).unwrap();
    assert_eq!(keys[0]["key"], "evt_race");
    assert_eq!(keys[0]["deliveries"], COPIES as u64);
    assert_eq!(keys[0]["first_delivery"], first);
}
