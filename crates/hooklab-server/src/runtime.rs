//! Runtime wiring: bind, serve the receiver in a task, start the outbox worker when a source
//! forwards, the tunnel when one is configured (it forwards to the receiver's port only) and
//! the control API on its own loopback port, hand back a [`Running`] handle, and shut down
//! gracefully when told to (stop accepting, let in-flight requests finish, then stop the
//! tunnel, the control API and the worker; each step bounded).
//!
//! Shutdown is passed in ([`Running::run_until`]), so the CLI passes [`shutdown_signal`] and
//! tests pass whatever future they like.

use crate::clock::Clock;
use crate::config::{Config, ConfigError, ReconcileSettings, SourceConfig};
use crate::control::{ControlServer, ControlState};
use crate::error::ServerError;
use crate::events::{EVENT_BUFFER, Event};
use crate::pipeline::{ForwardHandler, Route, Routes, Worker, WorkerOptions};
use crate::receiver::{Receiver, TapConnection, TapListener};
use crate::tunnel::{SupervisorOptions, TunnelControl, TunnelSpec, TunnelStatus};
use hooklab_core::store::Store;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, oneshot};
use tokio::task::JoinHandle;

/// How long in-flight requests may take to finish once shutdown starts.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A receiver that is listening. Dropping it also starts a graceful shutdown (without
/// waiting for it); prefer [`Running::shutdown`] or [`Running::run_until`].
#[derive(Debug)]
pub struct Running {
    /// The bound address (the real port when the config asked for port 0).
    pub addr: SocketAddr,
    /// The events bus; every committed delivery is announced here.
    events: broadcast::Sender<Event>,
    /// Fired (or dropped) to begin the graceful shutdown.
    stop: oneshot::Sender<()>,
    /// The serving task; it ends once every connection has closed.
    server: JoinHandle<()>,
    /// How long to wait for in-flight requests after shutdown starts.
    drain_timeout: Duration,
    /// The outbox worker (idle while no source forwards); stopped after the receiver drains.
    worker: WorkerTask,
    /// Periodic upkeep (parked state-machine events past `review_after`); aborted on stop.
    maintenance: JoinHandle<()>,
    /// The supervised tunnel (configured, or started from the UI); stopped (its processes
    /// killed) on shutdown.
    tunnel: TunnelControl,
    /// The control API on its own loopback port, when configured.
    control: Option<ControlServer>,
    /// The receiver (shared with the server task), for imports from the desktop app.
    receiver: Receiver,
}

