//! The SQLite store against real files in temporary folders, one module per capability:
//! byte-exact round trips, group commit under concurrency (and durability across reopen),
//! reopening, listing with filters and paging, and the CLI's read-only path.

use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::provider::ProviderId;
use hooklab_core::request::Header;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{DeliveryFilter, NewDelivery, Store, StoreError};
use hooklab_core::verdict::{Diagnosis, Finding, Reason, Status, Verdict};

fn delivery(source: &str, verdict: Verdict, body: &[u8]) -> NewDelivery {
    NewDelivery {
        received_at: UnixMillis(1_750_000_000_123),
        source: source.into(),
        provider: source.parse().ok(),
        method: "POST".into(),
        path: format!("/{source}"),
        query: None,
        headers: vec![Header::new("Content-Type", "application/json")],
        body: body.to_vec(),
        body_size: body.len() as u64,
        body_refused: false,
        remote_addr: Some("203.0.113.7:51234".into()),
        verdict,
        metadata: Metadata::default(),
        response_status: 200,
        idempotency: None,
        enqueue: false,
    }
}

fn valid() -> Verdict {
    Verdict::valid(0, Some(1_750_000_000), "signature matches secret #0".into())
}

fn invalid() -> Verdict {
    Verdict::invalid(Reason::SignatureMismatch, "no secret matches")
}

fn all() -> DeliveryFilter {
    DeliveryFilter {
        limit: Some(10_000),
        ..Default::default()
    }
}

mod round_trip {
    use super::*;

    #[tokio::test]
    async fn every_byte_and_field_comes_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("nested/dir/hooklab.db"))
            .expect("open creates missing parent folders");
        let mut d = delivery(
            "stripe",
            invalid(),
            b"\xff\xfe{\"id\":\x00\"evt_1\"}\xc3\x28",
        );
        d.method = "PUT".into();
        d.path = "/stripe/hooks".into();
        d.query = Some("a=1&a=2&b=%ZZ".into());
        d.headers = vec![
            Header::new("Stripe-Signature", "t=1,v1=abc"),
            Header::new("X-Dup", "first"),
            Header::new("content-type", "application/json"),
            Header::new("x-dup", "second"),
            Header::new("X-Binary", b"\x80\xff raw \x00".to_vec()),
            Header::new("X-DUP", "third"),
        ];
        d.metadata = Metadata {
            event_id: Some("evt_1".into()),
            event_type: Some("payment_intent.succeeded".into()),
            object_id: Some("pi_1".into()),
            provider_time: Some(UnixMillis(1_749_999_999_000)),
            idempotency_key: Some("evt_1".into()),
        };
        d.response_status = 401;
        d.verdict.diagnosis = Some(Diagnosis {
            finding: Some(Finding::OutsideTolerance {
                secret_index: 0,
                age_secs: 400,
                by_secs: 100,
            }),
            message: "the timestamp is 400 s old; the tolerance is 300 s".into(),
        });
        let id = store.record(d.clone()).await.unwrap().id;

        let got = store.get(id).await.unwrap().expect("the row just written");
        assert_eq!(got.id, id);
        assert_eq!(
            got.record, d,
            "body bytes, header order/duplicates/case/binary values, query, metadata and \
             verdict must all survive storage unchanged"
        );
    }

    #[tokio::test]
    async fn empty_and_refused_bodies_and_unknown_sources_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
        let mut empty = delivery(
            "nobody-configured-this",
            Verdict::not_verified("unknown"),
            b"",
        );
        empty.headers.clear();
        empty.remote_addr = None;
        let mut refused = delivery("github", valid(), b"");
        refused.body_refused = true;
        refused.body_size = 50 * 1024 * 1024;
        refused.response_status = 413;
        for d in [empty, refused] {
            let id = store.record(d.clone()).await.unwrap().id;
            assert_eq!(store.get(id).await.unwrap().unwrap().record, d);
        }
        assert!(
            store.get(9_999).await.unwrap().is_none(),
            "a missing id is None, not an error"
        );
    }
}

