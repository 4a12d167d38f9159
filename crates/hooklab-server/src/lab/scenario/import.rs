//! The `import` step's files: Hooklab's own JSON of a delivery (`hooklab events show ID --json`,
//! or the control API's `GET /api/events/{id}`, whose `provider` is kept), anything
//! `hooklab import` reads (HAR, a curl command, a raw HTTP request, a provider's event JSON:
//! [`hooklab_core::capture`]), or else a raw body file.

use base64::Engine as _;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::Header;
use serde_json::Value;

/// A request read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Captured {
    pub(super) method: String,
    /// In the captured order.
    pub(super) headers: Vec<Header>,
    pub(super) body: Vec<u8>,
    /// The provider the capture names, when it names one.
    pub(super) provider: Option<ProviderId>,
}

/// Reads `bytes` as Hooklab's JSON of a delivery, else as a capture `hooklab import` reads
/// (one request), else as a raw body.
pub(super) fn parse(bytes: &[u8]) -> Result<Captured, String> {
    use hooklab_core::capture::{self, Capture};
    let value: Option<Value> = serde_json::from_slice(bytes).ok();
    let hooklab = value
        .as_ref()
        .filter(|v| v.get("headers").is_some_and(Value::is_array))
        .filter(|v| v.get("body").is_some() || v.get("body_base64").is_some());
    if let Some(v) = hooklab {
        return from_hooklab(v);
    }
    let raw_body = |provider| Captured {
        method: "POST".into(),
        headers: vec![Header::new(
            "Content-Type",
            if value.is_some() {
                "application/json"
            } else {
                "application/octet-stream"
            },
        )],
        body: bytes.to_vec(),
        provider,
    };
    match capture::read(bytes, None, &capture::no_files) {
        Ok((_, Capture::Requests(mut requests))) => {
            if requests.len() != 1 {
                return Err(format!(
                    "the file holds {} requests; an import step sends one",
                    requests.len()
                ));
            }
            let r = requests.remove(0);
            Ok(Captured {
                method: r.method,
                headers: r.headers,
                body: r.body,
                provider: None,
            })
        }
        Ok((_, Capture::Event { provider, .. })) => Ok(raw_body(provider)),
        Ok((_, Capture::Database)) => Err(
            "a whole-database export is not one request: import it with `hooklab import`".into(),
        ),
        // Nothing it recognises: the bytes are the body.
        Err(_) => Ok(raw_body(None)),
    }
}

fn from_hooklab(v: &Value) -> Result<Captured, String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let decode = |text: &str, what: &str| {
        engine
            .decode(text)
            .map_err(|e| format!("{what} is not base64: {e}"))
    };
    // `"text"` or `{"base64": "…"}` (the CLI), or `body_base64` (the control API).
    let bytes_of = |value: &Value, what: &str| -> Result<Vec<u8>, String> {
        match value {
            Value::String(s) => Ok(s.clone().into_bytes()),
            Value::Object(o) => match o.get("base64") {
                Some(Value::String(b)) => decode(b, what),
                _ => Err(format!("{what} is neither text nor {{\"base64\": …}}")),
            },
            _ => Err(format!("{what} is neither text nor {{\"base64\": …}}")),
        }
    };
    let body = match (v.get("body_base64"), v.get("body")) {
        (Some(Value::String(b)), _) => decode(b, "body_base64")?,
        (_, Some(body)) => bytes_of(body, "body")?,
        _ => return Err("the capture has no body".into()),
    };
    let mut headers = Vec::new();
    for (i, h) in v["headers"].as_array().into_iter().flatten().enumerate() {
        let what = format!("header {}", i + 1);
        let (name, value) = match h {
            // The CLI: `["Name", "value" | {"base64": …}]`.
            Value::Array(pair) if pair.len() == 2 => (
                pair[0].as_str().ok_or(format!("{what} has no name"))?,
                bytes_of(&pair[1], &what)?,
            ),
            // The control API: `{"name", "value", "value_base64"?}`.
            Value::Object(o) => {
                let name = o
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or(format!("{what} has no name"))?;
                let value = match (o.get("value_base64"), o.get("value")) {
                    (Some(Value::String(b)), _) => decode(b, &what)?,
                    (_, Some(Value::String(s))) => s.clone().into_bytes(),
                    _ => return Err(format!("{what} has no value")),
                };
                (name, value)
            }
            _ => {
                return Err(format!(
                    "{what} is neither [name, value] nor {{name, value}}"
                ));
            }
        };
        headers.push(Header::new(name, value));
    }
    let provider = v
        .get("provider")
        .and_then(Value::as_str)
        .and_then(|p| p.parse().ok());
    Ok(Captured {
        method: v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("POST")
            .to_string(),
        headers,
        body,
        provider,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooklab_json_from_the_cli_and_from_the_api_reads_the_same() {
        let cli = br#"{"id": 3, "provider": "stripe", "method": "POST",
            "headers": [["Stripe-Signature", "t=1,v1=a"], ["X-Bin", {"base64": "/w=="}]],
            "body": "{\"id\":\"evt_1\"}"}"#;
        let api = br#"{"id": 3, "provider": "stripe", "method": "POST",
            "headers": [{"name": "Stripe-Signature", "value": "t=1,v1=a"},
                        {"name": "X-Bin", "value": "\ufffd", "value_base64": "/w=="}],
            "body_base64": "eyJpZCI6ImV2dF8xIn0=", "body_text": "{\"id\":\"evt_1\"}"}"#;
        let a = parse(cli).unwrap();
        assert_eq!(a, parse(api).unwrap());
        assert_eq!(a.provider, Some(ProviderId::Stripe));
        assert_eq!(a.headers[1].value, vec![0xff], "bytes, not text");
        assert_eq!(a.body, br#"{"id":"evt_1"}"#);
    }

    #[test]
    fn captures_are_read_as_hooklab_import_reads_them() {
        let http = b"POST /hook HTTP/1.1\r\nHost: x\r\nX-One: 1\r\nContent-Length: 3\r\n\r\na\xffb";
        let got = parse(http).unwrap();
        assert_eq!(got.body, b"a\xffb");
        assert!(got.headers.iter().any(|h| h.name == "X-One"));
        let curl = br#"curl -X PUT http://x/hook -H 'X-Two: 2' --data-raw '{"a":1}'"#;
        let got = parse(curl).unwrap();
        assert_eq!(
            (got.method.as_str(), got.body.as_slice()),
            ("PUT", br#"{"a":1}"#.as_slice())
        );
        let stripe =
            br#"{"id":"evt_1","object":"event","type":"charge.succeeded","data":{"object":{}}}"#;
        assert_eq!(parse(stripe).unwrap().provider, Some(ProviderId::Stripe));
    }

    #[test]
    fn anything_else_is_a_raw_body_sent_byte_exact() {
        let raw = parse(br#"{"id":"evt_raw","type":"x"}"#).unwrap();
        assert_eq!(raw.body, br#"{"id":"evt_raw","type":"x"}"#);
        assert_eq!(raw.headers[0].value_str(), Some("application/json"));
        let form = parse(b"a=1&b=2").unwrap();
        assert_eq!(
            form.headers[0].value_str(),
            Some("application/octet-stream")
        );
        let bad = br#"{"headers": [["X"]], "body": "x"}"#;
        assert!(
            parse(bad).is_err(),
            "a malformed header is an error, not a panic"
        );
    }
}
