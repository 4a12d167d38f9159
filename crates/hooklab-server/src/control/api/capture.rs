//! Import and export for the UI's drag-and-drop: `POST /api/import` records a captured file's
//! requests through the running receiver ([`crate::receiver::Receiver::ingest`]: verified,
//! deduplicated and processed like any delivery), and `GET /api/deliveries/{id}/export`
//! writes one delivery as HAR, curl, JSON or raw HTTP. The formats are
//! `hooklab_core::capture`'s; a source's secret is used to sign an imported event and never
//! leaves the process.

use super::*;
use hooklab_core::capture::{self, ExportFormat, Format};

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
    let (format, imported) = receiver
        .import(&bytes, format, source.as_deref())
        .await
        .map_err(|e| {
            let status = match e {
                crate::receiver::ImportError::Storage => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            Problem::new(status, e.code(), e.to_string())
        })?;
    ok(&Imported {
        format: format.as_str().to_string(),
        imported,
    })
}

pub(super) async fn export(data: &DataState, text: &str, query: &str) -> Answer {
    let id = id(text)?;
    let p = params(query);
    let format: ExportFormat = param(&p, "format")
        .unwrap_or("json")
        .parse()
        .map_err(Problem::bad)?;
    let delivery = load_delivery(data, id).await?;
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
