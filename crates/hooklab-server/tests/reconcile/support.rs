//! The reconciliation tests' world: stand-ins for the providers' APIs (small axum apps on
//! 127.0.0.1:0 speaking the part of Stripe's and Mercado Pago's APIs the reconciler uses), a
//! real SQLite store in a temp dir, and deliveries recorded and moved by the real machines.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{NewDelivery, ObjectFilter, ObjectRecord, Store};
use hooklab_core::verdict::Verdict;
use hooklab_server::objects::{Machines, apply_delivery};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const STRIPE_KEY: &str = "sk_test_standin_key";
pub(crate) const MP_TOKEN: &str = "TEST-standin-token";
/// Unix seconds of the first delivery; the pass runs an hour later.
pub(crate) const T0: i64 = 1_700_000_000;
pub(crate) const AN_HOUR_LATER: UnixMillis = UnixMillis((T0 + 3600) * 1000);
pub(crate) const TEN_MINUTES: Duration = Duration::from_secs(600);

/// A provider's API, stand-in: objects by id, events newest first, and every request seen.
#[derive(Default)]
pub(crate) struct StandIn {
    key: String,
    objects: Mutex<HashMap<String, Value>>,
    pub(crate) events: Mutex<Vec<Value>>,
    seen: Mutex<Vec<(String, HeaderMap)>>,
    delay: Duration,
}

impl StandIn {
    pub(crate) async fn start(key: &str, delay: Duration) -> (String, Arc<StandIn>) {
        let state = Arc::new(StandIn {
            key: key.to_string(),
            delay,
            ..StandIn::default()
        });
        let app = axum::Router::new()
            .route("/v1/payment_intents/{id}", get(object))
            .route("/v1/payments/{id}", get(object))
            .route("/v1/events", get(events))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the stand-in");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (url, state)
    }

    pub(crate) fn put(&self, id: &str, object: Value) {
        self.objects.lock().unwrap().insert(id.to_string(), object);
    }

    pub(crate) fn requests(&self, path_prefix: &str) -> Vec<(String, HeaderMap)> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(target, _)| target.starts_with(path_prefix))
            .cloned()
            .collect()
    }

    /// Records the request; answers 401 (echoing the key, which the client must scrub) when
    /// the bearer key is wrong.
    async fn admit(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Response> {
        self.seen
            .lock()
            .unwrap()
            .push((uri.to_string(), headers.clone()));
        tokio::time::sleep(self.delay).await;
        let auth = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        match auth.strip_prefix("Bearer ") {
            Some(key) if key == self.key => Ok(()),
            other => {
                let said = format!("Invalid API Key provided: {}", other.unwrap_or(""));
                Err(answer(
                    401,
                    json!({"error": {"message": said, "type": "invalid_request_error"}}),
                ))
            }
        }
    }
}

fn answer(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).expect("a status");
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn object(
    State(api): State<Arc<StandIn>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = api.admit(&uri, &headers).await {
        return refused;
    }
    let Some(mut found) = api.objects.lock().unwrap().get(&id).cloned() else {
        return answer(
            404,
            json!({"error": {"message": format!("No such object: '{id}'")}}),
        );
    };
    // Like Stripe: `latest_charge` is an id unless expanded.
    if query.get("expand[]").map(String::as_str) != Some("latest_charge") {
        if let Some(charge_id) = found.pointer("/latest_charge/id").cloned() {
            found["latest_charge"] = charge_id;
        }
    }
    answer(200, found)
}

async fn events(
    State(api): State<Arc<StandIn>>,
    Query(query): Query<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = api.admit(&uri, &headers).await {
        return refused;
    }
    let gte: i64 = query
        .get("created[gte]")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let limit: usize = query
        .get("limit")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let all = api.events.lock().unwrap().clone();
    let listed: Vec<&Value> = all
        .iter()
        .filter(|e| e["created"].as_i64() >= Some(gte))
        .collect();
    let start = match query.get("starting_after") {
        Some(after) => match listed.iter().position(|e| e["id"] == after.as_str()) {
            Some(at) => at + 1,
            None => return answer(400, json!({"error": {"message": "no such event"}})),
        },
        None => 0,
    };
    let page: Vec<&Value> = listed.iter().skip(start).take(limit).copied().collect();
    let has_more = start + page.len() < listed.len();
    answer(
        200,
        json!({"object": "list", "url": "/v1/events", "has_more": has_more, "data": page}),
    )
}

pub(crate) async fn store() -> (tempfile::TempDir, Arc<SqliteStore>) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = SqliteStore::open(&dir.path().join("hooklab.db")).expect("open the store");
    (dir, Arc::new(store))
}

/// Records a delivery of `body` from `provider` and applies the machines to it, at its arrival.
pub(crate) async fn deliver(
    store: &SqliteStore,
    provider: ProviderId,
    body: Value,
    at: UnixMillis,
) {
    let event_id = body["id"].as_str().map(str::to_string);
    let bytes = serde_json::to_vec(&body).expect("json");
    let recorded = store
        .record(NewDelivery {
            received_at: at,
            source: provider.as_str().to_string(),
            provider: Some(provider),
            method: "POST".into(),
            path: format!("/{}", provider.as_str()),
            query: None,
            headers: vec![],
            body_size: bytes.len() as u64,
            body: bytes,
            body_refused: false,
            remote_addr: None,
            verdict: Verdict::valid(0, None, "valid".into()),
            metadata: Metadata {
                event_id,
                ..Metadata::default()
            },
            response_status: 200,
            idempotency: None,
            enqueue: false,
        })
        .await
        .expect("recorded");
    let delivery = store.get(recorded.id).await.expect("read").expect("there");
    apply_delivery(store, &Machines::default(), &delivery, at)
        .await
        .expect("machines applied");
}

/// A Stripe PaymentIntent event, `secs` after T0, delivered a second later.
pub(crate) async fn stripe_event(store: &SqliteStore, pi: &str, kind: &str, secs: i64) {
    let body = json!({"id": format!("evt_{pi}_{secs}"), "object": "event", "type": kind,
        "created": T0 + secs, "data": {"object": {"id": pi, "object": "payment_intent"}}});
    deliver(
        store,
        ProviderId::Stripe,
        body,
        UnixMillis::from_secs(T0 + secs + 1),
    )
    .await;
}

pub(crate) fn payment_intent(id: &str, status: &str, charge: Value) -> Value {
    json!({"id": id, "object": "payment_intent", "status": status, "created": T0,
           "last_payment_error": null, "latest_charge": charge})
}

pub(crate) fn charge(refunded: bool, amount_refunded: i64) -> Value {
    json!({"id": "ch_1", "object": "charge", "refunded": refunded,
           "amount_refunded": amount_refunded, "disputed": false})
}

pub(crate) async fn object_of(store: &SqliteStore, id: &str) -> ObjectRecord {
    let all = store
        .objects(ObjectFilter::default())
        .await
        .expect("objects");
    all.into_iter()
        .find(|o| o.object_id == id)
        .expect("the object exists")
}
