//! The control API's OpenAPI 3.0 description, generated from the Rust types the endpoints
//! serialise (their JSON Schemas come from `schemars`, which reads the same serde attributes).
//! Served at `GET /api/openapi.json`, committed as `docs/openapi.json` (a test keeps the file in
//! step with the code), and turned into the UI's TypeScript types by `openapi-typescript`, so
//! no shape is ever written twice.

use super::api::{
    DeliveryView, HeaderView, Imported, InjectAnswer, InjectRequest, Page, ScenarioToml, Selection,
    SourceInput, SourceView, TestEventRequest,
};
use crate::events::Event;
use crate::tunnel::TunnelStatus;
use hooklab_core::store::{
    DeadLetter, DeliverySummary, IdempotencyRecord, ObjectRecord, TimelineEntry,
};
use schemars::JsonSchema;
use schemars::r#gen::{SchemaGenerator, SchemaSettings};
use serde::Serialize;
use serde_json::{Value, json};

/// `{"code": …, "message": …}`: every error answer.
#[derive(Serialize, JsonSchema)]
pub(super) struct Problem {
    /// Machine-readable, e.g. `unauthorized`, `not_found`, `bad_request`.
    pub(super) code: String,
    /// What went wrong and what to do, in plain words.
    pub(super) message: String,
}

/// `GET /api/health`.
#[derive(Serialize, JsonSchema)]
pub(super) struct Health {
    pub(super) status: String,
    pub(super) version: String,
    pub(super) pid: u32,
    /// The receiver's local base URL.
    pub(super) receiver: Option<String>,
    /// Open `/api/stream` connections.
    pub(super) ui_streams: Option<u64>,
}

/// One message of `GET /api/stream` (`event: batch`, this object as `data`).
#[derive(Serialize, JsonSchema)]
pub(super) struct StreamBatch {
    pub(super) events: Vec<Event>,
    /// Events the stream could not send (the subscriber lagged, or a batch was full).
    pub(super) missed: u64,
}

/// `GET /api/objects/{id}/timeline`.
#[derive(Serialize, JsonSchema)]
pub(super) struct Timeline {
    pub(super) object: String,
    pub(super) transitions: Vec<TimelineEntry>,
}

/// The answer of `POST /api/test-event`.
#[derive(Serialize, JsonSchema)]
pub(super) struct TestEventSent {
    pub(super) source: String,
    /// The event id the receiver records (empty for providers without one, e.g. Wompi).
    pub(super) event_id: String,
    /// The event type the receiver records.
    pub(super) event_type: String,
    /// The template it was made from, as `hooklab trigger --list` names it.
    pub(super) template: String,
    /// The business object (a payment) the event is about, when it names one.
    pub(super) object_id: Option<String>,
    /// Signed with the source's first secret (false when the source has none).
    pub(super) signed: bool,
    /// What the receiver answered.
    pub(super) status: u16,
}

/// `{"redriven": n}` or `{"discarded": n}`.
#[derive(Serialize, JsonSchema)]
pub(super) struct Resolved {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) redriven: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) discarded: Option<u64>,
}

/// The tunnel's status, or `{"status": "off"}`.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum TunnelAnswer {
    Off { status: TunnelOff },
    On(TunnelStatus),
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum TunnelOff {
    Off,
}

struct Builder {
    generator: SchemaGenerator,
    paths: serde_json::Map<String, Value>,
}

impl Builder {
    fn schema<T: JsonSchema>(&mut self) -> Value {
        serde_json::to_value(self.generator.subschema_for::<T>()).unwrap_or(Value::Null)
    }

