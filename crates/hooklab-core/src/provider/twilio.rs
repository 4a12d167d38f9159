//! PLACEHOLDER: replaced by the real provider module.
#![allow(dead_code)]
use super::{Check, CheckError, ProviderInfo, Scheme, SignError, SignInput, Signed, ProviderId, Tolerance};
use crate::metadata::Metadata;
use crate::request::RawRequest;

fn placeholder_info() -> ProviderInfo {
    ProviderInfo { id: ProviderId::Token, name: String::new(), headers: vec![], algorithm: String::new(), encoding: String::new(), signed_payload: String::new(), secret_format: String::new(), tolerance: Tolerance::NONE, signs_url: false }
}

pub(crate) struct Twilio;

impl Scheme for Twilio {
    fn info(&self) -> ProviderInfo {
        placeholder_info()
    }
    fn check(&self, _req: &RawRequest, _key: &[u8]) -> Result<Check, CheckError> {
        Err(CheckError::NotSigned { detail: "PLACEHOLDER".into() })
    }
    fn sign(&self, _input: &SignInput<'_>, _key: &[u8]) -> Result<Signed, SignError> {
        Err(SignError { detail: "PLACEHOLDER".into() })
    }
    fn metadata(&self, _req: &RawRequest) -> Metadata {
        Metadata::default()
    }
}
