//! "Export database…" and "Import events…": native file dialogs (GTK's, already linked by
//! Tauri) around the same core code as `hooklab export` and `hooklab import`
//! (`hooklab_core::store::sqlite::transfer`): JSON Lines, every table, ids kept. The work runs
//! off the GTK thread; its outcome is shown in a message dialog.

use anyhow::Context as _;
use hooklab_core::store::sqlite::transfer as core;
use std::io::{BufReader, BufWriter, Write as _};
use std::path::{Path, PathBuf};

/// Writes `hooklab export`'s JSON Lines of the database at `db` to `to`: into a temporary file
/// beside it, renamed over `to` once complete (a failed export leaves no half file).
pub(crate) fn export_to(db: &Path, to: &Path) -> anyhow::Result<u64> {
    let partial = to.with_extension("partial");
    let written = (|| {
        let mut out = BufWriter::new(std::fs::File::create(&partial)?);
        let rows = core::export(db, &mut out)?;
        out.flush()?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&partial, to)?;
        anyhow::Ok(rows)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written.with_context(|| format!("cannot export {} to {}", db.display(), to.display()))
}

/// Reads an export (`hooklab export`'s JSON Lines) into the database at `db`, which the core
/// accepts only while it holds no rows (all or nothing).
pub(crate) fn import_from(db: &Path, from: &Path) -> anyhow::Result<u64> {
    let mut input = BufReader::new(
        std::fs::File::open(from).with_context(|| format!("cannot read {}", from.display()))?,
    );
    core::import(db, &mut input)
        .with_context(|| format!("cannot import {} into {}", from.display(), db.display()))
}

/// Which of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Export,
    Import,
}

