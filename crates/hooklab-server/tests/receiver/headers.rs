//! Headers: recorded in arrival order, with duplicates and the case they were sent in, even
//! when requests are pipelined on one connection; hyper's own limits never crash the server.

use crate::support::{self, header_pairs, read_response};
use tokio::io::AsyncWriteExt;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn interleaved_duplicates_keep_arrival_order_and_case() {
    let mut server = support::start(support::config()).await;
    let raw = b"POST /plain HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-b: 2\r\nX-a: 3\r\nCONTENT-length: 2\r\n\r\n{}";
    let response = server.send(raw).await;
    assert_eq!(response.status, 200);
    let d = server.next_delivery().await;
    assert_eq!(
        header_pairs(&d),
        pairs(&[
            ("Host", "h"),
            ("X-A", "1"),
            ("x-b", "2"),
            ("X-a", "3"),
            ("CONTENT-length", "2")
        ]),
        "exactly the header lines sent, in order"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn pipelined_requests_each_get_their_own_headers() {
    let mut server = support::start(support::config()).await;
    let mut stream = server.connect().await;
    let both = b"POST /plain/1 HTTP/1.1\r\nHost: h\r\nX-Req: one\r\nX-Req: uno\r\nContent-Length: 3\r\n\r\nabc\
POST /plain/2 HTTP/1.1\r\nHost: h\r\nx-req: two\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n";
    stream.write_all(both).await.unwrap();
    let mut buf = Vec::new();
    assert_eq!(
        read_response(&mut stream, &mut buf).await.unwrap().status,
        200
    );
    assert_eq!(
        read_response(&mut stream, &mut buf).await.unwrap().status,
        200
    );

    let first = server.next_delivery().await;
    let second = server.next_delivery().await;
    assert_eq!(first.record.path, "/plain/1");
    assert_eq!(
        header_pairs(&first),
        pairs(&[
            ("Host", "h"),
            ("X-Req", "one"),
            ("X-Req", "uno"),
            ("Content-Length", "3")
        ])
    );
    assert_eq!(first.record.body, b"abc");
    assert_eq!(second.record.path, "/plain/2");
    assert_eq!(
        header_pairs(&second),
        pairs(&[
            ("Host", "h"),
            ("x-req", "two"),
            ("Transfer-Encoding", "chunked")
        ])
    );
    assert_eq!(second.record.body, b"de");
    server.shutdown().await;
}

#[tokio::test]
async fn a_non_utf8_header_value_is_kept_as_bytes() {
    let mut server = support::start(support::config()).await;
    let raw = b"POST /plain HTTP/1.1\r\nHost: h\r\nX-Bin: caf\xe9\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(server.send(raw).await.status, 200);
    let d = server.next_delivery().await;
    assert_eq!(d.record.headers[1].value, b"caf\xe9");
    server.shutdown().await;
}

#[tokio::test]
async fn a_huge_header_is_refused_by_hyper_and_the_server_keeps_serving() {
    let mut server = support::start(support::config()).await;
    let mut stream = server.connect().await;
    let mut raw = b"POST /plain HTTP/1.1\r\nHost: h\r\nX-Huge: ".to_vec();
    raw.extend(std::iter::repeat_n(b'h', 600 * 1024));
    raw.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    // hyper may close while we are still writing: a reset is as acceptable as a 431.
    let _ = stream.write_all(&raw).await;
    if let Ok(response) = read_response(&mut stream, &mut Vec::new()).await {
        assert_eq!(response.status, 431, "hyper's own answer");
    }
    assert!(
        !server.has_event(),
        "a request hyper refused never reached the handler"
    );

    let response = server
        .send(&support::request("POST", "/plain", &[], b"ok"))
        .await;
    assert_eq!(response.status, 200, "the server still serves");
    assert_eq!(server.next_delivery().await.record.body, b"ok");
    server.shutdown().await;
}

#[tokio::test]
async fn too_many_headers_are_refused_by_hyper_and_the_server_keeps_serving() {
    let server = support::start(support::config()).await;
    let mut raw = b"GET /plain HTTP/1.1\r\nHost: h\r\n".to_vec();
    for i in 0..150 {
        raw.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    let mut stream = server.connect().await;
    let _ = stream.write_all(&raw).await;
    if let Ok(response) = read_response(&mut stream, &mut Vec::new()).await {
        assert_eq!(response.status, 431);
    }
    let response = server
        .send(&support::request("GET", "/plain", &[], b""))
        .await;
    assert_eq!(response.status, 200);
    server.shutdown().await;
}
