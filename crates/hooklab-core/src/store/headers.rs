//! How a delivery's (and a forward attempt's response) headers are stored, by both engines
//! (SQLite here, PostgreSQL in `hooklab-postgres`): one JSON array of `[name, value]` pairs, in
//! arrival order, duplicates kept, names in the case they arrived with. A value that is UTF-8 is a JSON
//! string; any other value is `{"base64": …}` ([`crate::request::bytes_as_lossless`]), so the
//! column round-trips byte-exact yet stays readable with the `sqlite3` shell or `psql` and
//! queryable with `json_each`. One format for both engines: a row moves between them unchanged. The pairs are this module's own format, not `Header`'s serde shape, so a change
//! to `Header` cannot silently change what is on disk.

use crate::request::{Header, bytes_as_lossless};
use serde::{Deserialize, Serialize};

/// One pair as written.
#[derive(Serialize)]
struct StoredRef<'a>(&'a str, #[serde(with = "bytes_as_lossless")] &'a [u8]);

/// One pair as read.
#[derive(Deserialize)]
struct Stored(String, #[serde(with = "bytes_as_lossless")] Vec<u8>);

/// Encodes headers for the `headers` column.
pub fn encode(headers: &[Header]) -> String {
    let pairs: Vec<StoredRef<'_>> = headers
        .iter()
        .map(|h| StoredRef(&h.name, &h.value))
        .collect();
    // Serialising strings and byte slices into a String cannot fail.
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into())
}

/// Decodes the `headers` column; an error says what is wrong with it.
pub fn decode(text: &str) -> Result<Vec<Header>, serde_json::Error> {
    let pairs: Vec<Stored> = serde_json::from_str(text)?;
    Ok(pairs
        .into_iter()
        .map(|Stored(name, value)| Header { name, value })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_order_duplicates_case_and_binary_values() {
        let headers = vec![
            Header::new("X-Dup", "1"),
            Header::new("content-TYPE", "application/json"),
            Header::new("x-dup", "2"),
            Header::new("X-Bin", vec![0xff, 0x00, b'a', 0xc3]),
            Header::new("X-Empty", ""),
        ];
        let text = encode(&headers);
        assert_eq!(
            decode(&text).unwrap(),
            headers,
            "order, duplicates, name case and non-UTF-8 bytes must survive storage"
        );
        assert!(
            text.starts_with(r#"[["X-Dup","1"],["content-TYPE""#),
            "the stored form stays readable: {text}"
        );
    }

    #[test]
    fn the_exact_text_on_disk() {
        // Both engines write this; a change here breaks moving rows between them.
        let headers = vec![Header::new("X-Dup", "1"), Header::new("X-Bin", vec![0xff])];
        assert_eq!(
            encode(&headers),
            r#"[["X-Dup","1"],["X-Bin",{"base64":"/w=="}]]"#
        );
    }

    #[test]
    fn a_utf8_value_that_looks_like_json_stays_a_string() {
        let headers = vec![Header::new("X-Json", r#"{"base64":"AAAA"}"#)];
        assert_eq!(decode(&encode(&headers)).unwrap(), headers);
    }

    #[test]
    fn damaged_column_is_an_error_not_a_panic() {
        assert!(decode("not json").is_err());
        assert!(decode(r#"[["a",{"base64":"!!"}]]"#).is_err());
    }

    proptest! {
        #[test]
        fn any_headers_round_trip(
            raw in proptest::collection::vec((".{0,12}", proptest::collection::vec(any::<u8>(), 0..24)), 0..8)
        ) {
            let headers: Vec<Header> = raw.into_iter().map(|(n, v)| Header::new(n, v)).collect();
            prop_assert_eq!(decode(&encode(&headers)).unwrap(), headers);
        }
    }
}
