//! GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`, keyed with the
//! secret as typed. No timestamp, so no replay window; the delivery GUID is
//! `X-GitHub-Delivery` and the event name `X-GitHub-Event`.

use super::common::{header_string, json_body, json_str, uuid_from_body};
use super::{Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed};
use super::{Digest, Encoding, SimpleHmac, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

pub(crate) struct Github;

const SHA256: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature-256",
    prefix: "sha256=",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Hex,
};

/// The legacy header GitHub still sends alongside; signed for realism, never verified.
const SHA1: SimpleHmac = SimpleHmac {
    header: "X-Hub-Signature",
    prefix: "sha1=",
    prefix_optional: false,
    digest: Digest::Sha1,
    encoding: Encoding::Hex,
};

/// A guess at `X-GitHub-Event` from the payload's shape, for the common events only.
fn guess_event(body: &serde_json::Value) -> Option<&'static str> {
    let has = |field: &str| body.get(field).is_some();
    Some(match () {
        _ if has("zen") && has("hook_id") => "ping",
        _ if has("commits") && has("ref") => "push",
        _ if has("pull_request") && has("review") => "pull_request_review",
        _ if has("pull_request") => "pull_request",
        _ if has("issue") && has("comment") => "issue_comment",
        _ if has("issue") => "issues",
        _ if has("release") => "release",
        _ if has("workflow_run") => "workflow_run",
        _ => return None,
    })
}

impl Scheme for Github {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Github,
            name: "GitHub".into(),
            headers: vec![SHA256.header.into(), "X-GitHub-Delivery".into()],
            algorithm: SHA256.digest.hmac_name().into(),
            encoding: SHA256.encoding.name().into(),
            signed_payload: "{body}".into(),
            secret_format: "the webhook secret as typed in the settings (UTF-8)".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        SHA256.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let delivery = input
            .id
            .map_or_else(|| uuid_from_body(input.body), str::to_string);
        let mut headers = vec![
            SHA256.sign(input.body, key),
            SHA1.sign(input.body, key),
            ("X-GitHub-Delivery".to_string(), delivery),
        ];
        let body: serde_json::Value = serde_json::from_slice(input.body).unwrap_or_default();
        if let Some(event) = guess_event(&body) {
            headers.push(("X-GitHub-Event".into(), event.into()));
        }
        Ok(Signed {
            headers,
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let body = json_body(req).unwrap_or_default();
        Metadata {
            event_id: header_string(req, "X-GitHub-Delivery"),
            event_type: header_string(req, "X-GitHub-Event"),
            object_id: ["/pull_request/id", "/issue/id", "/release/id", "/after"]
                .iter()
                .find_map(|p| json_str(&body, p)),
            provider_time: None,
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;

    #[test]
    fn fixture_vectors() {
        assert_eq!(
            run_vectors("github", &Github),
            4,
            "all four GitHub vectors ran"
        );
    }

    #[test]
    fn sign_check_round_trip_and_tampering() {
        assert_round_trip(
            &Github,
            "It's a Secret to Everybody",
            b"Hello, World!",
            SHA256.header,
        );
    }

    #[test]
    fn sign_sends_delivery_and_a_sensible_event() {
        let ping = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#;
        let input = SignInput::new(ping, crate::clock::UnixMillis(0));
        let signed = Github.sign(&input, b"k").unwrap();
        let names: Vec<_> = signed.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"X-GitHub-Delivery"));
        assert!(
            signed
                .headers
                .contains(&("X-GitHub-Event".into(), "ping".into()))
        );
        let opaque = Github
            .sign(&SignInput::new(b"{}", input.now), b"k")
            .unwrap();
        assert!(
            opaque.headers.iter().all(|(n, _)| n != "X-GitHub-Event"),
            "no event header is invented for an unknown payload"
        );
    }

    #[test]
    fn prefix_is_required_and_sha1_is_not_enough() {
        let hex = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        let bare = request(&[("X-Hub-Signature-256", hex)], b"Hello, World!");
        assert!(matches!(
            Github.check(&bare, b"It's a Secret to Everybody"),
            Err(CheckError::MalformedHeader { .. })
        ));
        let sha1_only = request(&[("X-Hub-Signature", "sha1=00")], b"x");
        assert_eq!(
            Github.check(&sha1_only, b"k"),
            Err(CheckError::MissingHeader {
                header: "X-Hub-Signature-256".into()
            })
        );
    }

    #[test]
    fn metadata_reads_headers() {
        let req = request(
            &[
                ("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"),
                ("X-GitHub-Event", "pull_request"),
            ],
            br#"{"action":"opened","pull_request":{"id":42}}"#,
        );
        let m = Github.metadata(&req);
        assert_eq!(
            m.event_id.as_deref(),
            Some("72d3162e-cc78-11e3-81ab-4c9367dc0958")
        );
        assert_eq!(m.idempotency_key, m.event_id, "the delivery GUID dedupes");
        assert_eq!(m.event_type.as_deref(), Some("pull_request"));
        assert_eq!(m.object_id.as_deref(), Some("42"));
        assert_eq!(Github.metadata(&request(&[], b"\xff")), Metadata::default());
    }
}
