//! `--tunnel bore --bore-server 127.0.0.1` against a real bore server in this process.

use crate::support::{Listen, assert_recorded_valid, authority, post_stripe, request};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// bore's control port is fixed (7835): one server for the whole test process.
fn bore_server() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut server = bore_cli::server::Server::new(1024..=65535, None);
                server.set_bind_addr(IpAddr::V4(Ipv4Addr::LOCALHOST));
                server.set_bind_tunnels(IpAddr::V4(Ipv4Addr::LOCALHOST));
                server
                    .listen()
                    .await
                    .expect("the bore server runs on 127.0.0.1:7835");
            });
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", 7835)).is_err() {
            assert!(Instant::now() < deadline, "the bore server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

const SECRET: &str = "whsec_bore_tunnel_test";

#[test]
fn a_signed_event_through_bore_is_recorded_byte_exact_and_valid() {
    bore_server();
    let source = format!("stripe=stripe:{SECRET}");
    let mut listen = Listen::start(&[
        "--source",
        &source,
        "--tunnel",
        "bore",
        "--bore-server",
        "127.0.0.1",
    ]);
    let up = listen.tunnel("up");
    assert_eq!(up["provider"], "bore");
    let url = up["url"].as_str().expect("tunnel.url").to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "bore is plain HTTP: {url}"
    );
    let public = authority(&url).to_string();
    assert_ne!(
        public,
        format!("127.0.0.1:{}", listen.port),
        "the event goes through the tunnel, not to the receiver directly"
    );

    // Non-ASCII and JSON escapes: byte-exactness is about bytes.
    let body = r#"{"id":"evt_bore_1","type":"payment_intent.succeeded","created":1700000000,"data":{"object":{"id":"pi_1","description":"caf\u00e9 — ünïcödé ✓"}}}"#;
    assert_eq!(post_stripe(&public, "/stripe", SECRET, body), 200);
    let line = listen.delivery();
    assert_eq!(line["verdict"], "valid", "{line}");
    assert_recorded_valid(&listen, line["id"].as_i64().unwrap(), body.as_bytes());

    // `hooklab tunnel status` finds this instance through the discovery file.
    let status: serde_json::Value =
        serde_json::from_slice(&listen.cli(&["tunnel", "status", "--json"])).unwrap();
    assert_eq!(status["status"], "up");
    assert_eq!(status["public_url"], url.as_str());
    assert_eq!(status["plain_http"], true);

    let discovery = listen.discovery_path();
    let status = listen.terminate();
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}");
    assert!(
        !discovery.exists(),
        "the discovery file (with the token) is removed on exit"
    );
}

#[test]
fn the_control_api_cannot_be_reached_through_the_tunnel() {
    bore_server();
    let listen = Listen::start(&["--tunnel", "bore", "--bore-server", "127.0.0.1"]);
    let url = listen.tunnel("up")["url"].as_str().unwrap().to_string();
    let public = authority(&url).to_string();
    let discovery = listen.discovery();
    let token = discovery["token"].as_str().unwrap();
    let control = authority(discovery["url"].as_str().unwrap()).to_string();
    assert!(
        control.starts_with("127.0.0.1:"),
        "loopback only: {control}"
    );
    assert_ne!(
        control,
        format!("127.0.0.1:{}", listen.port),
        "its own port"
    );

    // The control API itself answers with the token…
    let head =
        format!("GET /api/tunnel HTTP/1.1\r\nHost: {control}\r\nAuthorization: Bearer {token}");
    let (status, text) = request(&control, &head, b"");
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""status":"up""#), "{text}");

    // …but the same request through the tunnel lands in the receiver: recorded as a delivery
    // to the unknown source `api`, answered 404, no status or token in the answer.
    for host in [public.as_str(), control.as_str(), "localhost"] {
        let head =
            format!("GET /api/tunnel HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}");
        let (status, text) = request(&public, &head, b"");
        assert_eq!(
            status, 404,
            "the receiver answers, whatever the Host: {text}"
        );
        assert!(
            !text.contains("public_url"),
            "no tunnel status leaks: {text}"
        );
        assert!(!text.contains(token), "{text}");
        let line = listen.delivery();
        assert_eq!(
            line["path"], "/api/tunnel",
            "the receiver recorded it: {line}"
        );
    }
}
