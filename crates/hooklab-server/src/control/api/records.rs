//! The recorded data: deliveries (listing, one whole, the raw body), idempotency keys,
//! objects and timelines, and the dead-letter queue.

use super::*;

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Page<T> {
    items: Vec<T>,
    /// Pass as `before` for the next (older) page; `null` on the last page.
    next_before: Option<DeliveryId>,
}

pub(super) async fn list_events(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let limit = limit(&p, 200)?;
    let verdict = match param(&p, "verdict") {
        None => None,
        Some("valid") => Some(Status::Valid),
        Some("invalid") => Some(Status::Invalid),
        Some("unsigned") => Some(Status::Unsigned),
        Some(other) => {
            return Err(Problem::bad(format!(
                "`verdict` is valid, invalid or unsigned, not `{other}`"
            )));
        }
    };
    let filter = DeliveryFilter {
        limit: Some(limit),
        source: param(&p, "source").map(str::to_string),
        verdict,
        before: number(&p, "before")?,
        event_type: param(&p, "event_type").map(str::to_string),
        duplicates_only: flag(&p, "duplicates"),
        search: param(&p, "q").map(str::to_string),
        duplicate_of: number(&p, "duplicate_of")?,
        key_status: match param(&p, "key_status") {
            None => None,
            Some(s) => Some(key_status(s)?),
        },
    };
    let items = data
        .store
        .list(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    let next_before = (items.len() == limit as usize)
        .then(|| items.last().map(|d| d.id))
        .flatten();
    ok(&Page { items, next_before })
}

/// One header as the UI shows it: the value as text (lossy) and, when it is not UTF-8, its
/// exact bytes in base64.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct HeaderView {
    name: String,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_base64: Option<String>,
}

/// One delivery, whole.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct DeliveryView {
    id: DeliveryId,
    received_at: UnixMillis,
    source: String,
    provider: Option<String>,
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<HeaderView>,
    /// The exact body bytes, base64.
    body_base64: String,
    /// The body as text, when it is UTF-8.
    body_text: Option<String>,
    body_size: u64,
    body_refused: bool,
    remote_addr: Option<String>,
    verdict: hooklab_core::verdict::Verdict,
    metadata: hooklab_core::metadata::Metadata,
    response_status: u16,
    duplicate_of: Option<DeliveryId>,
    /// This delivery's duplicates (newest first, at most 100), when it claimed its key first.
    duplicates: Vec<DeliveryId>,
    /// The delivery this one replays (its `X-Hooklab-Replay-Of` header), when it is a replay.
    replay_of: Option<DeliveryId>,
    attempts: Vec<hooklab_core::store::Attempt>,
}

pub(super) async fn show_event(data: &DataState, text: &str) -> Answer {
    use base64::Engine as _;
    let id = id(text)?;
    let delivery = load_delivery(data, id).await?;
    let attempts = data
        .store
        .attempts(id)
        .await
        .map_err(|e| Problem::store(&e))?;
    let duplicates = if delivery.duplicate_of.is_none() && r_has_key(&delivery) {
        let filter = DeliveryFilter {
            duplicate_of: Some(id),
            limit: Some(100),
            ..Default::default()
        };
        let rows = data
            .store
            .list(filter)
            .await
            .map_err(|e| Problem::store(&e))?;
        rows.into_iter().map(|d| d.id).collect()
    } else {
        Vec::new()
    };
    let r = delivery.record;
    let replay_of = r
        .headers
        .iter()
        .find(|h| {
            h.name
                .eq_ignore_ascii_case(hooklab_core::replay::REPLAY_OF_HEADER)
        })
        .and_then(|h| h.value_str()?.trim().parse().ok());
    let engine = base64::engine::general_purpose::STANDARD;
    let view = DeliveryView {
        id: delivery.id,
        received_at: r.received_at,
        source: r.source,
        provider: r.provider.map(|p| p.as_str().to_string()),
        method: r.method,
        path: r.path,
        query: r.query,
        headers: r
            .headers
            .iter()
            .map(|h| HeaderView {
                name: h.name.clone(),
                value: String::from_utf8_lossy(&h.value).into_owned(),
                value_base64: h.value_str().is_none().then(|| engine.encode(&h.value)),
            })
            .collect(),
        body_base64: engine.encode(&r.body),
        body_text: String::from_utf8(r.body).ok(),
        body_size: r.body_size,
        body_refused: r.body_refused,
        remote_addr: r.remote_addr,
        verdict: r.verdict,
        metadata: r.metadata,
        response_status: r.response_status,
        duplicate_of: delivery.duplicate_of,
        duplicates,
        replay_of,
        attempts,
    };
    ok(&view)
}

