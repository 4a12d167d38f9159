//! Hooklab's desktop app. A thin shell: it starts the same `hooklab-server` runtime that
//! `hooklab listen` runs (receiver, pipeline, state machines, the loopback control API) on the
//! user's database, then opens one window on the control API's UI with this run's token. The
//! window is the same UI a browser gets from `hooklab ui`: nothing is re-implemented here, and
//! the webview reaches Hooklab only through the token-protected loopback API.

use anyhow::Context as _;
use clap::Parser;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::control::discovery::{self, Discovery};
use hooklab_server::runtime::{self, Running};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tauri::{Manager as _, RunEvent, WebviewUrl, WebviewWindowBuilder};

/// Hooklab desktop: the webhook receiver, inspector and replay lab in a window.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// The database [default: hooklab.db in the platform data folder, shared with the CLI].
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// A TOML configuration (sources, forwarding, tunnel), as for `hooklab listen --config`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The receiver's port (0: a free one) [default: the configuration's, else 8787].
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// A source, as for `hooklab listen`: NAME=PROVIDER[:SECRET] (SECRET may be env:VAR).
    /// Repeatable; replaces a configured source of the same name.
    #[arg(long = "source", value_name = "NAME=PROVIDER[:SECRET]")]
    sources: Vec<String>,
    /// Print one JSON line with the receiver and control API addresses once started.
    #[arg(long)]
    print_ready: bool,
    /// Where the window's size is remembered [default: window.json in the platform config
    /// folder].
    #[arg(long, value_name = "FILE", hide = true)]
    window_state: Option<PathBuf>,
}

/// The window's size, remembered between runs (logical pixels).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct WindowState {
    width: f64,
    height: f64,
}

impl WindowState {
    const DEFAULT: Self = Self {
        width: 1280.0,
        height: 800.0,
    };

    /// The remembered size, or the default (also for a missing, unreadable or absurd file).
    fn load(path: Option<&std::path::Path>) -> Self {
        path.and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice::<Self>(&bytes).ok())
            .filter(|s| {
                (720.0..=16384.0).contains(&s.width) && (480.0..=16384.0).contains(&s.height)
            })
            .unwrap_or(Self::DEFAULT)
    }

    fn save(self, path: &std::path::Path) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(bytes) = serde_json::to_vec(&self) {
            if let Err(e) = std::fs::write(path, bytes) {
                tracing::warn!(
                    "cannot remember the window's size in {}: {e}",
                    path.display()
                );
            }
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,hooklab=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn default_db() -> anyhow::Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("dev", "hooklab", "hooklab")
        .context("cannot find a home directory for the default database; pass --db FILE")?;
    Ok(dirs.data_dir().join("hooklab.db"))
}

