//! A secret that never shows itself: `Debug` and `Display` print `Secret(***)`, and it is not
//! `Serialize`, so it cannot leak into logs, JSON output or exports by accident.

/// A configured signing secret (or, for Ed25519 providers, a public key; for token providers,
/// the expected token), exactly as the user typed it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret in clear. Call sites are the providers' key derivation and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_and_display_redact() {
        let s = super::Secret::new("whsec_supersecret");
        assert!(!format!("{s:?} {s}").contains("supersecret"));
    }
}