fn r_has_key(delivery: &hooklab_core::store::Delivery) -> bool {
    delivery.record.metadata.idempotency_key.is_some()
}

/// `GET /api/diff?a=ID&b=ID`: two deliveries compared byte by byte.
pub(super) async fn diff(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let mut sides = Vec::with_capacity(2);
    for name in ["a", "b"] {
        let id: DeliveryId = number(&p, name)?
            .ok_or_else(|| Problem::bad(format!("`{name}` (a delivery id) is required")))?;
        let delivery = load_delivery(data, id).await?;
        sides.push(delivery.record);
    }
    // A large body's diff takes CPU time (bounded by the diff's deadline): off the runtime.
    let diff = tokio::task::spawn_blocking(move || {
        use hooklab_core::diff::{Request, deliveries};
        deliveries(Request::of(&sides[0]), Request::of(&sides[1]))
    })
    .await
    .map_err(|e| {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the diff failed: {e}"),
        )
    })?;
    ok(&diff)
}

pub(super) async fn raw_body(data: &DataState, text: &str) -> Answer {
    let id = id(text)?;
    let delivery = load_delivery(data, id).await?;
    let mut response = Response::new(Body::from(delivery.record.body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!("attachment; filename=\"delivery-{id}.bin\""))
            .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `processing`, `completed` or `failed`.
fn key_status(text: &str) -> Result<KeyStatus, Problem> {
    match text {
        "processing" => Ok(KeyStatus::Processing),
        "completed" => Ok(KeyStatus::Completed),
        "failed" => Ok(KeyStatus::Failed),
        other => Err(Problem::bad(format!(
            "a key status is processing, completed or failed, not `{other}`"
        ))),
    }
}

pub(super) async fn list_keys(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let status = param(&p, "status").map(key_status).transpose()?;
    let filter = KeyFilter {
        limit: Some(limit(&p, 500)?),
        scope: param(&p, "scope").map(str::to_string),
        status,
        duplicates_only: flag(&p, "duplicates"),
        key: param(&p, "key").map(str::to_string),
    };
    let keys = data
        .store
        .keys(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&keys)
}

pub(super) async fn list_objects(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let filter = ObjectFilter {
        limit: Some(limit(&p, 500)?),
        machine: param(&p, "machine").map(str::to_string),
        state: param(&p, "state").map(str::to_string),
        updated_before: None,
    };
    let objects = data
        .store
        .objects(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&objects)
}

pub(super) async fn timeline(data: &DataState, object: &str) -> Answer {
    let object = decode(object);
    let rows = data
        .store
        .timeline(object.clone())
        .await
        .map_err(|e| Problem::store(&e))?;
    if rows.is_empty() {
        return Err(Problem::not_found("object"));
    }
    ok(&crate::control::openapi::Timeline {
        object,
        transitions: rows,
    })
}

pub(super) async fn list_dlq(data: &DataState, query: &str) -> Answer {
    let p = params(query);
    let filter = DeadLetterFilter {
        limit: Some(limit(&p, 500)?),
        source: param(&p, "source").map(str::to_string),
        jobs: None,
    };
    let dead = data
        .store
        .dead_letters(filter)
        .await
        .map_err(|e| Problem::store(&e))?;
    ok(&dead)
}

/// `{"jobs": [ids]}` or `{"all": true}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Selection {
    #[serde(default)]
    jobs: Option<Vec<i64>>,
    #[serde(default)]
    all: bool,
}

pub(super) async fn resolve_dlq(data: &DataState, req: Request, redrive: bool) -> Answer {
    let selection: Selection =
        read_json(req, "expected {\"jobs\": [ids]} or {\"all\": true}").await?;
    let jobs = match (selection.jobs, selection.all) {
        (Some(jobs), false) if !jobs.is_empty() => Some(jobs),
        (None, true) => None,
        _ => {
            return Err(Problem::bad(
                "name the jobs ({\"jobs\": [ids]}) or ask for all of them ({\"all\": true})",
            ));
        }
    };
    let filter = DeadLetterFilter {
        limit: None,
        source: None,
        jobs,
    };
    let now = UnixMillis::now();
    let done = if redrive {
        data.store.redrive(filter, now).await
    } else {
        data.store.discard(filter, now).await
    }
    .map_err(|e| Problem::store(&e))?;
    ok(&crate::control::openapi::Resolved {
        redriven: redrive.then_some(done),
        discarded: (!redrive).then_some(done),
    })
}
