//! Pagar.me v4 postbacks: `X-Hub-Signature: sha1=<hex HMAC-SHA1(account API key, raw body)>`.
//! Bodies are usually form-encoded. pagarme-js takes the hex without `sha1=`, so a bare value
//! is accepted too. No timestamp.

use super::common::{json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::{RawRequest, parse_form};

pub(crate) struct Pagarme;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature",
    prefix: "sha1=",
    prefix_optional: true,
    digest: Digest::Sha1,
    encoding: Encoding::Hex,
};

impl Scheme for Pagarme {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Pagarme,
            name: "Pagar.me".into(),
            headers: vec![HMAC.header.into()],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the account's API key (UTF-8)".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        HMAC.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(Signed {
            headers: vec![HMAC.sign(input.body, key)],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        if let Some(body) = json_body(req) {
            // v5-style JSON: `{"id":"hook_…","type":"order.paid","data":{"id":"or_…"}}`.
            return Metadata {
                event_id: json_str(&body, "/id"),
                event_type: json_str(&body, "/type").or_else(|| json_str(&body, "/event")),
                object_id: json_str(&body, "/data/id"),
                provider_time: json_time(&body, "/created_at"),
                idempotency_key: None,
            }
            .with_default_key();
        }
        // v4 form postback: `id` is the object (transaction) id; each status change posts
        // again, so the key is `id:current_status`.
        let form = parse_form(&req.body);
        let field = |name: &str| {
            form.iter()
                .find(|(k, v)| k == name && !v.is_empty())
                .map(|(_, v)| v.clone())
        };
        let object_id = field("id");
        let idempotency_key = match (&object_id, field("current_status")) {
            (Some(id), Some(status)) => Some(format!("{id}:{status}")),
            _ => None,
        };
        Metadata {
            event_id: None,
            event_type: field("event"),
            object_id,
            provider_time: None,
            idempotency_key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    const FORM: &[u8] = b"id=1234&fingerprint=abc&event=transaction_status_changed&old_status=processing&desired_status=paid&current_status=paid&object=transaction";

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("pagarme", &Pagarme),
            1,
            "the Pagar.me vector ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Pagarme, "ak_test_key", FORM, HMAC.header);
    }

    #[test]
    fn bare_hex_is_accepted_and_garbage_is_malformed() {
        let bare = request(
            &[(HMAC.header, "70bbf6819d1037aa94ca7e7f537cbea25fe49283")],
            b"body",
        );
        assert!(
            Pagarme.check(&bare, b"key").unwrap().matched,
            "the SDK's own form"
        );
        let junk = request(&[(HMAC.header, "sha1=not-hex")], b"body");
        assert!(matches!(
            Pagarme.check(&junk, b"key"),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn metadata_for_form_and_json() {
        let m = Pagarme.metadata(&request(&[], FORM));
        assert_eq!(m.object_id.as_deref(), Some("1234"));
        assert_eq!(m.event_type.as_deref(), Some("transaction_status_changed"));
        assert_eq!(m.idempotency_key.as_deref(), Some("1234:paid"));
        let json = br#"{"id":"hook_1","type":"order.paid","data":{"id":"or_1"}}"#;
        let m = Pagarme.metadata(&request(&[], json));
        assert_eq!(m.event_id.as_deref(), Some("hook_1"));
        assert_eq!(m.event_type.as_deref(), Some("order.paid"));
        assert_eq!(m.object_id.as_deref(), Some("or_1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("hook_1"));
    }
}
