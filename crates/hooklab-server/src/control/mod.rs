//! The control API, seed: what the CLI (`hooklab tunnel status`), and later the UI, use to ask
//! a running instance. It is not the receiver and is never exposed:
//!
//! - it listens on **its own port on 127.0.0.1** (0 by default: a free one); tunnels forward
//!   the receiver's port only, so a control path sent through a tunnel reaches the receiver
//!   (which records it as a delivery to an unknown source) and never this API;
//! - every request needs `Authorization: Bearer TOKEN`, a random token made at each start and
//!   compared in constant time; `Debug` never shows it;
//! - `Host` must name a loopback host (127.0.0.1, localhost, [::1]) and an `Origin`, when
//!   sent, must be this API's own loopback origin: a web page cannot reach it through DNS
//!   rebinding or a cross-site request.
//!
//! Endpoints: `GET /api/health`, `GET /api/tunnel` (the [`TunnelStatus`], or `{"status":
//! "off"}`). Errors are `{"code": …, "message": …}`. [`discovery`] is the file that tells the
//! CLI where the API is; [`client`] is the CLI's side.

pub mod api;
pub mod client;
pub mod discovery;
mod guard;
pub mod openapi;
mod tunnel;
mod ui;

use crate::tunnel::TunnelStatus;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The bearer token of one start: 32 random bytes, hex. `Debug` and `Display` redact it.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ControlToken(String);

impl ControlToken {
    /// A new random token.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::getrandom(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self(hex::encode(bytes)))
    }

    /// The token in clear, for the `Authorization` header and the discovery file only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with what a request presented.
    pub(crate) fn matches(&self, presented: &[u8]) -> bool {
        use subtle::ConstantTimeEq as _;
        self.0.as_bytes().ct_eq(presented).into()
    }
}

impl std::fmt::Debug for ControlToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ControlToken(***)")
    }
}

/// What the control API reports on.
#[derive(Debug, Clone, Default)]
pub struct ControlState {
    /// The receiver's tunnel: its status, and start/stop (`None`: no receiver here).
    pub tunnel: Option<crate::tunnel::TunnelControl>,
    /// The receiver's local base URL.
    pub receiver: Option<String>,
    /// The store and events bus behind the data endpoints (`None`: only health and tunnel).
    pub data: Option<api::DataState>,
    /// The built UI (`ui/dist`) to serve at `/`, when there is one.
    pub ui_dir: Option<std::path::PathBuf>,
}

/// Where the built UI is: `HOOKLAB_UI_DIR`, else `ui/dist` of the source tree this binary was
/// built from (a development checkout), when it holds an `index.html`.
pub fn ui_dir() -> Option<std::path::PathBuf> {
    let candidates = [
        std::env::var_os("HOOKLAB_UI_DIR").map(std::path::PathBuf::from),
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("index.html").is_file())
}

/// The control API, listening. Dropping it stops it.
#[derive(Debug)]
pub struct ControlServer {
    /// Where it listens (always 127.0.0.1).
    pub addr: SocketAddr,
    token: ControlToken,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

struct Shared {
    state: ControlState,
    token: ControlToken,
    port: u16,
}

/// Binds `127.0.0.1:port` (0: a free one) and serves the control API with a fresh token.
pub async fn serve(port: u16, state: ControlState) -> std::io::Result<ControlServer> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
    let addr = listener.local_addr()?;
    let token = ControlToken::generate()?;
    let shared = Arc::new(Shared {
        state,
        token: token.clone(),
        port: addr.port(),
    });
    let app = router(shared);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    tracing::info!("control API listening on http://{addr}");
    Ok(ControlServer {
        addr,
        token,
        stop: Some(stop),
        task,
    })
}

impl ControlServer {
    /// The token requests must present.
    pub fn token(&self) -> &ControlToken {
        &self.token
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting and ends open connections (bounded).
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = &mut self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(2), task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

/// Every request: the guard first (host, origin, token), then the route.
async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    // The UI's own files carry no data and cannot present a token (a browser navigating to
    // the page sends none): they are served to loopback hosts and origins only, without one.
    // Every `/api/` route needs the token.
    if !req.uri().path().starts_with("/api/") {
        if let Err(refusal) = guard::check_origin(&req, shared.port) {
            return refusal.into_response();
        }
        return ui::serve(shared.state.ui_dir.as_deref(), req.uri().path()).await;
    }
    if let Err(refusal) = guard::check(&req, &shared.token, shared.port) {
        return refusal.into_response();
    }
    if req.uri().path() == "/api/tunnel" && req.method() != Method::GET {
        return tunnel::change(shared.state.tunnel.as_ref(), req).await;
    }
    if let Some(data) = &shared.state.data {
        let req = match api::route(data, req).await {
            Ok(response) => return response,
            Err(req) => req,
        };
        return basic(&shared, &req);
    }
    basic(&shared, &req)
}

/// Health and tunnel: what works without a store.
fn basic(shared: &Shared, req: &Request) -> Response {
    if req.method() != Method::GET {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "only GET is served here",
        );
    }
    match req.uri().path() {
        "/api/health" => json(
            StatusCode::OK,
            &openapi::Health {
                status: "ok".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                pid: std::process::id(),
                receiver: shared.state.receiver.clone(),
                ui_streams: shared
                    .state
                    .data
                    .as_ref()
                    .map(|d| d.streams.load(std::sync::atomic::Ordering::Acquire) as u64),
            },
        ),
        "/api/openapi.json" => json(StatusCode::OK, &openapi::document()),
        "/api/tunnel" => tunnel_answer(shared.state.tunnel.as_ref().and_then(|t| t.status())),
        _ => error(StatusCode::NOT_FOUND, "not_found", "no such endpoint"),
    }
}

/// The tunnel's status, or `{"status": "off"}`.
fn tunnel_answer(status: Option<TunnelStatus>) -> Response {
    match status {
        Some(status) => json(StatusCode::OK, &openapi::TunnelAnswer::On(status)),
        None => json(
            StatusCode::OK,
            &openapi::TunnelAnswer::Off {
                status: openapi::TunnelOff::Off,
            },
        ),
    }
}

fn json(status: StatusCode, value: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `{"code": …, "message": …}` with `status`.
pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    json(
        status,
        &serde_json::json!({ "code": code, "message": message }),
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod api_tests;

#[cfg(test)]
mod api_lab_tests;

#[cfg(test)]
mod capture_tests;
