//! Twitch EventSub (webhook transport): `Twitch-Eventsub-Message-Signature: sha256=<hex>`, the
//! HMAC-SHA256 of `message id + timestamp + raw body`, where the timestamp is the raw RFC 3339
//! header string (nanoseconds). Messages older than 10 minutes are rejected.

use super::common::{
    any_matches, header_string, json_body, json_str, required_header, shorten, uuid_from_body,
};
use super::{Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError};
use super::{Digest, Encoding, SignInput, Signed, Tolerance, hmac_digest};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;

pub(crate) struct Twitch;

const ID: &str = "Twitch-Eventsub-Message-Id";
const TIMESTAMP: &str = "Twitch-Eventsub-Message-Timestamp";
const SIGNATURE: &str = "Twitch-Eventsub-Message-Signature";
const TYPE: &str = "Twitch-Eventsub-Message-Type";

fn digest(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> Vec<u8> {
    hmac_digest(
        Digest::Sha256,
        key,
        &[id.as_bytes(), timestamp.as_bytes(), body],
    )
}

impl Scheme for Twitch {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Twitch,
            name: "Twitch EventSub".into(),
            headers: vec![ID.into(), TIMESTAMP.into(), SIGNATURE.into(), TYPE.into()],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Hex.name().into(),
            signed_payload: "{message_id}{timestamp}{body}".into(),
            secret_format: "the subscription's secret, 10 to 100 characters (UTF-8)".into(),
            tolerance: Tolerance::past_only(600),
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        let len = secret.expose().chars().count();
        if !(10..=100).contains(&len) {
            return Err(KeyError {
                detail: format!(
                    "an EventSub subscription secret has 10 to 100 characters; this one has {len}"
                ),
            });
        }
        Ok(secret.expose().as_bytes().to_vec())
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let id = required_header(req, ID)?;
        let ts_text = required_header(req, TIMESTAMP)?;
        let signature = required_header(req, SIGNATURE)?;
        let timestamp =
            UnixMillis::parse_rfc3339(ts_text).ok_or_else(|| CheckError::MalformedHeader {
                header: TIMESTAMP.into(),
                detail: format!("`{}` is not an RFC 3339 date-time", shorten(ts_text)),
            })?;
        let hex_sig =
            signature
                .strip_prefix("sha256=")
                .ok_or_else(|| CheckError::MalformedHeader {
                    header: SIGNATURE.into(),
                    detail: "expected `sha256=<hex>`".into(),
                })?;
        let expected = digest(key, id, ts_text, &req.body);
        let matched = any_matches(SIGNATURE, Encoding::Hex, &[hex_sig], &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let id = input
            .id
            .map_or_else(|| uuid_from_body(input.body), str::to_string);
        let ts = input.now.to_rfc3339();
        let sig = hex::encode(digest(key, &id, &ts, input.body));
        let body: serde_json::Value = serde_json::from_slice(input.body).unwrap_or_default();
        let kind = match () {
            _ if body.get("challenge").is_some() => "webhook_callback_verification",
            _ if body.get("event").is_none()
                && json_str(&body, "/subscription/status").is_some_and(|s| s != "enabled") =>
            {
                "revocation"
            }
            _ => "notification",
        };
        let mut headers = vec![
            (ID.to_string(), id),
            (TIMESTAMP.to_string(), ts),
            (SIGNATURE.to_string(), format!("sha256={sig}")),
            (TYPE.to_string(), kind.to_string()),
        ];
        for (name, pointer) in [
            ("Twitch-Eventsub-Subscription-Type", "/subscription/type"),
            (
                "Twitch-Eventsub-Subscription-Version",
                "/subscription/version",
            ),
        ] {
            if let Some(value) = json_str(&body, pointer) {
                headers.push((name.to_string(), value));
            }
        }
        Ok(Signed {
            headers,
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        Metadata {
            event_id: header_string(req, ID),
            event_type: json_str(&body, "/subscription/type")
                .or_else(|| header_string(req, "Twitch-Eventsub-Subscription-Type"))
                .or_else(|| header_string(req, TYPE)),
            object_id: json_str(&body, "/subscription/id"),
            provider_time: req
                .header_str(TIMESTAMP)
                .and_then(UnixMillis::parse_rfc3339),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    const BODY: &[u8] = br#"{"subscription":{"id":"sub_1","type":"channel.follow","version":"2","status":"enabled"},"event":{"user_id":"1337"}}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("twitch", &Twitch), 1, "the Twitch vector ran");
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Twitch, "s3cRe7s3cRe7", BODY, SIGNATURE);
        let challenge = br#"{"challenge":"abc","subscription":{"type":"channel.follow"}}"#;
        let signed = Twitch
            .sign(&SignInput::new(challenge, UnixMillis(0)), b"k")
            .unwrap();
        assert!(
            signed
                .headers
                .contains(&(TYPE.into(), "webhook_callback_verification".into()))
        );
    }

    #[test]
    fn the_raw_timestamp_string_is_signed() {
        let ts = "2019-11-16T10:11:12.634234626Z";
        let sig = format!("sha256={}", hex::encode(digest(b"k", "m1", ts, BODY)));
        let headers = [(ID, "m1"), (TIMESTAMP, ts), (SIGNATURE, sig.as_str())];
        let check = Twitch.check(&request(&headers, BODY), b"k").unwrap();
        assert!(check.matched);
        assert_eq!(check.timestamp, Some(UnixMillis(1_573_899_072_634)));
    }

    #[test]
    fn malformed_and_missing_headers() {
        let ok_ts = "2019-11-16T10:11:12Z";
        let cases = [
            (
                [
                    (ID, "m1"),
                    (TIMESTAMP, "1573899072"),
                    (SIGNATURE, "sha256=00"),
                ],
                TIMESTAMP,
            ),
            (
                [(ID, "m1"), (TIMESTAMP, ok_ts), (SIGNATURE, "00")],
                SIGNATURE,
            ),
            (
                [(ID, "m1"), (TIMESTAMP, ok_ts), (SIGNATURE, "sha256=xyz")],
                SIGNATURE,
            ),
        ];
        for (headers, bad) in cases {
            match Twitch.check(&request(&headers, BODY), b"k") {
                Err(CheckError::MalformedHeader { header, .. }) => assert_eq!(header, bad),
                other => panic!("{headers:?}: {other:?}"),
            }
        }
        let missing = Twitch.check(&request(&[(TIMESTAMP, ok_ts)], BODY), b"k");
        assert_eq!(
            missing,
            Err(CheckError::MissingHeader { header: ID.into() })
        );
    }

    #[test]
    fn secret_length_is_enforced() {
        assert!(Twitch.key(&Secret::new("short")).is_err());
        assert!(Twitch.key(&Secret::new("x".repeat(101))).is_err());
        assert_eq!(
            Twitch.key(&Secret::new("s3cRe7s3cRe7")).unwrap(),
            b"s3cRe7s3cRe7"
        );
    }

    #[test]
    fn metadata_uses_message_id_and_subscription_type() {
        let headers = [(ID, "m1"), (TIMESTAMP, "2023-11-14T22:13:20Z")];
        let m = Twitch.metadata(&request(&headers, BODY));
        assert_eq!(m.event_id.as_deref(), Some("m1"));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("m1"),
            "retries keep the message id"
        );
        assert_eq!(m.event_type.as_deref(), Some("channel.follow"));
        assert_eq!(m.object_id.as_deref(), Some("sub_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
    }
}
