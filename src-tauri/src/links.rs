//! Where the window may go. The webview shows the control API's UI and nothing else: a link to
//! anywhere else (a provider's docs, the tunnel's public URL) opens in the system browser
//! (`tauri-plugin-shell`'s `open`), and a URL of any other kind (`file:`, `javascript:`,
//! `data:`, a custom scheme) goes nowhere.

use tauri::Url;

/// What to do with a navigation (or a new-window request) of the webview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Navigation {
    /// The control API's own origin (or `about:blank`): the webview goes there.
    Stay,
    /// A web or mail link elsewhere: cancelled in the webview, opened by the system.
    OpenExternally(String),
    /// Anything else: cancelled.
    Block,
}

/// Decides about `url` for a webview whose content is served from `control` (the control
/// API's origin, e.g. `http://127.0.0.1:41234`). Same origin means same scheme, host and port.
pub(crate) fn decide(url: &Url, control: &Url) -> Navigation {
    match url.scheme() {
        "http" | "https" if url.origin() == control.origin() => Navigation::Stay,
        "http" | "https" if url.host_str().is_some() => {
            Navigation::OpenExternally(url.as_str().to_string())
        }
        "about" if url.path() == "blank" => Navigation::Stay,
        "mailto" => Navigation::OpenExternally(url.as_str().to_string()),
        _ => Navigation::Block,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        s.parse().unwrap()
    }

    #[test]
    fn the_control_api_stays_in_the_window() {
        let control = url("http://127.0.0.1:41234/#token=abc");
        for same in [
            "http://127.0.0.1:41234/",
            "http://127.0.0.1:41234/#/events/12",
            "http://127.0.0.1:41234/api/events/12/raw",
            "about:blank",
        ] {
            assert_eq!(decide(&url(same), &control), Navigation::Stay, "{same}");
        }
    }

    #[test]
    fn other_origins_open_in_the_system_browser() {
        let control = url("http://127.0.0.1:41234/");
        for elsewhere in [
            "https://docs.stripe.com/webhooks/signature",
            // Another port, host or scheme is another origin, even on this machine: the
            // receiver, `localhost`, https on the same port.
            "http://127.0.0.1:8787/stripe",
            "http://localhost:41234/",
            "https://127.0.0.1:41234/",
            "https://abc.trycloudflare.com/stripe",
            "mailto:dev@example.com",
        ] {
            assert_eq!(
                decide(&url(elsewhere), &control),
                Navigation::OpenExternally(url(elsewhere).to_string()),
                "{elsewhere}"
            );
        }
    }

    #[test]
    fn other_schemes_go_nowhere() {
        let control = url("http://127.0.0.1:41234/");
        for blocked in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "about:config",
            "tauri://localhost/",
            "ftp://example.com/x",
            // A blob of the control origin is still not a page of the control API.
            "blob:http://127.0.0.1:41234/0f6c",
        ] {
            assert_eq!(
                decide(&url(blocked), &control),
                Navigation::Block,
                "{blocked}"
            );
        }
    }
}
