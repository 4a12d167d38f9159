//! One source: a named endpoint (`/{name}/…`) for one provider, with its secrets, tolerance,
//! provider options, and the response the receiver gives once a delivery is committed.

use super::{ConfigError, EnvLookup, ResponseConfig, SuccessPolicy, resolve_secret};
use hooklab_core::metadata::KeySpec;
use hooklab_core::provider::{self, ProviderId, ProviderOptions};
use hooklab_core::retry::{RetrySchedule, TimeScale};
use hooklab_core::secret::Secret;
use serde::Deserialize;

/// A configured source. `Debug` shows secrets as `Secret(***)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceConfig {
    /// The first path segment that selects this source: `[A-Za-z0-9_.-]+`, unique.
    pub name: String,
    pub provider: ProviderId,
    /// Every accepted secret (several during a rotation); empty records deliveries unverified.
    pub secrets: Vec<Secret>,
    /// Replaces the provider's default tolerance, in seconds (0 disables the time check).
    pub tolerance: Option<u64>,
    /// Settings of the configurable providers (generic-hmac, token).
    pub options: ProviderOptions,
    /// What to answer once the delivery is committed.
    pub response: ResponseConfig,
    /// Answer 401 (after recording) when the signature is invalid, as a production endpoint
    /// would. Off by default: a debugging receiver answers the configured response regardless.
    pub reject_invalid: bool,
    /// Where the idempotency key comes from, instead of the provider's default.
    pub idempotency_key: Option<KeySpec>,
    /// Where this source's deliveries are forwarded, instead of the global `forward_to`.
    pub forward_to: Option<String>,
    /// What counts as success; `None`: the provider's rule ([`SuccessPolicy::for_provider`]).
    pub success: Option<SuccessPolicy>,
    /// This source's retry schedule, instead of the global one.
    pub retry_schedule: Option<RetrySchedule>,
    /// This source's time scale, instead of the global one.
    pub time_scale: Option<TimeScale>,
}

/// A `[[source]]` table as written; secrets still unresolved (`env:VAR`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSource {
    name: String,
    provider: ProviderId,
    #[serde(default)]
    secret: Option<String>,
    #[serde(default)]
    secrets: Option<Vec<String>>,
    #[serde(default, alias = "tolerance_secs")]
    tolerance: Option<u64>,
    #[serde(default)]
    options: ProviderOptions,
    #[serde(default)]
    response: ResponseConfig,
    #[serde(default)]
    reject_invalid: bool,
    #[serde(default)]
    idempotency_key: Option<KeySpec>,
    #[serde(default)]
    forward_to: Option<String>,
    #[serde(default)]
    success: Option<SuccessPolicy>,
    #[serde(default)]
    retry_schedule: Option<String>,
    #[serde(default)]
    time_scale: Option<f64>,
}

impl RawSource {
    pub(super) fn resolve(self, at: &str, env: EnvLookup<'_>) -> Result<SourceConfig, ConfigError> {
        let values = match (self.secret, self.secrets) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::invalid(
                    at,
                    format!(
                        "source `{}` sets both `secret` and `secrets`; keep one (`secrets` takes a list)",
                        self.name
                    ),
                ));
            }
            (Some(one), None) => vec![one],
            (None, Some(list)) => list,
            (None, None) => Vec::new(),
        };
        let secrets = values
            .iter()
            .map(|v| resolve_secret(v, at, &self.name, env).map(Secret::new))
            .collect::<Result<Vec<_>, _>>()?;
        let scheduling = |e: hooklab_core::retry::RetryScheduleError| {
            ConfigError::invalid(at, format!("source `{}`: {e}", self.name))
        };
        let retry_schedule = self
            .retry_schedule
            .as_deref()
            .map(RetrySchedule::parse)
            .transpose()
            .map_err(scheduling)?;
        let time_scale = self
            .time_scale
            .map(super::parse_time_scale)
            .transpose()
            .map_err(scheduling)?;
        let source = SourceConfig {
            name: self.name,
            provider: self.provider,
            secrets,
            tolerance: self.tolerance,
            options: self.options,
            response: self.response,
            reject_invalid: self.reject_invalid,
            idempotency_key: self.idempotency_key,
            forward_to: self.forward_to,
            success: self.success,
            retry_schedule,
            time_scale,
        };
        source.validate(&format!("{at}: source `{}`", source.name))?;
        Ok(source)
    }
}

