//! `hooklab export` and `hooklab import`: a whole database as JSON Lines, between any two
//! engines (SQLite ⇄ PostgreSQL), ids and references kept. The format is
//! `hooklab_core::store::transfer`'s.

use super::db_path;
use super::serve::{is_postgres, redact, sqlite_path};
use crate::cli::{AnyDatabaseArg, ExportArgs, ImportArgs};
use anyhow::Context as _;
use hooklab_core::store::sqlite::transfer as sqlite;
use hooklab_postgres::transfer as postgres;
use std::io::{BufRead, BufReader, BufWriter, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

enum Target {
    Postgres(String),
    Sqlite(PathBuf),
}

impl Target {
    fn of(arg: &AnyDatabaseArg) -> anyhow::Result<Self> {
        Ok(match &arg.database {
            Some(url) if is_postgres(url) => Target::Postgres(url.clone()),
            Some(path) => Target::Sqlite(sqlite_path(path)),
            None => Target::Sqlite(db_path(&arg.db)?),
        })
    }

    fn shown(&self) -> String {
        match self {
            Target::Postgres(url) => redact(url),
            Target::Sqlite(path) => path.display().to_string(),
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let target = Target::of(&args.database)?;
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let rows = match &target {
        Target::Postgres(url) => runtime()?.block_on(postgres::export(url, &mut out)),
        Target::Sqlite(path) => sqlite::export(path, &mut out),
    }
    .with_context(|| format!("cannot export {}", target.shown()))?;
    out.flush().context("writing the export")?;
    eprintln!("exported {rows} rows from {}", target.shown());
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let target = Target::of(&args.database)?;
    let mut input: Box<dyn BufRead> = match &args.file {
        Some(path) if path.as_os_str() != "-" => Box::new(BufReader::new(
            std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
        )),
        _ => Box::new(BufReader::new(std::io::stdin())),
    };
    let rows = match &target {
        Target::Postgres(url) => runtime()?.block_on(postgres::import(url, &mut input)),
        Target::Sqlite(path) => sqlite::import(path, &mut input),
    }
    .with_context(|| format!("cannot import into {}", target.shown()))?;
    println!("imported {rows} rows into {}", target.shown());
    Ok(ExitCode::SUCCESS)
}
