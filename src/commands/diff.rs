//! `hooklab events diff A B`: two deliveries compared (the library's `diff` module), printed
//! like `git diff --word-diff`: `[-removed-]{+added+}`, long equal runs elided.

use crate::cli::EventsDiffArgs;
use anyhow::Context as _;
use hooklab_core::diff::{self, Change, DeliveryDiff};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Equal runs longer than this are shown as their two ends.
const KEEP: usize = 120;
/// How much of each end of a long equal run is shown.
const CONTEXT: usize = 40;

pub(crate) fn run(args: EventsDiffArgs) -> anyhow::Result<ExitCode> {
    let store = super::events::open(&args.db)?;
    let load = |id| {
        store.get(id)?.with_context(|| {
            format!("no delivery #{id} in this database (see `hooklab events list`)")
        })
    };
    let (a, b) = (load(args.a)?, load(args.b)?);
    let compared = diff::deliveries(diff::Request::of(&a.record), diff::Request::of(&b.record));
    if args.json {
        println!("{}", serde_json::to_string(&compared)?);
    } else {
        print!("{}", text(args.a, args.b, &compared));
    }
    Ok(if compared.identical {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn text(a: i64, b: i64, d: &DeliveryDiff) -> String {
    let mut out = String::new();
    if d.identical {
        let _ = writeln!(
            out,
            "#{a} and #{b} are byte-identical ({} body bytes).",
            d.body.a_size
        );
        return out;
    }
    let _ = writeln!(out, "#{a} → #{b}:");
    if let Some([x, y]) = &d.method {
        let _ = writeln!(out, "  method: {x} → {y}");
    }
    if let Some([x, y]) = &d.path {
        let _ = writeln!(out, "  path: {x} → {y}");
    }
    if let Some([x, y]) = &d.query {
        let show = |q: &Option<String>| q.clone().unwrap_or_else(|| "(none)".into());
        let _ = writeln!(out, "  query: {} → {}", show(x), show(y));
    }
    if d.headers.iter().any(|h| h.change != Change::Equal) {
        let _ = writeln!(out, "  headers (arrival order):");
        for h in &d.headers {
            let mark = match h.change {
                Change::Equal => ' ',
                Change::Removed => '-',
                Change::Added => '+',
            };
            let _ = writeln!(out, "    {mark} {}: {}", h.name, h.value);
        }
    } else {
        let _ = writeln!(out, "  headers: identical ({})", d.headers.len());
    }
    let body = &d.body;
    if body.identical {
        let _ = writeln!(out, "  body: identical ({} bytes)", body.a_size);
        return out;
    }
    let _ = writeln!(
        out,
        "  body: {} → {} bytes; first difference at byte {}; {} bytes removed, {} added",
        body.a_size,
        body.b_size,
        body.first_difference.unwrap_or(0),
        body.removed_bytes,
        body.added_bytes
    );
    let mut line = String::from("    ");
    for chunk in &body.chunks {
        match chunk.change {
            Change::Equal => line.push_str(&elide(&chunk.text)),
            Change::Removed => {
                let _ = write!(line, "[-{}-]", chunk.text);
            }
            Change::Added => {
                let _ = write!(line, "{{+{}+}}", chunk.text);
            }
        }
    }
    out.push_str(&line.replace('\n', "\n    "));
    out.push('\n');
    out
}

/// A long equal run as its two ends around `…`.
fn elide(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= KEEP {
        return text.to_string();
    }
    let head: String = chars[..CONTEXT].iter().collect();
    let tail: String = chars[chars.len() - CONTEXT..].iter().collect();
    format!("{head} … ({} equal) … {tail}", chars.len() - 2 * CONTEXT)
}
