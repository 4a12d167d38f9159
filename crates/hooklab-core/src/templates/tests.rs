//! The catalogue against the rest of the core: every template signs and verifies with its
//! provider, reads back through the provider's metadata, and moves its payment machine exactly
//! as a real event would.

use super::*;
use crate::machine::builtin;
use crate::secret::Secret;
use crate::verdict::Status;
use crate::verify::{VerifyConfig, verify};
use serde_json::json;

const NOW: UnixMillis = UnixMillis(1_700_000_000_123);

fn secret_for(id: ProviderId) -> Secret {
    Secret::new(match id {
        ProviderId::Stripe
        | ProviderId::StandardWebhooks
        | ProviderId::Svix
        | ProviderId::Clerk
        | ProviderId::Resend
        | ProviderId::Supabase => "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        // A hex HMAC key, as Adyen's Customer Area shows it.
        ProviderId::Adyen | ProviderId::AdyenBalance => {
            "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
        }
        _ => "test_secret_0123456789",
    })
}

fn body_of(event: &TestEvent) -> Value {
    serde_json::from_slice(&event.body).expect("templates are JSON")
}

#[test]
fn every_template_signs_and_verifies_and_reads_back_its_metadata() {
    let opts = ProviderOptions::default();
    let mut checked = 0;
    for (id, types) in catalogue() {
        for kind in types {
            let event = generate(id, Some(kind), &[], NOW, "t").expect("a listed type generates");
            assert_eq!(event.template, kind);
            let secret = secret_for(id);
            let Ok(signed) = event.request(&opts, Some(&secret), "http://127.0.0.1:8787/t", NOW)
            else {
                assert_eq!(
                    id,
                    ProviderId::Discord,
                    "only Ed25519 Discord cannot sign with it"
                );
                continue;
            };
            let request = signed.raw_request();
            let verdict = verify(&VerifyConfig::new(id, vec![secret]), &request, NOW);
            assert_eq!(verdict.verdict, Status::Valid, "{id} {kind}: {verdict:?}");
            // The receiver reads the same id, type and object the event announces.
            let scheme = crate::provider::scheme(id, &opts).expect("default options");
            let metadata = scheme.metadata(&request);
            assert_eq!(
                metadata.event_id.unwrap_or_default(),
                event.event_id,
                "{id} {kind}: the recorded event id"
            );
            assert_eq!(
                metadata.event_type.as_deref().unwrap_or(kind),
                event.event_type,
                "{id} {kind}: the recorded type"
            );
            checked += 1;
        }
    }
    let total: usize = catalogue().iter().map(|(_, types)| types.len()).sum();
    assert_eq!(
        checked,
        total - 1,
        "every template but Discord's was checked"
    );
}

