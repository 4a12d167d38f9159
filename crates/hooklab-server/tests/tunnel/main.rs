//! The tunnel supervisor driving real child processes: small shell scripts standing in for
//! cloudflared and ngrok (which cannot be installed here and need their vendors' edge). They
//! print what the real tools print, so the parsers, the lifecycle (start, URL found, crash,
//! reconnect, stop) and the process-group cleanup are exercised for real; the events are read
//! from the bus.

use hooklab_core::secret::Secret;
use hooklab_server::config::{TunnelKind, TunnelOptions};
use hooklab_server::events::Event;
use hooklab_server::receiver::PublicUrl;
use hooklab_server::tunnel::{self, SupervisorOptions, TunnelEvent, TunnelSpec, TunnelState};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::broadcast;

/// Short delays so a test sees several reconnections quickly.
fn quick() -> SupervisorOptions {
    SupervisorOptions {
        backoff: vec![Duration::from_millis(100), Duration::from_millis(200)],
        stable_after: Duration::from_secs(60),
        stop_grace: Duration::from_secs(2),
    }
}

/// Writes an executable shell script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The next tunnel event on the bus (other events skipped), within 20 s.
async fn next_tunnel(events: &mut broadcast::Receiver<Event>) -> TunnelEvent {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(Event::Tunnel(t)) => return t,
                Ok(_) => {}
                Err(e) => panic!("the bus failed: {e}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("a tunnel event within 20 s")
}

/// Skips events until one in state `name`; returns it.
async fn until(events: &mut broadcast::Receiver<Event>, name: &str) -> TunnelEvent {
    loop {
        let e = next_tunnel(events).await;
        if e.state.name() == name {
            return e;
        }
    }
}

/// A process is alive (a zombie counts as dead: it runs nothing).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            state != Some("Z") && state != Some("X")
        }
        Err(_) => false,
    }
}

/// Every pid written to `file` (one or more per line).
fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}");
}

