//! The UI in a real Chromium: `hooklab listen` serves the built UI (`ui/dist`) on its loopback
//! control API; headless Chromium opens it with this run's token and the test reads the DOM it
//! rendered. It checks the Live list (rows, verdicts, duplicates, the stream connected), the
//! event view (headers in arrival order, the verdict, the idempotency card), that a body full
//! of HTML is shown as text and never becomes markup, and that the API refuses a page that
//! has no token.
//!
//! Needs `chromium` on PATH and the UI built (`npm --prefix ui ci && npm --prefix ui run
//! build`); `scripts/test.sh` does both. Missing either fails with what to do.

mod common;

use common::{Listener, post_stripe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "whsec_ui_test_secret";
const HOSTILE: &str = r#"<img src=x onerror=alert(1)><script>alert(2)</script>"#;

fn ui_dist() -> PathBuf {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/dist");
    assert!(
        dist.join("index.html").is_file(),
        "the UI is not built: run `npm --prefix ui ci && npm --prefix ui run build` \
         (scripts/test.sh does it before the tests)"
    );
    dist
}

fn chromium() -> &'static str {
    let found = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "`chromium` is not installed: `apt-get install chromium` (scripts/setup-deps.sh does it)"
    );
    "chromium"
}

/// The DOM Chromium rendered for `url` (JavaScript run, fetches done), within a minute.
fn dump_dom(url: &str, profile: &Path) -> String {
    let mut child = Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish rendering {url} within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The control API's address and token, from the discovery file beside the database.
fn control(db: &Path) -> (String, String) {
    let path = PathBuf::from(format!("{}.control.json", db.display()));
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("the discovery file exists")).unwrap();
    (
        found["url"].as_str().unwrap().to_string(),
        found["token"].as_str().unwrap().to_string(),
    )
}

#[test]
fn the_ui_lists_deliveries_and_shows_one_with_its_body_as_text() {
    let _dist = ui_dist();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let source = format!("stripe=stripe:{SECRET}");
    let listener = Listener::start(&["--source", &source], &db);

    let first = r#"{"id":"evt_ui_first","type":"payment_intent.succeeded","created":1700000000,"data":{"object":{"id":"pi_ui_1","object":"payment_intent"}}}"#;
    let hostile = format!(
        r#"{{"id":"evt_ui_hostile","type":"charge.succeeded","created":1700000001,"description":"{}"}}"#,
        HOSTILE.replace('"', "\\\"")
    );
    for body in [first, first, hostile.as_str()] {
        let response = post_stripe(listener.port, "/stripe", SECRET, body);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    let (url, token) = control(&db);

    // Live: three rows, newest first, the duplicate marked, the stream connected.
    let live = dump_dom(
        &format!("{url}/#token={token}"),
        &dir.path().join("profile-live"),
    );
    assert!(live.contains("3 of 3"), "three deliveries listed:\n{live}");
    for needle in [
        "evt_ui_first",
        "evt_ui_hostile",
        "payment_intent.succeeded",
        "(duplicate of #1)",
        "class=\"dot on\"",
        "No tunnel",
    ] {
        assert!(
            live.contains(needle),
            "`{needle}` in the live view:\n{live}"
        );
    }
    let hostile_row = live.find("evt_ui_hostile").unwrap();
    let first_row = live.find("evt_ui_first").unwrap();
    assert!(hostile_row < first_row, "newest first");

    // The event view of the hostile delivery: its body is text, escaped, never markup.
    let event = dump_dom(
        &format!("{url}/#/events/3&token={token}"),
        &dir.path().join("profile-event"),
    );
    let article = &event[event.find("<article").expect("the event view rendered")..];
    assert!(article.contains("Signature: valid"), "{article}");
    assert!(article.contains("valid Stripe signature"), "{article}");
    assert!(
        article.contains("First delivery with this key; no duplicates so far."),
        "{article}"
    );
    assert!(
        article.contains("&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;"),
        "the body is shown as escaped text:\n{article}"
    );
    assert!(
        !article.contains("<img"),
        "no element was made from event data:\n{article}"
    );
    assert!(!article.contains("<script>alert"), "{article}");
    let names: Vec<&str> = ["Host", "Connection", "Stripe-Signature", "Content-Length"]
        .into_iter()
        .collect();
    let positions: Vec<usize> = names
        .iter()
        .map(|n| {
            article
                .find(&format!(">{n}</th>"))
                .unwrap_or_else(|| panic!("header {n} shown:\n{article}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "headers in arrival order: {names:?} at {positions:?}"
    );

    // The duplicate's view links to the first delivery.
    let duplicate = dump_dom(
        &format!("{url}/#/events/2&token={token}"),
        &dir.path().join("profile-dup"),
    );
    assert!(
        duplicate.contains("Duplicate of <a href=\"#/events/1\">#1</a>"),
        "{duplicate}"
    );

    // Idempotency: the first event's key was delivered twice.
    let keys = dump_dom(
        &format!("{url}/#/keys&token={token}"),
        &dir.path().join("profile-keys"),
    );
    let keys = &keys[keys
        .find("aria-label=\"Idempotency keys\"")
        .expect("the keys view")..];
    assert!(keys.contains("evt_ui_first"), "{keys}");
    assert!(keys.contains("2 (1 duplicate)"), "{keys}");

    // The PaymentIntent's timeline: `succeeded` for an object never seen is parked.
    let timeline = dump_dom(
        &format!("{url}/#/objects/pi_ui_1&token={token}"),
        &dir.path().join("profile-objects"),
    );
    let timeline = &timeline[timeline
        .find("aria-label=\"Objects and timelines\"")
        .expect("the objects view")..];
    assert!(timeline.contains("pi_ui_1"), "{timeline}");
    assert!(
        timeline.contains("class=\"badge parked\""),
        "a parked decision:\n{timeline}"
    );
    assert!(
        timeline.contains("href=\"#/events/1\""),
        "linked to its delivery:\n{timeline}"
    );

    // Without the token the page loads but shows no data, and says how to get in.
    let anonymous = dump_dom(&format!("{url}/"), &dir.path().join("profile-anon"));
    assert!(
        anonymous.contains("Open Hooklab from the app or the CLI"),
        "{anonymous}"
    );
    assert!(!anonymous.contains("evt_ui_first"), "{anonymous}");
}
