//! The UI's static files (`ui/dist`, built by Vite), served by the control API so a browser on
//! this machine can open the same UI the desktop app shows. Only files under the UI folder are
//! served (no `..`, no hidden files); every page carries a strict Content-Security-Policy, so
//! even a bug that put event data into HTML could not run a script.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use std::path::{Component, Path};

/// Scripts, styles and connections from this origin only; nothing inline, no frames, no forms.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The file for `path`, `index.html` for any path that is not a file (the UI routes itself),
/// or a page saying how to build the UI when there is none.
pub(super) async fn serve(dir: Option<&Path>, path: &str) -> Response {
    let Some(dir) = dir else {
        return not_built();
    };
    let relative = path.trim_start_matches('/');
    let safe = Path::new(relative).components().all(|c| match c {
        Component::Normal(part) => !part.to_string_lossy().starts_with('.'),
        _ => false,
    });
    if !safe {
        return page(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            b"not found\n".to_vec(),
        );
    }
    let file = dir.join(relative);
    let file = if relative.is_empty() || !file.is_file() {
        if relative.starts_with("assets/") {
            return page(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                b"not found\n".to_vec(),
            );
        }
        dir.join("index.html")
    } else {
        file
    };
    let kind = content_type(&file);
    match tokio::task::spawn_blocking(move || std::fs::read(file)).await {
        Ok(Ok(bytes)) => page(StatusCode::OK, kind, bytes),
        _ => not_built(),
    }
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

fn not_built() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "text/plain; charset=utf-8",
        b"The Hooklab UI is not built. Build it with `npm --prefix ui ci && npm --prefix ui run build`, \
          or point HOOKLAB_UI_DIR at a built ui/dist folder.\n"
            .to_vec(),
    )
}

fn page(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_files_under_the_folder_are_served_with_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<!doctype html>ui").unwrap();
        std::fs::create_dir(dir.path().join("assets")).unwrap();
        std::fs::write(dir.path().join("assets/app.js"), "1").unwrap();
        std::fs::write(dir.path().join(".secret"), "no").unwrap();
        let ok = serve(Some(dir.path()), "/assets/app.js").await;
        assert_eq!(ok.status(), StatusCode::OK);
        assert_eq!(ok.headers()[header::CONTENT_SECURITY_POLICY], CSP);
        assert!(
            ok.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/javascript")
        );
        let routed = serve(Some(dir.path()), "/events/12").await;
        assert_eq!(
            routed.status(),
            StatusCode::OK,
            "the UI routes its own paths"
        );
        for bad in [
            "/../etc/passwd",
            "/.secret",
            "/assets/../../x",
            "/assets/missing.js",
        ] {
            assert_eq!(
                serve(Some(dir.path()), bad).await.status(),
                StatusCode::NOT_FOUND,
                "{bad}"
            );
        }
        assert_eq!(serve(None, "/").await.status(), StatusCode::NOT_FOUND);
    }
}
