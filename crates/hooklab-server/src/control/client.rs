//! The CLI's side of the control API: one authenticated `GET` (or JSON `POST`) to a running
//! instance found through its [`Discovery`] file, answering JSON. Plain HTTP on loopback;
//! bounded by a timeout.

use super::discovery::Discovery;
use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderValue, Method, Request};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// How long one call may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How long a `POST` may take: sending a test event waits for the receiver's answer, which a
/// source may delay on purpose.
const POST_TIMEOUT: Duration = Duration::from_secs(40);
/// The largest answer read.
const BODY_CAP: usize = 1024 * 1024;

/// Why the running instance could not be asked. Messages never contain the token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlClientError {
    #[error(
        "no running instance answers at {url} (it may have stopped without cleaning up): {reason}"
    )]
    Unreachable { url: String, reason: String },
    #[error("the control API answered {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("the control API's answer is not JSON: {0}")]
    BadAnswer(String),
}

/// `GET {discovery.url}{path}` with the token; the JSON answer of a 2xx.
pub async fn get(
    discovery: &Discovery,
    path: &str,
) -> Result<serde_json::Value, ControlClientError> {
    call(discovery, Method::GET, path, None).await
}

/// `POST {discovery.url}{path}` with the token and a JSON body; the JSON answer of a 2xx.
pub async fn post(
    discovery: &Discovery,
    path: &str,
    body: &serde_json::Value,
) -> Result<serde_json::Value, ControlClientError> {
    call(discovery, Method::POST, path, Some(body)).await
}

async fn call(
    discovery: &Discovery,
    method: Method,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<serde_json::Value, ControlClientError> {
    let url = format!("{}{path}", discovery.url);
    let unreachable = |reason: String| ControlClientError::Unreachable {
        url: discovery.url.clone(),
        reason,
    };
    let mut auth = HeaderValue::try_from(format!("Bearer {}", discovery.token.expose()))
        .map_err(|_| ControlClientError::BadAnswer("the token is not a valid header".into()))?;
    auth.set_sensitive(true);
    let payload = match body {
        Some(value) => Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        None => Bytes::new(),
    };
    let mut request = Request::builder()
        .method(method)
        .uri(&url)
        .header(AUTHORIZATION, auth)
        .header(ACCEPT, "application/json");
    if body.is_some() {
        request = request.header(CONTENT_TYPE, "application/json");
    }
    let request = request
        .body(Full::new(payload))
        .map_err(|e| unreachable(e.to_string()))?;
    let client = Client::builder(TokioExecutor::new()).build_http();
    let call = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| unreachable(format!("{e}")))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), BODY_CAP)
            .collect()
            .await
            .map_err(|e| unreachable(e.to_string()))?
            .to_bytes();
        let value: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| ControlClientError::BadAnswer(e.to_string()))?;
        if !status.is_success() {
            let message = value["message"].as_str().unwrap_or("").to_string();
            return Err(ControlClientError::Refused {
                status: status.as_u16(),
                message,
            });
        }
        Ok(value)
    };
    let limit = if body.is_some() {
        POST_TIMEOUT
    } else {
        TIMEOUT
    };
    tokio::time::timeout(limit, call)
        .await
        .map_err(|_| unreachable(format!("no answer within {}s", limit.as_secs())))?
}
