//! One store test-suite, run against both engines: every capability test is an
//! `async fn(Engine)`, and the macro at the bottom makes one `#[tokio::test]` of it per engine
//! (`sqlite::…` on a file in a temporary folder, `postgres::…` on a fresh database of the test
//! server: `HOOKLAB_TEST_DATABASE_URL`, or a throwaway cluster this process starts and that
//! stops with it). What only PostgreSQL has (several processes on one database) is in
//! `replicas` and `schema`.

use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::Header;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{DeliveryFilter, NewDelivery, Store};
use hooklab_core::verdict::{Diagnosis, Finding, Reason, Status, Verdict};
use hooklab_postgres::cluster::test_server;
use hooklab_postgres::{PgOptions, PgStore};
use std::sync::Arc;

/// Which engine a test runs on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Engine {
    Sqlite,
    Postgres,
}

/// An open, empty store and what keeps it alive.
pub(crate) struct Opened {
    pub(crate) store: Arc<dyn Store>,
    /// SQLite: the folder holding the file.
    _dir: Option<tempfile::TempDir>,
}

impl Engine {
    pub(crate) async fn open(self) -> Opened {
        match self {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
                Opened {
                    store: Arc::new(store),
                    _dir: Some(dir),
                }
            }
            Engine::Postgres => {
                let url = fresh_database().await;
                let store = PgStore::connect_with(&url, options()).await.unwrap();
                Opened {
                    store: Arc::new(store),
                    _dir: None,
                }
            }
        }
    }
}

/// The store's options: `HOOKLAB_NO_PREPARED_STATEMENTS` (set by scripts/pgbouncer-check.sh
/// for a pooler that cannot keep prepared statements) turns them off, as it does for `serve`.
pub(crate) fn options() -> PgOptions {
    PgOptions {
        prepared_statements: std::env::var_os("HOOKLAB_NO_PREPARED_STATEMENTS").is_none(),
        ..PgOptions::default()
    }
}

/// A new empty database on the test server; a missing PostgreSQL fails the test, loudly.
pub(crate) async fn fresh_database() -> String {
    let server = test_server().unwrap_or_else(|e| panic!("no PostgreSQL to test against: {e}"));
    server
        .fresh_database()
        .await
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"))
}

#[path = "../../../hooklab-core/tests/fixtures/store.rs"]
mod fixtures;
use fixtures::{all, delivery, valid};

fn invalid() -> Verdict {
    Verdict::invalid(Reason::SignatureMismatch, "no secret matches")
}

mod idempotency;
mod listing;
mod objects;
mod outbox;
mod replicas;
mod round_trip;
mod schema;

/// One test per engine for each listed capability test.
macro_rules! on_both_engines {
    ($($module:ident { $($test:ident),* $(,)? })*) => {
        mod sqlite {
            $(mod $module {
                $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    crate::$module::$test(crate::Engine::Sqlite).await
                })*
            })*
        }
        mod postgres {
            $(mod $module {
                $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    crate::$module::$test(crate::Engine::Postgres).await
                })*
            })*
        }
    };
}

on_both_engines! {
    round_trip {
        every_byte_and_field_comes_back_exactly,
        empty_and_refused_bodies_and_unknown_sources_round_trip,
    }
    listing {
        newest_first_with_summary_fields,
        filters_combine,
        paging_with_before_walks_every_row_once,
        limit_defaults_to_50_and_is_capped_at_10_000,
        search_finds_text_in_body_headers_and_fields,
        duplicates_of_one_delivery_are_listed,
    }
    idempotency {
        five_hundred_concurrent_claims_have_exactly_one_winner,
        a_failed_key_is_processed_again_by_its_next_delivery_only,
        scopes_are_independent_and_unclaimed_deliveries_have_no_key,
    }
    outbox {
        jobs_are_written_with_their_delivery_only_when_it_is_to_be_processed,
        a_lease_hides_a_job_until_it_expires,
        retries_then_dead_letter_then_redrive,
        discard_removes_a_dead_letter_by_job_id,
    }
    objects {
        an_update_sees_the_previous_record_and_appends_to_the_timeline,
        queued_updates_apply_in_call_order,
    }
}
