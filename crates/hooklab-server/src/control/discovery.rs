//! The discovery file: how `hooklab tunnel status` (and other commands acting on a running
//! instance) find its control API. `listen` writes `<db>.control.json` beside the database,
//! readable by the user only (0600), and removes it on exit.
//!
//! ```json
//! {"pid": 4242, "url": "http://127.0.0.1:40123", "token": "…", "receiver": "http://127.0.0.1:8787"}
//! ```

use super::ControlToken;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where a running instance's control API is. `Debug` redacts the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    pub pid: u32,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub token: ControlToken,
    /// The receiver's local base URL.
    pub receiver: String,
}

/// `<db>.control.json`.
pub fn path_beside(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".control.json");
    PathBuf::from(name)
}

impl Discovery {
    /// Writes the file readable and writable by the owner only, replacing a stale one.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path)?;
        file.write_all(&text)?;
        file.sync_all()
    }

    /// Reads a discovery file.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        let text = std::fs::read(path)?;
        serde_json::from_slice(&text)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }

    /// Removes the file if it is still ours (another instance may have replaced it).
    pub fn remove(&self, path: &Path) {
        if Self::read(path).is_ok_and(|on_disk| on_disk == *self) {
            let _ = std::fs::remove_file(path);
        }
    }
}
