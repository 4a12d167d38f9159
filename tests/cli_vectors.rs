//! Every vector in `tests/fixtures/signatures.json` gives its expected verdict through the
//! binary: `hooklab verify --json`, with the exit status to match (0 valid, 1 otherwise).

use std::process::Command;

#[derive(serde::Deserialize)]
struct Vector {
    provider: String,
    secret: String,
    headers: serde_json::Map<String, serde_json::Value>,
    body: String,
    url: Option<String>,
    now: Option<i64>,
    expect: String,
}

#[test]
fn every_vector_through_hooklab_verify() {
    let vectors: Vec<Vector> =
        serde_json::from_str(include_str!("fixtures/signatures.json")).expect("valid fixture");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, v) in vectors.iter().enumerate() {
        let body_file = dir.path().join(format!("body-{i}"));
        std::fs::write(&body_file, v.body.as_bytes()).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hooklab"));
        cmd.args([
            "verify",
            "--json",
            "--provider",
            &v.provider,
            "--secret",
            &v.secret,
        ])
        .arg("--body-file")
        .arg(&body_file);
        for (name, value) in &v.headers {
            cmd.arg("--header")
                .arg(format!("{name}: {}", value.as_str().unwrap()));
        }
        if let Some(url) = &v.url {
            cmd.args(["--url", url]);
        }
        if let Some(now) = v.now {
            cmd.args(["--now", &now.to_string()]);
        }
        let out = cmd.output().expect("hooklab runs");
        let json: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(j) => j,
            Err(e) => {
                failures.push(format!(
                    "#{i} {}: no JSON ({e}); stderr: {}",
                    v.provider,
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
        };
        let verdict = json["verdict"].as_str().unwrap_or_default();
        let expected_code = if v.expect == "valid" { 0 } else { 1 };
        if verdict != v.expect || out.status.code() != Some(expected_code) {
            failures.push(format!(
                "#{i} {}: expected {} got {verdict} (exit {:?}): {}",
                v.provider,
                v.expect,
                out.status.code(),
                json["summary"]
            ));
        }
        assert!(
            json.get("reason").is_some() && json.get("diagnosis").is_some(),
            "the JSON verdict always carries reason and diagnosis keys"
        );
    }
    assert!(
        failures.is_empty(),
        "vectors failing through the CLI:\n{}",
        failures.join("\n")
    );
}

#[test]
fn verify_usage_errors_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_hooklab"))
        .args(["verify", "--provider", "not-a-provider", "--body", "x"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown provider is a usage error"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stripe"),
        "the error lists valid providers: {stderr}"
    );
}

#[test]
fn secrets_never_appear_in_verify_output() {
    let secret = "whsec_do_not_print_me";
    for json in [true, false] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hooklab"));
        cmd.args(["verify", "--provider", "stripe", "--secret", secret])
            .args(["--header", "Stripe-Signature: t=1,v1=00", "--body", "{}"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !all.contains("do_not_print_me"),
            "no secret in output: {all}"
        );
    }
}
