//! The public receiver: every method and every path `/{source}/…` lands in one handler that
//! records the request byte-exact, verifies it, commits it, and only then answers.
//!
//! - [`tap`]: a listener that keeps request heads as sent (arrival order, duplicates, case).
//! - `handler`: the pipeline, in order: head, body, judgement, commit, event, answer.
//! - `body`: the body, read within the limit (413 beyond it, headers still recorded).
//! - `url`: the absolute URL a URL-signing provider signed (public URL or the local one).
//! - `judge`: the verdict, metadata, and the status to answer once committed.
//! - `respond`: the configured response (after its delay), or Hooklab's own short answers.
//! - `ingest`: imported requests through the same judgement and commit, without a socket.

mod body;
mod handler;
mod import;
mod ingest;
mod judge;
mod respond;
mod tap;
mod url;

pub use import::ImportError;
pub use ingest::{IngestError, Ingested};
pub use tap::{TapConnection, TapListener, TapStream};
pub use url::PublicUrl;

use crate::clock::Clock;
use crate::config::{Config, SourceConfig};
use crate::error::ServerError;
use crate::events::Event;
use axum::Router;
use hooklab_core::provider::{self, Scheme};
use hooklab_core::store::Store;
use hooklab_core::verify::VerifyConfig;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use tokio::sync::{Notify, broadcast};

/// The receiver's shared state; cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct Receiver(Arc<Inner>);

#[derive(Clone)]
struct Inner {
    /// Configured sources by name, each with its scheme built once. Swapped whole when the UI
    /// adds, edits or removes a source ([`Receiver::set_sources`]); a request takes the map
    /// current when it arrives.
    sources: Arc<RwLock<Arc<SourceMap>>>,
    /// The configuration's global `forward_to` is set: every source forwards.
    forward_all: bool,
    /// Every source's trusted deliveries go to the worker ([`Receiver::with_worker_for_every_source`]).
    worker_for_all: bool,
    /// Where deliveries are committed before any answer is given.
    store: Arc<dyn Store>,
    /// Announces each committed delivery; sending never blocks.
    events: broadcast::Sender<Event>,
    /// "Received at", and the "now" that signature tolerance is measured against.
    clock: Clock,
    /// Bodies above this many bytes are refused (413) and recorded without their body.
    body_limit: u64,
    /// The URL senders call, for URL-signed providers (configured, or the tunnel's, which the
    /// tunnel supervisor updates); none: rebuilt from `Host`.
    public_url: PublicUrl,
    /// Our own address, for requests without a `Host` header (HTTP/1.0).
    local_addr: Option<SocketAddr>,
    /// The worker's wake-up, poked after a commit that wrote an outbox job.
    jobs: Option<Arc<Notify>>,
    /// The state machines applied to deliveries of sources that do not forward (forwarding
    /// sources get theirs applied by the worker once the forward succeeded).
    machines: crate::objects::Machines,
    /// Committed deliveries for the machines, applied one at a time in commit order by a
    /// background task (so the answer never waits for them). Bounded: when the machines fall
    /// behind a flood, deliveries skip them (counted in `machine_skipped`) rather than growing
    /// memory without limit; reconciliation corrects objects that missed an event.
    machine_queue: Option<tokio::sync::mpsc::Sender<hooklab_core::store::Delivery>>,
    machine_skipped: Arc<std::sync::atomic::AtomicU64>,
}

/// A configured source, ready to verify.
pub(crate) struct Source {
    config: SourceConfig,
    scheme: Arc<dyn Scheme>,
    /// The verification settings; `alt_urls` is filled per request.
    verify: VerifyConfig,
    /// Deliveries are forwarded (the source or the config has a `forward_to`): trusted ones
    /// are enqueued for the worker and their keys start as `processing`.
    forwards: bool,
}

impl Receiver {
    /// Builds every source's scheme once. Fails on a configuration [`Config::validate`] refuses.
    pub fn new(
        config: &Config,
        store: Arc<dyn Store>,
        events: broadcast::Sender<Event>,
        clock: Clock,
    ) -> Result<Self, ServerError> {
        config.validate()?;
        let forward_all = config.forward_to.is_some();
        let sources = build_sources(&config.sources, forward_all, false)?;
        let machine_queue = machine_queue(&store, &clock, &events);
        Ok(Self(Arc::new(Inner {
            sources: Arc::new(RwLock::new(Arc::new(sources))),
            forward_all,
            worker_for_all: false,
            store,
            events,
            clock,
            body_limit: config.body_limit,
            public_url: PublicUrl::new(config.public_url.as_deref()),
            local_addr: None,
            jobs: None,
            machine_queue,
            machine_skipped: Arc::default(),
            machines: crate::objects::Machines::default(),
        })))
    }

