//! Verification: a pure function of (source configuration, request, now) → [`Verdict`].
//!
//! The provider's [`Scheme`](crate::provider::Scheme) says whether a key matches and what
//! timestamp was signed; this module tries every configured secret (rotation), applies the
//! tolerance, and on a failure asks [`crate::diagnose`] for the best explanation.

use crate::clock::UnixMillis;
use crate::diagnose;
use crate::provider::{self, CheckError, ProviderId, ProviderOptions, Scheme, Tolerance};
use crate::request::RawRequest;
use crate::secret::Secret;
use crate::verdict::{Reason, Verdict};

/// What a source knows to verify its deliveries.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub provider: ProviderId,
    pub options: ProviderOptions,
    /// Every secret currently accepted (several during a rotation). Order matters only for
    /// reporting which one matched.
    pub secrets: Vec<Secret>,
    /// A tolerance in seconds replacing the provider's default magnitude (0 disables it).
    pub tolerance_secs: Option<u64>,
    /// Secrets of *other* sources, labelled, used only to explain a mismatch ("this was signed
    /// with the secret of source `github-prod`").
    pub other_secrets: Vec<(String, Secret)>,
    /// Other URLs this request could have been signed against (the local URL when `url` is the
    /// public one, and vice versa), used only to explain a mismatch.
    pub alt_urls: Vec<String>,
}

impl VerifyConfig {
    pub fn new(provider: ProviderId, secrets: Vec<Secret>) -> Self {
        Self {
            provider,
            options: ProviderOptions::default(),
            secrets,
            tolerance_secs: None,
            other_secrets: Vec::new(),
            alt_urls: Vec::new(),
        }
    }

    /// The tolerance in force: the provider's default directions with the configured magnitude.
    pub fn tolerance(&self, default: Tolerance) -> Tolerance {
        match self.tolerance_secs {
            Some(secs) => default.with_secs(secs),
            None => default,
        }
    }
}

/// Where a signed timestamp stands against the tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeCheck {
    Within,
    /// Older than allowed by this many milliseconds.
    TooOld {
        by_ms: i64,
    },
    /// Further in the future than allowed by this many milliseconds.
    InFuture {
        by_ms: i64,
    },
}

/// Applies `tolerance` to a signed timestamp. Boundaries are inclusive, as in the SDKs.
pub fn time_check(tolerance: Tolerance, signed: UnixMillis, now: UnixMillis) -> TimeCheck {
    let age = i128::from(now.0) - i128::from(signed.0);
    let clamp = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
    if let Some(past) = tolerance.past_secs {
        let limit = i128::from(past) * 1000;
        if age > limit {
            return TimeCheck::TooOld {
                by_ms: clamp(age - limit),
            };
        }
    }
    if let Some(future) = tolerance.future_secs {
        let limit = i128::from(future) * 1000;
        if -age > limit {
            return TimeCheck::InFuture {
                by_ms: clamp(-age - limit),
            };
        }
    }
    TimeCheck::Within
}

/// Verifies `req` for a source configured by `config`, as of `now`.
pub fn verify(config: &VerifyConfig, req: &RawRequest, now: UnixMillis) -> Verdict {
    let scheme = match provider::scheme(config.provider, &config.options) {
        Ok(s) => s,
        Err(e) => {
            return Verdict::invalid(
                Reason::InvalidSecret,
                format!("the source's {} settings are invalid: {e}", config.provider),
            );
        }
    };
    verify_with(scheme.as_ref(), config, req, now)
}

/// [`verify`] with an already-built scheme (the receiver builds it once per source).
pub fn verify_with(
    scheme: &dyn Scheme,
    config: &VerifyConfig,
    req: &RawRequest,
    now: UnixMillis,
) -> Verdict {
    let info = scheme.info();
    if config.secrets.is_empty() {
        return Verdict::unsigned(
            Reason::NoSecret,
            format!(
                "not verified: no secret configured for this {} source",
                info.name
            ),
        );
    }
    let tolerance = config.tolerance(info.tolerance);

    let mut key_errors = Vec::new();
    let mut stale: Option<(usize, UnixMillis, TimeCheck)> = None;
    let mut signed_at = None;
    for (index, secret) in config.secrets.iter().enumerate() {
        let key = match scheme.key(secret) {
            Ok(k) => k,
            Err(e) => {
                key_errors.push((index, e));
                continue;
            }
        };
        let check = match scheme.check(req, &key) {
            Ok(c) => c,
            Err(e) => return check_error_verdict(&info.name, config, req, e),
        };
        signed_at = signed_at.or(check.timestamp);
        if !check.matched {
            continue;
        }
        let time = check
            .timestamp
            .map_or(TimeCheck::Within, |ts| time_check(tolerance, ts, now));
        if time == TimeCheck::Within {
            let which = if config.secrets.len() > 1 {
                format!(" with secret #{}", index + 1)
            } else {
                String::new()
            };
            return Verdict::valid(
                index,
                check.timestamp.map(UnixMillis::as_secs),
                format!("valid {} signature{which}", info.name),
            );
        }
        if stale.is_none() {
            stale = Some((index, check.timestamp.unwrap_or(now), time));
        }
    }

    if let Some((index, ts, time)) = stale {
        return diagnose::stale(index, ts, now, time, tolerance);
    }
    if key_errors.len() == config.secrets.len() {
        let (index, e) = &key_errors[0];
        let mut v = Verdict::invalid(
            Reason::InvalidSecret,
            format!(
                "secret #{} cannot be used as a {} key: {e}",
                index + 1,
                info.name
            ),
        );
        v.diagnosis = Some(diagnose::secret_unusable(scheme, config, req));
        return v;
    }
    let mut v = Verdict::invalid(
        Reason::SignatureMismatch,
        format!(
            "{} signature does not match {}",
            info.name,
            match config.secrets.len() {
                1 => "the configured secret".to_string(),
                n => format!("any of the {n} configured secrets"),
            }
        ),
    );
    v.signed_at = signed_at.map(UnixMillis::as_secs);
    v.diagnosis = Some(diagnose::mismatch(
        scheme, config, req, now, tolerance, signed_at,
    ));
    v
}

fn check_error_verdict(
    provider_name: &str,
    config: &VerifyConfig,
    req: &RawRequest,
    e: CheckError,
) -> Verdict {
    let (reason, unsigned) = match &e {
        CheckError::MissingHeader { .. } => (Reason::MissingHeader, false),
        CheckError::MalformedHeader { .. } => (Reason::MalformedHeader, false),
        CheckError::MalformedBody { .. } => (Reason::MalformedBody, false),
        CheckError::NotSigned { .. } => (Reason::NotSigned, true),
        CheckError::MissingUrl { .. } => (Reason::MissingUrl, false),
    };
    let summary = format!("{provider_name}: {e}");
    let mut v = if unsigned {
        Verdict::unsigned(reason, summary)
    } else {
        Verdict::invalid(reason, summary)
    };
    if !unsigned {
        v.diagnosis = Some(diagnose::unreadable(config, req, &e));
    }
    v
}
