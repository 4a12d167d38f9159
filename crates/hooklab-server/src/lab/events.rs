//! What the lab sends: a generated event signed with a source's secret, or a recorded delivery
//! sent again (as recorded, re-signed, or as a negative variant). Either becomes an
//! [`Outgoing`] request that knows its idempotency key — the unit a handler must run its side
//! effect once for.
//!
//! Generation goes through [`generate`], the one place that knows how events are made: today
//! [`templates::test_event`] (one representative event per provider) with the event type and
//! [`Override`]s applied here; the template catalogue's `templates::generate` replaces its
//! body when it lands, with the same signature.

use super::{LabError, Target};
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::{self, ProviderId, ProviderOptions, SignInput};
use hooklab_core::replay::{self, Original, Variant};
use hooklab_core::request::{Header, RawRequest};
use hooklab_core::secret::Secret;
use hooklab_core::store::Delivery;
use hooklab_core::templates::{self, TestEvent};
use serde_json::Value;

/// One change to a generated event's body: a dotted path (`data.object.id`) or a JSON
/// pointer (`/data/object/id`), and the value to put there.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub path: String,
    pub value: Value,
}

impl Override {
    /// `path=value`; the value is read as JSON when it is JSON (`2000`, `true`, `{"a":1}`),
    /// else as a string (`pi_123`).
    pub fn parse(text: &str) -> Result<Self, LabError> {
        let (path, value) = text.split_once('=').ok_or_else(|| {
            LabError::Event(format!(
                "override `{text}` is not `path=value` (e.g. data.object.id=pi_123)"
            ))
        })?;
        let path = path.trim();
        if path.is_empty() || path == "/" {
            return Err(LabError::Event(format!("override `{text}` has no path")));
        }
        let value =
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        Ok(Self {
            path: path.to_string(),
            value,
        })
    }

    /// The path as JSON pointer tokens.
    fn tokens(&self) -> Vec<String> {
        match self.path.strip_prefix('/') {
            Some(pointer) => pointer
                .split('/')
                .map(|t| t.replace("~1", "/").replace("~0", "~"))
                .collect(),
            None => self.path.split('.').map(str::to_string).collect(),
        }
    }

    /// Sets the value, creating objects along the path; arrays are indexed by number.
    fn apply(&self, body: &mut Value) -> Result<(), LabError> {
        let tokens = self.tokens();
        let mut at = body;
        for (i, token) in tokens.iter().enumerate() {
            let last = i + 1 == tokens.len();
            if at.is_null() {
                *at = Value::Object(serde_json::Map::new());
            }
            at = match at {
                Value::Object(map) => {
                    if last {
                        map.insert(token.clone(), self.value.clone());
                        return Ok(());
                    }
                    map.entry(token.clone()).or_insert(Value::Null)
                }
                Value::Array(items) => {
                    let slot = token.parse::<usize>().ok().and_then(|n| items.get_mut(n));
                    let Some(slot) = slot else {
                        return Err(LabError::Event(format!(
                            "override `{}`: `{token}` is not an index of the array there",
                            self.path
                        )));
                    };
                    if last {
                        *slot = self.value.clone();
                        return Ok(());
                    }
                    slot
                }
                _ => {
                    return Err(LabError::Event(format!(
                        "override `{}`: `{token}` is inside a value that is not an object",
                        self.path
                    )));
                }
            };
        }
        Ok(())
    }
}

/// Where each payment provider's body names its event type (the others keep their one type).
fn type_pointer(provider: ProviderId) -> Option<&'static str> {
    match provider {
        ProviderId::Stripe => Some("/type"),
        ProviderId::Mercadopago => Some("/action"),
        ProviderId::Asaas | ProviderId::Wompi => Some("/event"),
        ProviderId::Paddle => Some("/event_type"),
        _ => None,
    }
}

