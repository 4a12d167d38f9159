//! `hooklab export` and `hooklab import` of a whole database: JSON Lines between any two
//! engines (SQLite ⇄ PostgreSQL), ids and references kept. The format is
//! `hooklab_core::store::transfer`'s. Deliveries in other formats (JSON, HAR, curl, raw HTTP,
//! a provider's event) are `capture`'s; both commands start here and hand over.

use super::db_path;
use super::serve::{is_postgres, redact, sqlite_path};
use crate::cli::{AnyDatabaseArg, ExportArgs, ExportKind, ImportArgs};
use anyhow::{Context as _, bail};
use hooklab_core::capture::Format;
use hooklab_core::store::sqlite::transfer as sqlite;
use hooklab_postgres::transfer as postgres;
use std::io::{BufRead, BufReader, BufWriter, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) enum Target {
    Postgres(String),
    Sqlite(PathBuf),
}

impl Target {
    pub(super) fn of(arg: &AnyDatabaseArg) -> anyhow::Result<Self> {
        Ok(match &arg.database {
            Some(url) if is_postgres(url) => Target::Postgres(url.clone()),
            Some(path) => Target::Sqlite(sqlite_path(path)),
            None => Target::Sqlite(db_path(&arg.db)?),
        })
    }

    pub(super) fn shown(&self) -> String {
        match self {
            Target::Postgres(url) => redact(url),
            Target::Sqlite(path) => path.display().to_string(),
        }
    }
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let target = Target::of(&args.database)?;
    if let ExportKind::Deliveries(format) = args.format {
        return super::capture::export(&target, format, &args);
    }
    if !args.ids.is_empty() || args.source.is_some() || args.limit.is_some() {
        bail!(
            "--id, --source and --limit choose deliveries: add --format json, har, curl or http \
             (jsonl is always the whole database)"
        );
    }
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
    let file = args.file.as_ref().or(args.file_flag.as_ref());
    let named = file.filter(|p| p.as_os_str() != "-");
    let mut input: Box<dyn BufRead> = match named {
        Some(path) => Box::new(BufReader::new(
            std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
        )),
        None => Box::new(BufReader::new(std::io::stdin())),
    };
    // A database export can be large: it is streamed. Its first line says what it is.
    let mut first = Vec::new();
    input
        .read_until(b'\n', &mut first)
        .context("reading the file")?;
    let database = match args.format.0 {
        Some(Format::Hooklab) => true,
        Some(_) => false,
        None => hooklab_core::capture::detect(&first) == Ok(Format::Hooklab),
    };
    if database {
        if args.to.is_some() || args.source.is_some() || args.secret.is_some() {
            bail!(
                "this is a whole-database export: it is imported whole into a new database \
                 (--to, --source and --secret are for captured requests and events)"
            );
        }
        let mut whole = std::io::Cursor::new(first).chain(input);
        return import_database(&args.database, &mut whole);
    }
    let mut bytes = first;
    input.read_to_end(&mut bytes).context("reading the file")?;
    let base = named
        .and_then(|p| p.parent())
        .map_or_else(PathBuf::new, PathBuf::from);
    super::capture::import(&args, &bytes, &base)
}

fn import_database(database: &AnyDatabaseArg, input: &mut dyn BufRead) -> anyhow::Result<ExitCode> {
    let target = Target::of(database)?;
    let rows = match &target {
        Target::Postgres(url) => runtime()?.block_on(postgres::import(url, input)),
        Target::Sqlite(path) => sqlite::import(path, input),
    }
    .with_context(|| {
        format!(
            "cannot import the database export into {} (a whole-database export goes into a new, \
             empty database; to add deliveries to this one, export them with \
             `hooklab export --format json` and import that)",
            target.shown()
        )
    })?;
    println!("imported {rows} rows into {}", target.shown());
    Ok(ExitCode::SUCCESS)
}
