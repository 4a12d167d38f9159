//! What the lab sends: a generated event signed with a source's secret, or a recorded delivery
//! sent again (as recorded, re-signed, or as a negative variant). Either becomes an
//! [`Outgoing`] request that knows its idempotency key — the unit a handler must run its side
//! effect once for.
//!
//! Events come from the template catalogue ([`templates::generate`]: a provider's event type,
//! with [`Override`]s) and are signed by [`TestEvent::request`], the code `hooklab trigger`
//! and `hooklab sign` use.

use super::{LabError, Target};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::{self, ProviderId, ProviderOptions};
use hooklab_core::replay::{self, Original, Variant};
use hooklab_core::request::{Header, RawRequest};
use hooklab_core::secret::Secret;
use hooklab_core::store::Delivery;
pub use hooklab_core::templates::Override;
use hooklab_core::templates::{self, TestEvent};

/// An event of `provider` (of `event_type`, or the provider's default one), with `overrides`
/// applied, dated `now`; `salt` keeps ids unique within one millisecond.
pub fn generate(
    provider: ProviderId,
    event_type: Option<&str>,
    overrides: &[Override],
    now: UnixMillis,
    salt: &str,
) -> Result<TestEvent, LabError> {
    templates::generate(provider, event_type, overrides, now, salt)
        .map_err(|e| LabError::Event(e.to_string()))
}

/// What `provider` reads from a request: event id, type, object, idempotency key.
fn metadata_of(
    provider: ProviderId,
    options: &ProviderOptions,
    path: &str,
    headers: &[Header],
    body: &[u8],
    url: Option<&str>,
) -> Metadata {
    let Ok(scheme) = provider::scheme(provider, options) else {
        return Metadata::default();
    };
    let pairs = headers.iter().map(|h| (h.name.clone(), h.value.clone()));
    let mut req = RawRequest::post(path, pairs, body.to_vec());
    req.url = url.map(str::to_string);
    scheme.metadata(&req).with_default_key()
}

/// One request to send, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Where it goes (Mercado Pago notifications carry `?data.id=…`, which they sign).
    pub target: Target,
    pub method: String,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
    /// The idempotency key the provider's metadata gives it (the event id, or a
    /// resource-based key): copies with one key must cause one side effect.
    pub key: Option<String>,
    pub event_type: Option<String>,
    /// The business object it is about (e.g. `pi_…`).
    pub object_id: Option<String>,
    /// Whether it carries a signature made now.
    pub signed: bool,
}

impl Outgoing {
    /// `event` to `target` (plus the provider's query string), signed at `at` with `secret`
    /// (unsigned without one).
    pub fn signed_event(
        options: &ProviderOptions,
        secret: Option<&Secret>,
        event: &TestEvent,
        target: &Target,
        at: UnixMillis,
    ) -> Result<Self, LabError> {
        let provider = event.provider;
        let signed = event
            .request(options, secret, &target.url, at)
            .map_err(|e| LabError::Sign(format!("cannot sign a {provider} event: {e}")))?;
        let target = Target::parse(&signed.url)?;
        let mut headers = vec![Header::new("User-Agent", "Hooklab-Lab")];
        headers.extend(
            signed
                .headers
                .into_iter()
                .map(|(name, value)| Header::new(name, value)),
        );
        let metadata = metadata_of(
            provider,
            options,
            &target.path,
            &headers,
            &signed.body,
            Some(&target.url),
        );
        Ok(Self {
            target,
            method: "POST".into(),
            headers,
            body: signed.body,
            key: metadata.idempotency_key,
            event_type: metadata.event_type,
            object_id: metadata.object_id,
            signed: signed.signed,
        })
    }

    /// Recorded `delivery` sent again to `target` as `variant` (linked to it by
    /// `X-Hooklab-Replay-Of`); `secret` is its source's, for the variants that sign.
    pub fn replay(
        delivery: &Delivery,
        options: &ProviderOptions,
        secret: Option<&Secret>,
        variant: Variant,
        target: &Target,
        now: UnixMillis,
    ) -> Result<Self, LabError> {
        let record = &delivery.record;
        let provider = match record.provider {
            Some(p) => p,
            None if variant.signs() => {
                return Err(LabError::Sign(format!(
                    "delivery #{} came to an unknown source (`{}`): it has no provider to sign for",
                    delivery.id, record.source
                )));
            }
            None => ProviderId::GenericHmac,
        };
        let request = replay::build(
            Original {
                id: delivery.id,
                method: &record.method,
                headers: &record.headers,
                body: &record.body,
            },
            provider,
            options,
            secret,
            variant,
            &target.url,
            now,
        )
        .map_err(|e| LabError::Sign(e.to_string()))?;
        let metadata = &record.metadata;
        Ok(Self {
            target: target.clone(),
            method: request.method,
            headers: request.headers,
            body: request.body,
            key: metadata
                .idempotency_key
                .clone()
                .or_else(|| metadata.event_id.clone()),
            event_type: metadata.event_type.clone(),
            object_id: metadata.object_id.clone(),
            signed: variant.signs(),
        })
    }