/// A running worker: fire (or drop) `stop`, then await `task` (it drains, bounded).
#[derive(Debug)]
struct WorkerTask {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Binds `config.host:config.port` and serves the receiver, recording into `store`.
pub async fn start(config: Config, store: Arc<dyn Store>) -> Result<Running, ServerError> {
    start_with_clock(config, store, Clock::system()).await
}

/// [`start`] with another clock (tests pin "received at" and the tolerance's "now").
pub async fn start_with_clock(
    config: Config,
    store: Arc<dyn Store>,
    clock: Clock,
) -> Result<Running, ServerError> {
    let mut config = config;
    // Sources added in the UI come after the configured ones; a name may be in only one place.
    let mut managed = Vec::new();
    if let Some(path) = &config.sources_file {
        for source in crate::config::sources_file::load(path)? {
            if config.sources.iter().any(|s| s.name == source.name) {
                return Err(ConfigError::invalid(
                    path.display().to_string(),
                    format!(
                        "source `{}` is also configured (config file or --source): remove it from \
                         one of them",
                        source.name
                    ),
                )
                .into());
            }
            managed.push(source.name.clone());
            config.sources.push(source);
        }
    }
    config.validate()?;
    let shown = if config.host.contains(':') && !config.host.starts_with('[') {
        format!("[{}]:{}", config.host, config.port)
    } else {
        format!("{}:{}", config.host, config.port)
    };
    let bind_error = |source| ServerError::Bind {
        addr: shown.clone(),
        source,
    };
    let listener = TcpListener::bind((config.host.trim_matches(['[', ']']), config.port))
        .await
        .map_err(bind_error)?;
    let addr = listener.local_addr().map_err(bind_error)?;

    let (events, _) = broadcast::channel(EVENT_BUFFER);
    let mut receiver = Receiver::new(&config, Arc::clone(&store), events.clone(), clock.clone())?
        .with_local_addr(addr);
    // Started before the tasks below: on a later error, dropping these stops them.
    // The tunnel forwards to the receiver's port, and to nothing else; the UI may start and
    // stop it later.
    let tunnel = TunnelControl::new(
        addr.port(),
        events.clone(),
        receiver.public_url(),
        config.tunnel.clone(),
        SupervisorOptions::default(),
    );
    if let Some(options) = &config.tunnel {
        TunnelSpec::from_options(options)
            .map_err(|e| ConfigError::invalid("[tunnel]", e.to_string()))?;
        tunnel
            .start(crate::config::TunnelOptions::default())
            .await
            .map_err(|e| ConfigError::invalid("[tunnel]", e.to_string()))?;
    }
    // The worker before the control API: the UI changes its routes.
    let (worker, forwarding) = worker(&config, Arc::clone(&store), clock.clone(), &events)?;
    receiver = receiver.with_job_waker(worker.waker());
    let control = match config.control_port {
        Some(port) => {
            let mut data = crate::control::api::DataState::new(Arc::clone(&store), events.clone())
                .with_receiver(
                    receiver.clone(),
                    addr,
                    config
                        .sources_file
                        .clone()
                        .map(|file| crate::control::api::SourcesFile::new(file, managed.clone())),
                )
                .with_forwarding(forwarding.clone());
            if let Some(path) = config.ui_settings_file.clone() {
                data = data.with_ui_settings(path);
            }
            let state = ControlState {
                tunnel: Some(tunnel.clone()),
                receiver: Some(format!("http://{addr}")),
                data: Some(data),
                ui_dir: crate::control::ui_dir(),
            };
            let server =
                crate::control::serve(port, state)
                    .await
                    .map_err(|source| ServerError::Bind {
                        addr: format!("127.0.0.1:{port} (control API)"),
                        source,
                    })?;
            Some(server)
        }
        None => None,
    };
    let worker = {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(worker.run(async move {
            let _ = stopped.await;
        }));
        WorkerTask { stop, task }
    };
    let maintenance = tokio::spawn(maintain(
        Arc::clone(&store),
        clock.clone(),
        events.clone(),
        config.review_after,
        config.reconcile.clone(),
    ));
    let handle = receiver.clone();
    let app = receiver
        .router()
        .into_make_service_with_connect_info::<TapConnection>();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let signal = async move {
            let _ = stopped.await;
        };
        // axum's serve loop never returns an error (accept errors are retried inside).
        let _ = axum::serve(TapListener::new(listener), app)
            .with_graceful_shutdown(signal)
            .await;
    });
    tracing::info!("receiver listening on http://{addr}");
    Ok(Running {
        addr,
        events,
        stop,
        server,
        drain_timeout: DRAIN_TIMEOUT,
        worker,
        maintenance,
        tunnel,
        control,
        receiver: handle,
    })
}

