//! "Export database…" and "Import events…": native file dialogs (GTK's, already linked by
//! Tauri) around the library: the export is `hooklab export`'s code
//! (`hooklab_core::store::sqlite::transfer`: JSON Lines, every table, ids kept); the import is
//! `POST /api/import`'s ([`Receiver::import`]: HAR, curl, raw HTTP, Hooklab JSON or a provider's
//! event, each request recorded through the running receiver). The work runs off the GTK
//! thread; its outcome is shown in a message dialog.

use anyhow::Context as _;
use hooklab_core::store::sqlite::transfer as core;
use hooklab_core::verdict::Status;
use hooklab_server::receiver::Receiver;
use std::io::{BufWriter, Write as _};
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

/// Records captured files through the running receiver.
#[derive(Clone)]
pub(crate) struct Importer {
    receiver: Receiver,
    runtime: tokio::runtime::Handle,
}

impl Importer {
    pub(crate) fn new(receiver: Receiver, runtime: tokio::runtime::Handle) -> Self {
        Self { receiver, runtime }
    }

    /// Records every request of the captured file `from` (the code of `POST /api/import`);
    /// says what was recorded. Must not run on a runtime thread.
    pub(crate) fn import(&self, from: &Path) -> anyhow::Result<String> {
        let bytes =
            std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
        let (format, done) = self
            .runtime
            .block_on(self.receiver.import(&bytes, None, None))
            .with_context(|| format!("cannot import {}", from.display()))?;
        let valid = done.iter().filter(|d| d.verdict == Status::Valid).count();
        Ok(format!(
            "Imported {} request{} from {} (read as {format}): {valid} valid, {} not.",
            done.len(),
            if done.len() == 1 { "" } else { "s" },
            from.display(),
            done.len() - valid
        ))
    }
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
    importer: Importer,
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
    if direction == Direction::Export {
        filter.set_name(Some("Hooklab export (JSON Lines)"));
        filter.add_pattern("*.jsonl");
    } else {
        filter.set_name(Some("Captured events (HAR, curl, raw HTTP, JSON)"));
        for pattern in [
            "*.har", "*.json", "*.jsonl", "*.sh", "*.curl", "*.http", "*.txt",
        ] {
            filter.add_pattern(pattern);
        }
    }
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
        let importer = importer.clone();
        let parent = parent.clone();
        // The work runs on its own thread; its answer comes back to the GTK thread.
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("hooklab-transfer".into())
            .spawn(move || {
                let outcome = match direction {
                    Direction::Export => export_to(&db, &path)
                        .map(|n| format!("Exported {n} rows to {}.", path.display())),
                    Direction::Import => importer.import(&path),
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
        let mut input = std::io::BufReader::new(std::fs::File::open(&file).unwrap());
        assert_eq!(core::import(&fresh, &mut input).unwrap(), rows);
        let copy = hooklab_core::store::sqlite::SqliteStore::open_read_only(&fresh).unwrap();
        let listed = copy.list(&Default::default()).unwrap();
        assert_eq!(listed.len(), 1);

        // A failed export leaves nothing behind.
        let nowhere = dir.path().join("missing-dir").join("out.jsonl");
        assert!(export_to(&db, &nowhere).is_err());
        assert!(!nowhere.with_extension("partial").exists());
    }

    /// The menu's import: a captured raw HTTP request and a HAR file, recorded through a
    /// running receiver; a whole-database export is refused with what to do instead.
    #[test]
    fn import_records_captures_through_the_running_receiver() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = std::sync::Arc::new(
            hooklab_core::store::sqlite::SqliteStore::open(&dir.path().join("h.db")).unwrap(),
        );
        let config = hooklab_server::config::Config {
            port: 0,
            ..Default::default()
        };
        let running = runtime
            .block_on(hooklab_server::runtime::start(config, store.clone()))
            .unwrap();
        let importer = Importer::new(running.receiver().clone(), runtime.handle().clone());
        let http = dir.path().join("captured.http");
        std::fs::write(
            &http,
            b"POST /shop/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\na\xffbc",
        )
        .unwrap();
        let said = importer.import(&http).unwrap();
        assert!(said.starts_with("Imported 1 request from"), "{said}");
        assert!(said.contains("read as http"), "{said}");
        let listed = runtime.block_on(store.list(Default::default())).unwrap();
        assert_eq!(listed.len(), 1);
        let got = runtime.block_on(store.get(listed[0].id)).unwrap().unwrap();
        assert_eq!(got.record.body, b"a\xffbc", "byte-exact");
        assert_eq!(got.record.source, "shop");

        let export = dir.path().join("db.jsonl");
        export_to(&dir.path().join("h.db"), &export).unwrap();
        let refused = format!("{:#}", importer.import(&export).unwrap_err());
        assert!(refused.contains("new database"), "{refused}");
        runtime.block_on(running.shutdown()).unwrap();
    }
}