/// Asks for a file, then exports or imports in the background and says how it went.
/// Must run on the GTK thread (menu events do).
#[cfg(target_os = "linux")]
pub(crate) fn ask_and_run(
    parent: Option<gtk::ApplicationWindow>,
    db: PathBuf,
    direction: Direction,
) {
    use gtk::prelude::*;
    use std::cell::RefCell;

    thread_local! {
        /// The open dialog, kept alive until it answers (one at a time).
        static OPEN: RefCell<Option<gtk::FileChooserNative>> = const { RefCell::new(None) };
    }
    if OPEN.with(|open| open.borrow().is_some()) {
        return;
    }
    let (title, action, accept) = match direction {
        Direction::Export => (
            "Export the database",
            gtk::FileChooserAction::Save,
            "_Export",
        ),
        Direction::Import => ("Import events", gtk::FileChooserAction::Open, "_Import"),
    };
    let dialog = gtk::FileChooserNative::new(
        Some(title),
        parent.as_ref(),
        action,
        Some(accept),
        Some("_Cancel"),
    );
    dialog.set_modal(true);
    let filter = gtk::FileFilter::new();
    filter.set_name(Some("Hooklab export (JSON Lines)"));
    filter.add_pattern("*.jsonl");
    filter.add_pattern("*.json");
    dialog.add_filter(filter);
    let all = gtk::FileFilter::new();
    all.set_name(Some("All files"));
    all.add_pattern("*");
    dialog.add_filter(all);
    if direction == Direction::Export {
        dialog.set_do_overwrite_confirmation(true);
        dialog.set_current_name("hooklab-export.jsonl");
    }
    dialog.connect_response(move |dialog, response| {
        let chosen = (response == gtk::ResponseType::Accept)
            .then(|| dialog.filename())
            .flatten();
        OPEN.with(|open| open.borrow_mut().take());
        let Some(path) = chosen else { return };
        let db = db.clone();
        let parent = parent.clone();
        // The work runs on its own thread; its answer comes back to the GTK thread.
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("hooklab-transfer".into())
            .spawn(move || {
                let outcome = match direction {
                    Direction::Export => export_to(&db, &path)
                        .map(|n| format!("Exported {n} rows to {}.", path.display())),
                    Direction::Import => import_from(&db, &path)
                        .map(|n| format!("Imported {n} rows from {}.", path.display())),
                };
                let _ = tx.send(outcome.map_err(|e| format!("{e:#}")));
            });
        if let Err(e) = spawned {
            tell(
                parent.as_ref(),
                Err(format!("cannot start the transfer: {e}")),
            );
            return;
        }
        gtk::glib::timeout_add_local(std::time::Duration::from_millis(100), move || {
            match rx.try_recv() {
                Ok(outcome) => {
                    tell(parent.as_ref(), outcome);
                    gtk::glib::ControlFlow::Break
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => gtk::glib::ControlFlow::Continue,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => gtk::glib::ControlFlow::Break,
            }
        });
    });
    dialog.show();
    OPEN.with(|open| *open.borrow_mut() = Some(dialog));
}

/// A message dialog with the outcome (text only: no markup).
#[cfg(target_os = "linux")]
fn tell(parent: Option<&gtk::ApplicationWindow>, outcome: Result<String, String>) {
    use gtk::prelude::*;
    let (kind, text) = match &outcome {
        Ok(done) => (gtk::MessageType::Info, done.as_str()),
        Err(why) => (gtk::MessageType::Error, why.as_str()),
    };
    match &outcome {
        Ok(done) => tracing::info!("{done}"),
        Err(why) => tracing::warn!("{why}"),
    }
    let dialog = gtk::MessageDialog::new(
        parent,
        gtk::DialogFlags::MODAL | gtk::DialogFlags::DESTROY_WITH_PARENT,
        kind,
        gtk::ButtonsType::Close,
        text,
    );
    dialog.set_title("Hooklab");
    dialog.connect_response(|dialog, _| dialog.close());
    dialog.show();
}

/// Elsewhere there are no dialogs yet: the CLI's `hooklab export` / `hooklab import` do it.
#[cfg(not(target_os = "linux"))]
pub(crate) fn ask_and_run(_parent: Option<()>, _db: PathBuf, direction: Direction) {
    tracing::warn!(
        "{direction:?}: file dialogs are only built for Linux; use `hooklab export` / `hooklab import`"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooklab_core::store::Store as _;

    async fn one_delivery(db: &Path) {
        let store = hooklab_core::store::sqlite::SqliteStore::open(db).unwrap();
        let body = b"{\"id\":\"evt_1\"}".to_vec();
        let delivery = hooklab_core::store::NewDelivery {
            received_at: hooklab_core::clock::UnixMillis(1_750_000_000_123),
            source: "stripe".into(),
            provider: "stripe".parse().ok(),
            method: "POST".into(),
            path: "/stripe".into(),
            query: None,
            headers: vec![hooklab_core::request::Header::new(
                "Content-Type",
                "application/json",
            )],
            body_size: body.len() as u64,
            body,
            body_refused: false,
            remote_addr: None,
            verdict: hooklab_core::verdict::Verdict::valid(0, None, "signature matches".into()),
            metadata: Default::default(),
            response_status: 200,
            idempotency: None,
            enqueue: false,
        };
        store.record(delivery).await.unwrap();
    }

    #[tokio::test]
    async fn export_then_import_moves_the_database_with_the_clis_code() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("hooklab.db");
        one_delivery(&db).await;
        let file = dir.path().join("out.jsonl");
        let rows = export_to(&db, &file).unwrap();
        assert!(rows >= 1);
        assert!(!file.with_extension("partial").exists());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("{\"hooklab_export\":1,"), "{text}");
        assert_eq!(text.lines().count() as u64, rows + 1);

        let fresh = dir.path().join("fresh.db");
        assert_eq!(import_from(&fresh, &file).unwrap(), rows);
        let copy = hooklab_core::store::sqlite::SqliteStore::open_read_only(&fresh).unwrap();
        let listed = copy.list(&Default::default()).unwrap();
        assert_eq!(listed.len(), 1);

        // The core refuses a database that holds rows; the message says why.
        let err = format!("{:#}", import_from(&db, &file).unwrap_err());
        assert!(err.contains("already holds data"), "{err}");
        // A failed export leaves nothing behind.
        let nowhere = dir.path().join("missing-dir").join("out.jsonl");
        assert!(export_to(&db, &nowhere).is_err());
        assert!(!nowhere.with_extension("partial").exists());
    }
}