mod group_commit {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;
    use std::time::Instant;

    /// Records `tasks * per_task` deliveries from concurrent tasks; returns ids and rows/s.
    async fn record_concurrently(
        store: &Arc<SqliteStore>,
        tasks: usize,
        per_task: usize,
        body: &'static [u8],
    ) -> (Vec<i64>, f64) {
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|t| {
                let store = Arc::clone(store);
                tokio::spawn(async move {
                    let mut ids = Vec::with_capacity(per_task);
                    for i in 0..per_task {
                        let mut d = delivery("stripe", valid(), body);
                        d.metadata.event_id = Some(format!("evt_{t}_{i}"));
                        ids.push(store.record(d).await.expect("every record commits").id);
                    }
                    ids
                })
            })
            .collect();
        let mut ids = Vec::new();
        for h in handles {
            ids.extend(h.await.unwrap());
        }
        let rate = ids.len() as f64 / started.elapsed().as_secs_f64();
        (ids, rate)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_thousand_concurrent_records_group_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooklab.db");
        let store = Arc::new(SqliteStore::open(&path).unwrap());
        let (ids, rate) = record_concurrently(&store, 200, 10, br#"{"id":"evt"}"#).await;

        let distinct: HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), 2_000, "every record got its own id");
        let stats = store.stats();
        println!("2 000 records from 200 tasks: {rate:.0} rows/s, {stats:?}");
        assert_eq!(stats.rows, 2_000);
        assert!(
            stats.commits < stats.rows,
            "concurrent records must share commits (one fsync for many): {stats:?}"
        );

        drop(Arc::try_unwrap(store).expect("no other handle"));
        let reopened = SqliteStore::open(&path).unwrap();
        let listed = reopened.list(all()).await.unwrap();
        assert_eq!(listed.len(), 2_000, "every acknowledged record is on disk");
        let listed_ids: HashSet<_> = listed.iter().map(|s| s.id).collect();
        assert_eq!(listed_ids, ids.iter().copied().collect::<HashSet<_>>());
    }

    /// Not a timed assertion: prints throughput for a quick look (`--nocapture`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn prints_throughput() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("hooklab.db")).unwrap());
        static BODY: [u8; 1024] = [b'x'; 1024];
        for (tasks, per_task) in [(1, 200), (64, 100), (512, 40)] {
            let before = store.stats();
            let (ids, rate) = record_concurrently(&store, tasks, per_task, &BODY).await;
            let after = store.stats();
            println!(
                "{tasks:>3} concurrent writers, {} × 1 KiB: {rate:>8.0} rows/s, {} commits",
                ids.len(),
                after.commits - before.commits
            );
        }
    }
}

mod reopen {
    use super::*;

    #[tokio::test]
    async fn reopening_keeps_data_and_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooklab.db");
        let id = {
            let store = SqliteStore::open(&path).unwrap();
            store
                .record(delivery("stripe", valid(), b"1"))
                .await
                .unwrap()
                .id
        };
        for _ in 0..2 {
            let store = SqliteStore::open(&path).expect("a current schema reopens as is");
            assert!(store.get(id).await.unwrap().is_some());
        }
        let next = SqliteStore::open(&path)
            .unwrap()
            .record(delivery("stripe", valid(), b"2"))
            .await
            .unwrap()
            .id;
        assert!(next > id, "ids keep increasing across reopen");
    }
}

mod listing {
    use super::*;

