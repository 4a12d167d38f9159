//! Building blocks shared by providers: HMAC over several parts, constant-time comparison, and
//! [`SimpleHmac`], the "HMAC of the raw body in one header" scheme that many providers use.

use super::{Check, CheckError};
use crate::request::RawRequest;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};

/// The hash inside an HMAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Digest {
    Sha1,
    #[default]
    Sha256,
    Sha512,
}

impl Digest {
    pub fn hmac_name(self) -> &'static str {
        match self {
            Digest::Sha1 => "HMAC-SHA1",
            Digest::Sha256 => "HMAC-SHA256",
            Digest::Sha512 => "HMAC-SHA512",
        }
    }
}

/// HMAC of the concatenation of `parts` (no copy of the parts is made).
pub fn hmac_digest(digest: Digest, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    fn run<M: Mac + hmac::digest::KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
        let mut mac = <M as hmac::digest::KeyInit>::new_from_slice(key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        for p in parts {
            mac.update(p);
        }
        mac.finalize().into_bytes().to_vec()
    }
    match digest {
        Digest::Sha1 => run::<Hmac<sha1::Sha1>>(key, parts),
        Digest::Sha256 => run::<Hmac<sha2::Sha256>>(key, parts),
        Digest::Sha512 => run::<Hmac<sha2::Sha512>>(key, parts),
    }
}

/// Constant-time equality; unequal lengths return `false` at once (lengths are not secret).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// How a signature is written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    #[default]
    Hex,
    Base64,
}