/// A fake cloudflared: prints the quick-tunnel box on stderr with a URL that changes at each
/// start, leaves a helper running in the background, and crashes when `crash` appears.
const FAKE_CLOUDFLARED: &str = r#"
dir=$(dirname "$0")
n=$(cat "$dir/starts" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$dir/starts"
echo "$*" > "$dir/args"
sleep 1000 &
echo "$$ $!" >> "$dir/pids"
echo "2024-05-20T10:00:00Z INF Requesting new quick Tunnel on trycloudflare.com..." >&2
echo "2024-05-20T10:00:00Z ERR failed: Post \"https://api.trycloudflare.com/tunnel\": not yet" >&2
echo "2024-05-20T10:00:01Z INF +----------------------------------------------------+" >&2
echo "2024-05-20T10:00:01Z INF |  Your quick Tunnel has been created! Visit it at:  |" >&2
echo "2024-05-20T10:00:01Z INF |  https://fake-run-$n.trycloudflare.com             |" >&2
echo "2024-05-20T10:00:01Z INF +----------------------------------------------------+" >&2
while [ ! -e "$dir/crash" ]; do sleep 0.05; done
rm -f "$dir/crash"
echo "2024-05-20T10:00:09Z ERR connection to the edge lost" >&2
exit 7
"#;

#[tokio::test]
async fn a_crashing_tunnel_is_restarted_its_new_url_announced_and_nothing_survives_it() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(dir.path(), "cloudflared", FAKE_CLOUDFLARED);
    let options = TunnelOptions {
        provider: Some(TunnelKind::Cloudflared),
        binary: Some(bin),
        ..TunnelOptions::default()
    };
    let spec = TunnelSpec::from_options(&options).unwrap();
    let (bus, mut events) = broadcast::channel(64);
    let public_url = PublicUrl::new(None);
    let handle = tunnel::start(spec, 4321, bus, public_url.clone(), quick());

    assert_eq!(next_tunnel(&mut events).await.state, TunnelState::Starting);
    let up = next_tunnel(&mut events).await;
    assert_eq!(
        up.state,
        TunnelState::Up {
            url: "https://fake-run-1.trycloudflare.com".into()
        },
        "the box's URL, not api.trycloudflare.com"
    );
    assert_eq!(up.provider, "cloudflared");
    assert_eq!(
        public_url.get().as_deref(),
        Some("https://fake-run-1.trycloudflare.com"),
        "the receiver verifies against the tunnel's URL"
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(
        args.trim(),
        "tunnel --no-autoupdate --url http://127.0.0.1:4321",
        "it forwards to the receiver's port"
    );
    let first = pids(&dir.path().join("pids"));
    assert_eq!(first.len(), 2, "the script and its background helper");

    // Crash: down with the reason, helpers killed, reconnect after the backoff.
    std::fs::write(dir.path().join("crash"), "").unwrap();
    let down = next_tunnel(&mut events).await;
    let TunnelState::Down { reason } = &down.state else {
        panic!("expected down, got {down:?}");
    };
    assert!(reason.contains("exit status: 7"), "{reason}");
    assert!(reason.contains("connection to the edge lost"), "{reason}");
    eventually(
        "the crashed tunnel's background helper is killed with it",
        || first.iter().all(|&p| !alive(p)),
    )
    .await;
    assert_eq!(
        next_tunnel(&mut events).await.state,
        TunnelState::Reconnecting {
            attempt: 1,
            delay_ms: 100
        }
    );
    let again = next_tunnel(&mut events).await;
    assert_eq!(
        again.state,
        TunnelState::Up {
            url: "https://fake-run-2.trycloudflare.com".into()
        }
    );
    assert_eq!(
        again.previous_url.as_deref(),
        Some("https://fake-run-1.trycloudflare.com"),
        "a changed URL is announced with the old one (the gateway must be updated)"
    );
    assert_eq!(
        public_url.get().as_deref(),
        Some("https://fake-run-2.trycloudflare.com")
    );
    let status = handle.status();
    assert_eq!(status.url_changes, 1);
    assert_eq!(
        status.public_url.as_deref(),
        Some("https://fake-run-2.trycloudflare.com")
    );

    // Stop: every process the tunnel ever started is gone.
    let all = pids(&dir.path().join("pids"));
    assert_eq!(all.len(), 4);
    assert!(
        all[2..].iter().all(|&p| alive(p)),
        "the second run is alive"
    );
    handle.stop().await;
    assert_eq!(
        until(&mut events, "stopped").await.state,
        TunnelState::Stopped
    );
    eventually("no process of the tunnel survives stop", || {
        all.iter().all(|&p| !alive(p))
    })
    .await;
}

#[tokio::test]
async fn dropping_the_handle_kills_the_tunnel_too() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(dir.path(), "cloudflared", FAKE_CLOUDFLARED);
    let options = TunnelOptions {
        provider: Some(TunnelKind::Cloudflared),
        binary: Some(bin),
        ..TunnelOptions::default()
    };
    let (bus, mut events) = broadcast::channel(64);
    let handle = tunnel::start(
        TunnelSpec::from_options(&options).unwrap(),
        1,
        bus,
        PublicUrl::new(None),
        quick(),
    );
    until(&mut events, "up").await;
    let started = pids(&dir.path().join("pids"));
    drop(handle);
    eventually("dropping the handle kills the process group", || {
        started.iter().all(|&p| !alive(p))
    })
    .await;
}