    /// 30 deliveries: sources alternate stripe/github; every third is invalid.
    async fn seeded() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
        for i in 0..30 {
            let source = if i % 2 == 0 { "stripe" } else { "github" };
            let verdict = if i % 3 == 0 { invalid() } else { valid() };
            let mut d = delivery(source, verdict, format!("{i}").as_bytes());
            d.metadata.event_id = Some(format!("evt_{i}"));
            store.record(d).await.unwrap();
        }
        (dir, store)
    }

    #[tokio::test]
    async fn newest_first_with_summary_fields() {
        let (_dir, store) = seeded().await;
        let rows = store.list(DeliveryFilter::default()).await.unwrap();
        assert_eq!(rows.len(), 30);
        assert!(rows.windows(2).all(|w| w[0].id > w[1].id), "newest first");
        let newest = &rows[0];
        assert_eq!(newest.event_id.as_deref(), Some("evt_29"));
        assert_eq!(newest.source, "github");
        assert_eq!(newest.provider, Some(ProviderId::Github));
        assert_eq!(newest.verdict, Status::Valid);
        assert_eq!(newest.reason, None);
        assert_eq!(newest.body_size, 2);
        let oldest = rows.last().unwrap();
        assert_eq!(oldest.reason.as_deref(), Some("signature_mismatch"));
    }

    #[tokio::test]
    async fn filters_combine() {
        let (_dir, store) = seeded().await;
        let by = |source: Option<&str>, verdict: Option<Status>| DeliveryFilter {
            source: source.map(String::from),
            verdict,
            ..Default::default()
        };
        let stripe = store.list(by(Some("stripe"), None)).await.unwrap();
        assert_eq!(stripe.len(), 15);
        assert!(stripe.iter().all(|s| s.source == "stripe"));
        let invalid = store.list(by(None, Some(Status::Invalid))).await.unwrap();
        assert_eq!(invalid.len(), 10);
        let both = store
            .list(by(Some("github"), Some(Status::Invalid)))
            .await
            .unwrap();
        // i odd and divisible by 3: 3, 9, 15, 21, 27.
        assert_eq!(both.len(), 5);
        assert!(store.list(by(Some("nope"), None)).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn paging_with_before_walks_every_row_once() {
        let (_dir, store) = seeded().await;
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = store
                .list(DeliveryFilter {
                    limit: Some(7),
                    before,
                    source: Some("stripe".into()),
                    ..Default::default()
                })
                .await
                .unwrap();
            if page.is_empty() {
                break;
            }
            assert!(page.len() <= 7);
            before = page.last().map(|s| s.id);
            seen.extend(page.into_iter().map(|s| s.id));
        }
        assert_eq!(seen.len(), 15, "every stripe row exactly once");
        assert!(seen.windows(2).all(|w| w[0] > w[1]));
    }

    #[tokio::test]
    async fn limit_defaults_to_50_and_is_capped_at_10_000() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("hooklab.db")).unwrap();
        let pending: Vec<_> = (0..10_050)
            .map(|_| store.record(delivery("stripe", valid(), b"")))
            .collect();
        for f in pending {
            f.await.unwrap();
        }
        assert_eq!(
            store.list(DeliveryFilter::default()).await.unwrap().len(),
            50
        );
        let huge = DeliveryFilter {
            limit: Some(u32::MAX),
            ..Default::default()
        };
        assert_eq!(store.list(huge).await.unwrap().len(), 10_000);
    }
}

mod read_only {
    use super::*;

    #[tokio::test]
    async fn the_cli_reads_while_the_receiver_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooklab.db");
        let store = SqliteStore::open(&path).unwrap();
        let id = store
            .record(delivery("stripe", valid(), b"a"))
            .await
            .unwrap()
            .id;

        let reader = SqliteStore::open_read_only(&path).unwrap();
        assert_eq!(reader.list(&all()).unwrap().len(), 1);
        assert_eq!(reader.get(id).unwrap().unwrap().record.body, b"a");
        store
            .record(delivery("stripe", valid(), b"b"))
            .await
            .unwrap();
        assert_eq!(
            reader.list(&all()).unwrap().len(),
            2,
            "the reader sees commits made after it opened"
        );
    }

    #[test]
    fn a_missing_database_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.db");
        let err = SqliteStore::open_read_only(&path).unwrap_err();
        assert!(matches!(err, StoreError::Storage(_)), "got {err:?}");
        assert!(!path.exists(), "reading must never create a database");
    }
}

