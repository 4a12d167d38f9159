//! Meta (WhatsApp Cloud API, Messenger, Instagram): `X-Hub-Signature-256:
//! sha256=<hex HMAC-SHA256(app secret, raw body)>`. Meta `\u`-escapes non-ASCII in what it
//! signs, so only the raw bytes verify. No timestamp. The legacy `X-Hub-Signature` (SHA-1) is
//! sent too but not checked.

use super::common::{json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Meta;

const SHA256: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature-256",
    prefix: "sha256=",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

const SHA1: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature",
    prefix: "sha1=",
    prefix_optional: false,
    digest: Digest::Sha1,
    encoding: Encoding::Hex,
};

impl Scheme for Meta {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Meta,
            name: "Meta (WhatsApp, Messenger, Instagram)".into(),
            headers: vec![SHA256.header.into()],
            algorithm: SHA256.digest.hmac_name().into(),
            encoding: SHA256.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the app's App Secret (UTF-8), not the verify token".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        SHA256.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(Signed {
            headers: vec![SHA256.sign(input.body, key), SHA1.sign(input.body, key)],
            ..Signed::default()
        })
    }

    /// Best effort over the first entry and change: WhatsApp message (or status) ids are
    /// `wamid…`; `object` plus the change's `field` make the type.
    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        let change = "/entry/0/changes/0";
        let event_id = ["/value/messages/0/id", "/value/statuses/0/id"]
            .iter()
            .find_map(|p| json_str(&body, &format!("{change}{p}")))
            .or_else(|| json_str(&body, "/entry/0/messaging/0/message/mid"));
        let event_type = match (
            json_str(&body, "/object"),
            json_str(&body, &format!("{change}/field")),
        ) {
            (Some(object), Some(field)) => Some(format!("{object}.{field}")),
            (object, _) => object,
        };
        Metadata {
            event_id,
            event_type,
            object_id: json_str(&body, "/entry/0/id"),
            provider_time: json_time(&body, "/entry/0/time")
                .or_else(|| json_time(&body, &format!("{change}/value/messages/0/timestamp"))),
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
        assert_eq!(run_vectors("meta", &Meta), 1, "the Meta vector ran");
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        let body = br#"{"object":"page","entry":[{"id":"1","time":1700000000000}]}"#;
        assert_round_trip(&Meta, "meta_app_secret_123", body, SHA256.header);
    }

    #[test]
    fn prefix_required() {
        let req = request(&[(SHA256.header, "00ff")], b"{}");
        assert!(matches!(
            Meta.check(&req, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn whatsapp_metadata() {
        let body = br#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messages":[{"id":"wamid.HBgL","timestamp":"1700000000"}]}}]}]}"#;
        let m = Meta.metadata(&request(&[], body));
        assert_eq!(m.event_id.as_deref(), Some("wamid.HBgL"));
        assert_eq!(m.idempotency_key.as_deref(), Some("wamid.HBgL"));
        assert_eq!(
            m.event_type.as_deref(),
            Some("whatsapp_business_account.messages")
        );
        assert_eq!(m.object_id.as_deref(), Some("102290129340398"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
        assert_eq!(
            Meta.metadata(&request(&[], b"hub.mode=x")),
            Metadata::default()
        );
    }
}
