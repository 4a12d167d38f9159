//! The tunnel supervisor: starts the tunnel, waits for its public URL, and when it ends,
//! reports why and starts it again after a backoff. Every state change goes to the events
//! bus ([`crate::events::Event::Tunnel`]) and to a `watch` channel (the control API reads
//! it); every new URL goes to the receiver ([`PublicUrl`]), so URL-signed providers verify
//! against what the gateway called.
//!
//! ```text
//! starting ──▶ up(url) ──▶ down(reason) ──▶ reconnecting(delay) ──▶ up(url') …
//!     └───────────────────────▲ (no URL within start_timeout, or the start failed)
//! ```

use super::{Session, TunnelEvent, TunnelSpec, TunnelState, TunnelStatus, Update};
use crate::events::Event;
use crate::receiver::PublicUrl;
use std::time::Duration;
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Delays before each reconnection; the last one repeats.
pub const DEFAULT_BACKOFF: [Duration; 5] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(5),
    Duration::from_secs(10),
    Duration::from_secs(30),
];

/// How the supervisor retries and stops.
#[derive(Debug, Clone)]
pub struct SupervisorOptions {
    /// Delays before each reconnection after a failure; the last one repeats.
    pub backoff: Vec<Duration>,
    /// A tunnel that stayed up this long starts the backoff over when it next fails.
    pub stable_after: Duration,
    /// How long a child process gets to exit after SIGTERM before it is killed.
    pub stop_grace: Duration,
}

impl Default for SupervisorOptions {
    fn default() -> Self {
        Self {
            backoff: DEFAULT_BACKOFF.to_vec(),
            stable_after: Duration::from_secs(30),
            stop_grace: Duration::from_secs(3),
        }
    }
}

/// A supervised tunnel. Dropping it aborts the supervisor, which kills the tunnel's process
/// group; [`TunnelHandle::stop`] stops it gracefully.
#[derive(Debug)]
pub struct TunnelHandle {
    status: watch::Receiver<TunnelStatus>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    grace: Duration,
}

/// Starts supervising `spec`, a tunnel to `127.0.0.1:local_port`.
pub fn start(
    spec: TunnelSpec,
    local_port: u16,
    events: broadcast::Sender<Event>,
    public_url: PublicUrl,
    options: SupervisorOptions,
) -> TunnelHandle {
    let status = TunnelStatus {
        provider: spec.kind.to_string(),
        state: TunnelState::Starting,
        public_url: None,
        plain_http: spec.plain_http(),
        url_changes: 0,
    };
    let (status_tx, status_rx) = watch::channel(status);
    let (stop_tx, stop_rx) = oneshot::channel();
    let grace = options.stop_grace;
    let reporter = Reporter {
        events,
        status: status_tx,
        public_url,
    };
    let task = tokio::spawn(supervise(spec, local_port, reporter, options, stop_rx));
    TunnelHandle {
        status: status_rx,
        stop: Some(stop_tx),
        task: Some(task),
        grace,
    }
}

impl TunnelHandle {
    /// The tunnel's status now.
    pub fn status(&self) -> TunnelStatus {
        self.status.borrow().clone()
    }

    /// A receiver of every status change.
    pub fn watch(&self) -> watch::Receiver<TunnelStatus> {
        self.status.clone()
    }

    /// Stops the tunnel: SIGTERM to its processes, then SIGKILL after the grace period.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            let bound = self.grace + Duration::from_secs(2);
            if tokio::time::timeout(bound, &mut task).await.is_err() {
                task.abort();
            }
        }
    }
}

