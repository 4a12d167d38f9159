//! Token providers: no signature, a header that must equal a shared secret (Supabase database
//! webhooks with `Authorization: Bearer …`, any sender with a custom auth header). Also hosts the
//! constant-time token check that Asaas and Hotmart use with their fixed header names.
//!
//! A token proves the sender knows the secret, not that the body is intact, and it never
//! expires: it is the weakest scheme Hooklab verifies, and `info()` says so.

use super::common::{json_body, json_str};
use super::{
    Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed,
    Tolerance, ct_eq,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;
use serde::{Deserialize, Serialize};

/// Settings of a `token` source: which header carries the token, and what precedes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenOptions {
    /// The header whose value must equal the secret. Default `Authorization`.
    pub header: String,
    /// Text before the token, e.g. `Bearer ` (the default). It is matched case-insensitively and
    /// is optional on receipt (a bare token also verifies); `sign` writes it. `""` means none.
    pub prefix: Option<String>,
}

impl Default for TokenOptions {
    fn default() -> Self {
        Self {
            header: "Authorization".into(),
            prefix: Some("Bearer ".into()),
        }
    }
}

/// The configurable token scheme.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    opts: TokenOptions,
}

impl Token {
    pub(crate) fn new(opts: TokenOptions) -> Self {
        Self { opts }
    }

    fn prefix(&self) -> &str {
        self.opts.prefix.as_deref().unwrap_or_default()
    }
}

impl Scheme for Token {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Token,
            name: "Token header".into(),
            headers: vec![self.opts.header.clone()],
            algorithm: "token".into(),
            encoding: "plain text".into(),
            signed_payload: format!(
                "nothing: `{}: {}<token>` must equal the secret (the body is not protected)",
                self.opts.header,
                self.prefix()
            ),
            secret_format: "the token, verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        token_key(secret)
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        check_token(req, &self.opts.header, self.prefix(), key)
    }

    fn sign(&self, _input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(sign_token(&self.opts.header, self.prefix(), key))
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req);
        let text = |p: &str| body.as_ref().and_then(|b| json_str(b, p));
        Metadata {
            event_id: text("/id"),
            event_type: text("/type").or_else(|| text("/event")),
            ..Metadata::default()
        }
        .with_default_key()
    }
}

/// The secret as token bytes; an empty token would accept an empty header, so it is refused.
pub(crate) fn token_key(secret: &Secret) -> Result<Vec<u8>, KeyError> {
    match secret.expose().trim() {
        "" => Err(KeyError {
            detail: "the token is empty".into(),
        }),
        token => Ok(token.as_bytes().to_vec()),
    }
}

/// Whether any `header` value equals `key`, with or without `prefix` (ASCII case-insensitive),
/// compared in constant time. Values are bytes: a non-UTF-8 value simply does not match.
pub(crate) fn check_token(
    req: &RawRequest,
    header: &str,
    prefix: &str,
    key: &[u8],
) -> Result<Check, CheckError> {
    let mut values = req.headers_named(header).peekable();
    if values.peek().is_none() {
        return Err(CheckError::MissingHeader {
            header: header.to_string(),
        });
    }
    let mut matched = false;
    for value in values {
        let value = value.trim_ascii();
        let bare = strip_prefix_ignore_case(value, prefix.as_bytes()).map(<[u8]>::trim_ascii);
        matched |= ct_eq(value, key) | bare.is_some_and(|bare| ct_eq(bare, key));
    }
    Ok(Check {
        matched,
        timestamp: None,
    })
}

/// The header a sender would add.
pub(crate) fn sign_token(header: &str, prefix: &str, key: &[u8]) -> Signed {
    Signed {
        headers: vec![(
            header.to_string(),
            format!("{prefix}{}", String::from_utf8_lossy(key)),
        )],
        ..Signed::default()
    }
}

