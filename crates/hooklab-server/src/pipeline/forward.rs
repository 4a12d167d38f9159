//! The built-in handler: forwards a recorded delivery to the developer's app, as the gateway
//! sent it, and records the app's answer.
//!
//! What the app receives:
//! - the original **method**;
//! - the original **headers**, in arrival order (HTTP/1 names are case-insensitive: they
//!   arrive lowercase, and repeated names are sent together), minus the hop-by-hop ones
//!   (`Connection` and the headers it names, `Keep-Alive`, `Transfer-Encoding`, `TE`,
//!   `Trailer`, `Upgrade`, `Proxy-*`); `Host` and `Content-Length` are set for the new hop;
//! - the **exact body bytes**, so the app can verify the signature itself;
//! - `X-Hooklab-Delivery: <delivery id>` and `X-Hooklab-Attempt: <n>` (any such headers from
//!   the sender are dropped first).
//!
//! Where: the target URL exactly as configured, with the delivery's query string appended
//! (joined with `&` when the target has a query of its own). The path under `/{source}` is not
//! appended: a source forwards to one endpoint, as a gateway posts to one URL.
//!
//! What is recorded: status, response headers, the first [`RESPONSE_BODY_CAP`] bytes of the
//! body, latency, and why the attempt failed. Success is 2xx, or exactly 200 where the source
//! says so ([`SuccessPolicy`]). Plain HTTP only: an `https://` target is refused (no TLS stack
//! is linked in yet).

use super::handler::{Handler, HandlerContext, HandlerResult};
use crate::config::{SuccessPolicy, check_forward_url};
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri};
use bytes::Bytes;
use hooklab_core::request::Header;
use hooklab_core::retry::format_duration;
use hooklab_core::store::{AttemptRecord, BoxFuture};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;
use tokio::time::{Instant, timeout_at};

/// How much of the app's response body is kept.
pub const RESPONSE_BODY_CAP: usize = 64 * 1024;

/// Request headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and
/// the ones this hop sets itself.
const NOT_FORWARDED: &[&str] = &[
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
    "x-hooklab-delivery",
    "x-hooklab-attempt",
];

/// Forwards deliveries to one target URL. Cheap to share; keeps connections to the app alive.
#[derive(Debug, Clone)]
pub struct ForwardHandler {
    client: Client<HttpConnector, Full<Bytes>>,
    target: Uri,
    success: SuccessPolicy,
    timeout: Duration,
}

impl ForwardHandler {
    /// A handler for `target` (an absolute `http://` URL; see
    /// [`crate::config::check_forward_url`] for the errors) with a per-attempt `timeout`.
    pub fn new(target: &str, success: SuccessPolicy, timeout: Duration) -> Result<Self, String> {
        let target = check_forward_url(target)?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Ok(Self {
            client,
            target,
            success,
            timeout,
        })
    }

    pub fn target(&self) -> &Uri {
        &self.target
    }

    async fn forward(&self, ctx: &HandlerContext<'_>) -> HandlerResult {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let record = &ctx.delivery.record;
        let uri = match with_query(&self.target, record.query.as_deref()) {
            Ok(uri) => uri,
            Err(e) => return self.failed(ctx, started, e),
        };
        let target = uri.to_string();
        let request = match build_request(ctx, uri) {
            Ok(request) => request,
            Err(e) => return self.failed(ctx, started, e),
        };
        let response = match timeout_at(deadline, self.client.request(request)).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                let why = format!("could not reach {target}: {}", error_chain(&e));
                return self.failed(ctx, started, why);
            }
            Err(_) => {
                let why = format!("no answer within {}", format_duration(self.timeout));
                return self.failed(ctx, started, why);
            }
        };
        let status = response.status().as_u16();
        let response_headers = response
            .headers()
            .iter()
            .map(|(n, v)| Header::new(n.as_str(), v.as_bytes()))
            .collect();
        let (response_body, body_error) = read_capped(response.into_body(), deadline).await;
        let error = if self.success.accepts(status) {
            if let Some(e) = body_error {
                tracing::debug!(delivery = ctx.delivery.id, "{e} (the status counts)");
            }
            None
        } else {
            Some(match self.success {
                SuccessPolicy::Any2xx => format!("HTTP {status} is not a success (2xx expected)"),
                SuccessPolicy::Only200 => {
                    format!("HTTP {status} is not a success: this source counts only 200")
                }
            })
        };
        HandlerResult {
            success: error.is_none(),
            record: AttemptRecord {
                started_at: ctx.started_at,
                duration_ms: elapsed_ms(started),
                target: Some(target),
                status: Some(status),
                response_headers,
                response_body,
                error,
            },
        }
    }

    fn failed(&self, ctx: &HandlerContext<'_>, started: Instant, why: String) -> HandlerResult {
        let mut result = HandlerResult::failed(ctx.started_at, elapsed_ms(started), why);
        result.record.target = Some(self.target.to_string());
        result
    }
}

