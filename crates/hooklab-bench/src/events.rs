//! Distinct, validly signed Stripe events of a fixed size, built on the fly.
//!
//! Signed here with `hmac`/`sha2` directly (`t={unix}.{body}`, HMAC-SHA256, hex, the whole
//! `whsec_…` string as the key), independently of `hooklab-core`, so a bug there shows up as
//! invalid verdicts rather than being signed and verified by the same code.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Builds one request at a time into a reused buffer.
pub(crate) struct StripeEvents {
    /// The keyed HMAC state, cloned per request (saves the key schedule).
    mac: Hmac<Sha256>,
    body_size: usize,
    /// The event's `type`: `payment_intent.*` types also drive hooklab's Stripe state machine.
    event_type: String,
    /// Tells this run's ids apart from any other run's.
    run: String,
}

/// The type the benchmark sends by default (a PaymentIntent event, as a payment integration
/// mostly receives).
pub(crate) const DEFAULT_EVENT_TYPE: &str = "payment_intent.succeeded";

impl StripeEvents {
    pub(crate) fn new(secret: &str, body_size: usize, event_type: &str) -> Self {
        let run = format!(
            "{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros())
        );
        Self {
            mac: Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key"),
            body_size,
            event_type: event_type.to_string(),
            run,
        }
    }

    /// The body of event number `seq`: compact JSON padded to exactly `body_size` bytes
    /// (or longer, if `body_size` is smaller than the skeleton).
    pub(crate) fn body(&self, seq: u64, created: i64) -> Vec<u8> {
        let head = format!(
            "{{\"id\":\"evt_{run}_{seq:012}\",\"object\":\"event\",\"api_version\":\"2024-06-20\",\
             \"created\":{created},\"livemode\":false,\"type\":\"{event_type}\",\
             \"data\":{{\"object\":{{\"id\":\"pi_{run}_{seq:012}\",\"object\":\"payment_intent\",\
             \"amount\":4200,\"currency\":\"brl\",\"metadata\":{{\"pad\":\"",
            run = self.run,
            event_type = self.event_type
        );
        let tail = "\"}}}}";
        let pad = self.body_size.saturating_sub(head.len() + tail.len());
        let mut body = Vec::with_capacity(head.len() + pad + tail.len());
        body.extend_from_slice(head.as_bytes());
        body.resize(body.len() + pad, b'x');
        body.extend_from_slice(tail.as_bytes());
        body
    }

    /// The `Stripe-Signature` value for `body` signed at `t`.
    pub(crate) fn signature(&self, t: i64, body: &[u8]) -> String {
        let mut mac = self.mac.clone();
        mac.update(t.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
    }

    /// A complete HTTP/1.1 keep-alive POST of event `seq` to `path`, written into `out`.
    pub(crate) fn request(&self, out: &mut Vec<u8>, host: &str, path: &str, seq: u64) {
        let now = unix_now();
        let body = self.body(seq, now);
        let sig = self.signature(now, &body);
        out.clear();
        out.extend_from_slice(
            format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: Stripe/1.0 (+https://stripe.com/docs/webhooks)\r\n\
                 Content-Type: application/json; charset=utf-8\r\nStripe-Signature: {sig}\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&body);
    }
}

pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_have_the_requested_size_and_distinct_ids() {
        let ev = StripeEvents::new("whsec_x", 1024, DEFAULT_EVENT_TYPE);
        let a = ev.body(1, 1_700_000_000);
        let b = ev.body(2, 1_700_000_000);
        assert_eq!(a.len(), 1024, "the benchmark promises 1 KiB events");
        assert_ne!(a, b, "every event must be distinct");
    }

    #[test]
    fn signature_matches_stripes_documented_scheme() {
        // HMAC-SHA256("whsec_test_secret", "1700000000.{}") computed independently.
        let ev = StripeEvents::new("whsec_test_secret", 0, DEFAULT_EVENT_TYPE);
        let sig = ev.signature(1_700_000_000, b"{}");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_test_secret").unwrap();
        mac.update(b"1700000000.{}");
        let want = hex::encode(mac.finalize().into_bytes());
        assert_eq!(sig, format!("t=1700000000,v1={want}"));
    }
}
