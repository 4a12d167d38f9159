//! Generic HMAC, for senders Hooklab does not know by name: the user describes the scheme
//! (header, hash, encoding, prefix, and a template of what is signed over `{body}`,
//! `{timestamp}`, `{id}` and `{url}`), and [`GenericHmac::new`] refuses descriptions that cannot
//! work or would be unsafe (a body that is not signed, a timestamp that is read but not signed).

use super::common::{
    any_matches, header_string, id_from_body, json_body, json_str, required_header, shorten,
};
use super::{
    Check, CheckError, ConfigError, Digest, Encoding, ProviderId, ProviderInfo, Scheme, SignError,
    SignInput, Signed, Tolerance, hmac_digest,
};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;
use serde::{Deserialize, Serialize};

/// A `generic-hmac` source's description of its sender's scheme.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GenericHmacOptions {
    /// The header carrying the signature. Default `X-Signature`.
    pub header: String,
    /// The hash inside the HMAC: `sha1`, `sha256` (default) or `sha512`.
    pub algorithm: Digest,
    /// How the signature is written: `hex` (default, either case) or `base64`.
    pub encoding: Encoding,
    /// Text before the signature in the header, e.g. `sha256=`; optional on receipt.
    pub prefix: Option<String>,
    /// What is signed: literal text and `{body}`, `{timestamp}`, `{id}`, `{url}`. Default `{body}`.
    pub template: String,
    /// The header with the signed Unix timestamp (seconds, milliseconds, or RFC 3339).
    pub timestamp_header: Option<String>,
    /// The header with the message id, signed as `{id}` and used as the event id.
    pub id_header: Option<String>,
    /// How far (both ways) the timestamp may be from now; default 300 s, 0 disables the check.
    pub tolerance_secs: Option<u64>,
}

impl Default for GenericHmacOptions {
    fn default() -> Self {
        Self {
            header: "X-Signature".into(),
            algorithm: Digest::Sha256,
            encoding: Encoding::Hex,
            prefix: None,
            template: "{body}".into(),
            timestamp_header: None,
            id_header: None,
            tolerance_secs: None,
        }
    }
}

const DEFAULT_TOLERANCE_SECS: u64 = 300;

/// One piece of the signing template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Body,
    Timestamp,
    Id,
    Url,
}

/// The scheme a [`GenericHmacOptions`] describes, validated.
#[derive(Debug, Clone)]
pub(crate) struct GenericHmac {
    opts: GenericHmacOptions,
    parts: Vec<Part>,
}

impl GenericHmac {
    pub(crate) fn new(opts: GenericHmacOptions) -> Result<Self, ConfigError> {
        let err = |m: String| ConfigError(format!("generic-hmac: {m}"));
        let names = [
            Some(&opts.header),
            opts.timestamp_header.as_ref(),
            opts.id_header.as_ref(),
        ];
        if let Some(bad) = names.into_iter().flatten().find(|n| !is_header_name(n)) {
            return Err(err(format!(
                "`{}` is not a valid header name",
                shorten(bad)
            )));
        }
        let parts = parse_template(&opts.template).map_err(err)?;
        let uses = |p: Part| parts.contains(&p);
        if !uses(Part::Body) {
            return Err(err(
                "the template must sign `{body}`, or the body could be altered".into(),
            ));
        }
        match (uses(Part::Timestamp), &opts.timestamp_header) {
            (true, None) => {
                return Err(err(
                    "the template signs `{timestamp}`: set timestamp_header".into(),
                ));
            }
            (false, Some(_)) => {
                return Err(err(
                    "timestamp_header is set but the template does not sign \
                            `{timestamp}`, so it could be replayed with any time"
                        .into(),
                ));
            }
            _ => {}
        }
        if uses(Part::Id) && opts.id_header.is_none() {
            return Err(err("the template signs `{id}`: set id_header".into()));
        }
        if opts.tolerance_secs.is_some() && opts.timestamp_header.is_none() {
            return Err(err(
                "tolerance_secs needs a signed timestamp (timestamp_header)".into(),
            ));
        }
        Ok(Self { opts, parts })
    }

    fn prefix(&self) -> &str {
        self.opts.prefix.as_deref().unwrap_or_default()
    }

    fn digest(&self, key: &[u8], body: &[u8], ts: &str, id: &str, url: &str) -> Vec<u8> {
        let pieces: Vec<&[u8]> = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.as_bytes(),
                Part::Body => body,
                Part::Timestamp => ts.as_bytes(),
                Part::Id => id.as_bytes(),
                Part::Url => url.as_bytes(),
            })
            .collect();
        hmac_digest(self.opts.algorithm, key, &pieces)
    }

    fn signs(&self, part: Part) -> bool {
        self.parts.contains(&part)
    }
}

