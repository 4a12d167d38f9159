//! Asaas: no signature. The `asaas-access-token` header must equal the `authToken` configured on
//! the webhook, compared in constant time (see [`super::token`]). The body is not protected.
//!
//! Metadata: the body's `id` (`evt_…`) is the event id; `event` (`PAYMENT_RECEIVED`) its type;
//! the resource is the object named by the event's first word (`payment`, `transfer`…).

use super::common::{json_body, json_str};
use super::token::{check_token, sign_token, token_key};
use super::{
    Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed,
    Tolerance,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;

const HEADER: &str = "asaas-access-token";

pub(crate) struct Asaas;

impl Scheme for Asaas {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Asaas,
            name: "Asaas".into(),
            headers: vec![HEADER.into()],
            algorithm: "token".into(),
            encoding: "plain text".into(),
            signed_payload: "nothing: the header must equal the webhook's authToken \
                             (the body is not protected)"
                .into(),
            secret_format: "the webhook's authToken (\"Token de autenticação\"), verbatim".into(),
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
        let event = json_str(&body, "/event");
        // `PAYMENT_RECEIVED` is about `payment`, `TRANSFER_DONE` about `transfer`…
        let resource = event
            .as_deref()
            .and_then(|e| e.split('_').next())
            .map(str::to_ascii_lowercase)
            .and_then(|r| json_str(&body, &format!("/{r}/id")));
        Metadata {
            event_id: json_str(&body, "/id"),
            event_type: event,
            object_id: resource.or_else(|| json_str(&body, "/payment/id")),
            provider_time: None,
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("asaas", &Asaas), 2);
    }

    #[test]
    fn round_trip_and_a_changed_character() {
        let key = Asaas.key(&Secret::new("asaas_tok")).unwrap();
        let signed = Asaas
            .sign(&SignInput::new(b"{}", crate::clock::UnixMillis(0)), &key)
            .unwrap();
        let req = RawRequest::post("/a", signed.headers_as_pairs(), b"{}".to_vec());
        assert!(
            Asaas.check(&req, &key).unwrap().matched,
            "what we send verifies"
        );
        let req = RawRequest::post("/a", [(HEADER, "asaas_toK")], vec![]);
        assert!(
            !Asaas.check(&req, &key).unwrap().matched,
            "one changed character fails"
        );
    }

    #[test]
    fn missing_header() {
        let req = RawRequest::post("/a", [("Authorization", "asaas_tok")], vec![]);
        assert_eq!(
            Asaas.check(&req, b"asaas_tok"),
            Err(CheckError::MissingHeader {
                header: HEADER.into()
            })
        );
    }

    #[test]
    fn metadata_follows_the_event_resource() {
        let body = br#"{"id":"evt_05b708f961d739ea7eba7e4db318f621&368604920","event":"PAYMENT_RECEIVED","dateCreated":"2024-06-12 16:45:03","payment":{"object":"payment","id":"pay_080225913252","status":"RECEIVED"}}"#;
        let m = Asaas.metadata(&RawRequest::post("/a", [(HEADER, "x")], body.to_vec()));
        assert_eq!(
            m.event_id.as_deref(),
            Some("evt_05b708f961d739ea7eba7e4db318f621&368604920")
        );
        assert_eq!(m.event_type.as_deref(), Some("PAYMENT_RECEIVED"));
        assert_eq!(m.object_id.as_deref(), Some("pay_080225913252"));
        assert_eq!(
            m.idempotency_key, m.event_id,
            "the event id is stable across retries"
        );

        let body = br#"{"id":"evt_2","event":"TRANSFER_DONE","transfer":{"id":"tra_1"}}"#;
        let m = Asaas.metadata(&RawRequest::post("/a", [(HEADER, "x")], body.to_vec()));
        assert_eq!(m.object_id.as_deref(), Some("tra_1"));
        assert_eq!(
            Asaas.metadata(&RawRequest::post("/a", [(HEADER, "x")], vec![0xff])),
            Metadata::default()
        );
    }
}
