//! Keeping the idle desktop app small (docs/benchmarks.md, "The UI"): the app's own runtime,
//! and WebKit's settings for a UI that is one page of text and tables.

/// Tokio workers for the in-process receiver, pipeline and control API: a developer's
/// machine's webhooks, not a production load (`hooklab serve` is for that). Each worker is a
/// thread with its own stack and malloc arena.
pub(crate) const WORKER_THREADS: usize = 2;

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
