//! Captured requests in and recorded deliveries out: the formats `hooklab import` reads and
//! `hooklab export` writes (and the control API's `/api/import` and
//! `/api/deliveries/{id}/export`). Bytes in, bytes out: no file, socket or clock here; the
//! callers record what [`read`] returns through the receiver's own verification and record
//! path, so an imported request gets a verdict and an idempotency key like any delivery.
//!
//! | format    | read                                            | written                          |
//! |-----------|-------------------------------------------------|----------------------------------|
//! | `hooklab` | a whole-database export (JSON Lines, [`crate::store::transfer`]): the caller imports it into a new database | by the store |
//! | `json`    | [`json`]: `export --format json`, `events show --json` | an array of deliveries     |
//! | `har`     | [`har`]: HAR 1.2 (Chrome, Firefox, Hooklab)     | a HAR 1.2 log                    |
//! | `curl`    | [`curl`]: curl command lines ("Copy as cURL")   | one command per delivery         |
//! | `http`    | [`http`]: raw HTTP/1.1 requests                 | raw HTTP/1.1 requests            |
//! | `event`   | [`event`]: a provider's event JSON, wrapped into a request and signed now | —      |
//!
//! Every written format keeps the body byte-exact (text when it is UTF-8, base64 or escapes
//! otherwise) and the headers in arrival order with duplicates; reading it back gives the same
//! bytes. Only what was received is written: a source's configured secret is never part of a
//! delivery, so no export can carry one.

pub mod curl;
pub mod event;
pub mod har;
pub mod http;
pub mod json;

use crate::request::RawRequest;
use crate::store::Delivery;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A whole-database export (JSON Lines with its header line).
    Hooklab,
    /// Hooklab's JSON deliveries (`export --format json`, `events show --json`).
    Json,
    Har,
    Curl,
    Http,
    /// A provider's event JSON (e.g. a Stripe `evt_…` object).
    Event,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Hooklab,
        Format::Json,
        Format::Har,
        Format::Curl,
        Format::Http,
        Format::Event,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Hooklab => "hooklab",
            Format::Json => "json",
            Format::Har => "har",
            Format::Curl => "curl",
            Format::Http => "http",
            Format::Event => "event",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown format `{s}` (one of: auto, hooklab, json, har, curl, http, event)"
                )
            })
    }
}

/// What went wrong, and where (`HAR entry 3`, `curl, line 2, column 14`, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {detail}")]
pub struct CaptureError {
    pub at: String,
    pub detail: String,
}

impl CaptureError {
    pub fn new(at: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            at: at.into(),
            detail: detail.into(),
        }
    }
}

/// What [`read`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    /// A whole-database export: import it with the store's transfer into a new database.
    Database,
    /// Requests as they were sent (each with `url` when the capture says where it went).
    Requests(Vec<RawRequest>),
    /// A provider's event JSON, byte-exact, with the provider its shape suggests: wrap it
    /// with [`event::wrap`] for a source and its secret.
    Event {
        body: Vec<u8>,
        provider: Option<crate::provider::ProviderId>,
    },
}

/// Reads a file that a `curl` command may refer to (`--data-binary @FILE`): the caller decides
/// where files are (relative to the imported file) or that none may be read.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Result<Vec<u8>, String>;

/// A [`ReadFile`] that refuses every file (for uploads, where no file system is shared).
pub fn no_files(path: &str) -> Result<Vec<u8>, String> {
    Err(format!(
        "`{path}` is a file on the machine the command came from; import it from the CLI, beside the file"
    ))
}

/// Reads `bytes` as `format`, or as what it looks like when `format` is `None` (see
/// [`detect`]).
pub fn read(
    bytes: &[u8],
    format: Option<Format>,
    files: ReadFile<'_>,
) -> Result<(Format, Capture), CaptureError> {
    let format = match format {
        Some(f) => f,
        None => detect(bytes)?,
    };
    let capture = match format {
        Format::Hooklab => {
            if !is_database_export(bytes) {
                return Err(CaptureError::new(
                    "hooklab",
                    "not a whole-database export: its first line must be {\"hooklab_export\":…}",
                ));
            }
            Capture::Database
        }
        Format::Json => Capture::Requests(json::parse(bytes)?),
        Format::Har => Capture::Requests(har::parse(bytes)?),
        Format::Curl => Capture::Requests(curl::parse(bytes, files)?),
        Format::Http => Capture::Requests(http::parse(bytes)?),
        Format::Event => {
            let value = event::parse(bytes)?;
            Capture::Event {
                provider: event::detect_provider(&value),
                body: bytes.to_vec(),
            }
        }
    };
    Ok((format, capture))
}

