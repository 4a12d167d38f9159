//! HAR 1.2 (HTTP Archive): every entry's request, from Chrome's or Firefox's DevTools ("Save
//! all as HAR") or Hooklab's own export.
//!
//! Reading: `request.method`, `request.url` (its raw query is kept as written), the headers in
//! order (HTTP/2 pseudo-headers such as `:authority` are dropped), and `postData.text`, decoded
//! from base64 when `postData.encoding` is `base64`. HAR text is a JSON string, so a body that
//! is not UTF-8 only survives in base64: Hooklab writes it that way.
//!
//! Writing: one entry per delivery, headers in arrival order, the body as text when it is
//! UTF-8 and as base64 with `"encoding": "base64"` otherwise. A header value that is not UTF-8
//! is written lossily in `value` and exactly in `_base64` (HAR allows `_`-prefixed custom
//! fields), which the reader prefers.

use super::CaptureError;
use crate::request::{Header, RawRequest};
use crate::store::Delivery;
use base64::Engine as _;
use serde_json::{Value, json};

/// The deliveries as a HAR 1.2 log.
pub fn export(deliveries: &[Delivery]) -> Vec<u8> {
    let entries: Vec<Value> = deliveries.iter().map(entry).collect();
    let log = json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "Hooklab", "version": env!("CARGO_PKG_VERSION")},
            "entries": entries,
        }
    });
    let mut out = serde_json::to_vec_pretty(&log).unwrap_or_default();
    out.push(b'\n');
    out
}

fn entry(d: &Delivery) -> Value {
    let r = &d.record;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let headers: Vec<Value> = r
        .headers
        .iter()
        .map(|h| match h.value_str() {
            Some(text) => json!({"name": h.name, "value": text}),
            None => json!({
                "name": h.name,
                "value": String::from_utf8_lossy(&h.value),
                "_base64": b64(&h.value),
            }),
        })
        .collect();
    let query: Vec<Value> = crate::request::parse_form(r.query.as_deref().unwrap_or("").as_bytes())
        .into_iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    let mut request = json!({
        "method": r.method,
        "url": super::request_of(d).url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers,
        "queryString": query,
        "headersSize": -1,
        "bodySize": r.body.len(),
    });
    if !r.body.is_empty() {
        let mime = r
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| String::from_utf8_lossy(&h.value).into_owned())
            .unwrap_or_default();
        request["postData"] = match std::str::from_utf8(&r.body) {
            Ok(text) => json!({"mimeType": mime, "text": text}),
            Err(_) => json!({"mimeType": mime, "text": b64(&r.body), "encoding": "base64"}),
        };
    }
    let mut comment = format!(
        "Hooklab delivery #{} (source {}): {}",
        d.id,
        r.source,
        r.verdict.verdict.as_str()
    );
    if r.body_refused {
        comment.push_str(&format!(
            "; its body of {} bytes was over the limit and not kept",
            r.body_size
        ));
    }
    json!({
        "startedDateTime": r.received_at.to_rfc3339(),
        "time": 0,
        "request": request,
        "response": {
            "status": r.response_status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [],
            "content": {"size": 0, "mimeType": ""},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
        "comment": comment,
        "_hooklab": {"id": d.id, "source": r.source, "bodyRefused": r.body_refused},
    })
}

/// Every entry's request, in order.
pub fn parse(bytes: &[u8]) -> Result<Vec<RawRequest>, CaptureError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| CaptureError::new("HAR", format!("not valid JSON: {e}")))?;
    let entries = value
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .ok_or_else(|| CaptureError::new("HAR", "no `log.entries` array"))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            request(e).map_err(|detail| CaptureError::new(format!("HAR entry {}", i + 1), detail))
        })
        .collect()
}

fn request(entry: &Value) -> Result<RawRequest, String> {
    if entry
        .pointer("/_hooklab/bodyRefused")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Err(
            "its body was not kept (it was over the body limit), so it cannot be imported as sent"
                .into(),
        );
    }
    let request = entry.get("request").ok_or("no `request`")?;
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .ok_or("request has no `method`")?;
    if method.is_empty() || !method.bytes().all(super::json::is_token_byte) {
        return Err(format!("`{method}` is not an HTTP method"));
    }
    let url = request
        .get("url")
        .and_then(Value::as_str)
        .ok_or("request has no `url`")?;
    let (path, query) = super::split_url(url);
    let headers = match request.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(headers)) => headers
            .iter()
            .enumerate()
            .filter_map(|(n, h)| {
                header(h)
                    .map_err(|e| format!("header {}: {e}", n + 1))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("`headers` is not an array".into()),
    };
    let body = match request.get("postData") {
        None | Some(Value::Null) => Vec::new(),
        Some(post) => post_data(post)?,
    };
    Ok(RawRequest {
        method: method.to_string(),
        path,
        query,
        headers,
        body,
        url: Some(url.to_string()),
    })
}

/// A header, or `None` for an HTTP/2 pseudo-header (`:authority`, `:path`…).
fn header(value: &Value) -> Result<Option<Header>, String> {
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or("no `name`")?;
    if name.starts_with(':') {
        return Ok(None);
    }
    if name.is_empty() || !name.bytes().all(super::json::is_token_byte) {
        return Err(format!("`{name}` is not a header name"));
    }
    let bytes = match value.get("_base64").and_then(Value::as_str) {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("`{name}`: bad `_base64`: {e}"))?,
        None => value
            .get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("`{name}` has no `value`"))?
            .as_bytes()
            .to_vec(),
    };
    Ok(Some(Header::new(name, bytes)))
}

fn post_data(post: &Value) -> Result<Vec<u8>, String> {
    let Some(text) = post.get("text").and_then(Value::as_str) else {
        return Err(if post.get("params").is_some() {
            "postData has `params` but no `text`: the body as sent is not in the file".into()
        } else {
            "postData has no text".into()
        });
    };
    match post.get("encoding").and_then(Value::as_str) {
        None | Some("") => Ok(text.as_bytes().to_vec()),
        Some(enc) if enc.eq_ignore_ascii_case("base64") => {
            base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|e| format!("postData.text is not valid base64: {e}"))
        }
        Some(other) => Err(format!("postData has an unknown encoding `{other}`")),
    }
}
