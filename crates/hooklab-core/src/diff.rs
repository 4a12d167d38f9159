//! A byte-level diff between two deliveries: what a replay, a proxy or a re-serialising
//! middleware changed. Headers are compared in arrival order (a header that moved counts as
//! removed and added: order is part of what was received); bodies byte by byte (Myers, with a
//! deadline so two large unrelated bodies cannot stall the caller).

use crate::request::Header;
use serde::Serialize;
use similar::{Algorithm, DiffOp};
use std::time::{Duration, Instant};

/// How long the body diff may search for the smallest edit before settling for a coarser one.
const DEADLINE: Duration = Duration::from_millis(500);

/// Two deliveries' differences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DeliveryDiff {
    /// Whether method, path, query, headers and body are all byte-identical.
    pub identical: bool,
    /// `[a, b]` when they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<[Option<String>; 2]>,
    /// Every header of both, in arrival order, marked equal, removed (only in `a`) or added
    /// (only in `b`).
    pub headers: Vec<HeaderChange>,
    pub body: BodyDiff,
}

/// One header line in the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HeaderChange {
    pub change: Change,
    pub name: String,
    /// The value as text (invalid UTF-8 shown as U+FFFD).
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Equal,
    /// Only in the first delivery.
    Removed,
    /// Only in the second delivery.
    Added,
}

/// The bodies' differences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BodyDiff {
    pub identical: bool,
    pub a_size: usize,
    pub b_size: usize,
    /// Offset of the first byte that differs (or where the shorter body ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<usize>,
    /// Bytes only in `a`, and only in `b`.
    pub removed_bytes: usize,
    pub added_bytes: usize,
    /// The edit from `a` to `b`, in order: equal runs, removed runs, added runs.
    pub chunks: Vec<Chunk>,
}

/// A run of bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Chunk {
    pub change: Change,
    /// Where the run starts in `a` (equal, removed) or in `b` (added).
    pub offset: usize,
    pub len: usize,
    /// The bytes as text: printable ASCII and valid UTF-8 as is, anything else as `\xNN`.
    pub text: String,
}

/// Compares two requests: `(method, path, query, headers, body)` of each.
pub fn deliveries(a: Request<'_>, b: Request<'_>) -> DeliveryDiff {
    let differs = |x: &str, y: &str| (x != y).then(|| [x.to_string(), y.to_string()]);
    let method = differs(a.method, b.method);
    let path = differs(a.path, b.path);
    let query =
        (a.query != b.query).then(|| [a.query.map(str::to_string), b.query.map(str::to_string)]);
    let headers = headers(a.headers, b.headers);
    let body = bytes(a.body, b.body);
    let identical = method.is_none()
        && path.is_none()
        && query.is_none()
        && headers.iter().all(|h| h.change == Change::Equal)
        && body.identical;
    DeliveryDiff {
        identical,
        method,
        path,
        query,
        headers,
        body,
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub headers: &'a [Header],
    pub body: &'a [u8],
}

impl<'a> Request<'a> {
    /// A recorded delivery's side.
    pub fn of(r: &'a crate::store::NewDelivery) -> Self {
        Self {
            method: &r.method,
            path: &r.path,
            query: r.query.as_deref(),
            headers: &r.headers,
            body: &r.body,
        }
    }
}

/// One run of the edit script: its change, its range in `a` (empty when added) and in `b`
/// (empty when removed). A replacement is a removal then an addition.
struct Run {
    change: Change,
    a: std::ops::Range<usize>,
    b: std::ops::Range<usize>,
}

fn runs(ops: &[DiffOp]) -> Vec<Run> {
    let run = |change, a: usize, a_len: usize, b: usize, b_len: usize| Run {
        change,
        a: a..a + a_len,
        b: b..b + b_len,
    };
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => out.push(run(Change::Equal, old_index, len, new_index, len)),
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => out.push(run(Change::Removed, old_index, old_len, new_index, 0)),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => out.push(run(Change::Added, old_index, 0, new_index, new_len)),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                out.push(run(Change::Removed, old_index, old_len, new_index, 0));
                out.push(run(
                    Change::Added,
                    old_index + old_len,
                    0,
                    new_index,
                    new_len,
                ));
            }
        }
    }
    out
}

/// Headers in arrival order; names compared case-insensitively, values exactly.
pub fn headers(a: &[Header], b: &[Header]) -> Vec<HeaderChange> {
    let key = |h: &Header| (h.name.to_ascii_lowercase(), h.value.clone());
    let a_keys: Vec<_> = a.iter().map(key).collect();
    let b_keys: Vec<_> = b.iter().map(key).collect();
    let ops = similar::capture_diff_slices(Algorithm::Myers, &a_keys, &b_keys);
    let line = |change, h: &Header| HeaderChange {
        change,
        name: h.name.clone(),
        value: String::from_utf8_lossy(&h.value).into_owned(),
    };
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    for run in runs(&ops) {
        // Equal and added lines as `b` has them (the names' case may differ), removed as `a`.
        let lines = match run.change {
            Change::Removed => &a[run.a],
            Change::Equal | Change::Added => &b[run.b],
        };
        out.extend(lines.iter().map(|h| line(run.change, h)));
    }
    out
}

