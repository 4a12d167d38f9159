//! Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`, where each `v1` is
//! HMAC-SHA256 of `"{t}.{raw body}"` keyed with the whole `whsec_…` string (no decoding).
//!
//! Any matching `v1` is enough (Stripe sends one per active secret during a roll); `v0` and
//! other schemes are ignored. The timestamp is only checked against the past (300 s).

use super::common::{
    any_matches, json_body, json_str, json_time, parse_keyed, parse_unix_secs, required_header,
};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, Tolerance, hmac_digest};
use crate::metadata::Metadata;
use crate::request::RawRequest;

const HEADER: &str = "Stripe-Signature";

pub(crate) struct Stripe;

fn digest(key: &[u8], timestamp: &str, body: &[u8]) -> Vec<u8> {
    hmac_digest(Digest::Sha256, key, &[timestamp.as_bytes(), b".", body])
}

impl Scheme for Stripe {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Stripe,
            name: "Stripe".into(),
            headers: vec![HEADER.into()],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Hex.name().into(),
            signed_payload: "{t}.{body}".into(),
            secret_format: "the whole whsec_… signing secret, verbatim (not base64-decoded)".into(),
            tolerance: Tolerance::past_only(300),
            signs_url: false,
        }
    }

    // `key`: the default (the secret's UTF-8 bytes, `whsec_` included) is what the SDKs use.

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let text = required_header(req, HEADER)?;
        let parsed = parse_keyed(HEADER, text, ',', "t", "v1")?;
        let timestamp = parse_unix_secs(HEADER, parsed.timestamp)?;
        let expected = digest(key, parsed.timestamp, &req.body);
        let matched = any_matches(HEADER, Encoding::Hex, &parsed.signatures, &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let t = input.now.as_secs().to_string();
        let v1 = hex::encode(digest(key, &t, input.body));
        Ok(Signed {
            headers: vec![(HEADER.into(), format!("t={t},v1={v1}"))],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        Metadata {
            event_id: json_str(&body, "/id"),
            event_type: json_str(&body, "/type"),
            object_id: json_str(&body, "/data/object/id"),
            provider_time: json_time(&body, "/created"),
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

    const BODY: &[u8] = br#"{"id":"evt_1","object":"event","type":"payment_intent.succeeded","created":1700000000,"data":{"object":{"id":"pi_1"}}}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("stripe", &Stripe),
            6,
            "all six Stripe vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Stripe, "whsec_test_secret", BODY, HEADER);
    }

    #[test]
    fn any_v1_matches_and_v0_is_ignored() {
        let good = hex::encode(digest(b"k", "1700000000", BODY));
        let header = format!("t=1700000000,v0={good},v1=bad_signature,v1={good},junk");
        let check = Stripe
            .check(&request(&[(HEADER, &header)], BODY), b"k")
            .unwrap();
        assert!(check.matched, "the second v1 matches");
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_700_000_000)));

        let only_v0 = format!("t=1700000000,v0={good}");
        let err = Stripe.check(&request(&[(HEADER, &only_v0)], BODY), b"k");
        assert!(
            matches!(err, Err(CheckError::MalformedHeader { ref detail, .. }) if detail.contains("v0")),
            "v0 is never accepted, and the detail says what was found: {err:?}"
        );
    }

    #[test]
    fn malformed_headers_are_precise() {
        let cases: &[(&[u8], &str)] = &[
            (b"v1=abcd", "no `t=`"),
            (b"t=12x,v1=ab", "not a whole"),
            (b"t=-5,v1=ab", "not a whole"),
            (b"t=1", "no `v1=`"),
            (b"t=1,v1=zz", "`zz` is not hex"),
            (b"t=1,v1=zz,v1=", "none of the 2 signatures is hex"),
            (b"t=1,v1=", "empty"),
            (b"  ", "empty"),
            (b"\xff\xfe", "UTF-8"),
        ];
        for (value, want) in cases {
            let req = RawRequest::post("/", [(HEADER, value.to_vec())], BODY.to_vec());
            match Stripe.check(&req, b"k") {
                Err(CheckError::MalformedHeader { detail, .. }) => {
                    assert!(
                        detail.contains(want),
                        "{value:?}: `{detail}` mentions `{want}`"
                    )
                }
                other => panic!("{value:?} should be malformed, got {other:?}"),
            }
        }
        let missing = Stripe.check(&request(&[], BODY), b"k");
        assert_eq!(
            missing,
            Err(CheckError::MissingHeader {
                header: HEADER.into()
            })
        );
    }

    #[test]
    fn metadata_reads_the_event() {
        let m = Stripe.metadata(&request(&[], BODY));
        assert_eq!(m.event_id.as_deref(), Some("evt_1"));
        assert_eq!(m.event_type.as_deref(), Some("payment_intent.succeeded"));
        assert_eq!(m.object_id.as_deref(), Some("pi_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("evt_1"),
            "the event id dedupes"
        );
        assert_eq!(Stripe.metadata(&request(&[], b"\xff")), Metadata::default());
    }
}
