//! `POST /api/tunnel` (start, or restart with other settings) and `DELETE /api/tunnel`
//! (stop): the UI's tunnel panel. What can be set here is deliberately narrow — the provider,
//! a bore server and secret, an ssh host and remote port, an ngrok authtoken. Paths to
//! executables, keys and custom commands come only from the configuration file, so the
//! control API can never be made to run an arbitrary program.

use super::{error, json, tunnel_answer};
use crate::config::{TunnelKind, TunnelOptions};
use crate::tunnel::TunnelControl;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use hooklab_core::secret::Secret;
use serde::Deserialize;

/// The largest request body read here.
const MAX_BODY: usize = 16 * 1024;

/// A tunnel to start; every field optional (the configured settings fill the rest).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TunnelRequest {
    /// localhost.run, bore, ssh, cloudflared or ngrok (custom: only from the config file).
    provider: Option<String>,
    /// bore: the server's host name.
    bore_server: Option<String>,
    /// bore: the server's secret (write-only).
    bore_secret: Option<String>,
    /// ssh: `USER@HOST[:PORT]`.
    ssh: Option<String>,
    /// ssh: the port to open on the host.
    remote_port: Option<u16>,
    /// ngrok: the authtoken (write-only).
    ngrok_authtoken: Option<String>,
}

impl std::fmt::Debug for TunnelRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TunnelRequest")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// `{"stopped": true|false}`: whether a tunnel was running.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(crate) struct TunnelStopped {
    stopped: bool,
}

pub(super) async fn change(tunnel: Option<&TunnelControl>, req: Request) -> Response {
    let method = req.method().clone();
    if method != Method::POST && method != Method::DELETE {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "GET (status), POST (start) or DELETE (stop)",
        );
    }
    let Some(tunnel) = tunnel else {
        return error(
            StatusCode::CONFLICT,
            "no_receiver",
            "this instance has no receiver to expose",
        );
    };
    if method == Method::DELETE {
        let stopped = tunnel.stop().await;
        return json(StatusCode::OK, &TunnelStopped { stopped });
    }
    match options(req).await {
        Ok(options) => match tunnel.start(options).await {
            Ok(_) => tunnel_answer(tunnel.status()),
            Err(e) => error(StatusCode::BAD_REQUEST, "tunnel", &e.to_string()),
        },
        Err(message) => error(StatusCode::BAD_REQUEST, "bad_request", &message),
    }
}

async fn options(req: Request) -> Result<TunnelOptions, String> {
    let body = axum::body::to_bytes(req.into_body(), MAX_BODY)
        .await
        .map_err(|_| format!("the body could not be read (at most {MAX_BODY} bytes)"))?;
    let request: TunnelRequest = if body.iter().all(u8::is_ascii_whitespace) {
        serde_json::from_str("{}").map_err(|e| e.to_string())?
    } else {
        serde_json::from_slice(&body).map_err(|e| format!("expected a tunnel to start: {e}"))?
    };
    let provider = match request.provider.as_deref() {
        None => None,
        Some(name) => {
            let kind: TunnelKind = name.parse().map_err(|e: String| e)?;
            if kind == TunnelKind::Custom {
                return Err(
                    "a custom tunnel command can only be set in the configuration file".into(),
                );
            }
            Some(kind)
        }
    };
    Ok(TunnelOptions {
        provider,
        bore_server: request.bore_server.filter(|s| !s.is_empty()),
        bore_secret: request
            .bore_secret
            .filter(|s| !s.is_empty())
            .map(Secret::new),
        ssh: request.ssh.filter(|s| !s.is_empty()),
        remote_port: request.remote_port,
        ngrok_authtoken: request
            .ngrok_authtoken
            .filter(|s| !s.is_empty())
            .map(Secret::new),
        ..TunnelOptions::default()
    })
}
