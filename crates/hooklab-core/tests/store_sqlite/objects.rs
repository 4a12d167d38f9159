//! The SQLite store: objects.

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

#[tokio::test]
async fn an_update_sees_the_previous_record_and_appends_to_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
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
