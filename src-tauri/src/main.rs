//! Hooklab's desktop app. A thin shell: it starts the same `hooklab-server` runtime that
//! `hooklab listen` runs (receiver, pipeline, state machines, the loopback control API) on the
//! user's database, then opens one window on the control API's UI with this run's token. The
//! window is the same UI a browser gets from `hooklab ui`: nothing is re-implemented here, and
//! the webview reaches Hooklab only through the token-protected loopback API.
//!
//! Around the window: a tray icon with the status and the actions, and the window's own menu
//! with the same actions (`tray.rs`); links to elsewhere open in the system browser
//! (`links.rs`); native notifications on a new dead letter or an invalid signature
//! (`notify/`); export and import through native file dialogs (`transfer.rs`). All of it is
//! native: the webview gets no Tauri command and no IPC.

mod lean;
mod links;
mod notify;
mod prefs;
mod status;
mod transfer;
mod tray;

use anyhow::Context as _;
use clap::Parser;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::control::discovery::{self, Discovery};
use hooklab_server::runtime::{self, Running};
use links::Navigation;
use prefs::{Prefs, SharedPrefs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tauri::webview::NewWindowResponse;
use tauri::{Manager as _, RunEvent, WebviewUrl, WebviewWindowBuilder};
use tauri_plugin_shell::ShellExt as _;

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
    /// Where the window's size and the notification choices are remembered [default:
    /// window.json in the platform config folder].
    #[arg(long, value_name = "FILE", hide = true)]
    window_state: Option<PathBuf>,
    /// No tray icon (the window's Hooklab menu has the same actions).
    #[arg(long)]
    no_tray: bool,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,hooklab=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    lean::reexec_with_webkit_env();
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
    // Sources added in the UI, and the UI's settings, live beside the database, as with
    // `hooklab listen`.
    config.sources_file = Some(hooklab_server::config::sources_file::path_beside(&db));
    config.ui_settings_file = Some(hooklab_server::config::ui_settings::path_beside(&db));
    // The window is the control API's UI: it always runs (loopback, fresh token).
    config.control_port = Some(config.control_port.unwrap_or(0));

    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(lean::WORKER_THREADS)
        .enable_all()
        .thread_name("hooklab-runtime")
        .build()
        .context("cannot start the async runtime")?;
    let store = Arc::new(
        SqliteStore::open_with(&db, lean::sqlite_options())
            .with_context(|| format!("cannot open {}", db.display()))?,
    );
    let running: Running = tokio
        .block_on(runtime::start(config, store.clone()))
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
    let control_url = window_url.clone();
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
    let prefs = SharedPrefs::new(Prefs::load(state_path.as_deref()), state_path);
    let remembered = prefs.get();
    let status = status::Status::new(running.url(), running.tunnel_status());
    let bus_for_tray = running.subscribe();
    let bus_for_notes = running.subscribe();
    let with_tray = !args.no_tray;
    let setup_prefs = prefs.clone();
    let importer = transfer::Importer::new(running.receiver().clone(), tokio.handle().clone());
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_shell::init())
        .on_menu_event(|app, event| {
            if let Some(menus) = app.try_state::<tray::Menus>() {
                menus.on_event(app, &event);
            }
        })
        .setup(move |app| {
            let prefs = setup_prefs;
            let (menus, window_menu) = tray::Menus::build(
                app.handle(),
                db.clone(),
                importer.clone(),
                prefs.clone(),
                &status,
                with_tray,
            )?;
            let navigate = app.handle().clone();
            let new_window = app.handle().clone();
            let (nav_control, popup_control) = (control_url.clone(), control_url.clone());
            // The window opens empty and loads the UI once WebKit's lean settings are in: the
            // first load starts the web process with the settings of that moment.
            let blank = WebviewUrl::External("about:blank".parse()?);
            let window = WebviewWindowBuilder::new(app, "main", blank)
                .title("Hooklab")
                .inner_size(remembered.width, remembered.height)
                .min_inner_size(720.0, 480.0)
                // An ephemeral web session: the page's cookies, storage and HTTP cache stay in
                // memory (the UI keeps its settings through the control API), and WebKit's
                // network process runs no disk cache for it (~1 MB less, docs/benchmarks.md).
                .incognito(true)
                .menu(window_menu)
                // The window shows the control API and nothing else.
                .on_navigation(move |url| follow_link(&navigate, url, &nav_control))
                .on_new_window(move |url, _features| {
                    follow_link(&new_window, &url, &popup_control);
                    NewWindowResponse::Deny
                })
                .build()?;
            #[cfg(target_os = "linux")]
            {
                let url = window_url.to_string();
                window.with_webview(move |webview| {
                    lean::lean_webkit(&webview.inner());
                    lean::without_ipc(&webview.inner());
                    webkit2gtk::WebViewExt::load_uri(&webview.inner(), &url);
                })?;
            }
            #[cfg(not(target_os = "linux"))]
            window.navigate(window_url.clone())?;

            // The tray's status and the notifications follow the events bus.
            app.manage(menus);
            let handle = app.handle().clone();
            // Menu changes run on the GTK thread: handed over without waiting for it (a runtime
            // worker that waited could deadlock the shutdown, which runs on that thread).
            signals.spawn(status::follow(
                bus_for_tray,
                store.clone(),
                status,
                move |s| {
                    let (status, app) = (s.clone(), handle.clone());
                    let _ = handle.run_on_main_thread(move || {
                        if let Some(menus) = app.try_state::<tray::Menus>() {
                            menus.show_status(&status);
                        }
                    });
                },
            ));
            #[cfg(target_os = "linux")]
            {
                let notes = notify::dbus::spawn()?;
                signals.spawn(notify::run(
                    bus_for_notes,
                    prefs,
                    notify::WINDOW,
                    move |note| {
                        let _ = notes.send(note);
                    },
                ));
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (bus_for_notes, prefs);

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
                prefs.update(false, |p| {
                    p.width = logical.width;
                    p.height = logical.height;
                });
            }
        }
        if let RunEvent::Exit = event {
            prefs.save();
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

/// The webview asked to go to `url` (a link, a redirect, `window.open`): `true` lets it, for
/// the control API's own pages; a link elsewhere opens in the system browser instead.
fn follow_link(app: &tauri::AppHandle, url: &tauri::Url, control: &tauri::Url) -> bool {
    match links::decide(url, control) {
        Navigation::Stay => true,
        Navigation::OpenExternally(target) => {
            if let Err(e) = open_in_browser(app, &target) {
                tracing::warn!("cannot open {target} in the browser: {e}");
            } else {
                tracing::info!("opened {target} in the system browser");
            }
            false
        }
        Navigation::Block => {
            tracing::warn!("the window may not go to {}", url.scheme());
            false
        }
    }
}

/// Hands `target` to the system's opener, through the shell plugin. On Linux: `xdg-open`, in
/// the environment the user started the app with (`lean::user_env`: without the settings the
/// app added for WebKit, which a browser it starts would otherwise inherit).
#[cfg(target_os = "linux")]
fn open_in_browser(app: &tauri::AppHandle, target: &str) -> anyhow::Result<()> {
    let (mut output, _opener) = app
        .shell()
        .command("xdg-open")
        .arg(target)
        .env_clear()
        .envs(lean::user_env())
        .spawn()?;
    // Read (and dropped) until the opener, and whatever it started, close it.
    tauri::async_runtime::spawn(async move { while output.recv().await.is_some() {} });
    Ok(())
}

/// Hands `target` to the system's opener, through the shell plugin.
#[cfg(not(target_os = "linux"))]
fn open_in_browser(app: &tauri::AppHandle, target: &str) -> anyhow::Result<()> {
    // The plugin deprecated `open` for tauri-plugin-opener, which does the same.
    #[allow(deprecated)]
    app.shell().open(target, None)?;
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
