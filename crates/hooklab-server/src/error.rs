//! Why the server could not start, in words that say what to do next.
//!
//! Per-request failures never become a `ServerError`: the receiver answers them itself (a
//! generic 503 when storage fails) and logs the cause.

use crate::config::ConfigError;
use std::io;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{}", bind_message(addr, source))]
    Bind {
        /// `host:port` as configured.
        addr: String,
        #[source]
        source: io::Error,
    },
    /// The server task ended abnormally (a panic in the accept loop).
    #[error("the receiver stopped unexpectedly: {0}")]
    Crashed(String),
}

fn bind_message(addr: &str, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::AddrInUse => format!(
            "cannot listen on {addr}: the port is already in use (another Hooklab?); \
             stop that process or choose another port with --port (0 picks a free one)"
        ),
        io::ErrorKind::PermissionDenied => format!(
            "cannot listen on {addr}: permission denied; ports below 1024 need privileges, \
             choose one above 1024 with --port"
        ),
        io::ErrorKind::AddrNotAvailable => format!(
            "cannot listen on {addr}: that address does not belong to this machine; use \
             --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"
        ),
        _ => format!("cannot listen on {addr}: {e}; check --host and --port"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_errors_say_what_to_do() {
        let e = ServerError::Bind {
            addr: "127.0.0.1:80".into(),
            source: io::Error::from(io::ErrorKind::AddrInUse),
        };
        assert!(e.to_string().contains("--port"), "{e}");
        let e = ServerError::Bind {
            addr: "10.9.9.9:1".into(),
            source: io::Error::from(io::ErrorKind::AddrNotAvailable),
        };
        assert!(e.to_string().contains("--host"), "{e}");
    }
}