    /// The source named `name`, as configured now.
    pub(crate) fn source(&self, name: &str) -> Option<Arc<Source>> {
        self.0
            .sources
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// The sources' configurations, by name.
    pub fn source_configs(&self) -> Vec<SourceConfig> {
        let map = Arc::clone(
            &self
                .0
                .sources
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut configs: Vec<SourceConfig> = map.values().map(|s| s.config.clone()).collect();
        configs.sort_by(|a, b| a.name.cmp(&b.name));
        configs
    }

    /// Replaces every source (requests already under way finish with the sources they
    /// started with). Fails, changing nothing, when a source's settings are invalid.
    pub fn set_sources(&self, sources: &[SourceConfig]) -> Result<(), ServerError> {
        let map = build_sources(sources, self.0.forward_all, self.0.worker_for_all)?;
        *self
            .0
            .sources
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(map);
        Ok(())
    }

    /// With the worker's wake-up ([`crate::pipeline::Worker::waker`]), poked whenever a
    /// recorded delivery wrote an outbox job. Without it (or without a running worker), jobs
    /// of forwarding sources still land in the outbox and wait there.
    pub fn with_job_waker(self, wake: Arc<Notify>) -> Self {
        let mut inner = Arc::unwrap_or_clone(self.0);
        inner.jobs = Some(wake);
        Self(Arc::new(inner))
    }

    /// Every source's trusted deliveries go to the worker (their keys start `processing`),
    /// not only those with a `forward_to`: for a production service that runs its own
    /// [`crate::pipeline::Handler`] on every source.
    pub fn with_worker_for_every_source(self) -> Self {
        let mut inner = Arc::unwrap_or_clone(self.0);
        let configs: Vec<SourceConfig> = {
            let map = inner.sources.read().unwrap_or_else(PoisonError::into_inner);
            map.values().map(|s| s.config.clone()).collect()
        };
        inner.worker_for_all = true;
        // Built from settings that were valid a moment ago: this cannot fail.
        let map = build_sources(&configs, inner.forward_all, true).unwrap_or_default();
        inner.sources = Arc::new(RwLock::new(Arc::new(map)));
        Self(Arc::new(inner))
    }

    /// The shared public URL: the tunnel supervisor sets the tunnel's URL through it.
    pub fn public_url(&self) -> PublicUrl {
        self.0.public_url.clone()
    }

    /// With the address the receiver listens on (used when a request has no `Host`).
    pub fn with_local_addr(self, addr: SocketAddr) -> Self {
        let mut inner = Arc::unwrap_or_clone(self.0);
        inner.local_addr = Some(addr);
        Self(Arc::new(inner))
    }

    /// The axum router: one fallback handler for every method and path. Serve it with
    /// `into_make_service_with_connect_info::<TapConnection>()` over a [`TapListener`] to keep
    /// headers as sent; without the tap, headers come in `HeaderMap` order.
    pub fn router(self) -> Router {
        Router::new().fallback(handler::receive).with_state(self)
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let map = Arc::clone(
            &self
                .0
                .sources
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut names: Vec<&str> = map.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("Receiver")
            .field("sources", &names)
            .field("body_limit", &self.0.body_limit)
            .field("public_url", &self.0.public_url)
            .finish_non_exhaustive()
    }
}

type SourceMap = HashMap<String, Arc<Source>>;

/// Builds every source's scheme and verification settings once. `forward_all`: the config's
/// global `forward_to` is set; `worker_for_all`: every source's deliveries go to the worker.
fn build_sources(
    configs: &[SourceConfig],
    forward_all: bool,
    worker_for_all: bool,
) -> Result<SourceMap, ServerError> {
    let mut sources = HashMap::new();
    for source in configs {
        let scheme = provider::scheme(source.provider, &source.options).map_err(|e| {
            crate::config::ConfigError::invalid(format!("source `{}`", source.name), e.to_string())
        })?;
        let mut verify = VerifyConfig::new(source.provider, source.secrets.clone());
        verify.options = source.options.clone();
        verify.tolerance_secs = source.tolerance;
        verify.other_secrets = configs
            .iter()
            .filter(|other| other.name != source.name)
            .flat_map(|other| {
                let label = format!("source \"{}\"", other.name);
                other
                    .secrets
                    .iter()
                    .map(move |s| (label.clone(), s.clone()))
            })
            .collect();
        let source = Source {
            config: source.clone(),
            scheme: Arc::from(scheme),
            verify,
            forwards: worker_for_all || forward_all || source.forward_to.is_some(),
        };
        sources.insert(source.config.name.clone(), Arc::new(source));
    }
    Ok(sources)
}

/// How many committed deliveries may wait for the state machines.
const MACHINE_QUEUE: usize = 10_000;
/// How many deliveries' object updates may be queued on the store at once.
const MACHINES_IN_FLIGHT: usize = 1_024;

/// Starts the task that applies state machines to committed deliveries, in order. `None`
/// outside a tokio runtime (then no machine runs on this receiver's own deliveries).
fn machine_queue(
    store: &Arc<dyn Store>,
    clock: &Clock,
    events: &broadcast::Sender<Event>,
) -> Option<tokio::sync::mpsc::Sender<hooklab_core::store::Delivery>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<hooklab_core::store::Delivery>(MACHINE_QUEUE);
    let store = Arc::clone(store);
    let clock = clock.clone();
    let machines = crate::objects::Machines::default();
    let events = events.clone();
    // Updates are queued on the store as deliveries come in and awaited by a second task, in
    // order, so many deliveries' updates share one group commit instead of one each.
    let (waiting, mut done) = tokio::sync::mpsc::channel::<(
        hooklab_core::store::DeliveryId,
        hooklab_core::store::BoxFuture<'static, Result<Vec<_>, hooklab_core::store::StoreError>>,
    )>(MACHINES_IN_FLIGHT);
    runtime.spawn(async move {
        while let Some(delivery) = rx.recv().await {
            let queued =
                crate::objects::queue_delivery(store.as_ref(), &machines, &delivery, clock.now());
            if waiting.send((delivery.id, queued)).await.is_err() {
                break;
            }
        }
    });
    runtime.spawn(async move {
        while let Some((delivery, queued)) = done.recv().await {
            match queued.await {
                Ok(changes) => crate::objects::announce(&events, changes),
                Err(e) => {
                    tracing::warn!(delivery, "could not apply state machines: {e}");
                }
            }
        }
    });
    Some(tx)
}
