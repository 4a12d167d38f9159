//! The absolute URL a sender signed, for URL-signed providers (Twilio, Square, Mercado Pago).
//!
//! Behind a tunnel the sender called the *public* URL, not ours: with `public_url` configured
//! that is the URL verified, and the local form (`http://{Host}{path}?{query}`) is offered to
//! the diagnosis as an alternative; without it the local form is verified and the `https`
//! and `X-Forwarded-*` forms are the alternatives (a tunnel usually terminates TLS).
//!
//! The public URL is a [`PublicUrl`]: fixed by `--public-url` (a reverse proxy), or set by the
//! tunnel supervisor each time the tunnel comes up, possibly with a new URL. A fixed one wins.

use hooklab_core::request::RawRequest;
use std::sync::{Arc, RwLock};

/// The URL senders call, shared between the receiver and the tunnel supervisor; cheap to
/// clone (clones share the value).
#[derive(Clone, Default)]
pub struct PublicUrl {
    /// Configured (`--public-url`): always wins.
    fixed: Option<Arc<str>>,
    /// The tunnel's latest URL (kept while it reconnects).
    tunnel: Arc<RwLock<Option<Arc<str>>>>,
}

impl PublicUrl {
    /// With the configured URL, if any.
    pub fn new(fixed: Option<&str>) -> Self {
        Self {
            fixed: fixed.map(Arc::from),
            tunnel: Arc::default(),
        }
    }

    /// Records the tunnel's URL (`None`: the tunnel has none).
    pub fn set_tunnel(&self, url: Option<String>) {
        let mut slot = self.tunnel.write().unwrap_or_else(|e| e.into_inner());
        *slot = url.map(Arc::from);
    }

    /// The URL to verify URL-signed requests against: the configured one, else the tunnel's.
    pub fn get(&self) -> Option<Arc<str>> {
        if let Some(fixed) = &self.fixed {
            return Some(Arc::clone(fixed));
        }
        self.tunnel
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// [`PublicUrl::get`], named like `Option::as_deref` so that the request handler's call
    /// (`rx.0.public_url.as_deref()`) reads the same as when this was an `Option<String>`.
    pub(crate) fn as_deref(&self) -> Option<Arc<str>> {
        self.get()
    }
}

impl std::fmt::Debug for PublicUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PublicUrl").field(&self.get()).finish()
    }
}

/// The URL to verify against, and the other plausible ones (for diagnosis only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignedUrls {
    pub(crate) primary: String,
    pub(crate) alternatives: Vec<String>,
}

/// `host` is what the request says it was sent to: the absolute-form target's authority or
/// the `Host` header; `fallback_host` is used when it says nothing (HTTP/1.0).
pub(crate) fn signed_urls(
    public_url: Option<impl AsRef<str>>,
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
            format!("{}{tail}", public.as_ref().trim_end_matches('/'))
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

    #[test]
    fn a_configured_public_url_wins_over_the_tunnel() {
        let shared = PublicUrl::new(None);
        let seen_by_receiver = shared.clone();
        assert_eq!(seen_by_receiver.get(), None);
        shared.set_tunnel(Some("https://a.lhr.life".into()));
        assert_eq!(
            seen_by_receiver.get().as_deref(),
            Some("https://a.lhr.life")
        );
        shared.set_tunnel(Some("https://b.lhr.life".into()));
        assert_eq!(
            seen_by_receiver.get().as_deref(),
            Some("https://b.lhr.life"),
            "a reconnect's new URL reaches the receiver"
        );
        let fixed = PublicUrl::new(Some("https://proxy.example"));
        fixed.set_tunnel(Some("https://b.lhr.life".into()));
        assert_eq!(fixed.get().as_deref(), Some("https://proxy.example"));
    }

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
        let urls = signed_urls(None::<&str>, &r, Some("h:1"), "-");
        assert_eq!(urls.primary, "http://h:1/sq");
        assert_eq!(
            urls.alternatives,
            ["https://h:1/sq", "https://t.example/sq"]
        );
        let urls = signed_urls(None::<&str>, &req("/sq", &[]), None, "127.0.0.1:9");
        assert_eq!(
            urls.primary, "http://127.0.0.1:9/sq",
            "HTTP/1.0 without Host"
        );
    }
}