impl Scheme for GenericHmac {
    fn info(&self) -> ProviderInfo {
        let o = &self.opts;
        let tolerance = match &o.timestamp_header {
            Some(_) => Tolerance::both(DEFAULT_TOLERANCE_SECS)
                .with_secs(o.tolerance_secs.unwrap_or(DEFAULT_TOLERANCE_SECS)),
            None => Tolerance::NONE,
        };
        let extra = [o.timestamp_header.clone(), o.id_header.clone()];
        ProviderInfo {
            id: ProviderId::GenericHmac,
            name: "Generic HMAC".into(),
            headers: std::iter::once(o.header.clone())
                .chain(extra.into_iter().flatten())
                .collect(),
            algorithm: o.algorithm.hmac_name().into(),
            encoding: o.encoding.name().into(),
            signed_payload: o.template.clone(),
            secret_format: "the shared secret as typed (its UTF-8 bytes)".into(),
            tolerance,
            signs_url: self.signs(Part::Url),
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let header = self.opts.header.as_str();
        let mut values = req.headers_named(header).peekable();
        if values.peek().is_none() {
            return Err(CheckError::MissingHeader {
                header: header.into(),
            });
        }
        let candidates: Vec<&str> = values
            .filter_map(|v| std::str::from_utf8(v).ok())
            .map(|v| v.trim())
            .map(|v| v.strip_prefix(self.prefix()).unwrap_or(v))
            .collect();
        let (ts, timestamp) = match &self.opts.timestamp_header {
            Some(name) => {
                let text = required_header(req, name)?;
                let at = parse_time(text).ok_or_else(|| CheckError::MalformedHeader {
                    header: name.clone(),
                    detail: format!(
                        "`{}` is not Unix seconds, milliseconds or RFC 3339",
                        shorten(text)
                    ),
                })?;
                (text, Some(at))
            }
            None => ("", None),
        };
        let id = match (&self.opts.id_header, self.signs(Part::Id)) {
            (Some(name), true) => required_header(req, name)?,
            _ => "",
        };
        let url = match (self.signs(Part::Url), req.url.as_deref()) {
            (false, _) => "",
            (true, Some(url)) => url,
            (true, None) => {
                return Err(CheckError::MissingUrl {
                    detail: "the template signs `{url}`; set the source's public URL".into(),
                });
            }
        };
        let expected = self.digest(key, &req.body, ts, id, url);
        let matched = any_matches(header, self.opts.encoding, &candidates, &expected)?;
        Ok(Check { matched, timestamp })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let url = match (self.signs(Part::Url), input.url) {
            (true, None) => {
                return Err(SignError {
                    detail: "the template signs `{url}`: give the URL the request is sent to"
                        .into(),
                });
            }
            (_, url) => url.unwrap_or_default(),
        };
        let ts = input.now.as_secs().to_string();
        let id = input
            .id
            .map_or_else(|| id_from_body("msg_", input.body), str::to_string);
        let sig = self
            .opts
            .encoding
            .encode(&self.digest(key, input.body, &ts, &id, url));
        let mut headers = vec![(self.opts.header.clone(), format!("{}{sig}", self.prefix()))];
        if let Some(name) = &self.opts.timestamp_header {
            headers.push((name.clone(), ts));
        }
        if let Some(name) = &self.opts.id_header {
            headers.push((name.clone(), id));
        }
        Ok(Signed {
            headers,
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req);
        let text = |p: &str| body.as_ref().and_then(|b| json_str(b, p));
        let header_id = self
            .opts
            .id_header
            .as_ref()
            .and_then(|h| header_string(req, h));
        Metadata {
            event_id: header_id.or_else(|| text("/id")),
            event_type: text("/type").or_else(|| text("/event")),
            ..Metadata::default()
        }
        .with_default_key()
    }
}

/// Splits the template into text and placeholders; an unknown or unclosed `{…}` is an error.
fn parse_template(template: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_string()));
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in the template `{}`", shorten(template)))?;
        parts.push(match &after[..close] {
            "body" => Part::Body,
            "timestamp" => Part::Timestamp,
            "id" => Part::Id,
            "url" => Part::Url,
            other => {
                return Err(format!(
                    "unknown placeholder `{{{}}}`; expected {{body}}, {{timestamp}}, {{id}} or {{url}}",
                    shorten(other)
                ));
            }
        });
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_string()));
    }
    Ok(parts)
}

