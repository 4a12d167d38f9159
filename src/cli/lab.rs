//! The lab's and the UI's grammar: `hooklab replay`, `hooklab inject`, `hooklab ui`
//! (`sequence` and `run` are in `scenario.rs`).

use super::{DbArg, parse_duration_or_zero};
use clap::Args;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab replay 42 --to http://127.0.0.1:8787/stripe --resign\n  hooklab replay 42 --to http://127.0.0.1:3000/webhooks --variant tampered --secret env:STRIPE_WEBHOOK_SECRET\n\nThe source's secret comes from --secret, or from the sources added in the UI (<db>.sources.toml)."
)]
pub(crate) struct ReplayArgs {
    /// The delivery to replay (its id, as `hooklab events list` shows it).
    pub(crate) id: i64,
    /// Where to send it: the receiver's source URL (so it goes through the pipeline again) or
    /// your app's URL. http:// only.
    #[arg(long, value_name = "URL")]
    pub(crate) to: String,
    /// Re-sign it now with the source's secret (same as --variant resigned).
    #[arg(long, conflicts_with = "variant")]
    pub(crate) resign: bool,
    /// as-recorded (default), resigned, stale, wrong-secret, tampered, unsigned, other-body.
    #[arg(long, value_name = "VARIANT")]
    pub(crate) variant: Option<String>,
    /// The source's signing secret (may be `env:VAR`).
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// The outcome as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab inject 42 --copies 1000 --concurrent --to http://127.0.0.1:8787/stripe\n  hooklab inject 42 --copies 5 --interval 200ms --to http://127.0.0.1:3000/webhooks --resign --secret env:STRIPE_WEBHOOK_SECRET\n  hooklab inject 42 --copies 50 --concurrent --to http://127.0.0.1:3000/webhooks --probe http://127.0.0.1:3000/count\n\nThe last line is the idempotency oracle's verdict: copies of one event must get the same status class and body, and (with --probe) cause one side effect. Exit status 1 when they do not, or when a copy was not answered 2xx."
)]
pub(crate) struct InjectArgs {
    /// The delivery to copy.
    pub(crate) id: i64,
    /// Where to send the copies: the receiver's source URL (Hooklab's dedupe) or your app's URL
    /// (your handler's). http:// only.
    #[arg(long, value_name = "URL")]
    pub(crate) to: String,
    /// How many copies.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(crate) copies: u32,
    /// A true race: every connection opened first, then every copy written at once.
    #[arg(long, conflicts_with = "interval")]
    pub(crate) concurrent: bool,
    /// One after another, this long apart (e.g. 200ms) [default: 0].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero)]
    pub(crate) interval: Option<std::time::Duration>,
    /// Re-sign the copies now with the source's secret (else they are sent as recorded).
    #[arg(long)]
    pub(crate) resign: bool,
    /// The source's signing secret (may be `env:VAR`).
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: Option<String>,
    /// A URL of your app answering how many times the side effect ran (a number or
    /// `{"count": n}`): read before and after, the oracle reports the extra side effects.
    #[arg(long, value_name = "URL")]
    pub(crate) probe: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// Every copy's result, the summary and the oracle's verdict as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// Print the address (it holds this run's access token) instead of opening a browser.
    #[arg(long)]
    pub(crate) print: bool,
}
