//! Test harness: a real receiver on 127.0.0.1:0 over a real SQLite file in a temp dir, a tiny
//! hand-rolled HTTP/1.1 client over `TcpStream` (so tests control every byte), and helpers to
//! wait for a delivery's commit on the events bus.

use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, ProviderId, SignInput};
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{Delivery, Store};
use hooklab_server::clock::Clock;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::events::Event;
use hooklab_server::runtime::{self, Running};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::broadcast;

/// The pinned "now": received-at of every delivery and the tolerance's reference.
pub(crate) const NOW: UnixMillis = UnixMillis(1_700_000_000_000);
pub(crate) const STRIPE_SECRET: &str = "whsec_receiver_test_secret";
/// A small limit so "at the limit" and "one byte over" fit in socket buffers.
pub(crate) const LIMIT: u64 = 4096;
/// Long enough for a loaded CI machine, short enough to fail fast.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// Sources `stripe` (signed) and `plain` (generic-looking, no secret).
pub(crate) fn config() -> Config {
    Config {
        host: "127.0.0.1".into(),
        port: 0,
        body_limit: LIMIT,
        sources: vec![
            SourceConfig::new(
                "stripe",
                ProviderId::Stripe,
                vec![Secret::new(STRIPE_SECRET)],
            ),
            SourceConfig::new("plain", ProviderId::Github, Vec::new()),
        ],
        ..Config::default()
    }
}

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) sqlite: Arc<SqliteStore>,
    pub(crate) running: Option<Running>,
    events: broadcast::Receiver<Event>,
    _dir: TempDir,
}

pub(crate) async fn start(config: Config) -> Server {
    start_wrapped(config, |sqlite| sqlite).await
}

/// Starts with the SQLite store wrapped by `wrap` (to inject failures or delays).
pub(crate) async fn start_wrapped(
    config: Config,
    wrap: impl FnOnce(Arc<SqliteStore>) -> Arc<dyn Store>,
) -> Server {
    let dir = tempfile::tempdir().expect("a temp dir");
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).expect("open store"));
    let store = wrap(Arc::clone(&sqlite));
    let running = runtime::start_with_clock(config, store, Clock::fixed(NOW))
        .await
        .expect("the receiver starts");
    Server {
        addr: running.addr,
        events: running.subscribe(),
        sqlite,
        running: Some(running),
        _dir: dir,
    }
}

impl Server {
    /// Opens a connection, writes `request`, reads one response.
    pub(crate) async fn send(&self, request: &[u8]) -> Response {
        let mut stream = self.connect().await;
        stream.write_all(request).await.expect("write the request");
        read_response(&mut stream, &mut Vec::new())
            .await
            .expect("a response")
    }

    pub(crate) async fn connect(&self) -> TcpStream {
        TcpStream::connect(self.addr).await.expect("connect")
    }

    /// The next committed delivery announced on the bus, read back whole from the store.
    pub(crate) async fn next_delivery(&mut self) -> Delivery {
        let event = tokio::time::timeout(PATIENCE, self.events.recv())
            .await
            .expect("a delivery event in time")
            .expect("the bus is open");
        let Event::Delivery(event) = event else {
            panic!("unexpected event {event:?}");
        };
        self.sqlite
            .get(event.delivery.id)
            .await
            .expect("read back")
            .expect("the announced delivery is in the store")
    }

    /// Whether an event is waiting (without waiting for one).
    pub(crate) fn has_event(&mut self) -> bool {
        !self.events.is_empty()
    }

    pub(crate) async fn shutdown(mut self) {
        if let Some(running) = self.running.take() {
            running.shutdown().await.expect("a clean shutdown");
        }
    }
}

/// A parsed HTTP/1.1 response.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads one response from `stream`; `buf` carries bytes of the next one (pipelining).
pub(crate) async fn read_response(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
) -> std::io::Result<Response> {
    loop {
        let mut slots = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Response::new(&mut slots);
        if let httparse::Status::Complete(head_len) = parsed
            .parse(buf)
            .map_err(|e| std::io::Error::other(e.to_string()))?
        {
            let headers: Vec<(String, String)> = parsed
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_string(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect();
            let status = parsed.code.unwrap_or(0);
            let length: usize = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            while buf.len() < head_len + length {
                read_more(stream, buf).await?;
            }
            let body = buf[head_len..head_len + length].to_vec();
            buf.drain(..head_len + length);
            return Ok(Response {
                status,
                headers,
                body,
            });
        }
        read_more(stream, buf).await?;
    }
}

async fn read_more(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    let mut chunk = [0u8; 8192];
    let n = tokio::time::timeout(PATIENCE, stream.read(&mut chunk))
        .await
        .map_err(|_| std::io::Error::other("timed out waiting for the response"))??;
    if n == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

/// A request with `Host` first, the given header lines as written, then `Content-Length`.
pub(crate) fn request(
    method: &str,
    target: &str,
    headers: &[(&str, &[u8])],
    body: &[u8],
) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: hooklab.test\r\n").into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

/// Stripe's signature headers for `body`, signed at [`NOW`] with [`STRIPE_SECRET`].
pub(crate) fn stripe_headers(body: &[u8]) -> Vec<(String, Vec<u8>)> {
    provider::sign(
        ProviderId::Stripe,
        &Default::default(),
        &Secret::new(STRIPE_SECRET),
        &SignInput::new(body, NOW),
    )
    .expect("stripe signs")
    .headers_as_pairs()
}

/// `request` with owned header pairs.
pub(crate) fn request_owned(target: &str, headers: &[(String, Vec<u8>)], body: &[u8]) -> Vec<u8> {
    let borrowed: Vec<(&str, &[u8])> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()))
        .collect();
    request("POST", target, &borrowed, body)
}

/// The header lines of a recorded delivery, as (name, value) text pairs.
pub(crate) fn header_pairs(d: &Delivery) -> Vec<(String, String)> {
    d.record
        .headers
        .iter()
        .map(|h| {
            (
                h.name.clone(),
                String::from_utf8_lossy(&h.value).into_owned(),
            )
        })
        .collect()
}
