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
        // wry turns these on; the UI draws no 3D and plays no sound.
        settings.set_enable_webgl(false);
        settings.set_enable_webaudio(false);
    }
    if let Some(context) = view.context() {
        context.set_cache_model(CacheModel::DocumentViewer);
    }
}

/// The UI talks to the control API over HTTP and never calls Tauri's IPC, so the scripts
/// Tauri and wry inject into every page for it (`window.ipc`, `__TAURI_INTERNALS__` and the
/// invoke machinery) are removed before the UI loads, with the message handler they post to.
/// A page that shows webhook data then has no bridge into the app at all, and the web process
/// no longer parses and runs them on every load (docs/benchmarks.md, "The UI").
#[cfg(target_os = "linux")]
pub(crate) fn without_ipc(view: &webkit2gtk::WebView) {
    use webkit2gtk::{UserContentManagerExt as _, WebViewExt as _};
    if let Some(scripts) = view.user_content_manager() {
        scripts.remove_all_scripts();
        scripts.unregister_script_message_handler("ipc");
    }
}

/// Environment for WebKit's processes (they inherit the app's), each kept when already set:
/// - `JSC_useJIT=0`: the UI's script is small and mostly waits; without the JIT the web
///   process saves its compiled code and the JIT's own data (~9 MB PSS, debug build);
/// - `WEBKIT_DISABLE_DMABUF_RENDERER=1`: with hardware acceleration off, the DMA-BUF renderer
///   (GPU buffers shared between the web process and the window) brings only its buffers and
///   set-up (together with the JIT off: the web process ~13 MB PSS smaller in the release
///   build, docs/benchmarks.md); it is also the usual cure for blank WebKitGTK windows on
///   some GPU drivers;
/// - `GDK_GL=disable`: GTK 3 does not probe OpenGL when it opens the display (the window
///   draws no GL of its own);
/// - `WEBKIT_WEB_RENDER_DEVICE_FILE`, with the DMA-BUF renderer off: the GPU named up front,
///   so that the app's process does not open an EGL display only to ask Mesa which GPU it
///   is. Those two probes are the only reasons the app's process loaded Mesa's driver and
///   its LLVM (~25 MB PSS); the web process, which renders, still loads them. The name is the
///   first DRM render node, as WebKit's own fallback picks it; with none (a VM, a virtual
///   display) a name that opens nothing, which is what WebKit finds there too. The web process
///   would open it only for the DMA-BUF renderer.
#[cfg(target_os = "linux")]
fn webkit_env(
    set: impl Fn(&str) -> Option<std::ffi::OsString>,
    render_nodes: impl FnOnce() -> Vec<String>,
) -> Vec<(&'static str, String)> {
    let mut env: Vec<(&'static str, String)> = vec![
        ("JSC_useJIT", "0".into()),
        ("WEBKIT_DISABLE_DMABUF_RENDERER", "1".into()),
        ("GDK_GL", "disable".into()),
    ];
    let dmabuf_off = set("WEBKIT_DISABLE_DMABUF_RENDERER").is_none_or(|v| v == "1");
    if dmabuf_off {
        let mut nodes = render_nodes();
        nodes.sort();
        let device = nodes.into_iter().next();
        env.push((
            "WEBKIT_WEB_RENDER_DEVICE_FILE",
            device.unwrap_or_else(|| "/dev/dri/none".into()),
        ));
    }
    env.retain(|(name, _)| set(name).is_none());
    env
}

/// The DRM render nodes of this machine (`/dev/dri/renderD128`, …).
#[cfg(target_os = "linux")]
fn render_nodes() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/dev/dri") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
        .map(|entry| entry.path().to_string_lossy().into_owned())
        .collect()
}

/// Where the re-exec notes which variables it added: the app hands programs it starts for
/// the user (the browser that opens a link) the environment without them.
#[cfg(target_os = "linux")]
const ADDED: &str = "HOOKLAB_WEBKIT_ENV";