/// Each payment template, the machine that follows it, and the state it must move to.
const PAYMENT_TEMPLATES: &[(ProviderId, &str, &str, Option<&str>)] = &[
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.created",
        Some("created"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.requires_action",
        Some("requires_action"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.processing",
        Some("processing"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.payment_failed",
        Some("payment_failed"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.succeeded",
        Some("succeeded"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "payment_intent.canceled",
        Some("canceled"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "charge.refunded",
        Some("refunded"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "charge.dispute.created",
        Some("disputed"),
    ),
    (
        ProviderId::Stripe,
        "stripe-payment-intent",
        "invoice.paid",
        None,
    ),
    (
        ProviderId::Mercadopago,
        "mercadopago-payment",
        "payment.created",
        Some("pending"),
    ),
    (
        ProviderId::Mercadopago,
        "mercadopago-payment",
        "payment.updated",
        Some("approved"),
    ),
    (
        ProviderId::Asaas,
        "asaas-payment",
        "PAYMENT_CREATED",
        Some("pending"),
    ),
    (
        ProviderId::Asaas,
        "asaas-payment",
        "PAYMENT_CONFIRMED",
        Some("confirmed"),
    ),
    (
        ProviderId::Asaas,
        "asaas-payment",
        "PAYMENT_RECEIVED",
        Some("received"),
    ),
    (
        ProviderId::Asaas,
        "asaas-payment",
        "PAYMENT_OVERDUE",
        Some("overdue"),
    ),
    (
        ProviderId::Asaas,
        "asaas-payment",
        "PAYMENT_REFUNDED",
        Some("refunded"),
    ),
    (
        ProviderId::Wompi,
        "wompi-transaction",
        "transaction.updated",
        Some("approved"),
    ),
    (
        ProviderId::Paddle,
        "paddle-transaction",
        "transaction.created",
        Some("ready"),
    ),
    (
        ProviderId::Paddle,
        "paddle-transaction",
        "transaction.paid",
        Some("paid"),
    ),
    (
        ProviderId::Paddle,
        "paddle-transaction",
        "transaction.payment_failed",
        Some("payment_failed"),
    ),
    (
        ProviderId::Paddle,
        "paddle-transaction",
        "transaction.completed",
        Some("completed"),
    ),
];

#[test]
fn payment_templates_move_their_machine_like_real_events() {
    for &(provider, machine_name, kind, state) in PAYMENT_TEMPLATES {
        let machine = builtin(machine_name).expect("a built-in machine");
        assert!(machine.applies_to(provider));
        let event = generate(provider, Some(kind), &[], NOW, "m").expect("generates");
        let secret = secret_for(provider);
        // The body as sent (Wompi's signer adds its checksum and timestamp to it).
        let signed = event
            .request(
                &ProviderOptions::default(),
                Some(&secret),
                "http://127.0.0.1:1/p",
                NOW,
            )
            .expect("signs");
        let body: Value = serde_json::from_slice(&signed.body).expect("JSON");
        let metadata = crate::provider::scheme(provider, &ProviderOptions::default())
            .expect("scheme")
            .metadata(&signed.raw_request());
        let Some(state) = state else {
            assert!(
                machine.event_from_body(&body).is_none(),
                "{kind} is not a step of {machine_name}"
            );
            continue;
        };
        let step = machine
            .extract_from_body(&body)
            .unwrap_or_else(|e| panic!("{provider} {kind} is read by {machine_name}: {e}"));
        assert_eq!(step.state, state, "{provider} {kind}");
        assert_eq!(step.event_type, kind, "{provider} {kind}");
        assert_eq!(
            Some(&step.object_id),
            event.object_id.as_ref(),
            "{provider} {kind}"
        );
        if !kind.starts_with("charge.") {
            assert_eq!(
                metadata.object_id.as_ref(),
                Some(&step.object_id),
                "{provider} {kind}: the receiver's object is the machine's"
            );
        }
        // The provider's own time is `now`, at the precision the provider prints it.
        let lag = NOW.0 - step.provider_time.0;
        assert!(
            (0..1000).contains(&lag),
            "{provider} {kind}: provider time {step:?}"
        );
    }
}

#[test]
fn an_object_id_override_makes_an_out_of_order_sequence_on_one_payment() {
    let machine = builtin("stripe-payment-intent").unwrap();
    let same = [Override::parse("data.object.id=pi_X").unwrap()];
    let later = UnixMillis(NOW.0 + 5000);
    let succeeded = generate(
        ProviderId::Stripe,
        Some("payment_intent.succeeded"),
        &same,
        later,
        "1",
    )
    .unwrap();
    let created = generate(
        ProviderId::Stripe,
        Some("payment_intent.created"),
        &same,
        NOW,
        "2",
    )
    .unwrap();
    assert_ne!(succeeded.event_id, created.event_id, "two events");
    assert_eq!(succeeded.object_id.as_deref(), Some("pi_X"));
    assert_eq!(created.object_id.as_deref(), Some("pi_X"));
    let mut object = crate::machine::ObjectState::new(&machine, "pi_X");
    let step = |e: &TestEvent| machine.event_from_body(&body_of(e)).unwrap();
    let rows = object.apply(&machine, step(&succeeded), later);
    assert_eq!(
        rows[0].decision,
        crate::machine::Decision::Parked,
        "succeeded first waits"
    );
    object.apply(&machine, step(&created), later);
    assert_eq!(
        object.state(),
        Some("succeeded"),
        "then applies after created"
    );
    // A refund names its PaymentIntent in `payment_intent`.
    let refund = [Override::parse("data.object.payment_intent=pi_X").unwrap()];
    let refunded = generate(
        ProviderId::Stripe,
        Some("charge.refunded"),
        &refund,
        later,
        "3",
    )
    .unwrap();
    assert_eq!(refunded.object_id.as_deref(), Some("pi_X"));
}

#[test]
fn metadata_headers_and_signed_queries_follow_the_event() {
    let push = generate(ProviderId::Github, Some("push"), &[], NOW, "g").unwrap();
    let header = |e: &TestEvent, name: &str| {
        e.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header(&push, "X-GitHub-Event").as_deref(), Some("push"));
    assert_eq!(push.event_type, "push");
    assert_eq!(
        header(&push, "X-GitHub-Delivery"),
        Some(push.event_id.clone())
    );
    assert_eq!(
        push.object_id,
        body_of(&push)["after"].as_str().map(str::to_string)
    );
    let signed = push
        .request(
            &ProviderOptions::default(),
            Some(&Secret::new("s")),
            "http://h/g",
            NOW,
        )
        .unwrap();
    let events: Vec<_> = signed
        .headers
        .iter()
        .filter(|(n, _)| n == "X-GitHub-Event")
        .collect();
    assert_eq!(
        events,
        [&("X-GitHub-Event".to_string(), "push".to_string())],
        "one, the template's"
    );

    let order = generate(ProviderId::Shopify, None, &[], NOW, "s").unwrap();
    assert_eq!(
        header(&order, "X-Shopify-Topic").as_deref(),
        Some("orders/create")
    );
    assert_eq!(
        header(&order, "X-Shopify-Event-Id"),
        Some(order.event_id.clone())
    );
    assert!(
        order
            .object_id
            .as_deref()
            .unwrap()
            .starts_with("gid://shopify/Order/")
    );

    let set = [Override::parse("data.id=\"98765\"").unwrap()];
    let mp = generate(
        ProviderId::Mercadopago,
        Some("payment.created"),
        &set,
        NOW,
        "m",
    )
    .unwrap();
    assert_eq!(
        mp.query.as_deref(),
        Some("data.id=98765&type=payment"),
        "the signed query follows"
    );
    assert_eq!(mp.object_id.as_deref(), Some("98765"));
    let signed = mp
        .request(
            &ProviderOptions::default(),
            Some(&Secret::new("s")),
            "http://h/mp",
            NOW,
        )
        .unwrap();
    assert_eq!(signed.url, "http://h/mp?data.id=98765&type=payment");

    let slack = generate(ProviderId::Slack, Some("url_verification"), &[], NOW, "s").unwrap();
    assert_eq!(slack.event_type, "url_verification");
    assert!(body_of(&slack)["challenge"].is_string());
}

#[test]
fn asaas_dates_its_events_in_brasilia_time() {
    let event = generate(ProviderId::Asaas, Some("PAYMENT_CREATED"), &[], NOW, "a").unwrap();
    let body = body_of(&event);
    // 1700000000 is 2023-11-14 22:13:20 UTC, 19:13:20 in Brasília.
    assert_eq!(body["dateCreated"], "2023-11-14 19:13:20");
    assert_eq!(body["payment"]["billingType"], "PIX");
    assert!(event.event_id.starts_with("evt_") && event.event_id.contains('&'));
    assert!(event.object_id.as_deref().unwrap().starts_with("pay_"));
}

#[test]
fn unknown_types_and_bad_overrides_say_what_is_wrong() {
    let err = generate(
        ProviderId::Stripe,
        Some("payment_intent.teleported"),
        &[],
        NOW,
        "e",
    )
    .unwrap_err();
    assert_eq!(err.code(), "unknown_event_type");
    let text = err.to_string();
    assert!(
        text.contains("payment_intent.teleported") && text.contains("charge.refunded"),
        "names the wrong one and lists the known: {text}"
    );
    let set = [Override {
        path: "data.object.id.deeper".into(),
        value: json!(1),
    }];
    let err = generate(ProviderId::Stripe, None, &set, NOW, "e").unwrap_err();
    assert_eq!(err.code(), "bad_path");
    assert!(err.to_string().contains("not an object"), "{err}");
}

#[test]
fn ids_are_fresh_and_the_catalogue_keeps_the_old_defaults() {
    let a = test_event(ProviderId::Stripe, NOW, "a");
    let b = test_event(ProviderId::Stripe, NOW, "b");
    assert_ne!(a.event_id, b.event_id);
    assert_eq!(a, test_event(ProviderId::Stripe, NOW, "a"), "reproducible");
    let body = body_of(&a);
    assert_eq!(body["id"], a.event_id.as_str());
    assert_eq!(body["created"], 1_700_000_000);
    assert_eq!(a.event_type, "payment_intent.succeeded");
    let all = catalogue();
    assert_eq!(
        all.len(),
        ProviderId::ALL.len(),
        "every provider has test events"
    );
    let first = |p: ProviderId| all.iter().find(|(id, _)| *id == p).unwrap().1[0];
    assert_eq!(first(ProviderId::Github), "ping");
    assert_eq!(first(ProviderId::Zoom), "hooklab.test");
}
