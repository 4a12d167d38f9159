//! The one handler, in pipeline order: claim the head as sent, read the body within the limit,
//! judge (verify), commit, publish, and only then answer. Nothing from the socket can make it
//! panic, and no answer ever leaves before the store has committed the delivery.

use super::body::{self, ReadBody};
use super::judge::{Received, judge};
use super::respond;
use super::tap::TapConnection;
use super::url::signed_urls;
use super::{Receiver, Source};
use crate::events::{DeliveryEvent, Event};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, request::Parts};
use axum::response::Response;
use hooklab_core::clock::UnixMillis;
use hooklab_core::request::{Header, RawRequest};
use hooklab_core::store::{
    Delivery, DeliverySummary, IdempotencyClaim, KeyStatus, NewDelivery, Recorded,
};
use hooklab_core::verdict::{Reason, Status};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub(super) async fn receive(State(rx): State<Receiver>, req: Request) -> Response {
    let received_at = rx.0.clock.now();
    let tap = req
        .extensions()
        .get::<ConnectInfo<TapConnection>>()
        .map(|c| c.0.clone());
    let remote = tap.as_ref().map(|t| t.remote).or_else(|| {
        req.extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0)
    });
    let (parts, body) = req.into_parts();
    // Claim this request's head first, before anything can return early.
    let headers = headers_as_sent(tap.as_ref(), &parts);

    let source_name = first_segment(parts.uri.path()).to_string();
    let source = rx.source(&source_name);
    let limit = rx.0.body_limit;
    let declared = body::declared_length(&parts);
    let (body, body_size, body_refused, received) = match body::read(body, declared, limit).await {
        Ok(ReadBody::Kept(bytes)) => {
            let size = bytes.len() as u64;
            let received = source
                .clone()
                .map_or(Received::UnknownSource, Received::Complete);
            (bytes, size, false, received)
        }
        Ok(ReadBody::Refused { size }) => {
            let received = match source {
                Some(_) => Received::Refused { size, limit },
                None => Received::UnknownSource,
            };
            (Vec::new(), size, true, received)
        }
        Err(e) => {
            tracing::debug!("request body could not be read; nothing to record: {e}");
            let status = StatusCode::BAD_REQUEST;
            return respond::plain(status, "the request body could not be read\n");
        }
    };

    let mut raw = RawRequest {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers,
        body,
        url: None,
    };
    let host = parts
        .uri
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| raw.header_str("host").map(str::to_string));
    let fallback_host =
        rx.0.local_addr
            .map_or_else(|| "localhost".to_string(), |a| a.to_string());
    let urls = signed_urls(
        rx.0.public_url.as_deref(),
        &raw,
        host.as_deref(),
        &fallback_host,
    );
    raw.url = Some(urls.primary);

    let arrival = Arrival {
        received_at,
        source_name,
        source: source.clone(),
        received,
        body_size,
        body_refused,
        remote_addr: remote.map(|a| a.to_string()),
    };
    let Some(committed) = commit(&rx, arrival, raw, urls.alternatives, Machines::Queued).await
    else {
        return respond::unavailable();
    };
    let status = committed.status;
    respond::after_commit(source.as_deref(), status, limit).await
}

/// A request as it arrived, before judgement.
pub(super) struct Arrival {
    pub(super) received_at: UnixMillis,
    /// The source it is recorded under (the path's first segment, or the import's choice).
    pub(super) source_name: String,
    pub(super) source: Option<Arc<Source>>,
    pub(super) received: Received,
    pub(super) body_size: u64,
    pub(super) body_refused: bool,
    pub(super) remote_addr: Option<String>,
}

/// How the state machines get a committed delivery of a source that does not forward.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Machines {
    /// Queued for the background task: the answer does not wait (the receiver).
    Queued,
    /// Applied before returning (imports, which are not in a hurry and may end right after).
    Awaited,
}

/// What a judged and committed delivery came to.
pub(super) struct Committed {
    pub(super) recorded: Recorded,
    /// What the receiver answers (or would answer).
    pub(super) status: StatusCode,
    pub(super) verdict: hooklab_core::verdict::Verdict,
}