/// Every so often (a quarter of `review_after`, at most 30 s), moves parked state-machine
/// events that waited `review_after` to review, flagging their objects `requires_review`; and,
/// when configured, runs a reconciliation pass every `reconcile.every`.
async fn maintain(
    store: Arc<dyn Store>,
    clock: Clock,
    events: broadcast::Sender<Event>,
    review_after: Duration,
    reconcile: Option<ReconcileSettings>,
) {
    let machines = crate::objects::Machines::default();
    let period = (review_after / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let apis = reconcile.as_ref().map(apis);
    let mut next_reconcile = reconcile
        .as_ref()
        .map(|r| tokio::time::Instant::now() + r.every);
    loop {
        let sleep = match next_reconcile {
            Some(at) => period.min(at.saturating_duration_since(tokio::time::Instant::now())),
            None => period,
        };
        tokio::time::sleep(sleep).await;
        match crate::objects::expire_parked(store.as_ref(), &machines, clock.now(), review_after)
            .await
        {
            Ok(changes) => crate::objects::announce(&events, changes),
            Err(e) => tracing::warn!("could not expire parked events: {e}"),
        }
        if let (Some(at), Some(settings), Some(apis)) = (next_reconcile, &reconcile, &apis) {
            if tokio::time::Instant::now() >= at {
                next_reconcile = Some(tokio::time::Instant::now() + settings.every);
                let pass = crate::reconcile::reconcile(
                    store.as_ref(),
                    &machines,
                    apis,
                    settings.older_than,
                    clock.now(),
                )
                .await;
                match pass {
                    Ok(report) => tracing::info!(
                        checked = report.checked,
                        corrected = report.corrections.len(),
                        errors = report.errors.len(),
                        missing_events = report
                            .gaps
                            .iter()
                            .map(|g| g.missing_events.len())
                            .sum::<usize>(),
                        "reconciliation pass"
                    ),
                    Err(e) => tracing::warn!("reconciliation failed: {e}"),
                }
            }
        }
    }
}

/// The provider APIs the settings name.
pub fn apis(settings: &ReconcileSettings) -> crate::reconcile::Apis {
    use crate::reconcile::{Apis, MercadoPagoApi, StripeApi};
    let mut apis = Apis::new();
    if let Some((key, base)) = &settings.stripe {
        apis = apis.with(
            StripeApi::MACHINE,
            StripeApi::new(key.clone()).with_base_url(base.clone()),
        );
    }
    if let Some((token, base)) = &settings.mercadopago {
        apis = apis.with(
            MercadoPagoApi::MACHINE,
            MercadoPagoApi::new(token.clone()).with_base_url(base.clone()),
        );
    }
    apis
}

/// The worker with a [`ForwardHandler`] route for every source that has a forward target. It
/// runs even when none has one yet: a forward target set in the UI takes effect at once.
fn worker(
    config: &Config,
    store: Arc<dyn Store>,
    clock: Clock,
    events: &broadcast::Sender<Event>,
) -> Result<(Worker, Forwarding), ServerError> {
    let options = WorkerOptions {
        concurrency: config.concurrency,
        attempt_timeout: config.forward_timeout,
        ..WorkerOptions::default()
    };
    let worker = Worker::new(store, clock, events.clone(), options);
    let forwarding = Forwarding {
        config: Arc::new(config.clone()),
        routes: worker.routes(),
    };
    for source in &config.sources {
        forwarding
            .apply(source)
            .map_err(|e| ConfigError::invalid(format!("source `{}`", source.name), e))?;
    }
    if config.forwards() {
        tracing::info!("outbox worker started");
    }
    Ok((worker, forwarding))
}

/// Turns a source's forward target into the worker's route for it, with the configuration's
/// timeout and retry schedule: at start, and whenever the UI changes a source.
#[derive(Debug, Clone)]
pub struct Forwarding {
    config: Arc<Config>,
    routes: Routes,
}

impl Forwarding {
    /// `source`'s jobs run its forward target from now on (its own, else the configuration's
    /// global one); without one, its jobs have no route (they dead-letter with a reason that
    /// says so, and can be redriven once it has one).
    pub fn apply(&self, source: &SourceConfig) -> Result<(), String> {
        let route = match self.config.forward_target(source) {
            Some(target) => {
                let handler = ForwardHandler::new(
                    target,
                    source.success_policy(),
                    self.config.forward_timeout,
                )?;
                Some(Route {
                    handler: Arc::new(handler),
                    schedule: self.config.schedule_for(source),
                    source: source.clone(),
                })
            }
            None => None,
        };
        self.routes.set(&source.name, route);
        Ok(())
    }

    /// `name`'s jobs have no route any more (the source was removed).
    pub fn remove(&self, name: &str) {
        self.routes.set(name, None);
    }

    /// Whether `source` forwards (its own target or the configuration's global one).
    pub fn forwards(&self, source: &SourceConfig) -> bool {
        self.config.forward_target(source).is_some()
    }
}

impl Running {
    /// A new subscriber to the events bus (it sees events from now on).
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// A sender on the events bus, for announcements from outside the runtime (e.g.
    /// [`crate::feed::Feed`]: deliveries other replicas recorded).
    pub fn publisher(&self) -> broadcast::Sender<Event> {
        self.events.clone()
    }

    /// The receiver's base URL on this machine, e.g. `http://127.0.0.1:8787`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The tunnel's status now, when a tunnel runs.
    pub fn tunnel_status(&self) -> Option<TunnelStatus> {
        self.tunnel.status()
    }

    /// The receiver: [`Receiver::import`] records a captured file through it.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// Starts and stops the tunnel at run time (the UI, the desktop tray).
    pub fn tunnel(&self) -> &TunnelControl {
        &self.tunnel
    }

    /// The control API, when configured: its address and token.
    pub fn control(&self) -> Option<&ControlServer> {
        self.control.as_ref()
    }

    /// Replaces [`DRAIN_TIMEOUT`].
    pub fn with_drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Shuts down now: stop accepting, finish in-flight requests (bounded), return.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        self.run_until(std::future::ready(())).await
    }

    /// Serves until `shutdown` resolves, then shuts down gracefully. In-flight requests get
    /// the drain timeout to finish; connections still open after it are abandoned. The worker
    /// stops after the receiver (so jobs enqueued while draining are still picked up) and
    /// waits for its attempts in flight, bounded too.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> Result<(), ServerError> {
        let Running {
            stop,
            mut server,
            drain_timeout,
            worker,
            maintenance,
            tunnel,
            control,
            ..
        } = self;
        let _stop_maintenance = AbortOnDrop(maintenance);
        let served = tokio::select! {
            () = shutdown => None,
            ended = &mut server => Some(ended.map_err(|e| ServerError::Crashed(e.to_string()))),
        };
        let served = match served {
            Some(ended) => ended,
            None => drain(stop, server, drain_timeout).await,
        };
        // Nothing new reaches the receiver now: close the public side, then the control API.
        tunnel.stop().await;
        if let Some(control) = control {
            control.shutdown().await;
        }
        let WorkerTask { stop, task } = worker;
        let _ = stop.send(());
        if let Err(e) = task.await {
            tracing::error!("the outbox worker ended abnormally: {e}");
        }
        served
    }
}

/// Stops accepting and waits for in-flight requests, at most `timeout`.
async fn drain(
    stop: oneshot::Sender<()>,
    mut server: JoinHandle<()>,
    timeout: Duration,
) -> Result<(), ServerError> {
    tracing::info!("shutting down: no new connections; finishing in-flight requests");
    let _ = stop.send(());
    match tokio::time::timeout(timeout, &mut server).await {
        Ok(ended) => ended.map_err(|e| ServerError::Crashed(e.to_string())),
        Err(_) => {
            tracing::warn!("requests still in flight after {timeout:?}; stopping without them");
            server.abort();
            Ok(())
        }
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM: pass it to [`Running::run_until`].
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    () = ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM ({e}); stop with Ctrl-C");
                ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    ctrl_c().await;
}

/// Ctrl-C; never resolves when the handler cannot be installed (rather than stopping at once).
async fn ctrl_c() {
    if let Err(e) = tokio::signal::ctrl_c().await {
        tracing::warn!("cannot listen for Ctrl-C: {e}");
        std::future::pending::<()>().await;
    }
}

/// Aborts a background task when dropped (when `run_until` returns, however it returns).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
