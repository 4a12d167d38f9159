//! The idempotency oracle: copies of one event sent straight at a developer's app, and whether
//! the handler behaved as if it had seen the event once. Two signals:
//!
//! - **responses** — every copy of one key should get the same answer: the same status class
//!   (a 200 then 500s means the handler tripped over its own earlier run) and the same body;
//! - **side effects** — with a *probe* (a URL the developer exposes that answers how many
//!   times the side effect ran: a number, or JSON `{"count": n}`), read before and after: the
//!   side effect should have run at most once per distinct key; more is the bug.
//!
//! Judging is pure ([`judge`]); only [`read_probe`] does I/O.

use super::{LabError, Target};
use crate::inject::CopyResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How long a probe may take to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the oracle concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct OracleReport {
    /// No extra side effect and no key answered differently.
    pub idempotent: bool,
    /// Requests sent.
    pub copies: usize,
    /// Distinct idempotency keys among them: the side effects expected, at most.
    pub keys: usize,
    /// How many times the side effect ran (the probe after minus before); `null` without a
    /// probe.
    pub side_effects: Option<u64>,
    /// Side effects beyond one per key.
    pub extra_side_effects: Option<u64>,
    /// Whether some key's copies got different status classes or different bodies.
    pub responses_differ: bool,
    /// How many copies got each status (`failed`: no answer).
    pub statuses: BTreeMap<String, usize>,
    /// The keys whose copies were answered differently, with what differed.
    pub inconsistent: Vec<Inconsistency>,
    /// One line for people, e.g. `NOT idempotent: 50 side effects for 50 copies; responses
    /// differ: 200×1, 500×49`.
    pub verdict: String,
}

/// One key whose copies did not all get the same answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Inconsistency {
    /// The key (`null`: requests without one, judged together).
    pub key: Option<String>,
    /// e.g. `status classes 2xx, 5xx` or `3 different bodies`.
    pub what: String,
}

/// The copies of one key, in the order they were sent.
#[derive(Debug, Clone, Copy)]
pub struct KeyCopies<'a> {
    pub key: Option<&'a str>,
    pub results: &'a [CopyResult],
}

/// The verdict on `groups` (copies grouped by key), given the probe's count before and after
/// when there is a probe.
pub fn judge(groups: &[KeyCopies<'_>], probe: Option<(u64, u64)>) -> OracleReport {
    let mut statuses = BTreeMap::new();
    let mut inconsistent = Vec::new();
    let mut copies = 0;
    let mut keys = std::collections::BTreeSet::new();
    for group in groups {
        copies += group.results.len();
        keys.insert(group.key);
        let mut classes = std::collections::BTreeSet::new();
        let mut bodies = std::collections::BTreeSet::new();
        for r in group.results {
            let status = r.status.map_or_else(|| "failed".into(), |s| s.to_string());
            *statuses.entry(status).or_insert(0) += 1;
            classes.insert(
                r.status
                    .map_or_else(|| "failed".into(), |s| format!("{}xx", s / 100)),
            );
            if let Some(hash) = &r.body_sha256 {
                bodies.insert(hash.as_str());
            }
        }
        let mut what = Vec::new();
        if classes.len() > 1 {
            let list: Vec<String> = classes.into_iter().collect();
            what.push(format!("status classes {}", list.join(", ")));
        }
        if bodies.len() > 1 {
            what.push(format!("{} different bodies", bodies.len()));
        }
        if !what.is_empty() {
            inconsistent.push(Inconsistency {
                key: group.key.map(str::to_string),
                what: what.join(" and "),
            });
        }
    }
    let keys = keys.len();
    let side_effects = probe.map(|(before, after)| after.saturating_sub(before));
    let extra = side_effects.map(|n| n.saturating_sub(keys as u64));
    let responses_differ = !inconsistent.is_empty();
    let idempotent = !responses_differ && extra.unwrap_or(0) == 0;
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut verdict = format!(
        "{}: ",
        if idempotent {
            "idempotent"
        } else {
            "NOT idempotent"
        }
    );
    let copies_text = match keys {
        0 | 1 => plural(copies as u64, "copy", "copies"),
        _ => plural(copies as u64, "request", "requests"),
    };
    let keys_text = if keys > 1 {
        format!(" of {keys} events")
    } else {
        String::new()
    };
    match side_effects {
        Some(n) => verdict.push_str(&format!(
            "{} for {copies_text}{keys_text}",
            plural(n, "side effect", "side effects")
        )),
        None => verdict.push_str(&format!(
            "{copies_text}{keys_text}, side effects not counted (no probe)"
        )),
    }
    let breakdown: Vec<String> = statuses.iter().map(|(s, n)| format!("{s}×{n}")).collect();
    if responses_differ {
        verdict.push_str(&format!("; responses differ: {}", breakdown.join(", ")));
    } else {
        verdict.push_str(&format!("; responses consistent: {}", breakdown.join(", ")));
    }
    OracleReport {
        idempotent,
        copies,
        keys,
        side_effects,
        extra_side_effects: extra,
        responses_differ,
        statuses,
        inconsistent,
        verdict,
    }
}

/// Reads the side-effect count at `probe` (`GET`; a number, or JSON `{"count": n}`).
pub async fn read_probe(probe: &Target) -> Result<u64, LabError> {
    let fail = |why: String| LabError::Probe(format!("the probe {}: {why}", probe.url));
    let request = probe.request_bytes(
        "GET",
        &[hooklab_core::request::Header::new(
            "Accept",
            "application/json, text/plain",
        )],
        b"",
    );
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(probe.addr()).await?;
        stream.write_all(&request).await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let response = tokio::time::timeout(PROBE_TIMEOUT, exchange)
        .await
        .map_err(|_| fail(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())))?
        .map_err(|e| fail(e.to_string()))?;
    parse_probe(&response).map_err(fail)
}

