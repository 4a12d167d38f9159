//! Reconciliation, the safety net behind the pipeline: webhooks come late or not at all, so a
//! periodic job asks the provider's API for the truth about objects that look stuck (not in a
//! final state, waiting for confirmation or needing review, and not updated for a while) and
//! corrects them **through their state machine**, so every correction is a timeline row with a
//! reason, like any delivery. For providers with an events API it also detects gaps: events the
//! provider lists that Hooklab never recorded.
//!
//! The pieces:
//! - [`ProviderApi`]: what the reconciler needs from a provider (the truth about one object,
//!   and the event ids since a time); [`StripeApi`] and [`MercadoPagoApi`] implement it over
//!   plain HTTP (no TLS stack is linked in yet: point them at an HTTP proxy or a stand-in);
//! - [`Apis`]: which API serves which machine;
//! - [`reconcile`]: one pass, returning a [`Report`] of corrections, objects in sync, errors
//!   (per object; the pass goes on) and gaps.
//!
//! ```no_run
//! # async fn demo(store: &dyn hooklab_core::store::Store) -> Result<(), hooklab_server::reconcile::ReconcileError> {
//! use hooklab_core::clock::UnixMillis;
//! use hooklab_core::secret::Secret;
//! use hooklab_server::objects::Machines;
//! use hooklab_server::reconcile::{reconcile, Apis, StripeApi};
//! use std::time::Duration;
//!
//! let stripe = StripeApi::new(Secret::new("sk_test_…")).with_base_url("http://127.0.0.1:12111");
//! let apis = Apis::new().with(StripeApi::MACHINE, stripe);
//! let report = reconcile(store, &Machines::default(), &apis, Duration::from_secs(600),
//!     UnixMillis::now()).await?;
//! for c in &report.corrections {
//!     println!("{} {}: {:?} → {} ({})", c.machine, c.object_id, c.from, c.to, c.decision);
//! }
//! # Ok(())
//! # }
//! ```

mod client;
mod mercadopago;
mod run;
mod stripe;

pub use client::DEFAULT_TIMEOUT;
pub use mercadopago::MercadoPagoApi;
pub use run::{Correction, Failure, Gap, Report, Unchanged, reconcile};
pub use stripe::StripeApi;

use hooklab_core::clock::UnixMillis;
use hooklab_core::retry::format_duration;
use hooklab_core::store::{BoxFuture, StoreError};
use std::sync::Arc;
use std::time::Duration;

/// The event type of a correction's machine event, and the prefix of its timeline reason.
pub const RECONCILIATION_EVENT: &str = "reconciliation";

/// What a provider's API says about one object now.
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    /// The object's state, already mapped onto the machine's states (e.g. `succeeded`).
    pub state: String,
    /// When the provider says the object reached that state, if its API tells; the reconciler
    /// uses "now" otherwise.
    pub provider_time: Option<UnixMillis>,
    /// The provider's object as fetched, for display and diagnosis.
    pub raw: serde_json::Value,
}

/// The part of a provider's API the reconciler uses.
pub trait ProviderApi: Send + Sync {
    /// The truth about `object_id`, or `None` when the provider does not know the object.
    fn fetch<'a>(
        &'a self,
        object_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Truth>, ReconcileError>>;

    /// The ids of every event the provider created since `since`, or `None` when the provider
    /// has no events API (gap detection is then skipped).
    fn event_ids_since(
        &self,
        since: UnixMillis,
    ) -> BoxFuture<'_, Result<Option<Vec<String>>, ReconcileError>>;
}

/// Which [`ProviderApi`] serves which machine (by machine name), and the gap window.
#[derive(Clone, Default)]
pub struct Apis {
    /// Machine name → its provider's API; machines not listed are not reconciled.
    entries: Vec<(String, Arc<dyn ProviderApi>)>,
    /// Start of the gap window; `None`: from the oldest delivery Hooklab recorded from the
    /// machine's provider (the time it has been listening).
    gaps_since: Option<UnixMillis>,
}

