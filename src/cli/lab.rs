//! The lab's and the UI's grammar: `hooklab replay`, `hooklab inject`, `hooklab trigger`,
//! `hooklab ui` (`sequence` and `run` are in `scenario.rs`).

use super::{DbArg, parse_duration_or_zero};
use clap::Args;
use hooklab_core::provider::ProviderId;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab replay 42 --to http://127.0.0.1:8787/stripe --resign\n  hooklab replay 42 --to http://127.0.0.1:3000/webhooks --variant tampered --secret env:STRIPE_WEBHOOK_SECRET\n\nThe source's secret comes from --secret, or from the sources added in the UI (<db>.sources.toml)."
)]
pub(crate) struct ReplayArgs {
    /// The delivery to replay (its id, as `hooklab events list` shows it).
    pub(crate) id: i64,
    /// Where to send it: the receiver's source URL (so it goes through the pipeline again) or
    /// your app's URL. http:// only. [default: the delivery's path on the running `hooklab
    /// listen` of this database]
    #[arg(long, value_name = "URL")]
    pub(crate) to: Option<String>,
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
    /// (your handler's). http:// only. [default: the delivery's path on the running `hooklab
    /// listen` of this database]
    #[arg(long, value_name = "URL")]
    pub(crate) to: Option<String>,
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

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hooklab trigger --list                                  # every provider's event types
  hooklab trigger stripe payment_intent.succeeded         # to the running `hooklab listen`
  hooklab trigger stripe payment_intent.created --set data.object.id=pi_X
  hooklab trigger stripe payment_intent.succeeded --set data.object.id=pi_X \\
      --set data.object.amount=5000
  hooklab trigger github push --source gh --json
  hooklab trigger mercadopago payment.updated --set data.status=rejected
  hooklab trigger stripe charge.refunded --to http://127.0.0.1:3000/webhooks \\
      --secret env:STRIPE_WEBHOOK_SECRET
  hooklab trigger paddle transaction.paid --secret pdl_ntfset_... --print

Without --to the event goes to the running `hooklab listen` of --db (found through the file
beside the database), at the receiver's /SOURCE path, signed with that source's secret: from
--secret, the sources added in the UI (<db>.sources.toml), or else by the running instance
itself. With --to it is signed with --secret (or <db>.sources.toml's secret of --source).

--set PATH=VALUE: PATH is dotted (data.object.id, items.0.price) or a JSON pointer
(/data/object/id); VALUE is JSON when it parses (5000, true, \"007\") and a string otherwise.
Setting the object id (data.object.id for Stripe's payment_intent.*, data.object.payment_intent
for charge.*, data.id for Mercado Pago and Paddle, payment.id for Asaas,
data.transaction.id for Wompi) makes several triggers hit the same payment, in any order.

Exit status: 0 when the endpoint answered 2xx, 1 otherwise, 2 for an unknown event type or a
bad --set.")]
pub(crate) struct TriggerArgs {
    /// The provider, e.g. stripe, github, mercadopago (`--list` shows all).
    #[arg(required_unless_present = "list", value_name = "PROVIDER")]
    pub(crate) provider: Option<ProviderId>,
    /// The event type, e.g. payment_intent.succeeded [default: the provider's first in --list]
    #[arg(value_name = "EVENT")]
    pub(crate) event: Option<String>,
    /// The source: the receiver's /NAME path, and whose secret signs [default: the running
    /// listen's only source of PROVIDER; with --to, PROVIDER].
    #[arg(long, value_name = "NAME")]
    pub(crate) source: Option<String>,
    /// The signing secret (may be `env:VAR`).
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: Option<String>,
    /// Set a field of the body before it is signed. Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub(crate) overrides: Vec<String>,
    /// Send it here instead (http:// only): another receiver, or your app.
    #[arg(long, value_name = "URL")]
    pub(crate) to: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// List the providers and their event types (the first is the default).
    #[arg(long)]
    pub(crate) list: bool,
    /// One JSON object (with --list: an array).
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the signed request (URL, headers, body) instead of sending it.
    #[arg(long)]
    pub(crate) print: bool,
}
