//! Replaying a recorded delivery: the request to send again, as recorded (same bytes, same
//! headers in the same order), re-signed with a fresh timestamp and the source's secret, or as a
//! negative variant that must fail verification for a known reason. The replay lab's first
//! piece; sending is the caller's (the CLI sends it over HTTP), so it is recorded, verified and
//! deduplicated like any delivery.

use crate::clock::UnixMillis;
use crate::provider::{self, ProviderId, ProviderOptions, SignInput};
use crate::request::Header;
use crate::secret::Secret;

/// The header a replay carries, naming the delivery it replays (so the two stay linked).
pub const REPLAY_OF_HEADER: &str = "X-Hooklab-Replay-Of";

/// How to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The original bytes and headers, signature included (stale if the provider signs time).
    AsRecorded,
    /// The original body, signed now with the source's secret.
    Resigned,
    /// Signed an hour ago: `timestamp_too_old` for providers that sign time.
    Stale,
    /// Signed with a secret that is not the source's: `signature_mismatch`.
    WrongSecret,
    /// Signed, then one body byte changed: `signature_mismatch`.
    Tampered,
    /// The signature headers removed: `missing_header`.
    Unsigned,
    /// The signature of another body: `signature_mismatch`.
    OtherBody,
}

impl Variant {
    pub const ALL: [Variant; 7] = [
        Variant::AsRecorded,
        Variant::Resigned,
        Variant::Stale,
        Variant::WrongSecret,
        Variant::Tampered,
        Variant::Unsigned,
        Variant::OtherBody,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AsRecorded => "as-recorded",
            Self::Resigned => "resigned",
            Self::Stale => "stale",
            Self::WrongSecret => "wrong-secret",
            Self::Tampered => "tampered",
            Self::Unsigned => "unsigned",
            Self::OtherBody => "other-body",
        }
    }

    /// Whether it needs the source's secret.
    pub fn signs(self) -> bool {
        !matches!(self, Self::AsRecorded | Self::Unsigned)
    }
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                format!("unknown variant `{s}` (one of: {})", names.join(", "))
            })
    }
}

/// What to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRequest {
    pub method: String,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error("the `{0}` variant needs the source's secret: pass --secret")]
    NeedsSecret(&'static str),
    #[error("cannot sign for {provider}: {detail}")]
    Sign {
        provider: ProviderId,
        detail: String,
    },
}

/// What a replay starts from: a recorded delivery's request.
#[derive(Debug, Clone, Copy)]
pub struct Original<'a> {
    pub id: i64,
    pub method: &'a str,
    pub headers: &'a [Header],
    pub body: &'a [u8],
}

/// The request that replays `original` to `url` (the absolute URL it will be sent to, which
/// URL-signing providers sign) as `variant`.
pub fn build(
    original: Original<'_>,
    provider: ProviderId,
    options: &ProviderOptions,
    secret: Option<&Secret>,
    variant: Variant,
    url: &str,
    now: UnixMillis,
) -> Result<ReplayRequest, ReplayError> {
    let signature_headers: Vec<String> = provider::scheme(provider, options)
        .map(|s| s.info().headers)
        .unwrap_or_default()
        .into_iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let is_signature = |h: &Header| signature_headers.contains(&h.name.to_ascii_lowercase());
    let hop_by_hop = |h: &Header| {
        matches!(
            h.name.to_ascii_lowercase().as_str(),
            "host" | "content-length" | "connection" | "transfer-encoding"
        ) || h.name.eq_ignore_ascii_case(REPLAY_OF_HEADER)
    };
    let kept: Vec<Header> = original
        .headers
        .iter()
        .filter(|h| !hop_by_hop(h))
        .cloned()
        .collect();
    let mut body = original.body.to_vec();
    let mut headers: Vec<Header> = match variant {
        Variant::AsRecorded => kept,
        Variant::Unsigned => kept.into_iter().filter(|h| !is_signature(h)).collect(),
        signed => {
            let secret = secret.ok_or(ReplayError::NeedsSecret(signed.as_str()))?;
            let wrong;
            let (key, at, signed_body): (&Secret, UnixMillis, Vec<u8>) = match signed {
                Variant::Stale => (secret, UnixMillis(now.0 - 3_600_000), body.clone()),
                Variant::WrongSecret => {
                    wrong = Secret::new(wrong_like(secret.expose()));
                    (&wrong, now, body.clone())
                }
                Variant::OtherBody => {
                    let mut other = body.clone();
                    other.extend_from_slice(b" ");
                    (secret, now, other)
                }
                _ => (secret, now, body.clone()),
            };
            let content_type = kept
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-type"))
                .and_then(Header::value_str)
                .map(str::to_string);
            let mut input = SignInput::new(&signed_body, at);
            input.url = Some(url);
            input.content_type = content_type.as_deref();
            let out =
                provider::sign(provider, options, key, &input).map_err(|e| ReplayError::Sign {
                    provider,
                    detail: e.to_string(),
                })?;
            if signed != Variant::OtherBody {
                if let Some(signed_body) = out.body {
                    body = signed_body;
                }
            }
            if signed == Variant::Tampered {
                tamper(&mut body);
            }
            // The fresh signature headers replace the recorded ones where they stood.
            let mut fresh: Vec<Header> = out
                .headers
                .iter()
                .map(|(n, v)| Header::new(n.clone(), v.clone()))
                .collect();
            let mut headers = Vec::with_capacity(kept.len() + fresh.len());
            for h in kept {
                if is_signature(&h) || fresh.iter().any(|f| f.name.eq_ignore_ascii_case(&h.name)) {
                    if let Some(i) = fresh
                        .iter()
                        .position(|f| f.name.eq_ignore_ascii_case(&h.name))
                    {
                        headers.push(fresh.remove(i));
                    }
                } else {
                    headers.push(h);
                }
            }
            headers.extend(fresh);
            headers
        }
    };
    headers.push(Header::new(REPLAY_OF_HEADER, original.id.to_string()));
    Ok(ReplayRequest {
        method: original.method.to_string(),
        headers,
        body,
    })
}

