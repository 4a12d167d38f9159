//! Opening connections with the settings every Hooklab connection needs: WAL (readers never
//! block the writer), `synchronous=NORMAL` on the writer (its syncer thread makes each group
//! durable before it is answered: that is what lets the receiver answer 2xx), a busy timeout, foreign keys,
//! and `query_only` on readers so a read path can never write.

use super::SqliteOptions;
use crate::store::StoreError;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Room for the write statement and every shape of listing query.
const STATEMENT_CACHE: usize = 32;

/// Turns a rusqlite error into a [`StoreError::Storage`] that says what was being done.
pub(super) fn storage(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |e| StoreError::Storage(format!("{context}: {e}"))
}

/// Opens (creating it and its parent folders if needed) the connection that writes.
pub(super) fn open_writer(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            StoreError::Storage(format!("creating the folder {}: {e}", parent.display()))
        })?;
    }
    let conn = Connection::open(path)
        .map_err(|e| StoreError::Storage(format!("opening {}: {e}", path.display())))?;
    common_settings(&conn, options)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(storage("enabling WAL"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Storage(format!(
            "{} cannot use WAL (journal mode stayed `{mode}`); use a local file system",
            path.display()
        )));
    }
    // NORMAL: a commit writes the WAL without waiting for the disk, and checkpoints sync both
    // files. The writer's syncer thread `fdatasync`s the WAL after every group before anyone
    // hears of it (see `writer`), which makes each acknowledged commit as durable as FULL would.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(storage("setting synchronous=NORMAL"))?;
    Ok(conn)
}

/// Opens a connection that only reads an existing database (it never creates one).
pub(super) fn open_reader(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    if !path.exists() {
        return Err(StoreError::Storage(format!(
            "no database at {}",
            path.display()
        )));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| StoreError::Storage(format!("opening {}: {e}", path.display())))?;
    common_settings(&conn, options)?;
    conn.pragma_update(None, "query_only", true)
        .map_err(storage("setting query_only"))?;
    Ok(conn)
}

fn common_settings(conn: &Connection, options: &SqliteOptions) -> Result<(), StoreError> {
    conn.busy_timeout(options.busy_timeout)
        .map_err(storage("setting busy_timeout"))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(storage("enabling foreign keys"))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(())
}

/// Sets the writer's page cap and returns the cap now in force. SQLite never sets it below the
/// database's current size, so a small value pins the file at the size it has.
pub(super) fn set_max_page_count(conn: &Connection, pages: u32) -> Result<u32, StoreError> {
    let now: i64 = conn
        .pragma_update_and_check(None, "max_page_count", pages, |row| row.get(0))
        .map_err(storage("setting max_page_count"))?;
    Ok(u32::try_from(now).unwrap_or(u32::MAX))
}

/// The page cap in force on this connection.
pub(super) fn max_page_count(conn: &Connection) -> Result<u32, StoreError> {
    let now: i64 = conn
        .pragma_query_value(None, "max_page_count", |row| row.get(0))
        .map_err(storage("reading max_page_count"))?;
    Ok(u32::try_from(now).unwrap_or(u32::MAX))
}
