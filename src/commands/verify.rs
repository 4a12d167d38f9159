//! `hooklab verify`: a captured request's signature, checked offline, with a diagnosis.

use super::{parse_header, provider_options, read_body};
use crate::cli::VerifyArgs;
use crate::output;
use anyhow::Context as _;
use hooklab_core::clock::UnixMillis;
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verify::{VerifyConfig, verify};
use std::process::ExitCode;

pub(crate) fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let body = read_body(&args.body)?;
    let headers = args
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (path, url) = match &args.url {
        Some(url) => (path_of(url), Some(url.clone())),
        None => ("/".to_string(), None),
    };
    let mut request = RawRequest::post(&path, headers, body);
    request.url = url;
    let mut config = VerifyConfig::new(
        args.provider,
        args.secrets.iter().map(Secret::new).collect(),
    );
    config.options = provider_options(&args.generic)?;
    config.tolerance_secs = args.tolerance;
    config.other_secrets = args
        .other_secrets
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(l, v)| (format!("`{l}`"), Secret::new(v)))
                .with_context(|| "--other-secret takes LABEL=SECRET".to_string())
        })
        .collect::<anyhow::Result<_>>()?;
    let now = args.now.map_or_else(UnixMillis::now, UnixMillis::from_secs);
    let verdict = verify(&config, &request, now);
    if args.json {
        let mut value = serde_json::to_value(&verdict)?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("provider".into(), args.provider.as_str().into());
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", output::verdict_text(&verdict));
    }
    Ok(if verdict.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The path and query of an absolute URL (`https://h/p?q` → `/p?q`).
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => rest[i..].to_string(),
        Some(i) => format!("/{}", &rest[i..]),
        None => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn path_of_absolute_urls() {
        assert_eq!(super::path_of("https://a.b/c/d?x=1"), "/c/d?x=1");
        assert_eq!(super::path_of("https://a.b?x=1"), "/?x=1");
        assert_eq!(super::path_of("https://a.b"), "/");
    }
}
