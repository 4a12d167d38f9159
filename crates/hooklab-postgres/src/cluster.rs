//! A throwaway PostgreSQL cluster on 127.0.0.1, for tests and benchmarks: `initdb` into a
//! fresh folder, `postgres` on a free port (no Unix socket), trust authentication for the
//! `postgres` role, everything removed on stop. When the caller is root (CI), the server runs
//! as the `postgres` OS user (PostgreSQL refuses to run as root).
//!
//! No server outlives its owner: `postgres` is started by a small `sh` watchdog that stops it
//! (immediate shutdown: its data is thrown away) and removes its folder as soon as the owning process is gone, whether the
//! owner called [`Cluster::stop`], returned from `main`, panicked or was killed with SIGKILL.
//! Dropping a [`Cluster`] stops it synchronously.
//!
//! Tests use [`test_server`]: the server named by `HOOKLAB_TEST_DATABASE_URL` (a role that may
//! `CREATE DATABASE`), or else one cluster per test process started on first use; each test
//! takes a database of its own with [`TestServer::fresh_database`]. If the PostgreSQL server
//! binaries are missing, this fails saying what to install: tests never skip silently.

use std::io::Read as _;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The variable naming an existing server for tests (`postgres://user@host:port/db`).
pub const TEST_URL_VAR: &str = "HOOKLAB_TEST_DATABASE_URL";
/// The variable naming the folder of `initdb` and `postgres`, when not found by themselves.
pub const BIN_VAR: &str = "HOOKLAB_PG_BIN";

/// Why a cluster could not be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterError(pub String);

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClusterError {}

fn fail(message: impl Into<String>) -> ClusterError {
    ClusterError(message.into())
}

/// How to start a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterOptions {
    /// `fsync` and `synchronous_commit` on (benchmarks of durable ingest); off makes tests
    /// faster and changes nothing they check (no test crashes the server itself).
    pub durable: bool,
    /// The server's `max_connections`.
    pub max_connections: u32,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            durable: false,
            max_connections: 200,
        }
    }
}

/// A running throwaway cluster.
#[derive(Debug)]
pub struct Cluster {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    url: String,
    port: u16,
    /// The watchdog shell; `postgres` is its child.
    watchdog: Child,
}

/// The folder holding `initdb` and `postgres`: `$HOOKLAB_PG_BIN`, the newest
/// `/usr/lib/postgresql/*/bin` (Debian, Ubuntu), `pg_config --bindir`, or `PATH`.
pub fn find_binaries() -> Result<PathBuf, ClusterError> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os(BIN_VAR) {
        let dir = PathBuf::from(dir);
        return if has_both(&dir) {
            Ok(dir)
        } else {
            Err(fail(format!(
                "{BIN_VAR}={} holds no initdb and postgres",
                dir.display()
            )))
        };
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            has_both(&bin).then_some((version, bin))
        })
        .collect();
    debian.sort();
    if let Some((_, bin)) = debian.pop() {
        return Ok(bin);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_both(&dir) {
            return Ok(dir);
        }
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if has_both(&dir) {
            return Ok(dir);
        }
    }
    Err(fail(format!(
        "the PostgreSQL server binaries (initdb, postgres) were not found. Install them \
         (Debian/Ubuntu: `apt-get install postgresql`; scripts/setup-deps.sh does it), or set \
         {BIN_VAR} to their folder, or {TEST_URL_VAR} to a server where this role may CREATE \
         DATABASE"
    )))
}

/// The uid and gid to run the server as: the `postgres` OS user when we are root.
fn server_user() -> Result<Option<(u32, u32)>, ClusterError> {
    let me = std::fs::metadata("/proc/self")
        .map_err(|e| fail(format!("cannot tell who runs this process: {e}")))?
        .uid();
    if me != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|e| fail(format!("reading /etc/passwd: {e}")))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"postgres") && fields.len() > 3).then(|| {
                Some((
                    fields[2].parse::<u32>().ok()?,
                    fields[3].parse::<u32>().ok()?,
                ))
            })?
        })
        .map(Some)
        .ok_or_else(|| {
            fail(
                "running as root, PostgreSQL needs a non-root user to run as, and there is no \
                 `postgres` user: install the `postgresql` package (it creates one)",
            )
        })
}

const WATCHDOG: &str = r#"
"$PG_BIN/postgres" -D "$DATA" -p "$PORT" -c listen_addresses=127.0.0.1 \
  -c unix_socket_directories= -c max_connections="$MAX_CONN" -c fsync="$DURABLE" \
  -c synchronous_commit="$DURABLE" -c full_page_writes="$DURABLE" 2>>"$DATA.log" &
