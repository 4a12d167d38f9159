//! `hooklab-bench`: how much the durable receiver costs against the HTTP stack itself, and how
//! fast Hooklab verifies a signature against the `svix` crate.
//!
//! 1. [`bare`]: an axum server that reads the body and answers 200 without storing anything,
//!    run in its own process (`hooklab-bench bare-server`), so it pays the same process and
//!    socket costs as the real receiver.
//! 2. [`load`]: a closed-loop HTTP/1.1 keep-alive load generator: N connections, each sending
//!    distinct, validly signed Stripe events, warm-up then a fixed measuring window.
//! 3. [`receiver`]: starts a receiver process (the bare server or `hooklab listen` on a fresh
//!    SQLite file) and waits for its `{"ready": …}` line.
//! 4. [`cpu`]: the CPU time each process spent in the window, per request (Linux).
//! 5. [`verify_bench`]: Standard Webhooks verification, Hooklab's against `svix`'s.
//! 6. [`pipeline`]: `hooklab listen --forward-to` a local developer app ([`app`], its own
//!    process, `hooklab-bench app-server`): ingest with the outbox in the write path, and the
//!    worker's forwards per second end to end.
//!
//! 7. [`postgres`] (`--postgres`): durable ingest on PostgreSQL (`hooklab serve`, one and
//!    three replicas) as a ratio to SQLite in the same run.
//!
//! Everything is printed as a Markdown table; `docs/benchmarks.md` records a run.