impl Drop for TunnelHandle {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Publishes state changes: the bus, the watch channel, the receiver's public URL, the log.
struct Reporter {
    events: broadcast::Sender<Event>,
    status: watch::Sender<TunnelStatus>,
    public_url: PublicUrl,
}

impl Reporter {
    fn publish(&self, state: TunnelState) {
        let mut previous_url = None;
        let mut provider = String::new();
        self.status.send_modify(|status| {
            if let TunnelState::Up { url } = &state {
                if let Some(old) = status.public_url.as_ref().filter(|old| *old != url) {
                    previous_url = Some(old.clone());
                    status.url_changes += 1;
                }
                status.public_url = Some(url.clone());
            }
            status.state = state.clone();
            provider = status.provider.clone();
        });
        match &state {
            TunnelState::Up { url } => {
                self.public_url.set_tunnel(Some(url.clone()));
                match &previous_url {
                    Some(old) => tracing::info!(
                        "the tunnel's public URL changed from {old} to {url}: update the \
                         gateway's webhook settings"
                    ),
                    None => tracing::info!("tunnel up: {url}"),
                }
            }
            TunnelState::Down { reason } => tracing::info!("tunnel down: {reason}"),
            other => tracing::debug!("tunnel {}", other.name()),
        }
        let _ = self.events.send(Event::Tunnel(TunnelEvent {
            provider,
            state,
            previous_url,
        }));
    }

    fn down(&self, reason: impl Into<String>) {
        self.publish(TunnelState::Down {
            reason: reason.into(),
        });
    }
}

/// What ended a wait.
enum Next {
    Stop,
    Update(Option<Update>),
    TimedOut,
}

async fn supervise(
    spec: TunnelSpec,
    local_port: u16,
    reporter: Reporter,
    options: SupervisorOptions,
    mut stop: oneshot::Receiver<()>,
) {
    reporter.publish(TunnelState::Starting);
    let mut failures: u32 = 0;
    loop {
        match Session::open(&spec.runner, local_port) {
            Err(why) => reporter.down(why),
            Ok(mut session) => {
                let first = tokio::select! {
                    _ = &mut stop => Next::Stop,
                    u = tokio::time::timeout(spec.start_timeout, session.updates.recv()) => match u {
                        Ok(u) => Next::Update(u),
                        Err(_) => Next::TimedOut,
                    },
                };
                match first {
                    Next::Stop => {
                        session.stop(options.stop_grace).await;
                        reporter.publish(TunnelState::Stopped);
                        return;
                    }
                    Next::Update(Some(Update::Url(url))) => {
                        reporter.publish(TunnelState::Up { url });
                        let up_since = Instant::now();
                        loop {
                            let next = tokio::select! {
                                _ = &mut stop => Next::Stop,
                                u = session.updates.recv() => Next::Update(u),
                            };
                            match next {
                                Next::Update(Some(Update::Url(url))) => {
                                    reporter.publish(TunnelState::Up { url });
                                }
                                Next::Update(Some(Update::Ended(why))) => {
                                    reporter.down(why);
                                    break;
                                }
                                Next::Update(None) | Next::TimedOut => {
                                    reporter.down("the tunnel ended without saying why");
                                    break;
                                }
                                Next::Stop => {
                                    session.stop(options.stop_grace).await;
                                    reporter.publish(TunnelState::Stopped);
                                    return;
                                }
                            }
                        }
                        if up_since.elapsed() >= options.stable_after {
                            failures = 0;
                        }
                    }
                    Next::Update(Some(Update::Ended(why))) => reporter.down(why),
                    Next::Update(None) => reporter.down("the tunnel ended without saying why"),
                    Next::TimedOut => {
                        let said = session
                            .last_output()
                            .map(|s| format!("; it said: {s}"))
                            .unwrap_or_default();
                        reporter.down(format!(
                            "no public URL within {}s{said}",
                            spec.start_timeout.as_secs_f32()
                        ));
                    }
                }
                session.stop(options.stop_grace).await;
            }
        }
        let delay = options
            .backoff
            .get(failures as usize)
            .or(options.backoff.last())
            .copied()
            .unwrap_or(Duration::from_secs(1));
        failures = failures.saturating_add(1);
        reporter.publish(TunnelState::Reconnecting {
            attempt: failures,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        });
        tokio::select! {
            _ = &mut stop => {
                reporter.publish(TunnelState::Stopped);
                return;
            }
            () = tokio::time::sleep(delay) => {}
        }
    }
}
