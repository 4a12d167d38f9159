//! NOWPayments IPN: `x-nowpayments-sig` is hex HMAC-SHA512(IPN secret, canonical JSON), where
//! the canonical JSON is the body decoded, **key-sorted** and re-encoded compactly. It is not
//! over the raw body.
//!
//! NOWPayments' two samples disagree on nested objects and number formatting, so both forms
//! are tried: Node's `JSON.stringify(sortObject(body))` (recursive sort, JavaScript number
//! text, raw UTF-8), which `sign` produces, and PHP's `json_encode` after a top-level `ksort`
//! with `JSON_UNESCAPED_SLASHES` (non-ASCII written as `\uXXXX`). For a flat ASCII body they
//! are the same bytes. `serde_json` here keeps insertion order, so sorting is explicit.

use super::common::{json_body, json_str, json_time, required_header, shorten};
use super::{
    Check, CheckError, Digest, Encoding, ProviderId, ProviderInfo, Scheme, SignError, SignInput,
    Signed, Tolerance, ct_eq, hmac_digest,
};
use crate::metadata::Metadata;
use crate::request::RawRequest;
use serde::Serialize as _;
use serde_json::{Map, Value};
use std::io::{self, Write};

const HEADER: &str = "x-nowpayments-sig";

pub(crate) struct NowPayments;

impl Scheme for NowPayments {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: ProviderId::Nowpayments,
            name: "NOWPayments".into(),
            headers: vec![HEADER.into()],
            algorithm: "HMAC-SHA512".into(),
            encoding: "hex".into(),
            signed_payload:
                "the JSON body with keys sorted, re-encoded compactly (not the raw body)".into(),
            secret_format: "the IPN secret key from the dashboard, verbatim".into(),
            tolerance: Tolerance::NONE,
            signs_url: false,
        }
    }

    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError> {
        let text = required_header(req, HEADER)?;
        let claimed = Encoding::Hex
            .decode(text)
            .ok_or_else(|| CheckError::MalformedHeader {
                header: HEADER.into(),
                detail: format!("`{}` is not hex", shorten(text)),
            })?;
        let body: Value =
            serde_json::from_slice(&req.body).map_err(|_| CheckError::MalformedBody {
                detail: "not JSON; NOWPayments signs the key-sorted JSON body".into(),
            })?;
        let matched = canonical_forms(&body).iter().fold(false, |m, form| {
            m | ct_eq(&claimed, &hmac_digest(Digest::Sha512, key, &[form]))
        });
        Ok(Check {
            matched,
            timestamp: None,
        })
    }

    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError> {
        let body: Value = serde_json::from_slice(input.body).map_err(|_| SignError {
            detail: "NOWPayments signs a JSON body, and this body is not JSON".into(),
        })?;
        let form = node_form(&body);
        let sig = hex::encode(hmac_digest(Digest::Sha512, key, &[&form]));
        Ok(Signed {
            headers: vec![(HEADER.into(), sig)],
            ..Signed::default()
        })
    }

    fn metadata(&self, req: &RawRequest) -> Metadata {
        let Some(body) = json_body(req) else {
            return Metadata::default();
        };
        let object = json_str(&body, "/payment_id").or_else(|| json_str(&body, "/invoice_id"));
        let status = json_str(&body, "/payment_status");
        let idempotency_key = match (&object, &status) {
            (Some(id), Some(status)) => Some(format!("{id}:{status}")),
            (id, _) => id.clone(),
        };
        Metadata {
            event_id: None,
            event_type: status,
            object_id: object,
            provider_time: json_time(&body, "/updated_at"),
            idempotency_key,
        }
    }
}

/// The candidate signed byte strings, Node's first, without duplicates.
fn canonical_forms(body: &Value) -> Vec<Vec<u8>> {
    let node = node_form(body);
    let php = write(&sorted(body, false), PhpText);
    if php == node {
        vec![node]
    } else {
        vec![node, php]
    }
}

fn node_form(body: &Value) -> Vec<u8> {
    write(&sorted(body, true), JsNumbers)
}

/// `value` with object keys sorted: at every depth, or only at the top.
fn sorted(value: &Value, recursive: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let sort_child = |v: &Value| {
                if recursive {
                    sorted(v, true)
                } else {
                    v.clone()
                }
            };
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sort_child(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) if recursive => {
            Value::Array(items.iter().map(|v| sorted(v, true)).collect())
        }
        other => other.clone(),
    }
}

fn write<F: serde_json::ser::Formatter>(value: &Value, formatter: F) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Writing a `Value` to a `Vec` cannot fail: its keys are strings and its floats finite.
    let _ = value.serialize(&mut ser);
    out
}

/// Compact JSON with numbers as JavaScript's `Number.prototype.toString` writes them.
struct JsNumbers;

impl serde_json::ser::Formatter for JsNumbers {
    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(js_number(value).as_bytes())
    }
}

/// Compact JSON as PHP's `json_encode` writes strings by default: non-ASCII as `\uXXXX`.
struct PhpText;

