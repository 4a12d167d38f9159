//! `hooklab run`: scenario files run headless, as in CI. The example duplicate race passes
//! against the lab's idempotent test app and fails (exit 1, a JUnit failure) against the naive
//! one; the example reorder scenario passes through a real `hooklab listen`, its final states
//! and empty dead-letter queue read from the receiver's database, and fails when an
//! expectation is wrong.

mod common;

use common::{BIN, Listener};
use hooklab_server::lab::app::{AppMode, AppOptions, serve};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/scenarios")
        .join(name)
}

/// The lab's test app on a free port (a real HTTP server); its base URL.
async fn app(mode: AppMode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve(
        listener,
        AppOptions::new(mode),
        std::future::pending(),
    ));
    format!("http://127.0.0.1:{port}")
}

/// `hooklab run ARGS…` on a blocking thread (the app answers on the test's runtime).
async fn hooklab_run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .arg("run")
            .args(&args)
            .env_remove("HOOKLAB_DB")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// The `<testcase …>…</testcase>` named `name` in a JUnit document.
fn testcase<'a>(xml: &'a str, name: &str) -> &'a str {
    let start = xml
        .find(&format!("name=\"{name}\""))
        .unwrap_or_else(|| panic!("no testcase {name} in {xml}"));
    let end = xml[start..].find("</testcase>").unwrap() + start;
    &xml[start..end]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_duplicate_race_passes_on_an_idempotent_app_and_fails_on_a_naive_one() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, passes, side_effects) in
        [(AppMode::Idempotent, true, 1), (AppMode::Naive, false, 23)]
    {
        let base = app(mode).await;
        let junit = dir.path().join(format!("{mode:?}.xml"));
        let out = hooklab_run(vec![
            example("duplicate-race.toml").display().to_string(),
            "--target".into(),
            format!("{base}/webhooks"),
            "--probe".into(),
            format!("{base}/count"),
            "--junit".into(),
            junit.display().to_string(),
            "--json".into(),
        ])
        .await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), passes, "{mode:?}: {stderr}");
        assert_eq!(out.status.code(), Some(if passes { 0 } else { 1 }));
        assert!(
            stderr.contains("checking expectations"),
            "progress on stderr: {stderr}"
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["oracle"]["copies"], 23, "20 racing + 3 sequential");
        assert_eq!(report["oracle"]["keys"], 1);
        assert_eq!(report["oracle"]["side_effects"], side_effects, "{mode:?}");

        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(
            xml.contains("<testsuite name=\"duplicate-race\" tests=\"3\""),
            "{xml}"
        );
        let once = testcase(&xml, "handler_ran_once_per_key");
        let consistent = testcase(&xml, "consistent_responses");
        assert!(!consistent.contains("<failure"), "{mode:?}: {consistent}");
        if passes {
            assert!(xml.contains("failures=\"0\""), "{xml}");
            assert!(!once.contains("<failure"), "{once}");
        } else {
            assert!(
                once.contains(
                    "<failure message=\"23 side effect(s) for 23 request(s) of 1 distinct key(s)"
                ),
                "{once}"
            );
            assert!(xml.contains("failures=\"1\""), "{xml}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reorder_scenario_holds_through_a_receiver_and_a_wrong_expectation_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    let listen = Listener::start(&["--source", "pay=stripe:whsec_hooklab_example"], &db);
    let target = format!("http://{}/pay", listen.addr());
    let junit = dir.path().join("reorder.xml");
    let args = |file: &Path| {
        vec![
            file.display().to_string(),
            "--target".into(),
            target.clone(),
            "--db".into(),
            db.display().to_string(),
            "--junit".into(),
            junit.display().to_string(),
            "--json".into(),
        ]
    };
    let out = hooklab_run(args(&example("reorder.toml"))).await;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report:#}");
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 5, "status, dlq_empty and three final states");
    let run = report["run"].as_str().unwrap();
    let sbc = checks
        .iter()
        .find(|c| c["expectation"] == format!("final_state pi_sbc_{run} = succeeded"))
        .expect("the object named with the run's id");
    assert!(
        sbc["message"]
            .as_str()
            .unwrap()
            .contains("succeeded parked"),
        "the timeline in the message: {sbc}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"5\" failures=\"0\""), "{xml}");

    // The same scenario expecting the refund to be undone cannot hold.
    let text = std::fs::read_to_string(example("reorder.toml"))
        .unwrap()
        .replace("state = \"refunded\"", "state = \"succeeded\"")
        .replace("settle = \"10s\"", "settle = \"1s\"");
    let wrong = dir.path().join("wrong.toml");
    std::fs::write(&wrong, text).unwrap();
    let out = hooklab_run(args(&wrong)).await;
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{report:#}");
    assert!(
        failed[0]["message"]
            .as_str()
            .unwrap()
            .contains("is refunded, not succeeded"),
        "{}",
        failed[0]
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\""), "{xml}");
}

#[test]
fn a_malformed_scenario_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[steps]]\naction = \"repeat\"\nof = \"nothing\"\n").unwrap();
    let out = Command::new(BIN)
        .args([
            "run",
            file.to_str().unwrap(),
            "--target",
            "http://127.0.0.1:9/x",
        ])
        .env_remove("HOOKLAB_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(
        err.contains("`of = \"nothing\"` names no earlier step"),
        "{err}"
    );
}
