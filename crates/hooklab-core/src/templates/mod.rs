//! Test events: realistic deliveries of a provider and event type, with fresh ids and
//! timestamps, to be signed with a source's secret and sent through the receiver (or to an
//! app) like any delivery — Hooklab's `stripe trigger` for every provider.
//!
//! [`catalogue`] lists the templates (per provider and event type, in the provider's own shape);
//! [`generate`] builds one, applies [`Override`]s (`data.object.id=pi_X` so that several
//! events hit the same payment), and reads it back as the receiver and the state machines will
//! (event id, type, object); [`TestEvent::request`] signs it for an endpoint with the same
//! code `hooklab sign` uses. Headers a provider puts its metadata in (GitHub's
//! `X-GitHub-Event`, Shopify's `X-Shopify-Topic`) and query strings it signs (Mercado Pago's
//! `?data.id=`) are part of the event, and follow the body after overrides.
//!
//! ```
//! use hooklab_core::clock::UnixMillis;
//! use hooklab_core::provider::ProviderId;
//! use hooklab_core::templates::{generate, Override};
//!
//! let now = UnixMillis::from_secs(1_700_000_000);
//! let set = [Override::parse("data.object.id=pi_X").unwrap()];
//! let event = generate(ProviderId::Stripe, Some("payment_intent.created"), &set, now, "a").unwrap();
//! assert_eq!(event.event_type, "payment_intent.created");
//! assert_eq!(event.object_id.as_deref(), Some("pi_X"));
//! assert!(event.event_id.starts_with("evt_"));
//! ```

mod ids;
mod latam;
mod overrides;
mod paddle;
mod platforms;
mod request;
mod stripe;
#[cfg(test)]
mod tests;

pub use overrides::Override;
pub use request::SignedEvent;

use crate::clock::UnixMillis;
use crate::provider::{ProviderId, ProviderOptions};
use crate::secret::Secret;
use ids::Ids;
use serde_json::Value;

/// A test event, ready to sign (see [`TestEvent::request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestEvent {
    pub provider: ProviderId,
    /// The template it was made from, as [`catalogue`] names it (e.g. `event_callback`).
    pub template: &'static str,
    pub body: Vec<u8>,
    pub content_type: &'static str,
    /// The event id the receiver will record (the provider's event or delivery id); empty for
    /// providers that have none (Wompi, Zoom: they deduplicate on the object and its status).
    pub event_id: String,
    /// The event type the receiver will record, e.g. `payment_intent.succeeded`, `push`, or
    /// Slack's inner event type (`app_mention`); the template name when the provider has none.
    pub event_type: String,
    /// The business object: the one the built-in state machine follows (a refund's
    /// PaymentIntent, not its charge), else the one the provider's metadata names.
    pub object_id: Option<String>,
    /// Headers the provider sends besides its signature (`X-GitHub-Event`, `X-Shopify-Topic`…),
    /// in order.
    pub headers: Vec<(String, String)>,
    /// A query string the provider appends to the endpoint (Mercado Pago's signed
    /// `data.id=…&type=payment`), without `?`.
    pub query: Option<String>,
    /// The delivery or message id to sign where the provider signs one (Standard Webhooks'
    /// `webhook-id`, GitHub's `X-GitHub-Delivery`…).
    pub delivery_id: Option<String>,
}

/// Why a test event cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    #[error("{provider} has no `{event_type}` test event; known: {known}")]
    UnknownEventType {
        provider: ProviderId,
        event_type: String,
        /// The known event types, comma-separated, the default first.
        known: String,
    },
    #[error("bad override `{spec}`: {detail}")]
    BadOverride { spec: String, detail: String },
    #[error("cannot set `{path}`: {detail}")]
    BadPath { path: String, detail: String },
}

impl TemplateError {
    /// A stable snake_case code for the control API's `{code, message}`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownEventType { .. } => "unknown_event_type",
            Self::BadOverride { .. } => "bad_override",
            Self::BadPath { .. } => "bad_path",
        }
    }
}

/// What a template builds from: the time and the ids of one event.
pub(crate) struct Ctx {
    now: UnixMillis,
    ids: Ids,
}

impl Ctx {
    fn secs(&self) -> i64 {
        self.now.as_secs()
    }

    fn rfc3339(&self) -> String {
        self.now.to_rfc3339()
    }

    /// RFC 3339 with microseconds, as Paddle prints it.
    fn rfc3339_micros(&self) -> String {
        let text = self.now.to_rfc3339();
        match text.strip_suffix('Z') {
            Some(millis) => format!("{millis}000Z"),
            None => text,
        }
    }

    /// The time in Brasília (UTC−3), where Asaas dates its events.
    fn brasilia(&self) -> time::OffsetDateTime {
        let offset = time::UtcOffset::from_hms(-3, 0, 0).unwrap_or(time::UtcOffset::UTC);
        time::OffsetDateTime::from_unix_timestamp(self.secs())
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
            .to_offset(offset)
    }

    /// `YYYY-MM-DD HH:MM:SS` in Brasília, Asaas's `dateCreated`.
    fn brasilia_text(&self) -> String {
        let t = self.brasilia();
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        )
    }
}

/// One event type of one provider.
pub(crate) struct Template {
    name: &'static str,
    build: fn(&Ctx) -> Value,
}

/// What a provider sends beside the body, worked out from the final body.
#[derive(Default)]
pub(crate) struct Envelope {
    headers: Vec<(String, String)>,
    query: Option<String>,
    delivery_id: Option<String>,
}

