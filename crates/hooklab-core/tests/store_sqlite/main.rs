//! What only the SQLite store has, against real files in temporary folders: group commit under
//! concurrency (and durability across reopen), reopening, the CLI's read-only path, upgrading
//! an old file. The capabilities both engines share (round trips, listing, idempotency, the
//! outbox, objects) are one suite run on both: `crates/hooklab-postgres/tests/store`.

use hooklab_core::clock::UnixMillis;
use hooklab_core::metadata::Metadata;
use hooklab_core::request::Header;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{DeliveryFilter, NewDelivery, Store, StoreError};
use hooklab_core::verdict::Verdict;

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

fn all() -> DeliveryFilter {
    DeliveryFilter {
        limit: Some(10_000),
        ..Default::default()
    }
}

mod group_commit;

mod reopen;

mod read_only;

mod idempotency;
