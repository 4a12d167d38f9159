//! Imported requests (`hooklab import`, `POST /api/import`) through the receiver's own
//! pipeline: the same judgement (verification, metadata, idempotency key), commit, state
//! machines and events as a request from the socket, without the socket. The delivery's
//! remote address says where it came from (`import:har`, `import:curl`…).

use super::Receiver;
use super::handler::{Arrival, Machines, commit, first_segment};
use super::judge::Received;
use super::url::signed_urls;
use hooklab_core::request::RawRequest;
use hooklab_core::store::{DeliveryId, KeyOutcome};
use hooklab_core::verdict::Status;
use serde::Serialize;

/// What became of one imported request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Ingested {
    pub id: DeliveryId,
    pub source: String,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub verdict: Status,
    /// Why it is not valid (`signature_mismatch`, `no_secret`…).
    pub reason: Option<String>,
    /// The verdict in one line.
    pub summary: String,
    /// The status the receiver would have answered.
    pub status: u16,
    /// What claiming its idempotency key found (`None`: it claimed none).
    pub key: Option<KeyOutcome>,
}

/// The store failed: nothing was recorded.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the delivery could not be recorded (storage failed; see the log)")]
pub struct IngestError;

impl Receiver {
    /// Records `raw` as a delivery of `source` (`None`: the path's first segment, as the
    /// receiver does), verified against `raw.url` when it is set (the URL the capture says it
    /// was sent to) with the receiver's own URLs as alternatives. `origin` is kept as its
    /// remote address.
    pub async fn ingest(
        &self,
        source: Option<&str>,
        mut raw: RawRequest,
        origin: &str,
    ) -> Result<Ingested, IngestError> {
        let received_at = self.0.clock.now();
        let source_name =
            source.map_or_else(|| first_segment(&raw.path).to_string(), str::to_string);
        let configured = self.source(&source_name);
        let received = configured
            .clone()
            .map_or(Received::UnknownSource, Received::Complete);
        let fallback_host = self
            .0
            .local_addr
            .map_or_else(|| "localhost".to_string(), |a| a.to_string());
        let host = raw.header_str("host").map(str::to_string);
        let urls = signed_urls(
            self.0.public_url.as_deref(),
            &raw,
            host.as_deref(),
            &fallback_host,
        );
        let mut alternatives = urls.alternatives;
        match raw.url.take() {
            Some(captured) => {
                if captured != urls.primary {
                    alternatives.insert(0, urls.primary);
                }
                alternatives.retain(|u| *u != captured);
                raw.url = Some(captured);
            }
            None => raw.url = Some(urls.primary),
        }
        let body_size = raw.body.len() as u64;
        let (method, path, query) = (raw.method.clone(), raw.path.clone(), raw.query.clone());
        let arrival = Arrival {
            received_at,
            source_name: source_name.clone(),
            source: configured,
            received,
            body_size,
            body_refused: false,
            remote_addr: Some(origin.to_string()),
        };
        let committed = commit(self, arrival, raw, alternatives, Machines::Awaited)
            .await
            .ok_or(IngestError)?;
        Ok(Ingested {
            id: committed.recorded.id,
            source: source_name,
            method,
            path,
            query,
            verdict: committed.verdict.verdict,
            reason: committed.verdict.reason.map(|r| r.as_str().to_string()),
            summary: committed.verdict.summary,
            status: committed.status.as_u16(),
            key: committed.recorded.key,
        })
    }
}