fn strip_prefix_ignore_case<'a>(value: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if prefix.is_empty() || value.len() < prefix.len() {
        return None;
    }
    let (head, rest) = value.split_at(prefix.len());
    head.eq_ignore_ascii_case(prefix).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheme(opts: TokenOptions) -> Token {
        Token::new(opts)
    }

    #[test]
    fn default_is_a_bearer_authorization_header_and_round_trips() {
        let s = scheme(TokenOptions::default());
        let key = s.key(&Secret::new("tok_123")).unwrap();
        let signed = s
            .sign(&SignInput::new(b"{}", crate::clock::UnixMillis(0)), &key)
            .unwrap();
        assert_eq!(
            signed.headers,
            vec![("Authorization".into(), "Bearer tok_123".into())]
        );
        let req = RawRequest::post("/h", signed.headers_as_pairs(), b"{}".to_vec());
        assert!(
            s.check(&req, &key).unwrap().matched,
            "what we sign verifies"
        );
        let bare = RawRequest::post("/h", [("authorization", "tok_123")], vec![]);
        assert!(
            s.check(&bare, &key).unwrap().matched,
            "the prefix is optional"
        );
        let lower = RawRequest::post("/h", [("Authorization", "bearer tok_123")], vec![]);
        assert!(
            s.check(&lower, &key).unwrap().matched,
            "the prefix ignores case"
        );
    }

    #[test]
    fn a_different_token_does_not_match() {
        let s = scheme(TokenOptions::default());
        let key = s.key(&Secret::new("tok_123")).unwrap();
        for value in [
            "Bearer tok_124",
            "Bearer tok_12",
            "Bearer ",
            "tok_1234",
            "Basic tok_123",
        ] {
            let req = RawRequest::post("/h", [("Authorization", value)], vec![]);
            assert!(
                !s.check(&req, &key).unwrap().matched,
                "{value} is not the token"
            );
        }
        let binary = RawRequest::post("/h", [("Authorization", vec![0xff, 0xfe])], vec![]);
        assert!(
            !s.check(&binary, &key).unwrap().matched,
            "non-UTF-8 never matches"
        );
    }

    #[test]
    fn custom_header_without_prefix() {
        let opts: TokenOptions =
            serde_json::from_str(r#"{"header":"X-Webhook-Token","prefix":""}"#).unwrap();
        let s = scheme(opts);
        let key = s.key(&Secret::new("abc")).unwrap();
        let req = RawRequest::post("/h", [("x-webhook-token", "abc")], vec![]);
        assert!(s.check(&req, &key).unwrap().matched);
        let signed = s
            .sign(&SignInput::new(b"", crate::clock::UnixMillis(0)), &key)
            .unwrap();
        assert_eq!(
            signed.headers[0].1, "abc",
            "an empty prefix writes the bare token"
        );
    }

    #[test]
    fn missing_header_and_empty_secret_are_errors() {
        let s = scheme(TokenOptions::default());
        let req = RawRequest::post("/h", [("X-Other", "abc")], vec![]);
        assert_eq!(
            s.check(&req, b"abc"),
            Err(CheckError::MissingHeader {
                header: "Authorization".into()
            })
        );
        assert!(
            s.key(&Secret::new("  ")).is_err(),
            "an empty token would match an empty header"
        );
    }

    #[test]
    fn options_deserialize_with_defaults() {
        let opts: TokenOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(opts, TokenOptions::default());
    }

    #[test]
    fn metadata_reads_a_json_body_and_never_panics() {
        let s = scheme(TokenOptions::default());
        let req = RawRequest::post(
            "/h",
            [("a", "b")],
            br#"{"id":"e1","type":"INSERT"}"#.to_vec(),
        );
        let m = s.metadata(&req);
        assert_eq!(m.event_id.as_deref(), Some("e1"));
        assert_eq!(m.event_type.as_deref(), Some("INSERT"));
        assert_eq!(m.idempotency_key.as_deref(), Some("e1"));
        let _ = s.metadata(&RawRequest::post("/h", [("a", "b")], vec![0xff, 0x00]));
    }
}
