//! The tunnel started and stopped at run time through the control API (the UI's tunnel
//! panel): a real bore server on a loopback address of its own (127.0.0.3), the whole runtime,
//! real sockets.

use super::until;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::tunnel::TunnelState;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// `method path` on the control API with its token; (status, body).
async fn call(
    control: &hooklab_server::control::ControlServer,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let addr = control.addr;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr.port(),
        control.token().expose(),
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    let status = text[9..12].parse().unwrap();
    let json = text.split_once("\r\n\r\n").map_or("null", |(_, b)| b);
    (
        status,
        serde_json::from_str(json).unwrap_or(serde_json::Value::Null),
    )
}

/// Sends `body` to `url` (an `http://host:port` base) + `path`; the status line.
async fn post(base: &str, path: &str, body: &str) -> String {
    let mut conn = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_starts_and_stops_a_bore_tunnel_and_refuses_what_could_run_a_program() {
    let ip = Ipv4Addr::new(127, 0, 0, 3);
    let mut server = bore_cli::server::Server::new(1024..=65535, None);
    server.set_bind_addr(IpAddr::V4(ip));
    server.set_bind_tunnels(IpAddr::V4(ip));
    let bore = tokio::spawn(server.listen());

    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
    let mut config = Config {
        port: 0,
        control_port: Some(0),
        ..Config::default()
    };
    config.sources.push(SourceConfig::new(
        "echo",
        hooklab_core::provider::ProviderId::Token,
        vec![],
    ));
    let running = hooklab_server::runtime::start(config, store).await.unwrap();
    let mut events = running.subscribe();
    let control = running.control().unwrap();

    let (status, off) = call(control, "GET", "/api/tunnel", "").await;
    assert_eq!((status, off["status"].as_str()), (200, Some("off")));

    // What could make the control API run a program is refused.
    let (status, refused) = call(control, "POST", "/api/tunnel", r#"{"provider":"custom"}"#).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("configuration file")
    );
    let (status, _) = call(
        control,
        "POST",
        "/api/tunnel",
        r#"{"command":"touch /tmp/pwned"}"#,
    )
    .await;
    assert_eq!(status, 400, "unknown fields are refused");
    let (status, _) = call(
        control,
        "POST",
        "/api/tunnel",
        r#"{"provider":"ssh","ssh":"-oProxyCommand=sh"}"#,
    )
    .await;
    assert_eq!(status, 400, "an ssh option in place of a host is refused");
    assert!(running.tunnel_status().is_none(), "nothing started");

    // Start: bore on 127.0.0.3; the public URL forwards to the receiver.
    let (status, started) = call(
        control,
        "POST",
        "/api/tunnel",
        &format!(r#"{{"provider":"bore","bore_server":"{ip}"}}"#),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["provider"], "bore");
    let up = until(&mut events, "up").await;
    let TunnelState::Up { url } = up.state else {
        unreachable!()
    };
    assert!(url.starts_with("http://127.0.0.3:"), "{url}");
    let (_, now) = call(control, "GET", "/api/tunnel", "").await;
    assert_eq!(
        (now["status"].as_str(), now["public_url"].as_str()),
        (Some("up"), Some(url.as_str()))
    );
    assert!(
        post(&url, "/echo/through-the-tunnel", "hello")
            .await
            .contains(" 200 "),
        "recorded through the tunnel"
    );

    // Stop: the public port closes, the status is off.
    let (status, stopped) = call(control, "DELETE", "/api/tunnel", "").await;
    assert_eq!((status, stopped["stopped"].as_bool()), (200, Some(true)));
    until(&mut events, "stopped").await;
    let (_, off) = call(control, "GET", "/api/tunnel", "").await;
    assert_eq!(off["status"], "off");
    let public = url.trim_start_matches("http://").to_string();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if tokio::net::TcpStream::connect(&public).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the public port {public} still accepts after the stop"
    );
    let (_, again) = call(control, "DELETE", "/api/tunnel", "").await;
    assert_eq!(again["stopped"], false, "nothing left to stop");

    running.shutdown().await.unwrap();
    bore.abort();
}
