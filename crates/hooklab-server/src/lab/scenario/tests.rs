use super::*;
use crate::lab::Target;
use crate::lab::app::{AppMode, AppOptions, serve};

const RACE: &str = r#"
name = "duplicate-race"
description = "20 concurrent copies, then 3 one after another"

[[steps]]
name = "race"
action = "generate"
provider = "stripe"
event_type = "payment_intent.succeeded"
overrides = { "data.object.id" = "pi_{run}", "data.object.amount" = 5000 }
secret = "whsec_unit"
copies = 20
concurrent = true

[[steps]]
action = "repeat"
of = "race"
copies = 3
interval = "10ms"

[expect]
handler_ran_once_per_key = true
consistent_responses = true
status = 200
final_state = { object = "pi_{run}", state = "succeeded" }
"#;

#[test]
fn a_scenario_reads_and_writes_back_the_same() {
    let scenario = Scenario::from_toml(RACE).unwrap();
    assert_eq!(scenario.steps.len(), 2);
    assert_eq!(scenario.steps[0].provider, Some(ProviderId::Stripe));
    assert_eq!(scenario.steps[0].overrides["data.object.amount"], 5000);
    assert_eq!(
        scenario.expect.final_state.len(),
        1,
        "one table is a list of one"
    );
    let text = scenario.to_toml().unwrap();
    assert!(text.contains("[[steps]]"), "{text}");
    assert!(text.contains("[[expect.final_state]]"), "{text}");
    assert_eq!(Scenario::from_toml(&text).unwrap(), scenario, "{text}");
    // And from the JSON the UI posts.
    let json = serde_json::to_value(&scenario).unwrap();
    let back: Scenario = serde_json::from_value(json).unwrap();
    assert_eq!(back, scenario);
}

#[test]
fn every_problem_is_reported_with_its_step() {
    let text = r#"
settle = "soon"
[[steps]]
action = "generate"
file = "x.json"
copies = 0
[[steps]]
action = "repeat"
of = "nothing"
[[steps]]
name = "a"
action = "replay"
variant = "sideways"
concurrent = true
interval = "1s"
[[steps]]
name = "a"
action = "sequence"
provider = "stripe"
"#;
    let err = Scenario::from_toml(text).unwrap_err().to_string();
    for part in [
        "`settle = \"soon\"`",
        "step 1 (generate): needs `provider`",
        "step 1 (generate): `file` does not apply to `generate`",
        "step 1 (generate): `copies` is 1 to 10000",
        "step 2 (repeat): `of = \"nothing\"` names no earlier step",
        "step 3 (replay): needs `delivery`",
        "unknown variant `sideways`",
        "step 3 (replay): `interval` is for copies one after another",
        "step 4 (sequence): needs `preset`",
        "step 4 (sequence): another step is already named `a`",
    ] {
        assert!(err.contains(part), "missing «{part}» in: {err}");
    }
    let unknown = Scenario::from_toml("[[steps]]\naction = \"generate\"\nprovidr = \"stripe\"");
    assert!(unknown.unwrap_err().to_string().contains("providr"));
    assert!(Scenario::from_toml("name = \"empty\"").is_err(), "no steps");
}

async fn app(mode: AppMode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut options = AppOptions::new(mode);
    options.work = std::time::Duration::from_millis(30);
    tokio::spawn(serve(listener, options, std::future::pending()));
    format!("http://127.0.0.1:{port}")
}

async fn run_against(mode: AppMode) -> RunReport {
    let base = app(mode).await;
    let mut scenario = Scenario::from_toml(RACE).unwrap();
    scenario.expect.final_state.clear(); // an app, not a receiver: no database here
    let mut options = RunOptions::new(Target::parse(&format!("{base}/webhooks")).unwrap());
    options.probe = Some(Target::parse(&format!("{base}/count")).unwrap());
    let steps = std::sync::Mutex::new(Vec::new());
    let progress = |p: Progress<'_>| {
        if let Progress::Step { index, total, .. } = p {
            steps.lock().unwrap().push((index, total));
        }
    };
    let report = run(&scenario, &options, None, &progress).await;
    assert_eq!(
        *steps.lock().unwrap(),
        [(0, 2), (1, 2)],
        "progress per step"
    );
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_race_passes_on_an_idempotent_app_and_fails_on_naive_and_racy_ones() {
    let good = run_against(AppMode::Idempotent).await;
    assert!(good.passed, "{:#?}", good.checks);
    assert_eq!(good.oracle.side_effects, Some(1));
    assert_eq!(good.oracle.copies, 23);
    assert_eq!(good.oracle.keys, 1, "a repeat is the same key");
    assert_eq!(good.checks.len(), 3);

    for mode in [AppMode::Naive, AppMode::Racy] {
        let bad = run_against(mode).await;
        assert!(!bad.passed, "{mode:?}");
        let once = &bad.checks[0];
        assert_eq!(once.expectation, "handler_ran_once_per_key");
        assert!(!once.passed, "{mode:?}: {once:?}");
        assert!(once.message.contains("not idempotent"), "{}", once.message);
        assert!(
            bad.checks[1].passed,
            "{mode:?}: the naive app answers every copy alike"
        );
        assert!(bad.checks[2].passed, "{mode:?}: all 200");
    }
}

