//! Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(app client secret, raw body)>`.
//! Base64, not hex; no timestamp in the signature (`X-Shopify-Triggered-At` is informational).
//! `X-Shopify-Event-Id` stays the same across duplicate deliveries of one event.
//!
//! (The OAuth / app-proxy query-string HMAC is a different algorithm and is not handled here.)

use super::common::{header_string, json_body, json_str, uuid_from_body};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Shopify;

const HMAC: SimpleHmac = SimpleHmac {
    header: "X-Shopify-Hmac-Sha256",
    prefix: "",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Base64,
};

impl Scheme for Shopify {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Shopify,
            name: "Shopify".into(),
            headers: vec![
                HMAC.header.into(),
                "X-Shopify-Topic".into(),
                "X-Shopify-Event-Id".into(),
            ],
            algorithm: HMAC.digest.hmac_name().into(),
            encoding: HMAC.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the app's client secret (API secret key), UTF-8".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let check = HMAC.check(req, key)?;
        if req.body.is_empty() {
            // shopify-api-js refuses an empty body: Shopify always sends a JSON payload.
            return Err(CheckError::MalformedBody {
                detail: "the body is empty; Shopify always sends a JSON payload".into(),
            });
        }
        Ok(check)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let delivery = input
            .id
            .map_or_else(|| uuid_from_body(input.body), str::to_string);
        Ok(Signed {
            headers: vec![
                HMAC.sign(input.body, key),
                ("X-Shopify-Webhook-Id".into(), delivery.clone()),
                ("X-Shopify-Event-Id".into(), delivery),
                ("X-Shopify-Triggered-At".into(), input.now.to_rfc3339()),
            ],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        Metadata {
            event_id: header_string(req, "X-Shopify-Event-Id")
                .or_else(|| header_string(req, "X-Shopify-Webhook-Id")),
            event_type: header_string(req, "X-Shopify-Topic"),
            object_id: json_str(&body, "/admin_graphql_api_id").or(json_str(&body, "/id")),
            provider_time: header_string(req, "X-Shopify-Triggered-At")
                .and_then(|t| crate::clock::UnixMillis::parse_rfc3339(&t)),
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
        assert_eq!(
            run_vectors("shopify", &Shopify),
            2,
            "both Shopify vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(
            &Shopify,
            "test_secret_key",
            br#"{"foo": "bar"}"#,
            HMAC.header,
        );
    }

    #[test]
    fn hex_does_not_match_and_empty_body_refused() {
        let hex = "076ded5cdebcd60674a8858d46b82dcc113d5d20e8e72694bbac1f9a1bb76bb8";
        let req = request(&[(HMAC.header, hex)], br#"{"foo": "bar"}"#);
        let check = Shopify.check(&req, b"test_secret_key").unwrap();
        assert!(
            !check.matched,
            "64 hex digits happen to be valid base64 (48 bytes) but never the digest"
        );
        let (name, value) = HMAC.sign(b"", b"k");
        let empty = request(&[(name.as_str(), value.as_str())], b"");
        assert!(matches!(
            Shopify.check(&empty, b"k"),
            Err(CheckError::MalformedBody { .. })
        ));
    }

    #[test]
    fn metadata_prefers_the_event_id() {
        let headers = [
            ("X-Shopify-Webhook-Id", "wh_1"),
            ("X-Shopify-Event-Id", "ev_1"),
            ("X-Shopify-Topic", "orders/create"),
            ("X-Shopify-Triggered-At", "2023-11-14T22:13:20.000Z"),
        ];
        let m = Shopify.metadata(&request(&headers, br#"{"id":820982911946154508}"#));
        assert_eq!(m.event_id.as_deref(), Some("ev_1"));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("ev_1"),
            "stable across duplicates"
        );
        assert_eq!(m.event_type.as_deref(), Some("orders/create"));
        assert_eq!(m.object_id.as_deref(), Some("820982911946154508"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
        let older = Shopify.metadata(&request(&headers[..1], b"not json"));
        assert_eq!(
            older.event_id.as_deref(),
            Some("wh_1"),
            "falls back to the webhook id"
        );
    }
}