impl Apis {
    /// No APIs: a pass checks nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// `api` serves the objects of the machine called `machine` (replacing an earlier one).
    pub fn with(self, machine: impl Into<String>, api: impl ProviderApi + 'static) -> Self {
        self.with_shared(machine, Arc::new(api))
    }

    /// Like [`Apis::with`], for an API shared with other machines or callers.
    pub fn with_shared(mut self, machine: impl Into<String>, api: Arc<dyn ProviderApi>) -> Self {
        let machine = machine.into();
        self.entries.retain(|(m, _)| *m != machine);
        self.entries.push((machine, api));
        self
    }

    /// Looks for gaps in the events created since `since` (default: since the oldest delivery
    /// recorded from the machine's provider).
    pub fn gaps_since(mut self, since: UnixMillis) -> Self {
        self.gaps_since = Some(since);
        self
    }

    /// The API serving `machine`.
    pub fn get(&self, machine: &str) -> Option<&dyn ProviderApi> {
        self.entries
            .iter()
            .find(|(m, _)| m == machine)
            .map(|(_, api)| api.as_ref())
    }

    /// The machines served, in the order they were added.
    pub fn machines(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(m, _)| m.as_str())
    }

    /// Whether no machine is served.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn configured_gaps_since(&self) -> Option<UnixMillis> {
        self.gaps_since
    }
}

impl std::fmt::Debug for Apis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apis")
            .field("machines", &self.machines().collect::<Vec<_>>())
            .field("gaps_since", &self.gaps_since)
            .finish()
    }
}

/// Why a provider call (or a whole pass) failed. Messages never contain a key or token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    #[error(
        "{provider}: `{url}` is HTTPS, and Hooklab's HTTP client has no TLS support yet; \
         set the API base URL to a plain-HTTP proxy or stand-in (e.g. http://127.0.0.1:12111)"
    )]
    TlsUnsupported { provider: &'static str, url: String },
    #[error("{provider}: `{url}` is not a usable URL: {reason}")]
    BadUrl {
        provider: &'static str,
        url: String,
        reason: String,
    },
    #[error("{provider}: could not reach {url}: {reason}")]
    Unreachable {
        provider: &'static str,
        url: String,
        reason: String,
    },
    #[error("{provider}: no answer from {url} within {}", format_duration(*after))]
    Timeout {
        provider: &'static str,
        url: String,
        after: Duration,
    },
    #[error("{provider} refused the credentials (HTTP {status}): {message}; check the key")]
    Unauthorized {
        provider: &'static str,
        status: u16,
        message: String,
    },
    #[error("{provider}: HTTP {status} from {url}: {message}")]
    Status {
        provider: &'static str,
        url: String,
        status: u16,
        message: String,
    },
    #[error("{provider}: unexpected answer from {url}: {reason}")]
    BadResponse {
        provider: &'static str,
        url: String,
        reason: String,
    },
    #[error("{provider}: `{object_id}` has status `{status}`, which maps to no state ({known})")]
    UnknownStatus {
        provider: &'static str,
        object_id: String,
        status: String,
        known: String,
    },
    #[error(
        "{provider}: more than {limit} events since {since}; look for gaps in a shorter window"
    )]
    TooManyEvents {
        provider: &'static str,
        since: String,
        limit: usize,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ReconcileError {
    /// A stable snake_case code for the UI's `{code, message}`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TlsUnsupported { .. } => "tls_unsupported",
            Self::BadUrl { .. } => "bad_url",
            Self::Unreachable { .. } => "unreachable",
            Self::Timeout { .. } => "timeout",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Status { .. } => "http_status",
            Self::BadResponse { .. } => "bad_response",
            Self::UnknownStatus { .. } => "unknown_status",
            Self::TooManyEvents { .. } => "too_many_events",
            Self::Store(_) => "storage",
        }
    }
}
