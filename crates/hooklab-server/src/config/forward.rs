//! Forwarding settings: where a source's deliveries are forwarded (the developer's app), what
//! counts as success, the retry schedule and its time scale, the per-attempt timeout, and how
//! many attempts run at once. Global defaults in [`Config`], overridable per source.
//!
//! ```toml
//! forward_to = "http://127.0.0.1:3000/webhooks"   # every source without its own
//! retry_schedule = "0.2s,1s,5s,30s,2m,10m"        # or a preset: "stripe", "svix", …
//! time_scale = 1                                  # 4320 plays three days in a minute
//! forward_timeout = "30s"
//! concurrency = 8
//!
//! [[source]]
//! name = "asaas"
//! provider = "asaas"
//! forward_to = "http://127.0.0.1:3000/asaas"
//! retry_schedule = "asaas"
//! success = "200"                                 # Asaas and Wompi default to "200"
//! ```

use super::{Config, ConfigError, SourceConfig};
use axum::http::Uri;
use hooklab_core::provider::ProviderId;
use hooklab_core::retry::RetrySchedule;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// How long one forward attempt may take (connect, answer, and body) before it fails.
pub const DEFAULT_FORWARD_TIMEOUT: Duration = Duration::from_secs(30);
/// How many attempts the worker runs at once.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// Which answers from the developer's app count as "handled".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SuccessPolicy {
    /// Any 2xx (most providers).
    Any2xx,
    /// Exactly 200: Asaas and Wompi treat every other status, 201 and 204 included, as a
    /// failure (PROVIDERS.md §10, §11).
    Only200,
}

impl SuccessPolicy {
    /// The provider's own rule.
    pub fn for_provider(provider: ProviderId) -> Self {
        match provider {
            ProviderId::Asaas | ProviderId::Wompi => Self::Only200,
            _ => Self::Any2xx,
        }
    }

    pub fn accepts(self, status: u16) -> bool {
        match self {
            Self::Any2xx => (200..300).contains(&status),
            Self::Only200 => status == 200,
        }
    }

    /// `2xx` or `200`, as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Any2xx => "2xx",
            Self::Only200 => "200",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "2xx" => Ok(Self::Any2xx),
            "200" => Ok(Self::Only200),
            other => Err(format!(
                "success `{other}` is not understood; use \"2xx\" (any 2xx) or \"200\" (only 200)"
            )),
        }
    }
}

impl fmt::Display for SuccessPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SuccessPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Reads `"2xx"`, `"200"` or the integer `200`.
impl<'de> Deserialize<'de> for SuccessPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SuccessPolicy;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"2xx\" or \"200\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SuccessPolicy, E> {
                SuccessPolicy::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SuccessPolicy, E> {
                SuccessPolicy::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SuccessPolicy, E> {
                SuccessPolicy::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Checks a forward target: an absolute `http://` URL. `https://` is refused with a clear
/// message (no TLS stack is linked in yet); the developer's app usually listens on plain HTTP
/// on this machine.
pub fn check_forward_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| {
        format!("forward target `{url}` is not a URL ({e}); write it like http://127.0.0.1:3000/webhooks")
    })?;
    match uri.scheme_str() {
        Some("http") if uri.authority().is_some_and(|a| !a.host().is_empty()) => Ok(uri),
        Some("https") => Err(format!(
            "forward target `{url}`: TLS forwarding is not supported yet; forward to an http:// \
             URL (your app on this machine, e.g. http://127.0.0.1:3000/webhooks)"
        )),
        _ => Err(format!(
            "forward target `{url}` must be an absolute http:// URL, like \
             http://127.0.0.1:3000/webhooks"
        )),
    }
}

impl SourceConfig {
    /// What counts as success: the source's `success`, or its provider's rule.
    pub fn success_policy(&self) -> SuccessPolicy {
        self.success
            .unwrap_or_else(|| SuccessPolicy::for_provider(self.provider))
    }
}

impl Config {
    /// Where `source`'s deliveries are forwarded: its own `forward_to`, else the global one.
    pub fn forward_target<'a>(&'a self, source: &'a SourceConfig) -> Option<&'a str> {
        source.forward_to.as_deref().or(self.forward_to.as_deref())
    }

    /// Whether any source forwards (and so whether a worker is needed).
    pub fn forwards(&self) -> bool {
        self.sources
            .iter()
            .any(|s| self.forward_target(s).is_some())
    }

    /// `source`'s retry schedule (its own or the global one) with its time scale applied.
    pub fn schedule_for(&self, source: &SourceConfig) -> RetrySchedule {
        let schedule = source
            .retry_schedule
            .clone()
            .unwrap_or_else(|| self.retry_schedule.clone());
        let scale = source.time_scale.unwrap_or(self.time_scale);
        schedule.with_time_scale(scale.get())
    }

    /// The global forwarding settings that types cannot check (sources check their own).
    pub(super) fn validate_forwarding(&self, at: &str) -> Result<(), ConfigError> {
        if let Some(url) = &self.forward_to {
            check_forward_url(url).map_err(|e| ConfigError::invalid(at, e))?;
        }
        if self.concurrency == 0 {
            return Err(ConfigError::invalid(
                at,
                "`concurrency` must be at least 1 (attempts run at once)",
            ));
        }
        if self.forward_timeout.is_zero() {
            return Err(ConfigError::invalid(
                at,
                "`forward_timeout` must be longer than zero, e.g. \"30s\"",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