/// The count in a probe's whole HTTP response.
fn parse_probe(response: &[u8]) -> Result<u64, String> {
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer is not HTTP")?;
    let head = String::from_utf8_lossy(&response[..split]);
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if !status.starts_with('2') {
        return Err(format!("answered {status}, not 2xx"));
    }
    let chunked = head.lines().any(|l| {
        l.split_once(':').is_some_and(|(n, v)| {
            n.trim().eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")
        })
    });
    let raw = &response[split + 4..];
    let body = if chunked { dechunk(raw) } else { raw.to_vec() };
    let text = String::from_utf8_lossy(&body);
    let text = text.trim();
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| {
        format!(
            "answered `{}`, not a number or {{\"count\": n}}",
            clip(text)
        )
    })?;
    value
        .as_u64()
        .or_else(|| value.get("count").and_then(serde_json::Value::as_u64))
        .ok_or_else(|| {
            format!(
                "answered `{}`, not a number or {{\"count\": n}}",
                clip(text)
            )
        })
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

/// A chunked body's data.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        raw = &raw[line_end + 2..];
        if size == 0 || raw.len() < size {
            break;
        }
        out.extend_from_slice(&raw[..size]);
        raw = raw.get(size + 2..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(status: u16, body: &str) -> CopyResult {
        CopyResult {
            copy: 0,
            status: Some(status),
            latency_ms: 1.0,
            body_sha256: Some(body.into()),
            error: None,
        }
    }

    #[test]
    fn one_side_effect_and_the_same_answers_is_idempotent() {
        let copies = vec![copy(200, "a"); 50];
        let report = judge(
            &[KeyCopies {
                key: Some("evt_1"),
                results: &copies,
            }],
            Some((7, 8)),
        );
        assert!(report.idempotent, "{report:?}");
        assert_eq!(report.side_effects, Some(1));
        assert_eq!(report.extra_side_effects, Some(0));
        assert_eq!(
            report.verdict,
            "idempotent: 1 side effect for 50 copies; responses consistent: 200×50"
        );
    }

    #[test]
    fn a_side_effect_per_copy_and_a_200_then_500s_is_not() {
        let mut copies = vec![copy(200, "a")];
        copies.extend(vec![copy(500, "b"); 49]);
        let report = judge(
            &[KeyCopies {
                key: Some("evt_1"),
                results: &copies,
            }],
            Some((0, 50)),
        );
        assert!(!report.idempotent);
        assert_eq!(report.extra_side_effects, Some(49));
        assert_eq!(
            report.verdict,
            "NOT idempotent: 50 side effects for 50 copies; responses differ: 200×1, 500×49"
        );
        assert_eq!(
            report.inconsistent[0].what,
            "status classes 2xx, 5xx and 2 different bodies"
        );
    }

    #[test]
    fn different_bodies_alone_make_it_inconsistent_but_200_and_201_do_not() {
        let same_class = [copy(200, "a"), copy(201, "a")];
        let other_body = [copy(200, "a"), copy(200, "b")];
        let ok = judge(
            &[KeyCopies {
                key: Some("k"),
                results: &same_class,
            }],
            None,
        );
        assert!(ok.idempotent, "{ok:?}");
        assert!(ok.verdict.contains("no probe"), "{}", ok.verdict);
        let bad = judge(
            &[KeyCopies {
                key: Some("k"),
                results: &other_body,
            }],
            None,
        );
        assert!(!bad.idempotent);
        assert_eq!(bad.inconsistent[0].what, "2 different bodies");
    }

    #[test]
    fn each_key_may_have_its_own_answer_and_its_own_side_effect() {
        let a = [copy(200, "a"), copy(200, "a")];
        let b = [copy(200, "b"), copy(200, "b")];
        let groups = [
            KeyCopies {
                key: Some("evt_a"),
                results: &a,
            },
            KeyCopies {
                key: Some("evt_b"),
                results: &b,
            },
        ];
        let report = judge(&groups, Some((0, 2)));
        assert!(report.idempotent, "{report:?}");
        assert_eq!(report.keys, 2);
        let report = judge(&groups, Some((0, 3)));
        assert!(!report.idempotent);
        assert_eq!(report.extra_side_effects, Some(1));
        assert!(report.verdict.contains("of 2 events"), "{}", report.verdict);
    }

    #[test]
    fn probes_answer_a_number_or_a_count_object() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n42\n";
        assert_eq!(parse_probe(plain), Ok(42));
        let json = b"HTTP/1.1 200 OK\r\n\r\n{\"count\": 7, \"other\": 1}";
        assert_eq!(parse_probe(json), Ok(7));
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\nb\r\ncount\": 12}\r\n0\r\n\r\n";
        assert_eq!(parse_probe(chunked), Ok(12));
        assert!(parse_probe(b"HTTP/1.1 404 Not Found\r\n\r\n3").is_err());
        let err = parse_probe(b"HTTP/1.1 200 OK\r\n\r\nlots").unwrap_err();
        assert!(err.contains("not a number"), "{err}");
        assert!(parse_probe(b"garbage").is_err());
    }
}
