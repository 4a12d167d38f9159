//! Mollie next-gen webhooks: `X-Mollie-Signature: [sha256=]<hex HMAC-SHA256(shared secret,
//! raw body)>`; during a secret rotation the header is sent twice, one per secret, and either
//! may match. No timestamp.
//!
//! Classic webhooks (a payment's `webhookUrl`, body `id=tr_…`) are **unsigned**: the answer is
//! to fetch the resource from the API, so they are reported as not signed, not as invalid.

use super::common::{json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::{RawRequest, parse_form};

pub(crate) struct Mollie;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Mollie-Signature",
    prefix: "sha256=",
    prefix_optional: true,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

/// The resource id of a classic webhook (`id=tr_…` form body), if that is what this is.
fn classic_id(req: &RawRequest) -> Option<String> {
    let form = parse_form(&req.body);
    match form.as_slice() {
        [(k, v)] if k == "id" && !v.is_empty() => Some(v.clone()),
        _ => None,
    }
}

impl Scheme for Mollie {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Mollie,
            name: "Mollie".into(),
            headers: vec![HMAC.header.into()],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the webhook subscription's shared secret (UTF-8)".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        if req.header(HMAC.header).is_none() {
            if let Some(id) = classic_id(req) {
                return Err(CheckError::NotSigned {
                    detail: format!(
                        "a classic Mollie webhook (`id={id}`) is unsigned; fetch the resource \
                         from the Mollie API to learn its status"
                    ),
                });
            }
        }
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
            return Metadata {
                event_id: json_str(&body, "/id"),
                event_type: json_str(&body, "/type"),
                object_id: json_str(&body, "/entityId"),
                provider_time: json_time(&body, "/createdAt"),
                idempotency_key: None,
            }
            .with_default_key();
        }
        // Classic: the id is the resource, and each status change calls again with the same
        // id, so it is no idempotency key.
        Metadata {
            object_id: classic_id(req),
            ..Metadata::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    const BODY: &[u8] = br#"{"resource":"event","id":"event_1","type":"payment-link.paid","entityId":"pl_1","createdAt":"2024-12-16T15:57:04.0Z"}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("mollie", &Mollie), 1, "the Mollie vector ran");
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Mollie, "mollie_shared_secret_1", BODY, HMAC.header);
    }

    #[test]
    fn either_header_of_a_rotation_matches_and_the_prefix_is_optional() {
        let (name, good) = HMAC.sign(BODY, b"new");
        let bare = good.trim_start_matches("sha256=").to_string();
        let old = HMAC.sign(BODY, b"old").1;
        for value in [good, bare] {
            let req = request(
                &[(name.as_str(), old.as_str()), (name.as_str(), &value)],
                BODY,
            );
            assert!(Mollie.check(&req, b"new").unwrap().matched, "{value}");
        }
    }

    #[test]
    fn classic_webhooks_are_not_signed() {
        let classic = request(&[], b"id=tr_d0b0E3EA3v");
        assert!(matches!(
            Mollie.check(&classic, b"k"),
            Err(CheckError::NotSigned { .. })
        ));
        assert_eq!(
            Mollie.metadata(&classic).object_id.as_deref(),
            Some("tr_d0b0E3EA3v")
        );
        assert_eq!(
            Mollie.check(&request(&[], BODY), b"k"),
            Err(CheckError::MissingHeader {
                header: HMAC.header.into()
            }),
            "a JSON body without the header is a missing signature"
        );
    }

    #[test]
    fn metadata_reads_the_event() {
        let m = Mollie.metadata(&request(&[], BODY));
        assert_eq!(m.event_id.as_deref(), Some("event_1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("event_1"));
        assert_eq!(m.event_type.as_deref(), Some("payment-link.paid"));
        assert_eq!(m.object_id.as_deref(), Some("pl_1"));
        assert!(m.provider_time.is_some());
    }
}
