//! Standard Webhooks and the senders built on it (Svix, Clerk, Resend, Supabase Auth Hooks):
//! `webhook-signature: v1,<base64>[ v1,<base64>…]`, each HMAC-SHA256 of
//! `"{webhook-id}.{webhook-timestamp}.{raw body}"`, keyed with the base64-decoded secret.
//!
//! Svix-branded senders (Svix, Clerk, Resend) name the headers `svix-*`; like the Svix SDKs we
//! read `svix-*` first and fall back to `webhook-*`. Entries with another version (`v1a` is
//! Ed25519) are ignored. The timestamp is integer seconds, checked ±300 s.

use super::common::{
    any_matches, header_string, id_from_body, json_body, json_str, json_time, parse_unix_secs,
    required_header_any, shorten,
};
use super::{Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError};
use super::{Digest, Encoding, SignInput, Signed, Tolerance, hmac_digest};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;
use base64::Engine as _;

/// Which sender: they differ in header names, secret format and display name only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Standard,
    Svix,
    Clerk,
    Resend,
    Supabase,
}

pub(crate) struct StandardWebhooks(pub(crate) Flavor);

/// Header names, branded first.
const ID: [&str; 2] = ["svix-id", "webhook-id"];
const TIMESTAMP: [&str; 2] = ["svix-timestamp", "webhook-timestamp"];
const SIGNATURE: [&str; 2] = ["svix-signature", "webhook-signature"];

impl Flavor {
    /// Svix-branded senders send `svix-*` headers.
    fn branded(self) -> bool {
        matches!(self, Flavor::Svix | Flavor::Clerk | Flavor::Resend)
    }

    /// The names to read, in order; the first is the one this sender uses.
    fn names(self, both: &'static [&'static str; 2]) -> &'static [&'static str] {
        if self.branded() { both } else { &both[1..] }
    }
}

