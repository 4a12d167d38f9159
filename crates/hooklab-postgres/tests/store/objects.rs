//! Every store: objects.

use super::*;
use hooklab_core::store::{ObjectChange, ObjectFilter, ObjectRecord, TimelineEntry};

fn change(prev: Option<ObjectRecord>, to: &str, at: i64) -> Option<ObjectChange> {
    let from = prev.as_ref().and_then(|p| p.state.clone());
    Some(ObjectChange {
        object: ObjectRecord {
            machine: "m".into(),
            object_id: "pi_1".into(),
            state: Some(to.into()),
            state_time: Some(UnixMillis(at)),
            flags: vec![],
            data: format!("{{\"n\":{}}}", prev.map_or(1, |p| p.data.len())),
            updated_at: UnixMillis(at),
        },
        rows: vec![TimelineEntry {
            machine: "m".into(),
            object_id: "pi_1".into(),
            from,
            to: Some(to.into()),
            delivery: Some(1),
            provider_time: Some(UnixMillis(at)),
            received_at: Some(UnixMillis(at + 1)),
            decision: "applied".into(),
            reason: format!("-> {to}"),
            at: UnixMillis(at + 2),
        }],
    })
}

pub(crate) async fn an_update_sees_the_previous_record_and_appends_to_the_timeline(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let first = store
        .update_object(
            "m".into(),
            "pi_1".into(),
            Box::new(|prev| {
                assert!(prev.is_none(), "a new object has no record");
                change(prev, "pending", 10)
            }),
        )
        .await
        .unwrap();
    assert!(first.is_some());
    store
        .update_object(
            "m".into(),
            "pi_1".into(),
            Box::new(|prev| {
                assert_eq!(prev.as_ref().unwrap().state.as_deref(), Some("pending"));
                change(prev, "succeeded", 20)
            }),
        )
        .await
        .unwrap();
    let nothing = store
        .update_object("m".into(), "pi_1".into(), Box::new(|_| None))
        .await
        .unwrap();
    assert_eq!(nothing, None, "an update may decide to write nothing");
    let objects = store.objects(ObjectFilter::default()).await.unwrap();
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].state.as_deref(), Some("succeeded"));
    let stuck = store
        .objects(ObjectFilter {
            updated_before: Some(UnixMillis(15)),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(stuck.is_empty(), "updated at 20: not stuck before 15");
    let timeline = store.timeline("pi_1".into()).await.unwrap();
    assert_eq!(
        timeline
            .iter()
            .map(|r| r.to.clone().unwrap())
            .collect::<Vec<_>>(),
        ["pending", "succeeded"]
    );
    assert_eq!(timeline[1].from.as_deref(), Some("pending"));
}

/// Updates queued before any is awaited run in call order, each seeing the previous one.
pub(crate) async fn queued_updates_apply_in_call_order(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let pending: Vec<_> = (0..50)
        .map(|i| {
            store.update_object(
                "m".into(),
                "pi_1".into(),
                Box::new(move |prev| {
                    let seen = prev.as_ref().and_then(|p| p.state.clone());
                    let expected = (i > 0).then(|| format!("s{}", i - 1));
                    assert_eq!(seen, expected, "update {i} sees update {}'s state", i - 1);
                    change(prev, &format!("s{i}"), i64::from(i) + 10)
                }),
            )
        })
        .collect();
    for p in pending {
        assert!(p.await.unwrap().is_some());
    }
    let timeline = store.timeline("pi_1".into()).await.unwrap();
    assert_eq!(timeline.len(), 50, "one timeline row per update");
    assert_eq!(timeline[49].to.as_deref(), Some("s49"));
}
