//! Every store: listing.

use super::*;

/// 30 deliveries: sources alternate stripe/github; every third is invalid.
async fn seeded(engine: Engine) -> Opened {
    let opened = engine.open().await;
    let store = &*opened.store;
    for i in 0..30 {
        let source = if i % 2 == 0 { "stripe" } else { "github" };
        let verdict = if i % 3 == 0 { invalid() } else { valid() };
        let mut d = delivery(source, verdict, format!("{i}").as_bytes());
        d.metadata.event_id = Some(format!("evt_{i}"));
        store.record(d).await.unwrap();
    }
    opened
}

pub(crate) async fn newest_first_with_summary_fields(engine: Engine) {
    let opened = seeded(engine).await;
    let store = &*opened.store;
    let rows = store.list(DeliveryFilter::default()).await.unwrap();
    assert_eq!(rows.len(), 30);
    assert!(rows.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    let newest = &rows[0];
    assert_eq!(newest.event_id.as_deref(), Some("evt_29"));
    assert_eq!(newest.source, "github");
    assert_eq!(newest.provider, Some(ProviderId::Github));
    assert_eq!(newest.verdict, Status::Valid);
    assert_eq!(newest.reason, None);
    assert_eq!(newest.body_size, 2);
    let oldest = rows.last().unwrap();
    assert_eq!(oldest.reason.as_deref(), Some("signature_mismatch"));
}

pub(crate) async fn filters_combine(engine: Engine) {
    let opened = seeded(engine).await;
    let store = &*opened.store;
    let by = |source: Option<&str>, verdict: Option<Status>| DeliveryFilter {
        source: source.map(String::from),
        verdict,
        ..Default::default()
    };
    let stripe = store.list(by(Some("stripe"), None)).await.unwrap();
    assert_eq!(stripe.len(), 15);
    assert!(stripe.iter().all(|s| s.source == "stripe"));
    let invalid = store.list(by(None, Some(Status::Invalid))).await.unwrap();
    assert_eq!(invalid.len(), 10);
    let both = store
        .list(by(Some("github"), Some(Status::Invalid)))
        .await
        .unwrap();
    // i odd and divisible by 3: 3, 9, 15, 21, 27.
    assert_eq!(both.len(), 5);
    assert!(store.list(by(Some("nope"), None)).await.unwrap().is_empty());
}

pub(crate) async fn paging_with_before_walks_every_row_once(engine: Engine) {
    let opened = seeded(engine).await;
    let store = &*opened.store;
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .list(DeliveryFilter {
                limit: Some(7),
                before,
                source: Some("stripe".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 7);
        before = page.last().map(|s| s.id);
        seen.extend(page.into_iter().map(|s| s.id));
    }
    assert_eq!(seen.len(), 15, "every stripe row exactly once");
    assert!(seen.windows(2).all(|w| w[0] > w[1]));
}

pub(crate) async fn limit_defaults_to_50_and_is_capped_at_10_000(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let pending: Vec<_> = (0..10_050)
        .map(|_| store.record(delivery("stripe", valid(), b"")))
        .collect();
    for f in pending {
        f.await.unwrap();
    }
    assert_eq!(
        store.list(DeliveryFilter::default()).await.unwrap().len(),
        50
    );
    let huge = DeliveryFilter {
        limit: Some(u32::MAX),
        ..Default::default()
    };
    assert_eq!(store.list(huge).await.unwrap().len(), 10_000);
}

pub(crate) async fn search_finds_text_in_body_headers_and_fields(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let mut ids = Vec::new();
    let bodies: [&[u8]; 4] = [
        br#"{"customer":"cus_Alpha","amount":100}"#,
        br#"{"customer":"cus_beta","note":"50% off_today"}"#,
        b"\xff\xfe not utf-8 but has MAGIC inside",
        "{\"name\":\"Jos\u{e9} \u{2713}\"}".as_bytes(),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let mut d = delivery("stripe", valid(), body);
        d.metadata.event_id = Some(format!("evt_{i}"));
        d.metadata.event_type = Some(
            if i == 1 {
                "charge.refunded"
            } else {
                "payment_intent.succeeded"
            }
            .into(),
        );
        if i == 2 {
            d.headers.push(Header::new("X-Trace", "trace-zulu-9"));
        }
        ids.push(store.record(d).await.unwrap().id);
    }
    let search = |text: &str| DeliveryFilter {
        search: Some(text.into()),
        ..Default::default()
    };
    let found = |rows: Vec<hooklab_core::store::DeliverySummary>| {
        rows.iter().map(|r| r.id).collect::<Vec<_>>()
    };
    // Body text, ASCII case-insensitive on the text columns; exact bytes in the body.
    assert_eq!(
        found(store.list(search("cus_Alpha")).await.unwrap()),
        [ids[0]]
    );
    assert_eq!(
        found(store.list(search("MAGIC")).await.unwrap()),
        [ids[2]],
        "a non-UTF-8 body is searched too"
    );
    assert_eq!(
        found(store.list(search("José ✓")).await.unwrap()),
        [ids[3]],
        "UTF-8 text in a body"
    );
    // `%` and `_` are literal, not wildcards.
    assert_eq!(
        found(store.list(search("50% off_")).await.unwrap()),
        [ids[1]]
    );
    assert!(store.list(search("5_%")).await.unwrap().is_empty());
    // Headers, event type (case-insensitive), event id.
    assert_eq!(
        found(store.list(search("trace-zulu")).await.unwrap()),
        [ids[2]]
    );
    assert_eq!(
        found(store.list(search("CHARGE.REFUNDED")).await.unwrap()),
        [ids[1]]
    );
    assert_eq!(found(store.list(search("evt_3")).await.unwrap()), [ids[3]]);
    // A number finds that delivery by id.
    assert!(found(store.list(search(&ids[1].to_string())).await.unwrap()).contains(&ids[1]));
    // Combined with the other filters.
    let combined = DeliveryFilter {
        search: Some("cus_".into()),
        event_type: Some("charge.refunded".into()),
        ..Default::default()
    };
    assert_eq!(found(store.list(combined).await.unwrap()), [ids[1]]);
    assert!(
        store
            .list(search("nothing-like-this"))
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn duplicates_of_one_delivery_are_listed(engine: Engine) {
    use hooklab_core::store::{IdempotencyClaim, KeyStatus};
    let opened = engine.open().await;
    let store = &*opened.store;
    let keyed = |key: &str| {
        let mut d = delivery("stripe", valid(), key.as_bytes());
        d.metadata.idempotency_key = Some(key.into());
        d.idempotency = Some(IdempotencyClaim {
            scope: "stripe".into(),
            key: key.into(),
            status: KeyStatus::Completed,
        });
        d
    };
    let first_a = store.record(keyed("evt_a")).await.unwrap().id;
    let first_b = store.record(keyed("evt_b")).await.unwrap().id;
    let mut dups_a = Vec::new();
    for _ in 0..3 {
        dups_a.push(store.record(keyed("evt_a")).await.unwrap().id);
        store.record(keyed("evt_b")).await.unwrap();
    }
    let of = |first| DeliveryFilter {
        duplicate_of: Some(first),
        ..Default::default()
    };
    let listed: Vec<_> = store
        .list(of(first_a))
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    dups_a.reverse();
    assert_eq!(listed, dups_a, "newest first, only evt_a's copies");
    assert_eq!(store.list(of(first_b)).await.unwrap().len(), 3);
    assert!(
        store.list(of(dups_a[0])).await.unwrap().is_empty(),
        "a duplicate has no duplicates"
    );
    let all_dups = DeliveryFilter {
        duplicates_only: true,
        ..Default::default()
    };
    assert_eq!(store.list(all_dups).await.unwrap().len(), 6);

    // By the key's status now: evt_b failed, so its four deliveries list under `failed`.
    store
        .set_key_status("stripe".into(), "evt_b".into(), KeyStatus::Failed)
        .await
        .unwrap();
    let by = |status| DeliveryFilter {
        key_status: Some(status),
        ..Default::default()
    };
    let failed = store.list(by(KeyStatus::Failed)).await.unwrap();
    assert_eq!(failed.len(), 4);
    assert!(
        failed
            .iter()
            .all(|d| d.idempotency_key.as_deref() == Some("evt_b"))
    );
    assert_eq!(store.list(by(KeyStatus::Completed)).await.unwrap().len(), 4);
    assert!(
        store
            .list(by(KeyStatus::Processing))
            .await
            .unwrap()
            .is_empty()
    );
}
