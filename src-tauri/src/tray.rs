//! The native menus: a tray icon whose menu shows the status (receiver, tunnel, counts) and
//! the actions, and the window's own "Hooklab" menu with the same actions (a desktop without a
//! tray host — GNOME without its AppIndicator extension, a bare X server — still has them).
//! Nothing here is exposed to the webview: no Tauri command, no IPC.

use crate::prefs::SharedPrefs;
use crate::status::Status;
use crate::transfer::Direction;
use std::path::PathBuf;
use std::sync::Mutex;
use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager as _, Wry};

const OPEN: &str = "open";
const COPY_URL: &str = "copy-public-url";
const EXPORT: &str = "export";
const IMPORT: &str = "import";
const NOTIFY_DEAD: &str = "notify-dead-letter";
const NOTIFY_INVALID: &str = "notify-invalid-signature";
const QUIT: &str = "quit";

/// The menu items that change while the app runs, and what the actions need.
pub(crate) struct Menus {
    db: PathBuf,
    importer: crate::transfer::Importer,
    prefs: SharedPrefs,
    /// The status lines (tray only).
    status: Vec<MenuItem<Wry>>,
    /// Every "Copy public URL" (enabled while the tunnel is up).
    copy: Vec<MenuItem<Wry>>,
    /// Every notification check item, by id (kept in step across the menus).
    checks: Vec<CheckMenuItem<Wry>>,
    public_url: Mutex<Option<String>>,
    tray: Option<tauri::tray::TrayIcon<Wry>>,
}

/// Builds the tray icon, or `None` when the system cannot show one. On Linux, Tauri's tray
/// loads libayatana-appindicator3 (or libappindicator3) at run time and panics when neither is
/// installed: that panic is caught here (and kept off stderr) and the app runs without a tray.
fn build_tray(
    app: &AppHandle,
    builder: TrayIconBuilder<Wry>,
) -> Option<tauri::tray::TrayIcon<Wry>> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.build(app)));
    std::panic::set_hook(quiet);
    match built {
        Ok(Ok(tray)) => {
            tracing::info!("tray icon ready");
            Some(tray)
        }
        Ok(Err(e)) => {
            tracing::warn!("no tray icon: {e}");
            None
        }
        Err(_) => {
            tracing::warn!(
                "no tray icon: libayatana-appindicator3 is not installed \
                 (`apt-get install libayatana-appindicator3-1`); the window's Hooklab menu has the same actions"
            );
            None
        }
    }
}

impl Menus {
    /// Builds the window's menu and, when `with_tray`, the tray icon with its menu.
    pub(crate) fn build(
        app: &AppHandle,
        db: PathBuf,
        importer: crate::transfer::Importer,
        prefs: SharedPrefs,
        status: &Status,
        with_tray: bool,
    ) -> tauri::Result<(Self, Menu<Wry>)> {
        let notify = prefs.get().notify;
        let mut menus = Self {
            db,
            importer,
            prefs,
            status: Vec::new(),
            copy: Vec::new(),
            checks: Vec::new(),
            public_url: Mutex::new(status.public_url().map(str::to_string)),
            tray: None,
        };
        let has_url = status.public_url().is_some();
        // Each check item has its own id (`setting@place`): the clicked one says the new state.
        let check = |menus: &mut Self,
                     id: &str,
                     text: &str,
                     on: bool|
         -> tauri::Result<CheckMenuItem<Wry>> {
            let place = if menus.checks.len() < 2 {
                "window"
            } else {
                "tray"
            };
            let item =
                CheckMenuItem::with_id(app, format!("{id}@{place}"), text, true, on, None::<&str>)?;
            menus.checks.push(item.clone());
            Ok(item)
        };
        let copy = |menus: &mut Self| -> tauri::Result<MenuItem<Wry>> {
            let item = MenuItem::with_id(app, COPY_URL, "Copy public URL", has_url, None::<&str>)?;
            menus.copy.push(item.clone());
            Ok(item)
        };
        // The two notification switches, for one menu.
        let notify_checks = |menus: &mut Self| -> tauri::Result<_> {
            Ok((
                check(
                    menus,
                    NOTIFY_DEAD,
                    "Notify on new dead letters",
                    notify.dead_letter,
                )?,
                check(
                    menus,
                    NOTIFY_INVALID,
                    "Notify on invalid signatures",
                    notify.invalid_signature,
                )?,
            ))
        };

        // The window's menu bar: one "Hooklab" menu.
        let window_copy = copy(&mut menus)?;
        let (dead, invalid) = notify_checks(&mut menus)?;
        let window_menu = Menu::with_items(
            app,
            &[&Submenu::with_items(
                app,
                "Hooklab",
                true,
                &[
                    &window_copy,
                    &PredefinedMenuItem::separator(app)?,
                    &MenuItem::with_id(app, EXPORT, "Export database…", true, None::<&str>)?,
                    &MenuItem::with_id(app, IMPORT, "Import events…", true, None::<&str>)?,
                    &PredefinedMenuItem::separator(app)?,
                    &dead,
                    &invalid,
                    &PredefinedMenuItem::separator(app)?,
                    &MenuItem::with_id(app, QUIT, "Quit", true, None::<&str>)?,
                ],
            )?],
        )?;

        if with_tray {
            let lines = status.lines();
            for line in &lines {
                menus
                    .status
                    .push(MenuItem::new(app, line, false, None::<&str>)?);
            }
            let tray_copy = copy(&mut menus)?;
            let (dead, invalid) = notify_checks(&mut menus)?;
            let menu = Menu::with_items(
                app,
                &[
                    &menus.status[0],
                    &menus.status[1],
                    &menus.status[2],
                    &PredefinedMenuItem::separator(app)?,
                    &MenuItem::with_id(app, OPEN, "Open Hooklab", true, None::<&str>)?,
                    &tray_copy,
                    &PredefinedMenuItem::separator(app)?,
                    &MenuItem::with_id(app, EXPORT, "Export database…", true, None::<&str>)?,
                    &MenuItem::with_id(app, IMPORT, "Import events…", true, None::<&str>)?,
                    &PredefinedMenuItem::separator(app)?,
                    &dead,
                    &invalid,
                    &PredefinedMenuItem::separator(app)?,
                    &MenuItem::with_id(app, QUIT, "Quit Hooklab", true, None::<&str>)?,
                ],
            )?;
            let mut tray = TrayIconBuilder::with_id("hooklab")
                .menu(&menu)
                .tooltip(lines.join("\n"))
                .title("Hooklab");
            if let Some(icon) = app.default_window_icon() {
                tray = tray.icon(icon.clone());
            }
            menus.tray = build_tray(app, tray);
        }
        Ok((menus, window_menu))
    }

