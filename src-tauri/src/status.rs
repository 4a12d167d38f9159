//! What the tray shows: the receiver's URL, the tunnel (state and public URL), and counts kept
//! from the events bus — deliveries and invalid signatures since the app started, and the
//! dead-letter queue's size (read from the store at start and whenever it may have changed:
//! the control API's redrive and discard announce nothing on the bus).

use hooklab_core::store::{DeadLetterFilter, Store};
use hooklab_core::verdict::Status as Verdict;
use hooklab_server::events::Event;
use hooklab_server::tunnel::{TunnelState, TunnelStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};

/// The DLQ is counted up to this many (the tray then says "1000+").
pub(crate) const DLQ_COUNT_LIMIT: u32 = 1000;

/// The tray's status, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub(crate) receiver: String,
    /// `None`: no tunnel configured.
    pub(crate) tunnel: Option<TunnelStatus>,
    pub(crate) deliveries: u64,
    pub(crate) invalid: u64,
    pub(crate) dead_letters: u32,
}

impl Status {
    pub(crate) fn new(receiver: String, tunnel: Option<TunnelStatus>) -> Self {
        Self {
            receiver,
            tunnel,
            deliveries: 0,
            invalid: 0,
            dead_letters: 0,
        }
    }

    /// Applies one bus event; `true` when the DLQ may have changed (count it again).
    pub(crate) fn apply(&mut self, event: &Event) -> bool {
        match event {
            Event::Delivery(d) => {
                self.deliveries += 1;
                if d.delivery.verdict == Verdict::Invalid {
                    self.invalid += 1;
                }
                false
            }
            Event::DeadLetter(_) => {
                self.dead_letters = self.dead_letters.saturating_add(1);
                true
            }
            Event::Tunnel(t) => {
                let status = self.tunnel.get_or_insert_with(|| TunnelStatus {
                    provider: t.provider.clone(),
                    state: TunnelState::Starting,
                    public_url: None,
                    plain_http: false,
                    url_changes: 0,
                });
                if let TunnelState::Up { url } = &t.state {
                    if status.public_url.as_ref().is_some_and(|old| old != url) {
                        status.url_changes += 1;
                    }
                    status.public_url = Some(url.clone());
                }
                status.provider = t.provider.clone();
                status.state = t.state.clone();
                false
            }
            _ => false,
        }
    }

    /// The public URL to copy: only while the tunnel is up.
    pub(crate) fn public_url(&self) -> Option<&str> {
        match &self.tunnel.as_ref()?.state {
            TunnelState::Up { url } => Some(url),
            _ => None,
        }
    }

    /// The tray's status lines, in order.
    pub(crate) fn lines(&self) -> [String; 3] {
        let tunnel = match &self.tunnel {
            None => "Tunnel: off".to_string(),
            Some(t) => match &t.state {
                TunnelState::Up { url } => format!("Tunnel ({}): {url}", t.provider),
                TunnelState::Down { reason } => format!("Tunnel ({}): down — {reason}", t.provider),
                other => format!("Tunnel ({}): {}", t.provider, other.name()),
            },
        };
        let dlq = if self.dead_letters >= DLQ_COUNT_LIMIT {
            format!("{DLQ_COUNT_LIMIT}+")
        } else {
            self.dead_letters.to_string()
        };
        [
            format!("Receiver: {}", self.receiver),
            tunnel,
            format!(
                "{} deliveries ({} invalid) since start · DLQ: {dlq}",
                self.deliveries, self.invalid
            ),
        ]
    }
}

/// The DLQ's size now (up to [`DLQ_COUNT_LIMIT`]).
pub(crate) async fn count_dead_letters(store: &dyn Store) -> Option<u32> {
    let filter = DeadLetterFilter {
        limit: Some(DLQ_COUNT_LIMIT),
        ..DeadLetterFilter::default()
    };
    match store.dead_letters(filter).await {
        Ok(dead) => Some(u32::try_from(dead.len()).unwrap_or(u32::MAX)),
        Err(e) => {
            tracing::warn!("cannot count the dead-letter queue: {e}");
            None
        }
    }
}