mod idempotency {
    use super::*;
    use hooklab_core::store::{IdempotencyClaim, KeyFilter, KeyStatus};
    use std::sync::Arc;

    fn claiming(key: &str, status: KeyStatus) -> NewDelivery {
        let mut d = delivery("stripe", valid(), key.as_bytes());
        d.idempotency = Some(IdempotencyClaim {
            scope: "stripe".into(),
            key: key.into(),
            status,
        });
        d
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn five_hundred_concurrent_claims_have_exactly_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("h.db")).unwrap());
        let tasks: Vec<_> = (0..500)
            .map(|_| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    store
                        .record(claiming("evt_race", KeyStatus::Processing))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut recorded = Vec::new();
        for t in tasks {
            recorded.push(t.await.unwrap());
        }
        let outcomes: Vec<_> = recorded.iter().map(|r| r.key.expect("a claim")).collect();
        let winners: Vec<_> = recorded
            .iter()
            .filter(|r| r.key.is_some_and(|k| !k.duplicate))
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "the constraint lets exactly one delivery win"
        );
        let first = winners[0].id;
        assert!(
            outcomes.iter().all(|k| k.first_delivery == first),
            "every loser learns who won"
        );
        assert_eq!(
            outcomes.iter().filter(|k| k.process).count(),
            1,
            "only the winner is to be processed"
        );
        let keys = store.keys(KeyFilter::default()).await.unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(
            keys[0].deliveries, 500,
            "every delivery is counted on the key"
        );
        assert_eq!(keys[0].first_delivery, first);
        assert_eq!(keys[0].status, KeyStatus::Processing);
        let rows = store.list(all()).await.unwrap();
        assert_eq!(
            rows.iter()
                .filter(|r| r.duplicate_of == Some(first))
                .count(),
            499,
            "499 deliveries are recorded as duplicates of the first"
        );
        assert_eq!(
            rows.iter().find(|r| r.id == first).unwrap().duplicate_of,
            None
        );
    }

    #[tokio::test]
    async fn a_failed_key_is_processed_again_by_its_next_delivery_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let first = store
            .record(claiming("evt_1", KeyStatus::Processing))
            .await
            .unwrap();
        let dup = store
            .record(claiming("evt_1", KeyStatus::Processing))
            .await
            .unwrap();
        assert!(
            !dup.key.unwrap().process,
            "processing: a duplicate is not processed"
        );
        store
            .set_key_status("stripe".into(), "evt_1".into(), KeyStatus::Failed)
            .await
            .unwrap();
        let retry = store
            .record(claiming("evt_1", KeyStatus::Processing))
            .await
            .unwrap()
            .key
            .unwrap();
        assert!(
            retry.duplicate && retry.process,
            "after a failure the next delivery runs"
        );
        assert_eq!(retry.first_delivery, first.id);
        assert_eq!(retry.status, KeyStatus::Processing);
        let after = store
            .record(claiming("evt_1", KeyStatus::Processing))
            .await
            .unwrap()
            .key
            .unwrap();
        assert!(!after.process, "only one delivery takes over a failed key");
        store
            .set_key_status("stripe".into(), "evt_1".into(), KeyStatus::Completed)
            .await
            .unwrap();
        let done = store
            .record(claiming("evt_1", KeyStatus::Processing))
            .await
            .unwrap()
            .key
            .unwrap();
        assert!(!done.process && done.status == KeyStatus::Completed);
        assert_eq!(done.deliveries, 5);
    }

    #[tokio::test]
    async fn scopes_are_independent_and_unclaimed_deliveries_have_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let a = store
            .record(claiming("same", KeyStatus::Completed))
            .await
            .unwrap();
        let mut other = claiming("same", KeyStatus::Completed);
        other.idempotency.as_mut().unwrap().scope = "github".into();
        let b = store.record(other).await.unwrap();
        assert!(!a.key.unwrap().duplicate && !b.key.unwrap().duplicate);
        let none = store
            .record(delivery("stripe", invalid(), b"x"))
            .await
            .unwrap();
        assert_eq!(none.key, None, "a delivery without a claim touches no key");
        let unknown = store
            .set_key_status("stripe".into(), "nope".into(), KeyStatus::Failed)
            .await;
        assert!(
            unknown.is_err(),
            "an unknown key is an error, not a silent no-op"
        );
        let dups = store
            .keys(KeyFilter {
                duplicates_only: true,
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(dups.is_empty());
    }

    #[test]
    fn a_version_1_database_is_upgraded_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        {
            // What a Hooklab with schema version 1 wrote.
            let store = SqliteStore::open(&path).unwrap();
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            rt.block_on(store.record(delivery("stripe", valid(), b"old")))
                .unwrap();
            store.close().unwrap();
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "DROP TABLE objects; DROP TABLE timeline; DROP TABLE jobs; DROP TABLE attempts; \
                 DROP TABLE idempotency_keys; DROP INDEX deliveries_duplicates; \
                 ALTER TABLE deliveries DROP COLUMN duplicate_of; PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).expect("version 1 upgrades to the current schema");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let rows = rt.block_on(store.list(all())).unwrap();
        assert_eq!(rows.len(), 1, "old deliveries survive the upgrade");
        assert_eq!(rows[0].duplicate_of, None);
        let r = rt
            .block_on(store.record(claiming("evt_new", KeyStatus::Completed)))
            .unwrap();
        assert!(r.key.is_some(), "the upgraded file takes claims");
    }
}

