//! Reconciliation against local stand-ins for the providers' APIs (no provider is reachable
//! from CI): small axum apps on 127.0.0.1:0 that speak the part of Stripe's API the reconciler
//! uses (`GET /v1/payment_intents/{id}` with the bearer key checked and `expand[]` honoured,
//! `GET /v1/events` newest first with `created[gte]`, `limit`, `starting_after`, `has_more`)
//! and Mercado Pago's (`GET /v1/payments/{id}`). Objects are made the real way: deliveries
//! recorded in a SQLite store in a temp dir, then moved by `objects::apply_delivery`.

#[path = "reconcile/support.rs"]
mod support;

use axum::http::header;
use hooklab_core::clock::UnixMillis;
use hooklab_core::machine::Decision;
use hooklab_core::provider::ProviderId;
use hooklab_core::secret::Secret;
use hooklab_core::store::Store;
use hooklab_server::objects::{AWAITING_CONFIRMATION, Machines};
use hooklab_server::reconcile::{
    Apis, MercadoPagoApi, ProviderApi, StripeApi, Unchanged, reconcile,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::*;

#[tokio::test]
async fn stuck_payments_are_corrected_through_their_machines() {
    let (_dir, store) = store().await;
    stripe_event(&store, "pi_stuck", "payment_intent.created", 1).await;
    stripe_event(&store, "pi_stuck", "payment_intent.processing", 2).await;
    stripe_event(&store, "pi_sync", "payment_intent.created", 3).await;
    stripe_event(&store, "pi_sync", "payment_intent.succeeded", 4).await;
    let notification = json!({"id": 12_001, "type": "payment", "action": "payment.created",
        "date_created": "2023-11-14T22:13:25Z", "data": {"id": "111", "status": "pending"}});
    deliver(
        &store,
        ProviderId::Mercadopago,
        notification,
        UnixMillis::from_secs(T0 + 5),
    )
    .await;
    assert!(
        object_of(&store, "pi_stuck")
            .await
            .flags
            .contains(&AWAITING_CONFIRMATION.to_string()),
        "processing waits for confirmation before the pass"
    );

    let (stripe_url, stripe) = StandIn::start(STRIPE_KEY, Duration::ZERO).await;
    stripe.put(
        "pi_stuck",
        payment_intent("pi_stuck", "succeeded", charge(false, 0)),
    );
    stripe.put(
        "pi_sync",
        payment_intent("pi_sync", "succeeded", charge(false, 0)),
    );
    let (mp_url, mp) = StandIn::start(MP_TOKEN, Duration::ZERO).await;
    let approved_at = "2023-11-14T19:40:00.000-03:00";
    mp.put(
        "111",
        json!({"id": 111, "status": "approved", "status_detail": "accredited",
        "date_created": "2023-11-14T19:13:25.000-03:00", "date_last_updated": approved_at}),
    );
    let apis = Apis::new()
        .with(
            StripeApi::MACHINE,
            StripeApi::new(Secret::new(STRIPE_KEY)).with_base_url(&stripe_url),
        )
        .with(
            MercadoPagoApi::MACHINE,
            MercadoPagoApi::new(Secret::new(MP_TOKEN)).with_base_url(&mp_url),
        );

    let report = reconcile(
        store.as_ref(),
        &Machines::default(),
        &apis,
        TEN_MINUTES,
        AN_HOUR_LATER,
    )
    .await
    .expect("the pass runs");

    assert_eq!(
        report.checked, 3,
        "two PaymentIntents and one payment: {report:#?}"
    );
    assert!(
        report.errors.is_empty(),
        "every call worked: {:?}",
        report.errors
    );
    let moves: Vec<_> = report
        .corrections
        .iter()
        .map(|c| {
            (
                c.object_id.as_str(),
                c.from.as_deref(),
                c.to.as_str(),
                c.decision,
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            (
                "pi_stuck",
                Some("processing"),
                "succeeded",
                Decision::Applied
            ),
            ("111", Some("pending"), "approved", Decision::Applied),
        ],
        "each stuck object moves to the provider's state through its machine"
    );
    assert_eq!(
        report.corrections[0].provider_time, AN_HOUR_LATER,
        "Stripe gives no status time: now"
    );
    assert_eq!(
        Some(report.corrections[1].provider_time),
        UnixMillis::parse_rfc3339(approved_at),
        "Mercado Pago's date_last_updated is the correction's time"
    );
    assert_eq!(
        report.unchanged,
        [Unchanged {
            machine: StripeApi::MACHINE.into(),
            object_id: "pi_sync".into(),
            state: "succeeded".into()
        }],
        "an object already in the provider's state is left alone"
    );

    let stuck = object_of(&store, "pi_stuck").await;
    assert_eq!(
        stuck.state.as_deref(),
        Some("succeeded"),
        "the store holds the truth"
    );
    assert!(
        stuck.flags.is_empty(),
        "no longer awaiting confirmation: {:?}",
        stuck.flags
    );
    assert_eq!(stuck.updated_at, AN_HOUR_LATER);
    assert_eq!(
        object_of(&store, "111").await.state.as_deref(),
        Some("approved")
    );

    let timeline = store.timeline("pi_stuck".into()).await.expect("timeline");
    let last = timeline.last().expect("rows");
    assert_eq!(
        timeline.len(),
        3,
        "created, processing, then the correction: {timeline:#?}"
    );
    assert_eq!(
        (last.from.as_deref(), last.to.as_deref()),
        (Some("processing"), Some("succeeded"))
    );
    assert_eq!(last.decision, "applied");
    assert_eq!(
        last.delivery, None,
        "a correction comes from the API, not a delivery"
    );
    assert!(
        last.reason
            .starts_with("reconciliation: the provider's API says `succeeded`"),
        "{}",
        last.reason
    );
    assert_eq!(last.at, AN_HOUR_LATER);
    let mp_row = store.timeline("111".into()).await.expect("timeline");
    assert_eq!(mp_row.last().map(|r| r.decision.as_str()), Some("applied"));

    let calls = stripe.requests("/v1/payment_intents/");
    assert_eq!(calls.len(), 2, "one call per Stripe object");
    for (target, headers) in &calls {
        assert!(
            target.contains("expand%5B%5D=latest_charge"),
            "the charge is expanded: {target}"
        );
        assert_eq!(
            headers[header::AUTHORIZATION],
            format!("Bearer {STRIPE_KEY}").as_str()
        );
        assert!(
            headers.contains_key("stripe-version"),
            "the API version is pinned"
        );
    }
    assert_eq!(
        mp.requests("/v1/payments/111")[0].1[header::AUTHORIZATION],
        format!("Bearer {MP_TOKEN}").as_str()
    );
}

#[tokio::test]
async fn recent_and_settled_objects_are_not_asked_about() {
    let (_dir, store) = store().await;
    stripe_event(&store, "pi_refunded", "payment_intent.created", 1).await;
    stripe_event(&store, "pi_refunded", "payment_intent.succeeded", 2).await;
    let refund = json!({"id": "evt_r", "object": "event", "type": "charge.refunded",
        "created": T0 + 3,
        "data": {"object": {"id": "ch_1", "object": "charge", "payment_intent": "pi_refunded"}}});
    deliver(
        &store,
        ProviderId::Stripe,
        refund,
        UnixMillis::from_secs(T0 + 4),
    )
    .await;
    let recent = (AN_HOUR_LATER.0 / 1000) - T0 - 60;
    stripe_event(&store, "pi_recent", "payment_intent.created", recent).await;
    stripe_event(&store, "pi_recent", "payment_intent.processing", recent + 1).await;
    assert_eq!(
        object_of(&store, "pi_refunded").await.state.as_deref(),
        Some("refunded")
    );

    let (url, stripe) = StandIn::start(STRIPE_KEY, Duration::ZERO).await;
    let apis = Apis::new().with(
        StripeApi::MACHINE,
        StripeApi::new(Secret::new(STRIPE_KEY)).with_base_url(&url),
    );
    let report = reconcile(
        store.as_ref(),
        &Machines::default(),
        &apis,
        TEN_MINUTES,
        AN_HOUR_LATER,
    )
    .await
    .expect("the pass runs");
    assert_eq!(
        report.checked, 0,
        "final or recently updated objects are not stuck: {report:#?}"
    );
    assert!(
        stripe.requests("/v1/payment_intents/").is_empty(),
        "so the API is not called"
    );
}

#[tokio::test]
async fn a_truth_the_machine_cannot_reach_is_parked_once() {
    let (_dir, store) = store().await;
    stripe_event(&store, "pi_refunded_meanwhile", "payment_intent.created", 1).await;
    stripe_event(
        &store,
        "pi_refunded_meanwhile",
        "payment_intent.processing",
        2,
    )
    .await;
    let (url, stripe) = StandIn::start(STRIPE_KEY, Duration::ZERO).await;
    stripe.put(
        "pi_refunded_meanwhile",
        payment_intent("pi_refunded_meanwhile", "succeeded", charge(false, 700)),
    );
    let apis = Apis::new().with(
        StripeApi::MACHINE,
        StripeApi::new(Secret::new(STRIPE_KEY)).with_base_url(&url),
    );
    let machines = Machines::default();

    let first = reconcile(store.as_ref(), &machines, &apis, TEN_MINUTES, AN_HOUR_LATER)
        .await
        .expect("runs");
    assert_eq!(first.corrections.len(), 1, "{first:#?}");
    assert_eq!(
        first.corrections[0].to, "refunded",
        "a partial refund counts as refunded"
    );
    assert_eq!(
        first.corrections[0].decision,
        Decision::Parked,
        "processing → refunded skips `succeeded`: parked, rather than inventing a step"
    );
    let later = UnixMillis(AN_HOUR_LATER.0 + 3_600_000);
    let second = reconcile(store.as_ref(), &machines, &apis, TEN_MINUTES, later)
        .await
        .expect("runs");
    assert_eq!(
        second
            .corrections
            .iter()
            .map(|c| c.decision)
            .collect::<Vec<_>>(),
        [Decision::Duplicate],
        "the same truth again is the parked event again, not a second copy"
    );
    let object = object_of(&store, "pi_refunded_meanwhile").await;
    let state: hooklab_core::machine::ObjectState =
        serde_json::from_str(&object.data).expect("engine state");
    assert_eq!(
        state.parked().len(),
        1,
        "one parked correction after two passes"
    );
    assert_eq!(
        object.state.as_deref(),
        Some("processing"),
        "the machine's rules still hold"
    );
}

#[tokio::test]
async fn provider_failures_are_reported_per_object_and_the_pass_goes_on() {
    let (_dir, store) = store().await;
    stripe_event(&store, "pi_1", "payment_intent.created", 1).await;
    for (id, minute) in [("111", 1), ("222", 2)] {
        let notification = json!({"id": 12_000 + minute, "type": "payment",
            "action": "payment.created", "date_created": format!("2023-11-14T22:{minute:02}:00Z"),
            "data": {"id": id, "status": "pending"}});
        deliver(
            &store,
            ProviderId::Mercadopago,
            notification,
            UnixMillis::from_secs(T0 + 5),
        )
        .await;
    }
    let (stripe_url, stripe) = StandIn::start(STRIPE_KEY, Duration::ZERO).await;
    stripe.put(
        "pi_1",
        payment_intent("pi_1", "succeeded", charge(false, 0)),
    );
    let (mp_url, mp) = StandIn::start(MP_TOKEN, Duration::ZERO).await;
    mp.put(
        "111",
        json!({"id": 111, "status": "approved", "date_last_updated": "2023-11-14T22:30:00Z"}),
    );
    let wrong_key = "sk_test_wrong_and_secret";
    let apis = Apis::new()
        .with(
            StripeApi::MACHINE,
            StripeApi::new(Secret::new(wrong_key)).with_base_url(&stripe_url),
        )
        .with(
            MercadoPagoApi::MACHINE,
            MercadoPagoApi::new(Secret::new(MP_TOKEN)).with_base_url(&mp_url),
        );

    let report = reconcile(
        store.as_ref(),
        &Machines::default(),
        &apis,
        TEN_MINUTES,
        AN_HOUR_LATER,
    )
    .await
    .expect("provider failures do not fail the pass");

    let errors: Vec<_> = report
        .errors
        .iter()
        .map(|e| (e.machine.as_str(), e.object_id.as_deref(), e.code))
        .collect();
    assert_eq!(
        errors,
        [
            (StripeApi::MACHINE, Some("pi_1"), "unauthorized"),
            (MercadoPagoApi::MACHINE, Some("222"), "not_found"),
            (StripeApi::MACHINE, None, "unauthorized"),
        ],
        "a 401 per Stripe call (the object, then the gap check), a 404 for the unknown payment"
    );
    for e in &report.errors {
        assert!(
            !e.message.contains(wrong_key),
            "the key is scrubbed even when echoed: {}",
            e.message
        );
    }
    assert!(
        report.errors[0].message.contains("HTTP 401"),
        "{}",
        report.errors[0].message
    );
    assert_eq!(report.checked, 3);
    assert_eq!(
        report
            .corrections
            .iter()
            .map(|c| c.object_id.as_str())
            .collect::<Vec<_>>(),
        ["111"],
        "the payment Mercado Pago knows is still corrected"
    );
    assert_eq!(
        object_of(&store, "pi_1").await.state.as_deref(),
        Some("created"),
        "unchanged on error"
    );
}

#[tokio::test]
async fn gaps_are_exactly_the_events_hooklab_never_recorded() {
    let (_dir, store) = store().await;
    let (url, stripe) = StandIn::start(STRIPE_KEY, Duration::ZERO).await;
    let never_received = [50, 120, 229];
    // 230 events, newest first as Stripe lists them, ten seconds apart.
    let events: Vec<Value> = (0..230)
        .rev()
        .map(|i| {
            json!({"id": format!("evt_{i:03}"), "object": "event", "type": "customer.updated",
                        "created": T0 + 10 * i})
        })
        .collect();
    *stripe.events.lock().unwrap() = events.clone();
    let mut recording = tokio::task::JoinSet::new();
    for event in events
        .iter()
        .filter(|e| e["created"].as_i64() >= Some(T0 + 30))
    {
        let i = event["created"].as_i64().unwrap() - T0;
        if never_received.contains(&(i / 10)) {
            continue;
        }
        let (store, event) = (Arc::clone(&store), event.clone());
        let at = UnixMillis::from_secs(T0 + i + 1);
        recording.spawn(async move { deliver(&store, ProviderId::Stripe, event, at).await });
    }
    recording.join_all().await;
    // The same id from another provider is not a Stripe event.
    let other = json!({"id": "evt_050", "type": "payment", "action": "payment.created"});
    deliver(
        &store,
        ProviderId::Mercadopago,
        other,
        UnixMillis::from_secs(T0),
    )
    .await;
    let api = StripeApi::new(Secret::new(STRIPE_KEY)).with_base_url(&url);
    let machines = Machines::default();

    let apis = Apis::new().with(StripeApi::MACHINE, api.clone());
    let report = reconcile(store.as_ref(), &machines, &apis, TEN_MINUTES, AN_HOUR_LATER)
        .await
        .expect("runs");
    assert_eq!(report.gaps.len(), 1, "{report:#?}");
    let gap = &report.gaps[0];
    assert_eq!(
        gap.since,
        UnixMillis::from_secs(T0 + 31),
        "from the first Stripe delivery recorded"
    );
    assert_eq!(
        gap.listed, 226,
        "evt_004..evt_229: created at or after the window's start"
    );
    assert_eq!(
        gap.missing_events,
        ["evt_229", "evt_120", "evt_050"],
        "exactly the three never received"
    );
    let pages = stripe.requests("/v1/events");
    assert_eq!(pages.len(), 3, "100 + 100 + 26, following has_more");
    assert!(
        pages[0].0.contains("created%5Bgte%5D=1700000031&limit=100"),
        "{}",
        pages[0].0
    );
    assert!(
        pages[1].0.ends_with("starting_after=evt_130"),
        "{}",
        pages[1].0
    );

    let wider = Apis::new()
        .with(StripeApi::MACHINE, api)
        .gaps_since(UnixMillis::from_secs(T0));
    let report = reconcile(
        store.as_ref(),
        &machines,
        &wider,
        TEN_MINUTES,
        AN_HOUR_LATER,
    )
    .await
    .expect("runs");
    let gap = &report.gaps[0];
    assert_eq!(gap.listed, 230, "a configured window starts where it says");
    assert_eq!(
        gap.missing_events,
        [
            "evt_229", "evt_120", "evt_050", "evt_002", "evt_001", "evt_000"
        ],
        "events before Hooklab first heard from Stripe are missing too, in this window"
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
}

#[tokio::test]
async fn https_is_refused_and_a_silent_provider_times_out() {
    let tls = StripeApi::new(Secret::new(STRIPE_KEY)).fetch("pi_1").await;
    let err = tls.expect_err("no TLS stack yet");
    assert_eq!(err.code(), "tls_unsupported");
    assert!(
        err.to_string().contains("https://api.stripe.com"),
        "names the URL: {err}"
    );
    assert!(
        err.to_string().contains("plain-HTTP proxy or stand-in"),
        "says what to do: {err}"
    );
    let mp = MercadoPagoApi::new(Secret::new(MP_TOKEN)).fetch("1").await;
    assert_eq!(mp.err().map(|e| e.code()), Some("tls_unsupported"));
    let none = MercadoPagoApi::new(Secret::new(MP_TOKEN))
        .event_ids_since(UnixMillis(0))
        .await;
    assert!(matches!(none, Ok(None)), "Mercado Pago has no events API");

    let (url, _slow) = StandIn::start(STRIPE_KEY, Duration::from_secs(30)).await;
    let api = StripeApi::new(Secret::new(STRIPE_KEY))
        .with_base_url(&url)
        .with_timeout(Duration::from_millis(200));
    let err = api
        .fetch("pi_1")
        .await
        .expect_err("the stand-in never answers in time");
    assert_eq!(err.code(), "timeout", "{err}");
    assert!(
        err.to_string().contains("within 200ms"),
        "says how long: {err}"
    );
}
