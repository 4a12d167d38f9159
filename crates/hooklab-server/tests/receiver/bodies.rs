//! Bodies: bytes kept exactly (non-UTF-8, empty, chunked); the limit is inclusive; one byte
//! over is refused with 413 while its headers and size are still recorded.

use crate::support::{self, LIMIT, header_pairs, request};
use hooklab_core::verdict::Status;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn a_non_utf8_body_is_kept_byte_for_byte() {
    let mut server = support::start(support::config()).await;
    let body: Vec<u8> = (0..=255u8).rev().collect();
    let response = server.send(&request("POST", "/plain", &[], &body)).await;
    assert_eq!(response.status, 200);
    assert_eq!(server.next_delivery().await.record.body, body);
    server.shutdown().await;
}

#[tokio::test]
async fn an_empty_body_is_recorded_as_empty() {
    let mut server = support::start(support::config()).await;
    let response = server.send(&request("PUT", "/plain/x", &[], b"")).await;
    assert_eq!(response.status, 200);
    let d = server.next_delivery().await;
    assert_eq!((d.record.body.len(), d.record.body_size), (0, 0));
    assert_eq!(d.record.method, "PUT", "any method is received");
    assert!(!d.record.body_refused);
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_exactly_at_the_limit_is_accepted() {
    let mut server = support::start(support::config()).await;
    let body = vec![b'a'; LIMIT as usize];
    let response = server.send(&request("POST", "/plain", &[], &body)).await;
    assert_eq!(response.status, 200, "the limit is inclusive");
    let d = server.next_delivery().await;
    assert_eq!(d.record.body, body);
    assert!(!d.record.body_refused);
    server.shutdown().await;
}

#[tokio::test]
async fn one_byte_over_the_declared_limit_is_refused_but_recorded() {
    let mut server = support::start(support::config()).await;
    let body = vec![b'a'; LIMIT as usize + 1];
    let response = server
        .send(&request("POST", "/stripe", &[("X-Trace", b"t-1")], &body))
        .await;
    assert_eq!(response.status, 413);
    assert!(response.text().contains("recorded"), "{}", response.text());

    let d = server.next_delivery().await;
    assert!(d.record.body_refused, "the body was not kept");
    assert!(d.record.body.is_empty());
    assert_eq!(
        d.record.body_size,
        LIMIT + 1,
        "the declared size is recorded"
    );
    assert_eq!(d.record.response_status, 413);
    assert_eq!(
        d.record.verdict.verdict,
        Status::Unsigned,
        "refused before verification"
    );
    assert!(
        header_pairs(&d).contains(&("X-Trace".into(), "t-1".into())),
        "headers are recorded: {:?}",
        header_pairs(&d)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_refused_while_streaming() {
    let mut server = support::start(support::config()).await;
    let mut stream = server.connect().await;
    let head = b"POST /plain HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head).await.unwrap();
    let chunk = vec![b'z'; 1000];
    for _ in 0..5 {
        stream.write_all(b"3E8\r\n").await.unwrap();
        stream.write_all(&chunk).await.unwrap();
        stream.write_all(b"\r\n").await.unwrap();
    }
    stream.write_all(b"0\r\n\r\n").await.unwrap();
    let response = support::read_response(&mut stream, &mut Vec::new())
        .await
        .unwrap();
    assert_eq!(response.status, 413);

    let d = server.next_delivery().await;
    assert!(d.record.body_refused);
    assert!(
        d.record.body_size > LIMIT,
        "the size observed before stopping: {}",
        d.record.body_size
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_chunked_body_with_extensions_and_trailers_is_reassembled_exactly() {
    let mut server = support::start(support::config()).await;
    let raw = b"POST /plain HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
    let response = server.send(raw).await;
    assert_eq!(response.status, 200);
    assert_eq!(server.next_delivery().await.record.body, b"hello, world");
    server.shutdown().await;
}
