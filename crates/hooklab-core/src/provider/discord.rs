//! Discord interactions and webhook events: `X-Signature-Ed25519` is the hex Ed25519 signature
//! of `X-Signature-Timestamp` + raw body, verified with the application's **public key**.
//!
//! The configured secret is therefore the public key (hex, 32 bytes). Signing needs the private
//! half: [`Scheme::signing_key`] reads a 32-byte hex seed, and `sign` notes the matching public
//! key to configure. There is no tolerance in Discord's SDK; Discord deliberately sends bad
//! signatures to test endpoints, which must answer 401.

use super::common::{json_body, json_str, json_time, required_header, shorten};
use super::{
    Check, CheckError, KeyError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed,
    Tolerance,
};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};

const SIGNATURE: &str = "X-Signature-Ed25519";
const TIMESTAMP: &str = "X-Signature-Timestamp";
/// Discord snowflakes count milliseconds from 2015-01-01T00:00:00Z.
const DISCORD_EPOCH_MS: i64 = 1_420_070_400_000;

pub(crate) struct Discord;

impl Scheme for Discord {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Discord,
            name: "Discord".into(),
            headers: vec![SIGNATURE.into(), TIMESTAMP.into()],
            algorithm: "Ed25519".into(),
            encoding: "hex".into(),
            signed_payload: "{timestamp}{body}".into(),
            secret_format: "the application's PUBLIC KEY (64 hex characters) from the developer \
                            portal; signing test events needs a 32-byte private seed in hex instead"
                .into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        let bytes = hex32(secret, "the application public key")?;
        VerifyingKey::from_bytes(&bytes).map_err(|_| KeyError {
            detail: "the application public key is not a valid Ed25519 point".into(),
        })?;
        Ok(bytes.to_vec())
    }

    fn signing_key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        hex32(secret, "the signing seed (Ed25519 private key)").map(|b| b.to_vec())
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let sig_text = required_header(req, SIGNATURE)?;
        let signature = hex::decode(sig_text)
            .ok()
            .and_then(|b| <[u8; 64]>::try_from(b).ok())
            .ok_or_else(|| CheckError::MalformedHeader {
                header: SIGNATURE.into(),
                detail: format!("`{}` is not 128 hex characters", shorten(sig_text)),
            })?;
        let ts = required_header(req, TIMESTAMP)?;
        let message = [ts.as_bytes(), &req.body].concat();
        let matched = <[u8; 32]>::try_from(key)
            .ok()
            .and_then(|k| VerifyingKey::from_bytes(&k).ok())
            .is_some_and(|vk| {
                vk.verify_strict(&message, &Signature::from_bytes(&signature))
                    .is_ok()
            });
        // The timestamp is signed as raw text; Discord sends Unix seconds.
        let timestamp = ts
            .parse::<i64>()
            .ok()
            .filter(|s| *s >= 0)
            .map(UnixMillis::from_secs);
        Ok(Check { matched, timestamp })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let seed = <[u8; 32]>::try_from(key).map_err(|_| SignError {
            detail: "Discord signs with a 32-byte Ed25519 seed".into(),
        })?;
        let signing = SigningKey::from_bytes(&seed);
        let ts = input.now.as_secs().to_string();
        let signature = signing.sign(&[ts.as_bytes(), input.body].concat());
        let public = hex::encode(signing.verifying_key().to_bytes());
        Ok(Signed {
            headers: vec![
                (SIGNATURE.into(), hex::encode(signature.to_bytes())),
                (TIMESTAMP.into(), ts),
            ],
            note: Some(format!("verify with the application public key {public}")),
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        let id = json_str(&body, "/id");
        let snowflake_time = id
            .as_deref()
            .and_then(|id| id.parse::<u64>().ok())
            .and_then(|n| i64::try_from(n >> 22).ok())
            .map(|ms| UnixMillis(ms + DISCORD_EPOCH_MS));
        // Webhook events carry `event.type`; interactions a numeric `type`.
        let event_type = json_str(&body, "/event/type").or_else(|| {
            let kind = body.get("type")?.as_u64()?;
            Some(interaction_name(kind).map_or_else(|| kind.to_string(), str::to_string))
        });
        Metadata {
            event_id: id,
            event_type,
            object_id: json_str(&body, "/data/id"),
            provider_time: json_time(&body, "/event/timestamp").or(snowflake_time),
            idempotency_key: None,
        }
        .with_default_key()
    }
}

fn interaction_name(kind: u64) -> Option<&'static str> {
    Some(match kind {
        1 => "PING",
        2 => "APPLICATION_COMMAND",
        3 => "MESSAGE_COMPONENT",
        4 => "APPLICATION_COMMAND_AUTOCOMPLETE",
        5 => "MODAL_SUBMIT",
        _ => return None,
    })
}

