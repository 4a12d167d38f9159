//! `hooklab dlq list|show|redrive|discard`: the dead-letter queue, read and changed in the
//! database file directly. This works while `hooklab listen` runs in another process: SQLite
//! (WAL) takes both, and the listener's worker picks redriven jobs up at its next poll.

use super::db_path;
use crate::cli::{DbArg, DlqActArgs, DlqListArgs, DlqShowArgs};
use crate::output;
use anyhow::{Context as _, bail};
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{DeadLetterFilter, Store};
use std::future::Future;
use std::process::ExitCode;

/// Opens the database read-write (the DLQ commands change it), failing when it does not exist.
pub(super) fn open(db: &DbArg) -> anyhow::Result<SqliteStore> {
    let path = db_path(db)?;
    if !path.exists() {
        bail!(
            "no database at {}: nothing has been recorded there yet. Start `hooklab listen`, or pass --db FILE",
            path.display()
        );
    }
    SqliteStore::open(&path).with_context(|| format!("cannot open {}", path.display()))
}

/// Runs one store call to completion on a small runtime of its own.
pub(super) fn block_on<T>(future: impl Future<Output = T>) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(runtime.block_on(future))
}

pub(crate) fn list(args: DlqListArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let filter = DeadLetterFilter {
        limit: Some(args.limit),
        source: args.source.clone(),
        jobs: None,
    };
    let dead = block_on(store.dead_letters(filter))??;
    if args.json {
        let rows: Vec<_> = dead.iter().map(output::dead_letter_json).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if dead.is_empty() {
        println!("The dead-letter queue is empty.");
    } else {
        print!("{}", output::dead_letters_table(&dead));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(args: DlqShowArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let filter = DeadLetterFilter {
        jobs: Some(vec![args.job]),
        ..DeadLetterFilter::default()
    };
    let (dead, attempts) = block_on(async {
        let dead = store.dead_letters(filter).await?;
        let Some(first) = dead.into_iter().next() else {
            return Ok((None, Vec::new()));
        };
        let attempts = store.attempts(first.delivery).await?;
        Ok::<_, hooklab_core::store::StoreError>((Some(first), attempts))
    })??;
    let Some(dead) = dead else {
        bail!(
            "job {} is not in the dead-letter queue (list it with `hooklab dlq list`)",
            args.job
        );
    };
    let attempts: Vec<_> = attempts.into_iter().filter(|a| a.job == dead.job).collect();
    if args.json {
        let mut value = output::dead_letter_json(&dead);
        value["attempt_log"] = attempts.iter().map(output::attempt_json).collect();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", output::dead_letter_text(&dead, &attempts));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn redrive(args: DlqActArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let moved = block_on(store.redrive(filter(&args), UnixMillis::now()))??;
    report(
        &args,
        moved,
        "redriven",
        || "a running `hooklab listen` with a forward target picks them up within a second",
    )
}

pub(crate) fn discard(args: DlqActArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let discarded = block_on(store.discard(filter(&args), UnixMillis::now()))??;
    report(
        &args,
        discarded,
        "discarded",
        || "they stay recorded; `hooklab events show` still lists their attempts",
    )
}

fn filter(args: &DlqActArgs) -> DeadLetterFilter {
    DeadLetterFilter {
        limit: None,
        source: args.source.clone(),
        jobs: (!args.all && args.source.is_none()).then(|| args.jobs.clone()),
    }
}

fn report(
    args: &DlqActArgs,
    count: u64,
    done: &str,
    then: impl Fn() -> &'static str,
) -> anyhow::Result<ExitCode> {
    if args.json {
        println!("{}", serde_json::json!({ "count": count }));
    } else if count == 0 {
        println!("No matching job in the dead-letter queue; nothing {done}.");
    } else {
        let plural = if count == 1 { "" } else { "s" };
        println!("{count} job{plural} {done}; {}.", then());
    }
    // Named jobs that were not dead are a failed request (exit 1); a filter matching none is not.
    let missed = !args.jobs.is_empty() && count < args.jobs.len() as u64;
    Ok(if missed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
