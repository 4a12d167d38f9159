//! The raw request, exactly as it arrived. Everything downstream (verification, storage,
//! replay) reads from this; nothing ever re-encodes the body or normalises header order.

use serde::{Deserialize, Serialize};

/// One header line. The name keeps the case it arrived with (where the transport preserves it);
/// the value is bytes, because HTTP allows non-UTF-8 header values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Header {
    pub name: String,
    #[serde(with = "bytes_as_lossless")]
    #[schemars(with = "LosslessBytes")]
    pub value: Vec<u8>,
}

impl Header {
    pub fn new(name: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }

    /// The value as text, or `None` when it is not UTF-8.
    pub fn value_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.value).ok()
    }
}

/// A request as received: method, target, headers in arrival order (with duplicates), body bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawRequest {
    pub method: String,
    /// The path as sent, without the query string (e.g. `/stripe/hooks`).
    pub path: String,
    /// The raw query string without the leading `?`, as sent.
    pub query: Option<String>,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
    /// The absolute URL the sender signed against, for URL-signed providers (Twilio, Square,
    /// Mercado Pago): the public URL when a tunnel or proxy sits in front of the receiver.
    pub url: Option<String>,
}

impl RawRequest {
    /// A POST with the given headers and body; `path` may carry a `?query`.
    pub fn post<N: Into<String>, V: Into<Vec<u8>>>(
        path: &str,
        headers: impl IntoIterator<Item = (N, V)>,
        body: Vec<u8>,
    ) -> Self {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (path.to_string(), None),
        };
        Self {
            method: "POST".into(),
            path,
            query,
            headers: headers
                .into_iter()
                .map(|(n, v)| Header::new(n, v))
                .collect(),
            body,
            url: None,
        }
    }

    /// With the absolute URL the sender signed (builder style).
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// The first header with this name (ASCII case-insensitive), as bytes.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_slice())
    }

    /// The first header with this name, as text; `None` when absent or not UTF-8.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Every header with this name, in arrival order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_slice())
    }

    /// The query string's `key=value` pairs, percent-decoded (`+` as space).
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        let query = match (&self.query, &self.url) {
            (Some(q), _) => q.as_str(),
            (None, Some(url)) => url.split_once('?').map(|(_, q)| q).unwrap_or(""),
            (None, None) => "",
        };
        parse_form(query.as_bytes())
    }
}

/// Parses `application/x-www-form-urlencoded` bytes into pairs, in order. Invalid
/// percent-escapes are kept literally; non-UTF-8 bytes are replaced, never a panic.
pub fn parse_form(input: &[u8]) -> Vec<(String, String)> {
    input
        .split(|&b| b == b'&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut it = part.splitn(2, |&b| b == b'=');
            let k = it.next().unwrap_or_default();
            let v = it.next().unwrap_or_default();
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// Percent-decodes one form component (`+` is a space).
pub fn percent_decode(input: &[u8]) -> String {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < input.len() => match (hex_val(input[i + 1]), hex_val(input[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Header values serialise as a string when they are UTF-8 and as `{"base64": …}` otherwise,
/// so JSON output stays readable without losing a byte.
/// How bytes are written in JSON (the schema of [`bytes_as_lossless`]): the text when it is
/// UTF-8, else `{"base64": …}`.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
pub enum LosslessBytes {
    Text(String),
    Binary { base64: String },
}

pub mod bytes_as_lossless {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(v) {
            Ok(text) => s.serialize_str(text),
            Err(_) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry(
                    "base64",
                    &base64::engine::general_purpose::STANDARD.encode(v),
                )?;
                m.end()
            }
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Text(String),
        Binary { base64: String },
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Text(t) => Ok(t.into_bytes()),
            Repr::Binary { base64 } => base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lookup_is_case_insensitive_and_keeps_duplicates() {
        let r = RawRequest::post("/x?a=1", [("X-A", "1"), ("x-b", "2"), ("x-a", "3")], vec![]);
        assert_eq!(r.header_str("x-a"), Some("1"));
        assert_eq!(r.headers_named("X-A").count(), 2);
        assert_eq!(r.query.as_deref(), Some("a=1"));
    }

    #[test]
    fn form_parsing_never_panics_on_bad_escapes() {
        assert_eq!(
            parse_form(b"a=%zz&b=%4&c=%41+b&d"),
            vec![
                ("a".into(), "%zz".into()),
                ("b".into(), "%4".into()),
                ("c".into(), "A b".into()),
                ("d".into(), "".into())
            ]
        );
    }
}
