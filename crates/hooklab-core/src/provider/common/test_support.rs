//! Shared checks for provider unit tests: the fixture vectors, sign→check round trips and
//! tampering.

use crate::clock::UnixMillis;
use crate::provider::{Check, CheckError, Scheme, SignInput};
use crate::request::RawRequest;
use crate::secret::Secret;
use crate::verify::{TimeCheck, time_check};

const VECTORS: &str = include_str!("../../../../../tests/fixtures/signatures.json");

/// A POST to `/hook` with these headers and body.
pub(crate) fn request(headers: &[(&str, &str)], body: &[u8]) -> RawRequest {
    RawRequest::post("/hook", headers.iter().copied(), body.to_vec())
}

/// Runs every fixture vector of `provider` through `key`, `check` and the default tolerance
/// at the vector's `now`, and panics listing those whose verdict differs. Returns the count.
pub(crate) fn run_vectors(provider: &str, scheme: &dyn Scheme) -> usize {
    let all: Vec<serde_json::Value> = serde_json::from_str(VECTORS).expect("fixture file is JSON");
    let mut failures = Vec::new();
    let mut count = 0;
    for (i, v) in all.iter().enumerate() {
        if v["provider"] != provider {
            continue;
        }
        count += 1;
        let headers: Vec<(String, String)> = v["headers"]
            .as_object()
            .map(|m| {
                let text = |x: &serde_json::Value| x.as_str().unwrap_or_default().to_string();
                m.iter().map(|(k, x)| (k.clone(), text(x))).collect()
            })
            .unwrap_or_default();
        let body = v["body"].as_str().unwrap_or_default().as_bytes().to_vec();
        let mut req = RawRequest::post("/hook", headers, body);
        if let Some(url) = v["url"].as_str() {
            req = req.with_url(url);
        }
        let now = v["now"].as_i64().map(UnixMillis::from_secs);
        let secret = Secret::new(v["secret"].as_str().unwrap_or_default());
        let valid = scheme.key(&secret).is_ok_and(|key| {
            scheme.check(&req, &key).is_ok_and(|c| {
                c.matched
                    && match (c.timestamp, now) {
                        (Some(ts), Some(now)) => {
                            time_check(scheme.info().tolerance, ts, now) == TimeCheck::Within
                        }
                        _ => true,
                    }
            })
        });
        if valid != (v["expect"] == "valid") {
            failures.push(format!("#{i} expected {} ({})", v["expect"], v["note"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{provider} vectors failed: {failures:#?}"
    );
    count
}

/// Signs `body`, checks it matches, then checks that one flipped body byte and one changed
/// signature character (in `signature_header`) do not.
pub(crate) fn assert_round_trip(
    scheme: &dyn Scheme,
    secret: &str,
    body: &[u8],
    signature_header: &str,
) {
    let now = UnixMillis::from_secs(1_700_000_000);
    let key = scheme
        .key(&Secret::new(secret))
        .expect("test secret is usable");
    let signed = scheme
        .sign(&SignInput::new(body, now), &key)
        .expect("signing succeeds");
    let body = signed.body.clone().unwrap_or_else(|| body.to_vec());
    let req = RawRequest::post("/hook", signed.headers_as_pairs(), body.clone());
    let check = scheme
        .check(&req, &key)
        .expect("signed request is readable");
    assert!(check.matched, "what we sign must verify: {signed:?}");
    if let Some(ts) = check.timestamp {
        let tolerance = scheme.info().tolerance;
        assert_eq!(
            time_check(tolerance, ts, now),
            TimeCheck::Within,
            "signed now"
        );
    }

    let mut tampered = req.clone();
    let mid = tampered.body.len() / 2;
    tampered.body[mid] ^= 0x01;
    assert_not_matched(scheme.check(&tampered, &key), "a flipped body byte");

    let mut tampered = req.clone();
    let header = tampered
        .headers
        .iter_mut()
        .find(|h| h.name.eq_ignore_ascii_case(signature_header))
        .expect("the signature header is signed");
    let at = header.value.len() - 5;
    header.value[at] = match header.value[at] {
        b'0' => b'1',
        b'1'..=b'9' => b'0',
        b'a' => b'b',
        b'b'..=b'z' => b'a',
        b'A' => b'B',
        _ => b'A',
    };
    assert_not_matched(
        scheme.check(&tampered, &key),
        "a changed signature character",
    );
}

fn assert_not_matched(result: Result<Check, CheckError>, what: &str) {
    match result {
        Ok(c) => assert!(!c.matched, "{what} must not verify"),
        Err(e) => panic!("{what} must read as a mismatch, not {e}"),
    }
}
