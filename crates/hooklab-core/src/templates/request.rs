//! A test event as the request to send: the endpoint with the provider's query string, the
//! content type, the provider's own headers, and the signature made by [`crate::provider::sign`]
//! (the code behind `hooklab sign`). Where a provider signs inside the body (Wompi's checksum)
//! or the URL (Twilio's `bodySHA256`), the signed body or URL replaces the plain one.

use super::TestEvent;
use crate::clock::UnixMillis;
use crate::provider::{self, ProviderOptions, SignError, SignInput};
use crate::request::RawRequest;
use crate::secret::Secret;

/// A test event ready to POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedEvent {
    /// The absolute URL to POST to (the endpoint plus the provider's query string).
    pub url: String,
    /// Every header to send, in order: `Content-Type`, the provider's own, the signature's.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether a signature was added (no secret: sent unsigned).
    pub signed: bool,
    /// Something the user should know from the signer (e.g. Discord's public key).
    pub note: Option<String>,
}

impl SignedEvent {
    /// The request as the receiver will see it (path and query from [`SignedEvent::url`]).
    pub fn raw_request(&self) -> RawRequest {
        let target = match self.url.split_once("://") {
            Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
            None => self.url.as_str(),
        };
        RawRequest::post(
            target,
            self.headers
                .iter()
                .map(|(n, v)| (n.clone(), v.clone().into_bytes())),
            self.body.clone(),
        )
        .with_url(self.url.clone())
    }
}

impl TestEvent {
    /// The request for this event at `endpoint` (e.g. `http://127.0.0.1:8787/stripe`), signed
    /// with `secret` as of `now` when a secret is given. The provider's own headers win over
    /// same-named ones the signer adds (GitHub's `X-GitHub-Event` is the template's, not a
    /// guess from the body).
    pub fn request(
        &self,
        options: &ProviderOptions,
        secret: Option<&Secret>,
        endpoint: &str,
        now: UnixMillis,
    ) -> Result<SignedEvent, SignError> {
        let url = match &self.query {
            Some(q) if endpoint.contains('?') => format!("{endpoint}&{q}"),
            Some(q) => format!("{endpoint}?{q}"),
            None => endpoint.to_string(),
        };
        let mut headers = vec![("Content-Type".to_string(), self.content_type.to_string())];
        headers.extend(self.headers.iter().cloned());
        let Some(secret) = secret else {
            return Ok(SignedEvent {
                url,
                headers,
                body: self.body.clone(),
                signed: false,
                note: None,
            });
        };
        let mut input = SignInput::new(&self.body, now);
        input.url = Some(&url);
        input.content_type = Some(self.content_type);
        input.id = self.delivery_id.as_deref();
        let signed = provider::sign(self.provider, options, secret, &input)?;
        for (name, value) in signed.headers {
            if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                headers.push((name, value));
            }
        }
        Ok(SignedEvent {
            url: signed.url.unwrap_or(url),
            headers,
            body: signed.body.unwrap_or_else(|| self.body.clone()),
            signed: true,
            note: signed.note,
        })
    }
}