#[tokio::test]
async fn ngrok_gets_its_authtoken_in_the_environment_and_its_url_from_the_json_log() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(
        dir.path(),
        "ngrok",
        r#"
dir=$(dirname "$0")
echo "$*" > "$dir/args"
if [ "$NGROK_AUTHTOKEN" != "2tok_SECRET" ]; then
  echo '{"err":"authentication failed: no authtoken","lvl":"eror","msg":"session closing","obj":"tunnels.session"}'
  exit 1
fi
echo '{"lvl":"info","msg":"client session established","obj":"tunnels.session"}'
echo '{"addr":"http://127.0.0.1:1","lvl":"info","msg":"started tunnel","name":"command_line","obj":"tunnels","url":"https://1a2b-203-0-113-7.ngrok-free.app"}'
exec sleep 1000
"#,
    );
    let options = TunnelOptions {
        provider: Some(TunnelKind::Ngrok),
        binary: Some(bin),
        ngrok_authtoken: Some(Secret::new("2tok_SECRET")),
        ..TunnelOptions::default()
    };
    let (bus, mut events) = broadcast::channel(64);
    let handle = tunnel::start(
        TunnelSpec::from_options(&options).unwrap(),
        9999,
        bus,
        PublicUrl::new(None),
        quick(),
    );
    let up = until(&mut events, "up").await;
    assert_eq!(
        up.state,
        TunnelState::Up {
            url: "https://1a2b-203-0-113-7.ngrok-free.app".into()
        }
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(
        args.trim(),
        "http http://127.0.0.1:9999 --log stdout --log-format json"
    );
    assert!(
        !args.contains("SECRET"),
        "the token never goes on the command line"
    );
    handle.stop().await;
}

#[tokio::test]
async fn a_tunnel_that_prints_no_url_is_restarted_after_the_start_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let options = TunnelOptions {
        provider: Some(TunnelKind::Custom),
        command: Some(format!(
            "echo starting on {{port}} >> {}/log; echo 'still connecting…'; exec sleep 1000",
            dir.path().display()
        )),
        start_timeout: Some(Duration::from_millis(500)),
        ..TunnelOptions::default()
    };
    let (bus, mut events) = broadcast::channel(64);
    let handle = tunnel::start(
        TunnelSpec::from_options(&options).unwrap(),
        5555,
        bus,
        PublicUrl::new(None),
        quick(),
    );
    let down = until(&mut events, "down").await;
    let TunnelState::Down { reason } = &down.state else {
        unreachable!()
    };
    assert!(reason.contains("no public URL within 0.5s"), "{reason}");
    assert!(
        reason.contains("still connecting"),
        "the output explains it: {reason}"
    );
    until(&mut events, "reconnecting").await;
    until(&mut events, "down").await;
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert!(
        log.starts_with("starting on 5555\nstarting on 5555\n"),
        "{log}"
    );
    handle.stop().await;
}

#[tokio::test]
async fn a_missing_binary_is_reported_and_retried() {
    let options = TunnelOptions {
        provider: Some(TunnelKind::Cloudflared),
        binary: Some("/nonexistent/cloudflared".into()),
        ..TunnelOptions::default()
    };
    let (bus, mut events) = broadcast::channel(64);
    let handle = tunnel::start(
        TunnelSpec::from_options(&options).unwrap(),
        1,
        bus,
        PublicUrl::new(None),
        quick(),
    );
    let down = until(&mut events, "down").await;
    let TunnelState::Down { reason } = &down.state else {
        unreachable!()
    };
    assert!(reason.contains("was not found"), "{reason}");
    assert!(
        reason.contains("--tunnel-binary"),
        "says what to do: {reason}"
    );
    assert_eq!(next_tunnel(&mut events).await.state.name(), "reconnecting");
    handle.stop().await;
}