impl SourceConfig {
    /// A source with the default response and no provider options.
    pub fn new(name: impl Into<String>, provider: ProviderId, secrets: Vec<Secret>) -> Self {
        Self {
            name: name.into(),
            provider,
            secrets,
            tolerance: None,
            options: ProviderOptions::default(),
            response: ResponseConfig::default(),
            reject_invalid: false,
            idempotency_key: None,
            forward_to: None,
            success: None,
            retry_schedule: None,
            time_scale: None,
        }
    }

    /// Parses the CLI flag `--source NAME=PROVIDER[:SECRET]`; `SECRET` may be `env:VAR`.
    /// Secrets may contain `:` and `=`: the spec is split on the first `=`, then the first `:`.
    pub fn parse_cli(spec: &str) -> Result<Self, ConfigError> {
        Self::parse_cli_with_env(spec, &|v| std::env::var(v))
    }

    /// [`SourceConfig::parse_cli`] with another environment.
    pub fn parse_cli_with_env(spec: &str, env: EnvLookup<'_>) -> Result<Self, ConfigError> {
        const AT: &str = "--source";
        // The spec holds a secret: errors name its parts, never echo it.
        let Some((name, rest)) = spec.split_once('=') else {
            return Err(ConfigError::invalid(
                AT,
                "expected NAME=PROVIDER[:SECRET], e.g. stripe=stripe:env:STRIPE_WEBHOOK_SECRET",
            ));
        };
        let (provider, secret) = match rest.split_once(':') {
            Some((p, s)) => (p, Some(s)),
            None => (rest, None),
        };
        let provider: ProviderId = provider
            .parse()
            .map_err(|e: provider::UnknownProvider| ConfigError::invalid(AT, e.to_string()))?;
        let secrets = match secret {
            Some(s) => vec![Secret::new(resolve_secret(s, AT, name, env)?)],
            None => Vec::new(),
        };
        let source = Self::new(name, provider, secrets);
        source.validate(&format!("{AT} `{name}`"))?;
        Ok(source)
    }

    /// Checks the name, each secret, the provider options and the response.
    pub(crate) fn validate(&self, at: &str) -> Result<(), ConfigError> {
        if !is_valid_name(&self.name) {
            return Err(ConfigError::invalid(
                at,
                "a source name must be non-empty and use only letters, digits, `_`, `.` and `-` \
                 (it is the first path segment of the receiver URL)",
            ));
        }
        if let Some(i) = self.secrets.iter().position(|s| s.expose().is_empty()) {
            return Err(ConfigError::invalid(
                at,
                format!("secret #{} is empty", i + 1),
            ));
        }
        if let Err(e) = provider::scheme(self.provider, &self.options) {
            return Err(ConfigError::invalid(
                at,
                format!("invalid {} options: {e}", self.provider),
            ));
        }
        if let Some(url) = &self.forward_to {
            super::check_forward_url(url).map_err(|e| ConfigError::invalid(at, e))?;
        }
        if let Some(spec) = &self.idempotency_key {
            spec.validate().map_err(|e| ConfigError::invalid(at, e))?;
        }
        self.response.validate(at)
    }

    /// The name as it appears in a path: `/{name}/…`.
    pub fn path(&self) -> String {
        format!("/{}", self.name)
    }
}

/// `[A-Za-z0-9_.-]+`, and not `.` or `..` (which a client would normalise away).
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}
