//! Idempotency: deliveries of one event collapse onto one key by the database constraint;
//! a forged delivery never claims a key; a source can read its key from a header or pointers.

use crate::support::{self, request, request_owned, stripe_headers};
use hooklab_core::metadata::KeySpec;
use hooklab_core::store::{KeyFilter, KeyStatus, Store};

const BODY: &[u8] = br#"{"id":"evt_dup","type":"invoice.paid","data":{"object":{"id":"in_1"}}}"#;

#[tokio::test]
async fn deliveries_of_one_event_are_duplicates_of_the_first() {
    let mut server = support::start(support::config()).await;
    let headers = stripe_headers(BODY);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = server.send(&request_owned("/stripe", &headers, BODY)).await;
        assert_eq!(r.status, 200, "every copy is acknowledged");
        ids.push(server.next_delivery().await);
    }
    assert_eq!(ids[0].duplicate_of, None, "the first is not a duplicate");
    assert_eq!(ids[1].duplicate_of, Some(ids[0].id));
    assert_eq!(ids[2].duplicate_of, Some(ids[0].id));
    let keys = server.sqlite.keys(KeyFilter::default()).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].scope, "stripe");
    assert_eq!(
        keys[0].key, "evt_dup",
        "Stripe's key is the body's event id"
    );
    assert_eq!(keys[0].deliveries, 3);
    assert_eq!(
        keys[0].status,
        KeyStatus::Completed,
        "with nothing to run, an accepted event is completed"
    );
}

#[tokio::test]
async fn a_forged_delivery_claims_no_key() {
    let mut server = support::start(support::config()).await;
    let forged = [("Stripe-Signature".to_string(), b"t=1,v1=0000".to_vec())];
    server.send(&request_owned("/stripe", &forged, BODY)).await;
    let d = server.next_delivery().await;
    assert_eq!(d.duplicate_of, None);
    assert!(
        server
            .sqlite
            .keys(KeyFilter::default())
            .await
            .unwrap()
            .is_empty(),
        "an invalid signature must not claim the genuine event's key"
    );
    // The genuine delivery that follows is the first, not a duplicate.
    server
        .send(&request_owned("/stripe", &stripe_headers(BODY), BODY))
        .await;
    let genuine = server.next_delivery().await;
    assert_eq!(genuine.duplicate_of, None);
    assert_eq!(
        server
            .sqlite
            .keys(KeyFilter::default())
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_source_can_take_its_key_from_a_header() {
    let mut config = support::config();
    config.sources[1].idempotency_key = Some(KeySpec {
        header: Some("X-Delivery-Key".into()),
        ..KeySpec::default()
    });
    let mut server = support::start(config).await;
    for body in [&b"one"[..], b"two"] {
        server
            .send(&request(
                "POST",
                "/plain",
                &[("X-Delivery-Key", &b"k-1"[..])],
                body,
            ))
            .await;
    }
    let first = server.next_delivery().await;
    let second = server.next_delivery().await;
    assert_eq!(
        second.duplicate_of,
        Some(first.id),
        "an unsigned source (no secret) still collapses duplicates by its key"
    );
    let keys = server.sqlite.keys(KeyFilter::default()).await.unwrap();
    assert_eq!(keys[0].key, "k-1");
}
