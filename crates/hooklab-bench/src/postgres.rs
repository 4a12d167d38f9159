//! `--postgres URL|auto`: durable ingest on PostgreSQL (`hooklab serve`), with one replica and
//! with three sharing one database behind no balancer but the load generator (a third of the
//! connections on each), as a ratio to `hooklab listen` on SQLite measured in the same run.
//! `auto` starts a throwaway durable cluster (fsync and synchronous commit on) on 127.0.0.1;
//! a URL must name a role that may `CREATE DATABASE` (each measurement gets a fresh one).
//!
//! The three load generators of the three-replica run each measure their own window of the
//! same length, started together; their throughputs add up.

use crate::load::{self, LoadConfig, LoadResult};
use crate::receiver::{Receiver, STRIPE_SECRET};
use anyhow::{Context as _, bail};
use hooklab_postgres::cluster::{Cluster, ClusterOptions, create_database};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `hooklab serve` process on `url`.
struct Serve {
    addr: SocketAddr,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Serve {
    fn start(bin: &Path, url: &str) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let out_path = dir.path().join("stdout");
        let err_path = dir.path().join("stderr");
        let mut child = Command::new(bin)
            .args(["serve", "--json", "--host", "127.0.0.1", "--port", "0"])
            .args(["--database", url])
            .arg("--source")
            .arg(format!("stripe=stripe:{STRIPE_SECRET}"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path)?)
            .stderr(std::fs::File::create(&err_path)?)
            .spawn()
            .context("starting hooklab serve")?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = std::fs::read_to_string(&out_path).unwrap_or_default();
            if let Some(line) = out.lines().next().filter(|_| out.contains('\n')) {
                let v: serde_json::Value = serde_json::from_str(line)?;
                let addr = v["ready"]["receiver"]
                    .as_str()
                    .and_then(|u| u.strip_prefix("http://"))
                    .context("no ready.receiver")?
                    .parse()?;
                return Ok(Self {
                    addr,
                    child,
                    _dir: dir,
                });
            }
            if let Some(status) = child.try_wait()? {
                let err = std::fs::read_to_string(&err_path).unwrap_or_default();
                bail!("hooklab serve exited with {status} before it was ready:\n{err}");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                bail!("hooklab serve printed no ready line within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time used so far by every `postgres` process on this machine (the cluster's
/// postmaster and backends; a local server only).
fn postgres_cpu() -> Duration {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == "postgres")
        })
        .filter_map(crate::cpu::process_cpu)
        .sum()
}

/// One measurement: each load generator's result, and PostgreSQL's CPU time per request over
/// the whole run (warm-up included, so an estimate).
struct Measured {
    results: Vec<LoadResult>,
    postgres_cpu_us: Option<f64>,
}

/// `replicas` × `hooklab serve` on a fresh database, each loaded by its share of connections.
fn replicas(
    bin: &Path,
    admin_url: &str,
    replicas: usize,
    cfg: &LoadConfig,
) -> anyhow::Result<Measured> {
    let url = load::runtime()?
        .block_on(create_database(admin_url, "hooklab_bench"))
        .map_err(anyhow::Error::msg)?;
    let servers = (0..replicas)
        .map(|_| Serve::start(bin, &url))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cpu_before = postgres_cpu();
    let started = Instant::now();
    let results = std::thread::scope(|scope| {
        let runs: Vec<_> = servers
            .iter()
            .enumerate()
            .map(|(i, server)| {
                let share = LoadConfig {
                    connections: (cfg.connections / replicas).max(1),
                    warmup: cfg.warmup,
                    duration: cfg.duration,
                    body_size: cfg.body_size,
                    secret: cfg.secret.clone(),
                    path: cfg.path.clone(),
                    event_type: cfg.event_type.clone(),
                };
                let (addr, pid) = (server.addr, server.child.id());
                // Staggered by a millisecond: each run's event ids start from its own clock.
                std::thread::sleep(Duration::from_millis(u64::try_from(i).unwrap_or(0)));
                scope.spawn(move || load::run(addr, pid, &share, None))
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("a load thread panicked"))
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    let cpu = postgres_cpu().saturating_sub(cpu_before);
    let requests =
        results.iter().map(LoadResult::rps).sum::<f64>() * started.elapsed().as_secs_f64();
    drop(servers);
    Ok(Measured {
        postgres_cpu_us: (requests > 0.0).then(|| cpu.as_secs_f64() * 1e6 / requests),
        results,
    })
}

pub(crate) fn run(bin: &Path, target: &str, cfg: &LoadConfig) -> anyhow::Result<()> {
    let cluster = if target == "auto" {
        Some(
            Cluster::start(&ClusterOptions {
                durable: true,
                max_connections: 300,
            })
            .map_err(anyhow::Error::msg)?,
        )
    } else {
        None
    };
    let admin_url = cluster.as_ref().map_or(target, |c| c.url()).to_string();
    let sqlite = {
        let server = Receiver::hooklab(bin, None)?;
        let result = load::run(server.addr, server.pid(), cfg, None)?;
        server.stop();
        result
    };
    let one = replicas(bin, &admin_url, 1, cfg)?;
    let three = replicas(bin, &admin_url, 3, cfg)?;
    drop(cluster);

    let rps = |rs: &[LoadResult]| rs.iter().map(LoadResult::rps).sum::<f64>();
    let p99 = |rs: &[LoadResult]| {
        rs.iter()
            .map(|r| r.quantile_ms(0.99))
            .fold(0.0_f64, f64::max)
    };
    let errors = |rs: &[LoadResult]| rs.iter().map(|r| r.non_2xx + r.io_errors).sum::<u64>();
    println!("## Durable ingest on PostgreSQL\n");
    println!(
        "PostgreSQL {} (fsync and synchronous_commit on), every process on the same machine.\n",
        if target == "auto" {
            "throwaway cluster on 127.0.0.1"
        } else {
            "server given with --postgres"
        }
    );
    println!(
        "| Receiver | requests/s | p99 ms (worst replica) | vs SQLite | hooklab CPU µs/req | \
         PostgreSQL CPU µs/req (est.) | non-2xx + I/O errors |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let sqlite_rps = sqlite.rps();
    let rows: [(&str, Measured); 3] = [
        (
            "hooklab listen, durable SQLite",
            Measured {
                results: vec![sqlite],
                postgres_cpu_us: None,
            },
        ),
        ("hooklab serve, PostgreSQL, 1 replica", one),
        ("hooklab serve, PostgreSQL, 3 replicas", three),
    ];
    let us = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.0}"));
    for (name, m) in &rows {
        let results = &m.results;
        let ok: u64 = results.iter().map(|r| r.ok).sum();
        let cpu: Option<Duration> = results.iter().map(|r| r.server_cpu).sum();
        let hooklab_us = cpu
            .filter(|_| ok > 0)
            .map(|c| c.as_secs_f64() * 1e6 / ok as f64);
        println!(
            "| {name} | {:.0} | {:.2} | {:.1} % | {} | {} | {} |",
            rps(results),
            p99(results),
            100.0 * rps(results) / sqlite_rps,
            us(hooklab_us),
            us(m.postgres_cpu_us),
            errors(results)
        );
    }
    println!();
    Ok(())
}
