//! Sources added or edited in the UI, kept in a file beside the database
//! (`<db>.sources.toml`, readable by its owner only: it holds secrets). Same TOML as the
//! configuration's `[[source]]` tables, so it can be read, edited or moved into a config file
//! by hand. Sources from the configuration file or `--source` flags are never written here.

use super::{Config, ConfigError, SourceConfig};
use std::path::{Path, PathBuf};

/// `<db>.sources.toml`.
pub fn path_beside(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".sources.toml");
    PathBuf::from(name)
}

/// The sources in `path`; none when the file does not exist.
pub fn load(path: &Path) -> Result<Vec<SourceConfig>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ConfigError::invalid(
                path.display().to_string(),
                format!("cannot read it: {e}"),
            ));
        }
    };
    Ok(Config::from_toml_str(&text)?.sources)
}

/// Writes `sources` to `path` atomically (a temporary file renamed over it), mode 0600.
pub fn save(path: &Path, sources: &[SourceConfig]) -> std::io::Result<()> {
    let mut text = String::from(
        "# Sources added in Hooklab's UI. This file holds their secrets: keep it private.\n\
         # Same format as a configuration file's [[source]] tables.\n",
    );
    for source in sources {
        let mut table = toml::map::Map::new();
        table.insert("name".into(), source.name.clone().into());
        table.insert("provider".into(), source.provider.as_str().into());
        let secrets: Vec<toml::Value> = source
            .secrets
            .iter()
            .map(|s| s.expose().to_string().into())
            .collect();
        table.insert("secrets".into(), toml::Value::Array(secrets));
        if let Some(tolerance) = source.tolerance {
            table.insert(
                "tolerance".into(),
                i64::try_from(tolerance).unwrap_or(i64::MAX).into(),
            );
        }
        let mut response = toml::map::Map::new();
        response.insert("status".into(), i64::from(source.response.status).into());
        response.insert(
            "delay_ms".into(),
            i64::try_from(source.response.delay_ms)
                .unwrap_or(i64::MAX)
                .into(),
        );
        table.insert("response".into(), toml::Value::Table(response));
        if let Some(target) = &source.forward_to {
            table.insert("forward_to".into(), target.clone().into());
        }
        let mut doc = toml::map::Map::new();
        doc.insert(
            "source".into(),
            toml::Value::Array(vec![toml::Value::Table(table)]),
        );
        text.push('\n');
        text.push_str(&toml::to_string(&toml::Value::Table(doc)).map_err(std::io::Error::other)?);
    }
    super::write_atomically(path, text.as_bytes(), Some(0o600))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooklab_core::provider::ProviderId;
    use hooklab_core::secret::Secret;

    #[test]
    fn sources_round_trip_through_the_file_privately() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_beside(&dir.path().join("hooklab.db"));
        assert!(load(&path).unwrap().is_empty(), "no file: no sources");
        let mut a = SourceConfig::new(
            "shop",
            ProviderId::Shopify,
            vec![Secret::new("s1"), Secret::new("s\"2")],
        );
        a.tolerance = Some(60);
        a.response.status = 202;
        a.response.delay_ms = 1500;
        let b = SourceConfig::new("gh", ProviderId::Github, vec![]);
        save(&path, &[a, b]).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].name, "shop");
        assert_eq!(loaded[0].provider, ProviderId::Shopify);
        let secrets: Vec<&str> = loaded[0].secrets.iter().map(Secret::expose).collect();
        assert_eq!(secrets, ["s1", "s\"2"]);
        assert_eq!(loaded[0].tolerance, Some(60));
        assert_eq!(
            (loaded[0].response.status, loaded[0].response.delay_ms),
            (202, 1500)
        );
        assert!(loaded[1].secrets.is_empty());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "secrets stay private");
        }
    }
}
