//! State machines through the binary: Stripe events sent out of order to `hooklab listen`
//! end in the right state, and `hooklab timeline` / `hooklab objects` show it.

mod common;

use common::{Listener, json_of, payment_intent_event, post_stripe, unix_now};
use std::time::{Duration, Instant};

/// Polls `check` until it returns `Some`, for at most 20 s.
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn out_of_order_events_end_succeeded_and_the_timeline_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let listen = Listener::start(&["--source", "pay=stripe:whsec_t"], &db);
    let now = unix_now();
    // Success before creation, then a stale `processing`.
    for (kind, at) in [
        ("payment_intent.succeeded", now - 10),
        ("payment_intent.created", now - 30),
        ("payment_intent.processing", now - 20),
    ] {
        let event = payment_intent_event(&format!("evt_{at}"), kind, at, "pi_e2e");
        let response = post_stripe(listen.port, "/pay", "whsec_t", &event);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    let timeline = eventually("the machine applied the three events", || {
        let t = json_of(&["timeline", "pi_e2e", "--json"], &db);
        t["transitions"]
            .as_array()
            .is_some_and(|a| a.len() >= 4)
            .then_some(t)
    });
    assert_eq!(timeline["object"], "pi_e2e");
    assert_eq!(timeline["state"], "succeeded", "{timeline}");
    let decisions: Vec<&str> = timeline["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["parked", "applied", "applied_from_park", "ignored_stale"]
    );
    let objects = json_of(&["objects", "--json", "--state", "succeeded"], &db);
    assert_eq!(objects[0]["object"], "pi_e2e");
}

#[test]
fn a_parked_event_past_review_after_flags_its_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let listen = Listener::start(
        &["--review-after", "300ms", "--source", "pay=stripe:whsec_t"],
        &db,
    );
    // A refund for a payment Hooklab never saw: parked, then sent to review.
    let refund = r#"{"id":"evt_rf","type":"charge.refunded","created":1700000000,"data":{"object":{"id":"ch_1","object":"charge","payment_intent":"pi_orphan"}}}"#;
    post_stripe(listen.port, "/pay", "whsec_t", refund);
    let objects = eventually("the orphan refund went to review", || {
        let o = json_of(&["objects", "--review", "--json"], &db);
        (o[0]["object"] == "pi_orphan").then_some(o)
    });
    assert!(
        objects[0]["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "requires_review")
    );
}
