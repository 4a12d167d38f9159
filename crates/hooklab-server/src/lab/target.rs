//! Where the lab sends: an `http://HOST[:PORT]/PATH?QUERY` URL (no TLS client is built in: the
//! lab talks to a local app or receiver), and the exact HTTP/1.1 bytes of one request, headers
//! in the given order, `Connection: close`.

use super::LabError;
use hooklab_core::request::Header;

/// A parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    pub host: String,
    pub port: u16,
    /// The path and query, e.g. `/stripe?x=1` (`/` when the URL has none).
    pub path: String,
}

impl Target {
    /// Parses `http://HOST[:PORT]/PATH?QUERY`.
    pub fn parse(url: &str) -> Result<Self, LabError> {
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(LabError::BadUrl(format!(
                "the target must be an http:// URL (no TLS client is built in), not `{url}`"
            )));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('?') => (&rest[..i], format!("/{}", &rest[i..])),
            Some(i) => (&rest[..i], rest[i..].to_string()),
            None => (rest, "/".to_string()),
        };
        let bad_port = || LabError::BadUrl(format!("bad port in `{url}`"));
        // `[::1]:8080` keeps its brackets (they are what `connect` and `Host` want).
        let (host, port) = match authority.rfind(':') {
            Some(i) if !authority[i..].contains(']') => (
                authority[..i].to_string(),
                authority[i + 1..].parse().map_err(|_| bad_port())?,
            ),
            _ => (authority.to_string(), 80),
        };
        if host.is_empty() {
            return Err(LabError::BadUrl(format!("no host in `{url}`")));
        }
        if path.contains(['\r', '\n', ' ']) || host.contains(['\r', '\n', ' ', '/']) {
            return Err(LabError::BadUrl(format!(
                "`{url}` holds spaces or line breaks"
            )));
        }
        Ok(Self {
            url: url.to_string(),
            host,
            port,
            path,
        })
    }

    /// `host:port`, to connect to.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// One request as HTTP/1.1 bytes: `Host`, then `headers` in order (any `Host`,
    /// `Content-Length`, `Connection` or `Transfer-Encoding` among them left out), then the
    /// body's length and `Connection: close`.
    pub fn request_bytes(&self, method: &str, headers: &[Header], body: &[u8]) -> Vec<u8> {
        let mut bytes = format!(
            "{method} {} HTTP/1.1\r\nHost: {}:{}\r\n",
            self.path, self.host, self.port
        )
        .into_bytes();
        for h in headers {
            let hop = ["host", "content-length", "connection", "transfer-encoding"]
                .iter()
                .any(|n| h.name.eq_ignore_ascii_case(n));
            if hop {
                continue;
            }
            bytes.extend_from_slice(h.name.as_bytes());
            bytes.extend_from_slice(b": ");
            bytes.extend_from_slice(&h.value);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(
            format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        bytes.extend_from_slice(body);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_and_https_is_refused_with_a_reason() {
        let t = Target::parse("http://127.0.0.1:8787/stripe?x=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8787, "/stripe?x=1")
        );
        let t = Target::parse("http://localhost").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("localhost", 80, "/")
        );
        let t = Target::parse("http://localhost:3000?a=b").unwrap();
        assert_eq!(t.path, "/?a=b");
        let err = Target::parse("https://x").unwrap_err().to_string();
        assert!(err.contains("http://"), "{err}");
        assert!(Target::parse("http://:80/x").is_err());
        assert!(Target::parse("http://h:notaport/x").is_err());
        assert!(
            Target::parse("http://h/x y").is_err(),
            "no request smuggling"
        );
    }

    #[test]
    fn request_bytes_keep_header_order_and_drop_hop_by_hop_headers() {
        let t = Target::parse("http://127.0.0.1:9/x").unwrap();
        let bytes = t.request_bytes(
            "POST",
            &[
                Header::new("B", "2"),
                Header::new("Content-Length", "999"),
                Header::new("A", "1"),
            ],
            b"hi",
        );
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "POST /x HTTP/1.1\r\nHost: 127.0.0.1:9\r\nB: 2\r\nA: 1\r\nContent-Length: 2\r\n\
             Connection: close\r\n\r\nhi"
        );
    }
}
