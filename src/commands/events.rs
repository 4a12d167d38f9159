//! `hooklab events list|show` and `hooklab keys`: what was recorded, read back from the
//! database (with each delivery's forward attempts in `show`).

use super::db_path;
use crate::cli::{EventsListArgs, EventsShowArgs, KeysArgs};
use crate::output;
use anyhow::{Context as _, bail};
use hooklab_core::store::sqlite::{SqliteReader, SqliteStore};
use hooklab_core::store::{DeliveryFilter, KeyFilter, Store as _};
use std::io::Write as _;
use std::process::ExitCode;

pub(crate) fn open(db: &crate::cli::DbArg) -> anyhow::Result<SqliteReader> {
    let path = db_path(db)?;
    if !path.exists() {
        bail!(
            "no database at {}: nothing has been recorded there yet. Start `hooklab listen`, or pass --db FILE",
            path.display()
        );
    }
    SqliteStore::open_read_only(&path).with_context(|| format!("cannot open {}", path.display()))
}

pub(crate) fn list(args: EventsListArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let filter = DeliveryFilter {
        limit: Some(args.limit),
        source: args.source.clone(),
        verdict: args.verdict,
        before: args.before,
        event_type: args.event_type.clone(),
        duplicates_only: args.duplicates,
        search: args.search.clone(),
        duplicate_of: None,
        key_status: args.key_status,
    };
    let rows = store.list(&filter)?;
    if args.json {
        let rows: Vec<_> = rows.iter().map(output::summary_json).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if rows.is_empty() {
        println!("No deliveries recorded yet. Send one to `hooklab listen`.");
    } else {
        print!("{}", output::summary_table(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(args: EventsShowArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let Some(delivery) = store.get(args.id)? else {
        bail!(
            "no delivery with id {}; list them with `hooklab events list`",
            args.id
        );
    };
    if args.raw {
        let mut out = std::io::stdout().lock();
        out.write_all(&delivery.record.body)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let attempts = attempts(&args.db, delivery.id);
    if args.json {
        let mut value = output::delivery_json(&delivery);
        value["attempts"] = attempts.iter().map(output::attempt_json).collect();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", output::delivery_text(&delivery));
        print!("{}", output::attempts_text(&attempts));
    }
    Ok(ExitCode::SUCCESS)
}

/// The delivery's forward attempts, oldest first; none (with a note) when they cannot be read.
fn attempts(db: &crate::cli::DbArg, delivery: i64) -> Vec<hooklab_core::store::Attempt> {
    let read = super::dlq::open(db).and_then(|store| {
        super::dlq::block_on(store.attempts(delivery))?.map_err(anyhow::Error::from)
    });
    read.unwrap_or_else(|e| {
        eprintln!("(the forward attempts could not be read: {e:#})");
        Vec::new()
    })
}

pub(crate) fn keys(args: KeysArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args.db)?;
    let keys = store.keys(&KeyFilter {
        limit: Some(args.limit),
        scope: args.scope.clone(),
        status: args.status,
        duplicates_only: args.duplicates,
        key: None,
    })?;
    if args.json {
        let keys: Vec<_> = keys.iter().map(output::key_json).collect();
        println!("{}", serde_json::to_string_pretty(&keys)?);
    } else if keys.is_empty() {
        println!(
            "No idempotency keys yet. Each verified delivery claims its event's key; \
             duplicates of an event show up here."
        );
    } else {
        print!("{}", output::keys_table(&keys));
    }
    Ok(ExitCode::SUCCESS)
}
