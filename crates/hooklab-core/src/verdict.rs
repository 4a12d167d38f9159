//! The verdict on a delivery's signature: `valid`, `invalid` or `unsigned`, a machine-readable
//! reason, and, on a failure, a diagnosis in plain words that says what to fix.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Valid,
    Invalid,
    /// No secret configured, or a provider/route that does not sign.
    Unsigned,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::Invalid => "invalid",
            Status::Unsigned => "unsigned",
        }
    }
}

impl std::str::FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "valid" => Ok(Status::Valid),
            "invalid" => Ok(Status::Invalid),
            "unsigned" => Ok(Status::Unsigned),
            other => Err(format!(
                "unknown verdict `{other}`; expected valid, invalid or unsigned"
            )),
        }
    }
}

/// Why a delivery is not `valid`. Stable snake_case strings for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// No secret is configured for the source.
    NoSecret,
    /// The provider, or this route of it, does not sign (e.g. Mollie classic webhooks).
    NotSigned,
    MissingHeader,
    MalformedHeader,
    MalformedBody,
    /// A URL-signed provider without a URL to verify against.
    MissingUrl,
    /// Every configured secret failed to become a key (e.g. not valid base64).
    InvalidSecret,
    TimestampTooOld,
    TimestampInFuture,
    SignatureMismatch,
    /// The request was refused before verification (too large, unknown source).
    NotVerified,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NoSecret => "no_secret",
            Reason::NotSigned => "not_signed",
            Reason::MissingHeader => "missing_header",
            Reason::MalformedHeader => "malformed_header",
            Reason::MalformedBody => "malformed_body",
            Reason::MissingUrl => "missing_url",
            Reason::InvalidSecret => "invalid_secret",
            Reason::TimestampTooOld => "timestamp_too_old",
            Reason::TimestampInFuture => "timestamp_in_future",
            Reason::SignatureMismatch => "signature_mismatch",
            Reason::NotVerified => "not_verified",
        }
    }
}

/// The best explanation found for a failure, by trying alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Finding {
    /// The signature matches a secret configured elsewhere (another source / endpoint).
    OtherSecret { label: String },
    /// The signature matches this source's secret read in another format.
    SecretFormat { secret_index: usize, format: String },
    /// Authentic, but the timestamp is outside the tolerance by `by_secs`.
    OutsideTolerance {
        secret_index: usize,
        age_secs: i64,
        by_secs: i64,
    },
    /// Authentic over a re-serialised body: something re-encoded the payload in transit.
    BodyReencoded {
        secret_index: usize,
        variant: String,
    },
    /// Authentic over another form of the URL (port, scheme, public vs local URL).
    UrlVariant { secret_index: usize, url: String },
    /// The request looks like it came from another provider.
    OtherProvider { provider: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnosis {
    /// What was found, for machines; `None` when no alternative explained the failure.
    pub finding: Option<Finding>,
    /// The explanation and what to do, in plain words.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub verdict: Status,
    /// `None` when valid.
    pub reason: Option<Reason>,
    /// Which configured secret matched (0-based), for rotation.
    pub matched_secret: Option<usize>,
    /// The signed timestamp, in Unix seconds, when the scheme has one.
    pub signed_at: Option<i64>,
    /// One line for humans: what happened.
    pub summary: String,
    /// On a failure: why, and what to fix.
    pub diagnosis: Option<Diagnosis>,
}

impl Verdict {
    pub fn is_valid(&self) -> bool {
        self.verdict == Status::Valid
    }

    pub fn valid(matched_secret: usize, signed_at: Option<i64>, summary: String) -> Self {
        Self {
            verdict: Status::Valid,
            reason: None,
            matched_secret: Some(matched_secret),
            signed_at,
            summary,
            diagnosis: None,
        }
    }

    pub fn unsigned(reason: Reason, summary: impl Into<String>) -> Self {
        Self {
            verdict: Status::Unsigned,
            reason: Some(reason),
            matched_secret: None,
            signed_at: None,
            summary: summary.into(),
            diagnosis: None,
        }
    }

    pub fn invalid(reason: Reason, summary: impl Into<String>) -> Self {
        Self {
            verdict: Status::Invalid,
            reason: Some(reason),
            matched_secret: None,
            signed_at: None,
            summary: summary.into(),
            diagnosis: None,
        }
    }

    /// For requests refused before verification (unknown source, body too large).
    pub fn not_verified(summary: impl Into<String>) -> Self {
        Self::unsigned(Reason::NotVerified, summary)
    }
}
