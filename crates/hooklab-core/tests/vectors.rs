//! Every vector in `tests/fixtures/signatures.json` (taken from the providers' SDK test suites
//! and docs) gives its expected verdict through the library's `verify`.

use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verify::{VerifyConfig, verify};

#[derive(serde::Deserialize)]
struct Vector {
    provider: String,
    source: String,
    secret: String,
    headers: serde_json::Map<String, serde_json::Value>,
    body: String,
    url: Option<String>,
    now: Option<i64>,
    expect: String,
    note: String,
}

fn vectors() -> Vec<Vector> {
    serde_json::from_str(include_str!("../../../tests/fixtures/signatures.json"))
        .expect("the fixture is valid JSON")
}

fn request(v: &Vector) -> RawRequest {
    let headers = v.headers.iter().map(|(name, value)| {
        (
            name.clone(),
            value
                .as_str()
                .expect("header values are strings")
                .as_bytes()
                .to_vec(),
        )
    });
    let path = v
        .url
        .as_deref()
        .and_then(|u| u.split_once("://"))
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
        .unwrap_or_else(|| "/".into());
    let mut r = RawRequest::post(&path, headers, v.body.as_bytes().to_vec());
    r.url = v.url.clone();
    r
}

#[test]
fn every_vector_gives_its_expected_verdict() {
    let mut failures = Vec::new();
    let all = vectors();
    assert!(all.len() >= 60, "the fixture holds the full vector set");
    for (i, v) in all.iter().enumerate() {
        let provider: ProviderId = v.provider.parse().expect("vector provider ids are valid");
        let config = VerifyConfig::new(provider, vec![Secret::new(&v.secret)]);
        let now = v.now.map_or_else(UnixMillis::now, UnixMillis::from_secs);
        let verdict = verify(&config, &request(v), now);
        if verdict.verdict.as_str() != v.expect {
            failures.push(format!(
                "#{i} {} expected {} got {} ({:?}: {}) — {} [{}]",
                v.provider,
                v.expect,
                verdict.verdict.as_str(),
                verdict.reason,
                verdict.summary,
                v.note,
                v.source
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "vectors failing:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_provider_id_has_a_vector_or_is_configurable() {
    let all = vectors();
    for id in ProviderId::ALL {
        let covered = all.iter().any(|v| v.provider == id.as_str());
        let configurable = matches!(id, ProviderId::GenericHmac | ProviderId::Token);
        assert!(
            covered || configurable,
            "{id} has no vector in the fixture: add one"
        );
    }
}
