//! Injecting copies of one request: N copies one after another (with an interval), or a true
//! concurrent race — every connection opened first, then every request written at once, so the
//! copies really arrive together. Each copy's outcome (status, latency, a hash of the response
//! body) is kept, so a caller can see whether a handler answered copies differently. Used by
//! `hooklab inject`, `POST /api/inject` and the UI's race panel; [`run`] adds the
//! idempotency oracle's verdict ([`crate::lab::oracle`]).

use sha2::Digest as _;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

/// How long one copy may wait for its whole answer.
pub const COPY_TIMEOUT: Duration = Duration::from_secs(60);

/// How to send the copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One after another, waiting `interval` between the end of one and the start of the next.
    Sequential { interval: Duration },
    /// All connections opened first, then every request written at once.
    Concurrent,
}

/// What one copy got.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct CopyResult {
    /// 0-based, in the order the copies were prepared.
    pub copy: usize,
    /// The status answered; `None` when the connection failed (`error` says why).
    pub status: Option<u16>,
    /// From the first byte written to the last byte read.
    pub latency_ms: f64,
    /// SHA-256 of the response body, hex (the first 16 characters): equal bodies, equal hashes.
    pub body_sha256: Option<String>,
    pub error: Option<String>,
}

/// Sends `copies` copies of `request` (a whole HTTP/1.1 request with `Connection: close`) to
/// `addr`, as `mode` says; the results in copy order.
pub async fn send_copies(addr: &str, request: &[u8], copies: usize, mode: Mode) -> Vec<CopyResult> {
    match mode {
        Mode::Sequential { interval } => {
            let mut results = Vec::with_capacity(copies);
            for copy in 0..copies {
                if copy > 0 && !interval.is_zero() {
                    tokio::time::sleep(interval).await;
                }
                let result = match TcpStream::connect(addr).await {
                    Ok(stream) => exchange(copy, stream, request, None).await,
                    Err(e) => failed(copy, e),
                };
                results.push(result);
            }
            results
        }
        Mode::Concurrent => {
            let barrier = std::sync::Arc::new(Barrier::new(copies.max(1)));
            let request = std::sync::Arc::new(request.to_vec());
            let tasks: Vec<_> = (0..copies)
                .map(|copy| {
                    let barrier = std::sync::Arc::clone(&barrier);
                    let request = std::sync::Arc::clone(&request);
                    let addr = addr.to_string();
                    tokio::spawn(async move {
                        // Connect first; everyone waits at the barrier, connected or not, so a
                        // failed connection never blocks the others.
                        let stream = TcpStream::connect(&addr).await;
                        match stream {
                            Ok(stream) => exchange(copy, stream, &request, Some(&barrier)).await,
                            Err(e) => {
                                barrier.wait().await;
                                failed(copy, e)
                            }
                        }
                    })
                })
                .collect();
            let mut results = Vec::with_capacity(copies);
            for (copy, task) in tasks.into_iter().enumerate() {
                results.push(task.await.unwrap_or_else(|e| CopyResult {
                    copy,
                    status: None,
                    latency_ms: 0.0,
                    body_sha256: None,
                    error: Some(format!("the copy's task failed: {e}")),
                }));
            }
            results
        }
    }
}

fn failed(copy: usize, e: std::io::Error) -> CopyResult {
    CopyResult {
        copy,
        status: None,
        latency_ms: 0.0,
        body_sha256: None,
        error: Some(e.to_string()),
    }
}

async fn exchange(
    copy: usize,
    mut stream: TcpStream,
    request: &[u8],
    barrier: Option<&Barrier>,
) -> CopyResult {
    if let Some(barrier) = barrier {
        barrier.wait().await;
    }
    let started = Instant::now();
    let outcome = async {
        stream.write_all(request).await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let outcome = match tokio::time::timeout(COPY_TIMEOUT, outcome).await {
        Ok(outcome) => outcome,
        Err(_) => Err(std::io::Error::other(format!(
            "no answer within {} s",
            COPY_TIMEOUT.as_secs()
        ))),
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(response) => {
            let split = response
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(response.len(), |i| i + 4);
            let status = std::str::from_utf8(&response[..split.min(response.len())])
                .ok()
                .and_then(|head| head.split_whitespace().nth(1))
                .and_then(|code| code.parse().ok());
            let digest = sha2::Sha256::digest(&response[split.min(response.len())..]);
            CopyResult {
                copy,
                status,
                latency_ms,
                body_sha256: Some(hex::encode(&digest[..8])),
                error: status
                    .is_none()
                    .then(|| "the answer is not HTTP".to_string()),
            }
        }
        Err(e) => CopyResult {
            latency_ms,
            ..failed(copy, e)
        },
    }
}

/// What the copies add up to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub copies: usize,
    /// How many copies got each status (failed connections under `null`).
    pub statuses: std::collections::BTreeMap<String, usize>,
    /// How many different response bodies came back: more than one means the handler answered
    /// copies of the same event differently.
    pub distinct_bodies: usize,
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_max: f64,
}

pub fn summarise(results: &[CopyResult]) -> Summary {
    let mut statuses = std::collections::BTreeMap::new();
    for r in results {
        let key = r
            .status
            .map_or_else(|| "failed".to_string(), |s| s.to_string());
        *statuses.entry(key).or_insert(0) += 1;
    }
    let bodies: std::collections::BTreeSet<&str> = results
        .iter()
        .filter_map(|r| r.body_sha256.as_deref())
        .collect();
    let mut latencies: Vec<f64> = results.iter().map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    let at = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    Summary {
        copies: results.len(),
        statuses,
        distinct_bodies: bodies.len(),
        latency_ms_p50: at(0.50),
        latency_ms_p99: at(0.99),
        latency_ms_max: latencies.last().copied().unwrap_or(0.0),
    }
}

impl Mode {
    /// `concurrent` or `sequential`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sequential { .. } => "sequential",
            Self::Concurrent => "concurrent",
        }
    }
}

/// Copies of one request, every copy's result, and what they say about the handler.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct InjectReport {
    /// Where the copies went.
    pub to: String,
    /// `concurrent` (a true race) or `sequential`.
    pub mode: String,
    /// The copies' idempotency key (the event id, or a resource-based key).
    pub key: Option<String>,
    pub summary: Summary,
    /// Every copy's result, in copy order.
    pub copies: Vec<CopyResult>,
    /// Whether the handler behaved as if it saw the event once.
    pub oracle: crate::lab::oracle::OracleReport,
}

/// Sends `copies` copies of `request` as `mode` says, reading `probe` (the side-effect count)
/// before and after when given, and judges the handler.
pub async fn run(
    request: &crate::lab::Outgoing,
    copies: usize,
    mode: Mode,
    probe: Option<&crate::lab::Target>,
) -> Result<InjectReport, crate::lab::LabError> {
    use crate::lab::oracle::{KeyCopies, judge, read_probe};
    let before = match probe {
        Some(p) => Some(read_probe(p).await?),
        None => None,
    };
    let results = send_copies(&request.target.addr(), &request.bytes(), copies, mode).await;
    let counts = match (probe, before) {
        (Some(p), Some(before)) => Some((before, read_probe(p).await?)),
        _ => None,
    };
    let oracle = judge(
        &[KeyCopies {
            key: request.key.as_deref(),
            results: &results,
        }],
        counts,
    );
    Ok(InjectReport {
        to: request.target.url.clone(),
        mode: mode.as_str().to_string(),
        key: request.key.clone(),
        summary: summarise(&results),
        copies: results,
        oracle,
    })
}
