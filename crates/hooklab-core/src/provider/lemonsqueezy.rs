//! Lemon Squeezy: `X-Signature: <hex HMAC-SHA256(signing secret, raw body)>`, no prefix and
//! no timestamp. The event name is in `X-Event-Name` and `meta.event_name`; there is no event
//! id, so `data.id:event_name` is the idempotency key.

use super::common::{header_string, json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct LemonSqueezy;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Signature",
    prefix: "",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

const EVENT_NAME: &str = "X-Event-Name";

impl Scheme for LemonSqueezy {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Lemonsqueezy,
            name: "Lemon Squeezy".into(),
            headers: vec![HMAC.header.into(), EVENT_NAME.into()],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the webhook's signing secret (UTF-8)".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        HMAC.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let mut headers = vec![HMAC.sign(input.body, key)];
        let body: serde_json::Value = serde_json::from_slice(input.body).unwrap_or_default();
        if let Some(name) = json_str(&body, "/meta/event_name") {
            headers.push((EVENT_NAME.into(), name));
        }
        Ok(Signed {
            headers,
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        let event_type =
            json_str(&body, "/meta/event_name").or_else(|| header_string(req, EVENT_NAME));
        let object_id = json_str(&body, "/data/id");
        let idempotency_key = match (&object_id, &event_type) {
            (Some(id), Some(event)) => Some(format!("{id}:{event}")),
            _ => None,
        };
        Metadata {
            event_id: None,
            event_type,
            object_id,
            provider_time: json_time(&body, "/data/attributes/updated_at"),
            idempotency_key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    const BODY: &[u8] = br#"{"meta":{"event_name":"order_created","test_mode":true},"data":{"type":"orders","id":"1","attributes":{"updated_at":"2023-11-14T22:13:20.000000Z"}}}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("lemonsqueezy", &LemonSqueezy),
            1,
            "the vector ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&LemonSqueezy, "ls_signing_secret_1", BODY, HMAC.header);
        let signed = LemonSqueezy
            .sign(&SignInput::new(BODY, crate::clock::UnixMillis(0)), b"k")
            .unwrap();
        assert!(
            signed
                .headers
                .contains(&(EVENT_NAME.into(), "order_created".into()))
        );
    }

    #[test]
    fn missing_and_malformed() {
        assert!(matches!(
            LemonSqueezy.check(&request(&[], BODY), b"k"),
            Err(CheckError::MissingHeader { .. })
        ));
        let req = RawRequest::post("/", [(HMAC.header, b"\xc3\x28".to_vec())], BODY.to_vec());
        assert!(matches!(
            LemonSqueezy.check(&req, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn metadata_keys_on_object_and_event() {
        let m = LemonSqueezy.metadata(&request(&[], BODY));
        assert_eq!(m.event_type.as_deref(), Some("order_created"));
        assert_eq!(m.object_id.as_deref(), Some("1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("1:order_created"));
        assert!(m.provider_time.is_some());
        let header_only = LemonSqueezy.metadata(&request(&[(EVENT_NAME, "order_refunded")], b""));
        assert_eq!(header_only.event_type.as_deref(), Some("order_refunded"));
        assert_eq!(header_only.idempotency_key, None, "no object id, no key");
    }
}
