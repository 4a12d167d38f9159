use super::*;
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::{DeadLetter, DeliverySummary};
use hooklab_server::events::DeliveryEvent;

pub(crate) fn delivery(id: i64, verdict: Status) -> Event {
    Event::Delivery(DeliveryEvent {
        delivery: DeliverySummary {
            id,
            received_at: UnixMillis(1_700_000_000_000),
            source: "stripe".into(),
            provider: None,
            method: "POST".into(),
            path: "/stripe".into(),
            query: None,
            verdict,
            reason: (verdict == Status::Invalid).then(|| "no signature matches".into()),
            event_id: Some(format!("evt_{id}")),
            event_type: Some("charge.succeeded".into()),
            response_status: 200,
            body_size: 10,
            idempotency_key: None,
            duplicate_of: None,
        },
        verdict_summary: verdict.as_str().into(),
        diagnosis: None,
        body_refused: false,
        remote_addr: None,
        key: None,
    })
}

pub(crate) fn dead_letter(job: i64, reason: &str) -> Event {
    Event::DeadLetter(DeadLetter {
        job,
        delivery: job,
        source: "stripe".into(),
        event_id: Some(format!("evt_{job}")),
        event_type: Some("invoice.paid".into()),
        scope: None,
        key: None,
        reason: reason.into(),
        attempts: 3,
        dead_at: UnixMillis(1_700_000_000_000),
    })
}

const ALL_ON: NotifyPrefs = NotifyPrefs {
    dead_letter: true,
    invalid_signature: true,
};

#[test]
fn a_dead_letter_and_an_invalid_signature_say_what_happened_in_plain_text() {
    let dead = decide(
        &dead_letter(7, "gave up after 3 attempts: HTTP 500"),
        ALL_ON,
    )
    .unwrap();
    assert_eq!(dead.kind, Kind::DeadLetter);
    assert_eq!(dead.summary, "Dead letter from stripe");
    assert_eq!(
        dead.body,
        "invoice.paid evt_7: gave up after 3 attempts: HTTP 500"
    );
    let invalid = decide(&delivery(3, Status::Invalid), ALL_ON).unwrap();
    assert_eq!(invalid.kind, Kind::InvalidSignature);
    assert_eq!(invalid.summary, "Invalid signature on stripe");
    assert_eq!(invalid.body, "POST /stripe evt_3: no signature matches");
    // Valid and unsigned deliveries are no news.
    assert_eq!(decide(&delivery(4, Status::Valid), ALL_ON), None);
    assert_eq!(decide(&delivery(5, Status::Unsigned), ALL_ON), None);
}

#[test]
fn each_kind_follows_its_setting_and_the_defaults_are_dead_letters_only() {
    let defaults = NotifyPrefs::default();
    assert!(decide(&dead_letter(1, "x"), defaults).is_some());
    assert!(decide(&delivery(1, Status::Invalid), defaults).is_none());
    let off = NotifyPrefs {
        dead_letter: false,
        invalid_signature: false,
    };
    assert!(decide(&dead_letter(1, "x"), off).is_none());
    assert!(decide(&delivery(1, Status::Invalid), off).is_none());
}

#[test]
fn credentials_in_a_quoted_url_and_control_characters_never_reach_a_notification() {
    let note = decide(
        &dead_letter(
            1,
            "gave up after 1 attempt: error sending request for url (http://admin:s3cret@app.local:3000/hook?x=1)\n\u{1b}[31m",
        ),
        ALL_ON,
    )
    .unwrap();
    assert!(
        !note.body.contains("s3cret") && !note.body.contains("admin"),
        "{}",
        note.body
    );
    assert!(
        note.body.contains("http://***@app.local:3000/hook?x=1"),
        "{}",
        note.body
    );
    assert!(!note.body.chars().any(char::is_control), "{:?}", note.body);
    let long = decide(&dead_letter(1, &"x".repeat(5000)), ALL_ON).unwrap();
    assert_eq!(
        long.body.chars().count(),
        MAX_BODY + 1,
        "clipped with an ellipsis"
    );
    assert_eq!(
        redact_userinfo("see https://a@b/c and ftp://h/x@y"),
        "see https://***@b/c and ftp://h/x@y"
    );
}

