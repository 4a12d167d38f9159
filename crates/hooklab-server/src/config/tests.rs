//! Config parsing and validation: defaults, secrets from the environment, positioned errors,
//! and that no secret ever reaches `Debug` output or an error message.

use super::*;
use hooklab_core::provider::ProviderId;
use std::env::VarError;

fn env(var: &str) -> Result<String, VarError> {
    match var {
        "STRIPE_SECRET" => Ok("whsec_from_env".into()),
        "EMPTY" => Ok(String::new()),
        _ => Err(VarError::NotPresent),
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str_with_env(text, &env)
}

fn err(text: &str) -> String {
    parse(text).expect_err("must be refused").to_string()
}

#[test]
fn an_empty_file_gives_the_defaults() {
    let c = parse("").unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(
        c.body_limit,
        10 * 1024 * 1024,
        "the brief's default body limit"
    );
    assert_eq!(c.host, "127.0.0.1", "loopback by default");
}

#[test]
fn a_full_file_is_read() {
    let c = parse(
        r#"
host = "0.0.0.0"
port = 0
db = "/tmp/h.db"
body_limit = 1024
public_url = "https://abc.example"

[[source]]
name = "stripe"
provider = "stripe"
secret = "whsec_literal"
tolerance = 600
reject_invalid = true

[source.response]
status = 202
headers = { "Content-Type" = "application/json", "X-Z" = "z" }
body = '{"received":true}'
delay_ms = 1500

[[source]]
name = "gh.prod_2-x"
provider = "github"
secrets = ["old", "env:STRIPE_SECRET"]
response = { headers = [["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"]] }
"#,
    )
    .unwrap();
    assert_eq!(
        (c.host.as_str(), c.port, c.body_limit),
        ("0.0.0.0", 0, 1024)
    );
    assert_eq!(c.public_url.as_deref(), Some("https://abc.example"));
    let stripe = c.source("stripe").unwrap();
    assert_eq!(stripe.provider, ProviderId::Stripe);
    assert_eq!(stripe.secrets[0].expose(), "whsec_literal");
    assert_eq!(stripe.tolerance, Some(600));
    assert!(stripe.reject_invalid);
    assert_eq!(stripe.response.status, 202);
    assert_eq!(
        stripe.response.headers,
        [
            ("Content-Type".to_string(), "application/json".to_string()),
            ("X-Z".into(), "z".into())
        ],
        "a header table keeps its written order"
    );
    assert_eq!(stripe.response.delay_ms, 1500);
    let gh = c.source("gh.prod_2-x").unwrap();
    let secrets: Vec<&str> = gh.secrets.iter().map(|s| s.expose()).collect();
    assert_eq!(
        secrets,
        ["old", "whsec_from_env"],
        "env:VAR is resolved at load"
    );
    assert_eq!(gh.response.headers.len(), 2, "pairs allow repeated names");
    assert_eq!(gh.response.status, 200, "default status");
    assert!(
        !gh.reject_invalid,
        "a debugging receiver does not reject by default"
    );
}

#[test]
fn a_missing_variable_is_named_with_its_source_and_line() {
    let e =
        err("port = 1\n\n[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsecret = \"env:NOPE\"\n");
    assert!(e.contains("`NOPE`"), "{e}");
    assert!(e.contains("source `s`"), "{e}");
    assert!(e.contains("is not set"), "{e}");
    assert!(e.starts_with("config:3:"), "the source table's line: {e}");
    assert!(
        err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsecret = \"env:EMPTY\"")
            .contains("is empty")
    );
}

#[test]
fn unknown_fields_are_refused_with_their_position() {
    let e = err("port = 1\nprot = 2\n");
    assert!(e.starts_with("config:2:1"), "{e}");
    assert!(e.contains("prot"), "{e}");
    let e = err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsecrett = \"x\"\n");
    assert!(e.contains("secrett"), "{e}");
    let e = err("[[source]]\nname = \"s\"\nprovider = \"strip\"\n");
    assert!(e.contains("strip"), "an unknown provider is named: {e}");
}

#[test]
fn syntax_errors_never_quote_the_line_that_may_hold_a_secret() {
    let e =
        err("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsecret = \"whsec_topsecret\" junk\n");
    assert!(!e.contains("topsecret"), "{e}");
    assert!(e.starts_with("config:4:"), "{e}");
}

#[test]
fn semantic_errors_are_explained() {
    let src = |extra: &str| format!("[[source]]\nname = \"s\"\nprovider = \"stripe\"\n{extra}");
    assert!(err(&src("response = { status = 99 }")).contains("200..=599"));
    assert!(err(&src("response = { status = 600 }")).contains("200..=599"));
    assert!(err(&src("response = { status = 101 }")).contains("200..=599"));
    assert!(err(&src("response = { delay_ms = 9999999 }")).contains("maximum"));
    assert!(err(&src("response = { headers = { \"Bad Name\" = \"x\" } }")).contains("Bad Name"));
    assert!(err(&src("response = { headers = { \"X\" = \"a\\nb\" } }")).contains("not valid"));
    assert!(err(&src("secret = \"a\"\nsecrets = [\"b\"]")).contains("both"));
    assert!(err(&src("secrets = [\"\"]")).contains("empty"));
    let e = err("[[source]]\nname = \"a/b\"\nprovider = \"stripe\"\n");
    assert!(e.contains("letters, digits"), "{e}");
    let e = err(
        "[[source]]\nname = \"a\"\nprovider = \"stripe\"\n[[source]]\nname = \"a\"\nprovider = \"github\"\n",
    );
    assert!(e.contains("unique"), "{e}");
    assert!(err("public_url = \"abc.example\"").contains("absolute"));
}

