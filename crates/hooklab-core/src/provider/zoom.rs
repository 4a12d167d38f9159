//! Zoom: `x-zm-signature: v0=<hex HMAC-SHA256(secret token, "v0:{ts}:{raw body}")>` with the
//! Unix seconds in `x-zm-request-timestamp` (the same construction as Slack).
//!
//! Zoom's docs publish no tolerance and its samples do not check one; ±300 s is our default
//! (as for Slack), adjustable per source. `endpoint.url_validation` requests are signed too.

use super::common::{V0Hmac, json_body, json_str, json_time};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Zoom;

const V0: V0Hmac = V0Hmac {
    signature_header: "x-zm-signature",
    timestamp_header: "x-zm-request-timestamp",
};

impl Scheme for Zoom {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Zoom,
            name: "Zoom".into(),
            headers: vec![V0.signature_header.into(), V0.timestamp_header.into()],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Hex.name().into(),
            signed_payload: "v0:{timestamp}:{body}".into(),
            secret_format: "the app's Secret Token (UTF-8)".into(),
            // Not an SDK default: Zoom documents none. A Slack-like window is a sane default.
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
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        let event = json_str(&body, "/event");
        let event_ts = json_str(&body, "/event_ts");
        // No delivery id: the event name and its millisecond timestamp identify an event.
        let idempotency_key = match (&event, event_ts) {
            (Some(e), Some(ts)) => Some(format!("{e}:{ts}")),
            _ => None,
        };
        Metadata {
            event_id: None,
            event_type: event,
            object_id: json_str(&body, "/payload/object/id"),
            provider_time: json_time(&body, "/event_ts"),
            idempotency_key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;
    use crate::clock::UnixMillis;

    const BODY: &[u8] = br#"{"event":"meeting.started","payload":{"object":{"id":"1234567890"}},"event_ts":1700000000123}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("zoom", &Zoom), 1, "the Zoom vector ran");
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(&Zoom, "zoom_secret_token_1", BODY, V0.signature_header);
    }

    #[test]
    fn missing_and_malformed_headers() {
        assert_eq!(
            Zoom.check(&request(&[], BODY), b"k"),
            Err(CheckError::MissingHeader {
                header: "x-zm-signature".into()
            })
        );
        let req = request(
            &[
                ("x-zm-signature", "sha256=00"),
                ("x-zm-request-timestamp", "1"),
            ],
            BODY,
        );
        assert!(matches!(
            Zoom.check(&req, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn metadata_keys_on_event_and_timestamp() {
        let m = Zoom.metadata(&request(&[], BODY));
        assert_eq!(m.event_type.as_deref(), Some("meeting.started"));
        assert_eq!(m.object_id.as_deref(), Some("1234567890"));
        assert_eq!(
            m.provider_time,
            Some(UnixMillis(1_700_000_000_123)),
            "event_ts is ms"
        );
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("meeting.started:1700000000123")
        );
        assert_eq!(Zoom.metadata(&request(&[], b"")), Metadata::default());
    }
}
