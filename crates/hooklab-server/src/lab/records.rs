//! What the lab reads from a Hooklab database: recorded deliveries to replay, their sources'
//! secrets to re-sign with, and — when the target is a Hooklab receiver — the objects, keys and
//! dead letters a scenario's expectations check. Two implementations: a running instance's
//! [`Store`] (the control API) and a read-only SQLite file beside which `hooklab listen` keeps
//! the sources added in the UI (the CLI).

use crate::config::SourceConfig;
use hooklab_core::store::sqlite::{SqliteReader, SqliteStore};
use hooklab_core::store::{
    BoxFuture, DeadLetter, DeadLetterFilter, Delivery, DeliveryId, IdempotencyRecord, KeyFilter,
    ObjectFilter, ObjectRecord, Store, StoreError, TimelineEntry,
};
use std::sync::{Arc, Mutex, PoisonError};

/// How many recent rows are searched for an object or a key (the lab looks for what it has
/// just sent, so it is among the most recent).
const RECENT: u32 = 1_000;

/// Read access to a Hooklab database and its sources.
pub trait Records: Send + Sync {
    /// One recorded delivery.
    fn delivery(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>>;
    /// One business object, among the recently updated.
    fn object(&self, id: String) -> BoxFuture<'_, Result<Option<ObjectRecord>, StoreError>>;
    /// An object's timeline, oldest first.
    fn timeline(&self, id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>>;
    /// The most recently seen idempotency keys.
    fn recent_keys(&self) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>>;
    /// The dead-letter queue, newest first.
    fn dead_letters(&self) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>>;
    /// A source by name (its provider, options and secrets), when this instance knows it.
    fn source(&self, name: &str) -> Option<SourceConfig>;
}

/// A running instance's store and sources.
pub struct StoreRecords {
    pub store: Arc<dyn Store>,
    pub sources: Vec<SourceConfig>,
}

impl Records for StoreRecords {
    fn delivery(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        self.store.get(id)
    }

    fn object(&self, id: String) -> BoxFuture<'_, Result<Option<ObjectRecord>, StoreError>> {
        Box::pin(async move {
            let objects = self.store.objects(recent_objects()).await?;
            Ok(objects.into_iter().find(|o| o.object_id == id))
        })
    }

    fn timeline(&self, id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        self.store.timeline(id)
    }

    fn recent_keys(&self) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        self.store.keys(recent_keys())
    }

    fn dead_letters(&self) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        self.store.dead_letters(recent_dead())
    }

    fn source(&self, name: &str) -> Option<SourceConfig> {
        self.sources.iter().find(|s| s.name == name).cloned()
    }
}

/// A SQLite database, read-only (it may be in use by a running `hooklab listen`), with the
/// sources added in the UI (`<db>.sources.toml`).
pub struct SqliteRecords {
    reader: Mutex<SqliteReader>,
    sources: Vec<SourceConfig>,
}

impl SqliteRecords {
    /// Opens `db` read-only and reads the sources file beside it.
    pub fn open(db: &std::path::Path) -> Result<Self, super::LabError> {
        let reader = SqliteStore::open_read_only(db)?;
        let sources_path = crate::config::sources_file::path_beside(db);
        let sources = crate::config::sources_file::load(&sources_path)
            .map_err(|e| super::LabError::Scenario(e.to_string()))?;
        Ok(Self {
            reader: Mutex::new(reader),
            sources,
        })
    }

    fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&SqliteReader) -> Result<T, StoreError>,
    ) -> BoxFuture<'_, Result<T, StoreError>> {
        // A read is a few milliseconds on a local file; the lock is released before the future
        // is returned, never held across an await.
        let result = f(&self.reader.lock().unwrap_or_else(PoisonError::into_inner));
        Box::pin(std::future::ready(result))
    }
}

impl Records for SqliteRecords {
    fn delivery(&self, id: DeliveryId) -> BoxFuture<'_, Result<Option<Delivery>, StoreError>> {
        self.read(|r| r.get(id))
    }

    fn object(&self, id: String) -> BoxFuture<'_, Result<Option<ObjectRecord>, StoreError>> {
        self.read(move |r| {
            let objects = r.objects(&recent_objects())?;
            Ok(objects.into_iter().find(|o| o.object_id == id))
        })
    }

    fn timeline(&self, id: String) -> BoxFuture<'_, Result<Vec<TimelineEntry>, StoreError>> {
        self.read(move |r| r.timeline(&id))
    }

    fn recent_keys(&self) -> BoxFuture<'_, Result<Vec<IdempotencyRecord>, StoreError>> {
        self.read(|r| r.keys(&recent_keys()))
    }

    fn dead_letters(&self) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        self.read(|r| r.dead_letters(&recent_dead()))
    }

    fn source(&self, name: &str) -> Option<SourceConfig> {
        self.sources.iter().find(|s| s.name == name).cloned()
    }
}

fn recent_objects() -> ObjectFilter {
    ObjectFilter {
        limit: Some(RECENT),
        ..ObjectFilter::default()
    }
}

fn recent_keys() -> KeyFilter {
    KeyFilter {
        limit: Some(RECENT),
        ..KeyFilter::default()
    }
}

fn recent_dead() -> DeadLetterFilter {
    DeadLetterFilter {
        limit: Some(RECENT),
        ..DeadLetterFilter::default()
    }
}

/// Recorded delivery `id` as a request to `target`, as `variant` (`None`: re-signed when a
/// secret is known, else as recorded), signed with `secret` or else its source's first secret.
pub async fn replay_request(
    records: &dyn Records,
    id: DeliveryId,
    target: &super::Target,
    variant: Option<hooklab_core::replay::Variant>,
    secret: Option<hooklab_core::secret::Secret>,
) -> Result<super::Outgoing, super::LabError> {
    use hooklab_core::replay::Variant;
    let delivery = records
        .delivery(id)
        .await?
        .ok_or(super::LabError::NoDelivery(id))?;
    let source = records.source(&delivery.record.source);
    let secret = secret.or_else(|| source.as_ref().and_then(|s| s.secrets.first().cloned()));
    let variant = variant.unwrap_or(match secret {
        Some(_) => Variant::Resigned,
        None => Variant::AsRecorded,
    });
    let options = source.map(|s| s.options).unwrap_or_default();
    super::Outgoing::replay(
        &delivery,
        &options,
        secret.as_ref(),
        variant,
        target,
        hooklab_core::clock::UnixMillis::now(),
    )
}
