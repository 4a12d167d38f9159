//! Writing deliveries as curl commands that send exactly what was received: every header in
//! order, the body in `'…'` or `$'…'` quoting, or piped from `printf` when it holds NUL.

use super::shell::{printf_format, quote};
use crate::request::RawRequest;
use crate::store::Delivery;

/// One command per delivery, each preceded by a comment naming it.
pub fn export(deliveries: &[Delivery]) -> Vec<u8> {
    let mut out = String::new();
    for d in deliveries {
        let r = &d.record;
        out.push_str(&format!(
            "# Hooklab delivery #{} (source {}): {}\n",
            d.id,
            r.source,
            r.verdict.verdict.as_str()
        ));
        if r.body_refused {
            out.push_str(&format!(
                "# its body of {} bytes was over the limit and not kept: the command sends none\n",
                r.body_size
            ));
        }
        out.push_str(&command_line(&crate::capture::request_of(d)));
        out.push('\n');
    }
    out.into_bytes()
}

/// The curl command that sends `r` exactly: its method, URL, headers in order and body.
pub fn command_line(r: &RawRequest) -> String {
    let url = r
        .url
        .clone()
        .unwrap_or_else(|| crate::capture::request_url(r));
    let mut parts = Vec::new();
    let nul = r.body.contains(&0);
    let prefix = if nul {
        format!("printf {} | ", quote(printf_format(&r.body).as_bytes()))
    } else {
        String::new()
    };
    let method = if r.method.bytes().all(|b| b.is_ascii_alphanumeric()) {
        r.method.clone()
    } else {
        quote(r.method.as_bytes())
    };
    parts.push(format!(
        "{prefix}curl -X {method} {}",
        quote(url.as_bytes())
    ));
    for h in &r.headers {
        let mut line = h.name.as_bytes().to_vec();
        if h.value.is_empty() {
            line.push(b';');
        } else {
            line.extend_from_slice(b": ");
            line.extend_from_slice(&h.value);
        }
        parts.push(format!("-H {}", quote(&line)));
    }
    if !r.body.is_empty() {
        if !r
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("content-type"))
        {
            // Else curl would add its own form content type.
            parts.push("-H 'Content-Type:'".into());
        }
        parts.push(if nul {
            "--data-binary @-".into()
        } else if r.body.starts_with(b"@") {
            // `--data-binary @…` would name a file; `--data-raw` sends the `@` as is.
            format!("--data-raw {}", quote(&r.body))
        } else {
            format!("--data-binary {}", quote(&r.body))
        });
    }
    parts.join(" \\\n  ")
}