/// An event of `provider` (of `event_type`, or the provider's representative one), with
/// `overrides` applied, dated `now`; `salt` keeps ids unique within one millisecond.
pub fn generate(
    provider: ProviderId,
    event_type: Option<&str>,
    overrides: &[Override],
    now: UnixMillis,
    salt: &str,
) -> Result<TestEvent, LabError> {
    let mut event = templates::test_event(provider, now, salt);
    let mut body: Value = serde_json::from_slice(&event.body)
        .map_err(|e| LabError::Event(format!("the {provider} template is not JSON: {e}")))?;
    if let Some(kind) = event_type.filter(|k| *k != event.event_type) {
        let Some(pointer) = type_pointer(provider) else {
            return Err(LabError::Event(format!(
                "{provider} test events are `{}`; other types need the template catalogue",
                event.event_type
            )));
        };
        Override {
            path: pointer.to_string(),
            value: Value::String(kind.to_string()),
        }
        .apply(&mut body)?;
        event.event_type = kind.to_string();
    }
    for o in overrides {
        o.apply(&mut body)?;
    }
    event.body = serde_json::to_vec(&body).map_err(|e| LabError::Event(e.to_string()))?;
    let metadata = metadata_of(
        provider,
        &ProviderOptions::default(),
        "/",
        &[],
        &event.body,
        None,
    );
    event.event_id = metadata.event_id.unwrap_or(event.event_id);
    if let Some(kind) = metadata.event_type {
        event.event_type = kind;
    }
    Ok(event)
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
    /// `event` of `provider` to `target`, signed at `at` with `secret` (unsigned without one).
    pub fn signed_event(
        provider: ProviderId,
        options: &ProviderOptions,
        secret: Option<&Secret>,
        event: &TestEvent,
        target: &Target,
        at: UnixMillis,
    ) -> Result<Self, LabError> {
        let target = match provider {
            // Mercado Pago signs `data.id` from the notification URL's query.
            ProviderId::Mercadopago => {
                let body: Value = serde_json::from_slice(&event.body).unwrap_or_default();
                match body.pointer("/data/id") {
                    Some(Value::String(id)) => target
                        .with_query_param("data.id", id)
                        .with_query_param("type", "payment"),
                    Some(id @ Value::Number(_)) => target
                        .with_query_param("data.id", &id.to_string())
                        .with_query_param("type", "payment"),
                    _ => target.clone(),
                }
            }
            _ => target.clone(),
        };
        let mut headers = vec![
            Header::new("User-Agent", "Hooklab-Lab"),
            Header::new("Content-Type", event.content_type),
        ];
        let mut body = event.body.clone();
        if let Some(secret) = secret {
            let mut input = SignInput::new(&event.body, at);
            input.url = Some(&target.url);
            input.content_type = Some(event.content_type);
            let signed = provider::sign(provider, options, secret, &input)
                .map_err(|e| LabError::Sign(format!("cannot sign a {provider} event: {e}")))?;
            if let Some(signed_body) = signed.body {
                body = signed_body;
            }
            headers.extend(
                signed
                    .headers
                    .into_iter()
                    .map(|(name, value)| Header::new(name, value)),
            );
        }
        let metadata = metadata_of(
            provider,
            options,
            &target.path,
            &headers,
            &body,
            Some(&target.url),
        );
        Ok(Self {
            target,
            method: "POST".into(),
            headers,
            body,
            key: metadata.idempotency_key,
            event_type: metadata.event_type,
            object_id: metadata.object_id,
            signed: secret.is_some(),
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
    fn overrides_take_dotted_paths_and_pointers_and_read_json_values() {
        let mut body = serde_json::json!({"data": {"object": {"id": "pi_1"}}, "list": [1, 2]});
        for text in [
            "data.object.id=pi_2",
            "/data/object/amount=2500",
            "data.new.deep=true",
            "list.1={\"a\":1}",
        ] {
            Override::parse(text).unwrap().apply(&mut body).unwrap();
        }
        assert_eq!(body["data"]["object"]["id"], "pi_2");
        assert_eq!(
            body["data"]["object"]["amount"], 2500,
            "a number, not a string"
        );
        assert_eq!(body["data"]["new"]["deep"], true);
        assert_eq!(body["list"][1]["a"], 1);
        assert!(Override::parse("no-equals").is_err());
        assert!(Override::parse("=1").is_err());
        let into_scalar = Override::parse("data.object.id.x=1").unwrap();
        assert!(into_scalar.apply(&mut body).is_err(), "not an object there");
        let out_of_range = Override::parse("list.9=1").unwrap();
        assert!(out_of_range.apply(&mut body).is_err());
    }

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
        let body: Value = serde_json::from_slice(&e.body).unwrap();
        assert_eq!(body["type"], "payment_intent.created");
        assert_eq!(body["data"]["object"]["id"], "pi_shared");
        assert_eq!(e.event_id, "evt_fixed", "the id the provider reads back");
        assert_eq!(e.event_type, "payment_intent.created");
        let err = generate(ProviderId::Github, Some("push"), &[], now, "a").unwrap_err();
        assert!(err.to_string().contains("catalogue"), "{err}");
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
                provider,
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
