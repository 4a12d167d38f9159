//! `POST /api/events/{id}/replay` (one delivery again: through this receiver, recorded and
//! linked to its original, or straight at a URL; as recorded, re-signed, a negative variant, or
//! edited) and `POST /api/sequence` (one payment's events in a classic wrong order, or recorded
//! deliveries in a composed order). Both build their requests with [`crate::lab`], the code of
//! `hooklab replay` and `hooklab sequence`.

use super::*;
use crate::config::SourceConfig;
use crate::inject::CopyResult;
use crate::lab::sequence::{self, Preset};
use crate::lab::{Outgoing, Target};
use hooklab_core::replay::Variant;
use hooklab_core::request::{Header, RawRequest};

/// A replay to send.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayRequest {
    /// `resigned` (default), `as-recorded`, `stale`, `wrong-secret`, `tampered`, `unsigned` or
    /// `other-body`.
    variant: Option<String>,
    /// Where to send it (`http://`); absent: through this receiver, so it is recorded again
    /// (linked by `X-Hooklab-Replay-Of`), verified, deduplicated and processed.
    to: Option<String>,
    /// Headers and body to send in place of the recorded ones (then `variant` is `resigned`
    /// or `as-recorded`).
    edit: Option<ReplayEdit>,
}

/// An edited request: headers in order (`[name, value]`), and the body as text.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayEdit {
    headers: Vec<(String, String)>,
    body: String,
}

/// What a replay did.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct ReplayAnswer {
    replay_of: DeliveryId,
    variant: String,
    edited: bool,
    /// Where it went.
    to: String,
    /// Through this receiver: the new delivery, its verdict and why it is not valid.
    delivery: Option<DeliveryId>,
    verdict: Option<Status>,
    reason: Option<String>,
    /// Sent to a URL: the status answered (`null`: no answer, see `error`).
    status: Option<u16>,
    latency_ms: Option<f64>,
    error: Option<String>,
}

pub(super) async fn replay(data: &DataState, id: &str, req: Request) -> Answer {
    let id = super::id(id)?;
    let wanted: ReplayRequest = read_json(
        req,
        "expected {\"variant\"?, \"to\"?, \"edit\"?: {\"headers\", \"body\"}}",
    )
    .await?;
    let variant: Variant = wanted
        .variant
        .as_deref()
        .unwrap_or("resigned")
        .parse()
        .map_err(|e: String| Problem::bad(e))?;
    if wanted.edit.is_some() && !matches!(variant, Variant::Resigned | Variant::AsRecorded) {
        return Err(Problem::bad(
            "an edited replay is `resigned` or `as-recorded`; the negative variants apply to the recorded request",
        ));
    }
    let mut delivery = load_delivery(data, id).await?;
    let edited = wanted.edit.is_some();
    if let Some(edit) = wanted.edit {
        delivery.record.headers = edit
            .headers
            .into_iter()
            .map(|(name, value)| Header::new(name, value))
            .collect();
        delivery.record.body = edit.body.into_bytes();
    }
    let source = source_of(data, &delivery.record.source);
    let (target, through_receiver) = match &wanted.to {
        Some(url) => (parse_target(url)?, false),
        None => (receiver_target(data, &delivery.record)?, true),
    };
    let outgoing = Outgoing::replay(
        &delivery,
        &source
            .as_ref()
            .map(|s| s.options.clone())
            .unwrap_or_default(),
        source.as_ref().and_then(|s| s.secrets.first()),
        variant,
        &target,
        UnixMillis::now(),
    )
    .map_err(|e| {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "cannot_sign",
            e.to_string(),
        )
    })?;
    let mut answer = ReplayAnswer {
        replay_of: id,
        variant: variant.as_str().to_string(),
        edited,
        to: target.url.clone(),
        delivery: None,
        verdict: None,
        reason: None,
        status: None,
        latency_ms: None,
        error: None,
    };
    if through_receiver {
        let ingested = ingest(data, &delivery.record.source, &outgoing, "replay").await?;
        answer.delivery = Some(ingested.id);
        answer.verdict = Some(ingested.verdict);
        answer.reason = ingested.reason;
        answer.status = Some(ingested.status);
    } else {
        let sent = send_one(&outgoing).await;
        answer.status = sent.status;
        answer.latency_ms = Some(sent.latency_ms);
        answer.error = sent.error;
    }
    ok(&answer)
}

/// A sequence to fire.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SequenceRequest {
    /// The source whose provider, secret and URL the events use.
    source: String,
    /// A classic misordering of one payment's events (made now, signed now).
    preset: Option<Preset>,
    /// Or recorded deliveries, sent in this order.
    #[serde(default)]
    deliveries: Vec<DeliveryId>,
    /// Between two sends, in milliseconds (default 200).
    delay_ms: Option<u64>,
    /// Recorded deliveries: re-signed now (default) or as recorded.
    resign: Option<bool>,
    /// Where to send (`http://`); absent: the source's URL on this receiver.
    to: Option<String>,
}

/// One request of a sequence, as sent.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct SequenceStep {
    /// 0-based, in sending order.
    position: usize,
    event_type: Option<String>,
    /// Its place in the order things happened (presets only).
    true_position: Option<usize>,
    status: Option<u16>,
    latency_ms: f64,
    error: Option<String>,
}

/// What a sequence did.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct SequenceAnswer {
    to: String,
    /// A preset's object (payment) and the state its machine must end in.
    object: Option<String>,
    final_state: Option<String>,
    sent: Vec<SequenceStep>,
}

