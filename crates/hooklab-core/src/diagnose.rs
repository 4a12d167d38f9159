//! Diagnosis: when a signature fails, find the best explanation the evidence supports by
//! trying alternatives, and say it in plain words so a developer knows what to fix.
//!
//! Alternatives, in the order they are tried (the first that makes the signature match wins):
//! 1. a secret configured for *another* source (the gateway uses another endpoint's secret);
//! 2. this source's secret read in another format (`whsec_…` literal vs base64-decoded, hex…);
//! 3. the body re-serialised (compact / pretty JSON, other line endings, trailing newline);
//! 4. for URL-signed providers, another form of the URL (port, scheme, public vs local).
//!
//! A signature that matches but whose timestamp is out of tolerance is explained by [`stale`].
//! Diagnosis only runs on failures, so its cost never touches the valid path.

use crate::clock::UnixMillis;
use crate::provider::{self, CheckError, Scheme, Tolerance};
use crate::request::RawRequest;
use crate::secret::Secret;
use crate::verdict::{Diagnosis, Finding, Reason, Verdict};
use crate::verify::{TimeCheck, VerifyConfig, time_check};
use base64::Engine as _;

/// An authentic signature outside the tolerance.
pub(crate) fn stale(
    index: usize,
    ts: UnixMillis,
    now: UnixMillis,
    time: TimeCheck,
    tolerance: Tolerance,
) -> Verdict {
    let age_secs = now.0.saturating_sub(ts.0) / 1000;
    let (reason, by_secs, summary, message) = match time {
        TimeCheck::TooOld { by_ms } => {
            let limit = tolerance.past_secs.unwrap_or_default();
            (
                Reason::TimestampTooOld,
                by_ms / 1000,
                format!(
                    "authentic signature, but signed {} ago: {} past the {limit} s tolerance",
                    human_secs(age_secs),
                    human_secs(by_ms / 1000)
                ),
                format!(
                    "The signature is authentic (secret #{}), but its timestamp is {} old and \
                     this provider accepts at most {limit} s. Either this is an old delivery \
                     being replayed (re-sign it with a fresh timestamp), or this machine's clock \
                     is behind: check it with `timedatectl`. To accept it anyway, raise the \
                     source's tolerance.",
                    index + 1,
                    human_secs(age_secs),
                ),
            )
        }
        TimeCheck::InFuture { by_ms } => {
            let limit = tolerance.future_secs.unwrap_or_default();
            (
                Reason::TimestampInFuture,
                by_ms / 1000,
                format!(
                    "authentic signature, but dated {} in the future: {} past the {limit} s tolerance",
                    human_secs(-age_secs),
                    human_secs(by_ms / 1000)
                ),
                format!(
                    "The signature is authentic (secret #{}), but its timestamp is {} in the \
                     future. The sender's clock or this machine's clock is wrong: check it with \
                     `timedatectl`.",
                    index + 1,
                    human_secs(-age_secs),
                ),
            )
        }
        TimeCheck::Within => (
            Reason::SignatureMismatch,
            0,
            "authentic signature".to_string(),
            String::new(),
        ),
    };
    let mut v = Verdict::invalid(reason, summary);
    v.matched_secret = Some(index);
    v.signed_at = Some(ts.as_secs());
    v.diagnosis = Some(Diagnosis {
        finding: Some(Finding::OutsideTolerance {
            secret_index: index,
            age_secs,
            by_secs,
        }),
        message,
    });
    v
}

/// Every configured secret failed to become a key.
pub(crate) fn secret_unusable(
    scheme: &dyn Scheme,
    config: &VerifyConfig,
    req: &RawRequest,
) -> Diagnosis {
    let info = scheme.info();
    if let Some(d) = try_secret_formats(scheme, config, req) {
        return d;
    }
    Diagnosis {
        finding: None,
        message: format!(
            "{} reads the secret as {}. Copy the endpoint's signing secret again from the \
             provider's dashboard.",
            info.name, info.secret_format
        ),
    }
}

