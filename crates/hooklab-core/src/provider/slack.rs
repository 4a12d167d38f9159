//! Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:{ts}:{raw body}")>`
//! with the Unix seconds in `X-Slack-Request-Timestamp`, checked ±300 s. Events API bodies are
//! JSON; slash commands and interactivity are form-encoded, and those exact bytes are signed.

use super::common::{V0Hmac, json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, Tolerance};
use crate::metadata::Metadata;
use crate::request::{RawRequest, parse_form};

pub(crate) struct Slack;

const V0: V0Hmac = V0Hmac {
    signature_header: "X-Slack-Signature",
    timestamp_header: "X-Slack-Request-Timestamp",
};

impl Scheme for Slack {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Slack,
            name: "Slack".into(),
            headers: vec![V0.signature_header.into(), V0.timestamp_header.into()],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Hex.name().into(),
            signed_payload: "v0:{timestamp}:{body}".into(),
            secret_format: "the app's Signing Secret (UTF-8), not the verification token".into(),
            tolerance: Tolerance::both(300),
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        V0.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(Signed {
            headers: V0.sign(input.body, input.now, key),
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        if let Some(body) = json_body(req) {
            // Events API (`event_callback`) or `url_verification`.
            return Metadata {
                event_id: json_str(&body, "/event_id"),
                event_type: json_str(&body, "/event/type").or(json_str(&body, "/type")),
                object_id: json_str(&body, "/event/channel"),
                provider_time: json_time(&body, "/event_time"),
                idempotency_key: None,
            }
            .with_default_key();
        }
        // Slash commands (`command=/x`) and interactivity (`payload=<json>`); no event id.
        let form = parse_form(&req.body);
        let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let payload: serde_json::Value = field("payload")
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_default();
        Metadata {
            event_type: field("command").or(json_str(&payload, "/type")),
            object_id: field("channel_id").or(json_str(&payload, "/channel/id")),
            ..Metadata::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;
    use crate::clock::UnixMillis;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("slack", &Slack),
            3,
            "all three Slack vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        let body = b"token=x&team_id=T1&command=%2Fdeploy&text=now";
        assert_round_trip(
            &Slack,
            "8f742231b10e8888abcd99yyyzzz85a5",
            body,
            V0.signature_header,
        );
    }

    #[test]
    fn malformed_and_missing_headers() {
        let ts = ("X-Slack-Request-Timestamp", "1531420618");
        let cases = [
            (
                vec![ts],
                CheckError::MissingHeader {
                    header: "X-Slack-Signature".into(),
                },
            ),
            (
                vec![("X-Slack-Signature", "v0=00")],
                CheckError::MissingHeader {
                    header: "X-Slack-Request-Timestamp".into(),
                },
            ),
        ];
        for (headers, want) in cases {
            assert_eq!(Slack.check(&request(&headers, b""), b"k"), Err(want));
        }
        for (sig, ts_value) in [
            ("v1=00", "1"),
            ("00", "1"),
            ("v0=zz", "1"),
            ("v0=00", "1.0"),
        ] {
            let req = request(
                &[
                    ("X-Slack-Signature", sig),
                    ("X-Slack-Request-Timestamp", ts_value),
                ],
                b"",
            );
            assert!(
                matches!(
                    Slack.check(&req, b"k"),
                    Err(CheckError::MalformedHeader { .. })
                ),
                "{sig} / {ts_value} is malformed"
            );
        }
    }

    #[test]
    fn metadata_for_events_and_commands() {
        let event = br#"{"type":"event_callback","event_id":"Ev1","event_time":1700000000,"event":{"type":"message","channel":"C1"}}"#;
        let m = Slack.metadata(&request(&[], event));
        assert_eq!(m.event_id.as_deref(), Some("Ev1"));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("Ev1"),
            "retries keep event_id"
        );
        assert_eq!(m.event_type.as_deref(), Some("message"));
        assert_eq!(m.object_id.as_deref(), Some("C1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));

        let command = Slack.metadata(&request(&[], b"command=%2Fdeploy&channel_id=C2"));
        assert_eq!(command.event_type.as_deref(), Some("/deploy"));
        assert_eq!(command.object_id.as_deref(), Some("C2"));
        assert_eq!(command.event_id, None, "slash commands carry no event id");
        let interactive = Slack.metadata(&request(
            &[],
            b"payload=%7B%22type%22%3A%22block_actions%22%7D",
        ));
        assert_eq!(interactive.event_type.as_deref(), Some("block_actions"));
    }
}
