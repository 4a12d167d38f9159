//! Shows notifications through the desktop's notification server: one `Notify` call on the
//! session bus (`org.freedesktop.Notifications`), with GIO, which GTK already links. No
//! session bus or no notification server (a bare X server, CI) is not an error: the first
//! failure is logged once as a warning, and the app goes on.

use super::{Kind, Note};
use gtk::gio;
use gtk::glib::{self, ToVariant as _};
use std::collections::HashMap;
use std::sync::mpsc;

/// How long one `Notify` call may take.
const CALL_TIMEOUT_MS: i32 = 2000;
/// How long a notification stays up (the server may ignore it).
const EXPIRE_MS: i32 = 8000;

/// A thread that sends the notes it is given; the sender is the handle (dropping every clone
/// ends the thread).
pub(crate) fn spawn() -> std::io::Result<mpsc::Sender<Note>> {
    let (tx, rx) = mpsc::channel::<Note>();
    std::thread::Builder::new()
        .name("hooklab-notify".into())
        .spawn(move || {
            let mut bus: Option<gio::DBusConnection> = None;
            let mut warned = false;
            // The server's id of the last notification of each kind: a summary replaces it.
            let mut shown: HashMap<usize, u32> = HashMap::new();
            for note in rx {
                if bus.is_none() {
                    match gio::bus_get_sync(gio::BusType::Session, None::<&gio::Cancellable>) {
                        Ok(connection) => bus = Some(connection),
                        Err(e) => {
                            if !warned {
                                tracing::warn!("no desktop notifications (no session bus: {e})");
                                warned = true;
                            }
                            continue;
                        }
                    }
                }
                let Some(connection) = &bus else { continue };
                let replaces = shown.get(&(note.kind as usize)).copied().unwrap_or(0);
                match notify(connection, &note, replaces) {
                    Ok(id) => {
                        shown.insert(note.kind as usize, id);
                        tracing::debug!("notification {id} shown: {}", note.summary);
                    }
                    Err(e) => {
                        if !warned {
                            tracing::warn!(
                                "no desktop notifications (no notification server: {e})"
                            );
                            warned = true;
                        }
                    }
                }
            }
        })?;
    Ok(tx)
}

/// `Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)`.
fn notify(
    connection: &gio::DBusConnection,
    note: &Note,
    replaces: u32,
) -> Result<u32, glib::Error> {
    let category = match note.kind {
        Kind::DeadLetter => "transfer.error",
        Kind::InvalidSignature => "network.error",
    };
    let hints: HashMap<String, glib::Variant> =
        HashMap::from([("category".to_string(), category.to_variant())]);
    let parameters = (
        "Hooklab",
        replaces,
        "dialog-warning",
        note.summary.as_str(),
        // Servers that support body markup read a subset of HTML: the text is escaped, so event
        // data stays text.
        glib::markup_escape_text(&note.body).as_str(),
        Vec::<String>::new(),
        hints,
        EXPIRE_MS,
    )
        .to_variant();
    let reply = connection.call_sync(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        Some(&parameters),
        Some(glib::VariantTy::new("(u)").expect("a valid type")),
        gio::DBusCallFlags::NONE,
        CALL_TIMEOUT_MS,
        None::<&gio::Cancellable>,
    )?;
    Ok(reply.child_value(0).get::<u32>().unwrap_or(0))
}
