//! A closed-loop HTTP/1.1 load generator over raw keep-alive TCP connections.
//!
//! Each connection sends one request, reads the whole response, and sends the next: requests
//! per second is what the server sustains at that concurrency, and the latency is measured
//! from the first byte written to the last byte read. Being closed-loop, it does not count
//! the time a request would have waited to be sent (coordinated omission); p99 is therefore a
//! lower bound on what an open-loop client would see.

use crate::app::App;
use crate::cpu;
use crate::events::StripeEvents;
use anyhow::Context;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) struct LoadConfig {
    pub(crate) connections: usize,
    pub(crate) warmup: Duration,
    pub(crate) duration: Duration,
    pub(crate) body_size: usize,
    pub(crate) secret: String,
    pub(crate) path: String,
    /// The `type` of every event sent.
    pub(crate) event_type: String,
}

/// What one run measured (the measuring window only).
pub(crate) struct LoadResult {
    /// Responses with a 2xx status.
    pub(crate) ok: u64,
    /// Responses with any other status.
    pub(crate) non_2xx: u64,
    /// Connection errors (each followed by a reconnect).
    pub(crate) io_errors: u64,
    pub(crate) elapsed: Duration,
    /// CPU time the receiver process used during the window (Linux only).
    pub(crate) server_cpu: Option<Duration>,
    /// CPU time this load generator used during the window (Linux only).
    pub(crate) client_cpu: Option<Duration>,
    /// When a developer app was watched: its CPU time and the requests it received during the
    /// window (the forwards the worker completed meanwhile).
    pub(crate) app: Option<AppWindow>,
    /// Latency of every measured response, in microseconds, sorted.
    pub(crate) latencies_us: Vec<u32>,
}

/// What the developer app did during the measuring window.
pub(crate) struct AppWindow {
    pub(crate) cpu: Option<Duration>,
    pub(crate) received: u64,
}

impl LoadResult {
    fn empty(latency_capacity: usize) -> Self {
        Self {
            ok: 0,
            non_2xx: 0,
            io_errors: 0,
            elapsed: Duration::ZERO,
            server_cpu: None,
            client_cpu: None,
            app: None,
            latencies_us: Vec::with_capacity(latency_capacity),
        }
    }

    /// Adds one connection's counts and latencies.
    fn absorb(&mut self, part: LoadResult) {
        self.ok += part.ok;
        self.non_2xx += part.non_2xx;
        self.io_errors += part.io_errors;
        self.latencies_us.extend(part.latencies_us);
    }

    pub(crate) fn rps(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU microseconds per answered request, for `cpu` measured over the window.
    pub(crate) fn cpu_us_per_request(&self, cpu: Option<Duration>) -> Option<f64> {
        let answered = self.ok + self.non_2xx;
        cpu.filter(|_| answered > 0)
            .map(|c| c.as_secs_f64() * 1e6 / answered as f64)
    }

    /// The `q` quantile (0..=1) of the latency, in milliseconds.
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let rank = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        f64::from(self.latencies_us[rank]) / 1000.0
    }
}

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// A tokio runtime for the load generator. As many worker threads as cores: the client
/// competes with the server for them, which is the point of measuring every receiver the same
/// way on the same machine.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Runs the workload against the receiver at `addr` (process `server_pid`) and returns what
/// the measuring window saw. With `app`, also what the developer app received meanwhile.
pub(crate) fn run(
    addr: SocketAddr,
    server_pid: u32,
    cfg: &LoadConfig,
    app: Option<&App>,
) -> anyhow::Result<LoadResult> {
    runtime()?.block_on(run_async(addr, server_pid, cfg, app))
}

