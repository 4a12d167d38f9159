//! Every store: idempotency.

use super::*;
use hooklab_core::store::{IdempotencyClaim, KeyFilter, KeyStatus};
use std::sync::Arc;

fn claiming(key: &str, status: KeyStatus) -> NewDelivery {
    let mut d = delivery("stripe", valid(), key.as_bytes());
    d.idempotency = Some(IdempotencyClaim {
        scope: "stripe".into(),
        key: key.into(),
        status,
    });
    d
}

pub(crate) async fn five_hundred_concurrent_claims_have_exactly_one_winner(engine: Engine) {
    let opened = engine.open().await;
    let store = Arc::clone(&opened.store);
    let tasks: Vec<_> = (0..500)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store
                    .record(claiming("evt_race", KeyStatus::Processing))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut recorded = Vec::new();
    for t in tasks {
        recorded.push(t.await.unwrap());
    }
    let outcomes: Vec<_> = recorded.iter().map(|r| r.key.expect("a claim")).collect();
    let winners: Vec<_> = recorded
        .iter()
        .filter(|r| r.key.is_some_and(|k| !k.duplicate))
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "the constraint lets exactly one delivery win"
    );
    let first = winners[0].id;
    assert!(
        outcomes.iter().all(|k| k.first_delivery == first),
        "every loser learns who won"
    );
    assert_eq!(
        outcomes.iter().filter(|k| k.process).count(),
        1,
        "only the winner is to be processed"
    );
    let keys = store.keys(KeyFilter::default()).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(
        keys[0].deliveries, 500,
        "every delivery is counted on the key"
    );
    assert_eq!(keys[0].first_delivery, first);
    assert_eq!(keys[0].status, KeyStatus::Processing);
    let rows = store.list(all()).await.unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| r.duplicate_of == Some(first))
            .count(),
        499,
        "499 deliveries are recorded as duplicates of the first"
    );
    assert_eq!(
        rows.iter().find(|r| r.id == first).unwrap().duplicate_of,
        None
    );
}

pub(crate) async fn a_failed_key_is_processed_again_by_its_next_delivery_only(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let first = store
        .record(claiming("evt_1", KeyStatus::Processing))
        .await
        .unwrap();
    let dup = store
        .record(claiming("evt_1", KeyStatus::Processing))
        .await
        .unwrap();
    assert!(
        !dup.key.unwrap().process,
        "processing: a duplicate is not processed"
    );
    store
        .set_key_status("stripe".into(), "evt_1".into(), KeyStatus::Failed)
        .await
        .unwrap();
    let retry = store
        .record(claiming("evt_1", KeyStatus::Processing))
        .await
        .unwrap()
        .key
        .unwrap();
    assert!(
        retry.duplicate && retry.process,
        "after a failure the next delivery runs"
    );
    assert_eq!(retry.first_delivery, first.id);
    assert_eq!(retry.status, KeyStatus::Processing);
    let after = store
        .record(claiming("evt_1", KeyStatus::Processing))
        .await
        .unwrap()
        .key
        .unwrap();
    assert!(!after.process, "only one delivery takes over a failed key");
    store
        .set_key_status("stripe".into(), "evt_1".into(), KeyStatus::Completed)
        .await
        .unwrap();
    let done = store
        .record(claiming("evt_1", KeyStatus::Processing))
        .await
        .unwrap()
        .key
        .unwrap();
    assert!(!done.process && done.status == KeyStatus::Completed);
    assert_eq!(done.deliveries, 5);
}

pub(crate) async fn scopes_are_independent_and_unclaimed_deliveries_have_no_key(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let a = store
        .record(claiming("same", KeyStatus::Completed))
        .await
        .unwrap();
    let mut other = claiming("same", KeyStatus::Completed);
    other.idempotency.as_mut().unwrap().scope = "github".into();
    let b = store.record(other).await.unwrap();
    assert!(!a.key.unwrap().duplicate && !b.key.unwrap().duplicate);
    let none = store
        .record(delivery("stripe", invalid(), b"x"))
        .await
        .unwrap();
    assert_eq!(none.key, None, "a delivery without a claim touches no key");
    let unknown = store
        .set_key_status("stripe".into(), "nope".into(), KeyStatus::Failed)
        .await;
    assert!(
        unknown.is_err(),
        "an unknown key is an error, not a silent no-op"
    );
    let dups = store
        .keys(KeyFilter {
            duplicates_only: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(dups.is_empty());
    // One key of one scope, found by both.
    let one = |scope: &str, key: &str| KeyFilter {
        scope: Some(scope.into()),
        key: Some(key.into()),
        ..Default::default()
    };
    let found = store.keys(one("github", "same")).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].scope.as_str(), found[0].first_delivery),
        ("github", b.id)
    );
    assert!(store.keys(one("github", "other")).await.unwrap().is_empty());
}