/// Tells the format from the content: a database export's header line, a HAR log, Hooklab's
/// JSON deliveries, any other JSON object (a provider's event), a curl command, a raw HTTP
/// request.
pub fn detect(bytes: &[u8]) -> Result<Format, CaptureError> {
    let text = trim_start(bytes);
    if text.is_empty() {
        return Err(CaptureError::new("import", "the file is empty"));
    }
    if is_database_export(bytes) {
        return Ok(Format::Hooklab);
    }
    if text[0] == b'{' || text[0] == b'[' {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            CaptureError::new(
                "import",
                format!("it starts like JSON but is not valid JSON ({e})"),
            )
        })?;
        if value.pointer("/log/entries").is_some() {
            return Ok(Format::Har);
        }
        if json::looks_like_deliveries(&value) {
            return Ok(Format::Json);
        }
        if value.is_object() {
            return Ok(Format::Event);
        }
        return Err(CaptureError::new(
            "import",
            "a JSON array that is not Hooklab deliveries (each needs `method`, `path`, `headers`)",
        ));
    }
    if curl::looks_like_curl(text) {
        return Ok(Format::Curl);
    }
    if http::looks_like_request_line(text) {
        return Ok(Format::Http);
    }
    Err(CaptureError::new(
        "import",
        "cannot tell the format: not a Hooklab export, HAR, JSON, curl command or raw HTTP \
         request (pass --format)",
    ))
}

/// The first line is `{"hooklab_export": …}`.
fn is_database_export(bytes: &[u8]) -> bool {
    let first = trim_start(bytes.split(|&b| b == b'\n').next().unwrap_or_default());
    first.starts_with(b"{")
        && serde_json::from_slice::<crate::store::transfer::Header>(first).is_ok()
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let rest = &bytes[start..];
    rest.strip_prefix("\u{feff}".as_bytes()).unwrap_or(rest)
}

/// How deliveries are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    Json,
    Har,
    Curl,
    Http,
}

impl ExportFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Har => "har",
            ExportFormat::Curl => "curl",
            ExportFormat::Http => "http",
        }
    }

    /// The media type of the written bytes.
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Json | ExportFormat::Har => "application/json",
            ExportFormat::Curl => "text/plain; charset=utf-8",
            ExportFormat::Http => "message/http",
        }
    }

    /// The file extension for a download.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Har => "har",
            ExportFormat::Curl => "sh",
            ExportFormat::Http => "http",
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Self::Json),
            "har" => Ok(Self::Har),
            "curl" => Ok(Self::Curl),
            "http" => Ok(Self::Http),
            other => Err(format!(
                "unknown export format `{other}` (one of: json, har, curl, http)"
            )),
        }
    }
}

/// `deliveries` written as `format`, in the order given.
pub fn export(deliveries: &[Delivery], format: ExportFormat) -> Vec<u8> {
    match format {
        ExportFormat::Json => json::export(deliveries),
        ExportFormat::Har => har::export(deliveries),
        ExportFormat::Curl => curl::export(deliveries),
        ExportFormat::Http => http::export(deliveries),
    }
}

/// The absolute URL a request was sent to, as well as it is known: its `Host` header (else
/// `localhost`), path and query, over `http` (as the receiver rebuilds it).
pub fn request_url(r: &RawRequest) -> String {
    let host = r
        .header_str("host")
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("localhost");
    match &r.query {
        Some(q) => format!("http://{host}{}?{q}", r.path),
        None => format!("http://{host}{}", r.path),
    }
}

/// Splits an absolute URL (or an origin-form target) into its path and raw query; the
/// fragment is dropped. A URL without a scheme is read as `http://` (as curl does).
pub fn split_url(url: &str) -> (String, Option<String>) {
    let without_fragment = url.split_once('#').map_or(url, |(u, _)| u);
    let target = if without_fragment.starts_with('/') {
        without_fragment
    } else {
        let after_scheme = without_fragment
            .split_once("://")
            .map_or(without_fragment, |(_, rest)| rest);
        after_scheme
            .find(['/', '?'])
            .map_or("", |i| &after_scheme[i..])
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (target, None),
    };
    let path = if path.is_empty() { "/" } else { path };
    (path.to_string(), query)
}

/// The request a recorded delivery was (for formats that write requests).
pub(crate) fn request_of(d: &Delivery) -> RawRequest {
    let r = &d.record;
    let mut request = RawRequest {
        method: r.method.clone(),
        path: r.path.clone(),
        query: r.query.clone(),
        headers: r.headers.clone(),
        body: r.body.clone(),
        url: None,
    };
    request.url = Some(request_url(&request));
    request
}

#[cfg(test)]
mod tests;
