//! Intercom: `X-Hub-Signature: sha1=<hex HMAC-SHA1(client secret, raw body)>`. No timestamp;
//! the notification id (`notif_…`) and topic are in the body.

use super::common::{json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Intercom;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature",
    prefix: "sha1=",
    prefix_optional: false,
    digest: Digest::Sha1,
    encoding: Encoding::Hex,
};

impl Scheme for Intercom {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Intercom,
            name: "Intercom".into(),
            headers: vec![HMAC.header.into()],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the app's client secret (UTF-8)".into(),
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
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        Metadata {
            event_id: json_str(&body, "/id"),
            event_type: json_str(&body, "/topic"),
            object_id: json_str(&body, "/data/item/id"),
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

    const BODY: &[u8] = br#"{"type":"notification_event","topic":"conversation.user.created","id":"notif_1","created_at":1700000000,"data":{"item":{"id":"conv_1"}}}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("intercom", &Intercom),
            1,
            "the Intercom vector ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Intercom, "intercom_client_secret_1", BODY, HMAC.header);
    }

    #[test]
    fn sha256_prefix_is_malformed() {
        let req = request(&[(HMAC.header, "sha256=00")], BODY);
        assert!(matches!(
            Intercom.check(&req, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn metadata_reads_the_notification() {
        let m = Intercom.metadata(&request(&[], BODY));
        assert_eq!(m.event_id.as_deref(), Some("notif_1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("notif_1"));
        assert_eq!(m.event_type.as_deref(), Some("conversation.user.created"));
        assert_eq!(m.object_id.as_deref(), Some("conv_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
    }
}
