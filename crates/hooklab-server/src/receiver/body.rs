//! Reading a request body within the limit: refused up front when `Content-Length` says it is
//! too large, or as soon as the streamed bytes pass the limit. Bodies are never re-encoded.

use axum::body::Body;
use axum::http::{header, request::Parts};
use http_body_util::BodyExt;

/// The most memory reserved up front on the word of a client's `Content-Length`.
const MAX_PREALLOC: usize = 1024 * 1024;

pub(super) enum ReadBody {
    /// Every byte received, in order.
    Kept(Vec<u8>),
    /// Over the limit: `size` is the declared length, or the bytes seen before stopping.
    Refused { size: u64 },
}

/// The body length the client declared (hyper already refused invalid or conflicting values).
pub(super) fn declared_length(parts: &Parts) -> Option<u64> {
    if parts.headers.contains_key(header::TRANSFER_ENCODING) {
        return None;
    }
    parts
        .headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Reads at most `limit` bytes (inclusive). An error means the client broke off or sent bad
/// framing: there is no complete request to record.
pub(super) async fn read(
    mut body: Body,
    declared: Option<u64>,
    limit: u64,
) -> Result<ReadBody, axum::Error> {
    if let Some(size) = declared.filter(|&n| n > limit) {
        return Ok(ReadBody::Refused { size });
    }
    let reserve = declared.map_or(0, |n| usize::try_from(n).unwrap_or(0).min(MAX_PREALLOC));
    let mut kept = Vec::with_capacity(reserve);
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue; // trailers: not part of the body
        };
        let seen = kept.len() as u64 + data.len() as u64;
        if seen > limit {
            return Ok(ReadBody::Refused { size: seen });
        }
        kept.extend_from_slice(&data);
    }
    Ok(ReadBody::Kept(kept))
}