    // One call per route reads like the route table it is.
    #[allow(clippy::too_many_arguments)]
    fn op(
        &mut self,
        method: &str,
        path: &str,
        summary: &str,
        params: &[(&str, &str, &str)],
        request: Option<Value>,
        response: Value,
        response_type: &str,
    ) {
        let parameters: Vec<Value> = params
            .iter()
            .map(|(name, kind, description)| {
                let location = if path.contains(&format!("{{{name}}}")) {
                    "path"
                } else {
                    "query"
                };
                json!({
                    "name": name,
                    "in": location,
                    "required": location == "path",
                    "description": description,
                    "schema": {"type": kind},
                })
            })
            .collect();
        let problem = json!({"$ref": "#/components/schemas/Problem"});
        let mut operation = json!({
            "summary": summary,
            "parameters": parameters,
            "responses": {
                "200": {"description": "OK", "content": {response_type: {"schema": response}}},
                "400": {"description": "A bad parameter or body", "content": {"application/json": {"schema": problem}}},
                "401": {"description": "No valid bearer token", "content": {"application/json": {"schema": problem}}},
                "403": {"description": "A non-loopback Host or a foreign Origin", "content": {"application/json": {"schema": problem}}},
            },
        });
        if let Some(body) = request {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": body}}});
        }
        let entry = self
            .paths
            .entry(path.to_string())
            .or_insert_with(|| json!({}));
        entry[method] = operation;
    }
}

