//! `hooklab sign`: the headers a provider would send for a body.

use super::{provider_options, read_body};
use crate::cli::SignArgs;
use anyhow::Context as _;
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, SignInput};
use hooklab_core::secret::Secret;
use std::process::ExitCode;

pub(crate) fn run(args: SignArgs) -> anyhow::Result<ExitCode> {
    let body = read_body(&args.body)?;
    let now = args.now.map_or_else(UnixMillis::now, UnixMillis::from_secs);
    let opts = provider_options(&args.generic)?;
    let mut input = SignInput::new(&body, now);
    input.id = args.id.as_deref();
    input.url = args.url.as_deref();
    input.content_type = args.content_type.as_deref();
    let signed = provider::sign(args.provider, &opts, &Secret::new(&args.secret), &input)
        .with_context(|| format!("cannot sign for {}", args.provider))?;
    if let Some(path) = &args.body_out {
        let bytes = signed.body.as_deref().unwrap_or(&body);
        std::fs::write(path, bytes)
            .with_context(|| format!("cannot write the signed body to {}", path.display()))?;
    }
    if args.json {
        let body = signed
            .body
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let value = serde_json::json!({
            "headers": signed.headers.iter().map(|(n, v)| [n, v]).collect::<Vec<_>>(),
            "body": body,
            "url": signed.url,
            "note": signed.note,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (name, value) in &signed.headers {
        println!("{name}: {value}");
    }
    if signed.body.is_some() && args.body_out.is_none() {
        eprintln!(
            "note: {} signs inside the body; write the signed body with --body-out FILE (or use --json)",
            args.provider
        );
    }
    if let Some(url) = &signed.url {
        eprintln!("note: send it to {url}");
    }
    if let Some(note) = &signed.note {
        eprintln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}