impl serde_json::ser::Formatter for PhpText {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// ECMAScript Number::toString(10) for a finite double, from Rust's shortest round-trip digits.
fn js_number(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let sci = format!("{:e}", value.abs()); // e.g. `1.234e-5`, shortest digits
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1; // value = 0.digits × 10^n
    let sign = if value < 0.0 { "-" } else { "" };
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        match digits.split_at(1) {
            (d, "") => format!("{d}e{e}"),
            (d, rest) => format!("{d}.{rest}e{e}"),
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::run_vectors;
    use super::*;
    use crate::clock::UnixMillis;

    const BODY: &[u8] = br#"{"payment_id":5077125051,"payment_status":"finished","pay_amount":0.00001234,"price_amount":170,"fee":{"depositFee":0,"currency":"btc","serviceFee":1.5},"order_description":"Caf\u00e9 x 1"}"#;

    #[test]
    fn fixture_vectors() {
        assert_eq!(run_vectors("nowpayments", &NowPayments), 1);
    }

    #[test]
    fn round_trip_and_tampering() {
        let key = b"np_ipn_secret_test";
        let signed = NowPayments
            .sign(&SignInput::new(BODY, UnixMillis(0)), key)
            .unwrap();
        let req = RawRequest::post("/np", signed.headers_as_pairs(), BODY.to_vec());
        assert!(NowPayments.check(&req, key).unwrap().matched);
        let mut reordered = req.clone();
        reordered.body = br#"{"price_amount":170.0, "payment_status":"finished","payment_id":5077125051,"pay_amount":1.234e-5,"fee":{"serviceFee":1.5,"depositFee":0,"currency":"btc"},"order_description":"Caf\u00e9 x 1"}"#.to_vec();
        assert!(
            NowPayments.check(&reordered, key).unwrap().matched,
            "key order, spacing and number text are not signed"
        );
        let mut flipped = req.clone();
        flipped.body[15] ^= 1;
        assert!(
            !NowPayments.check(&flipped, key).unwrap().matched,
            "a flipped digit"
        );
        let mut sig = req;
        sig.headers[0].value[0] = if sig.headers[0].value[0] == b'0' {
            b'1'
        } else {
            b'0'
        };
        assert!(
            !NowPayments.check(&sig, key).unwrap().matched,
            "a changed signature char"
        );
    }

    #[test]
    fn node_and_php_forms() {
        let body: Value = serde_json::from_slice(BODY).unwrap();
        assert_eq!(
            String::from_utf8(node_form(&body)).unwrap(),
            concat!(
                r#"{"fee":{"currency":"btc","depositFee":0,"serviceFee":1.5},"#,
                r#""order_description":"Café x 1","pay_amount":0.00001234,"#,
                r#""payment_id":5077125051,"payment_status":"finished","price_amount":170}"#
            )
        );
        let forms = canonical_forms(&body);
        assert_eq!(
            forms.len(),
            2,
            "nested and non-ASCII bodies differ between the samples"
        );
        let php = String::from_utf8(forms[1].clone()).unwrap();
        assert!(php.starts_with(r#"{"fee":{"depositFee":0,"currency":"btc","serviceFee":1.5},"order_description":"Caf\u00e9 x 1""#), "{php}");
        let key = b"k";
        let php_sig = hex::encode(hmac_digest(Digest::Sha512, key, &[&forms[1]]));
        let req = RawRequest::post("/np", [(HEADER, php_sig)], BODY.to_vec());
        assert!(
            NowPayments.check(&req, key).unwrap().matched,
            "PHP's form verifies too"
        );
    }

    #[test]
    fn javascript_number_text() {
        let cases = [
            (170.0, "170"),
            (155.38559757, "155.38559757"),
            (0.00001234, "0.00001234"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (1.2345e22, "1.2345e+22"),
            (-0.5, "-0.5"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.0, "0"),
            (5e-324, "5e-324"),
        ];
        for (value, js) in cases {
            assert_eq!(js_number(value), js, "{value}");
        }
    }

    #[test]
    fn unreadable_requests() {
        let no_header = RawRequest::post("/np", [("a", "b")], BODY.to_vec());
        assert_eq!(
            NowPayments.check(&no_header, b"k"),
            Err(CheckError::MissingHeader {
                header: HEADER.into()
            })
        );
        let bad = RawRequest::post("/np", [(HEADER, "xyz")], BODY.to_vec());
        assert!(matches!(
            NowPayments.check(&bad, b"k"),
            Err(CheckError::MalformedHeader { .. })
        ));
        let not_json = RawRequest::post("/np", [(HEADER, "abcd")], b"payment_id=1".to_vec());
        assert!(matches!(
            NowPayments.check(&not_json, b"k"),
            Err(CheckError::MalformedBody { .. })
        ));
    }

    #[test]
    fn metadata_keys_on_payment_and_status() {
        let m = NowPayments.metadata(&RawRequest::post("/np", [("a", "b")], BODY.to_vec()));
        assert_eq!(m.object_id.as_deref(), Some("5077125051"));
        assert_eq!(m.event_type.as_deref(), Some("finished"));
        assert_eq!(m.idempotency_key.as_deref(), Some("5077125051:finished"));
        assert_eq!(
            NowPayments.metadata(&RawRequest::post("/np", [("a", "b")], vec![0xc3])),
            Metadata::default()
        );
    }
}