fn digest(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> Vec<u8> {
    let parts: [&[u8]; 5] = [id.as_bytes(), b".", timestamp.as_bytes(), b".", body];
    hmac_digest(Digest::Sha256, key, &parts)
}

impl Scheme for StandardWebhooks {
    fn info(&self) -> ProviderInfo {
        let (id, name) = match self.0 {
            Flavor::Standard => (ProviderId::StandardWebhooks, "Standard Webhooks"),
            Flavor::Svix => (ProviderId::Svix, "Svix"),
            Flavor::Clerk => (ProviderId::Clerk, "Clerk"),
            Flavor::Resend => (ProviderId::Resend, "Resend"),
            Flavor::Supabase => (ProviderId::Supabase, "Supabase Auth Hooks"),
        };
        let secret_format = match self.0 {
            Flavor::Supabase => {
                "`v1,whsec_<base64>` as the dashboard shows it; `v1,whsec_` is removed and the \
                 rest base64-decoded (standard alphabet, padded)"
            }
            _ => {
                "`whsec_<base64>`; the `whsec_` prefix is optional and the rest is \
                 base64-decoded (standard alphabet, padded)"
            }
        };
        let first = |both: &'static [&'static str; 2]| self.0.names(both)[0].to_string();
        ProviderInfo {
            id,
            name: name.into(),
            headers: vec![first(&ID), first(&TIMESTAMP), first(&SIGNATURE)],
            algorithm: Digest::Sha256.hmac_name().into(),
            encoding: Encoding::Base64.name().into(),
            signed_payload: "{id}.{timestamp}.{body}".into(),
            secret_format: secret_format.into(),
            tolerance: Tolerance::both(300),
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        let raw = secret.expose();
        let encoded = match self.0 {
            Flavor::Supabase => raw.strip_prefix("v1,whsec_").or(raw.strip_prefix("whsec_")),
            _ => raw.strip_prefix("whsec_"),
        }
        .unwrap_or(raw);
        let fail = |why: String| KeyError {
            detail: format!("the secret must be `whsec_` followed by standard base64: {why}"),
        };
        let key = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| {
                let hint = if raw.starts_with("v1,whsec_") {
                    "; `v1,whsec_…` is how Supabase shows it: remove the leading `v1,`"
                } else if !encoded.contains('=') && encoded.len() % 4 != 0 {
                    "; it looks unpadded: add `=` padding (the Rust SDKs require it)"
                } else {
                    ""
                };
                fail(format!("{e}{hint}"))
            })?;
        if key.is_empty() {
            return Err(fail("it is empty".into()));
        }
        Ok(key)
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let (id, _) = required_header_any(req, self.0.names(&ID))?;
        let (ts_text, ts_header) = required_header_any(req, self.0.names(&TIMESTAMP))?;
        let (entries, sig_header) = required_header_any(req, self.0.names(&SIGNATURE))?;
        let timestamp = parse_unix_secs(&ts_header, ts_text)?;
        let mut other_versions = Vec::new();
        let mut candidates = Vec::new();
        for entry in entries.split_ascii_whitespace() {
            match entry.split_once(',') {
                Some(("v1", sig)) => candidates.push(sig),
                Some((version, _)) if other_versions.len() < 5 => {
                    other_versions.push(shorten(version))
                }
                _ => {}
            }
        }
        if candidates.is_empty() {
            let found = match other_versions.is_empty() {
                true => String::new(),
                false => format!(" (found only {}, not checked)", other_versions.join(", ")),
            };
            return Err(CheckError::MalformedHeader {
                header: sig_header,
                detail: format!("no `v1,<base64>` entry{found}"),
            });
        }
        let expected = digest(key, id, ts_text, &req.body);
        let matched = any_matches(&sig_header, Encoding::Base64, &candidates, &expected)?;
        Ok(Check {
            matched,
            timestamp: Some(timestamp),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let id = input
            .id
            .map_or_else(|| id_from_body("msg_", input.body), str::to_string);
        let ts = input.now.as_secs().to_string();
        let sig = Encoding::Base64.encode(&digest(key, &id, &ts, input.body));
        let name = |both: &'static [&'static str; 2]| self.0.names(both)[0].to_string();
        Ok(Signed {
            headers: vec![
                (name(&ID), id),
                (name(&TIMESTAMP), ts),
                (name(&SIGNATURE), format!("v1,{sig}")),
            ],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let event_id = self.0.names(&ID).iter().find_map(|n| header_string(req, n));
        let body = json_body(req).unwrap_or_default();
        Metadata {
            event_id,
            event_type: json_str(&body, "/type"),
            object_id: json_str(&body, "/data/id"),
            provider_time: json_time(&body, "/timestamp").or(json_time(&body, "/created_at")),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_round_trip, request, run_vectors};
    use super::*;
    use crate::clock::UnixMillis;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const BODY: &[u8] =
        br#"{"type":"user.created","timestamp":"2023-11-14T22:13:20Z","data":{"id":"user_1"}}"#;
    const ALL: [Flavor; 5] = [
        Flavor::Standard,
        Flavor::Svix,
        Flavor::Clerk,
        Flavor::Resend,
        Flavor::Supabase,
    ];

    fn key() -> Vec<u8> {
        StandardWebhooks(Flavor::Standard)
            .key(&Secret::new(SECRET))
            .unwrap()
    }

    fn headers<'a>(sig: &'a str, ts: &'a str) -> Vec<(&'static str, &'a str)> {
        vec![
            ("webhook-id", "msg_1"),
            ("webhook-timestamp", ts),
            ("webhook-signature", sig),
        ]
    }

    #[test]
    fn fixture_vectors() {
        let runs = [
            ("standard-webhooks", Flavor::Standard, 7),
            ("svix", Flavor::Svix, 2),
            ("clerk", Flavor::Clerk, 1),
            ("resend", Flavor::Resend, 1),
            ("supabase", Flavor::Supabase, 1),
        ];
        for (id, flavor, n) in runs {
            assert_eq!(
                run_vectors(id, &StandardWebhooks(flavor)),
                n,
                "{id} vectors ran"
            );
        }
    }

    #[test]
    fn sign_check_round_trip_and_tampering_for_every_flavor() {
        for flavor in ALL {
            let scheme = StandardWebhooks(flavor);
            let sig_header = scheme.0.names(&SIGNATURE)[0];
            let secret = match flavor {
                Flavor::Supabase => format!("v1,{SECRET}"),
                _ => SECRET.to_string(),
            };
            assert_round_trip(&scheme, &secret, BODY, sig_header);
        }
    }

    #[test]
    fn branded_flavors_read_svix_then_webhook_headers() {
        let ts = "1700000000";
        let sig = format!(
            "v1,{}",
            Encoding::Base64.encode(&digest(&key(), "msg_1", ts, BODY))
        );
        let unbranded = request(&headers(&sig, ts), BODY);
        let svix = StandardWebhooks(Flavor::Svix);
        assert!(
            svix.check(&unbranded, &key()).unwrap().matched,
            "webhook-* fallback"
        );

        let branded: Vec<_> = headers(&sig, ts)
            .into_iter()
            .map(|(n, v)| (n.replace("webhook-", "svix-"), v))
            .collect();
        let branded = RawRequest::post("/", branded, BODY.to_vec());
        assert_eq!(
            StandardWebhooks(Flavor::Standard).check(&branded, &key()),
            Err(CheckError::MissingHeader {
                header: "webhook-id".into()
            }),
            "the standard library reads webhook-* only"
        );
    }

    #[test]
    fn any_v1_entry_matches_and_other_versions_are_ignored() {
        let ts = "1700000000";
        let good = Encoding::Base64.encode(&digest(&key(), "msg_1", ts, BODY));
        let scheme = StandardWebhooks(Flavor::Standard);
        let list = format!("v1a,{good}  v1,AAAA v1,{good} v2,{good} v1,");
        let check = scheme
            .check(&request(&headers(&list, ts), BODY), &key())
            .unwrap();
        assert!(check.matched, "one good v1 among bogus ones is enough");
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_700_000_000)));

        let only_v1a = format!("v1a,{good}");
        match scheme.check(&request(&headers(&only_v1a, ts), BODY), &key()) {
            Err(CheckError::MalformedHeader { detail, .. }) => assert!(detail.contains("v1a")),
            other => panic!("an Ed25519-only header cannot be checked here: {other:?}"),
        }
    }

    #[test]
    fn malformed_timestamps_and_missing_headers() {
        let scheme = StandardWebhooks(Flavor::Standard);
        for ts in ["-1", "1.5", "1e9", "abc", "+5", "99999999999999999999"] {
            let result = scheme.check(&request(&headers("v1,AAAA", ts), BODY), &key());
            assert!(
                matches!(result, Err(CheckError::MalformedHeader { ref header, .. }) if header == "webhook-timestamp"),
                "timestamp {ts:?}: {result:?}"
            );
        }
        let mut h = headers("v1,AAAA", "1");
        h.remove(0);
        assert_eq!(
            scheme.check(&request(&h, BODY), &key()),
            Err(CheckError::MissingHeader {
                header: "webhook-id".into()
            })
        );
    }

    #[test]
    fn key_derivation_is_strict_and_explains_itself() {
        let std = StandardWebhooks(Flavor::Standard);
        let bare = std
            .key(&Secret::new("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
            .unwrap();
        assert_eq!(bare, key(), "the whsec_ prefix is optional");
        let err = |s: &str| std.key(&Secret::new(s)).unwrap_err().detail;
        assert!(err("whsec_").contains("empty"));
        assert!(err("whsec_dGVzdA").contains("unpadded"), "strict padding");
        assert!(err("v1,whsec_dGVzdA==").contains("Supabase"));
        assert!(
            err("whsec_test_secret").contains("base64"),
            "a Stripe secret"
        );
        let supabase = StandardWebhooks(Flavor::Supabase);
        assert_eq!(
            supabase.key(&Secret::new(format!("v1,{SECRET}"))).unwrap(),
            key()
        );
        assert_eq!(supabase.key(&Secret::new(SECRET)).unwrap(), key());
    }

    #[test]
    fn metadata_uses_the_message_id() {
        let req = request(&[("svix-id", "msg_9"), ("webhook-id", "msg_other")], BODY);
        let m = StandardWebhooks(Flavor::Clerk).metadata(&req);
        assert_eq!(m.event_id.as_deref(), Some("msg_9"), "svix-id first");
        assert_eq!(m.idempotency_key.as_deref(), Some("msg_9"));
        assert_eq!(m.event_type.as_deref(), Some("user.created"));
        assert_eq!(m.object_id.as_deref(), Some("user_1"));
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_700_000_000)));
        let m = StandardWebhooks(Flavor::Standard).metadata(&request(&[], b"not json"));
        assert_eq!(m, Metadata::default());
    }
}