/// The most recorded deliveries one sequence may send.
const MAX_SEQUENCE: usize = 100;

pub(super) async fn sequence(data: &DataState, req: Request) -> Answer {
    let wanted: SequenceRequest = read_json(
        req,
        "expected {\"source\", \"preset\"? or \"deliveries\"?: [ids], \"delay_ms\"?, \"to\"?}",
    )
    .await?;
    let source = source_of(data, &wanted.source).ok_or_else(|| Problem::not_found("source"))?;
    let target = match &wanted.to {
        Some(url) => parse_target(url)?,
        None => {
            let addr = data
                .receiver_addr
                .ok_or_else(|| Problem::bad("this instance has no receiver: give `to`"))?;
            parse_target(&format!("http://{addr}/{}", source.name))?
        }
    };
    let unsignable = |e: crate::lab::LabError| {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "cannot_sign",
            e.to_string(),
        )
    };
    let now = UnixMillis::now();
    let (requests, object, final_state, true_positions) =
        match (wanted.preset, wanted.deliveries.is_empty()) {
            (Some(preset), true) => {
                let seq = sequence::build(preset, source.provider, None, now, &now.0.to_string())
                    .map_err(|e| Problem::bad(e.to_string()))?;
                let requests = seq
                    .requests(&source.options, source.secrets.first(), &target, now)
                    .map_err(unsignable)?;
                let positions = seq.events.iter().map(|e| Some(e.true_position)).collect();
                (
                    requests,
                    Some(seq.object_id),
                    Some(seq.final_state.to_string()),
                    positions,
                )
            }
            (None, false) => {
                if wanted.deliveries.len() > MAX_SEQUENCE {
                    return Err(Problem::bad(format!(
                        "at most {MAX_SEQUENCE} deliveries per sequence"
                    )));
                }
                let variant = match wanted.resign.unwrap_or(true) {
                    true => Variant::Resigned,
                    false => Variant::AsRecorded,
                };
                let mut requests = Vec::with_capacity(wanted.deliveries.len());
                for &id in &wanted.deliveries {
                    let delivery = data
                        .store
                        .get(id)
                        .await
                        .map_err(|e| Problem::store(&e))?
                        .ok_or_else(|| Problem::bad(format!("no delivery #{id}")))?;
                    let own = source_of(data, &delivery.record.source);
                    let signing = own.as_ref().unwrap_or(&source);
                    requests.push(
                        Outgoing::replay(
                            &delivery,
                            &signing.options,
                            signing.secrets.first(),
                            variant,
                            &target,
                            now,
                        )
                        .map_err(unsignable)?,
                    );
                }
                let positions = vec![None; requests.len()];
                (requests, None, None, positions)
            }
            _ => return Err(Problem::bad("give either `preset` or `deliveries`")),
        };
    let delay = Duration::from_millis(wanted.delay_ms.unwrap_or(200).min(60_000));
    let results = sequence::send_in_order(&requests, delay).await;
    let sent = results
        .into_iter()
        .zip(requests.iter().zip(true_positions))
        .map(|(r, (request, true_position))| SequenceStep {
            position: r.copy,
            event_type: request.event_type.clone(),
            true_position,
            status: r.status,
            latency_ms: r.latency_ms,
            error: r.error,
        })
        .collect();
    ok(&SequenceAnswer {
        to: target.url,
        object,
        final_state,
        sent,
    })
}

fn source_of(data: &DataState, name: &str) -> Option<SourceConfig> {
    data.source_configs().into_iter().find(|s| s.name == name)
}

fn parse_target(url: &str) -> Result<Target, Problem> {
    Target::parse(url).map_err(|e| Problem::bad(e.to_string()))
}

/// This receiver's URL for `record`'s path and query.
fn receiver_target(
    data: &DataState,
    record: &hooklab_core::store::NewDelivery,
) -> Result<Target, Problem> {
    let addr = data.receiver_addr.ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "no_receiver",
            "this instance has no receiver: give `to`",
        )
    })?;
    let query = record
        .query
        .as_deref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    parse_target(&format!("http://{addr}{}{query}", record.path))
}

/// `outgoing` recorded through this receiver, as if it had arrived (same verification,
/// idempotency claim, commit and state machines).
async fn ingest(
    data: &DataState,
    source: &str,
    outgoing: &Outgoing,
    origin: &str,
) -> Result<crate::receiver::Ingested, Problem> {
    let receiver = data.receiver.as_ref().ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "no_receiver",
            "this instance has no receiver",
        )
    })?;
    let (path, query) = match outgoing.target.path.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (outgoing.target.path.clone(), None),
    };
    let mut headers = vec![Header::new("Host", outgoing.target.addr())];
    headers.extend(outgoing.headers.iter().cloned());
    headers.push(Header::new(
        "Content-Length",
        outgoing.body.len().to_string(),
    ));
    let raw = RawRequest {
        method: outgoing.method.clone(),
        path,
        query,
        headers,
        body: outgoing.body.clone(),
        url: Some(outgoing.target.url.clone()),
    };
    receiver
        .ingest(Some(source), raw, origin)
        .await
        .map_err(|e| Problem::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()))
}

/// `outgoing` sent once; its result.
async fn send_one(outgoing: &Outgoing) -> CopyResult {
    sequence::send_in_order(std::slice::from_ref(outgoing), Duration::ZERO)
        .await
        .pop()
        .unwrap_or(CopyResult {
            copy: 0,
            status: None,
            latency_ms: 0.0,
            body_sha256: None,
            error: Some("nothing was sent".into()),
        })
}
