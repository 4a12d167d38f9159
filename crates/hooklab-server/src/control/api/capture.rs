//! Import and export for the UI's drag-and-drop: `POST /api/import` records a captured file's
//! requests through the running receiver ([`crate::receiver::Receiver::ingest`]: verified,
//! deduplicated and processed like any delivery), and `GET /api/deliveries/{id}/export`
//! writes one delivery as HAR, curl, JSON or raw HTTP. The formats are
//! `hooklab_core::capture`'s; a source's secret is used to sign an imported event and never
//! leaves the process.

use super::*;
use hooklab_core::capture::{self, Capture, ExportFormat, Format};

/// The largest file `POST /api/import` takes.
const IMPORT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// The answer of `POST /api/import`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Imported {
    /// The format read (`har`, `curl`, `http`, `json`, `event`).
    format: String,
    /// One per imported request, in the file's order.
    imported: Vec<crate::receiver::Ingested>,
}

pub(super) async fn import(data: &DataState, query: &str, req: Request) -> Answer {
    let p = params(query);
    let format = match param(&p, "format") {
        None | Some("auto") => None,
        Some(f) => Some(f.parse::<Format>().map_err(Problem::bad)?),
    };
    let source = param(&p, "source").map(str::to_string);
    let receiver = data.receiver.as_ref().ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "no_receiver",
            "no receiver is running to record the import",
        )
    })?;
    let bytes = axum::body::to_bytes(req.into_body(), IMPORT_MAX_BYTES)
        .await
        .map_err(|_| {
            Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                format!(
                    "the file could not be read (at most {} MiB)",
                    IMPORT_MAX_BYTES >> 20
                ),
            )
        })?;
    let (format, capture) = capture::read(&bytes, format, &capture::no_files).map_err(|e| {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_capture",
            e.to_string(),
        )
    })?;
    let requests = match capture {
        Capture::Database => {
            return Err(Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "database_export",
                "this is a whole-database export: import it into a new database with \
                 `hooklab import FILE --db NEW.db`",
            ));
        }
        Capture::Requests(requests) => requests,
        Capture::Event { body, provider } => {
            vec![event_request(data, source.as_deref(), &body, provider)?]
        }
    };
    let source = match format {
        // The event was wrapped for its source: its path names it.
        Format::Event => None,
        _ => source,
    };
    let origin = format!("import:{format}");
    let mut imported = Vec::with_capacity(requests.len());
    for request in requests {
        let done = receiver
            .ingest(source.as_deref(), request, &origin)
            .await
            .map_err(|e| Problem::new(StatusCode::SERVICE_UNAVAILABLE, "storage", e.to_string()))?;
        imported.push(done);
    }
    ok(&Imported {
        format: format.as_str().to_string(),
        imported,
    })
}

/// A provider's event wrapped for `source` (or the first source of the provider its shape
/// suggests) and signed now with that source's first secret.
fn event_request(
    data: &DataState,
    source: Option<&str>,
    body: &[u8],
    detected: Option<hooklab_core::provider::ProviderId>,
) -> Result<hooklab_core::request::RawRequest, Problem> {
    let sources = data.source_configs();
    let unprocessable =
        |code, message: String| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, code, message);
    let config = match (source, detected) {
        (Some(name), _) => sources.iter().find(|s| s.name == name).ok_or_else(|| {
            unprocessable("unknown_source", format!("no source named `{name}`"))
        })?,
        (None, Some(provider)) => sources.iter().find(|s| s.provider == provider).ok_or_else(|| {
            unprocessable(
                "no_source",
                format!("this looks like a {provider} event, and no source verifies {provider}: add one, or pass `source`"),
            )
        })?,
        (None, None) => {
            return Err(unprocessable(
                "which_source",
                "cannot tell which provider sent this event: pass `source`".into(),
            ));
        }
    };
    let secret = config.secrets.first().ok_or_else(|| {
        unprocessable(
            "no_secret",
            format!(
                "source `{}` has no secret to sign the event with",
                config.name
            ),
        )
    })?;
    let base = data
        .receiver_addr
        .map_or_else(|| "http://localhost".to_string(), |a| format!("http://{a}"));
    let url = format!("{base}/{}", config.name);
    capture::event::wrap(capture::event::Wrap {
        body,
        provider: config.provider,
        options: &config.options,
        secret,
        url: &url,
        now: UnixMillis::now(),
    })
    .map_err(|e| unprocessable("cannot_sign", e.to_string()))
}

pub(super) async fn export(data: &DataState, text: &str, query: &str) -> Answer {
    let id = id(text)?;
    let p = params(query);
    let format: ExportFormat = param(&p, "format")
        .unwrap_or("json")
        .parse()
        .map_err(Problem::bad)?;
    let delivery = data
        .store
        .get(id)
        .await
        .map_err(|e| Problem::store(&e))?
        .ok_or_else(|| Problem::not_found("delivery"))?;
    let bytes = capture::export(std::slice::from_ref(&delivery), format);
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!(
            "attachment; filename=\"delivery-{id}.{}\"",
            format.extension()
        ))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
