//! Hotmart (webhook v2): no signature. The `X-HOTMART-HOTTOK` header must equal the account's
//! hottok, compared in constant time (see [`super::token`]). The body is not protected. The old
//! postback v1 put `hottok` in the form body; it is not supported.
//!
//! Metadata: body `id`, `event` (`PURCHASE_APPROVED`), `data.purchase.transaction` as the
//! object, and `creation_date` (milliseconds) as the provider time.

use super::common::{json_body, json_str, json_time};
use super::token::{check_token, sign_token, token_key};
use super::{
    Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed,
    Tolerance,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;

const HEADER: &str = "X-HOTMART-HOTTOK";

pub(crate) struct Hotmart;

impl Scheme for Hotmart {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Hotmart,
            name: "Hotmart".into(),
            headers: vec![HEADER.into()],
            algorithm: "token".into(),
            encoding: "plain text".into(),
            signed_payload: "nothing: the header must equal the account's hottok \
                             (the body is not protected)"
                .into(),
            secret_format: "the hottok shown in Hotmart's webhook settings, verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        token_key(secret)
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        check_token(req, HEADER, "", key)
    }

    fn sign(&self, _input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(sign_token(HEADER, "", key))
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        Metadata {
            event_id: json_str(&body, "/id"),
            event_type: json_str(&body, "/event"),
            object_id: json_str(&body, "/data/purchase/transaction"),
            provider_time: json_time(&body, "/creation_date"),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;
    use crate::clock::UnixMillis;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("hotmart", &Hotmart), 2);
    }

    #[test]
    fn round_trip_and_a_changed_character() {
        let key = Hotmart.key(&Secret::new("hottok_abc")).unwrap();
        let signed = Hotmart
            .sign(&SignInput::new(b"{}", UnixMillis(0)), &key)
            .unwrap();
        let req = RawRequest::post("/h", signed.headers_as_pairs(), b"{}".to_vec());
        assert!(
            Hotmart.check(&req, &key).unwrap().matched,
            "what we send verifies"
        );
        let req = RawRequest::post("/h", [("x-hotmart-hottok", "hottok_abd")], vec![]);
        assert!(
            !Hotmart.check(&req, &key).unwrap().matched,
            "one changed character fails"
        );
    }

    #[test]
    fn missing_header() {
        let req = RawRequest::post("/h", [("hottok", "hottok_abc")], vec![]);
        assert!(matches!(
            Hotmart.check(&req, b"hottok_abc"),
            Err(CheckError::MissingHeader { .. })
        ));
    }

    #[test]
    fn metadata() {
        let body = br#"{"id":"2f8c7a2e-1","creation_date":1632411446145,"event":"PURCHASE_APPROVED","version":"2.0.0","data":{"purchase":{"transaction":"HP16015479281022","status":"APPROVED"}}}"#;
        let m = Hotmart.metadata(&RawRequest::post("/h", [(HEADER, "x")], body.to_vec()));
        assert_eq!(m.event_id.as_deref(), Some("2f8c7a2e-1"));
        assert_eq!(m.event_type.as_deref(), Some("PURCHASE_APPROVED"));
        assert_eq!(m.object_id.as_deref(), Some("HP16015479281022"));
        assert_eq!(
            m.provider_time,
            Some(UnixMillis(1_632_411_446_145)),
            "creation_date is in ms"
        );
        assert_eq!(m.idempotency_key.as_deref(), Some("2f8c7a2e-1"));
        assert_eq!(
            Hotmart.metadata(&RawRequest::post("/h", [(HEADER, "x")], b"[".to_vec())),
            Metadata::default()
        );
    }
}
