//! Retry schedules: the syntax, every preset, jitter bounds, time scaling, exhaustion.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn the_default_forward_schedule_is_the_documented_one() {
    let s = RetrySchedule::default();
    assert_eq!(
        s.delays,
        vec![ms(200), secs(1), secs(5), secs(30), secs(120), secs(600)],
        "0.2s,1s,5s,30s,2m,10m"
    );
    assert_eq!(s.max_attempts(), 7, "the first attempt plus six retries");
    assert_eq!(
        s.to_string(),
        "200ms,1s,5s,30s,2m,10m",
        "Display reads back"
    );
    assert_eq!(RetrySchedule::parse(&s.to_string()).unwrap(), s);
}

#[test]
fn every_unit_and_decimal_delays_parse_exactly() {
    let s = RetrySchedule::parse(" 250ms, 0.2s ,1.5m,2h,1d,0,0s").unwrap();
    assert_eq!(
        s.delays,
        vec![
            ms(250),
            ms(200),
            secs(90),
            secs(7200),
            secs(86_400),
            Duration::ZERO,
            Duration::ZERO
        ],
        "0.2s must be exactly 200 ms, not 199.999…"
    );
}

#[test]
fn bad_schedules_say_what_is_wrong() {
    let err = |text: &str| RetrySchedule::parse(text).unwrap_err();
    assert_eq!(err(""), RetryScheduleError::Empty);
    assert_eq!(
        err("5s,,5m"),
        RetryScheduleError::EmptyDelay { position: 2 }
    );
    assert!(matches!(err("5"), RetryScheduleError::MissingUnit { .. }));
    assert!(matches!(err("5s,5w"), RetryScheduleError::UnknownUnit { unit, .. } if unit == "w"));
    assert!(matches!(
        err("5s,-5s"),
        RetryScheduleError::BadNumber { .. }
    ));
    assert!(matches!(
        err("5s,1.2.3s"),
        RetryScheduleError::BadNumber { .. }
    ));
    assert!(matches!(err("400d"), RetryScheduleError::TooLong { .. }));
    let unknown = err("stipe");
    assert!(matches!(&unknown, RetryScheduleError::UnknownPreset { name } if name == "stipe"));
    let message = unknown.to_string();
    assert!(
        message.contains("stripe") && message.contains("0.2s,5s,5m"),
        "the error lists the presets and shows the syntax: {message}"
    );
}

#[test]
fn presets_mirror_their_providers() {
    let p = |name: &str| RetrySchedule::parse(name).unwrap();
    let svix = vec![
        secs(5),
        secs(300),
        secs(1800),
        secs(7200),
        secs(5 * 3600),
        secs(10 * 3600),
        secs(14 * 3600),
        secs(20 * 3600),
        secs(24 * 3600),
    ];
    assert_eq!(p("standard-webhooks").delays, svix, "the spec's schedule");
    assert_eq!(p("svix").delays, svix);
    assert_eq!(p("SVIX").delays, svix, "names are case-insensitive");
    assert_eq!(p("resend").max_attempts(), 8, "immediately + 7 retries");
    assert_eq!(p("github"), RetrySchedule::none(), "GitHub never retries");
    assert_eq!(p("none").max_attempts(), 1);
    assert_eq!(p("slack").delays, vec![Duration::ZERO, secs(60), secs(300)]);

    let shopify = p("shopify");
    assert_eq!(shopify.delays.len(), 8, "8 retries");
    assert_eq!(shopify.total(), secs(4 * 3600), "over 4 hours");

    let stripe = p("stripe");
    assert!(stripe.total() <= secs(72 * 3600), "up to 3 days");
    assert!(stripe.total() >= secs(70 * 3600), "…and close to it");
    assert!(
        stripe.delays.windows(2).all(|w| w[0] <= w[1]),
        "backoff never shortens"
    );

    let paddle = p("paddle");
    assert_eq!(paddle.delays.len(), 60, "60 retries");
    assert_eq!(
        paddle.delays[..20].iter().sum::<Duration>(),
        secs(3600),
        "20 in the first hour"
    );
    assert!(paddle.total() <= secs(72 * 3600), "over 3 days");

    assert!(p("razorpay").total() <= secs(24 * 3600), "within 24 h");
    assert_eq!(
        p("wompi").total(),
        secs(24 * 3600),
        "the last retry 24 h after the first attempt"
    );
    assert_eq!(
        p("asaas").max_attempts(),
        15,
        "15 attempts, then the queue pauses"
    );
    let mp = p("mercadopago");
    assert_eq!(
        mp.delays[..2],
        [secs(900), secs(900)],
        "every 15 minutes at first"
    );
    assert_eq!(mp.total(), secs(96 * 3600), "the last at 96 h");
}

