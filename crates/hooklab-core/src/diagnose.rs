//! Diagnosis: when a signature fails, find the best explanation the evidence supports by
//! trying alternatives, and say it in plain words.

use crate::clock::UnixMillis;
use crate::provider::{CheckError, Scheme, Tolerance};
use crate::request::RawRequest;
use crate::verdict::{Diagnosis, Verdict};
use crate::verify::{TimeCheck, VerifyConfig};

pub(crate) fn stale(
    _index: usize,
    _ts: UnixMillis,
    _now: UnixMillis,
    _time: TimeCheck,
    _tolerance: Tolerance,
) -> Verdict {
    Verdict::not_verified("TODO")
}

pub(crate) fn secret_unusable(
    _scheme: &dyn Scheme,
    _config: &VerifyConfig,
    _req: &RawRequest,
) -> Diagnosis {
    Diagnosis {
        finding: None,
        message: String::new(),
    }
}

pub(crate) fn mismatch(
    _scheme: &dyn Scheme,
    _config: &VerifyConfig,
    _req: &RawRequest,
    _now: UnixMillis,
    _tolerance: Tolerance,
    _signed_at: Option<UnixMillis>,
) -> Diagnosis {
    Diagnosis {
        finding: None,
        message: String::new(),
    }
}

pub(crate) fn unreadable(_config: &VerifyConfig, _req: &RawRequest, _e: &CheckError) -> Diagnosis {
    Diagnosis {
        finding: None,
        message: String::new(),
    }
}
