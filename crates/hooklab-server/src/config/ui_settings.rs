//! The UI's own settings (today: its theme), kept in a file beside the database
//! (`<db>.ui.json`) and read and written through the control API. They survive a restart
//! whatever port the control API gets next; a browser's `localStorage` would not, since it is
//! kept per origin, port included (and the desktop app's webview keeps nothing on disk).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The UI's colours.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// The system's choice (`prefers-color-scheme`).
    #[default]
    Auto,
    Light,
    Dark,
}

/// What the UI remembers between runs.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    #[serde(default)]
    pub theme: Theme,
}

/// `<db>.ui.json`.
pub fn path_beside(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".ui.json");
    PathBuf::from(name)
}

/// The settings in `path`: the defaults when the file does not exist. A file that cannot be
/// read or parsed is an error the caller reports (it is not overwritten behind the user's back
/// until the UI saves new settings).
pub fn load(path: &Path) -> Result<UiSettings, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not valid UI settings: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UiSettings::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes `settings` to `path` atomically (a temporary file renamed over it).
pub fn save(path: &Path, settings: &UiSettings) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(settings).map_err(std::io::Error::other)?;
    text.push(b'\n');
    super::write_atomically(path, &text, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_gives_the_defaults_and_a_save_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_beside(&dir.path().join("hooklab.db"));
        assert!(path.ends_with("hooklab.db.ui.json"));
        assert_eq!(load(&path), Ok(UiSettings { theme: Theme::Auto }));
        save(&path, &UiSettings { theme: Theme::Dark }).unwrap();
        assert_eq!(load(&path), Ok(UiSettings { theme: Theme::Dark }));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"theme\": \"dark\"\n}\n"
        );
    }

    #[test]
    fn a_spoiled_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db.ui.json");
        for spoiled in [
            "{\"theme\": \"purple\"}",
            "{\"theme\": \"dark\", \"x\": 1}",
            "nope",
        ] {
            std::fs::write(&path, spoiled).unwrap();
            let error = load(&path).unwrap_err();
            assert!(error.contains("h.db.ui.json"), "{error}");
        }
    }
}