pg=$!
stop() { kill -QUIT "$pg" 2>/dev/null; wait "$pg"; rm -rf "$DATA" "$DATA.log"; exit 0; }
trap stop TERM INT HUP
while kill -0 "$pg" 2>/dev/null && [ -e "/proc/$OWNER" ]; do sleep 0.1 & wait $!; done
stop
"#;

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Cluster {
    /// Starts a cluster; returns once it accepts TCP connections.
    pub fn start(options: &ClusterOptions) -> Result<Self, ClusterError> {
        let bin = find_binaries()?;
        let user = server_user()?;
        let mut last = None;
        for _ in 0..5 {
            match Self::try_start(&bin, user, options) {
                Ok(cluster) => return Ok(cluster),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| fail("the cluster did not start")))
    }

    fn try_start(
        bin: &Path,
        user: Option<(u32, u32)>,
        options: &ClusterOptions,
    ) -> Result<Self, ClusterError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let data = std::env::temp_dir().join(format!(
            "hooklab-pg-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&data)
            .map_err(|e| fail(format!("creating {}: {e}", data.display())))?;
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail(format!("chmod {}: {e}", data.display())))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&data, Some(uid), Some(gid))
                .map_err(|e| fail(format!("chown {}: {e}", data.display())))?;
        }
        let as_user = |command: &mut Command| {
            if let Some((uid, gid)) = user {
                command.uid(uid).gid(gid);
            }
        };
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-D"])
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "-N",
            ])
            .current_dir("/")
            .stdin(Stdio::null());
        as_user(&mut initdb);
        let out = initdb
            .output()
            .map_err(|e| fail(format!("running initdb: {e}")))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&data);
            return Err(fail(format!(
                "initdb failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| fail(format!("finding a free port: {e}")))?
            .port();
        let mut watchdog = Command::new("sh");
        watchdog
            .args(["-c", WATCHDOG])
            .env("PG_BIN", bin)
            .env("DATA", &data)
            .env("PORT", port.to_string())
            .env("OWNER", std::process::id().to_string())
            .env("MAX_CONN", options.max_connections.to_string())
            .env("DURABLE", if options.durable { "on" } else { "off" })
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        as_user(&mut watchdog);
        let mut watchdog = watchdog
            .spawn()
            .map_err(|e| fail(format!("starting postgres: {e}")))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            let exited = watchdog.try_wait().ok().flatten().is_some();
            if exited || Instant::now() > deadline {
                let mut log = String::new();
                if let Ok(mut f) = std::fs::File::open(data.with_extension("log")) {
                    let _ = f.read_to_string(&mut log);
                }
                let _ = watchdog.kill();
                let _ = watchdog.wait();
                let _ = std::fs::remove_dir_all(&data);
                return Err(fail(format!(
                    "postgres did not start on 127.0.0.1:{port}: {log}"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Self {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            port,
            watchdog,
        })
    }

    /// The superuser's URL, on the `postgres` database.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (immediate shutdown) and removes its files; waits for both.
    pub fn stop(&mut self) {
        if self.watchdog.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.watchdog.id().to_string()])
                .status();
        }
        let _ = self.watchdog.wait();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server tests use: see the module's documentation.
#[derive(Debug)]
pub struct TestServer {
    admin_url: String,
    /// Kept for the process's lifetime (statics are never dropped: the watchdog stops it
    /// when the process exits).
    _cluster: Option<Cluster>,
}

/// The shared test server, started on first use.
pub fn test_server() -> Result<&'static TestServer, ClusterError> {
    static SERVER: OnceLock<Result<TestServer, ClusterError>> = OnceLock::new();
    SERVER
        .get_or_init(|| match std::env::var(TEST_URL_VAR) {
            Ok(url) if !url.is_empty() => Ok(TestServer {
                admin_url: url,
                _cluster: None,
            }),
            _ => Cluster::start(&ClusterOptions::default()).map(|cluster| TestServer {
                admin_url: cluster.url().to_string(),
                _cluster: Some(cluster),
            }),
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl TestServer {
    /// A new, empty database on the server; returns its URL.
    pub async fn fresh_database(&self) -> Result<String, ClusterError> {
        create_database(&self.admin_url, "hooklab_test").await
    }

    /// [`TestServer::fresh_database`] for code outside a runtime.
    pub fn fresh_database_blocking(&self) -> Result<String, ClusterError> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("starting a runtime: {e}")))?
            .block_on(self.fresh_database())
    }
}

/// Creates a new, empty database named `PREFIX_PID_N_NANOS` on the server at `admin_url` (a
/// role that may `CREATE DATABASE`), retrying the connection while the server starts up;
/// returns the new database's URL.
pub async fn create_database(admin_url: &str, prefix: &str) -> Result<String, ClusterError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = loop {
        match tokio_postgres::connect(admin_url, tokio_postgres::NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(connection);
                break client;
            }
            Err(e) if Instant::now() > deadline => {
                return Err(fail(format!("connecting to {admin_url}: {e}")));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .map_err(|e| {
            fail(format!(
                "CREATE DATABASE {name}: {}",
                crate::error::describe(&e)
            ))
        })?;
    Ok(with_database(admin_url, &name))
}

/// `url` with its database replaced by `name` (query parameters kept).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_is_replaced_and_the_rest_kept() {
        assert_eq!(
            with_database("postgres://u:p@h:5/old?sslmode=disable", "new"),
            "postgres://u:p@h:5/new?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h", "new"), "postgres://h/new");
    }
}
