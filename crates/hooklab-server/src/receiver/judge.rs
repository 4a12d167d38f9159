//! Judging a request: its verdict, its metadata, and the status it will be answered with once
//! committed. Verification is a pure function of (source, request, now); large bodies are
//! verified on the blocking pool, and a panicking provider cannot lose the delivery.

use super::Source;
use axum::http::StatusCode;
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::request::RawRequest;
use hooklab_core::verdict::{Status, Verdict};
use hooklab_core::verify::verify_with;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Bodies above this size are verified on the blocking pool rather than inline.
const INLINE_VERIFY_BYTES: usize = 256 * 1024;

pub(super) struct Judgement {
    pub(super) verdict: Verdict,
    pub(super) metadata: Metadata,
    /// What the receiver answers after the commit.
    pub(super) status: StatusCode,
}

/// What was received, before judgement.
pub(super) enum Received {
    /// No configured source has this name.
    UnknownSource,
    /// The body was over `limit` (of `size` bytes) and not kept.
    Refused { size: u64, limit: u64 },
    /// A configured source with its body.
    Complete(Arc<Source>),
}

pub(super) async fn judge(
    received: Received,
    raw: RawRequest,
    now: UnixMillis,
    alt_urls: Vec<String>,
) -> (Judgement, RawRequest) {
    let unverified = |summary: String, status| Judgement {
        verdict: Verdict::not_verified(summary),
        metadata: Metadata::default(),
        status,
    };
    match received {
        Received::UnknownSource => (
            unverified(
                "no source with this name is configured".into(),
                StatusCode::NOT_FOUND,
            ),
            raw,
        ),
        Received::Refused { size, limit } => (
            unverified(
                format!("body of {size} bytes exceeds the limit of {limit} bytes; not kept"),
                StatusCode::PAYLOAD_TOO_LARGE,
            ),
            raw,
        ),
        Received::Complete(source) => {
            let response = &source.config.response;
            let configured = StatusCode::from_u16(response.status).unwrap_or(StatusCode::OK);
            let reject = source.config.reject_invalid;
            let (verdict, metadata, raw) = verify(source, raw, now, alt_urls).await;
            let status = if reject && verdict.verdict == Status::Invalid {
                StatusCode::UNAUTHORIZED
            } else {
                configured
            };
            let judgement = Judgement {
                verdict,
                metadata,
                status,
            };
            (judgement, raw)
        }
    }
}

async fn verify(
    source: Arc<Source>,
    raw: RawRequest,
    now: UnixMillis,
    alt_urls: Vec<String>,
) -> (Verdict, Metadata, RawRequest) {
    let large = raw.body.len() > INLINE_VERIFY_BYTES;
    let raw = Arc::new(raw);
    let shared = Arc::clone(&raw);
    let run = move || verify_now(&source, &shared, now, alt_urls);
    let (verdict, metadata) = if large {
        tokio::task::spawn_blocking(run).await.unwrap_or_else(|e| {
            tracing::error!("verification task failed: {e}");
            internal_failure()
        })
    } else {
        run()
    };
    // `run` and its clone of the request are gone by now: this does not copy.
    let raw = Arc::try_unwrap(raw).unwrap_or_else(|shared| (*shared).clone());
    (verdict, metadata, raw)
}

fn verify_now(
    source: &Source,
    raw: &RawRequest,
    now: UnixMillis,
    alt_urls: Vec<String>,
) -> (Verdict, Metadata) {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut config = source.verify.clone();
        config.alt_urls = alt_urls;
        let verdict = verify_with(source.scheme.as_ref(), &config, raw, now);
        let mut metadata = source.scheme.metadata(raw).with_default_key();
        if let Some(spec) = &source.config.idempotency_key {
            metadata.idempotency_key = spec.key(raw);
        }
        (verdict, metadata)
    }))
    .unwrap_or_else(|_| {
        tracing::error!(source = %source.config.name, "verification panicked");
        internal_failure()
    })
}

fn internal_failure() -> (Verdict, Metadata) {
    (
        Verdict::not_verified(
            "verification failed inside Hooklab (a bug); the request was recorded",
        ),
        Metadata::default(),
    )
}
