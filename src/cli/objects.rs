//! `hooklab objects` and `hooklab timeline`: business objects and their state machines.

use super::DbArg;
use clap::Args;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab objects --state processing\n  hooklab objects --review --json"
)]
pub(crate) struct ObjectsArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// Only objects in this state (e.g. `processing`, `succeeded`).
    #[arg(long, value_name = "STATE")]
    pub(crate) state: Option<String>,
    /// Only objects of this machine (e.g. `stripe-payment-intent`).
    #[arg(long, value_name = "NAME")]
    pub(crate) machine: Option<String>,
    /// Only objects flagged `requires_review` (a parked event timed out).
    #[arg(long)]
    pub(crate) review: bool,
    /// At most this many objects, most recently updated first.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(crate) limit: u32,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  hooklab timeline pi_3QxA1 --json")]
pub(crate) struct TimelineArgs {
    /// The business object's id, e.g. a Stripe PaymentIntent `pi_…`.
    pub(crate) object_id: String,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// `{"object": …, "state": …, "transitions": […]}` instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}
