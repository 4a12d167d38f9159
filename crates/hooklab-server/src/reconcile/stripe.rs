//! Stripe's side of reconciliation: the truth about a PaymentIntent, and the events Stripe
//! created (for gap detection).
//!
//! `GET {base}/v1/payment_intents/{id}?expand[]=latest_charge`, with `Authorization: Bearer
//! <secret key>` and a pinned `Stripe-Version` (so `latest_charge` has one shape). Its `status`
//! maps onto the `stripe-payment-intent` machine:
//!
//! - `requires_payment_method` → `payment_failed` when `last_payment_error` is set, else
//!   `created` (a new PaymentIntent waits for a payment method too);
//! - `requires_confirmation` → `created`;
//! - `requires_action`, `requires_capture`, `processing`, `canceled` → the state of that name;
//! - `succeeded` → `disputed` when the latest charge is `disputed`; else `refunded` when it is
//!   `refunded` or has `amount_refunded > 0` (at least partly refunded, as the machine's
//!   `charge.refunded` means); else `succeeded`.
//!
//! A PaymentIntent says when it was created, not when its status last changed, so the truth's
//! time is `canceled_at` for a canceled one and unknown otherwise (the reconciler uses "now").
//!
//! Gaps: `GET {base}/v1/events?created[gte]=<unix secs>&limit=100`, following `has_more` with
//! `starting_after=<last id>`, returns every event id in the window.

use super::client::{Answer, JsonGet, encode, join};
use super::{ProviderApi, ReconcileError, Truth};
use hooklab_core::clock::UnixMillis;
use hooklab_core::secret::Secret;
use hooklab_core::store::BoxFuture;
use serde_json::Value;
use std::time::Duration;

const PROVIDER: &str = "Stripe";

/// The API version Hooklab reads (one with `latest_charge`, not the older `charges` list).
const STRIPE_VERSION: &str = "2024-06-20";

/// Events per page (Stripe's maximum).
const PAGE: usize = 100;

/// Pages followed before giving up (a dev account rarely has 10,000 events in a window).
const MAX_PAGES: usize = 100;

/// Stripe's API, for PaymentIntents. `Debug` shows the base URL, never the key.
#[derive(Clone)]
pub struct StripeApi {
    /// Where the API is: `https://api.stripe.com` by default; an `http://` proxy or stand-in
    /// until a TLS stack is linked in.
    base_url: String,
    /// The secret (or restricted) key, `sk_…`/`rk_…`; sent as a bearer token, never shown.
    secret_key: Secret,
    http: JsonGet,
}

impl StripeApi {
    /// The machine this API tells the truth for.
    pub const MACHINE: &'static str = "stripe-payment-intent";
    /// Stripe's own API.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.stripe.com";

    /// Stripe's API at [`StripeApi::DEFAULT_BASE_URL`] with `secret_key`.
    pub fn new(secret_key: Secret) -> Self {
        Self {
            base_url: Self::DEFAULT_BASE_URL.to_string(),
            secret_key,
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

    async fn get(&self, path_and_query: &str) -> Result<Answer, ReconcileError> {
        let url = join(&self.base_url, path_and_query);
        let version = [("stripe-version", STRIPE_VERSION)];
        self.http
            .get(&url, self.secret_key.expose(), &version)
            .await
    }

    async fn payment_intent(&self, id: &str) -> Result<Option<Truth>, ReconcileError> {
        let path = format!(
            "/v1/payment_intents/{}?expand%5B%5D=latest_charge",
            encode(id)
        );
        match self.get(&path).await? {
            Answer::NotFound => Ok(None),
            Answer::Found(raw) => truth(id, raw).map(Some),
        }
    }

    async fn events(&self, since: UnixMillis) -> Result<Vec<String>, ReconcileError> {
        let mut ids = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut path = format!(
                "/v1/events?created%5Bgte%5D={}&limit={PAGE}",
                since.as_secs()
            );
            if let Some(last) = &after {
                path.push_str(&format!("&starting_after={}", encode(last)));
            }
            let page = match self.get(&path).await? {
                Answer::Found(page) => page,
                Answer::NotFound => return Err(self.bad_events("HTTP 404 for /v1/events".into())),
            };
            let data = page
                .get("data")
                .and_then(Value::as_array)
                .ok_or_else(|| self.bad_events("an events page without a `data` list".into()))?;
            for event in data {
                let id = event
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| self.bad_events(format!("an event without an `id`: {event}")))?;
                ids.push(id.to_string());
            }
            let more = page.get("has_more").and_then(Value::as_bool) == Some(true);
            match (more, ids.last()) {
                (true, Some(last)) if after.as_deref() != Some(last) => after = Some(last.clone()),
                _ => return Ok(ids),
            }
        }
        Err(ReconcileError::TooManyEvents {
            provider: PROVIDER,
            since: since.to_rfc3339(),
            limit: PAGE * MAX_PAGES,
        })
    }

    fn bad_events(&self, reason: String) -> ReconcileError {
        ReconcileError::BadResponse {
            provider: PROVIDER,
            url: join(&self.base_url, "/v1/events"),
            reason,
        }
    }
}

impl std::fmt::Debug for StripeApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripeApi")
            .field("base_url", &self.base_url)
            .field("secret_key", &self.secret_key)
            .finish()
    }
}

