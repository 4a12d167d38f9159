//! A private D-Bus session bus (Debian's `dbus-daemon`) with a minimal notification server on
//! it: it owns `org.freedesktop.Notifications`, answers every `Notify` call with an id, and
//! keeps each call's summary and body for the test to read.

use gtk::gio;
use gtk::glib::{self, ToVariant as _};
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A `dbus-daemon --session` of this test's own; killed on drop.
pub(crate) struct SessionBus {
    child: Child,
    pub(crate) address: String,
}

impl SessionBus {
    pub(crate) fn start() -> Self {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("`dbus-daemon` is not installed: `apt-get install dbus` (scripts/setup-deps.sh does it)");
        let mut address = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_string();
        assert!(
            address.starts_with("unix:"),
            "dbus-daemon printed {address:?}"
        );
        Self { child, address }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `Notify` call as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    pub(crate) app: String,
    pub(crate) replaces: u32,
    pub(crate) summary: String,
    pub(crate) body: String,
}

/// The notification server; it serves while it lives.
pub(crate) struct NotificationServer {
    _connection: gio::DBusConnection,
    shown: Arc<Mutex<Vec<Shown>>>,
}

impl NotificationServer {
    pub(crate) fn start(bus: &SessionBus) -> Self {
        let connection = gio::DBusConnection::for_address_sync(
            &bus.address,
            gio::DBusConnectionFlags::AUTHENTICATION_CLIENT
                | gio::DBusConnectionFlags::MESSAGE_BUS_CONNECTION,
            None::<&gio::DBusAuthObserver>,
            None::<&gio::Cancellable>,
        )
        .expect("connects to the test's session bus");
        let shown = Arc::new(Mutex::new(Vec::new()));
        let seen = shown.clone();
        // Filters run on GDBus's own thread: no main loop needed.
        connection.add_filter(move |connection, message, incoming| {
            let notify = incoming
                && message.message_type() == gio::DBusMessageType::MethodCall
                && message.member().as_deref() == Some("Notify");
            if !notify {
                return Some(message.clone());
            }
            let body = message.body().expect("Notify has arguments");
            let text = |i: usize| body.child_value(i).get::<String>().unwrap_or_default();
            let mut seen = seen.lock().unwrap();
            seen.push(Shown {
                app: text(0),
                replaces: body.child_value(1).get::<u32>().unwrap_or(u32::MAX),
                summary: text(3),
                body: text(4),
            });
            let reply = message.new_method_reply();
            reply.set_body(&(seen.len() as u32,).to_variant());
            let _ = connection.send_message(&reply, gio::DBusSendMessageFlags::NONE);
            None
        });
        let owned = connection
            .call_sync(
                Some("org.freedesktop.DBus"),
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "RequestName",
                // DBUS_NAME_FLAG_DO_NOT_QUEUE
                Some(&("org.freedesktop.Notifications", 4u32).to_variant()),
                Some(glib::VariantTy::new("(u)").unwrap()),
                gio::DBusCallFlags::NONE,
                5000,
                None::<&gio::Cancellable>,
            )
            .expect("RequestName");
        assert_eq!(
            owned.child_value(0).get::<u32>(),
            Some(1),
            "the test owns org.freedesktop.Notifications"
        );
        Self {
            _connection: connection,
            shown,
        }
    }

    pub(crate) fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap().clone()
    }
}