mod outbox {
    use super::*;
    use hooklab_core::store::{
        AttemptRecord, DeadLetterFilter, IdempotencyClaim, JobOutcome, KeyFilter, KeyStatus,
    };

    fn handled(key: Option<&str>) -> NewDelivery {
        let mut d = delivery("stripe", valid(), b"{}");
        d.enqueue = true;
        d.idempotency = key.map(|k| IdempotencyClaim {
            scope: "stripe".into(),
            key: k.into(),
            status: KeyStatus::Processing,
        });
        d
    }

    fn attempt(status: u16) -> AttemptRecord {
        AttemptRecord {
            started_at: UnixMillis(1),
            duration_ms: 3,
            target: Some("http://127.0.0.1:9/".into()),
            status: Some(status),
            response_headers: vec![Header::new("X-App", "yes")],
            response_body: vec![b'x'; 70 * 1024],
            error: None,
        }
    }

    async fn key_status(store: &SqliteStore) -> KeyStatus {
        store.keys(KeyFilter::default()).await.unwrap()[0].status
    }

    #[tokio::test]
    async fn jobs_are_written_with_their_delivery_only_when_it_is_to_be_processed() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let first = store.record(handled(Some("evt_1"))).await.unwrap();
        let dup = store.record(handled(Some("evt_1"))).await.unwrap();
        let keyless = store.record(handled(None)).await.unwrap();
        let unhandled = store
            .record(delivery("stripe", valid(), b"{}"))
            .await
            .unwrap();
        assert!(
            first.job.is_some(),
            "the first delivery of a key gets a job"
        );
        assert_eq!(dup.job, None, "a duplicate of a processing key gets none");
        assert!(
            keyless.job.is_some(),
            "a delivery without a key is processed"
        );
        assert_eq!(unhandled.job, None, "no handler, no job");
    }

    #[tokio::test]
    async fn a_lease_hides_a_job_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let recorded = store.record(handled(Some("evt_1"))).await.unwrap();
        let now = UnixMillis(1_750_000_000_123);
        let leased = store.lease_jobs(now, 10, 30_000).await.unwrap();
        assert_eq!(leased.len(), 1);
        assert_eq!(leased[0].delivery, recorded.id);
        assert_eq!(leased[0].attempt, 1);
        assert_eq!(leased[0].key.as_deref(), Some("evt_1"));
        assert!(
            store.lease_jobs(now, 10, 30_000).await.unwrap().is_empty(),
            "a leased job is invisible to other workers"
        );
        assert_eq!(
            store.next_due().await.unwrap(),
            Some(UnixMillis(now.0 + 30_000)),
            "the lease's end is when it is due again"
        );
        let again = store
            .lease_jobs(UnixMillis(now.0 + 30_000), 10, 30_000)
            .await
            .unwrap();
        assert_eq!(
            again.len(),
            1,
            "a crashed worker's job runs again after the lease"
        );
        assert_eq!(again[0].attempt, 2);
        let stale = store
            .finish_job(leased[0].clone(), attempt(200), JobOutcome::Done, now)
            .await
            .unwrap();
        assert!(
            !stale,
            "the first worker lost its lease: its finish changes nothing"
        );
        assert_eq!(key_status(&store).await, KeyStatus::Processing);
        assert!(
            store
                .finish_job(again[0].clone(), attempt(200), JobOutcome::Done, now)
                .await
                .unwrap()
        );
        assert_eq!(key_status(&store).await, KeyStatus::Completed);
        let attempts = store.attempts(recorded.id).await.unwrap();
        assert_eq!(attempts.len(), 2, "both attempts are recorded");
        assert_eq!(
            attempts[1].record.response_body.len(),
            64 * 1024,
            "a response body is kept up to 64 KiB"
        );
    }

    #[tokio::test]
    async fn retries_then_dead_letter_then_redrive() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let recorded = store.record(handled(Some("evt_9"))).await.unwrap();
        let t0 = UnixMillis(1_750_000_000_123);
        let job = store.lease_jobs(t0, 1, 1000).await.unwrap().remove(0);
        let retry_at = UnixMillis(t0.0 + 5_000);
        store
            .finish_job(
                job,
                attempt(500),
                JobOutcome::Retry { run_at: retry_at },
                t0,
            )
            .await
            .unwrap();
        assert!(
            store
                .lease_jobs(UnixMillis(retry_at.0 - 1), 1, 1000)
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.next_due().await.unwrap(), Some(retry_at));
        let job = store.lease_jobs(retry_at, 1, 1000).await.unwrap().remove(0);
        assert_eq!(job.attempt, 2);
        store
            .finish_job(
                job,
                attempt(500),
                JobOutcome::Dead {
                    reason: "gave up after 2 attempts: HTTP 500".into(),
                },
                retry_at,
            )
            .await
            .unwrap();
        assert_eq!(key_status(&store).await, KeyStatus::Failed);
        let dead = store
            .dead_letters(DeadLetterFilter::default())
            .await
            .unwrap();
        assert_eq!(dead.len(), 1);
        assert_eq!(dead[0].delivery, recorded.id);
        assert_eq!(dead[0].attempts, 2);
        assert!(dead[0].reason.contains("HTTP 500"));
        assert_eq!(
            store.next_due().await.unwrap(),
            None,
            "a dead job is never due"
        );

        let other_source = DeadLetterFilter {
            source: Some("github".into()),
            ..Default::default()
        };
        assert_eq!(store.redrive(other_source, retry_at).await.unwrap(), 0);
        assert_eq!(
            store
                .redrive(DeadLetterFilter::default(), retry_at)
                .await
                .unwrap(),
            1
        );
        assert_eq!(key_status(&store).await, KeyStatus::Processing);
        assert!(
            store
                .dead_letters(DeadLetterFilter::default())
                .await
                .unwrap()
                .is_empty()
        );
        let job = store.lease_jobs(retry_at, 1, 1000).await.unwrap().remove(0);
        assert_eq!(job.attempt, 3, "a redriven job keeps its history");
        store
            .finish_job(job, attempt(200), JobOutcome::Done, retry_at)
            .await
            .unwrap();
        assert_eq!(key_status(&store).await, KeyStatus::Completed);
        assert_eq!(store.attempts(recorded.id).await.unwrap().len(), 3);
    }

    #[tokio::test]
    async fn discard_removes_a_dead_letter_by_job_id() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        store.record(handled(None)).await.unwrap();
        let t = UnixMillis(1_750_000_000_123);
        let job = store.lease_jobs(t, 1, 1000).await.unwrap().remove(0);
        let id = job.job;
        store
            .finish_job(
                job,
                attempt(500),
                JobOutcome::Dead {
                    reason: "no".into(),
                },
                t,
            )
            .await
            .unwrap();
        let wrong = DeadLetterFilter {
            jobs: Some(vec![id + 100]),
            ..Default::default()
        };
        assert_eq!(store.discard(wrong, t).await.unwrap(), 0);
        let right = DeadLetterFilter {
            jobs: Some(vec![id]),
            ..Default::default()
        };
        assert_eq!(store.discard(right, t).await.unwrap(), 1);
        assert!(
            store
                .dead_letters(DeadLetterFilter::default())
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .lease_jobs(UnixMillis(i64::MAX / 2), 10, 1)
                .await
                .unwrap()
                .is_empty()
        );
    }
}