async fn run_async(
    addr: SocketAddr,
    server_pid: u32,
    cfg: &LoadConfig,
    app: Option<&App>,
) -> anyhow::Result<LoadResult> {
    let events = Arc::new(StripeEvents::new(
        &cfg.secret,
        cfg.body_size,
        &cfg.event_type,
    ));
    let phase = Arc::new(AtomicU8::new(WARMUP));
    let seq = Arc::new(AtomicU64::new(0));
    let tasks = spawn_connections(addr, cfg, &events, &phase, &seq, u64::MAX);
    tokio::time::sleep(cfg.warmup).await;
    let me = std::process::id();
    let app_before = match app {
        Some(app) => Some((app.cpu(), app.count().await?)),
        None => None,
    };
    let (server_before, client_before) = (cpu::process_cpu(server_pid), cpu::process_cpu(me));
    phase.store(MEASURE, Ordering::SeqCst);
    let started = Instant::now();
    tokio::time::sleep(cfg.duration).await;
    phase.store(STOP, Ordering::SeqCst);
    let elapsed = started.elapsed();
    let (server_after, client_after) = (cpu::process_cpu(server_pid), cpu::process_cpu(me));
    let app_window = match (app, app_before) {
        (Some(app), Some((cpu_before, count_before))) => Some(AppWindow {
            cpu: delta(cpu_before, app.cpu()),
            received: app.count().await?.saturating_sub(count_before),
        }),
        _ => None,
    };

    let mut total = LoadResult {
        elapsed,
        server_cpu: delta(server_before, server_after),
        client_cpu: delta(client_before, client_after),
        app: app_window,
        ..LoadResult::empty(0)
    };
    for task in tasks {
        total.absorb(task.await.context("load task panicked")?);
    }
    total.latencies_us.sort_unstable();
    Ok(total)
}

/// Sends exactly `total` distinct events as fast as the connections go (no warm-up: every
/// request is measured) and returns when the last response has been read; `elapsed` is the
/// time from the first request to that last acknowledgement. The CPU fields are left empty
/// (the caller measures over a longer span).
pub(crate) async fn burst(
    addr: SocketAddr,
    cfg: &LoadConfig,
    total: u64,
) -> anyhow::Result<LoadResult> {
    let events = Arc::new(StripeEvents::new(
        &cfg.secret,
        cfg.body_size,
        &cfg.event_type,
    ));
    let phase = Arc::new(AtomicU8::new(MEASURE));
    let seq = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks = spawn_connections(addr, cfg, &events, &phase, &seq, total);
    let mut result = LoadResult::empty(usize::try_from(total).unwrap_or(0));
    for task in tasks {
        result.absorb(task.await.context("load task panicked")?);
    }
    result.elapsed = started.elapsed();
    result.latencies_us.sort_unstable();
    Ok(result)
}

fn delta(before: Option<Duration>, after: Option<Duration>) -> Option<Duration> {
    Some(after?.saturating_sub(before?))
}

/// `cfg.connections` connection tasks sharing one event sequence; each stops once the
/// sequence reaches `limit` (or when `phase` says stop).
fn spawn_connections(
    addr: SocketAddr,
    cfg: &LoadConfig,
    events: &Arc<StripeEvents>,
    phase: &Arc<AtomicU8>,
    seq: &Arc<AtomicU64>,
    limit: u64,
) -> Vec<tokio::task::JoinHandle<LoadResult>> {
    (0..cfg.connections)
        .map(|_| {
            let (events, phase, seq, path) =
                (events.clone(), phase.clone(), seq.clone(), cfg.path.clone());
            tokio::spawn(async move { connection(addr, &path, &events, &phase, &seq, limit).await })
        })
        .collect()
}

