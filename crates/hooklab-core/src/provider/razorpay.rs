//! Razorpay: `X-Razorpay-Signature: <hex HMAC-SHA256(webhook secret, raw body)>`, keyed with
//! the webhook secret (not the API key secret). No timestamp; `x-razorpay-event-id` dedupes.
//! Retries of older events stay signed with the old secret, so keep it during a rotation.

use super::common::{header_string, id_from_body, json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Razorpay;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Razorpay-Signature",
    prefix: "",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

const EVENT_ID: &str = "x-razorpay-event-id";

impl Scheme for Razorpay {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Razorpay,
            name: "Razorpay".into(),
            headers: vec![HMAC.header.into(), EVENT_ID.into()],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the webhook secret set on the webhook (UTF-8), not the API key secret"
                .into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        HMAC.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let event_id = input
            .id
            .map_or_else(|| id_from_body("evt_", input.body), str::to_string);
        Ok(Signed {
            headers: vec![HMAC.sign(input.body, key), (EVENT_ID.into(), event_id)],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        // `contains: ["payment"]` names the entity under `payload.payment.entity`.
        let object_id = body
            .pointer("/contains")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .find_map(|kind| json_str(&body, &format!("/payload/{kind}/entity/id")));
        Metadata {
            event_id: header_string(req, EVENT_ID),
            event_type: json_str(&body, "/event"),
            object_id,
            provider_time: json_time(&body, "/created_at"),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;
    use crate::clock::UnixMillis;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("razorpay", &Razorpay),
            2,
            "both Razorpay vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(
            &Razorpay,
            "key_secret",
            br#"{"event":"payment.captured"}"#,
            HMAC.header,
        );
    }

    #[test]
    fn malformed_and_missing() {
        let bad = request(&[(HMAC.header, "sha256=00")], b"{}");
        assert!(matches!(
            Razorpay.check(&bad, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
        assert!(matches!(
            Razorpay.check(&request(&[], b"{}"), b"k"),
            Err(CheckError::MissingHeader { .. })
        ));
    }

    #[test]
    fn metadata_reads_header_and_entity() {
        let body = br#"{"event":"payment.authorized","contains":["payment"],"created_at":1700000000,"payload":{"payment":{"entity":{"id":"pay_1"}}}}"#;
        let m = Razorpay.metadata(&request(&[(EVENT_ID, "KwGQTNJMkWnhz5")], body));
        assert_eq!(m.event_id.as_deref(), Some("KwGQTNJMkWnhz5"));
        assert_eq!(m.idempotency_key.as_deref(), Some("KwGQTNJMkWnhz5"));
        assert_eq!(m.event_type.as_deref(), Some("payment.authorized"));
        assert_eq!(m.object_id.as_deref(), Some("pay_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
    }
}