impl ProviderApi for StripeApi {
    fn fetch<'a>(
        &'a self,
        object_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Truth>, ReconcileError>> {
        Box::pin(self.payment_intent(object_id))
    }

    fn event_ids_since(
        &self,
        since: UnixMillis,
    ) -> BoxFuture<'_, Result<Option<Vec<String>>, ReconcileError>> {
        Box::pin(async move { self.events(since).await.map(Some) })
    }
}

/// A PaymentIntent's state in the machine's words (see the table in the module docs).
fn truth(id: &str, raw: Value) -> Result<Truth, ReconcileError> {
    let status = raw.get("status").and_then(Value::as_str).unwrap_or("");
    let has = |field: &str| raw.get(field).is_some_and(|v| !v.is_null());
    let state = match status {
        "requires_payment_method" if has("last_payment_error") => "payment_failed",
        "requires_payment_method" | "requires_confirmation" => "created",
        "requires_action" => "requires_action",
        "requires_capture" => "requires_capture",
        "processing" => "processing",
        "canceled" => "canceled",
        "succeeded" => after_success(raw.get("latest_charge")),
        _ => {
            return Err(ReconcileError::UnknownStatus {
                provider: PROVIDER,
                object_id: id.to_string(),
                status: status.to_string(),
                known: "requires_payment_method, requires_confirmation, requires_action, \
                        requires_capture, processing, canceled, succeeded"
                    .into(),
            });
        }
    };
    let provider_time = match state {
        "canceled" => raw
            .get("canceled_at")
            .and_then(Value::as_i64)
            .map(UnixMillis::from_secs),
        _ => None,
    };
    Ok(Truth {
        state: state.to_string(),
        provider_time,
        raw,
    })
}

/// `succeeded`, `refunded` or `disputed`, by the latest charge when it is expanded.
fn after_success(charge: Option<&Value>) -> &'static str {
    let Some(charge) = charge.filter(|c| c.is_object()) else {
        return "succeeded";
    };
    let flag = |field: &str| charge.get(field).and_then(Value::as_bool) == Some(true);
    let refunded_amount = charge
        .get("amount_refunded")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if flag("disputed") {
        "disputed"
    } else if flag("refunded") || refunded_amount > 0 {
        "refunded"
    } else {
        "succeeded"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(pi: Value) -> String {
        truth("pi_1", pi).expect("a known status").state
    }

    #[test]
    fn every_status_maps_onto_the_machine() {
        let machine = hooklab_core::machine::builtin(StripeApi::MACHINE).expect("built in");
        let cases = [
            (json!({"status": "requires_payment_method"}), "created"),
            (
                json!({"status": "requires_payment_method", "last_payment_error": {"code": "card_declined"}}),
                "payment_failed",
            ),
            (
                json!({"status": "requires_payment_method", "last_payment_error": null}),
                "created",
            ),
            (json!({"status": "requires_confirmation"}), "created"),
            (json!({"status": "requires_action"}), "requires_action"),
            (json!({"status": "requires_capture"}), "requires_capture"),
            (json!({"status": "processing"}), "processing"),
            (json!({"status": "canceled"}), "canceled"),
            (
                json!({"status": "succeeded", "latest_charge": "ch_1"}),
                "succeeded",
            ),
            (
                json!({"status": "succeeded", "latest_charge": {"refunded": false, "amount_refunded": 0}}),
                "succeeded",
            ),
            (
                json!({"status": "succeeded", "latest_charge": {"refunded": true}}),
                "refunded",
            ),
            (
                json!({"status": "succeeded", "latest_charge": {"refunded": false, "amount_refunded": 500}}),
                "refunded",
            ),
            (
                json!({"status": "succeeded", "latest_charge": {"disputed": true, "amount_refunded": 500}}),
                "disputed",
            ),
        ];
        for (pi, expected) in cases {
            let got = state(pi.clone());
            assert_eq!(got, expected, "{pi}");
            assert!(machine.has_state(&got), "`{got}` is a state of the machine");
        }
    }

    #[test]
    fn only_a_cancellation_says_when() {
        let canceled = truth(
            "pi_1",
            json!({"status": "canceled", "canceled_at": 1_700_000_000}),
        );
        assert_eq!(
            canceled.expect("known").provider_time,
            Some(UnixMillis::from_secs(1_700_000_000)),
            "canceled_at is the time of the status"
        );
        let created = truth(
            "pi_1",
            json!({"status": "succeeded", "created": 1_600_000_000}),
        );
        assert_eq!(
            created.expect("known").provider_time,
            None,
            "`created` is the PaymentIntent's birth, not its success"
        );
    }

    #[test]
    fn an_unknown_status_is_named() {
        let err = truth("pi_1", json!({"status": "teleported"})).expect_err("unknown");
        assert_eq!(err.code(), "unknown_status");
        assert!(err.to_string().contains("teleported"), "{err}");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let api = StripeApi::new(Secret::new("sk_test_supersecret")).with_base_url("http://x");
        let shown = format!("{api:?}");
        assert!(!shown.contains("supersecret"), "{shown}");
        assert!(shown.contains("http://x"), "the base URL is shown: {shown}");
    }
}