/// One keep-alive connection's loop; reconnects after an error, gives up after 100 in a row.
/// Stops when `phase` is [`STOP`] or once event number `limit` would be next.
async fn connection(
    addr: SocketAddr,
    path: &str,
    events: &StripeEvents,
    phase: &AtomicU8,
    seq: &AtomicU64,
    limit: u64,
) -> LoadResult {
    let mut mine = LoadResult::empty(1 << 14);
    let host = addr.to_string();
    let mut request = Vec::with_capacity(2048);
    let mut buf = Vec::with_capacity(8192);
    let mut stream: Option<TcpStream> = None;
    let mut failures_in_a_row = 0;
    loop {
        let now_phase = phase.load(Ordering::Relaxed);
        if now_phase == STOP || failures_in_a_row >= 100 {
            return mine;
        }
        if stream.is_none() {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    buf.clear();
                    stream = Some(s);
                }
                Err(_) => {
                    mine.io_errors += 1;
                    failures_in_a_row += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let s = stream.as_mut().expect("connected above");
        let n = seq.fetch_add(1, Ordering::Relaxed);
        if n >= limit {
            return mine;
        }
        events.request(&mut request, &host, path, n);
        let t0 = Instant::now();
        let outcome = match s.write_all(&request).await {
            Ok(()) => read_response(s, &mut buf).await,
            Err(e) => Err(e),
        };
        let latency = t0.elapsed();
        match outcome {
            Ok(response) => {
                failures_in_a_row = 0;
                if now_phase == MEASURE {
                    if (200..300).contains(&response.status) {
                        mine.ok += 1;
                    } else {
                        mine.non_2xx += 1;
                    }
                    mine.latencies_us
                        .push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
                }
                if response.close {
                    stream = None;
                }
            }
            Err(_) => {
                mine.io_errors += 1;
                failures_in_a_row += 1;
                stream = None;
            }
        }
    }
}

pub(crate) struct Response {
    pub(crate) status: u16,
    /// The server said `Connection: close`.
    pub(crate) close: bool,
}

/// Reads exactly one response (Content-Length or chunked body) from `s`; bytes past it stay in
/// `buf` for the next call.
pub(crate) async fn read_response(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Response> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        fill(s, buf).await?;
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(invalid)?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| invalid("bad status line"))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    let end = if chunked {
        let mut pos = head_end;
        loop {
            let line_end = loop {
                if let Some(i) = find(&buf[pos..], b"\r\n") {
                    break pos + i;
                }
                fill(s, buf).await?;
            };
            let size_text = std::str::from_utf8(&buf[pos..line_end]).map_err(invalid)?;
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(invalid)?;
            pos = line_end + 2;
            // A chunk's data and its CRLF; the last chunk (size 0) is followed by a blank line
            // (trailers are not expected from these servers).
            while buf.len() < pos + size + 2 {
                fill(s, buf).await?;
            }
            pos += size + 2;
            if size == 0 {
                break pos;
            }
        }
    } else {
        let end = head_end + length.unwrap_or(0);
        while buf.len() < end {
            fill(s, buf).await?;
        }
        end
    };
    buf.drain(..end);
    Ok(Response { status, close })
}

async fn fill(s: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut chunk = [0u8; 4096];
    let n = s.read(&mut chunk).await?;
    if n == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn invalid(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}

/// The HTTP table: both receivers and the ratio.
pub(crate) fn print_table(bare: &LoadResult, durable: Option<&LoadResult>) {
    println!("## Receiver throughput\n");
    println!(
        "| Receiver | requests/s | p50 ms | p99 ms | p99.9 ms | receiver CPU µs/req | \
         load-generator CPU µs/req | non-2xx | I/O errors |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let us = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}"));
    let rows = [
        Some(("bare axum, no storage", bare)),
        durable.map(|d| ("hooklab listen, durable SQLite", d)),
    ];
    for (name, r) in rows.into_iter().flatten() {
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} |",
            r.rps(),
            r.quantile_ms(0.50),
            r.quantile_ms(0.99),
            r.quantile_ms(0.999),
            us(r.cpu_us_per_request(r.server_cpu)),
            us(r.cpu_us_per_request(r.client_cpu)),
            r.non_2xx,
            r.io_errors
        );
    }
    let Some(durable) = durable else {
        println!();
        return;
    };
    println!(
        "\n**durable / bare throughput: {:.1} %** (p99 {:.2} ms vs {:.2} ms)\n",
        100.0 * durable.rps() / bare.rps(),
        durable.quantile_ms(0.99),
        bare.quantile_ms(0.99)
    );
}