/// Two byte strings' edit script.
pub fn bytes(a: &[u8], b: &[u8]) -> BodyDiff {
    let identical = a == b;
    let first_difference = (!identical).then(|| {
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()))
    });
    let ops = if identical {
        vec![DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: a.len(),
        }]
    } else {
        similar::capture_diff_slices_deadline(
            Algorithm::Myers,
            a,
            b,
            Some(Instant::now() + DEADLINE),
        )
    };
    let mut chunks = Vec::with_capacity(ops.len());
    let (mut removed_bytes, mut added_bytes) = (0, 0);
    let mut push = |change, offset: usize, run: &[u8]| {
        if run.is_empty() {
            return;
        }
        match change {
            Change::Removed => removed_bytes += run.len(),
            Change::Added => added_bytes += run.len(),
            Change::Equal => {}
        }
        chunks.push(Chunk {
            change,
            offset,
            len: run.len(),
            text: escape(run),
        });
    };
    for run in runs(&ops) {
        match run.change {
            Change::Equal | Change::Removed => push(run.change, run.a.start, &a[run.a]),
            Change::Added => push(run.change, run.b.start, &b[run.b]),
        }
    }
    BodyDiff {
        identical,
        a_size: a.len(),
        b_size: b.len(),
        first_difference,
        removed_bytes,
        added_bytes,
        chunks,
    }
}

/// Bytes as text: valid UTF-8 kept (control characters but `\n`, `\r`, `\t` escaped), every
/// other byte as `\xNN`, so what is shown is unambiguous.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' | '\r' | '\t' => out.push(c),
                c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuild(diff: &BodyDiff, side: Change) -> String {
        diff.chunks
            .iter()
            .filter(|c| c.change == Change::Equal || c.change == side)
            .map(|c| c.text.as_str())
            .collect()
    }

    #[test]
    fn identical_bodies_are_one_equal_run() {
        let d = bytes(b"{\"a\":1}", b"{\"a\":1}");
        assert!(d.identical);
        assert_eq!(d.first_difference, None);
        assert_eq!(d.chunks.len(), 1);
        assert_eq!((d.removed_bytes, d.added_bytes), (0, 0));
    }

    #[test]
    fn a_changed_byte_is_one_removed_and_one_added_byte_at_its_offset() {
        let d = bytes(b"{\"amount\":2000}", b"{\"amount\":2001}");
        assert!(!d.identical);
        assert_eq!(d.first_difference, Some(13));
        assert_eq!((d.removed_bytes, d.added_bytes), (1, 1));
        let removed = d
            .chunks
            .iter()
            .find(|c| c.change == Change::Removed)
            .unwrap();
        assert_eq!((removed.offset, removed.text.as_str()), (13, "0"));
        assert_eq!(rebuild(&d, Change::Removed), "{\"amount\":2000}");
        assert_eq!(rebuild(&d, Change::Added), "{\"amount\":2001}");
    }

    #[test]
    fn re_serialised_json_shows_only_whitespace_added() {
        let d = bytes(b"{\"a\":1,\"b\":2}", b"{\"a\": 1, \"b\": 2}\n");
        assert_eq!(d.removed_bytes, 0);
        assert_eq!(d.added_bytes, 4, "three spaces and a newline");
        assert!(
            d.chunks
                .iter()
                .filter(|c| c.change == Change::Added)
                .all(|c| c.text.trim().is_empty())
        );
    }

    #[test]
    fn non_utf8_bytes_are_escaped_and_a_prefix_is_a_difference_at_its_end() {
        let d = bytes(b"ab\xff", b"ab");
        assert_eq!(d.first_difference, Some(2));
        let removed = d
            .chunks
            .iter()
            .find(|c| c.change == Change::Removed)
            .unwrap();
        assert_eq!(removed.text, "\\xff");
        assert_eq!(escape(b"a\\b\x01"), "a\\\\b\\u{1}");
    }

    #[test]
    fn headers_keep_arrival_order_and_show_moves_and_changed_values() {
        let a = [
            Header::new("Content-Type", "application/json"),
            Header::new("Stripe-Signature", "t=1,v1=aa"),
            Header::new("X-Same", "1"),
        ];
        let b = [
            Header::new("content-type", "application/json"),
            Header::new("Stripe-Signature", "t=2,v1=bb"),
            Header::new("X-Same", "1"),
            Header::new("X-Hooklab-Replay-Of", "7"),
        ];
        let changes = headers(&a, &b);
        let summary: Vec<_> = changes
            .iter()
            .map(|h| (h.change, h.name.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (Change::Equal, "content-type"),
                (Change::Removed, "Stripe-Signature"),
                (Change::Added, "Stripe-Signature"),
                (Change::Equal, "X-Same"),
                (Change::Added, "X-Hooklab-Replay-Of"),
            ]
        );
    }

    #[test]
    fn two_large_unrelated_bodies_finish() {
        let a: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let b: Vec<u8> = (0..200_000u32).map(|i| (i * 13 % 241) as u8).collect();
        let d = bytes(&a, &b);
        assert!(!d.identical);
        let covered = |side| {
            d.chunks
                .iter()
                .filter(|c| c.change == Change::Equal || c.change == side)
                .map(|c| c.len)
                .sum::<usize>()
        };
        assert_eq!(covered(Change::Removed), a.len());
        assert_eq!(covered(Change::Added), b.len());
    }

    #[test]
    fn whole_requests_compare_every_part() {
        let h = [Header::new("A", "1")];
        let a = Request {
            method: "POST",
            path: "/stripe",
            query: None,
            headers: &h,
            body: b"x",
        };
        assert!(deliveries(a, a).identical);
        let b = Request {
            path: "/stripe/v2",
            query: Some("x=1"),
            ..a
        };
        let d = deliveries(a, b);
        assert!(!d.identical);
        assert_eq!(d.path, Some(["/stripe".into(), "/stripe/v2".into()]));
        assert_eq!(d.query, Some([None, Some("x=1".into())]));
        assert_eq!(d.method, None);
        assert!(d.body.identical);
    }
}