impl Handler for ForwardHandler {
    fn handle<'a>(&'a self, ctx: &'a HandlerContext<'a>) -> BoxFuture<'a, HandlerResult> {
        Box::pin(self.forward(ctx))
    }
}

/// The target with the delivery's query string appended.
pub(crate) fn with_query(target: &Uri, query: Option<&str>) -> Result<Uri, String> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Ok(target.clone());
    };
    let path = target.path();
    let joined = match target.query() {
        Some(own) if !own.is_empty() => format!("{path}?{own}&{query}"),
        _ => format!("{path}?{query}"),
    };
    let mut parts = target.clone().into_parts();
    parts.path_and_query = Some(
        joined
            .parse()
            .map_err(|e| format!("the delivery's query string cannot be forwarded: {e}"))?,
    );
    Uri::from_parts(parts).map_err(|e| format!("the forward URL cannot be built: {e}"))
}

/// The headers to send on: the original ones in order, minus hop-by-hop ones (and those the
/// `Connection` header names), plus Hooklab's two. Values that are not valid HTTP are skipped.
pub(crate) fn forward_headers(
    original: &[Header],
    delivery: i64,
    attempt: u32,
) -> Vec<(HeaderName, HeaderValue)> {
    let named_by_connection: Vec<String> = original
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("connection"))
        .filter_map(|h| h.value_str())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let mut out: Vec<(HeaderName, HeaderValue)> = original
        .iter()
        .filter(|h| {
            let lower = h.name.to_ascii_lowercase();
            !NOT_FORWARDED.contains(&lower.as_str())
                && !lower.starts_with("proxy-")
                && !named_by_connection.contains(&lower)
        })
        .filter_map(|h| {
            let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
            let value = HeaderValue::from_bytes(&h.value).ok()?;
            Some((name, value))
        })
        .collect();
    out.push((
        HeaderName::from_static("x-hooklab-delivery"),
        HeaderValue::from(delivery),
    ));
    out.push((
        HeaderName::from_static("x-hooklab-attempt"),
        HeaderValue::from(attempt),
    ));
    out
}

fn build_request(ctx: &HandlerContext<'_>, uri: Uri) -> Result<Request<Full<Bytes>>, String> {
    let record = &ctx.delivery.record;
    let method = Method::from_bytes(record.method.as_bytes())
        .map_err(|_| format!("method `{}` cannot be forwarded", record.method))?;
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .body(Full::new(Bytes::from(record.body.clone())))
        .map_err(|e| format!("the request cannot be built: {e}"))?;
    let headers = request.headers_mut();
    for (name, value) in forward_headers(&record.headers, ctx.delivery.id, ctx.attempt) {
        headers.append(name, value);
    }
    Ok(request)
}

/// The first [`RESPONSE_BODY_CAP`] bytes of `body`, and why reading stopped early, if it did.
async fn read_capped(
    mut body: hyper::body::Incoming,
    deadline: Instant,
) -> (Vec<u8>, Option<String>) {
    let mut kept = Vec::new();
    while kept.len() < RESPONSE_BODY_CAP {
        match timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    let room = RESPONSE_BODY_CAP - kept.len();
                    kept.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            Ok(Some(Err(e))) => {
                return (kept, Some(format!("reading the answer failed: {e}")));
            }
            Ok(None) => break,
            Err(_) => {
                return (
                    kept,
                    Some("the answer's body did not finish in time".into()),
                );
            }
        }
    }
    (kept, None)
}

/// An error and its causes, e.g. "client error (Connect): tcp connect error: Connection
/// refused (os error 111)".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
