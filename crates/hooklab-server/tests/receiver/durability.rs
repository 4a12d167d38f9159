//! Durability: the answer never precedes the commit; a storage failure is answered 503 (and
//! not acknowledged); each commit is announced once on the events bus, with its id.

use crate::support::{self, request};
use hooklab_core::clock::UnixMillis;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{
    Attempt, AttemptRecord, BoxFuture, DeadLetter, DeadLetterFilter, Delivery, DeliveryFilter,
    DeliveryId, DeliverySummary, IdempotencyRecord, JobOutcome, KeyFilter, KeyStatus, LeasedJob,
    NewDelivery, ObjectChange, ObjectFilter, ObjectRecord, ObjectUpdate, Recorded, Store,
    StoreError, TimelineEntry,
};
use hooklab_server::events::Event;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

/// SQLite behind a gate: `record` waits for a permit before committing.
struct Gated {
    inner: Arc<SqliteStore>,
    gate: Arc<Semaphore>,
}

impl Store for Gated {
    fn record(&self, delivery: NewDelivery) -> BoxFuture<'_, Result<Recorded, StoreError>> {
        Box::pin(async move {
            let permit = self.gate.acquire().await.map_err(|_| StoreError::Closed)?;
            permit.forget();
            self.inner.record(delivery).await
        })
    }
    fn list(
        &self,
        filter: DeliveryFilter,
    ) -> BoxFuture<'_, Result<Vec<DeliverySummary>, StoreError>> {
        self.inner.list(filter)
    }
    fn get(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        self.inner.get(id)
    }
    fn keys(&self, filter: KeyFilter) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        self.inner.keys(filter)
    }
    fn set_key_status(
        &self,
        scope: String,
        key: String,
        status: KeyStatus,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.set_key_status(scope, key, status)
    }
    fn lease_jobs(
        &self,
        now: UnixMillis,
        limit: u32,
        lease_ms: u64,
    ) -> BoxFuture<'_, Result<Vec<LeasedJob>, StoreError>> {
        self.inner.lease_jobs(now, limit, lease_ms)
    }
    fn finish_job(
        &self,
        job: LeasedJob,
        attempt: AttemptRecord,
        outcome: JobOutcome,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.inner.finish_job(job, attempt, outcome, now)
    }
    fn next_due(&self) -> BoxFuture<'_, Result<Option<UnixMillis>, StoreError>> {
        self.inner.next_due()
    }
    fn attempts(&self, delivery: DeliveryId) -> BoxFuture<'_, Result<Vec<Attempt>, StoreError>> {
        self.inner.attempts(delivery)
    }
    fn dead_letters(
        &self,
        filter: DeadLetterFilter,
    ) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        self.inner.dead_letters(filter)
    }
    fn redrive(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        self.inner.redrive(filter, now)
    }
    fn discard(
        &self,
        filter: DeadLetterFilter,
        now: UnixMillis,
    ) -> BoxFuture<'_, Result<u64, StoreError>> {
        self.inner.discard(filter, now)
    }
    fn update_object(
        &self,
        machine: String,
        object_id: String,
        update: ObjectUpdate,
    ) -> BoxFuture<'static, Result<Option<ObjectChange>, StoreError>> {
        self.inner.update_object(machine, object_id, update)
    }
    fn objects(
        &self,
        filter: ObjectFilter,
    ) -> BoxFuture<'_, Result<Vec<ObjectRecord>, StoreError>> {
        self.inner.objects(filter)
    }
    fn timeline(&self, object_id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        self.inner.timeline(object_id)
    }
}

#[tokio::test]
async fn the_answer_waits_for_the_commit() {
    let gate = Arc::new(Semaphore::new(0));
    let g = Arc::clone(&gate);
    let mut server = support::start_wrapped(support::config(), move |inner| {
        Arc::new(Gated { inner, gate: g })
    })
    .await;
    let mut stream = server.connect().await;
    stream
        .write_all(&request("POST", "/plain", &[], b"{}"))
        .await
        .unwrap();

    let mut buf = Vec::new();
    let early = tokio::time::timeout(
        Duration::from_millis(300),
        support::read_response(&mut stream, &mut buf),
    )
    .await;
    assert!(
        early.is_err(),
        "no answer may leave before the commit: {early:?}"
    );
    assert!(
        !server.has_event(),
        "nothing is announced before the commit"
    );

    gate.add_permits(1);
    let response = support::read_response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(server.next_delivery().await.record.body, b"{}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_storage_failure_is_answered_503_and_not_announced() {
    let mut server = support::start(support::config()).await;
    // The disk is "full": any write needing a new page fails, as with SQLITE_FULL.
    server.sqlite.set_max_page_count(Some(1)).await.unwrap();
    let body = vec![b'x'; 4000];
    let response = server.send(&request("POST", "/plain", &[], &body)).await;
    assert_eq!(response.status, 503, "{}", response.text());
    assert!(
        !response.text().contains("SQLITE"),
        "internals stay in the log"
    );
    assert!(
        !server.has_event(),
        "an unrecorded delivery is never announced"
    );

    server.sqlite.set_max_page_count(None).await.unwrap();
    let response = server.send(&request("POST", "/plain", &[], &body)).await;
    assert_eq!(response.status, 200, "the receiver recovers with the store");
    assert_eq!(server.next_delivery().await.record.body, body);
    server.shutdown().await;
}

#[tokio::test]
async fn each_commit_is_announced_with_its_id_and_verdict() {
    let server = support::start(support::config()).await;
    let mut events = server.running.as_ref().unwrap().subscribe();
    server.send(&request("POST", "/plain/a", &[], b"1")).await;
    server.send(&request("POST", "/nope", &[], b"2")).await;
    let mut ids = Vec::new();
    for expected in ["/plain/a", "/nope"] {
        let Event::Delivery(event) = events.recv().await.unwrap() else {
            panic!("a delivery event")
        };
        assert_eq!(event.delivery.path, expected);
        assert!(!event.verdict_summary.is_empty());
        ids.push(event.delivery.id);
    }
    assert!(ids[0] < ids[1], "ids follow commit order: {ids:?}");
    let json = serde_json::to_value(Event::Delivery(
        match server
            .sqlite
            .list(DeliveryFilter::default())
            .await
            .unwrap()
            .first()
        {
            Some(row) => hooklab_server::events::DeliveryEvent {
                delivery: row.clone(),
                verdict_summary: String::new(),
                diagnosis: None,
                body_refused: false,
                remote_addr: None,
                key: None,
            },
            None => panic!("listed"),
        },
    ))
    .unwrap();
    assert_eq!(json["kind"], "delivery", "events serialise with a kind tag");
    server.shutdown().await;
}