/// A secret of the same shape that is not `secret` (so format checks still pass).
fn wrong_like(secret: &str) -> String {
    let mut chars: Vec<char> = secret.chars().collect();
    if let Some(last) = chars.last_mut() {
        *last = match *last {
            'A' => 'B',
            'a' => 'b',
            '0' => '1',
            '=' => '=',
            _ => 'A',
        };
    }
    if chars.last() == Some(&'=') {
        // base64 padding: change the character before it.
        let n = chars.len();
        if n >= 2 {
            chars[n - 2] = if chars[n - 2] == 'A' { 'B' } else { 'A' };
        }
    }
    chars.into_iter().collect()
}

/// Changes one byte in the middle of the body (or adds one to an empty body).
fn tamper(body: &mut Vec<u8>) {
    match body.len() {
        0 => body.push(b'x'),
        n => body[n / 2] ^= 0x01,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RawRequest;
    use crate::verdict::{Reason, Status};
    use crate::verify::{VerifyConfig, verify};

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const URL: &str = "http://127.0.0.1:8787/stripe";

    fn check(req: &ReplayRequest, now: UnixMillis) -> crate::verdict::Verdict {
        let raw = RawRequest {
            method: req.method.clone(),
            path: "/stripe".into(),
            query: None,
            headers: req.headers.clone(),
            body: req.body.clone(),
            url: Some(URL.into()),
        };
        verify(
            &VerifyConfig::new(ProviderId::Stripe, vec![Secret::new(SECRET)]),
            &raw,
            now,
        )
    }

    #[test]
    fn each_variant_verifies_as_expected() {
        let now = UnixMillis::now();
        let body = br#"{"id":"evt_1","type":"charge.succeeded"}"#;
        let mut input = SignInput::new(body, UnixMillis(now.0 - 7_200_000));
        input.url = Some(URL);
        let old = provider::sign(
            ProviderId::Stripe,
            &ProviderOptions::default(),
            &Secret::new(SECRET),
            &input,
        )
        .unwrap();
        let mut headers = vec![
            Header::new("Host", "example"),
            Header::new("Content-Type", "application/json"),
        ];
        headers.extend(
            old.headers
                .iter()
                .map(|(n, v)| Header::new(n.clone(), v.clone())),
        );
        headers.push(Header::new("X-Trace", "1"));
        let original = Original {
            id: 7,
            method: "POST",
            headers: &headers,
            body,
        };
        let secret = Secret::new(SECRET);
        let opts = ProviderOptions::default();
        let expect = [
            (
                Variant::AsRecorded,
                Status::Invalid,
                Some(Reason::TimestampTooOld),
            ),
            (Variant::Resigned, Status::Valid, None),
            (
                Variant::Stale,
                Status::Invalid,
                Some(Reason::TimestampTooOld),
            ),
            (
                Variant::WrongSecret,
                Status::Invalid,
                Some(Reason::SignatureMismatch),
            ),
            (
                Variant::Tampered,
                Status::Invalid,
                Some(Reason::SignatureMismatch),
            ),
            (
                Variant::Unsigned,
                Status::Invalid,
                Some(Reason::MissingHeader),
            ),
            (
                Variant::OtherBody,
                Status::Invalid,
                Some(Reason::SignatureMismatch),
            ),
        ];
        for (variant, status, reason) in expect {
            let req = build(
                original,
                ProviderId::Stripe,
                &opts,
                Some(&secret),
                variant,
                URL,
                now,
            )
            .unwrap();
            let verdict = check(&req, now);
            assert_eq!(
                (verdict.verdict, verdict.reason),
                (status, reason),
                "{variant:?}"
            );
            assert_eq!(
                req.headers.last().map(|h| (h.name.as_str(), h.value_str())),
                Some((REPLAY_OF_HEADER, Some("7"))),
                "linked to its original"
            );
            assert!(
                !req.headers.iter().any(|h| h.name == "Host"),
                "hop-by-hop headers go"
            );
            assert!(
                req.headers.iter().any(|h| h.name == "X-Trace"),
                "others stay"
            );
        }
        let resigned = build(
            original,
            ProviderId::Stripe,
            &opts,
            Some(&secret),
            Variant::Resigned,
            URL,
            now,
        )
        .unwrap();
        assert_eq!(resigned.body, body, "re-signing never touches the body");
        assert!(matches!(
            build(
                original,
                ProviderId::Stripe,
                &opts,
                None,
                Variant::Resigned,
                URL,
                now
            ),
            Err(ReplayError::NeedsSecret("resigned"))
        ));
    }

    #[test]
    fn variants_parse_by_name() {
        for v in Variant::ALL {
            assert_eq!(v.as_str().parse::<Variant>(), Ok(v));
        }
        assert!("nope".parse::<Variant>().is_err());
    }
}
