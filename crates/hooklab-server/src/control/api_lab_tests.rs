//! The lab's endpoints over a real loopback socket: `POST /api/inject` against the lab's test
//! app (idempotent and naive, a real HTTP server) with its probe, and `POST /api/scenario`.

use super::api::DataState;
use super::api_tests::{Fixture, call, delivery, fixture};
use super::{ControlState, serve as serve_control};
use crate::lab::app::{AppMode, AppOptions, serve};
use hooklab_core::request::Header;
use hooklab_core::store::{Store as _, sqlite::SqliteStore};
use std::sync::Arc;

/// A control API over a database holding one delivery whose headers an app accepts.
async fn lab_fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("lab.db")).unwrap());
    let mut d = delivery(1, br#"{"id":"evt_lab","type":"payment_intent.succeeded"}"#);
    d.headers = vec![
        Header::new("Content-Type", "application/json"),
        Header::new("Stripe-Signature", "t=1,v1=00"),
    ];
    store.record(d).await.unwrap();
    let (events, _) = tokio::sync::broadcast::channel(16);
    let state = ControlState {
        data: Some(DataState::new(store, events.clone())),
        ..ControlState::default()
    };
    Fixture {
        server: serve_control(0, state).await.unwrap(),
        events,
        _dir: dir,
    }
}

async fn app(mode: AppMode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut options = AppOptions::new(mode);
    options.duplicate_status = Some(500);
    tokio::spawn(serve(listener, options, std::future::pending()));
    format!("http://127.0.0.1:{port}")
}

async fn post(f: &Fixture, path: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, _, body) = call(f, "POST", path, body).await;
    (status, serde_json::from_slice(&body).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inject_judges_an_idempotent_app_and_a_naive_one() {
    let f = lab_fixture().await;
    let good = app(AppMode::Idempotent).await;
    let request = |base: &str| {
        serde_json::json!({
            "delivery": 1, "to": format!("{base}/webhooks"), "copies": 10,
            "concurrent": true, "probe": format!("{base}/count"),
        })
        .to_string()
    };
    let (status, answer) = post(&f, "/api/inject", &request(&good)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["copy_of"], 1);
    assert_eq!(answer["mode"], "concurrent");
    assert_eq!(answer["copies"].as_array().unwrap().len(), 10);
    assert_eq!(answer["summary"]["statuses"]["200"], 10);
    assert_eq!(answer["oracle"]["idempotent"], true, "{answer}");
    assert_eq!(answer["oracle"]["side_effects"], 1);

    let naive = app(AppMode::Naive).await;
    let (status, answer) = post(&f, "/api/inject", &request(&naive)).await;
    assert_eq!(status, 200, "{answer}");
    let oracle = &answer["oracle"];
    assert_eq!(oracle["idempotent"], false, "{answer}");
    assert_eq!(oracle["side_effects"], 10);
    assert_eq!(oracle["extra_side_effects"], 9);
    assert_eq!(oracle["responses_differ"], true, "a 200 then 500s");
    assert_eq!(oracle["statuses"]["500"], 9);
    assert!(
        oracle["verdict"].as_str().unwrap().starts_with(
            "NOT idempotent: 10 side effects for 10 copies; responses differ: 200×1, 500×9"
        ),
        "{oracle}"
    );
}

#[tokio::test]
async fn inject_refuses_what_it_cannot_do_with_a_reason() {
    let f = lab_fixture().await;
    let base = app(AppMode::Idempotent).await;
    let cases = [
        (
            serde_json::json!({"delivery": 1, "to": "https://x/y"}),
            400,
            "bad_request",
        ),
        (
            serde_json::json!({"delivery": 1, "to": base, "copies": 0}),
            400,
            "bad_request",
        ),
        (
            serde_json::json!({"delivery": 1, "to": base, "concurrent": true, "interval_ms": 5}),
            400,
            "bad_request",
        ),
        (
            serde_json::json!({"delivery": 99, "to": base}),
            404,
            "not_found",
        ),
        // Delivery 1 came to a source without a provider: nothing to re-sign for.
        (
            serde_json::json!({"delivery": 1, "to": base, "resign": true}),
            422,
            "cannot_sign",
        ),
        (
            serde_json::json!({"delivery": 1, "to": base, "probe": "http://127.0.0.1:1/count"}),
            502,
            "probe_failed",
        ),
        (serde_json::json!({"delivery": 1}), 400, "bad_request"),
    ];
    for (body, status, code) in cases {
        let (got, answer) = post(&f, "/api/inject", &body.to_string()).await;
        assert_eq!(
            (got, answer["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
        assert!(!answer["message"].as_str().unwrap_or("").is_empty());
    }
}

#[tokio::test]
async fn lab_actions_become_a_scenario_file() {
    let f = fixture(0).await;
    let session = serde_json::json!({
        "name": "from the UI",
        "probe": "http://127.0.0.1:3000/count",
        "steps": [
            {"action": "replay", "name": "first", "delivery": 12, "variant": "resigned"},
            {"action": "repeat", "of": "first", "copies": 50, "concurrent": true},
            {"action": "sequence", "preset": "refund-before-success", "provider": "stripe",
             "object": "pi_{run}", "interval": "200ms"},
        ],
        "expect": {"handler_ran_once_per_key": true,
                   "final_state": [{"object": "pi_{run}", "state": "refunded"}]},
    });
    let (status, answer) = post(&f, "/api/scenario", &session.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    let toml = answer["toml"].as_str().unwrap();
    let scenario = crate::lab::scenario::Scenario::from_toml(toml).unwrap();
    assert_eq!(scenario.steps.len(), 3);
    assert_eq!(scenario.steps[1].copies, Some(50));
    assert!(
        toml.contains("preset = \"refund-before-success\""),
        "{toml}"
    );

    let literal = serde_json::json!({"steps": [{"action": "generate", "provider": "stripe",
                                                "secret": "whsec_never_in_a_file"}]});
    let (status, answer) = post(&f, "/api/scenario", &literal.to_string()).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        !answer.to_string().contains("whsec_never_in_a_file"),
        "{answer}"
    );
    let named = serde_json::json!({"steps": [{"action": "generate", "provider": "stripe",
                                              "secret": "env:STRIPE_WEBHOOK_SECRET"}]});
    let (status, answer) = post(&f, "/api/scenario", &named.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["toml"]
            .as_str()
            .unwrap()
            .contains("secret = \"env:STRIPE_WEBHOOK_SECRET\"")
    );

    let broken = serde_json::json!({"steps": [{"action": "repeat", "of": "nothing"}]});
    let (status, answer) = post(&f, "/api/scenario", &broken.to_string()).await;
    assert_eq!(status, 400);
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("names no earlier step"),
        "{answer}"
    );
}