mod app;
mod bare;
mod cpu;
mod events;
mod load;
mod pipeline;
mod postgres;
mod receiver;
mod verify_bench;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(about = "Benchmarks hooklab's durable receiver against a bare axum handler")]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,

    /// The hooklab binary to benchmark (default: `hooklab` next to this binary).
    #[arg(long)]
    hooklab: Option<PathBuf>,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2)]
    warmup: u64,
    /// Seconds measured.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Size of each event body in bytes.
    #[arg(long, default_value_t = 1024)]
    body_size: usize,
    /// The Stripe event type sent. `payment_intent.*` types also drive hooklab's Stripe state
    /// machine (an object per event); e.g. `customer.created` drives none.
    #[arg(long, default_value = events::DEFAULT_EVENT_TYPE)]
    event_type: String,
    /// Iterations per round of the verification micro-benchmark.
    #[arg(long, default_value_t = 200_000)]
    verify_iters: u32,
    /// Skip the HTTP benchmarks (bare, durable and pipeline).
    #[arg(long)]
    skip_http: bool,
    /// Only run the bare axum server (e.g. to check the load generator alone).
    #[arg(long, conflicts_with = "skip_http")]
    only_bare: bool,
    /// Skip the verification micro-benchmark.
    #[arg(long)]
    skip_verify: bool,
    /// Only the pipeline and its baselines (bare axum, `hooklab listen` without forwarding),
    /// no verification micro-benchmark.
    #[arg(long, conflicts_with_all = ["skip_http", "only_bare", "skip_pipeline"])]
    pipeline: bool,
    /// Skip the pipeline (`--forward-to` ingest and the worker).
    #[arg(long)]
    skip_pipeline: bool,
    /// Events in the worker benchmark's burst.
    #[arg(long, default_value_t = 20_000)]
    pipeline_events: u64,
    /// The longest the worker benchmark waits for the app to receive every event, in seconds.
    #[arg(long, default_value_t = 300)]
    drain_timeout: u64,
    /// `hooklab listen --concurrency` for the pipeline (default: hooklab's own default).
    #[arg(long)]
    forward_concurrency: Option<usize>,
    /// Only durable ingest on PostgreSQL (`hooklab serve`, one and three replicas) against
    /// SQLite in the same run: `auto` starts a throwaway durable cluster, or a server's URL
    /// (a role that may CREATE DATABASE).
    #[arg(long, value_name = "URL|auto")]
    postgres: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Internal: the bare axum server (prints a `{"ready": …}` line, then serves).
    BareServer {
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// The developer app the pipeline forwards to (answers 200 and counts; `GET /count` reads
    /// the count). With --mode, the replay lab's test app: a webhook handler that is
    /// idempotent, naive or racy, its side effects counted at `GET /count`.
    AppServer {
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// idempotent (one side effect per event id), naive (one per request) or racy (checks
        /// then acts: right one after another, wrong in a race).
        #[arg(long, value_name = "MODE")]
        mode: Option<hooklab_server::lab::app::AppMode>,
        /// With --mode: how long the side effect takes, in milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 20, requires = "mode")]
        work_ms: u64,
        /// With --mode naive: answer copies of an event already seen with this status (e.g. 500).
        #[arg(long, value_name = "STATUS", requires = "mode")]
        duplicate_status: Option<u16>,
        /// With --mode naive: number every answer, so copies get different bodies.
        #[arg(long, requires = "mode")]
        vary_body: bool,
    },
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    match &args.command {
        Some(Command::BareServer { host, port }) => return bare::serve(host, *port),
        Some(Command::AppServer {
            host,
            port,
            mode: None,
            ..
        }) => return app::serve(host, *port),
        Some(Command::AppServer {
            host,
            port,
            mode: Some(mode),
            work_ms,
            duplicate_status,
            vary_body,
        }) => {
            let mut options = hooklab_server::lab::app::AppOptions::new(*mode);
            options.work = Duration::from_millis(*work_ms);
            options.duplicate_status = *duplicate_status;
            options.vary_body = *vary_body;
            return app::serve_lab(host, *port, options);
        }
        None => {}
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("# hooklab-bench\n");
    println!(
        "{cores} cores shared by every process (receiver, app, load generator); {} connections, \
         {} s warm-up, {} s measured, {}-byte Stripe `{}` events, each distinct and validly \
         signed.\n",
        args.connections, args.warmup, args.duration, args.body_size, args.event_type
    );

    if let Some(target) = &args.postgres {
        let bin = args.hooklab.clone().map_or_else(default_hooklab, Ok)?;
        let cfg = load::LoadConfig {
            connections: args.connections,
            warmup: Duration::from_secs(args.warmup),
            duration: Duration::from_secs(args.duration),
            body_size: args.body_size,
            secret: receiver::STRIPE_SECRET.to_string(),
            path: "/stripe".to_string(),
            event_type: args.event_type.clone(),
        };
        return postgres::run(&bin, target, &cfg);
    }

    if !args.skip_http {
        let hooklab = match (&args.hooklab, args.only_bare) {
            (_, true) => None,
            (Some(p), false) => Some(p.clone()),
            (None, false) => Some(default_hooklab()?),
        };
        let cfg = load::LoadConfig {
            connections: args.connections,
            warmup: Duration::from_secs(args.warmup),
            duration: Duration::from_secs(args.duration),
            body_size: args.body_size,
            secret: receiver::STRIPE_SECRET.to_string(),
            path: "/stripe".to_string(),
            event_type: args.event_type.clone(),
        };
        let bare = {
            let server = receiver::Receiver::bare()?;
            let result = load::run(server.addr, server.pid(), &cfg, None)?;
            server.stop();
            result
        };
        let durable = match &hooklab {
            Some(bin) => {
                let server = receiver::Receiver::hooklab(bin, None)?;
                let result = load::run(server.addr, server.pid(), &cfg, None)?;
                server.stop();
                Some(result)
            }
            None => None,
        };
        load::print_table(&bare, durable.as_ref());

        if let (Some(bin), Some(durable), false) = (&hooklab, &durable, args.skip_pipeline) {
            let concurrency = args.forward_concurrency;
            let forward = pipeline::ingest(bin, concurrency, &cfg)?;
            let drain = pipeline::drain(
                bin,
                concurrency,
                &cfg,
                args.pipeline_events,
                Duration::from_secs(args.drain_timeout),
            )?;
            pipeline::print(&bare, durable, &forward, &drain, concurrency);
        }
    }

    if !args.skip_verify && !args.pipeline {
        let rows = verify_bench::run(args.verify_iters, args.body_size)?;
        verify_bench::print_table(&rows);
    }
    Ok(())
}

/// `hooklab` beside this binary (both land in `target/release` or `target/debug`).
fn default_hooklab() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating hooklab-bench")?;
    let dir = exe
        .parent()
        .context("hooklab-bench has no parent directory")?;
    let candidate = dir.join(format!("hooklab{}", std::env::consts::EXE_SUFFIX));
    anyhow::ensure!(
        candidate.exists(),
        "{} not found: build it (`cargo build --release -p hooklab`) or pass --hooklab PATH",
        candidate.display()
    );
    Ok(candidate)
}
