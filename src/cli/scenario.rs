//! The lab's sequence and scenario grammar: `hooklab sequence`, `hooklab run`.

use super::{DbArg, parse_duration_or_zero};
use clap::Args;
use hooklab_core::provider::ProviderId;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab sequence --to http://127.0.0.1:8787/pay --preset refund-before-success --provider stripe --secret whsec_...\n  hooklab sequence --to http://127.0.0.1:8787/pay --preset success-before-creation --source pay   # provider and secret of a source added in the UI\n  hooklab sequence --to http://127.0.0.1:3000/webhooks 12 30 17 --delay 200ms --resign\n\nPresets: success-before-creation, refund-before-success, failure-then-success. Providers: stripe, mercadopago, asaas, paddle, wompi.\nA preset's events are about ONE new object, dated in the order they truly happened and sent in the wrong one; through a Hooklab receiver, `hooklab timeline OBJECT` shows what its state machine made of them."
)]
pub(crate) struct SequenceArgs {
    /// Recorded deliveries to send, in this order (instead of a preset).
    #[arg(value_name = "ID", conflicts_with = "preset")]
    pub(crate) ids: Vec<i64>,
    /// Where to send: a source of the receiver, or your app's URL. http:// only.
    #[arg(long, value_name = "URL")]
    pub(crate) to: String,
    /// One object's events in a realistic wrong order.
    #[arg(long, value_name = "PRESET", required_unless_present = "ids")]
    pub(crate) preset: Option<hooklab_server::lab::sequence::Preset>,
    /// The preset's provider [default: the source's].
    #[arg(long, value_name = "PROVIDER")]
    pub(crate) provider: Option<ProviderId>,
    /// A source of the database (added in the UI) whose provider and first secret sign.
    #[arg(long, value_name = "NAME")]
    pub(crate) source: Option<String>,
    /// The signing secret (may be `env:VAR`).
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: Option<String>,
    /// The preset's object id [default: a fresh one].
    #[arg(long, value_name = "ID", requires = "preset")]
    pub(crate) object: Option<String>,
    /// The wait between two deliveries, e.g. 200ms [default: 0].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero)]
    pub(crate) delay: Option<std::time::Duration>,
    /// Recorded deliveries: re-sign them now with the source's secret (else as recorded).
    #[arg(long, conflicts_with = "preset")]
    pub(crate) resign: bool,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// What was sent and answered as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab run examples/scenarios/duplicate-race.toml --target http://127.0.0.1:3000/webhooks --junit report.xml\n  hooklab run reorder.toml --target http://127.0.0.1:8787/pay --db hooklab.db --json\n\nExit status: 0 when every expectation holds, 1 otherwise. The file format: docs/scenarios.md."
)]
pub(crate) struct RunArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// Where the steps send: your app's URL, or a source of a Hooklab receiver. http:// only.
    #[arg(long, value_name = "URL")]
    pub(crate) target: String,
    /// The side-effect probe, replacing the file's `probe`.
    #[arg(long, value_name = "URL")]
    pub(crate) probe: Option<String>,
    /// Write the expectations as JUnit XML here (for the CI's test report).
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// How long expectations on a receiver wait for its pipeline, replacing the file's
    /// `settle` [default: 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero)]
    pub(crate) settle: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// The whole report as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}
