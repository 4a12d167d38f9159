//! Raw HTTP/1.x requests: a request line, headers, a blank line, the body; lines end in CRLF
//! or LF. Several requests may follow one another. The body is framed as HTTP frames it:
//! `Transfer-Encoding: chunked` (decoded; trailers dropped), else `Content-Length` (exactly
//! that many bytes). With neither, a request has no body when another request follows, and
//! otherwise the rest of the file is its body (a hand-written file).
//!
//! Written as sent: the request line, every header in order, and the body framed by the
//! recorded `Content-Length` or `Transfer-Encoding: chunked` (re-chunked as one chunk); a body
//! with neither gets a `Content-Length` header at the end of the head.

use super::CaptureError;
use crate::request::{Header, RawRequest};
use crate::store::Delivery;

/// Whether `text` starts with `METHOD TARGET HTTP/…`.
pub(super) fn looks_like_request_line(text: &[u8]) -> bool {
    let line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    request_line(line.strip_suffix(b"\r").unwrap_or(line)).is_some()
}

/// `(method, target)` of a request line.
fn request_line(line: &[u8]) -> Option<(&str, &str)> {
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let valid = parts.next().is_none()
        && !method.is_empty()
        && method.bytes().all(super::json::is_token_byte)
        && !target.is_empty()
        && target.bytes().all(|b| b.is_ascii_graphic())
        && version.starts_with("HTTP/");
    valid.then_some((method, target))
}