/// The pipeline after the body: judge (verify), claim the key, commit, apply the machines,
/// publish. `None` (logged) when storage failed. The receiver and imports share it.
pub(super) async fn commit(
    rx: &Receiver,
    arrival: Arrival,
    raw: RawRequest,
    alt_urls: Vec<String>,
    machines: Machines,
) -> Option<Committed> {
    let Arrival {
        received_at,
        source_name,
        source,
        received,
        body_size,
        body_refused,
        remote_addr,
    } = arrival;
    let (judgement, raw) = judge(received, raw, received_at, alt_urls).await;
    let status = judgement.status;
    let delivery = NewDelivery {
        received_at,
        source: source_name,
        provider: source.as_ref().map(|s| s.config.provider),
        method: raw.method,
        path: raw.path,
        query: raw.query,
        headers: raw.headers,
        body: raw.body,
        body_size,
        body_refused,
        remote_addr,
        verdict: judgement.verdict,
        metadata: judgement.metadata,
        response_status: status.as_u16(),
        idempotency: None,
        enqueue: false,
    };
    let delivery = NewDelivery {
        idempotency: claim(source.as_deref(), &delivery),
        enqueue: source
            .as_deref()
            .is_some_and(|s| s.forwards && trusted(&delivery)),
        ..delivery
    };
    let verdict = delivery.verdict.clone();
    let mut event = pending_event(&delivery);
    // Sources that do not forward have their state machines applied here, after the commit;
    // forwarding sources get them from the worker once the forward succeeded.
    let for_machines = source
        .as_deref()
        .filter(|s| !s.forwards && rx.0.machines.applies_to(s.config.provider))
        .filter(|_| trusted(&delivery))
        .map(|_| delivery.clone());
    let recorded = record(rx, delivery).await?;
    if let Some(record) = for_machines.filter(|_| recorded.key.is_none_or(|k| !k.duplicate)) {
        let delivery = Delivery {
            id: recorded.id,
            record,
            duplicate_of: None,
        };
        match machines {
            Machines::Queued => apply_machines(rx, delivery),
            Machines::Awaited => {
                let now = rx.0.clock.now();
                let queued = crate::objects::queue_delivery(
                    rx.0.store.as_ref(),
                    &rx.0.machines,
                    &delivery,
                    now,
                );
                match queued.await {
                    Ok(changes) => crate::objects::announce(&rx.0.events, changes),
                    Err(e) => tracing::warn!(delivery.id, "could not apply state machines: {e}"),
                }
            }
        }
    }
    event.delivery.id = recorded.id;
    event.delivery.duplicate_of = recorded
        .key
        .filter(|k| k.duplicate)
        .map(|k| k.first_delivery);
    event.key = recorded.key;
    if let (Some(_), Some(wake)) = (recorded.job, &rx.0.jobs) {
        wake.notify_one();
    }
    // No subscriber is fine; a lagging one misses events but never blocks the receiver.
    let _ = rx.0.events.send(Event::Delivery(event));
    Some(Committed {
        recorded,
        status,
        verdict,
    })
}

/// Commits `delivery`; `None` (logged) when storage failed. The store resolves after the
/// commit (and fsync) that holds the delivery. It runs in its own task so that a client
/// hanging up now cannot cancel a half-done record.
async fn record(rx: &Receiver, delivery: NewDelivery) -> Option<Recorded> {
    let store = Arc::clone(&rx.0.store);
    let source = delivery.source.clone();
    match tokio::spawn(async move { store.record(delivery).await }).await {
        Ok(Ok(recorded)) => Some(recorded),
        Ok(Err(e)) => {
            tracing::error!(source = %source, "could not record a delivery: {e}");
            None
        }
        Err(e) => {
            tracing::error!(source = %source, "recording a delivery failed: {e}");
            None
        }
    }
}