/// The whole document.
pub fn document() -> Value {
    let settings = SchemaSettings::openapi3().with(|s| s.option_add_null_type = false);
    let mut b = Builder {
        generator: settings.into_generator(),
        paths: serde_json::Map::new(),
    };
    let health = b.schema::<Health>();
    b.op(
        "get",
        "/api/health",
        "Liveness, version and the receiver's address",
        &[],
        None,
        health,
        "application/json",
    );
    let tunnel = b.schema::<TunnelAnswer>();
    b.op(
        "get",
        "/api/tunnel",
        "The tunnel's status",
        &[],
        None,
        tunnel.clone(),
        "application/json",
    );
    let request = b.schema::<super::tunnel::TunnelRequest>();
    b.op(
        "post",
        "/api/tunnel",
        "Start the tunnel (stopping the one running): the given settings over the configured ones",
        &[],
        Some(request),
        tunnel.clone(),
        "application/json",
    );
    let stopped = b.schema::<super::tunnel::TunnelStopped>();
    b.op(
        "delete",
        "/api/tunnel",
        "Stop the tunnel (its processes ended)",
        &[],
        None,
        stopped,
        "application/json",
    );

    let events = b.schema::<Page<DeliverySummary>>();
    b.op(
        "get",
        "/api/events",
        "Deliveries, newest first",
        &[
            (
                "limit",
                "integer",
                "At most this many (1–1000, default 200)",
            ),
            (
                "before",
                "integer",
                "Only ids below this one (the previous page's next_before)",
            ),
            ("source", "string", "Only this source"),
            ("verdict", "string", "valid, invalid or unsigned"),
            ("event_type", "string", "Only this event type (exact)"),
            ("duplicates", "boolean", "true: only duplicates"),
            (
                "duplicate_of",
                "integer",
                "Only the duplicates of this delivery",
            ),
            (
                "q",
                "string",
                "Full-text search: body, headers, path, event id, event type, key, or the id",
            ),
        ],
        None,
        events,
        "application/json",
    );
    let delivery = b.schema::<DeliveryView>();
    b.op(
        "get",
        "/api/events/{id}",
        "One delivery, whole",
        &[("id", "integer", "The delivery id")],
        None,
        delivery,
        "application/json",
    );
    b.op(
        "get",
        "/api/events/{id}/raw",
        "The exact body bytes",
        &[("id", "integer", "The delivery id")],
        None,
        json!({"type": "string", "format": "binary"}),
        "application/octet-stream",
    );
    let diff = b.schema::<hooklab_core::diff::DeliveryDiff>();
    b.op(
        "get",
        "/api/diff",
        "Two deliveries compared: request line, headers in arrival order, body byte by byte",
        &[
            ("a", "integer", "The first delivery id"),
            ("b", "integer", "The second delivery id"),
        ],
        None,
        diff,
        "application/json",
    );
    b.op(
        "get",
        "/api/deliveries/{id}/export",
        "One delivery as a download, byte-exact: HAR 1.2, a curl command, JSON or raw HTTP",
        &[
            ("id", "integer", "The delivery id"),
            ("format", "string", "har, curl, json (default) or http"),
        ],
        None,
        json!({"type": "string", "format": "binary"}),
        "application/octet-stream",
    );
    let imported = b.schema::<Imported>();
    b.op(
        "post",
        "/api/import",
        "Record a captured file's requests through the receiver (HAR, curl, raw HTTP, Hooklab \
         JSON, or a provider's event signed now with the source's secret)",
        &[
            (
                "format",
                "string",
                "auto (default), json, har, curl, http or event",
            ),
            (
                "source",
                "string",
                "The source to record them under (default: each request's first path segment; \
                 for an event, the first source of the provider its shape names)",
            ),
        ],
        None,
        imported,
        "application/json",
    );
    if let Some(post) = b
        .paths
        .get_mut("/api/import")
        .and_then(|p| p.get_mut("post"))
    {
        post["requestBody"] = json!({
            "required": true,
            "description": "The file's bytes, as read from disk",
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        });
    }
    let keys = b.schema::<Vec<IdempotencyRecord>>();
    b.op(
        "get",
        "/api/keys",
        "Idempotency keys, most recently seen first",
        &[
            ("limit", "integer", "At most this many"),
            ("status", "string", "processing, completed or failed"),
            ("scope", "string", "Only this provider"),
            (
                "duplicates",
                "boolean",
                "Only keys delivered more than once",
            ),
            ("key", "string", "Only this key"),
        ],
        None,
        keys,
        "application/json",
    );
    let objects = b.schema::<Vec<ObjectRecord>>();
    b.op(
        "get",
        "/api/objects",
        "Business objects, most recently updated first",
        &[
            ("limit", "integer", "At most this many"),
            ("state", "string", "Only objects in this state"),
            ("machine", "string", "Only this state machine's objects"),
        ],
        None,
        objects,
        "application/json",
    );
    let timeline = b.schema::<Timeline>();
    b.op(
        "get",
        "/api/objects/{id}/timeline",
        "An object's state-machine decisions",
        &[("id", "string", "The object id")],
        None,
        timeline,
        "application/json",
    );
    let dead = b.schema::<Vec<DeadLetter>>();
    b.op(
        "get",
        "/api/dlq",
        "Dead letters, newest first",
        &[
            ("limit", "integer", "At most this many"),
            ("source", "string", "Only this source"),
        ],
        None,
        dead,
        "application/json",
    );
    for action in ["redrive", "discard"] {
        let selection = b.schema::<Selection>();
        let resolved = b.schema::<Resolved>();
        b.op(
            "post",
            &format!("/api/dlq/{action}"),
            if action == "redrive" {
                "Queue dead jobs again"
            } else {
                "Drop dead jobs (their deliveries stay)"
            },
            &[],
            Some(selection),
            resolved,
            "application/json",
        );
    }
    let sources = b.schema::<Vec<SourceView>>();
    b.op(
        "get",
        "/api/sources",
        "The receiver's sources (never their secrets)",
        &[],
        None,
        sources,
        "application/json",
    );
    let input = b.schema::<SourceInput>();
    let saved = json!({"type": "object", "properties": {"saved": {"type": "string"}}, "required": ["saved"]});
    b.op(
        "post",
        "/api/sources",
        "Add a source (kept in the sources file beside the database)",
        &[],
        Some(input.clone()),
        saved.clone(),
        "application/json",
    );
    b.op(
        "put",
        "/api/sources/{name}",
        "Change a source added in the UI (`secrets` absent: kept)",
        &[("name", "string", "The source's name")],
        Some(input),
        saved,
        "application/json",
    );
    let deleted = json!({"type": "object", "properties": {"deleted": {"type": "string"}}, "required": ["deleted"]});
    b.op(
        "delete",
        "/api/sources/{name}",
        "Remove a source added in the UI",
        &[("name", "string", "The source's name")],
        None,
        deleted,
        "application/json",
    );
    let settings = b.schema::<crate::config::ui_settings::UiSettings>();
    b.op(
        "get",
        "/api/ui-settings",
        "The UI's own settings (kept beside the database), or the defaults",
        &[],
        None,
        settings.clone(),
        "application/json",
    );
    b.op(
        "put",
        "/api/ui-settings",
        "Replace the UI's settings (409 `not_kept` when this instance keeps none)",
        &[],
        Some(settings.clone()),
        settings,
        "application/json",
    );
    let providers = b.schema::<Vec<hooklab_core::provider::ProviderInfo>>();
    b.op(
        "get",
        "/api/providers",
        "Every provider: its headers, algorithm, what it signs, its default tolerance",
        &[],
        None,
        providers,
        "application/json",
    );
    let templates = b.schema::<Vec<super::api::TemplateSet>>();
    b.op(
        "get",
        "/api/templates",
        "Every provider's test-event templates (event types; the first is the default)",
        &[],
        None,
        templates,
        "application/json",
    );
    let request = b.schema::<TestEventRequest>();
    let sent = b.schema::<TestEventSent>();
    b.op(
        "post",
        "/api/test-event",
        "Send a signed test event through the receiver",
        &[],
        Some(request),
        sent,
        "application/json",
    );
    let inject = b.schema::<InjectRequest>();
    let injected = b.schema::<InjectAnswer>();
    b.op(
        "post",
        "/api/inject",
        "Send copies of a recorded delivery (a true race or one after another) and judge the \
         handler: status classes and bodies per copy, side effects through the probe",
        &[],
        Some(inject),
        injected,
        "application/json",
    );
    let replay = b.schema::<super::api::ReplayRequest>();
    let replayed = b.schema::<super::api::ReplayAnswer>();
    b.op(
        "post",
        "/api/events/{id}/replay",
        "Replay a delivery: through this receiver (recorded again, linked to its original) or \
         to a URL; as recorded, re-signed, a negative variant, or edited",
        &[("id", "integer", "The delivery id")],
        Some(replay),
        replayed,
        "application/json",
    );
    let sequence = b.schema::<super::api::SequenceRequest>();
    let sequenced = b.schema::<super::api::SequenceAnswer>();
    b.op(
        "post",
        "/api/sequence",
        "Fire a sequence: one payment's events in a classic wrong order (a preset), or recorded \
         deliveries in a composed order, through a source",
        &[],
        Some(sequence),
        sequenced,
        "application/json",
    );
    let scenario = b.schema::<crate::lab::scenario::Scenario>();
    let toml = b.schema::<ScenarioToml>();
    b.op(
        "post",
        "/api/scenario",
        "Write lab actions (steps and expectations) as a scenario file for `hooklab run`",
        &[],
        Some(scenario),
        toml,
        "application/json",
    );
    let batch = b.schema::<StreamBatch>();
    b.op(
        "get",
        "/api/stream",
        "The events bus as Server-Sent Events (`event: batch`; each `data` is a StreamBatch)",
        &[],
        None,
        json!({"type": "string"}),
        "text/event-stream",
    );
    let _ = b.schema::<HeaderView>();
    let _ = batch;
    let _ = b.schema::<Problem>();

    let schemas: serde_json::Map<String, Value> = b
        .generator
        .definitions()
        .iter()
        .map(|(name, schema)| {
            (
                name.clone(),
                serde_json::to_value(schema).unwrap_or(Value::Null),
            )
        })
        .collect();
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Hooklab control API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Loopback only, on its own port (never forwarded by a tunnel). Every \
                request needs `Authorization: Bearer TOKEN` (a fresh token per start, in the \
                discovery file beside the database); `Host` must be a loopback name with the \
                API's port, and an `Origin`, when sent, the API's own. See docs/ui.md.",
        },
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "0"}}}],
        "security": [{"token": []}],
        "paths": b.paths,
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas,
        },
    })
}

#[cfg(test)]
mod tests;