#[test]
fn debug_output_never_shows_a_secret() {
    let c = parse("[[source]]\nname = \"s\"\nprovider = \"stripe\"\nsecrets = [\"whsec_hidden\", \"env:STRIPE_SECRET\"]\n").unwrap();
    let shown = format!("{c:?} {c:#?}");
    assert!(
        !shown.contains("whsec_hidden") && !shown.contains("from_env"),
        "{shown}"
    );
}

#[test]
fn load_reports_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooklab.toml");
    std::fs::write(&path, "port = \"x\"\n").unwrap();
    let e = Config::load(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:1:", path.display())), "{e}");
    let e = Config::load(&dir.path().join("missing.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.toml"), "{e}");
}

#[test]
fn the_cli_flag_splits_on_the_first_equals_then_the_first_colon() {
    let parse = |spec: &str| SourceConfig::parse_cli_with_env(spec, &env);
    let s = parse("stripe=stripe:whsec_a:b=c").unwrap();
    assert_eq!(
        (s.name.as_str(), s.provider),
        ("stripe", ProviderId::Stripe)
    );
    assert_eq!(
        s.secrets[0].expose(),
        "whsec_a:b=c",
        "the secret keeps its ':' and '='"
    );
    let s = parse("gh=github").unwrap();
    assert!(s.secrets.is_empty(), "no secret: recorded as unsigned");
    let s = parse("pay=stripe:env:STRIPE_SECRET").unwrap();
    assert_eq!(s.secrets[0].expose(), "whsec_from_env");
    let e = parse("pay=stripe:env:NOPE").unwrap_err().to_string();
    assert!(e.contains("NOPE") && e.contains("--source"), "{e}");
    let e = parse("stripe").unwrap_err().to_string();
    assert!(e.contains("NAME=PROVIDER"), "{e}");
    let e = parse("x=nope:whsec_zzz").unwrap_err().to_string();
    assert!(e.contains("nope") && !e.contains("whsec_zzz"), "{e}");
    let e = parse("a b=stripe:whsec_zzz").unwrap_err().to_string();
    assert!(!e.contains("whsec_zzz"), "{e}");
}

#[test]
fn the_tunnel_table_is_read_with_secrets_from_the_environment() {
    let c = parse(
        r#"
control_port = 9100

[tunnel]
provider = "ngrok"
ngrok_authtoken = "env:STRIPE_SECRET"
binary = "/opt/ngrok"
start_timeout = "45s"
ssh_options = ["ServerAliveInterval=30"]
"#,
    )
    .unwrap();
    assert_eq!(c.control_port, Some(9100));
    let t = c.tunnel.as_ref().expect("[tunnel]");
    assert_eq!(t.kind(), TunnelKind::Ngrok);
    assert_eq!(
        t.ngrok_authtoken.as_ref().map(|s| s.expose()),
        Some("whsec_from_env")
    );
    assert_eq!(t.start_timeout, Some(std::time::Duration::from_secs(45)));
    assert!(!format!("{c:?}").contains("from_env"), "Debug redacts it");

    let c = parse("[tunnel]\n").unwrap();
    assert_eq!(
        c.tunnel.unwrap().kind(),
        TunnelKind::LocalhostRun,
        "an empty [tunnel] is localhost.run"
    );
    let c = parse("[tunnel]\nprovider = \"lhr\"\n").unwrap();
    assert_eq!(c.tunnel.unwrap().kind(), TunnelKind::LocalhostRun);

    assert!(err("[tunnel]\nprovider = \"teleport\"\n").contains("unknown variant"));
    assert!(err("[tunnel]\nprovder = \"bore\"\n").contains("unknown field"));
    assert!(err("[tunnel]\nprovider = \"ssh\"\n").contains("--ssh USER@HOST"));
    assert!(err("[tunnel]\nprovider = \"custom\"\ncommand = \"x\"\n").contains("{port}"));
    let e = err("host = \"::1\"\n[tunnel]\n");
    assert!(
        e.contains("127.0.0.1"),
        "the tunnel could not reach the receiver: {e}"
    );
    assert!(parse("host = \"0.0.0.0\"\n[tunnel]\n").is_ok());
    let e = err("[tunnel]\nprovider = \"bore\"\nbore_secret = \"env:NOPE\"\n");
    assert!(e.contains("NOPE"), "{e}");
}

#[test]
fn cli_tunnel_flags_override_the_file() {
    let file = TunnelOptions {
        provider: Some(TunnelKind::Ssh),
        ssh: Some("me@a.example".into()),
        remote_port: Some(8080),
        ssh_options: vec!["A=1".into()],
        ..TunnelOptions::default()
    };
    let flags = TunnelOptions {
        ssh: Some("me@b.example".into()),
        ssh_options: vec!["B=2".into()],
        ..TunnelOptions::default()
    };
    let t = file.overlay(flags);
    assert_eq!(t.kind(), TunnelKind::Ssh, "kept from the file");
    assert_eq!(t.ssh.as_deref(), Some("me@b.example"), "the flag wins");
    assert_eq!(t.remote_port, Some(8080));
    assert_eq!(t.ssh_options, ["A=1", "B=2"], "options add up");
}