impl Encoding {
    pub fn encode(self, bytes: &[u8]) -> String {
        match self {
            Encoding::Hex => hex::encode(bytes),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Decodes a signature; hex is accepted in either case. `None` when it is not valid.
    pub fn decode(self, text: &str) -> Option<Vec<u8>> {
        match self {
            Encoding::Hex => hex::decode(text.trim()).ok(),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .ok(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Hex => "hex",
            Encoding::Base64 => "base64",
        }
    }
}

/// `header: [prefix]encode(HMAC(key, body))`, with every header of that name tried (Mollie
/// sends it twice during a rotation). Used by GitHub, Razorpay, Shopify, Meta, Intercom…
#[derive(Debug, Clone)]
pub struct SimpleHmac {
    pub header: &'static str,
    /// A prefix such as `sha256=`; when `prefix_optional`, a value without it is accepted too.
    pub prefix: &'static str,
    pub prefix_optional: bool,
    pub digest: Digest,
    pub encoding: Encoding,
}

impl SimpleHmac {
    pub fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let mut values = req.headers_named(self.header).peekable();
        if values.peek().is_none() {
            return Err(CheckError::MissingHeader {
                header: self.header.to_string(),
            });
        }
        let expected = hmac_digest(self.digest, key, &[&req.body]);
        let mut any_well_formed = false;
        let mut matched = false;
        let mut last_problem = String::new();
        for raw in values {
            let Ok(text) = std::str::from_utf8(raw) else {
                last_problem = "not UTF-8".into();
                continue;
            };
            let text = text.trim();
            let sig = match text.strip_prefix(self.prefix) {
                Some(rest) => rest,
                None if self.prefix.is_empty() || self.prefix_optional => text,
                None => {
                    last_problem = format!("expected the `{}` prefix", self.prefix);
                    continue;
                }
            };
            match self.encoding.decode(sig) {
                Some(bytes) => {
                    any_well_formed = true;
                    matched |= ct_eq(&bytes, &expected);
                }
                None => last_problem = format!("not {}", self.encoding.name()),
            }
        }
        if !any_well_formed {
            return Err(CheckError::MalformedHeader {
                header: self.header.to_string(),
                detail: last_problem,
            });
        }
        Ok(Check {
            matched,
            timestamp: None,
        })
    }

    /// The header value for `body`.
    pub fn sign(&self, body: &[u8], key: &[u8]) -> (String, String) {
        let sig = self
            .encoding
            .encode(&hmac_digest(self.digest, key, &[body]));
        (self.header.to_string(), format!("{}{}", self.prefix, sig))
    }
}

/// Parses the body as JSON, or `None` (never a panic) when it is not JSON.
pub(crate) fn json_body(req: &RawRequest) -> Option<serde_json::Value> {
    serde_json::from_slice(&req.body).ok()
}

/// A JSON value at `pointer` as text: strings as-is, numbers and booleans printed.
pub(crate) fn json_str(value: &serde_json::Value, pointer: &str) -> Option<String> {
    match value.pointer(pointer)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A short, stable id derived from the body, for providers that sign an id when none is given.
pub(crate) fn id_from_body(prefix: &str, body: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(body);
    format!("{prefix}{}", &hex::encode(hash)[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_docs_vector() {
        let sig = hmac_digest(
            Digest::Sha256,
            b"It's a Secret to Everybody",
            &[b"Hello, World!"],
        );
        assert_eq!(
            hex::encode(sig),
            "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn ct_eq_checks_length_first() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abcd"));
        assert!(!ct_eq(b"abc", b"abd"));
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers for the timestamped schemes (Stripe, Paddle, Standard Webhooks, Slack, Zoom…) and
// for reading metadata. Header parsing here never panics and reports what it could not read.

use crate::clock::UnixMillis;

/// At most 40 characters of `text`, for quoting untrusted input in an error detail.
pub(crate) fn shorten(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// The first header named `name`, trimmed: `MissingHeader` when absent, `MalformedHeader` when
/// empty or not UTF-8.
pub(crate) fn required_header<'a>(req: &'a RawRequest, name: &str) -> Result<&'a str, CheckError> {
    let malformed = |detail: &str| CheckError::MalformedHeader {
        header: name.to_string(),
        detail: detail.to_string(),
    };
    let raw = req.header(name).ok_or_else(|| CheckError::MissingHeader {
        header: name.to_string(),
    })?;
    let text = std::str::from_utf8(raw).map_err(|_| malformed("not UTF-8"))?;
    match text.trim() {
        "" => Err(malformed("empty value")),
        text => Ok(text),
    }
}

/// The first of `names` that is present, as [`required_header`] reads it; `MissingHeader`
/// names the first one. Svix-branded senders use `svix-id` where others use `webhook-id`.
pub(crate) fn required_header_any<'a>(
    req: &'a RawRequest,
    names: &[&str],
) -> Result<(&'a str, String), CheckError> {
    for name in names {
        if req.header(name).is_some() {
            return required_header(req, name).map(|text| (text, (*name).to_string()));
        }
    }
    Err(CheckError::MissingHeader {
        header: names.first().copied().unwrap_or_default().to_string(),
    })
}

/// A header as trimmed, non-empty text, for metadata (`None` when absent or not UTF-8).
pub(crate) fn header_string(req: &RawRequest, name: &str) -> Option<String> {
    let text = req.header_str(name)?.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Unix seconds as the SDKs read them: ASCII digits only (no sign, no fraction, no exponent).
pub(crate) fn parse_unix_secs(header: &str, text: &str) -> Result<UnixMillis, CheckError> {
    let digits_only = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<i64>() {
        Ok(secs) if digits_only => Ok(UnixMillis::from_secs(secs)),
        _ => Err(CheckError::MalformedHeader {
            header: header.to_string(),
            detail: format!(
                "timestamp `{}` is not a whole, non-negative number of Unix seconds",
                shorten(text)
            ),
        }),
    }
}

/// A `key=value` signature header (Stripe `t=…,v1=…`, Paddle `ts=…;h1=…`): the first
/// timestamp and every signature under the expected key. Other keys (`v0`, `h2`…) are ignored.
#[derive(Debug)]
pub(crate) struct KeyedSignatures<'a> {
    pub(crate) timestamp: &'a str,
    pub(crate) signatures: Vec<&'a str>,
}

pub(crate) fn parse_keyed<'a>(
    header: &str,
    text: &'a str,
    separator: char,
    timestamp_key: &str,
    signature_key: &str,
) -> Result<KeyedSignatures<'a>, CheckError> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    let mut others = Vec::new();
    for part in text.split(separator) {
        let Some((key, value)) = part.split_once('=') else {
            continue;
        };
        match key.trim() {
            k if k == timestamp_key => timestamp = timestamp.or(Some(value.trim())),
            k if k == signature_key => signatures.push(value.trim()),
            k if others.len() < 5 => others.push(shorten(k)),
            _ => {}
        }
    }
    let malformed = |detail: String| CheckError::MalformedHeader {
        header: header.to_string(),
        detail,
    };
    let timestamp =
        timestamp.ok_or_else(|| malformed(format!("no `{timestamp_key}=` timestamp")))?;
    if signatures.is_empty() {
        let found = match others.is_empty() {
            true => String::new(),
            false => format!(
                " (found only {}, which are not accepted)",
                others.join(", ")
            ),
        };
        return Err(malformed(format!("no `{signature_key}=` signature{found}")));
    }
    Ok(KeyedSignatures {
        timestamp,
        signatures,
    })
}

/// Whether any candidate signature equals `expected` (decoded, constant-time). Entries that do
/// not decode never match; when none decodes the header is malformed.
pub(crate) fn any_matches(
    header: &str,
    encoding: Encoding,
    candidates: &[&str],
    expected: &[u8],
) -> Result<bool, CheckError> {
    let mut decoded_any = false;
    let mut matched = false;
    for candidate in candidates {
        if let Some(bytes) = encoding.decode(candidate).filter(|b| !b.is_empty()) {
            decoded_any = true;
            matched |= ct_eq(&bytes, expected);
        }
    }
    if !decoded_any {
        let detail = match candidates {
            [one] if one.trim().is_empty() => "the signature is empty".to_string(),
            [one] => format!("signature `{}` is not {}", shorten(one), encoding.name()),
            many => format!(
                "none of the {} signatures is {}",
                many.len(),
                encoding.name()
            ),
        };
        return Err(CheckError::MalformedHeader {
            header: header.to_string(),
            detail,
        });
    }
    Ok(matched)
}

/// `signature_header: v0=<hex HMAC-SHA256(key, "v0:{timestamp}:{body}")>` with the Unix
/// seconds in `timestamp_header`: Slack and Zoom.
#[derive(Debug, Clone, Copy)]
pub(crate) struct V0Hmac {
    pub(crate) signature_header: &'static str,
    pub(crate) timestamp_header: &'static str,
}

impl V0Hmac {
    pub(crate) fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let signature = required_header(req, self.signature_header)?;
        let ts_text = required_header(req, self.timestamp_header)?;
        let timestamp = parse_unix_secs(self.timestamp_header, ts_text)?;
        let Some(hex_sig) = signature.strip_prefix("v0=") else {
            return Err(CheckError::MalformedHeader {
                header: self.signature_header.to_string(),
                detail: "expected `v0=<hex>`".into(),
            });
        };
        let expected = self.digest(key, ts_text, &req.body);
        let matched = any_matches(self.signature_header, Encoding::Hex, &[hex_sig], &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    /// The signature and timestamp headers for `body` sent at `now`.
    pub(crate) fn sign(&self, body: &[u8], now: UnixMillis, key: &[u8]) -> Vec<(String, String)> {
        let ts = now.as_secs().to_string();
        let sig = hex::encode(self.digest(key, &ts, body));
        vec![
            (self.signature_header.to_string(), format!("v0={sig}")),
            (self.timestamp_header.to_string(), ts),
        ]
    }

    fn digest(&self, key: &[u8], ts: &str, body: &[u8]) -> Vec<u8> {
        hmac_digest(Digest::Sha256, key, &[b"v0:", ts.as_bytes(), b":", body])
    }
}

/// A time in JSON: RFC 3339 text, or a number (or digit string) of Unix seconds when below
/// 10^11 (year 5138), of milliseconds otherwise (10^11 ms is 1973).
pub(crate) fn json_time(value: &serde_json::Value, pointer: &str) -> Option<UnixMillis> {
    let number = |n: i64| match n.unsigned_abs() < 100_000_000_000 {
        true => UnixMillis::from_secs(n),
        false => UnixMillis(n),
    };
    match value.pointer(pointer)? {
        serde_json::Value::Number(n) => n.as_i64().map(number),
        serde_json::Value::String(s) => match s.parse::<i64>() {
            Ok(n) => Some(number(n)),
            Err(_) => UnixMillis::parse_rfc3339(s),
        },
        _ => None,
    }
}

/// A stable UUID-shaped id (version 4 layout) from the body's hash, for providers whose
/// delivery ids are GUIDs (GitHub, Linear, Twitch, Shopify).
pub(crate) fn uuid_from_body(body: &[u8]) -> String {
    use sha2::Digest as _;
    let h = hex::encode(sha2::Sha256::digest(body));
    format!(
        "{}-{}-4{}-8{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

#[cfg(test)]
pub(crate) mod test_support;
