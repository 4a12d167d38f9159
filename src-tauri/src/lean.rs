//! Keeping the idle desktop app small (docs/benchmarks.md, "The UI"): the app's own runtime,
//! and WebKit's settings for a UI that is one page of text and tables.

/// Tokio workers for the in-process receiver, pipeline and control API: a developer's
/// machine's webhooks, not a production load (`hooklab serve` is for that). Each worker is a
/// thread with its own stack and malloc arena.
pub(crate) const WORKER_THREADS: usize = 2;

/// The database: one reader connection instead of two (each has its own page cache and
/// thread); the window is one user's UI.
pub(crate) fn sqlite_options() -> hooklab_core::store::sqlite::SqliteOptions {
    hooklab_core::store::sqlite::SqliteOptions {
        readers: 1,
        ..Default::default()
    }
}

/// No GPU compositing (on machines without a GPU it costs memory for nothing), no back-forward
/// page cache, and the document-viewer cache model (WebKit's smallest: no memory cache of
/// resources other pages could reuse).
#[cfg(target_os = "linux")]
pub(crate) fn lean_webkit(view: &webkit2gtk::WebView) {
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

/// Environment for WebKit's processes (they inherit the app's), each kept when already set:
/// - `JSC_useJIT=0`: the UI's script is small and mostly waits; without the JIT the web
///   process saves its compiled code and the JIT's own data (~9 MB PSS, debug build);
/// - `WEBKIT_DISABLE_DMABUF_RENDERER=1`: with hardware acceleration off, the DMA-BUF renderer
///   (GPU buffers shared between the web process and the window) brings only its buffers and
///   set-up (together with the JIT off: the web process ~13 MB PSS smaller in the release
///   build, docs/benchmarks.md);
///   it is also the usual cure for blank WebKitGTK windows on some GPU drivers.
#[cfg(target_os = "linux")]
pub(crate) const WEBKIT_ENV: &[(&str, &str)] =
    &[("JSC_useJIT", "0"), ("WEBKIT_DISABLE_DMABUF_RENDERER", "1")];

/// Starts this program again, the same way, with [`WEBKIT_ENV`] added, when some of it is
/// missing: a process cannot safely change its own environment once threads may run
/// (`set_var` is `unsafe`), but `exec` starts it afresh with a new one (same process id, same
/// standard streams). Returns when nothing is missing, or when the exec failed (then the app
/// runs as it is).
#[cfg(target_os = "linux")]
pub(crate) fn reexec_with_webkit_env() {
    use std::os::unix::process::CommandExt as _;
    let missing: Vec<_> = WEBKIT_ENV
        .iter()
        .filter(|(name, _)| std::env::var_os(name).is_none())
        .collect();
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut again = std::process::Command::new(exe);
    again.args(std::env::args_os().skip(1));
    for (name, value) in missing {
        again.env(name, value);
    }
    let failed = again.exec();
    tracing::warn!("cannot restart with WebKit's lean settings ({failed}); running without them");
}

/// WebKitGTK's settings: nothing to do elsewhere.
#[cfg(not(target_os = "linux"))]
pub(crate) fn reexec_with_webkit_env() {}
