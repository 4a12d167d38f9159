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