fn run(args: Args) -> anyhow::Result<()> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let db = match (args.db, &config.db) {
        (Some(db), _) => db,
        (None, Some(db)) => db.clone(),
        (None, None) => default_db()?,
    };
    if let Some(port) = args.port {
        config.port = port;
    }
    for spec in &args.sources {
        let source = SourceConfig::parse_cli(spec)?;
        config.sources.retain(|s| s.name != source.name);
        config.sources.push(source);
    }
    // Sources added in the UI live beside the database, as with `hooklab listen`.
    config.sources_file = Some(hooklab_server::config::sources_file::path_beside(&db));
    // The window is the control API's UI: it always runs (loopback, fresh token).
    config.control_port = Some(config.control_port.unwrap_or(0));

    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("hooklab-runtime")
        .build()
        .context("cannot start the async runtime")?;
    let store =
        Arc::new(SqliteStore::open(&db).with_context(|| format!("cannot open {}", db.display()))?);
    let running: Running = tokio
        .block_on(runtime::start(config, store))
        .context("cannot start the receiver")?;
    let control = running.control().context("the control API did not start")?;
    let found = Discovery {
        pid: std::process::id(),
        url: control.url(),
        token: control.token().clone(),
        receiver: running.url(),
    };
    let discovery_path = discovery::path_beside(&db);
    if let Err(e) = found.write(&discovery_path) {
        tracing::warn!(
            "cannot write {} ({e}); `hooklab ui` will not find this app",
            discovery_path.display()
        );
    }
    let window_url: tauri::Url = format!("{}/#token={}", found.url, found.token.expose())
        .parse()
        .context("the control API's address is not a URL")?;
    if args.print_ready {
        println!(
            "{}",
            serde_json::json!({ "ready": {
                "receiver": found.receiver,
                "control": found.url,
                "db": db.display().to_string(),
            }})
        );
    }

    // Registered now, before any window exists, so a SIGTERM that arrives early is not lost
    // (it is delivered to the stream and handled once the app runs).
    let signals = tokio.handle().clone();
    let stop = {
        let _entered = tokio.enter();
        StopSignals::register()?
    };
    let mut stop = Some(stop);
    let state_path = args.window_state.clone().or_else(|| {
        directories::ProjectDirs::from("dev", "hooklab", "hooklab")
            .map(|d| d.config_dir().join("window.json"))
    });
    let remembered = WindowState::load(state_path.as_deref());
    let app = tauri::Builder::default()
        .setup(move |app| {
            let window =
                WebviewWindowBuilder::new(app, "main", WebviewUrl::External(window_url.clone()))
                    .title("Hooklab")
                    .inner_size(remembered.width, remembered.height)
                    .min_inner_size(720.0, 480.0)
                    .build()?;
            #[cfg(target_os = "linux")]
            window.with_webview(|webview| lean_webkit(&webview.inner()))?;
            // SIGINT / SIGTERM close the app the way its window does: a graceful shutdown.
            let handle = app.handle().clone();
            if let Some(stop) = stop.take() {
                signals.spawn(async move {
                    stop.wait().await;
                    handle.exit(0);
                });
            }
            Ok(())
        })
        .build(tauri::generate_context!("../tauri.conf.json"))
        .context("cannot start the desktop window (is a display available?)")?;

    let mut running = Some(running);
    let mut size = remembered;
    app.run(move |app, event| {
        if let RunEvent::WindowEvent {
            event: tauri::WindowEvent::Resized(physical),
            label,
            ..
        } = &event
        {
            let scale = app
                .get_webview_window(label)
                .and_then(|w| w.scale_factor().ok())
                .unwrap_or(1.0);
            let logical = physical.to_logical::<f64>(scale);
            if logical.width >= 1.0 && logical.height >= 1.0 {
                size = WindowState {
                    width: logical.width,
                    height: logical.height,
                };
            }
        }
        if let RunEvent::Exit = event {
            if let Some(path) = &state_path {
                size.save(path);
            }
            if let Some(running) = running.take() {
                // Stop accepting, finish in-flight requests, commit: as `hooklab listen` does.
                if let Err(e) = tokio.block_on(running.shutdown()) {
                    tracing::error!("shutting down: {e}");
                }
            }
            found.remove(&discovery_path);
        }
    });
    Ok(())
}

/// SIGINT and SIGTERM, listened for from the moment they are registered.
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Must run inside the tokio runtime.
    fn register() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                term: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
                int: signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    async fn wait(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            runtime::shutdown_signal().await;
        }
    }
}

/// The UI is one page of text and tables: no GPU compositing (on machines without a GPU it
/// costs memory for nothing), no back-forward page cache, and the document-viewer cache model
/// (WebKit's smallest). Halves the idle web process.
#[cfg(target_os = "linux")]
fn lean_webkit(view: &webkit2gtk::WebView) {
    use webkit2gtk::{
        CacheModel, HardwareAccelerationPolicy, SettingsExt as _, WebContextExt as _, WebViewExt,
    };
    if let Some(settings) = WebViewExt::settings(view) {
        settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        settings.set_enable_page_cache(false);
    }
    if let Some(context) = view.context() {
        context.set_cache_model(CacheModel::DocumentViewer);
    }
}
