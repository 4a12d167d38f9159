//! Forwarding settings in TOML: global defaults, per-source overrides, the success rule by
//! provider, and the errors for targets and schedules that cannot be used.

use super::super::{Config, ConfigError};
use super::*;
use hooklab_core::retry::TimeScale;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str_with_env(text, &|_| Err(std::env::VarError::NotPresent))
}

fn err(text: &str) -> String {
    parse(text).expect_err("must be refused").to_string()
}

#[test]
fn nothing_is_forwarded_by_default() {
    let c = parse("[[source]]\nname = \"s\"\nprovider = \"stripe\"\n").unwrap();
    assert_eq!(c.forward_to, None);
    assert!(!c.forwards(), "no target: no worker");
    assert_eq!(c.retry_schedule, RetrySchedule::default_forward());
    assert_eq!(c.time_scale, TimeScale::REAL);
    assert_eq!(c.forward_timeout, DEFAULT_FORWARD_TIMEOUT);
    assert_eq!(c.concurrency, DEFAULT_CONCURRENCY);
}

#[test]
fn global_settings_apply_to_sources_without_their_own() {
    let c = parse(
        r#"
forward_to = "http://127.0.0.1:3000/hooks"
retry_schedule = "1s,2s"
time_scale = 2
forward_timeout = "1.5s"
concurrency = 3

[[source]]
name = "plain"
provider = "stripe"

[[source]]
name = "own"
provider = "asaas"
forward_to = "http://127.0.0.1:4000/asaas?x=1"
retry_schedule = "asaas"
time_scale = 0.5
success = "2xx"
"#,
    )
    .unwrap();
    assert!(c.forwards());
    assert_eq!(c.forward_timeout, Duration::from_millis(1500));
    assert_eq!(c.concurrency, 3);
    let plain = c.source("plain").unwrap();
    assert_eq!(c.forward_target(plain), Some("http://127.0.0.1:3000/hooks"));
    assert_eq!(
        c.schedule_for(plain).delays,
        [Duration::from_millis(500), Duration::from_secs(1)],
        "the global schedule at the global scale"
    );
    let own = c.source("own").unwrap();
    assert_eq!(
        c.forward_target(own),
        Some("http://127.0.0.1:4000/asaas?x=1")
    );
    assert_eq!(
        c.schedule_for(own).delays[0],
        Duration::from_secs(60),
        "Asaas's 30 s, played twice as slow"
    );
    assert_eq!(own.success_policy(), SuccessPolicy::Any2xx, "explicit wins");
}

#[test]
fn asaas_and_wompi_count_only_200_unless_told_otherwise() {
    let c = parse(
        "[[source]]\nname = \"a\"\nprovider = \"asaas\"\n[[source]]\nname = \"w\"\nprovider = \"wompi\"\n\
         [[source]]\nname = \"s\"\nprovider = \"stripe\"\n[[source]]\nname = \"x\"\nprovider = \"stripe\"\nsuccess = 200\n",
    )
    .unwrap();
    let policy = |name: &str| c.source(name).unwrap().success_policy();
    assert_eq!(policy("a"), SuccessPolicy::Only200);
    assert_eq!(policy("w"), SuccessPolicy::Only200);
    assert_eq!(policy("s"), SuccessPolicy::Any2xx);
    assert_eq!(
        policy("x"),
        SuccessPolicy::Only200,
        "`success = 200` as a number"
    );
    assert!(SuccessPolicy::Only200.accepts(200) && !SuccessPolicy::Only200.accepts(201));
    assert!(SuccessPolicy::Any2xx.accepts(204) && !SuccessPolicy::Any2xx.accepts(301));
}

#[test]
fn unusable_forward_settings_are_explained() {
    let e = err("forward_to = \"https://app.example/hooks\"");
    assert!(e.contains("TLS forwarding is not supported yet"), "{e}");
    let e =
        err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nforward_to = \"localhost:3000\"\n");
    assert!(e.contains("source `s`") && e.contains("http://"), "{e}");
    let e = err("retry_schedule = \"5s,,1m\"");
    assert!(e.contains("two commas"), "{e}");
    let e = err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nretry_schedule = \"stirpe\"\n");
    assert!(e.contains("source `s`") && e.contains("stirpe"), "{e}");
    assert!(err("time_scale = 0").contains("positive"));
    assert!(err("time_scale = -3").contains("positive"));
    assert!(err("forward_timeout = \"30\"").contains("no unit"));
    assert!(err("forward_timeout = \"0s\"").contains("longer than zero"));
    assert!(err("concurrency = 0").contains("at least 1"));
    let e = err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsuccess = \"3xx\"\n");
    assert!(e.contains("\"2xx\"") && e.contains("\"200\""), "{e}");
}
