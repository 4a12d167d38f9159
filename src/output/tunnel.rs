//! Printing the tunnel: a line per state change in `listen` (a loud warning when the public
//! URL changes, because the gateway still calls the old one), and `hooklab tunnel status`.

use hooklab_server::tunnel::{TunnelEvent, TunnelState, TunnelStatus};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// `{"tunnel": {"status": "up", "url": …, "provider": …}}`, one line per change.
pub(crate) fn tunnel_event_json(e: &TunnelEvent) -> Value {
    let mut inner = serde_json::to_value(e).unwrap_or_default();
    if e.previous_url.is_some() {
        inner["warning"] =
            "the public URL changed: update the webhook URL in the gateway's dashboard".into();
    }
    json!({ "tunnel": inner })
}

/// One or more lines for people; `plain_http` adds the note that bore and ssh are not HTTPS;
/// on `up`, each source's public endpoint (what to paste in the gateway's dashboard).
pub(crate) fn tunnel_event_text(e: &TunnelEvent, plain_http: bool, sources: &[String]) -> String {
    let mut out = String::new();
    match &e.state {
        TunnelState::Starting => {
            let _ = writeln!(out, "Starting the {} tunnel…", e.provider);
        }
        TunnelState::Up { url } => {
            let note = if plain_http {
                ", plain HTTP: gateways that require HTTPS will refuse it"
            } else {
                ""
            };
            if let Some(old) = &e.previous_url {
                let _ = writeln!(
                    out,
                    "WARNING: the public URL changed from {old} to {url}.\n         \
                     Update the webhook URL in your gateway's dashboard: deliveries to the old \
                     URL are lost."
                );
            }
            let _ = writeln!(out, "Public URL ({}{note}): {url}", e.provider);
            for name in sources {
                let _ = writeln!(out, "  {name:<14} → {}/{name}", url.trim_end_matches('/'));
            }
        }
        TunnelState::Down { reason } => {
            let _ = writeln!(out, "Tunnel down ({}): {reason}", e.provider);
        }
        TunnelState::Reconnecting { attempt, delay_ms } => {
            let _ = writeln!(
                out,
                "Tunnel reconnecting in {:.1}s (attempt {attempt})",
                *delay_ms as f64 / 1000.0
            );
        }
        TunnelState::Stopped => {
            let _ = writeln!(out, "Tunnel stopped.");
        }
    }
    out
}

/// `hooklab tunnel status`, for people.
pub(crate) fn tunnel_status_text(s: &TunnelStatus) -> String {
    let mut out = String::new();
    let transport = if s.plain_http { " (plain HTTP)" } else { "" };
    let _ = writeln!(out, "Tunnel:      {}{transport}", s.provider);
    let _ = writeln!(out, "Status:      {}", s.state.name());
    match &s.state {
        TunnelState::Down { reason } => {
            let _ = writeln!(out, "Why:         {reason}");
        }
        TunnelState::Reconnecting { attempt, delay_ms } => {
            let _ = writeln!(out, "Next try:    attempt {attempt}, after {delay_ms} ms");
        }
        _ => {}
    }
    match &s.public_url {
        Some(url) => {
            let _ = writeln!(out, "Public URL:  {url}");
        }
        None => {
            let _ = writeln!(out, "Public URL:  (none yet)");
        }
    }
    if s.url_changes > 0 {
        let _ = writeln!(
            out,
            "URL changes: {} (each one needs the gateway's webhook URL updated)",
            s.url_changes
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(url: &str, previous: Option<&str>) -> TunnelEvent {
        TunnelEvent {
            provider: "bore".into(),
            state: TunnelState::Up { url: url.into() },
            previous_url: previous.map(str::to_string),
        }
    }

    #[test]
    fn up_lines_give_each_source_its_public_endpoint_and_say_plain_http() {
        let text = tunnel_event_text(&up("http://bore.pub:4242", None), true, &["stripe".into()]);
        assert!(text.contains("plain HTTP"), "{text}");
        assert!(
            text.contains("stripe         → http://bore.pub:4242/stripe"),
            "{text}"
        );
        assert!(!text.contains("WARNING"), "{text}");
    }

    #[test]
    fn a_changed_url_is_a_warning_in_text_and_json() {
        let e = up("https://b.lhr.life", Some("https://a.lhr.life"));
        let text = tunnel_event_text(&e, false, &[]);
        assert!(
            text.starts_with(
                "WARNING: the public URL changed from https://a.lhr.life to https://b.lhr.life"
            ),
            "{text}"
        );
        assert!(text.contains("gateway's dashboard"), "{text}");
        let json = tunnel_event_json(&e);
        assert_eq!(json["tunnel"]["status"], "up");
        assert_eq!(json["tunnel"]["previous_url"], "https://a.lhr.life");
        assert!(
            json["tunnel"]["warning"]
                .as_str()
                .unwrap()
                .contains("gateway")
        );
    }
}