mod objects {
    use super::*;
    use hooklab_core::store::{ObjectChange, ObjectFilter, ObjectRecord, TimelineEntry};

    fn change(prev: Option<ObjectRecord>, to: &str, at: i64) -> Option<ObjectChange> {
        let from = prev.as_ref().and_then(|p| p.state.clone());
        Some(ObjectChange {
            object: ObjectRecord {
                machine: "m".into(),
                object_id: "pi_1".into(),
                state: Some(to.into()),
                state_time: Some(UnixMillis(at)),
                flags: vec![],
                data: format!("{{\"n\":{}}}", prev.map_or(1, |p| p.data.len())),
                updated_at: UnixMillis(at),
            },
            rows: vec![TimelineEntry {
                machine: "m".into(),
                object_id: "pi_1".into(),
                from,
                to: Some(to.into()),
                delivery: Some(1),
                provider_time: Some(UnixMillis(at)),
                received_at: Some(UnixMillis(at + 1)),
                decision: "applied".into(),
                reason: format!("-> {to}"),
                at: UnixMillis(at + 2),
            }],
        })
    }

    #[tokio::test]
    async fn an_update_sees_the_previous_record_and_appends_to_the_timeline() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("h.db")).unwrap();
        let first = store
            .update_object(
                "m".into(),
                "pi_1".into(),
                Box::new(|prev| {
                    assert!(prev.is_none(), "a new object has no record");
                    change(prev, "pending", 10)
                }),
            )
            .await
            .unwrap();
        assert!(first.is_some());
        store
            .update_object(
                "m".into(),
                "pi_1".into(),
                Box::new(|prev| {
                    assert_eq!(prev.as_ref().unwrap().state.as_deref(), Some("pending"));
                    change(prev, "succeeded", 20)
                }),
            )
            .await
            .unwrap();
        let nothing = store
            .update_object("m".into(), "pi_1".into(), Box::new(|_| None))
            .await
            .unwrap();
        assert_eq!(nothing, None, "an update may decide to write nothing");
        let objects = store.objects(ObjectFilter::default()).await.unwrap();
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0].state.as_deref(), Some("succeeded"));
        let stuck = store
            .objects(ObjectFilter {
                updated_before: Some(UnixMillis(15)),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(stuck.is_empty(), "updated at 20: not stuck before 15");
        let timeline = store.timeline("pi_1".into()).await.unwrap();
        assert_eq!(
            timeline
                .iter()
                .map(|r| r.to.clone().unwrap())
                .collect::<Vec<_>>(),
            ["pending", "succeeded"]
        );
        assert_eq!(timeline[1].from.as_deref(), Some("pending"));
    }
}
