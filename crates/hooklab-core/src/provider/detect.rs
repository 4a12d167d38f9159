//! PLACEHOLDER
use super::ProviderId;
use crate::request::RawRequest;
/// Guesses the provider that sent `req` from its distinctive headers.
pub fn detect(_req: &RawRequest) -> Option<ProviderId> { None }
