//! The "developer app" the pipeline benchmark forwards to: an axum server in its own process
//! (`hooklab-bench app-server`) that reads each request's body, counts it and answers 200.
//! `GET /count` answers the number of requests counted so far (itself not counted). With
//! `--mode`, it is instead the replay lab's test app (`hooklab_server::lab::app`).

use crate::cpu;
use crate::receiver::Receiver;
use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Binds `host:port`, prints `{"ready":{"receiver":"http://ADDR"}}` (like the bare server),
/// then serves until killed.
pub(crate) fn serve(host: &str, port: u16) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host, port)).await?;
        let addr = listener.local_addr()?;
        println!("{{\"ready\":{{\"receiver\":\"http://{addr}\"}}}}");
        let counter = Arc::new(AtomicU64::new(0));
        let app = Router::new()
            .route("/count", get(count))
            .fallback(accept)
            .with_state(counter);
        axum::serve(listener, app).await?;
        Ok(())
    })
}

/// The replay lab's test app (`app-server --mode …`), with the same ready line.
pub(crate) fn serve_lab(
    host: &str,
    port: u16,
    options: hooklab_server::lab::app::AppOptions,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host, port)).await?;
        let addr = listener.local_addr()?;
        println!("{{\"ready\":{{\"receiver\":\"http://{addr}\"}}}}");
        eprintln!(
            "{:?} webhook handler on http://{addr}/ (any path); side effects at http://{addr}/count",
            options.mode
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        hooklab_server::lab::app::serve(listener, options, shutdown).await?;
        Ok(())
    })
}

/// A forwarded event: read it, count it, accept it.
async fn accept(State(counter): State<Arc<AtomicU64>>, body: Bytes) -> StatusCode {
    std::hint::black_box(body.len());
    counter.fetch_add(1, Ordering::Relaxed);
    StatusCode::OK
}

async fn count(State(counter): State<Arc<AtomicU64>>) -> String {
    counter.load(Ordering::Relaxed).to_string()
}

/// A running app process.
pub(crate) struct App {
    server: Receiver,
}

impl App {
    pub(crate) fn start() -> anyhow::Result<Self> {
        Ok(Self {
            server: Receiver::app()?,
        })
    }

    /// The URL to give `hooklab listen --forward-to`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/", self.server.addr)
    }

    /// The app process's CPU time so far (Linux only).
    pub(crate) fn cpu(&self) -> Option<Duration> {
        cpu::process_cpu(self.server.pid())
    }

    /// How many requests the app has received so far (one short `GET /count` connection).
    pub(crate) async fn count(&self) -> anyhow::Result<u64> {
        let addr: SocketAddr = self.server.addr;
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .context("connecting to the app")?;
        s.write_all(
            format!("GET /count HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await?;
        let mut response = String::new();
        s.read_to_string(&mut response).await?;
        parse_count(&response).with_context(|| format!("unexpected /count answer: {response:?}"))
    }

    pub(crate) fn stop(self) {
        self.server.stop();
    }
}

/// The number in the body of a `200` answer.
fn parse_count(response: &str) -> Option<u64> {
    let (head, body) = response.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    body.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_count_answer() {
        let r = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\n20000";
        assert_eq!(super::parse_count(r), Some(20_000));
        assert_eq!(super::parse_count("HTTP/1.1 404 Not Found\r\n\r\n"), None);
    }
}
