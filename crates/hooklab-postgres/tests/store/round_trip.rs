//! Every store: round trip.

use super::*;

pub(crate) async fn every_byte_and_field_comes_back_exactly(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let mut d = delivery(
        "stripe",
        invalid(),
        b"\xff\xfe{\"id\":\x00\"evt_1\"}\xc3\x28",
    );
    d.method = "PUT".into();
    d.path = "/stripe/hooks".into();
    d.query = Some("a=1&a=2&b=%ZZ".into());
    d.headers = vec![
        Header::new("Stripe-Signature", "t=1,v1=abc"),
        Header::new("X-Dup", "first"),
        Header::new("content-type", "application/json"),
        Header::new("x-dup", "second"),
        Header::new("X-Binary", b"\x80\xff raw \x00".to_vec()),
        Header::new("X-DUP", "third"),
    ];
    d.metadata = Metadata {
        event_id: Some("evt_1".into()),
        event_type: Some("payment_intent.succeeded".into()),
        object_id: Some("pi_1".into()),
        provider_time: Some(UnixMillis(1_749_999_999_000)),
        idempotency_key: Some("evt_1".into()),
    };
    d.response_status = 401;
    d.verdict.diagnosis = Some(Diagnosis {
        finding: Some(Finding::OutsideTolerance {
            secret_index: 0,
            age_secs: 400,
            by_secs: 100,
        }),
        message: "the timestamp is 400 s old; the tolerance is 300 s".into(),
    });
    let id = store.record(d.clone()).await.unwrap().id;

    let got = store.get(id).await.unwrap().expect("the row just written");
    assert_eq!(got.id, id);
    assert_eq!(
        got.record, d,
        "body bytes, header order/duplicates/case/binary values, query, metadata and \
         verdict must all survive storage unchanged"
    );
}

pub(crate) async fn empty_and_refused_bodies_and_unknown_sources_round_trip(engine: Engine) {
    let opened = engine.open().await;
    let store = &*opened.store;
    let mut empty = delivery(
        "nobody-configured-this",
        Verdict::not_verified("unknown"),
        b"",
    );
    empty.headers.clear();
    empty.remote_addr = None;
    let mut refused = delivery("github", valid(), b"");
    refused.body_refused = true;
    refused.body_size = 50 * 1024 * 1024;
    refused.response_status = 413;
    for d in [empty, refused] {
        let id = store.record(d.clone()).await.unwrap().id;
        assert_eq!(store.get(id).await.unwrap().unwrap().record, d);
    }
    assert!(
        store.get(9_999).await.unwrap().is_none(),
        "a missing id is None, not an error"
    );
}
