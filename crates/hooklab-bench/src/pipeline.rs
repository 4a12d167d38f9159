//! The pipeline: `hooklab listen --forward-to` a local developer app ([`crate::app`]).
//!
//! * Ingest with the forward target set: every verified delivery writes its idempotency key
//!   (`processing`) and its outbox job in the transaction that records it, while the worker
//!   forwards to the app in the same process. Measured like the other receivers
//!   ([`load::run`]), plus what the app received during the window.
//! * The worker: a burst of a fixed number of distinct events, as fast as the connections go,
//!   then the app's count is polled until it has every acknowledged event: forwards per second
//!   end to end, and the queue drain (last acknowledgement → last forward).

use crate::app::App;
use crate::cpu;
use crate::load::{self, LoadConfig, LoadResult};
use crate::receiver::{Forward, Receiver};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the app's count is read while the queue drains (the drain time's resolution).
const POLL: Duration = Duration::from_millis(5);
/// How long to wait after the last expected forward for any extra one (a duplicate).
const SETTLE: Duration = Duration::from_millis(500);

/// `hooklab listen --forward-to APP` under the usual timed load; `app` in the result says what
/// the app received meanwhile.
pub(crate) fn ingest(
    bin: &Path,
    concurrency: Option<usize>,
    cfg: &LoadConfig,
) -> anyhow::Result<LoadResult> {
    let app = App::start()?;
    let forward = Forward {
        url: app.url(),
        concurrency,
    };
    let server = Receiver::hooklab(bin, Some(&forward))?;
    let result = load::run(server.addr, server.pid(), cfg, Some(&app));
    server.stop();
    app.stop();
    result
}

/// What the worker benchmark measured.
pub(crate) struct Drain {
    /// The burst; `elapsed` is the time from the first request to the last acknowledgement.
    pub(crate) burst: LoadResult,
    /// Requests the app had received when the last acknowledgement arrived.
    pub(crate) forwarded_at_last_ack: u64,
    /// From the first request until the app had received every acknowledged event; `None`
    /// when the timeout came first.
    pub(crate) to_last_forward: Option<Duration>,
    /// Requests the app received in all (after a short settle): more than acknowledged means
    /// duplicates, or forwards of events whose acknowledgement was lost.
    pub(crate) received: u64,
    /// CPU of `hooklab listen` and of the app from the first request to the last forward.
    pub(crate) receiver_cpu: Option<Duration>,
    pub(crate) app_cpu: Option<Duration>,
}

impl Drain {
    /// The acknowledged events: what the app must receive.
    fn expected(&self) -> u64 {
        self.burst.ok
    }

    /// The time from the last acknowledgement to the last forward.
    fn queue_drain(&self) -> Option<Duration> {
        Some(self.to_last_forward?.saturating_sub(self.burst.elapsed))
    }

    /// Acknowledged events over the time until the last of them was forwarded.
    fn forwards_per_sec(&self) -> Option<f64> {
        Some(self.expected() as f64 / self.to_last_forward?.as_secs_f64())
    }

    /// The worker's rate once ingest had stopped: what was left at the last acknowledgement
    /// over the drain time.
    fn drain_rate(&self) -> Option<f64> {
        let left = self.expected().saturating_sub(self.forwarded_at_last_ack);
        let drain = self.queue_drain()?.as_secs_f64();
        (left > 0 && drain > 0.0).then(|| left as f64 / drain)
    }
}

/// Sends `events` distinct events to a fresh `hooklab listen --forward-to APP` and waits (at
/// most `timeout`) until the app has received every acknowledged one.
pub(crate) fn drain(
    bin: &Path,
    concurrency: Option<usize>,
    cfg: &LoadConfig,
    events: u64,
    timeout: Duration,
) -> anyhow::Result<Drain> {
    let app = App::start()?;
    let forward = Forward {
        url: app.url(),
        concurrency,
    };
    let server = Receiver::hooklab(bin, Some(&forward))?;
    let result = load::runtime()?.block_on(async {
        let (receiver_before, app_before) = (cpu::process_cpu(server.pid()), app.cpu());
        let started = Instant::now();
        let burst = load::burst(server.addr, cfg, events).await?;
        let forwarded_at_last_ack = app.count().await?;
        let mut received = forwarded_at_last_ack;
        let to_last_forward = loop {
            if received >= burst.ok {
                break Some(started.elapsed());
            }
            if started.elapsed() > timeout {
                break None;
            }
            tokio::time::sleep(POLL).await;
            received = app.count().await?;
        };
        let (receiver_after, app_after) = (cpu::process_cpu(server.pid()), app.cpu());
        tokio::time::sleep(SETTLE).await;
        let received = app.count().await?;
        let delta = |a: Option<Duration>, b: Option<Duration>| Some(b?.saturating_sub(a?));
        anyhow::Ok(Drain {
            burst,
            forwarded_at_last_ack,
            to_last_forward,
            received,
            receiver_cpu: delta(receiver_before, receiver_after),
            app_cpu: delta(app_before, app_after),
        })
    });
    server.stop();
    app.stop();
    result
}

