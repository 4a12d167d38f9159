//! Twilio: `X-Twilio-Signature` is base64 HMAC-SHA1(auth token, data), where data is the full
//! URL Twilio called followed by the form parameters (keys sorted; each key's values sorted and
//! de-duplicated, written `key` + `value`). For a JSON body the URL carries
//! `bodySHA256=<hex SHA-256(body)>` and the signature covers the URL alone.
//!
//! As the SDKs do, the URL is also tried without its port and with the scheme's default port
//! added (`:443` / `:80`). The public URL (`RawRequest::url`) is required.

use super::common::{header_string, shorten};
use super::{
    Check, CheckError, Digest, Encoding, ProviderId, ProviderInfo, Scheme, SignError, SignInput,
    Signed, Tolerance, ct_eq, hmac_digest,
};
use crate::metadata::Metadata;
use crate::request::{RawRequest, parse_form};
use sha2::Digest as _;
use std::collections::{BTreeMap, BTreeSet};

const HEADER: &str = "X-Twilio-Signature";
const BODY_HASH: &str = "bodySHA256";

pub(crate) struct Twilio;

impl Scheme for Twilio {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Twilio,
            name: "Twilio".into(),
            headers: vec![HEADER.into()],
            algorithm: "HMAC-SHA1".into(),
            encoding: "base64".into(),
            signed_payload: "{url} + each form key and value, keys sorted (JSON bodies: the URL \
                             alone, with ?bodySHA256=<hex SHA-256 of the body>)"
                .into(),
            secret_format: "the account's Auth Token, verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: true,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let malformed = |detail: String| CheckError::MalformedHeader {
            header: HEADER.into(),
            detail,
        };
        let raw = req
            .header(HEADER)
            .ok_or_else(|| CheckError::MissingHeader {
                header: HEADER.into(),
            })?;
        let text = std::str::from_utf8(raw).map_err(|_| malformed("not UTF-8".into()))?;
        let signature = Encoding::Base64
            .decode(text)
            .ok_or_else(|| malformed(format!("`{}` is not base64", shorten(text))))?;
        let url = req.url.as_deref().ok_or_else(|| CheckError::MissingUrl {
            detail: "Twilio signs the full URL it calls; set the source's public URL".into(),
        })?;
        let (params, body_ok) = match query_value(url, BODY_HASH) {
            Some(claimed) => {
                let actual = hex::encode(sha2::Sha256::digest(&req.body));
                (
                    Vec::new(),
                    ct_eq(claimed.to_ascii_lowercase().as_bytes(), actual.as_bytes()),
                )
            }
            None => (sorted_params(&req.body), true),
        };
        let any_url = url_variants(url).iter().fold(false, |m, u| {
            m | ct_eq(&signature, &digest(key, u, &params))
        });
        Ok(Check {
            matched: body_ok && any_url,
            timestamp: None,
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let url = input.url.ok_or_else(|| SignError {
            detail: "Twilio signs the URL it calls: give the URL the request is sent to".into(),
        })?;
        let is_json = match input.content_type {
            Some(ct) if ct.contains("json") => true,
            Some(ct) if ct.contains("form") => false,
            _ => serde_json::from_slice::<serde_json::Value>(input.body).is_ok(),
        };
        if is_json {
            let hash = hex::encode(sha2::Sha256::digest(input.body));
            let url = with_body_hash(url, &hash);
            let sig = Encoding::Base64.encode(&digest(key, &url, &[]));
            return Ok(Signed {
                headers: vec![(HEADER.into(), sig)],
                url: Some(url),
                ..Signed::default()
            });
        }
        let sig = digest(key, url, &sorted_params(input.body));
        Ok(Signed {
            headers: vec![(HEADER.into(), Encoding::Base64.encode(&sig))],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let params: BTreeMap<String, String> = parse_form(&req.body).into_iter().rev().collect();
        let first = |names: &[&str]| names.iter().find_map(|n| params.get(*n).cloned());
        let sid = first(&["MessageSid", "SmsSid", "CallSid", "Sid"]);
        let status = first(&["MessageStatus", "SmsStatus", "CallStatus"]);
        let event_id = header_string(req, "I-Twilio-Idempotency-Token");
        // Twilio's token when it sent one; otherwise the resource and its status.
        let idempotency_key = event_id.clone().or_else(|| match (&sid, &status) {
            (Some(sid), Some(status)) => Some(format!("{sid}:{status}")),
            (sid, _) => sid.clone(),
        });
        Metadata {
            event_id,
            event_type: status,
            object_id: sid,
            provider_time: None,
            idempotency_key,
        }
    }
}

/// HMAC-SHA1 over the URL and the flattened parameters.
fn digest(key: &[u8], url: &str, params: &[(String, String)]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = vec![url.as_bytes()];
    for (k, v) in params {
        parts.push(k.as_bytes());
        parts.push(v.as_bytes());
    }
    hmac_digest(Digest::Sha1, key, &parts)
}

/// Form parameters in signing order: keys sorted, each key's values sorted and de-duplicated.
fn sorted_params(body: &[u8]) -> Vec<(String, String)> {
    let mut grouped: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (k, v) in parse_form(body) {
        grouped.entry(k).or_default().insert(v);
    }
    grouped
        .into_iter()
        .flat_map(|(k, vs)| vs.into_iter().map(move |v| (k.clone(), v)))
        .collect()
}

/// The first value of `name` in the URL's query string, percent-decoded.
fn query_value(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    parse_form(query.as_bytes())
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// `url` with `bodySHA256=hash` as its last query parameter (replacing any previous one).
fn with_body_hash(url: &str, hash: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut parts: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some(BODY_HASH))
        .collect();
    let param = format!("{BODY_HASH}={hash}");
    parts.push(&param);
    format!("{base}?{}", parts.join("&"))
}

/// The URL forms the SDKs accept: as given, then without its port (twilio-python's
/// `remove_port` strips any port) or, when it has none, with the scheme's default port.
fn url_variants(url: &str) -> Vec<String> {
    let mut out = vec![url.to_string()];
    let Some((scheme, rest)) = url.split_once("://") else {
        return out;
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let (userinfo, hostport) = authority.split_at(authority.rfind('@').map_or(0, |i| i + 1));
    // A `:` inside `[…]` belongs to an IPv6 address, not to a port.
    match hostport
        .rfind(':')
        .filter(|&i| !hostport[i..].contains(']'))
    {
        Some(i) => out.push(format!("{scheme}://{userinfo}{}{tail}", &hostport[..i])),
        None => {
            let port = if scheme.eq_ignore_ascii_case("https") {
                443
            } else {
                80
            };
            out.push(format!("{scheme}://{userinfo}{hostport}:{port}{tail}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;
    use crate::clock::UnixMillis;

    const URL: &str = "https://mycompany.com/myapp.php?foo=1&bar=2";
    const FORM: &[u8] = b"CallSid=CA1234567890ABCDE&Digits=1234&From=%2B14158675309&To=%2B18005551212&Caller=%2B14158675309";

    fn sign(body: &[u8], content_type: Option<&str>) -> (Signed, RawRequest) {
        let mut input = SignInput::new(body, UnixMillis(0));
        input.url = Some(URL);
        input.content_type = content_type;
        let signed = Twilio.sign(&input, b"12345").unwrap();
        let url = signed.url.clone().unwrap_or_else(|| URL.into());
        let req =
            RawRequest::post("/myapp.php", signed.headers_as_pairs(), body.to_vec()).with_url(url);
        (signed, req)
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("twilio", &Twilio), 5);
    }

    #[test]
    fn form_round_trip_matches_the_sdk_and_detects_tampering() {
        let (signed, req) = sign(FORM, Some("application/x-www-form-urlencoded"));
        assert_eq!(
            signed.headers[0].1, "RSOYDt4T1cUTdK1PDd93/VVr8B8=",
            "twilio-python's value"
        );
        assert!(Twilio.check(&req, b"12345").unwrap().matched);
        let mut flipped = req.clone();
        flipped.body[20] ^= 1;
        assert!(
            !Twilio.check(&flipped, b"12345").unwrap().matched,
            "a flipped body byte"
        );
        let mut sig = req.clone();
        sig.headers[0].value[2] = b'X';
        assert!(
            !Twilio.check(&sig, b"12345").unwrap().matched,
            "a changed signature char"
        );
    }

    #[test]
    fn json_round_trip_puts_the_body_hash_in_the_url() {
        let body = br#"{"property": "value", "boolean": true}"#;
        let (signed, req) = sign(body, None);
        let url = signed.url.unwrap();
        assert!(url.ends_with(
            "&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620"
        ));
        assert_eq!(
            signed.headers[0].1, "a9nBmqA0ju/hNViExpshrM61xv4=",
            "twilio-python's value"
        );
        assert!(Twilio.check(&req, b"12345").unwrap().matched);
        let mut flipped = req;
        flipped.body[3] ^= 1;
        assert!(
            !Twilio.check(&flipped, b"12345").unwrap().matched,
            "the body hash must match"
        );
    }

    #[test]
    fn repeated_keys_are_sorted_and_deduplicated() {
        assert_eq!(
            sorted_params(b"b=2&a=z&a=y&a=z"),
            vec![
                ("a".into(), "y".into()),
                ("a".into(), "z".into()),
                ("b".into(), "2".into())
            ]
        );
    }

    #[test]
    fn url_variants_follow_the_sdks() {
        assert_eq!(
            url_variants("https://h.com/p?q"),
            ["https://h.com/p?q", "https://h.com:443/p?q"]
        );
        assert_eq!(
            url_variants("http://u:p@h.com:1234"),
            ["http://u:p@h.com:1234", "http://u:p@h.com"]
        );
        assert_eq!(
            url_variants("http://[::1]/x"),
            ["http://[::1]/x", "http://[::1]:80/x"]
        );
        assert_eq!(url_variants("not a url"), ["not a url"]);
        assert_eq!(
            with_body_hash("https://h/p?bodySHA256=old&a=1", "new"),
            "https://h/p?a=1&bodySHA256=new"
        );
    }

    #[test]
    fn unreadable_requests() {
        let no_header = RawRequest::post("/", [("Content-Type", "x")], FORM.to_vec()).with_url(URL);
        assert_eq!(
            Twilio.check(&no_header, b"k"),
            Err(CheckError::MissingHeader {
                header: HEADER.into()
            })
        );
        let bad = RawRequest::post("/", [(HEADER, "%%%")], FORM.to_vec()).with_url(URL);
        assert!(matches!(
            Twilio.check(&bad, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
        let no_url = RawRequest::post(
            "/",
            [(HEADER, "RSOYDt4T1cUTdK1PDd93/VVr8B8=")],
            FORM.to_vec(),
        );
        assert!(matches!(
            Twilio.check(&no_url, b"12345"),
            Err(CheckError::MissingUrl { .. })
        ));
        assert!(
            Twilio
                .sign(&SignInput::new(FORM, UnixMillis(0)), b"k")
                .is_err(),
            "sign needs a URL"
        );
    }

    #[test]
    fn metadata_prefers_the_idempotency_token() {
        let body = b"MessageSid=SM123&MessageStatus=delivered&AccountSid=AC1".to_vec();
        let req = RawRequest::post("/", [("X", "y")], body.clone());
        let m = Twilio.metadata(&req);
        assert_eq!(m.object_id.as_deref(), Some("SM123"));
        assert_eq!(m.event_type.as_deref(), Some("delivered"));
        assert_eq!(m.idempotency_key.as_deref(), Some("SM123:delivered"));
        let req = RawRequest::post("/", [("I-Twilio-Idempotency-Token", "tok-1")], body);
        let m = Twilio.metadata(&req);
        assert_eq!(m.event_id.as_deref(), Some("tok-1"));
        assert_eq!(m.idempotency_key.as_deref(), Some("tok-1"));
        let _ = Twilio.metadata(&RawRequest::post("/", [("X", "y")], vec![0xff, b'=', b'%']));
    }
}
