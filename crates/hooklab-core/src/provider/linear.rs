//! Linear: `Linear-Signature: <hex HMAC-SHA256(secret, raw body)>`. The signed time is inside
//! the body, `webhookTimestamp`, in **milliseconds**; the SDK rejects it beyond ±60 s (and only
//! checks it when present). `Linear-Delivery` is the delivery id, `Linear-Event` the type.

use super::common::{header_string, json_body, json_str, json_time, uuid_from_body};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Linear;

const HMAC: SimpleHmac = SimpleHmac {
    header: "Linear-Signature",
    prefix: "",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

/// `webhookTimestamp` (milliseconds) from a JSON body, if any.
fn webhook_timestamp(body: &[u8]) -> Option<UnixMillis> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value.get("webhookTimestamp")?.as_i64().map(UnixMillis)
}

impl Scheme for Linear {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Linear,
            name: "Linear".into(),
            headers: vec![
                HMAC.header.into(),
                "Linear-Delivery".into(),
                "Linear-Event".into(),
            ],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body} (with webhookTimestamp in ms inside it)".into(),
            secret_format: "the webhook's signing secret (UTF-8)".into(),
            tolerance: Tolerance::both(60),
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let check = HMAC.check(req, key)?;
        Ok(Check {
            timestamp: webhook_timestamp(&req.body),
            ..check
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let body: serde_json::Value = serde_json::from_slice(input.body).unwrap_or_default();
        if webhook_timestamp(input.body).is_none() {
            return Err(SignError {
                detail: format!(
                    "Linear signs the delivery time inside the body: add \
                     \"webhookTimestamp\": {} (Unix milliseconds) to the JSON body",
                    input.now.0
                ),
            });
        }
        let delivery = input
            .id
            .map_or_else(|| uuid_from_body(input.body), str::to_string);
        let mut headers = vec![
            HMAC.sign(input.body, key),
            ("Linear-Delivery".into(), delivery),
        ];
        if let Some(kind) = json_str(&body, "/type") {
            headers.push(("Linear-Event".into(), kind));
        }
        Ok(Signed {
            headers,
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        Metadata {
            event_id: header_string(req, "Linear-Delivery"),
            event_type: header_string(req, "Linear-Event").or_else(|| json_str(&body, "/type")),
            object_id: json_str(&body, "/data/id"),
            provider_time: json_time(&body, "/webhookTimestamp"),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    const BODY: &[u8] =
        br#"{"action":"create","type":"Issue","data":{"id":"iss_1"},"webhookTimestamp":1700000000000}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("linear", &Linear), 2, "both Linear vectors ran");
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Linear, "SECRET", BODY, HMAC.header);
    }

    #[test]
    fn the_timestamp_is_milliseconds_from_the_body() {
        let (name, value) = HMAC.sign(BODY, b"k");
        let check = Linear.check(&request(&[(name.as_str(), value.as_str())], BODY), b"k");
        assert_eq!(
            check.unwrap().timestamp,
            Some(UnixMillis(1_700_000_000_000))
        );
        let plain = br#"{"type":"Issue"}"#;
        let (name, value) = HMAC.sign(plain, b"k");
        let check = Linear.check(&request(&[(name.as_str(), value.as_str())], plain), b"k");
        assert_eq!(
            check.unwrap().timestamp,
            None,
            "no webhookTimestamp, no time check"
        );
    }

    #[test]
    fn signing_requires_webhook_timestamp() {
        let err = Linear
            .sign(&SignInput::new(br#"{"type":"Issue"}"#, UnixMillis(5)), b"k")
            .unwrap_err();
        assert!(err.detail.contains("webhookTimestamp"), "{err}");
    }

    #[test]
    fn malformed_header_and_metadata() {
        let bad = request(&[(HMAC.header, "not hex")], BODY);
        assert!(matches!(
            Linear.check(&bad, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
        let m = Linear.metadata(&request(
            &[("Linear-Delivery", "d-1"), ("Linear-Event", "Issue")],
            BODY,
        ));
        assert_eq!(m.event_id.as_deref(), Some("d-1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("d-1"));
        assert_eq!(m.event_type.as_deref(), Some("Issue"));
        assert_eq!(m.object_id.as_deref(), Some("iss_1"));
        assert_eq!(m.provider_time, Some(UnixMillis(1_700_000_000_000)));
    }
}
