//! `hooklab trigger PROVIDER [EVENT]`: a signed test event from the template catalogue
//! (`hooklab_core::templates`), with `--set` overrides, sent to the running `hooklab listen`
//! (its source's path) or to `--to`, or printed with `--print`.
//!
//! The secret comes from `--secret`, else the sources added in the UI (`<db>.sources.toml`).
//! Without either, an event for the running instance is handed to its control API
//! (`POST /api/test-event`), which signs it with the source's configured secret — the same
//! generation and signing code, run where the secret lives.

use super::replay::{parse_http_url, post_bytes, secret_from, source_options, source_secret};
use super::{db_path, running_instance};
use crate::cli::TriggerArgs;
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::templates::{self, Override, SignedEvent, TestEvent};
use hooklab_server::control::client;
use hooklab_server::control::discovery::Discovery;
use serde_json::json;
use std::process::ExitCode;

pub(crate) fn run(args: TriggerArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        return list(args.provider, args.json);
    }
    let provider = args.provider.context("name a provider (see --list)")?;
    let mut overrides = Vec::with_capacity(args.overrides.len());
    for spec in &args.overrides {
        match Override::parse(spec) {
            Ok(o) => overrides.push(o),
            Err(e) => return usage_error(&e),
        }
    }
    let now = UnixMillis::now();
    let salt = format!("{}:{}", std::process::id(), now.0);
    let event = match templates::generate(provider, args.event.as_deref(), &overrides, now, &salt) {
        Ok(event) => event,
        Err(e) => return usage_error(&e),
    };
    let target = Target::resolve(&args, provider)?;
    let secret = match &args.secret {
        Some(s) => Some(secret_from(s)?),
        None => source_secret(&target.db, &target.source)?,
    };
    let Some(secret) = secret else {
        if let (Some(instance), false) = (&target.instance, args.print) {
            return delegate(instance, &target, &args, &overrides);
        }
        bail!(
            "no secret for source `{}`: pass --secret SECRET (or env:VAR){}",
            target.source,
            if args.print {
                ""
            } else {
                ", or send to a running `hooklab listen` that has the source"
            }
        );
    };
    let options = source_options(&target.db, &target.source)?;
    let signed = event
        .request(&options, Some(&secret), &target.endpoint, now)
        .with_context(|| format!("cannot sign a {provider} test event"))?;
    if args.print {
        print_request(&event, &signed, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let status = send(&signed).with_context(|| format!("cannot send it to {}", signed.url))?;
    report(
        args.json,
        &json!({
            "provider": provider,
            "source": target.source,
            "template": event.template,
            "event_type": event.event_type,
            "event_id": event.event_id,
            "object_id": event.object_id,
            "to": signed.url,
            "signed": signed.signed,
            "status": status,
        }),
    )
}

/// A usage error (an unknown event type, a bad `--set`): said on stderr, exit status 2.
fn usage_error(e: &templates::TemplateError) -> anyhow::Result<ExitCode> {
    eprintln!("error: {e}");
    Ok(ExitCode::from(2))
}

/// Where the event goes and which source's secret signs it.
struct Target {
    db: std::path::PathBuf,
    source: String,
    /// The endpoint, without the provider's query string.
    endpoint: String,
    /// The running instance when the event goes to its receiver.
    instance: Option<Discovery>,
}

impl Target {
    fn resolve(args: &TriggerArgs, provider: ProviderId) -> anyhow::Result<Self> {
        let db = db_path(&args.db)?;
        if let Some(to) = &args.to {
            parse_http_url(to)?;
            let source = args.source.clone().unwrap_or_else(|| provider.to_string());
            return Ok(Self {
                db,
                source,
                endpoint: to.clone(),
                instance: None,
            });
        }
        let instance = match running_instance(&args.db) {
            Ok(found) => found,
            Err(_) if args.print => {
                // Nothing to ask: print it for the default receiver address.
                let source = args.source.clone().unwrap_or_else(|| provider.to_string());
                let endpoint = format!("http://127.0.0.1:8787/{source}");
                return Ok(Self {
                    db,
                    source,
                    endpoint,
                    instance: None,
                });
            }
            Err(e) => return Err(e.context("give --to URL, or start `hooklab listen`")),
        };
        let source = source_of(&instance, provider, args.source.as_deref())?;
        let endpoint = format!("{}/{source}", instance.receiver.trim_end_matches('/'));
        Ok(Self {
            db,
            source,
            endpoint,
            instance: Some(instance),
        })
    }
}

/// The running instance's source `wanted` (checked to be of `provider`), or its only source
/// of `provider`.
fn source_of(
    instance: &Discovery,
    provider: ProviderId,
    wanted: Option<&str>,
) -> anyhow::Result<String> {
    let answer = runtime()?.block_on(client::get(instance, "/api/sources"))?;
    let sources = answer.as_array().cloned().unwrap_or_default();
    if let Some(name) = wanted {
        let Some(found) = sources.iter().find(|s| s["name"] == name) else {
            bail!(
                "the `hooklab listen` at {} has no source `{name}` (it has: {})",
                instance.receiver,
                sources
                    .iter()
                    .filter_map(|s| s["name"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        if found["provider"] != provider.as_str() {
            bail!(
                "source `{name}` is a {} source, not {provider}",
                found["provider"].as_str().unwrap_or("?")
            );
        }
        return Ok(name.to_string());
    }
    let names: Vec<String> = sources
        .iter()
        .filter(|s| s["provider"] == provider.as_str())
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect();
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "the `hooklab listen` at {} has no {provider} source; add one \
             (--source NAME={provider}:SECRET), or give --to URL",
            instance.receiver
        ),
        many => bail!(
            "the `hooklab listen` at {} has several {provider} sources ({}); pick one with \
             --source NAME",
            instance.receiver,
            many.join(", ")
        ),
    }
}

/// Has the running instance sign and send it with the source's own secret.
fn delegate(
    instance: &Discovery,
    target: &Target,
    args: &TriggerArgs,
    overrides: &[Override],
) -> anyhow::Result<ExitCode> {
    let request = json!({
        "source": target.source,
        "event_type": args.event,
        "overrides": overrides,
    });
    let answer = runtime()?
        .block_on(client::post(instance, "/api/test-event", &request))
        .context("the running `hooklab listen` could not send it")?;
    let mut outcome = answer.clone();
    outcome["provider"] = json!(args.provider);
    outcome["to"] = json!(target.endpoint);
    report(args.json, &outcome)
}

/// Prints the outcome; exit status 0 for a 2xx answer.
fn report(as_json: bool, outcome: &serde_json::Value) -> anyhow::Result<ExitCode> {
    let status = outcome["status"].as_u64().unwrap_or(0);
    if as_json {
        println!("{outcome}");
    } else {
        let text = |key: &str| outcome[key].as_str().unwrap_or("").to_string();
        let event_id = match text("event_id") {
            id if id.is_empty() => String::new(),
            id => format!(" {id}"),
        };
        let object = match text("object_id") {
            id if id.is_empty() => String::new(),
            id => format!(" about {id}"),
        };
        println!(
            "Sent {}{event_id}{object} to {}{}: HTTP {status}",
            text("event_type"),
            text("to"),
            if outcome["signed"] == false {
                " (unsigned: the source has no secret)"
            } else {
                ""
            },
        );
    }
    Ok(if (200..300).contains(&status) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--print`: the signed request, as text or one JSON object.
fn print_request(event: &TestEvent, signed: &SignedEvent, as_json: bool) -> anyhow::Result<()> {
    let body = String::from_utf8_lossy(&signed.body);
    if as_json {
        let value = json!({
            "provider": event.provider,
            "template": event.template,
            "event_type": event.event_type,
            "event_id": event.event_id,
            "object_id": event.object_id,
            "method": "POST",
            "url": signed.url,
            "headers": signed.headers.iter().map(|(n, v)| [n, v]).collect::<Vec<_>>(),
            "body": body,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("POST {}", signed.url);
        for (name, value) in &signed.headers {
            println!("{name}: {value}");
        }
        println!();
        println!("{body}");
    }
    if let Some(note) = &signed.note {
        eprintln!("note: {note}");
    }
    Ok(())
}

/// POSTs the signed event; the status answered.
fn send(signed: &SignedEvent) -> anyhow::Result<u16> {
    let (host, port, path) = parse_http_url(&signed.url)?;
    let mut bytes =
        format!("POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: Hooklab-Trigger\r\n")
            .into_bytes();
    for (name, value) in &signed.headers {
        bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    bytes.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            signed.body.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(&signed.body);
    post_bytes(&host, port, &bytes)
}

/// `--list`: every provider's event types (or one provider's), the default first.
fn list(only: Option<ProviderId>, as_json: bool) -> anyhow::Result<ExitCode> {
    let catalogue: Vec<_> = templates::catalogue()
        .into_iter()
        .filter(|(p, _)| only.is_none_or(|o| o == *p))
        .collect();
    if as_json {
        let value: Vec<_> = catalogue
            .iter()
            .map(|(p, types)| json!({"provider": p, "event_types": types}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (provider, types) in &catalogue {
        println!("{provider}");
        for (i, kind) in types.iter().enumerate() {
            println!("  {kind}{}", if i == 0 { "  (default)" } else { "" });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
