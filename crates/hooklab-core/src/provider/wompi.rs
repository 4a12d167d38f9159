//! Wompi events: the signature lives in the **body**. `signature.properties` lists dot-paths
//! into `data`; `signature.checksum` is hex SHA-256 (a plain hash, not an HMAC) of the values of
//! those properties, in order, then the top-level `timestamp`, then the events secret. The docs
//! print it in uppercase, so it is compared case-insensitively. The same checksum is also sent
//! as `X-Event-Checksum`; the body is authoritative and the header is read only when the body
//! has no checksum.
//!
//! There is no event id: deliveries are deduplicated on the transaction id and its status.

use super::common::{json_body, json_str, json_time, shorten};
use super::{
    Check, CheckError, ProviderId, ProviderInfo, Scheme, SignError, SignInput, Signed, Tolerance,
    ct_eq,
};
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;
use serde_json::{Value, json};
use sha2::Digest as _;

const HEADER: &str = "X-Event-Checksum";
/// What Wompi signs for `transaction.updated`, used when signing a body that names none.
const DEFAULT_PROPERTIES: [&str; 3] = [
    "transaction.id",
    "transaction.status",
    "transaction.amount_in_cents",
];

pub(crate) struct Wompi;

impl Scheme for Wompi {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Wompi,
            name: "Wompi".into(),
            headers: vec![HEADER.into()],
            algorithm: "SHA-256".into(),
            encoding: "hex (any case)".into(),
            signed_payload: "values of signature.properties (paths into data), then timestamp, \
                             then the events secret; checksum in the body's signature.checksum"
                .into(),
            secret_format: "the events secret (prod_events_… or test_events_…), verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let malformed = |detail: String| CheckError::MalformedBody { detail };
        let body: Value = serde_json::from_slice(&req.body)
            .map_err(|_| malformed("not JSON; Wompi signs fields of its JSON body".into()))?;
        let properties = properties(&body).map_err(malformed)?;
        let data = body.get("data").unwrap_or(&Value::Null);
        let mut values = Vec::with_capacity(properties.len());
        for path in &properties {
            values.push(property(data, path).map_err(malformed)?);
        }
        let ts = match body.get("timestamp") {
            Some(Value::Number(n)) if n.is_u64() => n.to_string(),
            Some(Value::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.clone()
            }
            Some(_) => return Err(malformed("`timestamp` is not whole Unix seconds".into())),
            None => return Err(malformed("no top-level `timestamp`".into())),
        };
        let (checksum, from_header) = match body.pointer("/signature/checksum") {
            Some(Value::String(s)) => (s.clone(), false),
            Some(_) => return Err(malformed("`signature.checksum` is not a string".into())),
            None => match req.header_str(HEADER) {
                Some(h) => (h.to_string(), true),
                None => return Err(malformed("no `signature.checksum`".into())),
            },
        };
        let Ok(claimed) = hex::decode(checksum.trim()) else {
            let detail = format!("checksum `{}` is not hex", shorten(&checksum));
            return Err(match from_header {
                true => CheckError::MalformedHeader {
                    header: HEADER.into(),
                    detail,
                },
                false => malformed(detail),
            });
        };
        let expected = checksum_of(&values, &ts, key);
        Ok(Check {
            matched: ct_eq(&claimed, &expected),
            timestamp: ts.parse().ok().map(UnixMillis::from_secs),
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let fail = |detail: String| SignError { detail };
        let mut body: Value = serde_json::from_slice(input.body)
            .map_err(|_| fail("Wompi events are JSON objects with a `data` field".into()))?;
        let props = properties(&body)
            .unwrap_or_else(|_| DEFAULT_PROPERTIES.iter().map(|s| s.to_string()).collect());
        let data = body.get("data").unwrap_or(&Value::Null);
        let values = props
            .iter()
            .map(|p| property(data, p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let ts = input.now.as_secs();
        let checksum = hex::encode_upper(checksum_of(&values, &ts.to_string(), key));
        let Some(obj) = body.as_object_mut() else {
            return Err(fail("Wompi events are JSON objects".into()));
        };
        obj.insert(
            "signature".into(),
            json!({"properties": props, "checksum": checksum}),
        );
        obj.insert("timestamp".into(), json!(ts));
        let body = serde_json::to_vec(&body).map_err(|e| fail(e.to_string()))?;
        Ok(Signed {
            headers: vec![(HEADER.into(), checksum)],
            body: Some(body),
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        // `data.transaction`, or the first resource object in `data` (`nequi_token`…).
        let resource = body.pointer("/data/transaction").cloned().or_else(|| {
            let data = body.get("data")?.as_object()?;
            data.values().find(|v| v.get("id").is_some()).cloned()
        });
        let id = resource.as_ref().and_then(|r| json_str(r, "/id"));
        let status = resource.as_ref().and_then(|r| json_str(r, "/status"));
        let idempotency_key = match (&id, status) {
            (Some(id), Some(status)) => Some(format!("{id}:{status}")),
            (id, _) => id.clone(),
        };
        Metadata {
            event_id: None,
            event_type: json_str(&body, "/event"),
            object_id: id,
            provider_time: json_time(&body, "/timestamp").or_else(|| json_time(&body, "/sent_at")),
            idempotency_key,
        }
    }
}

/// `signature.properties` as strings.
fn properties(body: &Value) -> Result<Vec<String>, String> {
    let list = body
        .pointer("/signature/properties")
        .and_then(Value::as_array)
        .ok_or("no `signature.properties` list")?;
    list.iter()
        .map(|p| p.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "`signature.properties` holds a non-string".to_string())
}

/// The text of the value at dot-path `path` inside `data`.
fn property(data: &Value, path: &str) -> Result<String, String> {
    let value = path.split('.').try_fold(data, |v, seg| v.get(seg));
    match value {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(_) => Err(format!(
            "`data.{}` is not a string, number or boolean",
            shorten(path)
        )),
        None => Err(format!(
            "signed property `data.{}` is missing",
            shorten(path)
        )),
    }
}

fn checksum_of(values: &[String], ts: &str, key: &[u8]) -> Vec<u8> {
    let mut hash = sha2::Sha256::new();
    for v in values {
        hash.update(v.as_bytes());
    }
    hash.update(ts.as_bytes());
    hash.update(key);
    hash.finalize().to_vec()
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;

    const SECRET: &[u8] = b"prod_events_OcHnIzeBl5socpwByQ4hA52Em3USQ93Z";
    const EVENT: &[u8] = br#"{"event":"transaction.updated","data":{"transaction":{"id":"1234-1610641025-49201","amount_in_cents":4490000,"reference":"MZQ3X2DE2SMX","currency":"COP","status":"APPROVED"}},"environment":"prod","sent_at":"2018-07-20T16:45:05.000Z"}"#;

    fn signed() -> RawRequest {
        let signed = Wompi
            .sign(
                &SignInput::new(EVENT, UnixMillis::from_secs(1_530_291_411)),
                SECRET,
            )
            .unwrap();
        RawRequest::post("/wompi", signed.headers_as_pairs(), signed.body.unwrap())
    }

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("wompi", &Wompi), 2);
    }

    #[test]
    fn round_trip_reproduces_the_recomputed_docs_checksum() {
        let req = signed();
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        assert_eq!(
            body["signature"]["checksum"],
            "5A18EC5E8FDB7DF463E9F94774CBA8F583BA21BD04A09CEFF2EA68A4BC0AEFBE"
        );
        let check = Wompi.check(&req, SECRET).unwrap();
        assert!(check.matched);
        assert_eq!(check.timestamp, Some(UnixMillis::from_secs(1_530_291_411)));
    }

    #[test]
    fn tampering_is_detected() {
        let req = signed();
        let text = String::from_utf8(req.body.clone()).unwrap();
        let mut amount = req.clone();
        amount.body = text.replace("4490000", "4490001").into_bytes();
        assert!(
            !Wompi.check(&amount, SECRET).unwrap().matched,
            "a signed value changed"
        );
        let mut ts = req.clone();
        ts.body = text.replace("1530291411", "1530291412").into_bytes();
        assert!(
            !Wompi.check(&ts, SECRET).unwrap().matched,
            "the timestamp is signed"
        );
        let mut sig = req.clone();
        sig.body = text.replace("5A18EC", "5A18ED").into_bytes();
        assert!(
            !Wompi.check(&sig, SECRET).unwrap().matched,
            "a changed checksum char"
        );
        let mut lower = req;
        lower.body = text
            .replace("5A18EC5E8FDB7DF4", "5a18ec5e8fdb7df4")
            .into_bytes();
        assert!(
            Wompi.check(&lower, SECRET).unwrap().matched,
            "case does not matter"
        );
    }

    #[test]
    fn header_checksum_is_a_fallback_only() {
        let mut body: Value = serde_json::from_slice(&signed().body).unwrap();
        let checksum = body["signature"]["checksum"].as_str().unwrap().to_string();
        body["signature"]
            .as_object_mut()
            .unwrap()
            .remove("checksum");
        let bytes = serde_json::to_vec(&body).unwrap();
        let req = RawRequest::post("/w", [(HEADER, checksum.as_str())], bytes.clone());
        assert!(Wompi.check(&req, SECRET).unwrap().matched);
        let bad = RawRequest::post("/w", [(HEADER, "xyz")], bytes);
        assert!(matches!(
            Wompi.check(&bad, SECRET),
            Err(CheckError::MalformedHeader { .. })
        ));
    }

    #[test]
    fn malformed_bodies() {
        let detail = |body: &str| match Wompi
            .check(&RawRequest::post("/w", [("a", "b")], body.into()), SECRET)
        {
            Err(CheckError::MalformedBody { detail }) => detail,
            other => panic!("expected a malformed body for {body}, got {other:?}"),
        };
        assert!(detail("<xml/>").contains("not JSON"));
        assert!(detail("{}").contains("signature.properties"));
        assert!(
            detail(r#"{"signature":{"properties":["t.id"]},"timestamp":1}"#).contains("missing")
        );
        assert!(detail(r#"{"signature":{"properties":[]},"timestamp":-1}"#).contains("timestamp"));
        assert!(detail(r#"{"signature":{"properties":[]},"timestamp":1}"#).contains("checksum"));
        assert!(
            detail(r#"{"signature":{"properties":[],"checksum":"zz"},"timestamp":1}"#)
                .contains("hex")
        );
        assert!(
            Wompi
                .sign(&SignInput::new(b"[]", UnixMillis(0)), SECRET)
                .is_err()
        );
    }

    #[test]
    fn metadata_is_resource_based() {
        let m = Wompi.metadata(&signed());
        assert_eq!(m.event_id, None, "Wompi has no event id");
        assert_eq!(m.event_type.as_deref(), Some("transaction.updated"));
        assert_eq!(m.object_id.as_deref(), Some("1234-1610641025-49201"));
        assert_eq!(
            m.idempotency_key.as_deref(),
            Some("1234-1610641025-49201:APPROVED")
        );
        assert_eq!(m.provider_time, Some(UnixMillis::from_secs(1_530_291_411)));
        let nequi = br#"{"event":"nequi_token.updated","data":{"nequi_token":{"id":"nequi_1","status":"APPROVED"}},"sent_at":"2018-07-20T16:45:05.000Z"}"#;
        let m = Wompi.metadata(&RawRequest::post("/w", [("a", "b")], nequi.to_vec()));
        assert_eq!(m.idempotency_key.as_deref(), Some("nequi_1:APPROVED"));
        assert_eq!(
            m.provider_time,
            UnixMillis::parse_rfc3339("2018-07-20T16:45:05Z")
        );
    }
}