/// No configured secret matches: look for the best explanation.
pub(crate) fn mismatch(
    scheme: &dyn Scheme,
    config: &VerifyConfig,
    req: &RawRequest,
    now: UnixMillis,
    tolerance: Tolerance,
    signed_at: Option<UnixMillis>,
) -> Diagnosis {
    let info = scheme.info();
    // 1. Another source's secret.
    for (label, secret) in &config.other_secrets {
        if matches_with(scheme, req, secret) {
            return Diagnosis {
                finding: Some(Finding::OtherSecret {
                    label: label.clone(),
                }),
                message: format!(
                    "The signature was made with the secret of {label}, not with this \
                     source's. The gateway is sending this endpoint's events signed with another \
                     endpoint's secret, or the secrets were pasted into the wrong sources: copy \
                     this endpoint's signing secret from the {} dashboard into this source.",
                    info.name
                ),
            };
        }
    }
    // 2. This source's secret read in another format.
    if let Some(d) = try_secret_formats(scheme, config, req) {
        return d;
    }
    // 3. The body re-serialised.
    for (variant, body) in body_variants(&req.body) {
        let altered = RawRequest {
            body,
            ..req.clone()
        };
        if let Some(index) = first_match(scheme, config, &altered) {
            return Diagnosis {
                finding: Some(Finding::BodyReencoded {
                    secret_index: index,
                    variant: variant.to_string(),
                }),
                message: format!(
                    "The signature matches this body {variant}, not the bytes that arrived: \
                     something between the gateway and here re-encoded the payload (a proxy or \
                     relay that parses and re-serialises JSON, or a tool that rewrites line \
                     endings). Signatures cover the exact bytes: send the raw body unchanged."
                ),
            };
        }
    }
    // 4. Another form of the URL.
    if info.signs_url {
        if let Some(url) = &req.url {
            for candidate in url_variants(url, &config.alt_urls) {
                let altered = RawRequest {
                    url: Some(candidate.clone()),
                    ..req.clone()
                };
                if let Some(index) = first_match(scheme, config, &altered) {
                    return Diagnosis {
                        finding: Some(Finding::UrlVariant {
                            secret_index: index,
                            url: candidate.clone(),
                        }),
                        message: format!(
                            "The signature matches the URL {candidate}, not {url}. {} signs the \
                             exact URL configured in its dashboard: set Hooklab's public URL \
                             (--public-url) to match it, or change the URL in the dashboard.",
                            info.name
                        ),
                    };
                }
            }
        }
    }
    let mut message = format!(
        "No configured secret matches, in any of the usual secret formats, nor with the body \
         re-encoded{}. Check that the secret is this endpoint's signing secret — {} — and that \
         nothing changes the request before it reaches Hooklab.",
        if info.signs_url {
            " or another form of the URL"
        } else {
            ""
        },
        info.secret_format
    );
    if let Some(ts) = signed_at {
        if let TimeCheck::TooOld { .. } | TimeCheck::InFuture { .. } =
            time_check(tolerance, ts, now)
        {
            message.push_str(&format!(
                " Its timestamp is also outside the tolerance ({} from now).",
                human_secs(now.0.saturating_sub(ts.0).saturating_abs() / 1000)
            ));
        }
    }
    Diagnosis {
        finding: None,
        message,
    }
}

/// The request could not be checked at all (missing or malformed signature material).
pub(crate) fn unreadable(config: &VerifyConfig, req: &RawRequest, e: &CheckError) -> Diagnosis {
    if let CheckError::MissingHeader { header } = e {
        if let Some(other) = provider::detect(req).filter(|p| *p != config.provider) {
            return Diagnosis {
                finding: Some(Finding::OtherProvider {
                    provider: other.to_string(),
                }),
                message: format!(
                    "There is no `{header}` header, but the request carries {other}'s headers: \
                     it looks like a {other} delivery sent to a source configured for {}. \
                     Change this source's provider, or point the {other} dashboard at the right \
                     source.",
                    config.provider
                ),
            };
        }
        return Diagnosis {
            finding: None,
            message: format!(
                "The request has no `{header}` header. Check that the gateway signs this \
                 endpoint (a signing secret is set in its dashboard) and that no proxy strips \
                 headers on the way."
            ),
        };
    }
    let message = match e {
        CheckError::MalformedHeader { header, detail } => format!(
            "The `{header}` header could not be read ({detail}). Compare it with the format in \
             `hooklab providers`; a proxy may have truncated or rewritten it."
        ),
        CheckError::MalformedBody { detail } => format!(
            "This provider signs fields inside the body, and the body could not be read as \
             needed ({detail}). Check that the body arrives unmodified."
        ),
        CheckError::MissingUrl { detail } => format!(
            "{detail}. This provider signs the URL: set the public URL the gateway calls \
             (--public-url, or --url for `hooklab verify`)."
        ),
        other => other.to_string(),
    };
    Diagnosis {
        finding: None,
        message,
    }
}

