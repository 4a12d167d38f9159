//! Hooklab's JSON deliveries: what `hooklab events show ID --json` prints, and an array of
//! them from `hooklab export --format json`. Header values and the body are a string when they
//! are UTF-8 and `{"base64": …}` otherwise, so nothing is lost; headers are `[name, value]`
//! pairs in arrival order, duplicates kept.

use super::CaptureError;
use crate::request::{Header, RawRequest};
use crate::store::Delivery;
use base64::Engine as _;
use serde_json::{Value, json};

/// Bytes as JSON: the text when UTF-8, else `{"base64": …}`.
pub fn bytes_value(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::String(text.to_string()),
        Err(_) => json!({ "base64": base64::engine::general_purpose::STANDARD.encode(bytes) }),
    }
}

/// One delivery as JSON (the shape of `hooklab events show --json`, without its attempts).
pub fn delivery_value(d: &Delivery) -> Value {
    let r = &d.record;
    json!({
        "id": d.id,
        "received_at": r.received_at.to_rfc3339(),
        "source": r.source,
        "provider": r.provider,
        "method": r.method,
        "path": r.path,
        "query": r.query,
        "remote_addr": r.remote_addr,
        "headers": r.headers.iter().map(|h| json!([h.name, bytes_value(&h.value)])).collect::<Vec<_>>(),
        "body": bytes_value(&r.body),
        "body_size": r.body_size,
        "body_refused": r.body_refused,
        "verdict": r.verdict,
        "metadata": r.metadata,
        "status": r.response_status,
        "duplicate_of": d.duplicate_of,
    })
}

/// The deliveries as a JSON array (pretty, with a final newline).
pub fn export(deliveries: &[Delivery]) -> Vec<u8> {
    let values: Vec<Value> = deliveries.iter().map(delivery_value).collect();
    let mut out = serde_json::to_vec_pretty(&values).unwrap_or_else(|_| b"[]".to_vec());
    out.push(b'\n');
    out
}

/// Whether `value` is one delivery or an array of them.
pub(super) fn looks_like_deliveries(value: &Value) -> bool {
    let one = |v: &Value| v.get("method").is_some() && v.get("headers").is_some();
    match value {
        Value::Array(items) => items.first().is_some_and(one),
        Value::Object(_) => one(value) && value.get("path").is_some(),
        _ => false,
    }
}

/// The requests of one delivery or an array of them.
pub fn parse(bytes: &[u8]) -> Result<Vec<RawRequest>, CaptureError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| CaptureError::new("json", format!("not valid JSON: {e}")))?;
    let items = match value {
        Value::Array(items) => items,
        one @ Value::Object(_) => vec![one],
        _ => {
            return Err(CaptureError::new(
                "json",
                "expected a delivery or an array of deliveries",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            request(item).map_err(|detail| CaptureError::new(format!("delivery {}", i + 1), detail))
        })
        .collect()
}

fn request(item: &Value) -> Result<RawRequest, String> {
    let text = |name: &str| item.get(name).and_then(Value::as_str);
    if item.get("body_refused").and_then(Value::as_bool) == Some(true) {
        return Err(
            "its body was not kept (it was over the body limit), so it cannot be imported as sent"
                .into(),
        );
    }
    let method = text("method").ok_or("`method` is missing or not a string")?;
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("`method` is not an HTTP method: `{method}`"));
    }
    let (path, query, url) = match (text("path"), text("url")) {
        (Some(path), _) => (
            path.to_string(),
            item.get("query")
                .and_then(Value::as_str)
                .map(str::to_string),
            text("url").map(str::to_string),
        ),
        (None, Some(url)) => {
            let (path, query) = super::split_url(url);
            (path, query, Some(url.to_string()))
        }
        (None, None) => return Err("`path` is missing".into()),
    };
    if !path.starts_with('/') {
        return Err(format!("`path` must start with `/`: `{path}`"));
    }
    let headers = match item.get("headers") {
        Some(Value::Array(headers)) => headers
            .iter()
            .enumerate()
            .map(|(n, h)| header(h).map_err(|e| format!("header {}: {e}", n + 1)))
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("`headers` must be an array of [name, value] pairs".into()),
        None => return Err("`headers` is missing".into()),
    };
    let body = match item.get("body") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => bytes(v).map_err(|e| format!("`body`: {e}"))?,
    };
    let mut request = RawRequest {
        method: method.to_string(),
        path,
        query,
        headers,
        body,
        url,
    };
    if request.url.is_none() {
        request.url = Some(super::request_url(&request));
    }
    Ok(request)
}

fn header(value: &Value) -> Result<Header, String> {
    let (name, value) = match value {
        Value::Array(pair) if pair.len() == 2 => (&pair[0], &pair[1]),
        Value::Object(o) => (
            o.get("name").ok_or("no `name`")?,
            o.get("value").ok_or("no `value`")?,
        ),
        _ => return Err("expected [name, value]".into()),
    };
    let name = name.as_str().ok_or("the name is not a string")?;
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok(Header::new(name, bytes(value)?))
}

/// A string, or `{"base64": …}`.
fn bytes(value: &Value) -> Result<Vec<u8>, String> {
    match value {
        Value::String(text) => Ok(text.clone().into_bytes()),
        Value::Object(o) => {
            let text = o
                .get("base64")
                .and_then(Value::as_str)
                .ok_or("expected a string or {\"base64\": …}")?;
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("bad base64: {e}"))
        }
        _ => Err("expected a string or {\"base64\": …}".into()),
    }
}

/// RFC 9110 `tchar`.
pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
