//! What a provider's delivery says about itself: event id, type, the business object it is
//! about, and the provider's own timestamp. Read from headers or the JSON body, never trusted
//! for security (verification is separate) but used for display, idempotency and ordering.

use crate::clock::UnixMillis;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metadata {
    /// The provider's event (or delivery) id, e.g. Stripe `evt_…`, Svix `msg_…`.
    pub event_id: Option<String>,
    /// The event type, e.g. `payment_intent.succeeded`, `push`, `PAYMENT_RECEIVED`.
    pub event_type: Option<String>,
    /// The business object the event is about, e.g. a PaymentIntent id `pi_…`.
    pub object_id: Option<String>,
    /// When the provider says the event happened (for ordering), not when it arrived.
    pub provider_time: Option<UnixMillis>,
    /// The key that makes two deliveries "the same event" for idempotency. Usually the event
    /// id; resource-based (`object:status`) for providers without a stable event id.
    pub idempotency_key: Option<String>,
}

impl Metadata {
    /// Fills `idempotency_key` from `event_id` when the provider set no key of its own.
    pub fn with_default_key(mut self) -> Self {
        if self.idempotency_key.is_none() {
            self.idempotency_key = self.event_id.clone();
        }
        self
    }
}

/// A per-source override of where the idempotency key comes from: one header, or JSON
/// pointers into the body whose values are joined with `:` (e.g. `["/data/id", "/type"]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySpec {
    /// A header whose (first) value is the key.
    #[serde(default)]
    pub header: Option<String>,
    /// JSON pointers into the body; every one must be present for a key to exist.
    #[serde(default)]
    pub pointers: Vec<String>,
}

impl KeySpec {
    /// Checks the spec: exactly one of `header` and `pointers`, pointers starting with `/`.
    pub fn validate(&self) -> Result<(), String> {
        match (&self.header, self.pointers.is_empty()) {
            (Some(_), false) => {
                Err("idempotency_key takes `header` or `pointers`, not both".into())
            }
            (None, true) => Err("idempotency_key needs `header` or `pointers`".into()),
            (Some(h), true) if h.trim().is_empty() => Err("idempotency_key.header is empty".into()),
            _ => match self.pointers.iter().find(|p| !p.starts_with('/')) {
                Some(p) => Err(format!(
                    "idempotency_key pointer `{p}` must start with `/` (e.g. `/data/id`)"
                )),
                None => Ok(()),
            },
        }
    }

    /// The key this spec reads from `req`, or `None` when a part of it is missing.
    pub fn key(&self, req: &crate::request::RawRequest) -> Option<String> {
        if let Some(header) = &self.header {
            return req
                .header_str(header)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string);
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).ok()?;
        let parts = self
            .pointers
            .iter()
            .map(|p| match body.pointer(p)? {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(parts.join(":"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RawRequest;

    #[test]
    fn key_from_a_header_or_combined_pointers() {
        let req = RawRequest::post(
            "/x",
            [("X-Request-Id", "abc")],
            br#"{"data":{"id":"tx_1","n":2},"status":"APPROVED"}"#.to_vec(),
        );
        let header = KeySpec {
            header: Some("x-request-id".into()),
            ..KeySpec::default()
        };
        assert_eq!(header.key(&req).as_deref(), Some("abc"));
        let pointers = KeySpec {
            pointers: vec!["/data/id".into(), "/status".into(), "/data/n".into()],
            ..KeySpec::default()
        };
        assert_eq!(pointers.key(&req).as_deref(), Some("tx_1:APPROVED:2"));
        let missing = KeySpec {
            pointers: vec!["/data/missing".into()],
            ..KeySpec::default()
        };
        assert_eq!(missing.key(&req), None, "a missing part means no key");
    }

    #[test]
    fn validation_says_what_is_wrong() {
        assert!(KeySpec::default().validate().is_err());
        let bad = KeySpec {
            pointers: vec!["data.id".into()],
            ..KeySpec::default()
        };
        assert!(bad.validate().unwrap_err().contains("must start with `/`"));
    }
}
