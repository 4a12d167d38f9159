//! The response a source gives once a delivery is committed: status, headers, body, and an
//! optional delay (to reproduce a slow endpoint and watch the gateway's timeout and retries).

use super::ConfigError;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The longest configurable delay: 5 minutes, beyond every gateway's timeout.
pub const MAX_DELAY_MS: u64 = 5 * 60 * 1000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResponseConfig {
    /// 200..=599 (hyper turns a final 1xx into a 500).
    pub status: u16,
    /// In order; a name may repeat. In TOML a table (`{ "Content-Type" = "…" }`) or a list of
    /// pairs (`[["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"]]`).
    #[serde(deserialize_with = "headers_map_or_pairs")]
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Waits this long after the commit before answering.
    pub delay_ms: u64,
}

impl Default for ResponseConfig {
    fn default() -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: String::new(),
            delay_ms: 0,
        }
    }
}

impl ResponseConfig {
    pub(crate) fn validate(&self, at: &str) -> Result<(), ConfigError> {
        if !(200..=599).contains(&self.status) || StatusCode::from_u16(self.status).is_err() {
            return Err(ConfigError::invalid(
                at,
                format!(
                    "response status {} is not usable; choose a final status in 200..=599",
                    self.status
                ),
            ));
        }
        for (name, value) in &self.headers {
            if HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(ConfigError::invalid(
                    at,
                    format!("response header name `{name}` is not a valid HTTP header name"),
                ));
            }
            if HeaderValue::from_str(value).is_err() {
                return Err(ConfigError::invalid(
                    at,
                    format!(
                        "response header `{name}` has a value that is not valid in HTTP \
                         (visible ASCII and spaces only, no line breaks)"
                    ),
                ));
            }
        }
        if self.delay_ms > MAX_DELAY_MS {
            return Err(ConfigError::invalid(
                at,
                format!(
                    "response delay_ms {} is above the maximum of {MAX_DELAY_MS} (5 minutes)",
                    self.delay_ms
                ),
            ));
        }
        Ok(())
    }
}

fn headers_map_or_pairs<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, String)>, D::Error> {
    struct Headers;
    impl<'de> Visitor<'de> for Headers {
        type Value = Vec<(String, String)>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a table of header names to values, or a list of [name, value] pairs")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(pair) = map.next_entry::<String, String>()? {
                out.push(pair);
            }
            Ok(out)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(pair) = seq.next_element::<(String, String)>()? {
                out.push(pair);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Headers)
}
