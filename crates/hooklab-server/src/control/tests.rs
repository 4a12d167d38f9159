//! The control API over a real loopback socket: the guard's refusals and the endpoints.

use super::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Sends `head` (request line and headers, without the final blank line) and returns
/// (status, body).
async fn send(addr: SocketAddr, head: &str) -> (u16, serde_json::Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[tokio::test]
async fn the_guard_refuses_foreign_hosts_origins_and_bad_tokens() {
    let server = serve(0, ControlState::default()).await.unwrap();
    let addr = server.addr;
    assert!(addr.ip().is_loopback(), "bound to loopback only");
    let token = server.token().expose().to_string();
    let port = addr.port();
    let ok_host = format!("Host: 127.0.0.1:{port}");
    let auth = format!("Authorization: Bearer {token}");

    let (status, body) = send(
        addr,
        &format!("GET /api/tunnel HTTP/1.1\r\n{ok_host}\r\n{auth}"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        serde_json::json!({"status": "off"}),
        "no tunnel configured"
    );

    let (status, body) = send(addr, &format!("GET /api/tunnel HTTP/1.1\r\n{ok_host}")).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")));
    // The last hex digit changed (to another one: a random token ends in `0` once in 16).
    let last = if token.ends_with('0') { '1' } else { '0' };
    let wrong = format!("Authorization: Bearer {}{last}", &token[..token.len() - 1]);
    let (status, _) = send(
        addr,
        &format!("GET /api/tunnel HTTP/1.1\r\n{ok_host}\r\n{wrong}"),
    )
    .await;
    assert_eq!(status, 401, "a token differing in the last byte is refused");

    let rebinding = format!("GET /api/tunnel HTTP/1.1\r\nHost: attacker.example:{port}\r\n{auth}");
    let (status, body) = send(addr, &rebinding).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("bad_host")),
        "DNS rebinding"
    );

    let cross_site =
        format!("GET /api/tunnel HTTP/1.1\r\n{ok_host}\r\n{auth}\r\nOrigin: https://evil.example");
    let (status, body) = send(addr, &cross_site).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("bad_origin")));
    let same_origin = format!(
        "GET /api/health HTTP/1.1\r\n{ok_host}\r\n{auth}\r\nOrigin: http://localhost:{port}"
    );
    let (status, body) = send(addr, &same_origin).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("ok")));

    let (status, _) = send(
        addr,
        &format!("PUT /api/tunnel HTTP/1.1\r\n{ok_host}\r\n{auth}\r\nContent-Length: 0"),
    )
    .await;
    assert_eq!(status, 405);
    let (status, body) = send(
        addr,
        &format!("POST /api/tunnel HTTP/1.1\r\n{ok_host}\r\n{auth}\r\nContent-Length: 0"),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (409, Some("no_receiver")));
    let (status, _) = send(
        addr,
        &format!("GET /api/nothing HTTP/1.1\r\n{ok_host}\r\n{auth}"),
    )
    .await;
    assert_eq!(status, 404);

    assert!(
        !format!("{server:?}").contains(&token),
        "Debug redacts the token"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn tokens_differ_per_start_and_discovery_files_are_private() {
    let a = ControlToken::generate().unwrap();
    let b = ControlToken::generate().unwrap();
    assert_ne!(a, b);
    assert_eq!(a.expose().len(), 64, "32 random bytes, hex");

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let path = discovery::path_beside(&db);
    assert_eq!(path, dir.path().join("hooklab.db.control.json"));
    let d = discovery::Discovery {
        pid: 1,
        url: "http://127.0.0.1:1".into(),
        token: a.clone(),
        receiver: "http://127.0.0.1:2".into(),
    };
    d.write(&path).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "only the owner may read the token");
    }
    assert_eq!(discovery::Discovery::read(&path).unwrap(), d);
    assert!(!format!("{d:?}").contains(a.expose()));
    let other = discovery::Discovery {
        token: b,
        ..d.clone()
    };
    other.write(&path).unwrap();
    d.remove(&path);
    assert!(path.exists(), "another instance's file is left alone");
    other.remove(&path);
    assert!(!path.exists());
}