fn matches_with(scheme: &dyn Scheme, req: &RawRequest, secret: &Secret) -> bool {
    scheme
        .key(secret)
        .ok()
        .and_then(|key| scheme.check(req, &key).ok())
        .is_some_and(|c| c.matched)
}

fn first_match(scheme: &dyn Scheme, config: &VerifyConfig, req: &RawRequest) -> Option<usize> {
    config
        .secrets
        .iter()
        .position(|s| matches_with(scheme, req, s))
}

fn try_secret_formats(
    scheme: &dyn Scheme,
    config: &VerifyConfig,
    req: &RawRequest,
) -> Option<Diagnosis> {
    let info = scheme.info();
    for (index, secret) in config.secrets.iter().enumerate() {
        let default = scheme.key(secret).ok();
        for (format, key) in key_variants(secret.expose()) {
            if default.as_deref() == Some(key.as_slice()) {
                continue;
            }
            if scheme.check(req, &key).is_ok_and(|c| c.matched) {
                return Some(Diagnosis {
                    finding: Some(Finding::SecretFormat {
                        secret_index: index,
                        format: format.to_string(),
                    }),
                    message: format!(
                        "The signature matches secret #{} read as {format}, but {} reads the \
                         secret as {}. The secret was pasted in another format, or the sender \
                         uses another library's convention: configure it in the form {} expects.",
                        index + 1,
                        info.name,
                        info.secret_format,
                        info.name
                    ),
                });
            }
        }
    }
    None
}

/// The ways a secret string is commonly turned into key bytes, named for the diagnosis.
fn key_variants(secret: &str) -> Vec<(&'static str, Vec<u8>)> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let b64_lenient = base64::engine::general_purpose::STANDARD_NO_PAD;
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut out: Vec<(&'static str, Vec<u8>)> = vec![(
        "the literal string (prefix included)",
        secret.as_bytes().to_vec(),
    )];
    let trimmed = secret.trim();
    if trimmed != secret {
        out.push((
            "the string without surrounding whitespace",
            trimmed.as_bytes().to_vec(),
        ));
    }
    for (prefix, label_lit, label_b64) in [
        (
            "v1,whsec_",
            "the string without its `v1,whsec_` prefix",
            "base64-decoded after removing `v1,whsec_`",
        ),
        (
            "whsec_",
            "the string without its `whsec_` prefix",
            "base64-decoded after removing `whsec_`",
        ),
    ] {
        if let Some(rest) = trimmed.strip_prefix(prefix) {
            out.push((label_lit, rest.as_bytes().to_vec()));
            if let Ok(k) = b64.decode(rest).or_else(|_| b64_lenient.decode(rest)) {
                out.push((label_b64, k));
            }
        }
    }
    if let Ok(k) = b64.decode(trimmed).or_else(|_| b64_lenient.decode(trimmed)) {
        out.push(("base64-decoded", k));
    }
    if let Ok(k) = b64url.decode(trimmed.trim_end_matches('=')) {
        out.push(("base64url-decoded", k));
    }
    if let Ok(k) = hex::decode(trimmed) {
        out.push(("hex-decoded", k));
    }
    out
}