#[test]
fn a_flood_of_a_thousand_invalid_requests_makes_two_notifications() {
    let start = Instant::now();
    let mut coalescer = Coalescer::new(WINDOW);
    let mut shown = Vec::new();
    for i in 0..1000 {
        let note = decide(&delivery(i, Status::Invalid), ALL_ON).unwrap();
        // All within one second.
        let at = start + Duration::from_millis(i as u64);
        shown.extend(coalescer.push(note, at));
        if coalescer.next_flush().is_some_and(|due| due <= at) {
            shown.extend(coalescer.flush(at));
        }
    }
    assert_eq!(shown.len(), 1, "only the first shows at once");
    assert_eq!(shown[0].body, "POST /stripe evt_0: no signature matches");
    let due = coalescer.next_flush().expect("a summary is due");
    assert_eq!(due, start + WINDOW);
    assert!(coalescer.flush(due - Duration::from_millis(1)).is_empty());
    let summary = coalescer.flush(due);
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0].summary, "999 more invalid signatures");
    assert!(summary[0].body.contains("evt_999"), "{}", summary[0].body);
    assert_eq!(coalescer.next_flush(), None, "nothing more to say");
    // The summary opened another quiet window: one more event waits for it too.
    let again = decide(&delivery(1000, Status::Invalid), ALL_ON).unwrap();
    assert_eq!(
        coalescer.push(again.clone(), due + Duration::from_secs(1)),
        None
    );
    // After a quiet window without news, the next one shows at once.
    let later = due + WINDOW * 3;
    assert_eq!(
        coalescer.flush(due + WINDOW)[0].summary,
        "1 more invalid signature"
    );
    assert_eq!(coalescer.push(again.clone(), later), Some(again));
}

#[test]
fn kinds_are_coalesced_separately() {
    let now = Instant::now();
    let mut coalescer = Coalescer::new(WINDOW);
    let invalid = decide(&delivery(1, Status::Invalid), ALL_ON).unwrap();
    let dead = decide(&dead_letter(1, "x"), ALL_ON).unwrap();
    assert!(coalescer.push(invalid.clone(), now).is_some());
    assert!(
        coalescer.push(dead.clone(), now).is_some(),
        "another kind is not held back"
    );
    assert!(coalescer.push(dead, now).is_none());
    let flushed = coalescer.flush(now + WINDOW);
    assert_eq!(flushed.len(), 1);
    assert_eq!(flushed[0].summary, "1 more dead letter");
}

#[tokio::test(start_paused = true)]
async fn the_bus_reader_shows_what_the_settings_allow_coalesced_in_time() {
    let (tx, rx) = broadcast::channel(4096);
    let prefs = SharedPrefs::new(crate::prefs::Prefs::default(), None);
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Note>::new()));
    let sink = shown.clone();
    let task = tokio::spawn(run(rx, prefs.clone(), WINDOW, move |n| {
        sink.lock().unwrap().push(n)
    }));
    // Defaults: invalid signatures are off.
    for i in 0..1000 {
        tx.send(delivery(i, Status::Invalid)).unwrap();
    }
    tx.send(dead_letter(1, "gave up after 3 attempts: HTTP 500"))
        .unwrap();
    tx.send(dead_letter(2, "gave up after 3 attempts: HTTP 500"))
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let summaries = |v: &Vec<Note>| v.iter().map(|n| n.summary.clone()).collect::<Vec<_>>();
    assert_eq!(
        summaries(&shown.lock().unwrap()),
        ["Dead letter from stripe"]
    );
    tokio::time::sleep(WINDOW).await;
    assert_eq!(
        summaries(&shown.lock().unwrap()),
        ["Dead letter from stripe", "1 more dead letter"]
    );
    // Switched on from the tray: the next invalid one shows.
    prefs.update(false, |p| p.notify.invalid_signature = true);
    tx.send(delivery(5000, Status::Invalid)).unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(shown.lock().unwrap().len(), 3);
    drop(tx);
    task.await.unwrap();
}
