//! # hooklab-core
//!
//! The pipeline that Hooklab's desktop app, its CLI and a production service all run. No HTTP
//! server, no UI, no argument parsing lives here: only the logic and the storage seam.
//!
//! # Layout, in the order a delivery meets it
//!
//! 1. [`request`]: the raw request exactly as it arrived: body bytes, headers in arrival order.
//! 2. [`provider`]: one module per provider: verify, sign, and read metadata (event id, type…).
//! 3. [`verify`]: runs a source's provider over a request and returns a [`verdict::Verdict`];
//!    on a failure, [`diagnose`] tries alternatives to explain *why* in plain words.
//! 4. [`store`]: the storage seam. [`store::sqlite`] records deliveries durably with group commit.
//! 5. [`machine`]: a state machine per business object: valid transitions, stale and parked events.
//! 6. [`retry`]: retry schedules as data (delays, provider presets, jitter, time scale): when a
//!    failed job runs again, and when it goes to the dead-letter queue.
//!
//! Beside the pipeline: [`replay`] builds the request that sends a delivery again, and
//! [`capture`] reads captured requests (HAR, curl, raw HTTP, JSON, a provider's event) for
//! import and writes recorded deliveries in those formats for export.
//!
//! Time is always passed in as a [`clock::UnixMillis`]; nothing here reads the clock ad hoc.
//!
//! ```
//! use hooklab_core::{clock::UnixMillis, provider::ProviderId, request::RawRequest, secret::Secret};
//! use hooklab_core::verify::{verify, VerifyConfig};
//!
//! let body = br#"{"id":"evt_1","type":"payment_intent.succeeded"}"#;
//! let secret = Secret::new("whsec_test_secret");
//! let now = UnixMillis::from_secs(1_700_000_000);
//! let signed = hooklab_core::provider::sign(ProviderId::Stripe, &Default::default(), &secret,
//!     &hooklab_core::provider::SignInput::new(body, now)).unwrap();
//! let request = RawRequest::post("/stripe", signed.headers_as_pairs(), body.to_vec());
//! let config = VerifyConfig::new(ProviderId::Stripe, vec![secret]);
//! assert!(verify(&config, &request, now).is_valid());
//! ```

pub mod capture;
pub mod clock;
pub mod diagnose;
pub mod diff;
pub mod machine;
pub mod metadata;
pub mod provider;
pub mod replay;
pub mod request;
pub mod retry;
pub mod secret;
pub mod store;
pub mod templates;
pub mod verdict;
pub mod verify;