/// An HTTP header name (RFC 9110 token).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Unix seconds (milliseconds from 10^12 on) or RFC 3339.
fn parse_time(text: &str) -> Option<UnixMillis> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let n: i64 = text.parse().ok()?;
        return Some(if n >= 1_000_000_000_000 {
            UnixMillis(n)
        } else {
            UnixMillis::from_secs(n)
        });
    }
    UnixMillis::parse_rfc3339(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheme(opts: GenericHmacOptions) -> GenericHmac {
        GenericHmac::new(opts).expect("valid options")
    }

    fn round_trip(s: &GenericHmac, url: Option<&str>) -> RawRequest {
        let body = br#"{"id":"evt_1","type":"order.paid"}"#;
        let mut input = SignInput::new(body, UnixMillis::from_secs(1_700_000_000));
        input.url = url;
        let signed = s.sign(&input, b"secret").unwrap();
        let mut req = RawRequest::post("/g", signed.headers_as_pairs(), body.to_vec());
        req.url = url.map(str::to_string);
        let check = s.check(&req, b"secret").unwrap();
        assert!(check.matched, "what we sign verifies: {signed:?}");
        let mut flipped = req.clone();
        flipped.body[4] ^= 1;
        assert!(
            !s.check(&flipped, b"secret").unwrap().matched,
            "a flipped body byte"
        );
        let mut sig = req.clone();
        let last = sig.headers[0].value.len() - 2;
        sig.headers[0].value[last] = if sig.headers[0].value[last] == b'0' {
            b'1'
        } else {
            b'0'
        };
        assert!(
            !s.check(&sig, b"secret").unwrap().matched,
            "a changed signature char"
        );
        req
    }

    #[test]
    fn default_options_are_valid_and_match_the_github_docs_vector() {
        let s = scheme(GenericHmacOptions::default());
        round_trip(&s, None);
        let sig = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        let req = RawRequest::post("/g", [("x-signature", sig)], b"Hello, World!".to_vec());
        assert!(
            s.check(&req, b"It's a Secret to Everybody")
                .unwrap()
                .matched
        );
        assert_eq!(s.info().tolerance, Tolerance::NONE);
    }

    #[test]
    fn timestamped_template_with_prefix_base64_and_url() {
        let s = scheme(GenericHmacOptions {
            header: "X-Sig".into(),
            algorithm: Digest::Sha512,
            encoding: Encoding::Base64,
            prefix: Some("v1=".into()),
            template: "{id}.{timestamp}.{url}.{body}".into(),
            timestamp_header: Some("X-Ts".into()),
            id_header: Some("X-Id".into()),
            tolerance_secs: Some(60),
        });
        assert_eq!(s.info().tolerance, Tolerance::both(60));
        assert!(s.info().signs_url);
        let req = round_trip(&s, Some("https://h.example/g"));
        assert_eq!(
            s.check(&req, b"secret").unwrap().timestamp,
            Some(UnixMillis::from_secs(1_700_000_000))
        );
        let mut moved = req.clone();
        moved.url = Some("https://h.example/other".into());
        assert!(
            !s.check(&moved, b"secret").unwrap().matched,
            "the URL is signed"
        );
        moved.url = None;
        assert!(matches!(
            s.check(&moved, b"secret"),
            Err(CheckError::MissingUrl { .. })
        ));
        assert_eq!(
            s.metadata(&req).event_id.as_deref(),
            Some(&*id_from_body("msg_", &req.body))
        );
    }

    #[test]
    fn invalid_options_are_refused() {
        let bad = |f: fn(&mut GenericHmacOptions)| {
            let mut o = GenericHmacOptions::default();
            f(&mut o);
            GenericHmac::new(o).expect_err("refused").0
        };
        assert!(bad(|o| o.header = String::new()).contains("header name"));
        assert!(bad(|o| o.header = "X Sig".into()).contains("header name"));
        assert!(bad(|o| o.template = "{timestamp}".into()).contains("{body}"));
        assert!(bad(|o| o.template = "{body}{nope}".into()).contains("unknown placeholder"));
        assert!(bad(|o| o.template = "{body".into()).contains("unclosed"));
        assert!(bad(|o| o.template = "{timestamp}.{body}".into()).contains("timestamp_header"));
        assert!(bad(|o| o.timestamp_header = Some("X-Ts".into())).contains("replayed"));
        assert!(bad(|o| o.template = "{id}{body}".into()).contains("id_header"));
        assert!(bad(|o| o.tolerance_secs = Some(5)).contains("timestamp"));
    }

    #[test]
    fn unreadable_requests() {
        let s = scheme(GenericHmacOptions {
            template: "{timestamp}:{body}".into(),
            timestamp_header: Some("X-Ts".into()),
            ..GenericHmacOptions::default()
        });
        let check =
            |h: Vec<(&str, &str)>| s.check(&RawRequest::post("/g", h, b"{}".to_vec()), b"k");
        assert_eq!(
            check(vec![("X-Ts", "1")]),
            Err(CheckError::MissingHeader {
                header: "X-Signature".into()
            })
        );
        assert_eq!(
            check(vec![("X-Signature", "ab")]),
            Err(CheckError::MissingHeader {
                header: "X-Ts".into()
            })
        );
        assert!(matches!(
            check(vec![("X-Signature", "ab"), ("X-Ts", "soon")]),
            Err(CheckError::MalformedHeader { .. })
        ));
        assert!(matches!(
            check(vec![("X-Signature", "zz"), ("X-Ts", "1")]),
            Err(CheckError::MalformedHeader { .. })
        ));
        assert_eq!(
            parse_time("1700000000000"),
            Some(UnixMillis(1_700_000_000_000))
        );
        assert_eq!(
            parse_time("2023-11-14T22:13:20Z"),
            Some(UnixMillis::from_secs(1_700_000_000))
        );
    }

    #[test]
    fn options_deserialize_with_defaults() {
        let o: GenericHmacOptions =
            serde_json::from_str(r#"{"algorithm":"sha1","encoding":"base64"}"#).unwrap();
        assert_eq!(o.header, "X-Signature");
        assert_eq!(o.template, "{body}");
        assert_eq!(o.algorithm, Digest::Sha1);
    }
}
