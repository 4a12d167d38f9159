//! Schema migrations: an ordered list of SQL scripts, each owned by the module of the table it
//! creates or changes. `PRAGMA user_version` records how many have run. Every pending script
//! and the version bump run in ONE immediate transaction, so a crash mid-migration leaves the
//! previous schema intact, and two processes opening the same file cannot both migrate it. A
//! file written by a newer Hooklab (a higher version) is refused, never downgraded.
//!
//! New steps are appended here, never made by editing an applied one.

use super::connection::storage;
use super::{deliveries, idempotency, jobs, objects};
use crate::store::StoreError;
use rusqlite::{Connection, TransactionBehavior};

/// One step of the schema's history.
struct Migration {
    /// Why this step exists, for error messages.
    name: &'static str,
    sql: &'static str,
}

/// The schema's history, oldest first. Entry `i` takes the database to version `i + 1`.
const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "create deliveries",
        sql: deliveries::MIGRATION_V1,
    },
    Migration {
        name: "idempotency keys",
        sql: idempotency::MIGRATION_V2,
    },
    Migration {
        name: "outbox jobs and attempts",
        sql: jobs::MIGRATION_V3,
    },
    Migration {
        name: "objects and timelines",
        sql: objects::MIGRATION_V4,
    },
];

/// The schema version this build writes and reads.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database up to [`SCHEMA_VERSION`], atomically; a no-op when it is current.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(storage("starting the migration"))?;
    let found = version(&tx)?;
    check_not_newer(found)?;
    let start = usize::try_from(found).unwrap_or(0);
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(start) {
        tx.execute_batch(migration.sql).map_err(|e| {
            StoreError::Storage(format!(
                "migration {} ({}) failed: {e}",
                index + 1,
                migration.name
            ))
        })?;
    }
    if found != SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(storage("recording the schema version"))?;
    }
    tx.commit().map_err(storage("committing the migration"))
}

/// For connections that must not migrate (readers): the schema must be exactly this build's.
pub(super) fn require_current(conn: &Connection) -> Result<(), StoreError> {
    let found = version(conn)?;
    check_not_newer(found)?;
    if found < SCHEMA_VERSION {
        return Err(StoreError::Storage(format!(
            "the database schema version {found} is older than this Hooklab's ({SCHEMA_VERSION}); \
             start the receiver once to upgrade it"
        )));
    }
    Ok(())
}

/// The version recorded in the file (0 for a new one).
pub(super) fn version(conn: &Connection) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(storage("reading the schema version"))
}

fn check_not_newer(found: i64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_count(conn: &Connection) -> i64 {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'deliveries'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn a_new_database_reaches_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
        assert_eq!(table_count(&conn), 1, "the deliveries table must exist");
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).expect("a current database must not be migrated again");
        assert_eq!(version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_newer_database_is_refused_untouched() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found, supported }
                if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "got {err:?}"
        );
        assert_eq!(
            table_count(&conn),
            0,
            "nothing may be created in a newer file"
        );
    }

    #[test]
    fn a_failed_migration_leaves_nothing_behind() {
        let mut conn = Connection::open_in_memory().unwrap();
        // An index already holding one of the names makes the migration fail halfway through,
        // after `deliveries` was created.
        conn.execute_batch("CREATE TABLE t (x); CREATE INDEX deliveries_by_event ON t (x);")
            .unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(matches!(err, StoreError::Storage(_)), "got {err:?}");
        assert_eq!(version(&conn).unwrap(), 0, "the version must not move");
        assert_eq!(
            table_count(&conn),
            0,
            "the deliveries table must be rolled back"
        );
    }

    #[test]
    fn readers_require_the_exact_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert!(matches!(
            require_current(&conn),
            Err(StoreError::Storage(_))
        ));
        migrate(&mut conn).unwrap();
        require_current(&conn).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        assert!(matches!(
            require_current(&conn),
            Err(StoreError::TooNew { .. })
        ));
    }
}