/// How often the shown status may change (a burst of deliveries is one update), and how often
/// the DLQ is counted again without news (redrive and discard from the UI).
const REFRESH: Duration = Duration::from_millis(500);
const DLQ_RECOUNT: Duration = Duration::from_secs(5);

/// Follows the bus and hands the status to `show` whenever it changed, at most every
/// [`REFRESH`], until the bus closes.
pub(crate) async fn follow(
    mut events: broadcast::Receiver<Event>,
    store: Arc<dyn Store>,
    mut status: Status,
    show: impl Fn(&Status),
) {
    if let Some(n) = count_dead_letters(store.as_ref()).await {
        status.dead_letters = n;
    }
    show(&status);
    let mut shown = status.clone();
    let mut refresh = tokio::time::interval(REFRESH);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut recount = tokio::time::interval(DLQ_RECOUNT);
    let mut recount_soon = false;
    loop {
        tokio::select! {
            received = events.recv() => match received {
                Ok(event) => recount_soon |= status.apply(&event),
                Err(RecvError::Lagged(missed)) => {
                    // Counts since start are then "at least"; the DLQ is counted again.
                    tracing::debug!("tray: {missed} bus events missed");
                    recount_soon = true;
                }
                Err(RecvError::Closed) => break,
            },
            _ = recount.tick() => recount_soon = true,
            _ = refresh.tick() => {
                if recount_soon {
                    recount_soon = false;
                    if let Some(n) = count_dead_letters(store.as_ref()).await {
                        status.dead_letters = n;
                    }
                }
                if status != shown {
                    show(&status);
                    shown = status.clone();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::tests::{dead_letter, delivery};
    use hooklab_server::tunnel::TunnelEvent;

    fn tunnel(state: TunnelState) -> Event {
        Event::Tunnel(TunnelEvent {
            provider: "bore".into(),
            state,
            previous_url: None,
        })
    }

    #[test]
    fn counts_and_the_tunnel_follow_the_bus() {
        let mut status = Status::new("http://127.0.0.1:8787".into(), None);
        assert_eq!(
            status.lines(),
            [
                "Receiver: http://127.0.0.1:8787",
                "Tunnel: off",
                "0 deliveries (0 invalid) since start · DLQ: 0"
            ]
        );
        assert_eq!(status.public_url(), None);
        assert!(!status.apply(&delivery(1, Verdict::Valid)));
        assert!(!status.apply(&delivery(2, Verdict::Invalid)));
        assert!(
            status.apply(&dead_letter(1, "x")),
            "the DLQ is counted again"
        );
        assert!(!status.apply(&tunnel(TunnelState::Starting)));
        assert_eq!(status.lines()[1], "Tunnel (bore): starting");
        assert_eq!(status.public_url(), None);
        status.apply(&tunnel(TunnelState::Up {
            url: "http://bore.pub:4242".into(),
        }));
        assert_eq!(status.public_url(), Some("http://bore.pub:4242"));
        assert_eq!(status.lines()[1], "Tunnel (bore): http://bore.pub:4242");
        assert_eq!(
            status.lines()[2],
            "2 deliveries (1 invalid) since start · DLQ: 1"
        );
        status.apply(&tunnel(TunnelState::Down {
            reason: "the server hung up".into(),
        }));
        assert_eq!(status.public_url(), None, "nothing to copy while down");
        assert_eq!(
            status.lines()[1],
            "Tunnel (bore): down — the server hung up"
        );
        assert_eq!(
            status.tunnel.as_ref().unwrap().public_url.as_deref(),
            Some("http://bore.pub:4242"),
            "the last public URL is kept"
        );
        status.dead_letters = DLQ_COUNT_LIMIT;
        assert!(status.lines()[2].ends_with("DLQ: 1000+"));
    }
}
