//! The control API's door: a loopback `Host` (DNS rebinding), no foreign `Origin`
//! (cross-site requests), and the bearer token (constant-time). Checked in that order, before
//! any route, so no endpoint can forget it.

use super::{ControlToken, error};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// Why a request was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `Host` is missing or names something other than this machine's loopback.
    Host,
    /// An `Origin` other than this API's own.
    Origin,
    /// No token, or the wrong one.
    Token,
}

impl Refusal {
    pub(crate) fn into_response(self) -> Response {
        match self {
            Self::Host => error(
                StatusCode::FORBIDDEN,
                "bad_host",
                "the control API answers only requests addressed to 127.0.0.1, localhost or [::1]",
            ),
            Self::Origin => error(
                StatusCode::FORBIDDEN,
                "bad_origin",
                "cross-origin requests are refused",
            ),
            Self::Token => {
                let mut response = error(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "a valid `Authorization: Bearer TOKEN` is required (the token is in the \
                     discovery file beside the database)",
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                response
            }
        }
    }
}

pub(crate) fn check(req: &Request, token: &ControlToken, port: u16) -> Result<(), Refusal> {
    check_origin(req, port)?;
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .ok_or(Refusal::Token)?;
    if token.matches(presented) {
        Ok(())
    } else {
        Err(Refusal::Token)
    }
}

/// The host and origin half of [`check`]: a loopback `Host` with our port, and no foreign
/// `Origin`. Enough for the UI's static files, which carry no data.
pub(crate) fn check_origin(req: &Request, port: u16) -> Result<(), Refusal> {
    let host = req
        .uri()
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            req.headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })
        .ok_or(Refusal::Host)?;
    if !loopback_authority(&host, port) {
        return Err(Refusal::Host);
    }
    for origin in req.headers().get_all(header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| Refusal::Origin)?;
        let Some(authority) = origin.strip_prefix("http://") else {
            return Err(Refusal::Origin);
        };
        if !loopback_authority(authority, port) || !authority.contains(':') {
            return Err(Refusal::Origin);
        }
    }
    Ok(())
}

/// `127.0.0.1`, `localhost` or `[::1]`, with this API's port when a port is given.
fn loopback_authority(authority: &str, port: u16) -> bool {
    let (host, given_port) = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, after)) => match after.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => return false,
            },
            None => return false,
        },
        None => match authority.split_once(':') {
            Some((host, p)) => (host, Some(p)),
            None => (authority, None),
        },
    };
    let host_ok = matches!(
        host.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "::1"
    );
    let port_ok = match given_port {
        None => true,
        Some(p) => p.parse::<u16>() == Ok(port),
    };
    host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::loopback_authority;

    #[test]
    fn only_loopback_names_with_our_port_pass() {
        for ok in [
            "127.0.0.1:9000",
            "localhost:9000",
            "[::1]:9000",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(loopback_authority(ok, 9000), "{ok}");
        }
        for bad in [
            "127.0.0.1:9001",
            "evil.example:9000",
            "127.0.0.1.evil.example:9000",
            "localhost.evil.example",
            "[::1]x",
            "0.0.0.0:9000",
            "",
        ] {
            assert!(!loopback_authority(bad, 9000), "{bad} must be refused");
        }
    }
}
