//! `hooklab dlq`: the dead-letter queue's grammar.

use super::DbArg;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub(crate) enum DlqCommand {
    /// Dead jobs, newest first: source, event, attempts, why they were given up.
    List(DlqListArgs),
    /// One dead job: its delivery and every attempt (status, latency, error, response).
    Show(DlqShowArgs),
    /// Queue dead jobs again now (their keys go back to `processing`); a running
    /// `hooklab listen` picks them up within a second. Each gets one more attempt and returns
    /// to the queue if it fails.
    #[command(
        after_help = "Examples:\n  hooklab dlq redrive 12 13\n  hooklab dlq redrive --source stripe\n  hooklab dlq redrive --all"
    )]
    Redrive(DlqActArgs),
    /// Give up on dead jobs for good (they stay recorded, marked `discarded`).
    Discard(DlqActArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DlqListArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// At most this many jobs.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(crate) limit: u32,
    /// Only this source.
    #[arg(long, value_name = "NAME")]
    pub(crate) source: Option<String>,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DlqShowArgs {
    /// The job id (from `hooklab dlq list`).
    pub(crate) job: i64,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["jobs", "all", "source"]))]
pub(crate) struct DlqActArgs {
    /// Job ids (from `hooklab dlq list`).
    #[arg(value_name = "JOB")]
    pub(crate) jobs: Vec<i64>,
    /// Every dead job.
    #[arg(long, conflicts_with_all = ["jobs", "source"])]
    pub(crate) all: bool,
    /// Every dead job of this source.
    #[arg(long, value_name = "NAME", conflicts_with = "jobs")]
    pub(crate) source: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// Print `{"count": N}`.
    #[arg(long)]
    pub(crate) json: bool,
}
