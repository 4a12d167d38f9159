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
pub fn json_body(req: &RawRequest) -> Option<serde_json::Value> {
    serde_json::from_slice(&req.body).ok()
}

/// A JSON value at `pointer` as text: strings as-is, numbers and booleans printed.
pub fn json_str(value: &serde_json::Value, pointer: &str) -> Option<String> {
    match value.pointer(pointer)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A short, stable id derived from the body, for providers that sign an id when none is given.
pub fn id_from_body(prefix: &str, body: &[u8]) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(body);
    format!("{prefix}{}", &hex::encode(hash)[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_docs_vector() {
        let sig = hmac_digest(Digest::Sha256, b"It's a Secret to Everybody", &[b"Hello, World!"]);
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
