//! What the desktop app remembers between runs, in one small JSON file (`window.json` in the
//! platform config folder, or `--window-state FILE`): the window's size and which native
//! notifications are on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Which events raise a native notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct NotifyPrefs {
    /// A job was given up and moved to the dead-letter queue: on by default (something the
    /// developer's app did not accept, and nothing retries it any more).
    pub(crate) dead_letter: bool,
    /// A delivery failed its signature check: off by default (expected while setting up a
    /// source; a flood of them is what the Live view is for).
    pub(crate) invalid_signature: bool,
}

impl Default for NotifyPrefs {
    fn default() -> Self {
        Self {
            dead_letter: true,
            invalid_signature: false,
        }
    }
}

/// The remembered state: the window's size (logical pixels) and the notification choices.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Prefs {
    pub(crate) width: f64,
    pub(crate) height: f64,
    #[serde(default)]
    pub(crate) notify: NotifyPrefs,
}

impl Default for Prefs {
    fn default() -> Self {
        Self {
            width: 1280.0,
            height: 800.0,
            notify: NotifyPrefs::default(),
        }
    }
}

impl Prefs {
    /// The remembered state, or the default (also for a missing or unreadable file); an absurd
    /// size is replaced by the default size.
    pub(crate) fn load(path: Option<&Path>) -> Self {
        let Some(mut prefs) = path
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice::<Self>(&bytes).ok())
        else {
            return Self::default();
        };
        if !((720.0..=16384.0).contains(&prefs.width) && (480.0..=16384.0).contains(&prefs.height))
        {
            prefs.width = Self::default().width;
            prefs.height = Self::default().height;
        }
        prefs
    }

    pub(crate) fn save(&self, path: &Path) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(bytes) = serde_json::to_vec(self) {
            if let Err(e) = std::fs::write(path, bytes) {
                tracing::warn!(
                    "cannot remember the desktop settings in {}: {e}",
                    path.display()
                );
            }
        }
    }
}

/// The preferences shared by the window, the tray and the notifier; saved on every change of a
/// notification choice and on exit.
#[derive(Debug, Clone)]
pub(crate) struct SharedPrefs {
    prefs: Arc<Mutex<Prefs>>,
    path: Option<PathBuf>,
}

impl SharedPrefs {
    pub(crate) fn new(prefs: Prefs, path: Option<PathBuf>) -> Self {
        Self {
            prefs: Arc::new(Mutex::new(prefs)),
            path,
        }
    }

    pub(crate) fn get(&self) -> Prefs {
        *self.prefs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the preferences; `persist` writes them to the file at once.
    pub(crate) fn update(&self, persist: bool, change: impl FnOnce(&mut Prefs)) -> Prefs {
        let mut prefs = self.prefs.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut prefs);
        let now = *prefs;
        drop(prefs);
        if persist {
            self.save();
        }
        now
    }

    pub(crate) fn save(&self) {
        if let Some(path) = &self.path {
            self.get().save(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_file_with_only_the_size_keeps_it_and_gets_default_notifications() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("window.json");
        std::fs::write(&path, r#"{"width": 900.0, "height": 640.0}"#).unwrap();
        let prefs = Prefs::load(Some(&path));
        assert_eq!((prefs.width, prefs.height), (900.0, 640.0));
        assert_eq!(prefs.notify, NotifyPrefs::default());
        assert!(prefs.notify.dead_letter && !prefs.notify.invalid_signature);
    }

    #[test]
    fn notification_choices_survive_a_save_and_an_absurd_size_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("window.json");
        let shared = SharedPrefs::new(
            Prefs {
                width: 50.0,
                height: 40_000.0,
                notify: NotifyPrefs::default(),
            },
            Some(path.clone()),
        );
        shared.update(true, |p| {
            p.notify.invalid_signature = true;
            p.notify.dead_letter = false;
        });
        let loaded = Prefs::load(Some(&path));
        assert_eq!(
            loaded.notify,
            NotifyPrefs {
                dead_letter: false,
                invalid_signature: true
            }
        );
        assert_eq!((loaded.width, loaded.height), (1280.0, 800.0));
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(Prefs::load(Some(&path)), Prefs::default());
    }
}
