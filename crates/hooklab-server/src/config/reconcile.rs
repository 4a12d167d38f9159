//! `[reconcile]`: periodic reconciliation while the receiver runs — how often, how stale an
//! object must be, and the provider APIs to ask (keys as `env:VAR`, never printed).

use super::{ConfigError, EnvLookup, resolve_secret};
use hooklab_core::retry::parse_duration;
use hooklab_core::secret::Secret;
use serde::Deserialize;
use std::time::Duration;

/// The default `older_than`: objects untouched this long are worth asking about.
pub const DEFAULT_OLDER_THAN: Duration = Duration::from_secs(600);

/// Periodic reconciliation. `Debug` redacts the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconcileSettings {
    /// How often a pass runs.
    pub every: Duration,
    /// Only objects not updated for this long are checked.
    pub older_than: Duration,
    /// Stripe's secret key and API base URL.
    pub stripe: Option<(Secret, String)>,
    /// Mercado Pago's access token and API base URL.
    pub mercadopago: Option<(Secret, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReconcile {
    every: String,
    #[serde(default)]
    older_than: Option<String>,
    #[serde(default)]
    stripe_key: Option<String>,
    #[serde(default)]
    stripe_api: Option<String>,
    #[serde(default)]
    mercadopago_token: Option<String>,
    #[serde(default)]
    mercadopago_api: Option<String>,
}

impl RawReconcile {
    pub(super) fn resolve(
        self,
        at: &str,
        env: EnvLookup<'_>,
    ) -> Result<ReconcileSettings, ConfigError> {
        let duration = |s: &str| {
            parse_duration(s).map_err(|e| ConfigError::invalid(at, format!("[reconcile]: {e}")))
        };
        let every = duration(&self.every)?;
        if every.is_zero() {
            return Err(ConfigError::invalid(
                at,
                "[reconcile] every must be more than 0",
            ));
        }
        let secret = |v: &str| resolve_secret(v, at, "[reconcile]", env).map(Secret::new);
        let settings = ReconcileSettings {
            every,
            older_than: match &self.older_than {
                Some(s) => duration(s)?,
                None => DEFAULT_OLDER_THAN,
            },
            stripe: match &self.stripe_key {
                Some(k) => Some((
                    secret(k)?,
                    self.stripe_api
                        .unwrap_or_else(|| "https://api.stripe.com".into()),
                )),
                None => None,
            },
            mercadopago: match &self.mercadopago_token {
                Some(t) => Some((
                    secret(t)?,
                    self.mercadopago_api
                        .unwrap_or_else(|| "https://api.mercadopago.com".into()),
                )),
                None => None,
            },
        };
        if settings.stripe.is_none() && settings.mercadopago.is_none() {
            return Err(ConfigError::invalid(
                at,
                "[reconcile] needs stripe_key and/or mercadopago_token",
            ));
        }
        Ok(settings)
    }
}
