//! The answers, given only after the delivery is committed: the source's configured response
//! (after its delay), or one of Hooklab's own short plain-text answers.

use super::Source;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The answer for a committed delivery judged `status`.
pub(super) async fn after_commit(
    source: Option<&Source>,
    status: StatusCode,
    limit: u64,
) -> Response {
    let Some(source) = source else {
        return plain(
            status,
            "no source with this name is configured on this Hooklab receiver; \
             the request was recorded\n",
        );
    };
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return plain(
            status,
            &format!(
                "the request body exceeds the limit of {limit} bytes; \
                 its headers and size were recorded\n"
            ),
        );
    }
    let delay = source.config.response.delay_ms;
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    if status == StatusCode::UNAUTHORIZED {
        return plain(status, "invalid signature; the request was recorded\n");
    }
    configured(source, status)
}

/// The source's configured response (headers were validated with the config).
fn configured(source: &Source, status: StatusCode) -> Response {
    let response = &source.config.response;
    let mut out = (status, response.body.clone()).into_response();
    let headers = out.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    for (name, value) in &response.headers {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(value)) => {
                headers.append(name, value);
            }
            _ => tracing::debug!(header = %name, "skipping an invalid configured header"),
        }
    }
    out
}

/// Storage failed: nothing was acknowledged, the sender should retry.
pub(super) fn unavailable() -> Response {
    plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "Hooklab could not record this request, so it was not accepted; please retry\n",
    )
}

/// A short plain-text answer of Hooklab's own (never HTML, never sniffed).
pub(super) fn plain(status: StatusCode, text: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        text.to_string(),
    )
        .into_response()
}
