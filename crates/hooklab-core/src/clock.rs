//! Time, passed in. Verification, tolerance, backoff and state machines take a [`UnixMillis`]
//! from the caller so that tests are exact and replays can verify "as of" another instant.

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch (UTC).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct UnixMillis(pub i64);

impl UnixMillis {
    /// From whole seconds (saturating on overflow, so absurd timestamps never panic).
    pub fn from_secs(secs: i64) -> Self {
        Self(secs.saturating_mul(1000))
    }

    /// Whole seconds, rounded toward negative infinity.
    pub fn as_secs(self) -> i64 {
        self.0.div_euclid(1000)
    }

    /// The current wall-clock time. Only binaries and the runtime wiring call this.
    pub fn now() -> Self {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    /// RFC 3339 in UTC with millisecond precision, e.g. `2026-11-30T06:15:43.123Z`.
    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        match time::OffsetDateTime::from_unix_timestamp_nanos(nanos) {
            Ok(t) => {
                let fmt = time::macros::format_description!(
                    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
                );
                t.format(&fmt).unwrap_or_else(|_| self.0.to_string())
            }
            Err(_) => self.0.to_string(),
        }
    }

    /// Parses RFC 3339 (any offset, any sub-second precision).
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        let t =
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
        i64::try_from(t.unix_timestamp_nanos() / 1_000_000)
            .ok()
            .map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip_keeps_millis() {
        let t = UnixMillis(1_700_000_000_123);
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123Z");
        assert_eq!(UnixMillis::parse_rfc3339(&t.to_rfc3339()), Some(t));
    }

    #[test]
    fn absurd_values_do_not_panic() {
        assert_eq!(UnixMillis::from_secs(i64::MAX).0, i64::MAX);
        let _ = UnixMillis(i64::MIN).to_rfc3339();
        assert_eq!(UnixMillis(-1).as_secs(), -1);
    }
}
