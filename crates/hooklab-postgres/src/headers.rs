//! A delivery's headers as stored: the same JSON array of `[name, value]` pairs as the SQLite
//! engine writes (UTF-8 values as strings, others as `{"base64": …}`), so a row moves between
//! the engines unchanged and stays readable with `psql`.

use hooklab_core::request::{Header, bytes_as_lossless};
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
struct StoredRef<'a>(&'a str, #[serde(with = "bytes_as_lossless")] &'a [u8]);

#[derive(Deserialize)]
struct Stored(String, #[serde(with = "bytes_as_lossless")] Vec<u8>);

pub(crate) fn encode(headers: &[Header]) -> String {
    let pairs: Vec<StoredRef<'_>> = headers
        .iter()
        .map(|h| StoredRef(&h.name, &h.value))
        .collect();
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into())
}

pub(crate) fn decode(text: &str) -> Result<Vec<Header>, serde_json::Error> {
    let pairs: Vec<Stored> = serde_json::from_str(text)?;
    Ok(pairs
        .into_iter()
        .map(|Stored(name, value)| Header { name, value })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_as_the_sqlite_engine() {
        let headers = vec![Header::new("X-Dup", "1"), Header::new("X-Bin", vec![0xff])];
        let text = encode(&headers);
        assert_eq!(text, r#"[["X-Dup","1"],["X-Bin",{"base64":"/w=="}]]"#);
        assert_eq!(decode(&text).unwrap(), headers);
    }
}