#[tokio::test]
async fn receiver_expectations_without_a_database_fail_and_say_what_is_missing() {
    let base = app(AppMode::Idempotent).await;
    let scenario = Scenario::from_toml(RACE).unwrap();
    let options = RunOptions::new(Target::parse(&format!("{base}/w")).unwrap());
    let report = run(&scenario, &options, None, &|_| {}).await;
    assert!(!report.passed);
    let once = &report.checks[0];
    assert!(
        !once.passed && once.message.contains("needs a probe"),
        "{once:?}"
    );
    let last = report.checks.last().unwrap();
    assert!(last.expectation.starts_with("final_state pi_"), "{last:?}");
    assert!(
        !last.expectation.contains("{run}"),
        "the run's id replaced the placeholder: {last:?}"
    );
    assert!(last.message.contains("--db"), "{last:?}");
}

#[tokio::test]
async fn a_step_that_cannot_reach_its_target_fails_the_run() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let scenario = Scenario::from_toml(
        "[[steps]]\naction = \"generate\"\nprovider = \"stripe\"\nsecret = \"whsec_x\"",
    )
    .unwrap();
    let options = RunOptions::new(Target::parse(&format!("http://127.0.0.1:{port}/x")).unwrap());
    let report = run(&scenario, &options, None, &|_| {}).await;
    assert!(!report.passed, "no expectation, but nothing got there");
    let error = report.steps[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("no answer from"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_and_replays_go_through_a_receiver_and_its_state_machine() {
    use crate::config::{Config, SourceConfig};
    use crate::lab::records::StoreRecords;
    use hooklab_core::secret::Secret;
    use hooklab_core::store::{DeliveryFilter, Store, sqlite::SqliteStore};
    use hooklab_core::verdict::Status;
    use std::sync::Arc;

    const SECRET: &str = "whsec_import";
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
    let source = SourceConfig::new("pay", ProviderId::Stripe, vec![Secret::new(SECRET)]);
    let config = Config {
        port: 0,
        sources: vec![source.clone()],
        ..Config::default()
    };
    let running = crate::runtime::start(config, Arc::clone(&store))
        .await
        .unwrap();
    // A capture signed long ago with another secret (Hooklab's JSON), and a raw body.
    let created = r#"{"id":"evt_imp_1","type":"payment_intent.created","created":1700000000,"data":{"object":{"id":"pi_imp"}}}"#;
    let capture = serde_json::json!({
        "provider": "stripe", "method": "POST",
        "headers": [["Content-Type", "application/json"], ["Stripe-Signature", "t=1,v1=00"]],
        "body": created,
    });
    std::fs::write(dir.path().join("capture.json"), capture.to_string()).unwrap();
    std::fs::write(
        dir.path().join("raw.json"),
        r#"{"id":"evt_imp_raw","type":"customer.created"}"#,
    )
    .unwrap();
    let scenario = Scenario::from_toml(
        r#"
[[steps]]
action = "import"
file = "capture.json"
source = "pay"

[[steps]]
action = "import"
file = "raw.json"
provider = "stripe"
secret = "whsec_import"

[[steps]]
action = "replay"
delivery = 1
variant = "stale"

[expect]
status = 200
final_state = { object = "pi_imp", state = "created" }
"#,
    )
    .unwrap();
    let mut options =
        RunOptions::new(Target::parse(&format!("http://{}/pay", running.addr)).unwrap());
    options.base_dir = Some(dir.path().to_path_buf());
    options.settle = Some(std::time::Duration::from_secs(10));
    let records = StoreRecords {
        store: Arc::clone(&store),
        sources: vec![source],
    };
    let report = run(&scenario, &options, Some(&records), &|_| {}).await;
    assert!(report.passed, "{report:#?}");
    let keys: Vec<_> = report
        .steps
        .iter()
        .map(|s| s.sends[0].key.clone())
        .collect();
    assert_eq!(
        keys,
        [
            Some("evt_imp_1".to_string()),
            Some("evt_imp_raw".to_string()),
            Some("evt_imp_1".to_string())
        ]
    );
    let mut listed = store.list(DeliveryFilter::default()).await.unwrap();
    listed.reverse();
    let verdicts: Vec<_> = listed
        .iter()
        .map(|d| (d.verdict, d.reason.clone()))
        .collect();
    assert_eq!(
        verdicts[0].0,
        Status::Valid,
        "the capture was re-signed: {verdicts:?}"
    );
    assert_eq!(
        verdicts[1].0,
        Status::Valid,
        "the raw body was signed: {verdicts:?}"
    );
    assert_eq!(verdicts[2].0, Status::Invalid, "{verdicts:?}");
    assert_eq!(verdicts[2].1.as_deref(), Some("timestamp_too_old"));
}
