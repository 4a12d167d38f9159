//! Deliveries other processes record in a shared database (the other replicas of `hooklab
//! serve`), announced on this process's events bus, so a replica's feed (its printed lines, an
//! SSE stream) shows every delivery, not only those its own receiver took.
//!
//! Polling through the [`Store`] seam rather than PostgreSQL's `LISTEN/NOTIFY`: `NOTIFY` takes a
//! global lock at every commit that sends one (it would serialise the whole ingest path), and
//! `LISTEN` needs a session of its own, which a transaction-mode pooler does not give. A poll is
//! one indexed query (`ORDER BY id DESC LIMIT n`) per interval and per replica.
//!
//! A row is announced one poll after it was first seen (if this process's receiver has not
//! announced it meanwhile), so a local delivery that commits just before a poll is never
//! announced twice. The bus is lossy by design: more than `window` new rows between two polls
//! are announced only up to the window.

use crate::events::{DeliveryEvent, Event};
use hooklab_core::store::{DeliveryFilter, DeliveryId, Store};
use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// How the feed polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedOptions {
    /// Time between two polls.
    pub every: Duration,
    /// The most recent rows each poll reads.
    pub window: u32,
}

impl Default for FeedOptions {
    fn default() -> Self {
        Self {
            every: Duration::from_millis(500),
            window: 1000,
        }
    }
}

/// The feed of one process: deliveries recorded after [`Feed::new`] by anyone but this process.
pub struct Feed {
    store: Arc<dyn Store>,
    /// The newest delivery when the feed was made; older ones are never announced.
    start: DeliveryId,
}

impl Feed {
    /// Notes where the database is now. Make the feed before the receiver takes requests (and
    /// before anyone is told it is ready), so no delivery falls between the two.
    pub async fn new(store: Arc<dyn Store>) -> Self {
        let start = match store
            .list(DeliveryFilter {
                limit: Some(1),
                ..Default::default()
            })
            .await
        {
            Ok(rows) => rows.first().map_or(0, |r| r.id),
            Err(e) => {
                tracing::warn!("the delivery feed cannot read the store: {e}");
                0
            }
        };
        Self { store, start }
    }

    /// Announces on `events` what the other processes record, until `shutdown` resolves.
    pub async fn run(
        self,
        events: broadcast::Sender<Event>,
        options: FeedOptions,
        shutdown: impl Future<Output = ()>,
    ) {
        mirror(self.store, self.start, events, options, shutdown).await;
    }
}

async fn mirror(
    store: Arc<dyn Store>,
    start: DeliveryId,
    events: broadcast::Sender<Event>,
    options: FeedOptions,
    shutdown: impl Future<Output = ()>,
) {
    let mut local = events.subscribe();
    // Ids announced on the bus (by the receiver or by this feed), and ids seen once.
    let mut announced: BTreeSet<DeliveryId> = BTreeSet::new();
    let mut pending: BTreeSet<DeliveryId> = BTreeSet::new();
    let mut ticker = tokio::time::interval(options.every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => return,
            _ = ticker.tick() => {}
        }
        loop {
            match local.try_recv() {
                Ok(Event::Delivery(d)) => {
                    announced.insert(d.delivery.id);
                }
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => break,
            }
        }
        let rows = match store
            .list(DeliveryFilter {
                limit: Some(options.window),
                ..Default::default()
            })
            .await
        {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!("the delivery feed cannot read the store: {e}");
                continue;
            }
        };
        let floor = rows.last().map_or(start, |r| r.id.max(start));
        for row in rows.into_iter().rev() {
            if row.id <= start || announced.contains(&row.id) {
                continue;
            }
            if pending.remove(&row.id) {
                announced.insert(row.id);
                let event = DeliveryEvent {
                    verdict_summary: format!(
                        "{} (recorded by another replica)",
                        row.verdict.as_str()
                    ),
                    delivery: row,
                    diagnosis: None,
                    body_refused: false,
                    remote_addr: None,
                    key: None,
                };
                let _ = events.send(Event::Delivery(event));
            } else {
                pending.insert(row.id);
            }
        }
        // Forget what fell out of the window.
        announced = announced.split_off(&floor);
        pending = pending.split_off(&floor);
    }
}