/// Every request in `input`.
pub fn parse(input: &[u8]) -> Result<Vec<RawRequest>, CaptureError> {
    let mut requests = Vec::new();
    let mut at = 0;
    loop {
        while at < input.len() && matches!(input[at], b'\r' | b'\n' | b' ' | b'\t') {
            at += 1;
        }
        if at >= input.len() {
            break;
        }
        let n = requests.len() + 1;
        let (request, next) = one(input, at).map_err(|(line, detail)| {
            let line = input[..line.min(input.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            CaptureError::new(format!("HTTP request {n}, line {line}"), detail)
        })?;
        requests.push(request);
        at = next;
    }
    if requests.is_empty() {
        return Err(CaptureError::new("HTTP", "no request"));
    }
    Ok(requests)
}

type Failure = (usize, String);

/// The line starting at `at` (without its CR LF or LF) and where the next one starts.
fn line(input: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if at >= input.len() {
        return None;
    }
    let end = input[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(input.len(), |p| at + p);
    let text = &input[at..end];
    Some((text.strip_suffix(b"\r").unwrap_or(text), end + 1))
}

fn one(input: &[u8], start: usize) -> Result<(RawRequest, usize), Failure> {
    let (first, mut at) = line(input, start).ok_or((start, "no request line".to_string()))?;
    let (method, target) = request_line(first).ok_or_else(|| {
        (
            start,
            format!(
                "`{}` is not a request line (METHOD TARGET HTTP/1.1)",
                String::from_utf8_lossy(first)
            ),
        )
    })?;
    let mut headers = Vec::new();
    loop {
        let here = at;
        let Some((text, next)) = line(input, at) else {
            return Err((here, "the head ends without a blank line".into()));
        };
        at = next;
        if text.is_empty() {
            break;
        }
        if text[0] == b' ' || text[0] == b'\t' {
            return Err((
                here,
                "a folded header line (obsolete line folding is not accepted)".into(),
            ));
        }
        let colon = text.iter().position(|&b| b == b':').ok_or_else(|| {
            (
                here,
                format!("header line `{}` has no `:`", String::from_utf8_lossy(text)),
            )
        })?;
        let name = &text[..colon];
        if name.is_empty() || !name.iter().all(|&b| super::json::is_token_byte(b)) {
            return Err((
                here,
                format!("`{}` is not a header name", String::from_utf8_lossy(name)),
            ));
        }
        let value = text[colon + 1..].trim_ascii();
        headers.push(Header::new(String::from_utf8_lossy(name), value));
    }
    let request = RawRequest {
        method: method.to_string(),
        path: String::new(),
        query: None,
        headers,
        body: Vec::new(),
        url: None,
    };
    let (body, next) = body(input, at, &request)?;
    let (path, query) = super::split_url(target);
    let mut request = RawRequest {
        path,
        query,
        body,
        ..request
    };
    request.url = Some(if target.starts_with('/') {
        super::request_url(&request)
    } else {
        target.to_string()
    });
    Ok((request, next))
}

fn body(input: &[u8], at: usize, r: &RawRequest) -> Result<(Vec<u8>, usize), Failure> {
    let chunked = r
        .headers_named("transfer-encoding")
        .filter_map(|v| std::str::from_utf8(v).ok())
        .flat_map(|v| v.split(','))
        .last()
        .is_some_and(|coding| coding.trim().eq_ignore_ascii_case("chunked"));
    if chunked {
        return dechunk(input, at);
    }
    let lengths: Vec<&[u8]> = r.headers_named("content-length").collect();
    if let Some(first) = lengths.first() {
        if lengths.iter().any(|l| l != first) {
            return Err((at, "several different Content-Length headers".into()));
        }
        let n: usize = std::str::from_utf8(first)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                (
                    at,
                    format!(
                        "Content-Length `{}` is not a number",
                        String::from_utf8_lossy(first)
                    ),
                )
            })?;
        let available = input.len() - at.min(input.len());
        if available < n {
            return Err((
                at,
                format!("Content-Length is {n} but only {available} bytes follow the head"),
            ));
        }
        return Ok((input[at..at + n].to_vec(), at + n));
    }
    let rest = &input[at.min(input.len())..];
    let next_request = {
        let trimmed = rest.trim_ascii_start();
        !trimmed.is_empty() && looks_like_request_line(trimmed)
    };
    if next_request || rest.trim_ascii().is_empty() {
        Ok((Vec::new(), at))
    } else {
        Ok((rest.to_vec(), input.len()))
    }
}

/// A chunked body: `SIZE[;ext]` lines, each followed by SIZE bytes and a line break; a zero
/// size, then trailers up to a blank line.
fn dechunk(input: &[u8], mut at: usize) -> Result<(Vec<u8>, usize), Failure> {
    let mut body = Vec::new();
    loop {
        let here = at;
        let (size_line, next) = line(input, at).ok_or((
            here,
            "the chunked body ends without its last chunk".to_string(),
        ))?;
        let size_text = size_line
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(size_text)
            .ok()
            .filter(|s| !s.is_empty())
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| {
                (
                    here,
                    format!(
                        "`{}` is not a chunk size",
                        String::from_utf8_lossy(size_line)
                    ),
                )
            })?;
        at = next;
        if size == 0 {
            // Trailers, up to the blank line (or the end of the file).
            while let Some((text, next)) = line(input, at) {
                at = next;
                if text.is_empty() {
                    break;
                }
            }
            return Ok((body, at.min(input.len())));
        }
        if input.len().saturating_sub(at) < size {
            return Err((here, format!("a chunk of {size} bytes is cut short")));
        }
        body.extend_from_slice(&input[at..at + size]);
        at += size;
        if input[at..].starts_with(b"\r\n") {
            at += 2;
        } else if input[at..].starts_with(b"\n") {
            at += 1;
        } else {
            return Err((at, "a chunk is not followed by a line break".into()));
        }
    }
}

/// The requests one after another.
pub fn export(deliveries: &[Delivery]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in deliveries {
        out.extend_from_slice(&request_bytes(&super::request_of(d)));
    }
    out
}

/// One request as HTTP/1.1 bytes, framed (see the module's documentation).
pub fn request_bytes(r: &RawRequest) -> Vec<u8> {
    let target = match &r.query {
        Some(q) => format!("{}?{q}", r.path),
        None => r.path.clone(),
    };
    let mut out = format!("{} {target} HTTP/1.1\r\n", r.method).into_bytes();
    for h in &r.headers {
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&h.value);
        out.extend_from_slice(b"\r\n");
    }
    let chunked = r
        .headers_named("transfer-encoding")
        .any(|v| v.to_ascii_lowercase().windows(7).any(|w| w == b"chunked"));
    let has_length = r.header("content-length").is_some();
    if !chunked && !has_length && !r.body.is_empty() {
        out.extend_from_slice(format!("Content-Length: {}\r\n", r.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if chunked {
        if !r.body.is_empty() {
            out.extend_from_slice(format!("{:x}\r\n", r.body.len()).as_bytes());
            out.extend_from_slice(&r.body);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(&r.body);
    }
    out
}
