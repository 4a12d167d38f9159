//! Square: `x-square-hmacsha256-signature` is base64 HMAC-SHA256(signature key, notification
//! URL + raw body). The URL must equal, byte for byte, the one configured on the subscription,
//! so `RawRequest::url` (the public URL) is required. The legacy `x-square-signature` (the same
//! over HMAC-SHA1) is checked only when the SHA-256 header is absent.
//!
//! The signature key looks like base64url (`Ibxx_5AKakO-3qeNVR61Dw`) but is used verbatim.

use super::common::{json_body, json_str, json_time};
use super::{
    Check, CheckError, Digest, Encoding, ProviderId, ProviderInfo, Scheme, SignError, SignInput,
    Signed, Tolerance, ct_eq, hmac_digest,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;

const HEADER: &str = "x-square-hmacsha256-signature";
const LEGACY_HEADER: &str = "x-square-signature";

pub(crate) struct Square;

impl Scheme for Square {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Square,
            name: "Square".into(),
            headers: vec![HEADER.into(), LEGACY_HEADER.into()],
            algorithm: "HMAC-SHA256".into(),
            encoding: "base64".into(),
            signed_payload: "{notification_url}{body}".into(),
            secret_format: "the subscription's signature key as typed (not base64-decoded)".into(),
            tolerance: Tolerance::NONE,
            signs_url: true,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let (header, digest) = match req.header(HEADER) {
            Some(_) => (HEADER, Digest::Sha256),
            None if req.header(LEGACY_HEADER).is_some() => (LEGACY_HEADER, Digest::Sha1),
            None => {
                return Err(CheckError::MissingHeader {
                    header: HEADER.into(),
                });
            }
        };
        let malformed = |detail: &str| CheckError::MalformedHeader {
            header: header.into(),
            detail: detail.into(),
        };
        let mut signatures = Vec::new();
        for raw in req.headers_named(header) {
            let text = std::str::from_utf8(raw).map_err(|_| malformed("not UTF-8"))?;
            signatures.push(
                Encoding::Base64
                    .decode(text)
                    .ok_or_else(|| malformed("not base64"))?,
            );
        }
        let url = req.url.as_deref().ok_or_else(|| CheckError::MissingUrl {
            detail: "Square signs the notification URL configured on the subscription; \
                     set the source's public URL"
                .into(),
        })?;
        let expected = hmac_digest(digest, key, &[url.as_bytes(), &req.body]);
        let matched = signatures
            .iter()
            .fold(false, |m, s| m | ct_eq(s, &expected));
        Ok(Check {
            matched,
            timestamp: None,
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let url = input.url.ok_or_else(|| SignError {
            detail: "Square signs the notification URL: give the URL the event is sent to".into(),
        })?;
        let sig = hmac_digest(Digest::Sha256, key, &[url.as_bytes(), input.body]);
        Ok(Signed {
            headers: vec![(HEADER.into(), Encoding::Base64.encode(&sig))],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        Metadata {
            event_id: json_str(&body, "/event_id"),
            event_type: json_str(&body, "/type"),
            object_id: json_str(&body, "/data/id"),
            provider_time: json_time(&body, "/created_at"),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;
    use crate::clock::UnixMillis;

    const URL: &str = "https://hooks.example.com/square";
    const BODY: &[u8] = br#"{"merchant_id":"M1","type":"payment.updated","event_id":"ev_1","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"payment","id":"pay_1"}}"#;

    fn signed_request() -> RawRequest {
        let mut input = SignInput::new(BODY, UnixMillis(0));
        input.url = Some(URL);
        let signed = Square.sign(&input, b"sig-key").unwrap();
        RawRequest::post("/square", signed.headers_as_pairs(), BODY.to_vec()).with_url(URL)
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("square", &Square), 4);
    }

    #[test]
    fn round_trip_and_tampering() {
        let req = signed_request();
        assert!(
            Square.check(&req, b"sig-key").unwrap().matched,
            "what we sign verifies"
        );

        let mut flipped = req.clone();
        flipped.body[10] ^= 1;
        assert!(
            !Square.check(&flipped, b"sig-key").unwrap().matched,
            "a flipped body byte"
        );

        let mut other_url = req.clone();
        other_url.url = Some(format!("{URL}/"));
        assert!(
            !Square.check(&other_url, b"sig-key").unwrap().matched,
            "the URL is signed"
        );

        let mut sig = req.clone();
        sig.headers[0].value[3] = if sig.headers[0].value[3] == b'A' {
            b'B'
        } else {
            b'A'
        };
        assert!(
            !Square.check(&sig, b"sig-key").unwrap().matched,
            "a changed signature char"
        );
    }

    #[test]
    fn legacy_sha1_header_is_checked_when_alone() {
        let sig = hmac_digest(Digest::Sha1, b"k", &[URL.as_bytes(), BODY]);
        let req = RawRequest::post(
            "/s",
            [(LEGACY_HEADER, Encoding::Base64.encode(&sig))],
            BODY.to_vec(),
        )
        .with_url(URL);
        assert!(Square.check(&req, b"k").unwrap().matched);
    }

    #[test]
    fn unreadable_requests() {
        let no_header = RawRequest::post("/s", [("x", "y")], BODY.to_vec()).with_url(URL);
        assert_eq!(
            Square.check(&no_header, b"k"),
            Err(CheckError::MissingHeader {
                header: HEADER.into()
            })
        );
        let bad = RawRequest::post("/s", [(HEADER, "not base64!")], BODY.to_vec()).with_url(URL);
        assert!(matches!(
            Square.check(&bad, b"k"),
            Err(CheckError::MalformedHeader { detail, .. }) if detail == "not base64"
        ));
        let mut no_url = signed_request();
        no_url.url = None;
        assert!(matches!(
            Square.check(&no_url, b"sig-key"),
            Err(CheckError::MissingUrl { .. })
        ));
        assert!(
            Square
                .sign(&SignInput::new(BODY, UnixMillis(0)), b"k")
                .is_err(),
            "sign needs a URL"
        );
    }

    #[test]
    fn metadata() {
        let m = Square.metadata(&signed_request());
        assert_eq!(m.event_id.as_deref(), Some("ev_1"));
        assert_eq!(m.event_type.as_deref(), Some("payment.updated"));
        assert_eq!(m.object_id.as_deref(), Some("pay_1"));
        assert_eq!(
            m.provider_time,
            UnixMillis::parse_rfc3339("2022-07-13T20:30:59.037Z")
        );
        assert_eq!(m.idempotency_key.as_deref(), Some("ev_1"));
    }
}