    /// A captured request (from a file) to `target`: re-signed now with `secret` when there
    /// is one (and a provider to sign for), else sent with its captured headers.
    // What to sign with, what was captured, where and when: each is needed, none groups.
    #[allow(clippy::too_many_arguments)]
    pub fn captured(
        provider: Option<ProviderId>,
        options: &ProviderOptions,
        secret: Option<&Secret>,
        method: &str,
        headers: &[Header],
        body: &[u8],
        target: &Target,
        now: UnixMillis,
    ) -> Result<Self, LabError> {
        let variant = match (provider, secret) {
            (Some(_), Some(_)) => Variant::Resigned,
            _ => Variant::AsRecorded,
        };
        let request = replay::build(
            Original {
                id: 0,
                method,
                headers,
                body,
            },
            provider.unwrap_or(ProviderId::GenericHmac),
            options,
            secret,
            variant,
            &target.url,
            now,
        )
        .map_err(|e| LabError::Sign(e.to_string()))?;
        // Not a replay of a recorded delivery: no link to one.
        let headers: Vec<Header> = request
            .headers
            .into_iter()
            .filter(|h| !h.name.eq_ignore_ascii_case(replay::REPLAY_OF_HEADER))
            .collect();
        let metadata = provider
            .map(|p| {
                metadata_of(
                    p,
                    options,
                    &target.path,
                    &headers,
                    &request.body,
                    Some(&target.url),
                )
            })
            .unwrap_or_default();
        Ok(Self {
            target: target.clone(),
            method: request.method,
            headers,
            body: request.body,
            key: metadata.idempotency_key,
            event_type: metadata.event_type,
            object_id: metadata.object_id,
            signed: variant == Variant::Resigned,
        })
    }

    /// The request as HTTP/1.1 bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.target
            .request_bytes(&self.method, &self.headers, &self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooklab_core::verdict::Status;
    use hooklab_core::verify::{VerifyConfig, verify};

    #[test]
    fn generated_events_take_a_type_and_overrides_and_keep_their_ids_straight() {
        let now = UnixMillis::from_secs(1_700_000_000);
        let overrides = [
            Override::parse("id=evt_fixed").unwrap(),
            Override::parse("data.object.id=pi_shared").unwrap(),
        ];
        let e = generate(
            ProviderId::Stripe,
            Some("payment_intent.created"),
            &overrides,
            now,
            "a",
        )
        .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(body["type"], "payment_intent.created");
        assert_eq!(body["data"]["object"]["id"], "pi_shared");
        assert_eq!(e.event_id, "evt_fixed", "the id the provider reads back");
        assert_eq!(e.event_type, "payment_intent.created");
        let err = generate(ProviderId::Stripe, Some("no.such_type"), &[], now, "a").unwrap_err();
        assert!(
            err.to_string().contains("payment_intent.created"),
            "lists the known: {err}"
        );
    }

    #[test]
    fn a_signed_event_verifies_and_knows_its_key_and_object() {
        let now = UnixMillis::now();
        let target = Target::parse("http://127.0.0.1:9/pay").unwrap();
        let secret = Secret::new("whsec_lab");
        for provider in [
            ProviderId::Stripe,
            ProviderId::Mercadopago,
            ProviderId::Asaas,
            ProviderId::Paddle,
            ProviderId::Wompi,
        ] {
            let event = generate(provider, None, &[], now, "k").unwrap();
            let out = Outgoing::signed_event(
                &ProviderOptions::default(),
                Some(&secret),
                &event,
                &target,
                now,
            )
            .unwrap();
            let pairs = out
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()));
            let req = RawRequest::post(&out.target.path, pairs, out.body.clone())
                .with_url(&out.target.url);
            let verdict = verify(
                &VerifyConfig::new(provider, vec![secret.clone()]),
                &req,
                now,
            );
            assert_eq!(verdict.verdict, Status::Valid, "{provider}: {verdict:?}");
            assert!(out.key.is_some(), "{provider} has a key");
            assert!(out.object_id.is_some(), "{provider} names its object");
        }
    }
}