fn hex32(secret: &Secret, what: &str) -> Result<[u8; 32], KeyError> {
    hex::decode(secret.expose().trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| KeyError {
            detail: format!("{what} must be 64 hex characters (32 bytes)"),
        })
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;

    /// RFC 8032 TEST 1.
    const SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    const PING: &[u8] = br#"{"id":"787053080478613555","token":"ThisIsATokenFromDiscordThatIsVeryLong","type":1,"version":1}"#;

    fn signed() -> (Signed, RawRequest) {
        let key = Discord.signing_key(&Secret::new(SEED)).unwrap();
        let signed = Discord
            .sign(
                &SignInput::new(PING, UnixMillis::from_secs(1_700_000_000)),
                &key,
            )
            .unwrap();
        let req = RawRequest::post("/discord", signed.headers_as_pairs(), PING.to_vec());
        (signed, req)
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("discord", &Discord), 2);
    }

    #[test]
    fn round_trip_reproduces_the_vector() {
        let (signed, req) = signed();
        assert_eq!(
            signed.note.as_deref(),
            Some(&*format!("verify with the application public key {PUBLIC}"))
        );
        assert!(
            signed.headers[0].1.starts_with("f0bd878adcef1f6d"),
            "the vector's signature"
        );
        let key = Discord.key(&Secret::new(PUBLIC)).unwrap();
        let check = Discord.check(&req, &key).unwrap();
        assert!(check.matched);
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_700_000_000)));
    }

    #[test]
    fn tampering_is_detected() {
        let (_, req) = signed();
        let key = Discord.key(&Secret::new(PUBLIC)).unwrap();
        let mut body = req.clone();
        body.body[8] ^= 1;
        assert!(
            !Discord.check(&body, &key).unwrap().matched,
            "a flipped body byte"
        );
        let mut sig = req.clone();
        sig.headers[0].value[5] = if sig.headers[0].value[5] == b'0' {
            b'1'
        } else {
            b'0'
        };
        assert!(
            !Discord.check(&sig, &key).unwrap().matched,
            "a changed signature char"
        );
        let other = Discord
            .key(&Secret::new(
                "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            ))
            .unwrap();
        assert!(
            !Discord.check(&req, &other).unwrap().matched,
            "another application's key"
        );
    }

    #[test]
    fn keys_must_be_32_hex_bytes() {
        assert!(Discord.key(&Secret::new("d75a98")).is_err());
        assert!(Discord.key(&Secret::new("not hex at all")).is_err());
        assert!(Discord.signing_key(&Secret::new(&SEED[2..])).is_err());
    }

    #[test]
    fn unreadable_requests() {
        let key = Discord.key(&Secret::new(PUBLIC)).unwrap();
        let check =
            |h: Vec<(&str, &str)>| Discord.check(&RawRequest::post("/d", h, PING.to_vec()), &key);
        assert_eq!(
            check(vec![(TIMESTAMP, "1")]),
            Err(CheckError::MissingHeader {
                header: SIGNATURE.into()
            })
        );
        assert!(matches!(
            check(vec![(SIGNATURE, "abcd"), (TIMESTAMP, "1")]),
            Err(CheckError::MalformedHeader { .. })
        ));
        let sig = "ab".repeat(64);
        assert_eq!(
            check(vec![(SIGNATURE, &sig)]),
            Err(CheckError::MissingHeader {
                header: TIMESTAMP.into()
            })
        );
        assert!(
            !check(vec![(SIGNATURE, &sig), (TIMESTAMP, "x")])
                .unwrap()
                .matched
        );
    }

    #[test]
    fn metadata() {
        let m = Discord.metadata(&RawRequest::post("/d", [("a", "b")], PING.to_vec()));
        assert_eq!(m.event_id.as_deref(), Some("787053080478613555"));
        assert_eq!(m.event_type.as_deref(), Some("PING"));
        assert_eq!(
            m.provider_time,
            Some(UnixMillis(
                (787_053_080_478_613_555 >> 22) + DISCORD_EPOCH_MS
            ))
        );
        let event = br#"{"version":1,"application_id":"1","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2024-10-18T14:42:53.064834Z","data":{}}}"#;
        let m = Discord.metadata(&RawRequest::post("/d", [("a", "b")], event.to_vec()));
        assert_eq!(m.event_type.as_deref(), Some("APPLICATION_AUTHORIZED"));
        assert_eq!(
            m.provider_time,
            UnixMillis::parse_rfc3339("2024-10-18T14:42:53.064Z")
        );
    }
}
