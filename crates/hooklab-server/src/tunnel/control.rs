//! The tunnel of a running instance, started and stopped at run time (the UI's tunnel panel,
//! the desktop tray) as well as from the configuration at start-up. One at a time: starting
//! another stops the one running. Its status is relayed onto one watch channel that outlives
//! each tunnel, so a reader (the control API, the tray) never holds a stale one.

use super::{SupervisorOptions, TunnelHandle, TunnelSpec, TunnelStatus};
use crate::config::TunnelOptions;
use crate::events::Event;
use crate::receiver::PublicUrl;
use std::sync::Arc;
use tokio::sync::{Mutex, broadcast, watch};
use tokio::task::JoinHandle;

/// Starts and stops the receiver's tunnel. Cheap to clone (shared).
#[derive(Clone)]
pub struct TunnelControl(Arc<Inner>);

struct Inner {
    /// The receiver's port: the only thing a tunnel ever forwards to.
    port: u16,
    events: broadcast::Sender<Event>,
    public_url: PublicUrl,
    supervisor: SupervisorOptions,
    /// The settings from the configuration (`[tunnel]`, `--tunnel` flags); a start from the
    /// UI overlays its own on them.
    configured: Option<TunnelOptions>,
    running: Mutex<Option<Current>>,
    /// The running tunnel's own status channel: read directly, it is never behind the bus.
    current: std::sync::Mutex<Option<watch::Receiver<TunnelStatus>>>,
    /// Relayed from each tunnel in turn, for those who wait on changes.
    status: watch::Sender<Option<TunnelStatus>>,
}

/// The tunnel running now and the task that relays its status.
struct Current {
    handle: TunnelHandle,
    relay: JoinHandle<()>,
}

impl std::fmt::Debug for TunnelControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TunnelControl")
            .field("port", &self.0.port)
            .field("status", &*self.0.status.borrow())
            .finish_non_exhaustive()
    }
}

/// Why a tunnel could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(String);

impl TunnelControl {
    /// For the receiver on `port`; nothing runs until [`TunnelControl::start`].
    pub fn new(
        port: u16,
        events: broadcast::Sender<Event>,
        public_url: PublicUrl,
        configured: Option<TunnelOptions>,
        supervisor: SupervisorOptions,
    ) -> Self {
        let (status, _) = watch::channel(None);
        Self(Arc::new(Inner {
            port,
            events,
            public_url,
            supervisor,
            configured,
            running: Mutex::new(None),
            current: std::sync::Mutex::new(None),
            status,
        }))
    }

    /// The settings a start without its own would use (the configured ones, else
    /// localhost.run's defaults).
    pub fn configured(&self) -> TunnelOptions {
        self.0.configured.clone().unwrap_or_default()
    }

    /// Starts a tunnel with `options` laid over the configured settings (a provider given in
    /// `options` replaces the configured one), after stopping the one running, if any.
    pub async fn start(&self, options: TunnelOptions) -> Result<TunnelStatus, StartError> {
        let merged = self.configured().overlay(options);
        let spec = TunnelSpec::from_options(&merged).map_err(|e| StartError(e.to_string()))?;
        let mut running = self.0.running.lock().await;
        if let Some(current) = running.take() {
            current.stop().await;
        }
        let handle = super::start(
            spec,
            self.0.port,
            self.0.events.clone(),
            self.0.public_url.clone(),
            self.0.supervisor.clone(),
        );
        let mut watch = handle.watch();
        *self.current() = Some(watch.clone());
        let first = watch.borrow_and_update().clone();
        self.0.status.send_replace(Some(first.clone()));
        let relay_to = self.0.status.clone();
        let relay = tokio::spawn(async move {
            while watch.changed().await.is_ok() {
                let status = watch.borrow_and_update().clone();
                relay_to.send_replace(Some(status));
            }
        });
        *running = Some(Current { handle, relay });
        Ok(first)
    }

    /// Stops the running tunnel (its processes ended); `false` when none ran.
    pub async fn stop(&self) -> bool {
        let current = self.0.running.lock().await.take();
        *self.current() = None;
        let stopped = current.is_some();
        if let Some(current) = current {
            current.stop().await;
        }
        self.0.status.send_replace(None);
        stopped
    }

    /// The status now; `None` when no tunnel runs.
    pub fn status(&self) -> Option<TunnelStatus> {
        self.current().as_ref().map(|w| w.borrow().clone())
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<watch::Receiver<TunnelStatus>>> {
        // A panic while holding this lock cannot leave the `Option` half-written.
        self.0
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every change of [`TunnelControl::status`].
    pub fn watch(&self) -> watch::Receiver<Option<TunnelStatus>> {
        self.0.status.subscribe()
    }
}

impl Current {
    async fn stop(self) {
        self.relay.abort();
        self.handle.stop().await;
    }
}