/// The pipeline's two tables, with the ratios to bare axum and to the no-forward receiver
/// measured in the same run.
pub(crate) fn print(
    bare: &LoadResult,
    plain: &LoadResult,
    forward: &LoadResult,
    d: &Drain,
    concurrency: Option<usize>,
) {
    let workers = concurrency.map_or_else(
        || "hooklab's default `--concurrency`".to_string(),
        |n| format!("`--concurrency {n}`"),
    );
    println!("## Pipeline: the outbox in the write path, and the worker\n");
    println!(
        "`hooklab listen --forward-to http://127.0.0.1:APP/` ({workers}); the app answers 200 \
         and counts.\n"
    );
    println!(
        "| Receiver | requests/s | p50 ms | p99 ms | p99.9 ms | receiver CPU µs/req | \
         app forwards/s in the window | app CPU µs/forward | non-2xx | I/O errors |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let us = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}"));
    let rows = [
        ("bare axum, no storage", bare),
        ("hooklab listen, no forward", plain),
        ("hooklab listen --forward-to", forward),
    ];
    for (name, r) in rows {
        let (forwards, app_cpu) = match &r.app {
            Some(app) => (
                format!("{:.0}", app.received as f64 / r.elapsed.as_secs_f64()),
                us(app
                    .cpu
                    .filter(|_| app.received > 0)
                    .map(|c| c.as_secs_f64() * 1e6 / app.received as f64)),
            ),
            None => ("–".to_string(), "–".to_string()),
        };
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {forwards} | {app_cpu} | {} | {} |",
            r.rps(),
            r.quantile_ms(0.50),
            r.quantile_ms(0.99),
            r.quantile_ms(0.999),
            us(r.cpu_us_per_request(r.server_cpu)),
            r.non_2xx,
            r.io_errors
        );
    }
    println!(
        "\n**forward / bare throughput: {:.1} %**; no forward / bare: {:.1} %; forward / no \
         forward: {:.1} % (p99 {:.2} ms with forward, {:.2} ms without, {:.2} ms bare)\n",
        100.0 * forward.rps() / bare.rps(),
        100.0 * plain.rps() / bare.rps(),
        100.0 * forward.rps() / plain.rps(),
        forward.quantile_ms(0.99),
        plain.quantile_ms(0.99),
        bare.quantile_ms(0.99)
    );

    let secs = |v: Option<Duration>| v.map_or_else(|| "timed out".into(), fmt_secs);
    let rate = |v: Option<f64>| v.map_or_else(|| "n/a".into(), |v| format!("{v:.0}"));
    let per_event = |c: Option<Duration>| {
        us(c.filter(|_| d.expected() > 0)
            .map(|c| c.as_secs_f64() * 1e6 / d.expected() as f64))
    };
    println!(
        "Worker: {} distinct events sent as fast as the connections go, then until the app has \
         every acknowledged one.\n",
        d.burst.ok + d.burst.non_2xx
    );
    println!(
        "| acknowledged | acks/s | ack p99 ms | last ack s | forwarded by then | last forward s | \
         queue drain s | **forwards/s end to end** | drain forwards/s | receiver CPU µs/event | \
         app CPU µs/event | app received | non-2xx | I/O errors |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.0} | {:.2} | {} | {} | {} | {} | **{}** | {} | {} | {} | {} | {} | {} |\n",
        d.burst.ok,
        d.burst.rps(),
        d.burst.quantile_ms(0.99),
        fmt_secs(d.burst.elapsed),
        d.forwarded_at_last_ack,
        secs(d.to_last_forward),
        secs(d.queue_drain()),
        rate(d.forwards_per_sec()),
        rate(d.drain_rate()),
        per_event(d.receiver_cpu),
        per_event(d.app_cpu),
        d.received,
        d.burst.non_2xx,
        d.burst.io_errors
    );
}

fn fmt_secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}
