//! What only the SQLite store has, against real files in temporary folders: group commit under
//! concurrency (and durability across reopen), reopening, the CLI's read-only path, upgrading
//! an old file. The capabilities both engines share (round trips, listing, idempotency, the
//! outbox, objects) are one suite run on both: `crates/hooklab-postgres/tests/store`.

use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{NewDelivery, Store, StoreError};

#[path = "../fixtures/store.rs"]
mod fixtures;
use fixtures::{all, delivery, valid};

mod group_commit;

mod reopen;

mod read_only;

mod idempotency;
