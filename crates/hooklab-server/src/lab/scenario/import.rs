//! The `import` step's files, until the capture parsers (HAR, curl, provider CLIs) land in
//! `hooklab_core::capture`: Hooklab's own JSON of a delivery (`hooklab events show ID --json`,
//! or the control API's `GET /api/events/{id}`), or a raw body file.

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

/// Reads `bytes` as Hooklab's JSON of a delivery when it is one, else as a raw body.
pub(super) fn parse(bytes: &[u8]) -> Result<Captured, String> {
    let value: Option<Value> = serde_json::from_slice(bytes).ok();
    let hooklab = value
        .as_ref()
        .filter(|v| v.get("headers").is_some_and(Value::is_array))
        .filter(|v| v.get("body").is_some() || v.get("body_base64").is_some());
    match hooklab {
        Some(v) => from_hooklab(v),
        None => Ok(Captured {
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
            provider: None,
        }),
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
