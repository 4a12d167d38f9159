//! Mercado Pago: `x-signature: ts=<ts>,v1=<hex>` with `x-request-id`. v1 is hex
//! HMAC-SHA256(webhook secret, manifest), the manifest being
//! `id:{data.id};request-id:{x-request-id};ts:{ts};` (trailing `;` included) where `data.id`
//! comes from the notification URL's **query string** (lowercased when alphanumeric) and any
//! missing part is left out. The body is not signed. `ts` is seconds, or milliseconds for
//! Orders notifications; no tolerance is documented.

use super::common::{
    any_matches, json_body, json_str, json_time, parse_keyed, required_header, shorten,
    uuid_from_body,
};
use super::{
    Check, CheckError, Digest, Encoding, ProviderId, ProviderInfo, Scheme, SignError, SignInput,
    Signed, Tolerance, hmac_digest,
};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::{RawRequest, parse_form};

const SIGNATURE: &str = "x-signature";
const REQUEST_ID: &str = "x-request-id";

pub(crate) struct MercadoPago;

impl Scheme for MercadoPago {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Mercadopago,
            name: "Mercado Pago".into(),
            headers: vec![SIGNATURE.into(), REQUEST_ID.into()],
            algorithm: "HMAC-SHA256".into(),
            encoding: "hex".into(),
            signed_payload: "id:{data.id from the URL query};request-id:{x-request-id};ts:{ts}; \
                             (missing parts left out; the body is not signed)"
                .into(),
            secret_format: "the application's webhook secret key, verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: true,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let header = required_header(req, SIGNATURE)?;
        let parsed = parse_keyed(SIGNATURE, header, ',', "ts", "v1")?;
        let timestamp = parse_ts(parsed.timestamp).ok_or_else(|| CheckError::MalformedHeader {
            header: SIGNATURE.into(),
            detail: format!("ts `{}` is not a whole number", shorten(parsed.timestamp)),
        })?;
        let request_id = match req.header(REQUEST_ID) {
            None => None,
            Some(raw) => {
                Some(
                    std::str::from_utf8(raw).map_err(|_| CheckError::MalformedHeader {
                        header: REQUEST_ID.into(),
                        detail: "not UTF-8".into(),
                    })?,
                )
            }
        };
        let pairs = signed_query(req).ok_or_else(|| CheckError::MissingUrl {
            detail: "Mercado Pago signs `data.id` from the notification URL's query string, \
                     and this request has neither a URL nor a query string"
                .into(),
        })?;
        let data_id = data_id(pairs);
        let manifest = manifest(
            data_id.as_deref(),
            request_id.map(str::trim),
            parsed.timestamp,
        );
        let expected = hmac_digest(Digest::Sha256, key, &[manifest.as_bytes()]);
        let matched = any_matches(SIGNATURE, Encoding::Hex, &parsed.signatures, &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let data_id = input.url.and_then(|u| data_id(url_query(u)));
        let Some(data_id) = data_id else {
            return Err(SignError {
                detail: "Mercado Pago signs `data.id` from the notification URL: give a URL \
                         with `?data.id=…`"
                    .into(),
            });
        };
        let request_id = input
            .id
            .map_or_else(|| uuid_from_body(input.body), str::to_string);
        let ts = input.now.as_secs().to_string();
        let v1 = hex::encode(hmac_digest(
            Digest::Sha256,
            key,
            &[manifest(Some(&data_id), Some(&request_id), &ts).as_bytes()],
        ));
        Ok(Signed {
            headers: vec![
                (SIGNATURE.into(), format!("ts={ts},v1={v1}")),
                (REQUEST_ID.into(), request_id),
            ],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req);
        let text = |p: &str| body.as_ref().and_then(|b| json_str(b, p));
        let query_id = || {
            signed_query(req)?
                .into_iter()
                .find_map(|(k, v)| (k == "data.id").then_some(v))
        };
        Metadata {
            event_id: text("/id"),
            event_type: text("/action").or_else(|| text("/type")),
            object_id: text("/data/id").or_else(query_id),
            provider_time: body.as_ref().and_then(|b| json_time(b, "/date_created")),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

/// The query pairs Mercado Pago signed: those of the URL it called when known (the receiver
/// sets it), else the query string as received; `None` when there is neither.
fn signed_query(req: &RawRequest) -> Option<Vec<(String, String)>> {
    match (&req.url, &req.query) {
        (Some(url), _) => Some(url_query(url)),
        (None, Some(query)) => Some(parse_form(query.as_bytes())),
        (None, None) => None,
    }
}

/// The pairs of a URL's query string (without any `#fragment`).
fn url_query(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    parse_form(query.as_bytes())
}

/// `data.id` from query pairs, lowercased when it is alphanumeric (as Mercado Pago signs it).
fn data_id(pairs: Vec<(String, String)>) -> Option<String> {
    let (_, id) = pairs.into_iter().find(|(k, _)| k == "data.id")?;
    match !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        true => Some(id.to_ascii_lowercase()),
        false => Some(id),
    }
}

/// The signed manifest; parts that the notification lacks are left out.
fn manifest(data_id: Option<&str>, request_id: Option<&str>, ts: &str) -> String {
    let mut out = String::new();
    if let Some(id) = data_id.filter(|s| !s.is_empty()) {
        out.push_str(&format!("id:{id};"));
    }
    if let Some(rid) = request_id.filter(|s| !s.is_empty()) {
        out.push_str(&format!("request-id:{rid};"));
    }
    out.push_str(&format!("ts:{ts};"));
    out
}

/// `ts` in seconds, or in milliseconds from 10^12 on (Orders notifications).
fn parse_ts(text: &str) -> Option<UnixMillis> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = text.parse().ok()?;
    Some(match n >= 1_000_000_000_000 {
        true => UnixMillis(n),
        false => UnixMillis::from_secs(n),
    })
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;

    const URL: &str = "https://example.com/webhooks/mp?data.id=123456&type=payment";
    const BODY: &[u8] = br#"{"action":"payment.updated","api_version":"v1","data":{"id":"123456"},"date_created":"2024-01-10T14:53:30Z","id":12345,"live_mode":false,"type":"payment","user_id":"123"}"#;

    fn signed() -> RawRequest {
        let mut input = SignInput::new(BODY, UnixMillis::from_secs(1_704_908_010));
        input.url = Some(URL);
        input.id = Some("bb56a2f1-6aae-46ac-982e-9dcd3581d08e");
        let signed = MercadoPago
            .sign(&input, b"mp_test_secret_0123456789")
            .unwrap();
        RawRequest::post("/webhooks/mp", signed.headers_as_pairs(), BODY.to_vec()).with_url(URL)
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("mercadopago", &MercadoPago), 2);
    }

    #[test]
    fn round_trip_reproduces_the_vector_and_detects_tampering() {
        let req = signed();
        assert_eq!(
            req.header_str(SIGNATURE),
            Some(
                "ts=1704908010,v1=9295441086cf5fe5e4b22313c2a7141eb828cd3e61992de39f8b2408fb7bc22f"
            )
        );
        let key = b"mp_test_secret_0123456789";
        let check = MercadoPago.check(&req, key).unwrap();
        assert!(check.matched);
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_704_908_010)));

        let mut other_id = req.clone();
        other_id.url = Some(URL.replace("123456", "123457"));
        assert!(
            !MercadoPago.check(&other_id, key).unwrap().matched,
            "data.id is signed"
        );
        let mut body = req.clone();
        body.body[5] ^= 1;
        assert!(
            MercadoPago.check(&body, key).unwrap().matched,
            "the body is not signed"
        );
        let mut sig = req.clone();
        let h = sig
            .headers
            .iter_mut()
            .find(|h| h.name == SIGNATURE)
            .unwrap();
        let last = h.value.len() - 1;
        h.value[last] = if h.value[last] == b'0' { b'1' } else { b'0' };
        assert!(
            !MercadoPago.check(&sig, key).unwrap().matched,
            "a changed signature char"
        );
        let mut query_only = RawRequest::post("/webhooks/mp?data.id=123456", [("a", "b")], vec![]);
        query_only.headers = req.headers.clone();
        let check = MercadoPago.check(&query_only, key).unwrap();
        assert!(check.matched, "without a URL, the query string as received");
        query_only.url = Some(URL.replace("123456", "999"));
        let check = MercadoPago.check(&query_only, key).unwrap();
        assert!(!check.matched, "the signed URL wins over the query");
        let mut rid = req;
        rid.headers.retain(|h| h.name != REQUEST_ID);
        assert!(
            !MercadoPago.check(&rid, key).unwrap().matched,
            "the request id is signed"
        );
    }

    #[test]
    fn manifest_leaves_out_missing_parts_and_reads_millisecond_ts() {
        assert_eq!(manifest(None, Some("r"), "1"), "request-id:r;ts:1;");
        assert_eq!(manifest(Some("abc"), None, "1"), "id:abc;ts:1;");
        assert_eq!(
            data_id(parse_form(b"data.id=ORD01JQ&type=order")).as_deref(),
            Some("ord01jq")
        );
        assert_eq!(
            data_id(parse_form(b"data.id=A-B")).as_deref(),
            Some("A-B"),
            "not alphanumeric"
        );
        assert_eq!(
            parse_ts("1742505638683"),
            Some(UnixMillis(1_742_505_638_683))
        );
        assert_eq!(parse_ts("-1"), None);
    }

    #[test]
    fn unreadable_requests() {
        let check = |headers: Vec<(&str, &[u8])>| {
            let req = RawRequest::post("/mp", headers, BODY.to_vec()).with_url(URL);
            MercadoPago.check(&req, b"k")
        };
        assert_eq!(
            check(vec![]),
            Err(CheckError::MissingHeader {
                header: SIGNATURE.into()
            })
        );
        let malformed = |r: Result<Check, CheckError>, want: &str| match r {
            Err(CheckError::MalformedHeader { detail, .. }) => {
                assert!(detail.contains(want), "{detail}")
            }
            other => panic!("expected a malformed header, got {other:?}"),
        };
        malformed(check(vec![(SIGNATURE, b"v1=ab")]), "ts=");
        malformed(check(vec![(SIGNATURE, b"ts=1")]), "v1=");
        malformed(check(vec![(SIGNATURE, b"ts=x1,v1=ab")]), "whole number");
        malformed(check(vec![(SIGNATURE, b"ts=1,v1=zz")]), "hex");
        malformed(
            check(vec![(SIGNATURE, b"ts=1,v1=ab"), (REQUEST_ID, b"\xff")]),
            "UTF-8",
        );
        let no_url = RawRequest::post("/mp", [(SIGNATURE, "ts=1,v1=ab")], BODY.to_vec());
        assert!(matches!(
            MercadoPago.check(&no_url, b"k"),
            Err(CheckError::MissingUrl { .. })
        ));
        let mut input = SignInput::new(BODY, UnixMillis(0));
        input.url = Some("https://example.com/mp?type=payment");
        assert!(
            MercadoPago.sign(&input, b"k").is_err(),
            "sign needs data.id"
        );
    }

    #[test]
    fn metadata() {
        let m = MercadoPago.metadata(&signed());
        assert_eq!(m.event_id.as_deref(), Some("12345"));
        assert_eq!(m.event_type.as_deref(), Some("payment.updated"));
        assert_eq!(m.object_id.as_deref(), Some("123456"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_704_898_410)));
        assert_eq!(m.idempotency_key.as_deref(), Some("12345"));
        let bare = RawRequest::post("/mp?data.id=9", [("a", "b")], vec![0xff]);
        assert_eq!(MercadoPago.metadata(&bare).object_id.as_deref(), Some("9"));
    }
}