/// Starts this program again, the same way, with [`webkit_env`] added, when some of it is
/// missing: a process cannot safely change its own environment once threads may run
/// (`set_var` is `unsafe`), but `exec` starts it afresh with a new one (same process id, same
/// standard streams). Returns when nothing is missing, or when the exec failed (then the app
/// runs as it is).
#[cfg(target_os = "linux")]
pub(crate) fn reexec_with_webkit_env() {
    use std::os::unix::process::CommandExt as _;
    let missing = webkit_env(|name| std::env::var_os(name), render_nodes);
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut again = std::process::Command::new(exe);
    again.args(std::env::args_os().skip(1));
    let added: Vec<&str> = missing.iter().map(|(name, _)| *name).collect();
    again.env(ADDED, added.join(","));
    for (name, value) in &missing {
        again.env(name, value);
    }
    let failed = again.exec();
    tracing::warn!("cannot restart with WebKit's lean settings ({failed}); running without them");
}

/// The environment the user started the app with: this process's, less what
/// [`reexec_with_webkit_env`] added for WebKit (a browser started from the app should not run
/// without its JIT).
#[cfg(target_os = "linux")]
pub(crate) fn user_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    without_added(std::env::vars_os())
}

#[cfg(target_os = "linux")]
fn without_added(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let vars: Vec<_> = vars.collect();
    let added: Vec<std::ffi::OsString> = vars
        .iter()
        .find(|(name, _)| name == ADDED)
        .map(|(_, list)| {
            list.to_string_lossy()
                .split(',')
                .map(std::ffi::OsString::from)
                .collect()
        })
        .unwrap_or_default();
    vars.into_iter()
        .filter(|(name, _)| name != ADDED && !added.contains(name))
        .collect()
}

/// WebKitGTK's settings: nothing to do elsewhere.
#[cfg(not(target_os = "linux"))]
pub(crate) fn reexec_with_webkit_env() {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn everything_is_added_to_an_empty_environment_with_the_first_render_node() {
        let env = webkit_env(env_of(&[]), || {
            vec!["/dev/dri/renderD129".into(), "/dev/dri/renderD128".into()]
        });
        assert_eq!(
            env,
            [
                ("JSC_useJIT", "0".to_string()),
                ("WEBKIT_DISABLE_DMABUF_RENDERER", "1".to_string()),
                ("GDK_GL", "disable".to_string()),
                (
                    "WEBKIT_WEB_RENDER_DEVICE_FILE",
                    "/dev/dri/renderD128".to_string()
                ),
            ]
        );
    }

    #[test]
    fn without_a_gpu_the_device_names_nothing() {
        let env = webkit_env(env_of(&[]), Vec::new);
        assert!(env.contains(&("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/dri/none".to_string())));
    }

    #[test]
    fn what_the_user_set_is_kept() {
        let env = webkit_env(
            env_of(&[("JSC_useJIT", "1"), ("GDK_GL", "always")]),
            Vec::new,
        );
        let names: Vec<&str> = env.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "WEBKIT_DISABLE_DMABUF_RENDERER",
                "WEBKIT_WEB_RENDER_DEVICE_FILE"
            ]
        );
    }

    #[test]
    fn with_the_dmabuf_renderer_on_the_gpu_is_left_to_webkit() {
        // The DMA-BUF renderer renders on the device: WebKit's own choice stays.
        let env = webkit_env(env_of(&[("WEBKIT_DISABLE_DMABUF_RENDERER", "0")]), || {
            panic!("not asked")
        });
        assert!(
            env.iter()
                .all(|(name, _)| *name != "WEBKIT_WEB_RENDER_DEVICE_FILE")
        );
    }

    #[test]
    fn programs_started_for_the_user_get_the_environment_without_what_the_app_added() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("JSC_useJIT", "0"),
            ("GDK_GL", "disable"),
            ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
            (ADDED, "JSC_useJIT,GDK_GL"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let names: Vec<OsString> = without_added(vars.into_iter())
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        // The user's own WEBKIT_DISABLE_DMABUF_RENDERER stays.
        assert_eq!(names, ["PATH", "WEBKIT_DISABLE_DMABUF_RENDERER"]);
    }
}