fn templates(provider: ProviderId) -> &'static [Template] {
    match provider {
        ProviderId::Stripe => stripe::TEMPLATES,
        ProviderId::Mercadopago => latam::MERCADOPAGO,
        ProviderId::Asaas => latam::ASAAS,
        ProviderId::Wompi => latam::WOMPI,
        ProviderId::Paddle => paddle::TEMPLATES,
        ProviderId::Github => platforms::GITHUB,
        ProviderId::Shopify => platforms::SHOPIFY,
        ProviderId::Slack => platforms::SLACK,
        ProviderId::Linear => platforms::LINEAR,
        ProviderId::Adyen => platforms::ADYEN,
        _ => platforms::DEFAULT,
    }
}

fn envelope(provider: ProviderId, template: &str, body: &Value, ctx: &Ctx) -> Envelope {
    match provider {
        ProviderId::Github => platforms::github_envelope(template, ctx),
        ProviderId::Shopify => platforms::shopify_envelope(template, ctx),
        ProviderId::Mercadopago => latam::mercadopago_envelope(body, ctx),
        ProviderId::StandardWebhooks
        | ProviderId::Svix
        | ProviderId::Clerk
        | ProviderId::Resend
        | ProviderId::Supabase => Envelope {
            delivery_id: Some(format!("msg_{}", ctx.ids.alnum("msg", 27))),
            ..Envelope::default()
        },
        ProviderId::Razorpay => Envelope {
            delivery_id: Some(ctx.ids.alnum("razorpay-event", 14)),
            ..Envelope::default()
        },
        _ => Envelope {
            delivery_id: Some(ctx.ids.uuid("delivery")),
            ..Envelope::default()
        },
    }
}

/// Every provider's test event types, in [`ProviderId::ALL`] order; the first is the default.
pub fn catalogue() -> Vec<(ProviderId, Vec<&'static str>)> {
    ProviderId::ALL
        .into_iter()
        .map(|p| (p, templates(p).iter().map(|t| t.name).collect()))
        .collect()
}

/// A test event of `provider` and `event_type` (its default when `None`), dated `now`, with
/// `overrides` set in its body. `salt` makes ids unique when several are made in the same
/// millisecond; the same `(now, salt)` gives the same ids.
pub fn generate(
    provider: ProviderId,
    event_type: Option<&str>,
    overrides: &[Override],
    now: UnixMillis,
    salt: &str,
) -> Result<TestEvent, TemplateError> {
    let list = templates(provider);
    let template = match event_type {
        None => list.first(),
        Some(wanted) => list.iter().find(|t| t.name == wanted),
    }
    .ok_or_else(|| TemplateError::UnknownEventType {
        provider,
        event_type: event_type.unwrap_or_default().to_string(),
        known: list.iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
    })?;
    let ctx = Ctx {
        now,
        ids: Ids::new(format!("{}:{}:{salt}", provider.as_str(), now.0)),
    };
    let mut body = (template.build)(&ctx);
    for o in overrides {
        o.apply(&mut body)?;
    }
    let Envelope {
        headers,
        query,
        delivery_id,
    } = envelope(provider, template.name, &body, &ctx);
    let mut event = TestEvent {
        provider,
        template: template.name,
        body: serde_json::to_vec(&body).unwrap_or_default(),
        content_type: "application/json",
        event_id: String::new(),
        event_type: template.name.to_string(),
        object_id: None,
        headers,
        query,
        delivery_id,
    };
    // Read it back as the receiver will, signature headers included (they carry Standard
    // Webhooks' and Twitch's ids): signed with a throwaway key, or unsigned where that key
    // does not fit the provider (Discord's Ed25519 seed).
    let options = ProviderOptions::default();
    let endpoint = "http://127.0.0.1/";
    let request = event
        .request(&options, Some(&Secret::new(READ_BACK_KEY)), endpoint, now)
        .or_else(|_| event.request(&options, None, endpoint, now))
        .map(|signed| signed.raw_request())
        .unwrap_or_default();
    let metadata = crate::provider::scheme(provider, &options)
        .map(|scheme| scheme.metadata(&request))
        .unwrap_or_default();
    let machine_object = crate::machine::builtins()
        .into_iter()
        .filter(|m| m.applies_to(provider))
        .find_map(|m| m.event_from_body(&body))
        .map(|e| e.object_id);
    event.event_id = metadata.event_id.unwrap_or_default();
    if let Some(kind) = metadata.event_type {
        event.event_type = kind;
    }
    event.object_id = machine_object.or(metadata.object_id);
    Ok(event)
}

/// Signs a test event only to read its metadata back; never sent anywhere. Shaped to be a
/// valid key for every shared-secret scheme (Standard Webhooks decodes it as base64).
const READ_BACK_KEY: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The default test event of `provider`, dated `now` (see [`generate`]).
pub fn test_event(provider: ProviderId, now: UnixMillis, salt: &str) -> TestEvent {
    match generate(provider, None, &[], now, salt) {
        Ok(event) => event,
        // Unreachable: every provider has a default template and no override was given.
        Err(_) => TestEvent {
            provider,
            template: "hooklab.test",
            body: b"{}".to_vec(),
            content_type: "application/json",
            event_id: String::new(),
            event_type: "hooklab.test".into(),
            object_id: None,
            headers: Vec::new(),
            query: None,
            delivery_id: None,
        },
    }
}
