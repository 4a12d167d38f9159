//! The replay lab: what a developer fires at their own app (or at a Hooklab receiver) to see
//! how it copes with what providers really do — duplicates, races, events out of order — and
//! the checks that say whether it coped. The CLI (`hooklab inject`, `sequence`, `run`), the
//! control API (`POST /api/inject`, `POST /api/scenario`) and the UI all run this code.
//!
//! # Layout
//!
//! 1. [`target`]: where requests go (an `http://` URL) and the exact bytes sent.
//! 2. [`events`]: a generated event, signed now with a source's secret, or a recorded delivery
//!    sent again; either becomes an [`Outgoing`] request that knows its idempotency key.
//! 3. [`crate::inject`] sends N copies of one request (sequential, or a true race).
//! 4. [`oracle`]: straight at an app, whether its handler is idempotent: did copies get the
//!    same answer, and (with a probe URL that counts the side effect) did the side effect
//!    happen once per key.
//! 5. [`sequence`]: presets that send one object's events in a realistic wrong order.
//! 6. [`scenario`]: a TOML file of steps and expectations, run headless (CI), with JUnit XML.
//! 7. [`records`]: what the lab reads from a Hooklab database (recorded deliveries, objects,
//!    dead letters), from a running instance's store or a read-only SQLite file.
//! 8. [`app`]: a small real webhook handler, idempotent or not, to try all of the above on.

pub mod app;
pub mod events;
pub mod oracle;
pub mod records;
pub mod scenario;
pub mod sequence;
pub mod target;

pub use events::Outgoing;
pub use target::Target;

/// Why a lab action could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// The target is not an `http://HOST[:PORT]/PATH` URL.
    #[error("{0}")]
    BadUrl(String),
    /// An event could not be generated (unknown type, bad override).
    #[error("{0}")]
    Event(String),
    /// Signing needs a secret, or failed.
    #[error("{0}")]
    Sign(String),
    /// A preset or option does not apply (e.g. a preset a provider has no states for).
    #[error("{0}")]
    Unsupported(String),
    /// A recorded delivery is not there.
    #[error("no delivery #{0} in the database")]
    NoDelivery(i64),
    /// The database could not be read.
    #[error(transparent)]
    Store(#[from] hooklab_core::store::StoreError),
    /// A scenario file is malformed.
    #[error("{0}")]
    Scenario(String),
    /// A probe URL could not be read.
    #[error("{0}")]
    Probe(String),
}
