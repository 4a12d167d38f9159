//! A provider's event JSON (a Stripe `evt_…` object from the dashboard or `stripe events
//! retrieve`, a Mercado Pago notification, an Asaas `{"event": "PAYMENT_…", "payment": …}`…)
//! turned into the request the provider would send: the body byte-exact, `Content-Type:
//! application/json`, the query string the provider adds (Mercado Pago's `data.id` and `type`),
//! and the signature headers made now with the source's secret by the provider's own
//! [`crate::provider::sign`] — the same signing `hooklab sign` does.

use super::CaptureError;
use crate::clock::UnixMillis;
use crate::provider::{self, ProviderId, ProviderOptions, SignInput};
use crate::request::{Header, RawRequest};
use crate::secret::Secret;
use serde_json::Value;

/// The event as JSON; it must be an object.
pub(super) fn parse(bytes: &[u8]) -> Result<Value, CaptureError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| CaptureError::new("event", format!("not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(CaptureError::new("event", "an event is a JSON object"));
    }
    Ok(value)
}

/// The provider whose event this shape is, when the shape says so.
pub fn detect_provider(event: &Value) -> Option<ProviderId> {
    let s = |pointer: &str| event.pointer(pointer).and_then(Value::as_str);
    let has = |pointer: &str| event.pointer(pointer).is_some();
    if s("/object") == Some("event") && s("/id").is_some_and(|id| id.starts_with("evt_")) {
        return Some(ProviderId::Stripe);
    }
    if has("/notificationItems") {
        return Some(ProviderId::Adyen);
    }
    if has("/meta/event_name") {
        return Some(ProviderId::Lemonsqueezy);
    }
    if s("/entity") == Some("event") && has("/payload") {
        return Some(ProviderId::Razorpay);
    }
    if has("/event_type") && has("/notification_id") {
        return Some(ProviderId::Paddle);
    }
    if has("/signature/properties") && has("/timestamp") && has("/data") {
        return Some(ProviderId::Wompi);
    }
    if has("/event_ts") && has("/payload") {
        return Some(ProviderId::Zoom);
    }
    if has("/payment_id") && has("/payment_status") {
        return Some(ProviderId::Nowpayments);
    }
    if has("/merchant_id") && has("/event_id") && has("/type") {
        return Some(ProviderId::Square);
    }
    if has("/webhookTimestamp") && has("/action") {
        return Some(ProviderId::Linear);
    }
    let mercadopago_action = s("/action").is_some_and(|a| a.contains('.'));
    if has("/data/id") && (mercadopago_action || (has("/live_mode") && has("/type"))) {
        return Some(ProviderId::Mercadopago);
    }
    if let Some(name) = s("/event") {
        let resource = name
            .split('_')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let upper = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
        if upper && !resource.is_empty() && event.get(&resource).is_some_and(Value::is_object) {
            return Some(ProviderId::Asaas);
        }
    }
    None
}

/// What to wrap, and for whom.
#[derive(Debug, Clone, Copy)]
pub struct Wrap<'a> {
    /// The event, exactly as it will be sent (unless the provider signs inside the body).
    pub body: &'a [u8],
    pub provider: ProviderId,
    pub options: &'a ProviderOptions,
    pub secret: &'a Secret,
    /// The absolute URL the request goes to (the receiver's `/{source}`, or the app's); the
    /// provider's own query (Mercado Pago's `data.id`) is added to it.
    pub url: &'a str,
    pub now: UnixMillis,
}

/// The request the provider would send now.
pub fn wrap(w: Wrap<'_>) -> Result<RawRequest, CaptureError> {
    let event = parse(w.body)?;
    let mut url = w.url.to_string();
    if let Some(query) = provider_query(w.provider, &event) {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&query);
    }
    let content_type = "application/json";
    let mut input = SignInput::new(w.body, w.now);
    input.url = Some(&url);
    input.content_type = Some(content_type);
    let signed = provider::sign(w.provider, w.options, w.secret, &input).map_err(|e| {
        CaptureError::new("event", format!("cannot sign it for {}: {e}", w.provider))
    })?;
    let mut headers = vec![
        Header::new("Content-Type", content_type),
        Header::new(
            "User-Agent",
            format!("Hooklab-Import/{}", env!("CARGO_PKG_VERSION")),
        ),
    ];
    headers.extend(
        signed
            .headers
            .iter()
            .map(|(n, v)| Header::new(n.clone(), v.clone())),
    );
    let body = signed.body.unwrap_or_else(|| w.body.to_vec());
    let url = signed.url.unwrap_or(url);
    let (path, query) = super::split_url(&url);
    Ok(RawRequest {
        method: "POST".into(),
        path,
        query,
        headers,
        body,
        url: Some(url),
    })
}

/// The query string a provider puts on its notification URL, from the event.
fn provider_query(provider: ProviderId, event: &Value) -> Option<String> {
    match provider {
        ProviderId::Mercadopago => {
            let id = match event.pointer("/data/id")? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            let kind = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("payment");
            Some(format!("data.id={}&type={}", encode(&id), encode(kind)))
        }
        _ => None,
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