/// Hands a committed delivery to the receiver's machine task (applied in commit order, in the
/// background: the answer does not wait). The delivery is safe either way; reconciliation
/// corrects an object that missed an event.
fn apply_machines(rx: &Receiver, delivery: Delivery) {
    if let Some(queue) = &rx.0.machine_queue {
        if queue.try_send(delivery).is_err() {
            let skipped = rx.0.machine_skipped.fetch_add(1, Ordering::Relaxed) + 1;
            if skipped.is_power_of_two() {
                tracing::warn!(
                    skipped,
                    "state machines are behind: deliveries skipped them (reconcile corrects the objects)"
                );
            }
        }
    }
}

/// The idempotency key a delivery claims: its key, scoped by provider, when the delivery can be
/// trusted (see [`trusted`]). A forged or broken signature never claims a key, so it can never
/// make the genuine event look like a duplicate. When the source forwards, the key starts as
/// `processing` and the worker completes (or fails) it; otherwise nothing processes the event
/// and the key is `completed` at once ("accepted").
fn claim(source: Option<&Source>, d: &NewDelivery) -> Option<IdempotencyClaim> {
    let source = source?;
    if !trusted(d) {
        return None;
    }
    Some(IdempotencyClaim {
        scope: source.config.provider.as_str().to_string(),
        key: d.metadata.idempotency_key.clone()?,
        status: if source.forwards {
            KeyStatus::Processing
        } else {
            KeyStatus::Completed
        },
    })
}

/// A delivery that may be acted on: a valid signature, or a source that does not verify (no
/// secret, or a route the provider does not sign), with its body kept. Only these claim a key
/// and are forwarded: a forged request never reaches the developer's app through Hooklab.
fn trusted(d: &NewDelivery) -> bool {
    let trusted = matches!(
        (d.verdict.verdict, d.verdict.reason),
        (Status::Valid, _) | (Status::Unsigned, Some(Reason::NoSecret | Reason::NotSigned))
    );
    trusted && !d.body_refused
}

/// The source name: the first path segment (empty for `/`).
pub(super) fn first_segment(path: &str) -> &str {
    path.trim_start_matches('/').split('/').next().unwrap_or("")
}

/// The head as sent (from the tap) when it is certainly this request's; otherwise hyper's
/// `HeaderMap` (lowercase names, duplicates grouped by name).
fn headers_as_sent(tap: Option<&TapConnection>, parts: &Parts) -> Vec<Header> {
    let from_map = || {
        parts
            .headers
            .iter()
            .map(|(n, v)| Header::new(n.as_str(), v.as_bytes()))
            .collect()
    };
    let Some(tap) = tap else {
        return from_map();
    };
    let target = parts.uri.to_string();
    match tap.pop_head() {
        Some(head) if head.matches(parts.method.as_str(), &target, &parts.headers) => {
            head.into_headers()
        }
        Some(_) => {
            tracing::debug!("tapped head does not match the request; using hyper's header order");
            from_map()
        }
        None => {
            tracing::debug!("no tapped head for this request; using hyper's header order");
            from_map()
        }
    }
}

/// The list row and one-line printout of a delivery about to be recorded (id set after).
fn pending_event(d: &NewDelivery) -> DeliveryEvent {
    DeliveryEvent {
        delivery: DeliverySummary {
            id: 0,
            received_at: d.received_at,
            source: d.source.clone(),
            provider: d.provider,
            method: d.method.clone(),
            path: d.path.clone(),
            query: d.query.clone(),
            verdict: d.verdict.verdict,
            reason: d.verdict.reason.map(|r| r.as_str().to_string()),
            event_id: d.metadata.event_id.clone(),
            event_type: d.metadata.event_type.clone(),
            response_status: d.response_status,
            body_size: d.body_size,
            idempotency_key: d.metadata.idempotency_key.clone(),
            duplicate_of: None,
        },
        key: None,
        verdict_summary: d.verdict.summary.clone(),
        diagnosis: d.verdict.diagnosis.as_ref().map(|x| x.message.clone()),
        body_refused: d.body_refused,
        remote_addr: d.remote_addr.clone(),
    }
}
