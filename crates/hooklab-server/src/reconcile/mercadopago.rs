//! Mercado Pago's side of reconciliation: the truth about a payment. Mercado Pago expects a
//! receiver to fetch the payment anyway (its notifications name the payment, not its status),
//! so this is the same call a handler makes: `GET {base}/v1/payments/{id}` with
//! `Authorization: Bearer <access token>`.
//!
//! The payment's `status` is one of the `mercadopago-payment` machine's states, word for word
//! (`pending`, `in_process`, `authorized`, `approved`, `rejected`, `cancelled`,
//! `in_mediation`, `refunded`, `charged_back`); anything else is an
//! [`ReconcileError::UnknownStatus`]. The truth's time is `date_last_updated` (RFC 3339 with an
//! offset), the provider's time of the latest change.
//!
//! Mercado Pago has no events API to list what it sent, so gap detection is skipped.

use super::client::{Answer, JsonGet, encode, join};
use super::{ProviderApi, ReconcileError, Truth};
use hooklab_core::clock::UnixMillis;
use hooklab_core::secret::Secret;
use hooklab_core::store::BoxFuture;
use serde_json::Value;
use std::time::Duration;

const PROVIDER: &str = "Mercado Pago";

/// Every payment status, each the machine state of the same name.
const STATUSES: [&str; 9] = [
    "pending",
    "in_process",
    "authorized",
    "approved",
    "rejected",
    "cancelled",
    "in_mediation",
    "refunded",
    "charged_back",
];

/// Mercado Pago's API, for payments. `Debug` shows the base URL, never the token.
#[derive(Clone)]
pub struct MercadoPagoApi {
    /// Where the API is: `https://api.mercadopago.com` by default; an `http://` proxy or
    /// stand-in until a TLS stack is linked in.
    base_url: String,
    /// The access token (`APP_USR-…` or `TEST-…`); sent as a bearer token, never shown.
    access_token: Secret,
    http: JsonGet,
}

impl MercadoPagoApi {
    /// The machine this API tells the truth for.
    pub const MACHINE: &'static str = "mercadopago-payment";
    /// Mercado Pago's own API.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.mercadopago.com";

    /// Mercado Pago's API at [`MercadoPagoApi::DEFAULT_BASE_URL`] with `access_token`.
    pub fn new(access_token: Secret) -> Self {
        Self {
            base_url: Self::DEFAULT_BASE_URL.to_string(),
            access_token,
            http: JsonGet::new(PROVIDER),
        }
    }

    /// The same, at another base URL (a proxy, or a stand-in in tests).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The same, with another per-call timeout (default [`super::DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.http = self.http.with_timeout(timeout);
        self
    }

    /// The base URL calls go to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    async fn payment(&self, id: &str) -> Result<Option<Truth>, ReconcileError> {
        let url = join(&self.base_url, &format!("/v1/payments/{}", encode(id)));
        match self.http.get(&url, self.access_token.expose(), &[]).await? {
            Answer::NotFound => Ok(None),
            Answer::Found(raw) => truth(id, raw).map(Some),
        }
    }
}

impl std::fmt::Debug for MercadoPagoApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MercadoPagoApi")
            .field("base_url", &self.base_url)
            .field("access_token", &self.access_token)
            .finish()
    }
}

impl ProviderApi for MercadoPagoApi {
    fn fetch<'a>(
        &'a self,
        object_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Truth>, ReconcileError>> {
        Box::pin(self.payment(object_id))
    }

    fn event_ids_since(
        &self,
        _since: UnixMillis,
    ) -> BoxFuture<'_, Result<Option<Vec<String>>, ReconcileError>> {
        Box::pin(async { Ok(None) })
    }
}

/// A payment's state (its `status`, checked) and the time of its latest change.
fn truth(id: &str, raw: Value) -> Result<Truth, ReconcileError> {
    let status = raw.get("status").and_then(Value::as_str).unwrap_or("");
    let Some(state) = STATUSES.iter().find(|s| **s == status) else {
        return Err(ReconcileError::UnknownStatus {
            provider: PROVIDER,
            object_id: id.to_string(),
            status: status.to_string(),
            known: STATUSES.join(", "),
        });
    };
    let provider_time = raw
        .get("date_last_updated")
        .and_then(Value::as_str)
        .and_then(UnixMillis::parse_rfc3339);
    Ok(Truth {
        state: (*state).to_string(),
        provider_time,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_status_is_a_state_of_the_machine() {
        let machine = hooklab_core::machine::builtin(MercadoPagoApi::MACHINE).expect("built in");
        for status in STATUSES {
            let t = truth("1", json!({"status": status})).expect("a known status");
            assert_eq!(t.state, status, "statuses map word for word");
            assert!(machine.has_state(&t.state), "`{status}` is a machine state");
        }
        let err = truth("1", json!({"status": "teleported"})).expect_err("unknown");
        assert_eq!(err.code(), "unknown_status", "{err}");
    }

    #[test]
    fn the_time_is_the_latest_change_with_its_offset() {
        let t = truth(
            "1",
            json!({"status": "approved", "date_created": "2024-01-10T10:00:00.000-04:00",
                   "date_last_updated": "2024-01-10T10:05:00.000-04:00"}),
        )
        .expect("known");
        assert_eq!(
            t.provider_time,
            UnixMillis::parse_rfc3339("2024-01-10T14:05:00Z"),
            "date_last_updated, read at its offset"
        );
    }

    #[test]
    fn debug_never_shows_the_token() {
        let api = MercadoPagoApi::new(Secret::new("APP_USR-supersecret"));
        let shown = format!("{api:?}");
        assert!(!shown.contains("supersecret"), "{shown}");
        assert!(shown.contains("https://api.mercadopago.com"), "{shown}");
    }
}
