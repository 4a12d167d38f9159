//! The reconciler's HTTP client: authenticated `GET`s that answer JSON, over hyper's legacy
//! client with plain HTTP only (no TLS stack is linked in: an `https://` base URL is refused
//! with [`ReconcileError::TlsUnsupported`] before any connection). Every call is bounded by a
//! timeout that covers the connection, the head and the body; bodies are capped. The bearer
//! credential is marked sensitive and scrubbed from every error message.

use super::ReconcileError;
use axum::http::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use axum::http::{HeaderValue, Request, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::time::Duration;

/// How long one provider call may take, connection to last body byte.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest response body read (a Stripe events page is about 100 KiB).
const BODY_CAP: usize = 8 * 1024 * 1024;

/// One provider's HTTP access: who it is (for messages), the client and the timeout.
#[derive(Clone)]
pub(crate) struct JsonGet {
    /// The provider's name as people write it, e.g. `Stripe`, first in every error.
    provider: &'static str,
    client: Client<HttpConnector, Empty<Bytes>>,
    timeout: Duration,
}

/// A JSON answer: 2xx with its body, or 404.
pub(crate) enum Answer {
    Found(Value),
    NotFound,
}

impl JsonGet {
    pub(crate) fn new(provider: &'static str) -> Self {
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(HttpConnector::new());
        Self {
            provider,
            client,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub(crate) fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `GET url` with `Authorization: Bearer <bearer>` and the `extra` headers.
    pub(crate) async fn get(
        &self,
        url: &str,
        bearer: &str,
        extra: &[(&'static str, &'static str)],
    ) -> Result<Answer, ReconcileError> {
        let scrub = |text: String| match bearer.is_empty() {
            true => text,
            false => text.replace(bearer, "[redacted]"),
        };
        let uri = self.uri(url)?;
        let mut auth = HeaderValue::try_from(format!("Bearer {bearer}")).map_err(|_| {
            ReconcileError::BadResponse {
                provider: self.provider,
                url: url.to_string(),
                reason: "the key contains characters that cannot be sent in a header".into(),
            }
        })?;
        auth.set_sensitive(true);
        let mut builder = Request::get(uri)
            .header(AUTHORIZATION, auth)
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, concat!("hooklab/", env!("CARGO_PKG_VERSION")));
        for (name, value) in extra {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(Empty::new())
            .map_err(|e| self.bad_url(url, e.to_string()))?;
        let call =
            async {
                let response = self.client.request(request).await.map_err(|e| {
                    ReconcileError::Unreachable {
                        provider: self.provider,
                        url: url.to_string(),
                        reason: scrub(error_chain(&e)),
                    }
                })?;
                let status = response.status();
                let body = Limited::new(response.into_body(), BODY_CAP)
                    .collect()
                    .await
                    .map_err(|e| ReconcileError::BadResponse {
                        provider: self.provider,
                        url: url.to_string(),
                        reason: format!("the body could not be read: {e}"),
                    })?
                    .to_bytes();
                Ok::<_, ReconcileError>((status, body))
            };
        let (status, body) = match tokio::time::timeout(self.timeout, call).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(ReconcileError::Timeout {
                    provider: self.provider,
                    url: url.to_string(),
                    after: self.timeout,
                });
            }
        };
        if status == StatusCode::NOT_FOUND {
            return Ok(Answer::NotFound);
        }
        let json = serde_json::from_slice::<Value>(&body);
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(ReconcileError::Unauthorized {
                provider: self.provider,
                status: status.as_u16(),
                message: scrub(error_message(json.ok().as_ref(), &body)),
            });
        }
        if !status.is_success() {
            return Err(ReconcileError::Status {
                provider: self.provider,
                url: url.to_string(),
                status: status.as_u16(),
                message: scrub(error_message(json.ok().as_ref(), &body)),
            });
        }
        json.map(Answer::Found)
            .map_err(|e| ReconcileError::BadResponse {
                provider: self.provider,
                url: url.to_string(),
                reason: format!("the body is not JSON: {e}"),
            })
    }

    /// The URL as a `Uri`, refusing `https` (no TLS) and anything but `http`.
    fn uri(&self, url: &str) -> Result<Uri, ReconcileError> {
        let uri: Uri = url.parse().map_err(|e| self.bad_url(url, format!("{e}")))?;
        match uri.scheme_str() {
            Some("http") if uri.host().is_some() => Ok(uri),
            Some("http") => Err(self.bad_url(url, "it has no host".into())),
            Some("https") => Err(ReconcileError::TlsUnsupported {
                provider: self.provider,
                url: url.to_string(),
            }),
            _ => Err(self.bad_url(url, "expected an absolute http:// URL".into())),
        }
    }

    fn bad_url(&self, url: &str, reason: String) -> ReconcileError {
        ReconcileError::BadUrl {
            provider: self.provider,
            url: url.to_string(),
            reason,
        }
    }
}

/// `base` and `path` joined with exactly one `/`.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// `text` percent-encoded for one path segment or query value (RFC 3986 unreserved kept).
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(byte));
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// The provider's own words about an error: Stripe's `error.message`, Mercado Pago's
/// `message`, or the start of the body.
fn error_message(json: Option<&Value>, body: &[u8]) -> String {
    let said = json.and_then(|j| {
        j.pointer("/error/message")
            .or_else(|| j.get("message"))
            .or_else(|| j.get("error"))
            .and_then(Value::as_str)
    });
    match said {
        Some(message) => message.to_string(),
        None if body.is_empty() => "(empty body)".to_string(),
        None => {
            let text = String::from_utf8_lossy(body);
            match text.char_indices().nth(200) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text.into_owned(),
            }
        }
    }
}

/// An error and its causes, without repeats.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_join_and_segments_encode() {
        assert_eq!(join("http://h/", "/v1/x"), "http://h/v1/x");
        assert_eq!(join("http://h", "v1/x"), "http://h/v1/x");
        assert_eq!(encode("pi_1A-b.c~"), "pi_1A-b.c~", "ids pass unchanged");
        assert_eq!(
            encode("a/b?c d"),
            "a%2Fb%3Fc%20d",
            "a hostile id stays one segment"
        );
    }

    #[tokio::test]
    async fn https_and_odd_urls_are_refused_before_any_connection() {
        let get = JsonGet::new("Stripe");
        let tls = get.get("https://api.stripe.com/v1/x", "k", &[]).await;
        match tls {
            Err(e @ ReconcileError::TlsUnsupported { .. }) => {
                assert!(
                    e.to_string().contains("proxy or stand-in"),
                    "says what to do: {e}"
                )
            }
            _ => panic!("https must be refused as unsupported TLS"),
        }
        for odd in ["ftp://h/x", "/v1/x", "http:///x"] {
            let err = get.get(odd, "k", &[]).await.err().map(|e| e.code());
            assert_eq!(err, Some("bad_url"), "{odd} is not a usable URL");
        }
    }

    #[test]
    fn provider_error_messages_are_read_from_either_shape() {
        let stripe = json!({"error": {"message": "Invalid API Key provided", "type": "x"}});
        assert_eq!(
            error_message(Some(&stripe), b""),
            "Invalid API Key provided"
        );
        let mp = json!({"message": "invalid access token", "error": "unauthorized"});
        assert_eq!(error_message(Some(&mp), b""), "invalid access token");
        assert_eq!(error_message(None, b""), "(empty body)");
        let long = "x".repeat(500);
        assert_eq!(error_message(None, long.as_bytes()).chars().count(), 201);
    }
}
