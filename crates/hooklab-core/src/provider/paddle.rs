//! Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>…]`, each `h1` being
//! HMAC-SHA256 of `"{ts}:{raw body}"` keyed with the endpoint secret verbatim
//! (`pdl_ntfset_…` included).
//!
//! Any matching `h1` is enough (as paddle-python); unknown keys such as `h2` are ignored (as
//! paddle-node; paddle-python raises). The SDK tolerance is 5 s, past only.

use super::common::{
    any_matches, json_body, json_str, json_time, parse_keyed, parse_unix_secs, required_header,
};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, Tolerance, hmac_digest};
use crate::metadata::Metadata;
use crate::request::RawRequest;

const HEADER: &str = "Paddle-Signature";

pub(crate) struct Paddle;

fn digest(key: &[u8], ts: &str, body: &[u8]) -> Vec<u8> {
    hmac_digest(Digest::Sha256, key, &[ts.as_bytes(), b":", body])
}

impl Scheme for Paddle {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Paddle,
            name: "Paddle".into(),
            headers: vec![HEADER.into()],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Hex.name().into(),
            signed_payload: "{ts}:{body}".into(),
            secret_format: "the notification destination's secret key, verbatim \
                            (pdl_ntfset_… prefix included)"
                .into(),
            tolerance: Tolerance::past_only(5),
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let text = required_header(req, HEADER)?;
        let parsed = parse_keyed(HEADER, text, ';', "ts", "h1")?;
        let timestamp = parse_unix_secs(HEADER, parsed.timestamp)?;
        let expected = digest(key, parsed.timestamp, &req.body);
        let matched = any_matches(HEADER, Encoding::Hex, &parsed.signatures, &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let ts = input.now.as_secs().to_string();
        let h1 = hex::encode(digest(key, &ts, input.body));
        Ok(Signed {
            headers: vec![(HEADER.into(), format!("ts={ts};h1={h1}"))],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        Metadata {
            event_id: json_str(&body, "/event_id"),
            event_type: json_str(&body, "/event_type"),
            object_id: json_str(&body, "/data/id"),
            provider_time: json_time(&body, "/occurred_at"),
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

    const BODY: &[u8] = br#"{"data": ["1", "2"]}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("paddle", &Paddle),
            6,
            "all six Paddle vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        let secret = "pdl_ntfset_01hs0t3tw21j988db1pam5xg8m_GrOWLNef+vmtjJYq4mSnHNzvc8uWoJ1I";
        assert_round_trip(&Paddle, secret, BODY, HEADER);
    }

    #[test]
    fn any_h1_matches_and_h2_is_ignored() {
        let good = hex::encode(digest(b"k", "1698796800", BODY));
        let header = format!("ts=1698796800;h2=RANDOM_HASH;h1=dummy;h1={good}");
        let check = Paddle
            .check(&request(&[(HEADER, &header)], BODY), b"k")
            .unwrap();
        assert!(check.matched);
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_698_796_800)));
    }

    #[test]
    fn malformed_headers() {
        for (value, want) in [
            ("h1=00", "no `ts=`"),
            ("ts=1", "no `h1=`"),
            ("ts=1;h2=00", "h2"),
            ("ts=x;h1=00", "Unix seconds"),
            ("ts=1;h1=invalid_signature", "hex"),
            ("ts=1,h1=00", "no `h1=`"),
        ] {
            match Paddle.check(&request(&[(HEADER, value)], BODY), b"k") {
                Err(CheckError::MalformedHeader { detail, .. }) => {
                    assert!(detail.contains(want), "{value}: `{detail}` mentions {want}")
                }
                other => panic!("{value} should be malformed: {other:?}"),
            }
        }
    }

    #[test]
    fn metadata_reads_the_event() {
        let body = br#"{"event_id":"evt_1","event_type":"transaction.completed","occurred_at":"2023-11-14T22:13:20.000000Z","notification_id":"ntf_1","data":{"id":"txn_1"}}"#;
        let m = Paddle.metadata(&request(&[], body));
        assert_eq!(m.event_id.as_deref(), Some("evt_1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("evt_1"));
        assert_eq!(m.event_type.as_deref(), Some("transaction.completed"));
        assert_eq!(m.object_id.as_deref(), Some("txn_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
    }
}
