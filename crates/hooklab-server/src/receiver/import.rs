//! A captured file recorded through the receiver: HAR, curl, raw HTTP, Hooklab's JSON, or a
//! provider's event (wrapped for a source and signed now with its first secret). Each request
//! goes through [`Receiver::ingest`] — verified, deduplicated and processed like any delivery.
//! The control API's `POST /api/import` and the desktop app's "Import events…" both run this.

use super::{Ingested, Receiver};
use hooklab_core::capture::{self, Capture, Format};
use hooklab_core::clock::UnixMillis;
use hooklab_core::request::RawRequest;

/// Why a file could not be imported. Each has a stable code (for the control API).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Not a capture this format (or any) reads.
    #[error("{0}")]
    BadCapture(String),
    /// A whole-database export: it goes into a new database, not a running one.
    #[error(
        "this is a whole-database export: import it into a new database with `hooklab import FILE --db NEW.db`"
    )]
    DatabaseExport,
    /// A provider's event, and no source to sign it for.
    #[error("{message}")]
    Source { code: &'static str, message: String },
    #[error("{0}")]
    CannotSign(String),
    /// The store failed: nothing more was recorded.
    #[error("the delivery could not be recorded (storage failed; see the log)")]
    Storage,
}

impl ImportError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadCapture(_) => "bad_capture",
            Self::DatabaseExport => "database_export",
            Self::Source { code, .. } => code,
            Self::CannotSign(_) => "cannot_sign",
            Self::Storage => "storage",
        }
    }
}

impl Receiver {
    /// Records every request `bytes` holds (read as `format`, or as what it looks like), under
    /// `source` (default: each request's first path segment; a provider's event: the first
    /// source of its provider). Stops at the first storage failure.
    pub async fn import(
        &self,
        bytes: &[u8],
        format: Option<Format>,
        source: Option<&str>,
    ) -> Result<(Format, Vec<Ingested>), ImportError> {
        let (format, capture) = capture::read(bytes, format, &capture::no_files)
            .map_err(|e| ImportError::BadCapture(e.to_string()))?;
        let requests = match capture {
            Capture::Database => return Err(ImportError::DatabaseExport),
            Capture::Requests(requests) => requests,
            Capture::Event { body, provider } => vec![self.event_request(source, &body, provider)?],
        };
        // A wrapped event's path names its source.
        let source = if format == Format::Event {
            None
        } else {
            source
        };
        let origin = format!("import:{format}");
        let mut imported = Vec::with_capacity(requests.len());
        for request in requests {
            let done = self
                .ingest(source, request, &origin)
                .await
                .map_err(|_| ImportError::Storage)?;
            imported.push(done);
        }
        Ok((format, imported))
    }

    /// A provider's event wrapped for `source` (or the first source of the provider its shape
    /// suggests) and signed now with that source's first secret.
    fn event_request(
        &self,
        source: Option<&str>,
        body: &[u8],
        detected: Option<hooklab_core::provider::ProviderId>,
    ) -> Result<RawRequest, ImportError> {
        let sources = self.source_configs();
        let refuse = |code, message: String| ImportError::Source { code, message };
        let config = match (source, detected) {
            (Some(name), _) => sources
                .iter()
                .find(|s| s.name == name)
                .ok_or_else(|| refuse("unknown_source", format!("no source named `{name}`")))?,
            (None, Some(provider)) => sources.iter().find(|s| s.provider == provider).ok_or_else(|| {
                refuse(
                    "no_source",
                    format!("this looks like a {provider} event, and no source verifies {provider}: add one, or pass `source`"),
                )
            })?,
            (None, None) => {
                return Err(refuse(
                    "which_source",
                    "cannot tell which provider sent this event: pass `source`".into(),
                ));
            }
        };
        let secret = config.secrets.first().ok_or_else(|| {
            refuse(
                "no_secret",
                format!(
                    "source `{}` has no secret to sign the event with",
                    config.name
                ),
            )
        })?;
        let base = self
            .0
            .local_addr
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
        .map_err(|e| ImportError::CannotSign(e.to_string()))
    }
}