/// The whole runtime with a bore tunnel whose server is not there yet (a bore server on
/// 127.0.0.2, a loopback address of its own, so it does not clash with the one other tests
/// run on 127.0.0.1:7835): down and reconnecting on the bus, then up when the server appears,
/// and a Square delivery through the tunnel verifies against the tunnel's URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bore_server_that_appears_late_brings_the_tunnel_up_and_url_signatures_follow_it() {
    use hooklab_core::provider::{self, ProviderId, SignInput};
    use hooklab_core::store::sqlite::SqliteStore;
    use hooklab_core::verdict::Status;
    use hooklab_server::config::{Config, SourceConfig};
    use std::net::{IpAddr, Ipv4Addr};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    const KEY: &str = "Ibxx_5AKakO-3qeNVR61Dw";
    let server_ip = Ipv4Addr::new(127, 0, 0, 2);
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
    let mut config = Config {
        port: 0,
        ..Config::default()
    };
    config.sources.push(SourceConfig::new(
        "square",
        ProviderId::Square,
        vec![Secret::new(KEY)],
    ));
    config.tunnel = Some(TunnelOptions {
        provider: Some(TunnelKind::Bore),
        bore_server: Some(server_ip.to_string()),
        ..TunnelOptions::default()
    });
    let running = hooklab_server::runtime::start(config, store).await.unwrap();
    let mut events = running.subscribe();

    let down = until(&mut events, "down").await;
    let TunnelState::Down { reason } = &down.state else {
        unreachable!()
    };
    assert!(
        reason.contains("cannot open a bore tunnel at 127.0.0.2"),
        "{reason}"
    );
    until(&mut events, "reconnecting").await;

    let mut server = bore_cli::server::Server::new(1024..=65535, None);
    server.set_bind_addr(IpAddr::V4(server_ip));
    server.set_bind_tunnels(IpAddr::V4(server_ip));
    let bore = tokio::spawn(server.listen());

    let up = until(&mut events, "up").await;
    let TunnelState::Up { url } = &up.state else {
        unreachable!()
    };
    assert!(url.starts_with("http://127.0.0.2:"), "{url}");
    assert_eq!(running.tunnel_status().unwrap().state, up.state);

    // Square signs the URL it calls: the tunnel's. The Host header names something else, so
    // only the tunnel's URL can make the signature verify.
    let body = br#"{"event_id":"e-tunnel","type":"payment.updated"}"#;
    let signed_url = format!("{url}/square/n?k=1");
    let now = hooklab_core::clock::UnixMillis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
    );
    let mut input = SignInput::new(body, now);
    input.url = Some(&signed_url);
    let headers = provider::sign(
        ProviderId::Square,
        &Default::default(),
        &Secret::new(KEY),
        &input,
    )
    .unwrap()
    .headers_as_pairs();
    let mut request =
        b"POST /square/n?k=1 HTTP/1.1\r\nHost: edge.invalid\r\nConnection: close\r\n".to_vec();
    for (name, value) in &headers {
        request.extend_from_slice(format!("{name}: ").as_bytes());
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(body);
    let public = url.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(public).await.unwrap();
    conn.write_all(&request).await.unwrap();
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).await.unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    let delivery = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Ok(Event::Delivery(d)) = events.recv().await {
                return d;
            }
        }
    })
    .await
    .expect("the delivery is announced on the bus");
    assert_eq!(
        delivery.delivery.verdict,
        Status::Valid,
        "verified against {signed_url}: {}",
        delivery.verdict_summary
    );

    running.shutdown().await.unwrap();
    assert_eq!(
        until(&mut events, "stopped").await.state,
        TunnelState::Stopped
    );
    bore.abort();
}

#[tokio::test]
async fn a_secret_the_tool_echoes_never_reaches_the_down_reason() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(
        dir.path(),
        "ngrok",
        r#"
echo "{\"lvl\":\"eror\",\"msg\":\"authentication failed: token $NGROK_AUTHTOKEN is invalid\"}"
exit 1
"#,
    );
    let options = TunnelOptions {
        provider: Some(TunnelKind::Ngrok),
        binary: Some(bin),
        ngrok_authtoken: Some(Secret::new("2tok_SECRET_VALUE")),
        ..TunnelOptions::default()
    };
    let (bus, mut events) = broadcast::channel(64);
    let handle = tunnel::start(
        TunnelSpec::from_options(&options).unwrap(),
        1,
        bus,
        PublicUrl::new(None),
        quick(),
    );
    let down = until(&mut events, "down").await;
    let TunnelState::Down { reason } = &down.state else {
        unreachable!()
    };
    assert!(
        reason.contains("authentication failed: token *** is invalid"),
        "{reason}"
    );
    assert!(!reason.contains("SECRET_VALUE"), "{reason}");
    handle.stop().await;
}

mod control;
