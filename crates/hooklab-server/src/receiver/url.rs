//! The absolute URL a sender signed, for URL-signed providers (Twilio, Square, Mercado Pago).
//!
//! Behind a tunnel the sender called the *public* URL, not ours: with `public_url` configured
//! that is the URL verified, and the local form (`http://{Host}{path}?{query}`) is offered to
//! the diagnosis as an alternative; without it the local form is verified and the `https`
//! and `X-Forwarded-*` forms are the alternatives (a tunnel usually terminates TLS).

use hooklab_core::request::RawRequest;

/// The URL to verify against, and the other plausible ones (for diagnosis only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignedUrls {
    pub(crate) primary: String,
    pub(crate) alternatives: Vec<String>,
}

/// `host` is what the request says it was sent to: the absolute-form target's authority or
/// the `Host` header; `fallback_host` is used when it says nothing (HTTP/1.0).
pub(crate) fn signed_urls(
    public_url: Option<&str>,
    req: &RawRequest,
    host: Option<&str>,
    fallback_host: &str,
) -> SignedUrls {
    let tail = match &req.query {
        Some(q) => format!("{}?{q}", req.path),
        None => req.path.clone(),
    };
    let host = host.unwrap_or(fallback_host);
    let local = format!("http://{host}{tail}");
    let mut alternatives = Vec::new();
    let primary = match public_url {
        Some(public) => {
            alternatives.push(local);
            format!("{}{tail}", public.trim_end_matches('/'))
        }
        None => {
            alternatives.push(format!("https://{host}{tail}"));
            local
        }
    };
    if let Some(forwarded) = forwarded(req, &tail) {
        if forwarded != primary && !alternatives.contains(&forwarded) {
            alternatives.push(forwarded);
        }
    }
    SignedUrls {
        primary,
        alternatives,
    }
}

/// `{X-Forwarded-Proto}://{X-Forwarded-Host}{tail}`, when a proxy said both.
fn forwarded(req: &RawRequest, tail: &str) -> Option<String> {
    let proto = req
        .header_str("x-forwarded-proto")?
        .split(',')
        .next()?
        .trim();
    let host = req
        .header_str("x-forwarded-host")?
        .split(',')
        .next()?
        .trim();
    let valid = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
    (valid(proto) && valid(host)).then(|| format!("{proto}://{host}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str, headers: &[(&str, &str)]) -> RawRequest {
        RawRequest::post(path, headers.iter().copied(), Vec::new())
    }

    #[test]
    fn the_public_url_is_verified_and_the_local_one_offered() {
        let r = req("/twilio/sms?a=1&b=%20", &[]);
        let urls = signed_urls(Some("https://x.example/"), &r, Some("127.0.0.1:8787"), "-");
        assert_eq!(
            urls.primary, "https://x.example/twilio/sms?a=1&b=%20",
            "query as sent"
        );
        assert_eq!(
            urls.alternatives,
            ["http://127.0.0.1:8787/twilio/sms?a=1&b=%20"]
        );
    }

    #[test]
    fn without_a_public_url_the_host_header_is_used() {
        let r = req(
            "/sq",
            &[
                ("X-Forwarded-Proto", "https"),
                ("X-Forwarded-Host", "t.example"),
            ],
        );
        let urls = signed_urls(None, &r, Some("h:1"), "-");
        assert_eq!(urls.primary, "http://h:1/sq");
        assert_eq!(
            urls.alternatives,
            ["https://h:1/sq", "https://t.example/sq"]
        );
        let urls = signed_urls(None, &req("/sq", &[]), None, "127.0.0.1:9");
        assert_eq!(
            urls.primary, "http://127.0.0.1:9/sq",
            "HTTP/1.0 without Host"
        );
    }
}