#[test]
fn every_preset_parses_and_says_where_it_comes_from() {
    for preset in PRESETS {
        assert!(
            RetrySchedule::preset(preset.name).is_some(),
            "{} must parse",
            preset.name
        );
        assert!(!preset.source.is_empty(), "{} needs a source", preset.name);
    }
}

#[test]
fn delay_before_follows_the_schedule_then_gives_up() {
    let s = RetrySchedule::parse("1s,5s,30s").unwrap();
    assert_eq!(s.delay_before(1, 0.5), Some(secs(1)), "after attempt 1");
    assert_eq!(s.delay_before(2, 0.5), Some(secs(5)));
    assert_eq!(s.delay_before(3, 0.5), Some(secs(30)));
    assert_eq!(s.delay_before(4, 0.5), None, "exhausted: dead-letter");
    assert_eq!(s.delay_before(u32::MAX, 0.5), None);
    assert_eq!(
        s.delay_before(0, 0.5),
        Some(secs(1)),
        "0 counts as the first"
    );
    assert_eq!(RetrySchedule::none().delay_before(1, 0.5), None);
}

#[test]
fn jitter_stays_within_ten_percent() {
    let s = RetrySchedule::parse("10s").unwrap();
    assert_eq!(s.delay_before(1, 0.0), Some(secs(9)), "−10 % at 0");
    assert_eq!(s.delay_before(1, 1.0), Some(secs(11)), "+10 % at 1");
    assert_eq!(s.delay_before(1, 7.0), Some(secs(11)), "clamped above");
    assert_eq!(s.delay_before(1, -3.0), Some(secs(9)), "clamped below");
    assert_eq!(
        s.delay_before(1, f64::NAN),
        Some(secs(10)),
        "NaN: no jitter"
    );
    for i in 0..100 {
        let d = s.delay_before(1, f64::from(i) / 100.0).unwrap();
        assert!(d >= secs(9) && d <= secs(11), "{d:?}");
    }
    assert_eq!(
        RetrySchedule::parse("0s").unwrap().delay_before(1, 0.9),
        Some(Duration::ZERO),
        "immediately stays immediately"
    );
}

#[test]
fn time_scale_divides_every_delay() {
    let stripe = RetrySchedule::parse("stripe").unwrap();
    let fast = stripe.clone().with_time_scale(4320.0);
    assert!(
        fast.total() <= secs(60),
        "three days in a minute: {:?}",
        fast.total()
    );
    assert_eq!(fast.delays.len(), stripe.delays.len());
    assert_eq!(
        RetrySchedule::parse("1m")
            .unwrap()
            .with_time_scale(60.0)
            .delays,
        vec![secs(1)]
    );
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            stripe.clone().with_time_scale(bad),
            stripe,
            "{bad} changes nothing"
        );
    }
}

#[test]
fn time_scales_must_be_positive_numbers() {
    assert_eq!(TimeScale::parse("4320").unwrap().get(), 4320.0);
    assert_eq!(TimeScale::parse("0.5").unwrap().get(), 0.5);
    for bad in ["0", "-2", "fast", "", "inf", "NaN"] {
        assert!(TimeScale::parse(bad).is_err(), "`{bad}` must be refused");
    }
    assert_eq!(TimeScale::default(), TimeScale::REAL);
}

#[test]
fn durations_format_in_the_shortest_exact_unit() {
    assert_eq!(format_duration(ms(200)), "200ms");
    assert_eq!(format_duration(ms(1500)), "1500ms");
    assert_eq!(format_duration(secs(90)), "90s");
    assert_eq!(format_duration(secs(120)), "2m");
    assert_eq!(format_duration(secs(86_400)), "1d");
    assert_eq!(format_duration(Duration::ZERO), "0s");
    assert_eq!(parse_duration("30s").unwrap(), secs(30));
}
