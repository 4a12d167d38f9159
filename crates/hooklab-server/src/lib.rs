//! # hooklab-server
//!
//! Hooklab's runtime: the public receiver that records every webhook byte-exact, verified and
//! durably committed before it answers, and the wiring that runs it.
//!
//! # Layout, in the order a delivery meets it
//!
//! 1. [`config`]: listen address, body limit, public URL, and the *sources* (name, provider,
//!    secrets, response), from TOML or CLI flags.
//! 2. [`receiver::TapListener`]: accepts connections and keeps each request head as sent
//!    (arrival order, duplicates, original case), which hyper's `HeaderMap` cannot.
//! 3. [`receiver::Receiver`]: one axum fallback handler for `/{source}/…`: reads the body
//!    within the limit, verifies with the source's provider, records through
//!    [`hooklab_core::store::Store`], and answers the configured response only after the
//!    commit. Unknown sources (404) and oversized bodies (413) are recorded too.
//! 4. [`events`]: each committed delivery is announced on a broadcast bus (CLI, control API);
//!    [`feed`] adds those other replicas recorded in a shared database (`hooklab serve`).
//! 5. [`pipeline`]: the outbox worker leases each recorded job and runs its [`pipeline::Handler`]
//!    (the [`pipeline::ForwardHandler`] forwards to the developer's app), retrying on the
//!    source's schedule, then dead-lettering; attempts and dead letters go on the bus too.
//! 6. [`runtime`]: [`runtime::start`] binds and serves (and starts the worker when a source
//!    forwards); [`runtime::Running::run_until`] shuts both down gracefully when the future
//!    passed in resolves.
//!
//! 7. [`tunnel`]: a supervised tunnel (localhost.run, bore, ssh, cloudflared, ngrok, a custom
//!    command) gives the receiver a public URL; its state changes go on the bus.
//! 8. [`control`]: the control API on its own loopback port with a per-start token; no tunnel
//!    forwards to it.
//!
//! 9. [`lab`] and [`inject`]: the replay lab — copies, races, misordered sequences and
//!    scenarios fired at an app or a receiver, and the idempotency oracle that judges them.
//!
//! [`clock`] supplies "received at"; [`error`] says why the server could not start.
//!
//! ```no_run
//! # async fn demo(store: std::sync::Arc<dyn hooklab_core::store::Store>) -> Result<(), hooklab_server::error::ServerError> {
//! use hooklab_server::{config::{Config, SourceConfig}, runtime};
//!
//! let mut config = Config::default();
//! config.sources.push(SourceConfig::parse_cli("stripe=stripe:env:STRIPE_WEBHOOK_SECRET")?);
//! let running = runtime::start(config, store).await?;
//! println!("POST your webhooks to {}/stripe", running.url());
//! running.run_until(runtime::shutdown_signal()).await
//! # }
//! ```

pub mod clock;
pub mod config;
pub mod control;
pub mod error;
pub mod events;
pub mod feed;
pub mod inject;
pub mod lab;
pub mod objects;
pub mod pipeline;
pub mod receiver;
pub mod reconcile;
pub mod runtime;
pub mod tunnel;

/// The axum version the receiver is built on, for services that mount [`receiver::Receiver::router`].
pub use axum;
