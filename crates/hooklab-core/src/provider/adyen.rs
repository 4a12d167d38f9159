//! Adyen, with a **hex-decoded** HMAC key for both kinds of webhook:
//!
//! * [`Adyen`], standard (payments) notifications: the signature sits inside each item at
//!   `NotificationRequestItem.additionalData.hmacSignature`, base64 HMAC-SHA256 of
//!   `pspReference:originalReference:merchantAccountCode:merchantReference:amount.value:
//!   amount.currency:eventCode:success` (empty strings for missing fields). Every item of the
//!   batch must match.
//! * [`AdyenBalance`], Balance Platform / Management webhooks: the `HmacSignature` header is
//!   base64 HMAC-SHA256 of the raw body.

use super::common::{json_body, json_str, json_time};
use super::{
    Check, CheckError, Digest, Encoding, KeyError, ProviderId, ProviderInfo, Scheme, SignError,
    SignInput, Signed, SimpleHmac, Tolerance, ct_eq, hmac_digest,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;
use serde_json::{Value, json};

const ITEM: &str = "NotificationRequestItem";
const SIGNED_FIELDS: [&str; 8] = [
    "/pspReference",
    "/originalReference",
    "/merchantAccountCode",
    "/merchantReference",
    "/amount/value",
    "/amount/currency",
    "/eventCode",
    "/success",
];
const BALANCE: SimpleHmac = SimpleHmac {
    header: "HmacSignature",
    prefix: "",
    prefix_optional: false,
    digest: Digest::Sha256,
    encoding: Encoding::Base64,
};
const KEY_FORMAT: &str = "the HMAC key from the Customer Area, in hex (it is hex-decoded)";

pub(crate) struct Adyen;

impl Scheme for Adyen {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Adyen,
            name: "Adyen".into(),
            headers: vec![],
            algorithm: "HMAC-SHA256".into(),
            encoding: "base64".into(),
            signed_payload: "per item, in additionalData.hmacSignature: pspReference:\
                             originalReference:merchantAccountCode:merchantReference:\
                             amount.value:amount.currency:eventCode:success"
                .into(),
            secret_format: KEY_FORMAT.into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        hex_key(secret)
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let malformed = |detail: String| CheckError::MalformedBody { detail };
        let body: Value = serde_json::from_slice(&req.body).map_err(|_| {
            malformed("not JSON; Adyen signs each item of its JSON notification".into())
        })?;
        let items = body
            .get("notificationItems")
            .and_then(Value::as_array)
            .filter(|items| !items.is_empty())
            .ok_or_else(|| malformed("no `notificationItems` to verify".into()))?;
        let mut all_match = true;
        for (i, item) in items.iter().enumerate() {
            let item = item.get(ITEM).unwrap_or(item);
            let text = item
                .pointer("/additionalData/hmacSignature")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    malformed(format!(
                        "item {} has no additionalData.hmacSignature (is HMAC enabled on \
                         this webhook?)",
                        i + 1
                    ))
                })?;
            let signature = Encoding::Base64
                .decode(text)
                .ok_or_else(|| malformed(format!("item {}: hmacSignature is not base64", i + 1)))?;
            all_match &= ct_eq(&signature, &item_hmac(key, item));
        }
        Ok(Check {
            matched: all_match,
            timestamp: None,
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let fail = |detail: &str| SignError {
            detail: detail.into(),
        };
        let mut body: Value = serde_json::from_slice(input.body)
            .map_err(|_| fail("Adyen notifications are JSON with `notificationItems`"))?;
        let items = body
            .get_mut("notificationItems")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| fail("the body has no `notificationItems` list"))?;
        for item in items {
            let item = if item.get(ITEM).is_some() {
                &mut item[ITEM]
            } else {
                item
            };
            let signature = Encoding::Base64.encode(&item_hmac(key, item));
            let Some(fields) = item.as_object_mut() else {
                return Err(fail("a notification item is not an object"));
            };
            let extra = fields.entry("additionalData").or_insert_with(|| json!({}));
            let Some(extra) = extra.as_object_mut() else {
                return Err(fail("an item's additionalData is not an object"));
            };
            extra.insert("hmacSignature".into(), Value::String(signature));
        }
        let body = serde_json::to_vec(&body).map_err(|e| fail(&e.to_string()))?;
        Ok(Signed {
            body: Some(body),
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        let Some(item) = body.pointer("/notificationItems/0") else {
            return Metadata::default();
        };
        let item = item.get(ITEM).unwrap_or(item);
        let text = |p: &str| json_str(item, p).filter(|s| !s.is_empty());
        let psp = text("/pspReference");
        let code = text("/eventCode");
        let idempotency_key = psp.as_ref().map(|psp| {
            let parts = [Some(psp.clone()), code.clone(), text("/success")];
            parts.into_iter().flatten().collect::<Vec<_>>().join(":")
        });
        Metadata {
            event_id: None,
            event_type: code,
            // A modification (refund, capture) is about the payment it references.
            object_id: text("/originalReference").or(psp),
            provider_time: json_time(item, "/eventDate"),
            idempotency_key,
        }
    }
}

pub(crate) struct AdyenBalance;

impl Scheme for AdyenBalance {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::AdyenBalance,
            name: "Adyen Balance Platform".into(),
            headers: vec![BALANCE.header.into()],
            algorithm: "HMAC-SHA256".into(),
            encoding: "base64".into(),
            signed_payload: "{body}".into(),
            secret_format: KEY_FORMAT.into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        hex_key(secret)
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        BALANCE.check(req, key)
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        Ok(Signed {
            headers: vec![BALANCE.sign(input.body, key)],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        // `data.id`, or the resource object inside `data` (`data.accountHolder.id`…).
        let object = json_str(&body, "/data/id").or_else(|| {
            let data = body.get("data")?.as_object()?;
            data.values().find_map(|v| json_str(v, "/id"))
        });
        let kind = json_str(&body, "/type");
        let when =
            json_str(&body, "/data/sequenceNumber").or_else(|| json_str(&body, "/timestamp"));
        let idempotency_key = object.as_ref().map(|o| {
            let parts = [Some(o.clone()), kind.clone(), when];
            parts.into_iter().flatten().collect::<Vec<_>>().join(":")
        });
        Metadata {
            event_id: None,
            event_type: kind,
            object_id: object,
            provider_time: json_time(&body, "/timestamp"),
            idempotency_key,
        }
    }
}

fn hex_key(secret: &Secret) -> Result<Vec<u8>, KeyError> {
    match hex::decode(secret.expose().trim()) {
        Ok(key) if !key.is_empty() => Ok(key),
        _ => Err(KeyError {
            detail: "the Adyen HMAC key must be hex (e.g. 64 hex characters)".into(),
        }),
    }
}

/// The item's HMAC over its signed fields joined with `:`.
fn item_hmac(key: &[u8], item: &Value) -> Vec<u8> {
    let data = SIGNED_FIELDS
        .map(|p| json_str(item, p).unwrap_or_default())
        .join(":");
    hmac_digest(Digest::Sha256, key, &[data.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;
    use crate::clock::UnixMillis;

    const KEY_HEX: &str = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
    const BATCH: &[u8] = br#"{"live":"false","notificationItems":[
        {"NotificationRequestItem":{"amount":{"currency":"EUR","value":1130},"eventCode":"AUTHORISATION","eventDate":"2019-05-06T17:15:34.121+02:00","merchantAccountCode":"TestMerchant","merchantReference":"TestPayment-1407325143704","originalReference":"","pspReference":"7914073381342284","success":"true"}},
        {"NotificationRequestItem":{"amount":{"currency":"EUR","value":500},"eventCode":"REFUND","merchantAccountCode":"TestMerchant","merchantReference":"r2","originalReference":"7914073381342284","pspReference":"8814073381342285","success":"false"}}]}"#;

    fn key() -> Vec<u8> {
        Adyen.key(&Secret::new(KEY_HEX)).unwrap()
    }

    fn signed() -> RawRequest {
        let signed = Adyen
            .sign(&SignInput::new(BATCH, UnixMillis(0)), &key())
            .unwrap();
        RawRequest::post(
            "/adyen",
            [("Content-Type", "application/json")],
            signed.body.unwrap(),
        )
    }

    fn edit(req: &RawRequest, from: &str, to: &str) -> RawRequest {
        let mut out = req.clone();
        let text = String::from_utf8(out.body).unwrap();
        assert!(text.contains(from), "{from} is in the body");
        out.body = text.replacen(from, to, 1).into_bytes();
        out
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("adyen", &Adyen), 3);
        assert_eq!(run_vectors("adyen-balance", &AdyenBalance), 1);
    }

    #[test]
    fn round_trip_reproduces_the_docs_signature() {
        let req = signed();
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let first = &body["notificationItems"][0][ITEM]["additionalData"]["hmacSignature"];
        assert_eq!(first, "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=");
        assert!(Adyen.check(&req, &key()).unwrap().matched);
    }

    #[test]
    fn every_item_must_match() {
        let req = signed();
        let tampered = edit(&req, "\"value\":500", "\"value\":501");
        assert!(
            !Adyen.check(&tampered, &key()).unwrap().matched,
            "one bad item fails the batch"
        );
        let unsigned_field = edit(&req, "2019-05-06", "2020-05-06");
        assert!(
            Adyen.check(&unsigned_field, &key()).unwrap().matched,
            "eventDate is not signed"
        );
        let sig = edit(&req, "coqCmt", "coqCmu");
        assert!(
            !Adyen.check(&sig, &key()).unwrap().matched,
            "a changed signature char"
        );
    }

    #[test]
    fn malformed_bodies() {
        let detail = |body: &[u8]| match Adyen
            .check(&RawRequest::post("/a", [("a", "b")], body.to_vec()), &key())
        {
            Err(CheckError::MalformedBody { detail }) => detail,
            other => panic!("expected a malformed body, got {other:?}"),
        };
        assert!(detail(b"[accepted]").contains("not JSON"));
        assert!(detail(br#"{"notificationItems":[]}"#).contains("notificationItems"));
        assert!(detail(BATCH).contains("item 1 has no additionalData.hmacSignature"));
        let bad = br#"{"notificationItems":[{"NotificationRequestItem":{"additionalData":{"hmacSignature":"@@"}}}]}"#;
        assert!(detail(bad).contains("not base64"));
    }

    #[test]
    fn keys_are_hex() {
        assert!(Adyen.key(&Secret::new("not-hex")).is_err());
        assert!(AdyenBalance.key(&Secret::new("")).is_err());
        assert_eq!(
            AdyenBalance.key(&Secret::new("0aFF")).unwrap(),
            vec![0x0a, 0xff]
        );
    }

    #[test]
    fn balance_round_trip_and_tampering() {
        let body = br#"{"data":{"balancePlatform":"P","accountHolder":{"id":"AH1","status":"active"}},"environment":"test","timestamp":"2024-12-15T15:42:03+01:00","type":"balancePlatform.accountHolder.created"}"#;
        let key = AdyenBalance.key(&Secret::new(KEY_HEX)).unwrap();
        let signed = AdyenBalance
            .sign(&SignInput::new(body, UnixMillis(0)), &key)
            .unwrap();
        let req = RawRequest::post("/ab", signed.headers_as_pairs(), body.to_vec());
        assert!(AdyenBalance.check(&req, &key).unwrap().matched);
        let mut flipped = req.clone();
        flipped.body[12] ^= 1;
        assert!(!AdyenBalance.check(&flipped, &key).unwrap().matched);
        let missing = RawRequest::post("/ab", [("a", "b")], body.to_vec());
        assert!(matches!(
            AdyenBalance.check(&missing, &key),
            Err(CheckError::MissingHeader { .. })
        ));
        let m = AdyenBalance.metadata(&req);
        assert_eq!(
            m.event_type.as_deref(),
            Some("balancePlatform.accountHolder.created")
        );
        assert_eq!(m.object_id.as_deref(), Some("AH1"));
        assert_eq!(
            m.provider_time,
            UnixMillis::parse_rfc3339("2024-12-15T14:42:03Z")
        );
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("AH1:balancePlatform.accountHolder.created:2024-12-15T15:42:03+01:00")
        );
    }

    #[test]
    fn metadata_reads_the_first_item() {
        let m = Adyen.metadata(&signed());
        assert_eq!(m.event_type.as_deref(), Some("AUTHORISATION"));
        assert_eq!(m.object_id.as_deref(), Some("7914073381342284"));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("7914073381342284:AUTHORISATION:true")
        );
        assert_eq!(
            m.provider_time,
            UnixMillis::parse_rfc3339("2019-05-06T15:15:34.121Z")
        );
        assert_eq!(
            Adyen.metadata(&RawRequest::post(
                "/a",
                [("a", "b")],
                b"[accepted]".to_vec()
            )),
            Metadata::default()
        );
    }
}