/// Re-encodings of a body that relays and tools commonly apply.
fn body_variants(body: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut push = |name: &'static str, v: Vec<u8>| {
        if v != body && !out.iter().any(|(_, o): &(&str, Vec<u8>)| *o == v) {
            out.push((name, v));
        }
    };
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) {
        if let Ok(v) = serde_json::to_vec(&json) {
            push("re-serialised as compact JSON", v);
        }
        if let Ok(v) = serde_json::to_vec_pretty(&json) {
            push("re-serialised as pretty-printed JSON", v.clone());
            let mut nl = v;
            nl.push(b'\n');
            push(
                "re-serialised as pretty-printed JSON with a final newline",
                nl,
            );
        }
        let mut four = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut four, fmt);
        if serde::Serialize::serialize(&json, &mut ser).is_ok() {
            push("re-serialised as JSON indented with 4 spaces", four);
        }
    }
    if body.contains(&b'\n') {
        let crlf_to_lf: Vec<u8> = replace(body, b"\r\n", b"\n");
        push("with CRLF line endings turned into LF", crlf_to_lf.clone());
        push(
            "with LF line endings turned into CRLF",
            replace(&crlf_to_lf, b"\n", b"\r\n"),
        );
    }
    if let Some(stripped) = body.strip_suffix(b"\n") {
        push(
            "without its final newline",
            stripped.strip_suffix(b"\r").unwrap_or(stripped).to_vec(),
        );
    } else {
        let mut v = body.to_vec();
        v.push(b'\n');
        push("with a final newline added", v);
    }
    out
}

fn replace(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len() + haystack.len() / 16);
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// Forms of a URL a gateway may have signed instead of the one reconstructed here.
fn url_variants(url: &str, alt_urls: &[String]) -> Vec<String> {
    let mut out: Vec<String> = alt_urls.iter().filter(|u| *u != url).cloned().collect();
    let mut push = |u: String| {
        if u != url && !out.contains(&u) {
            out.push(u);
        }
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return out;
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p))
            if !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (!h.contains(':') || h.ends_with(']')) =>
        {
            (h, Some(p))
        }
        _ => (authority, None),
    };
    let other_scheme = if scheme == "https" { "http" } else { "https" };
    let default_port = |s: &str| if s == "https" { "443" } else { "80" };
    for s in [scheme, other_scheme] {
        push(format!("{s}://{host}{tail}"));
        push(format!("{s}://{host}:{}{tail}", default_port(s)));
        if let Some(p) = port {
            push(format!("{s}://{host}:{p}{tail}"));
        }
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let toggled = match path.strip_suffix('/') {
        Some(p) => p.to_string(),
        None => format!("{path}/"),
    };
    let query = query.map(|q| format!("?{q}")).unwrap_or_default();
    push(format!("{scheme}://{authority}{toggled}{query}"));
    out
}

fn human_secs(secs: i64) -> String {
    let s = secs.unsigned_abs();
    match s {
        0..=599 => format!("{s} s"),
        600..=7199 => format!("{} min {} s", s / 60, s % 60),
        7200..=172_799 => format!("{} h {} min", s / 3600, (s % 3600) / 60),
        _ => format!("{} days {} h", s / 86_400, (s % 86_400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_variants_cover_port_scheme_and_slash() {
        let v = url_variants("https://example.com:8443/hooks?a=1", &[]);
        assert!(v.contains(&"https://example.com/hooks?a=1".to_string()));
        assert!(v.contains(&"http://example.com:8443/hooks?a=1".to_string()));
        assert!(v.contains(&"https://example.com:443/hooks?a=1".to_string()));
        assert!(v.contains(&"https://example.com:8443/hooks/?a=1".to_string()));
        assert!(!v.contains(&"https://example.com:8443/hooks?a=1".to_string()));
    }

    #[test]
    fn body_variants_skip_identity() {
        let v = body_variants(b"{\"a\":1}");
        assert!(v.iter().all(|(_, b)| b != b"{\"a\":1}"));
        assert!(v.iter().any(|(_, b)| b == b"{\n  \"a\": 1\n}"));
    }

    #[test]
    fn key_variants_include_whsec_base64() {
        let v = key_variants("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert!(
            v.iter()
                .any(|(n, _)| n.starts_with("base64-decoded after removing `whsec_`"))
        );
    }

    #[test]
    fn human_secs_reads_well() {
        assert_eq!(human_secs(42), "42 s");
        assert_eq!(human_secs(600), "10 min 0 s");
        assert_eq!(human_secs(90_000), "25 h 0 min");
    }
}