    /// Shows a new status. On the GTK thread: elsewhere each change would wait for it.
    pub(crate) fn show_status(&self, status: &Status) {
        let url = status.public_url().map(str::to_string);
        for item in &self.copy {
            let _ = item.set_enabled(url.is_some());
        }
        *self.public_url.lock().unwrap_or_else(|e| e.into_inner()) = url;
        let lines = status.lines();
        for (item, line) in self.status.iter().zip(&lines) {
            let _ = item.set_text(line);
        }
        if let Some(tray) = &self.tray {
            let _ = tray.set_tooltip(Some(lines.join("\n")));
        }
    }

    /// A click on any of the menus' items (on the GTK thread).
    pub(crate) fn on_event(&self, app: &AppHandle, event: &MenuEvent) {
        let id = event.id().as_ref();
        match id.split_once('@').map_or(id, |(setting, _)| setting) {
            OPEN => {
                if let Some(window) = app.get_webview_window("main") {
                    let _ = window.show();
                    let _ = window.unminimize();
                    let _ = window.set_focus();
                }
            }
            COPY_URL => {
                let url = self
                    .public_url
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                if let Some(url) = url {
                    copy_to_clipboard(&url);
                }
            }
            EXPORT => self.transfer(app, Direction::Export),
            IMPORT => self.transfer(app, Direction::Import),
            setting @ (NOTIFY_DEAD | NOTIFY_INVALID) => {
                // The clicked item toggled itself; its twin in the other menu follows it.
                let Some(on) = self
                    .checks
                    .iter()
                    .find(|c| c.id() == id)
                    .and_then(|c| c.is_checked().ok())
                else {
                    return;
                };
                let twins = self
                    .checks
                    .iter()
                    .filter(|c| c.id().as_ref().starts_with(&format!("{setting}@")));
                for item in twins {
                    let _ = item.set_checked(on);
                }
                self.prefs.update(true, |p| match setting {
                    NOTIFY_DEAD => p.notify.dead_letter = on,
                    _ => p.notify.invalid_signature = on,
                });
                tracing::info!(
                    "notifications `{setting}`: {}",
                    if on { "on" } else { "off" }
                );
            }
            // The same clean exit as SIGTERM (RunEvent::Exit shuts the runtime down).
            QUIT => app.exit(0),
            _ => {}
        }
    }

    fn transfer(&self, app: &AppHandle, direction: Direction) {
        #[cfg(target_os = "linux")]
        let parent = app
            .get_webview_window("main")
            .and_then(|w| w.gtk_window().ok());
        #[cfg(not(target_os = "linux"))]
        let parent = {
            let _ = app;
            None
        };
        crate::transfer::ask_and_run(parent, self.db.clone(), self.importer.clone(), direction);
    }
}

/// Puts `text` on the clipboard (GTK's, on the GTK thread; the app keeps serving it).
fn copy_to_clipboard(text: &str) {
    #[cfg(target_os = "linux")]
    {
        let clipboard = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD);
        clipboard.set_text(text);
        clipboard.store();
        tracing::info!("copied the public URL: {text}");
    }
    #[cfg(not(target_os = "linux"))]
    tracing::warn!("copying is only built for Linux; the public URL is {text}");
}
