//! Providers: one module each. A provider knows how its gateway signs a delivery (verify and
//! sign), how its secret is turned into key bytes, and where its metadata lives.
//!
//! Every provider implements [`Scheme`]. [`Scheme::check`] is a pure function of the request and
//! one key: it says whether the signature matches and what timestamp was signed. Tolerance,
//! secret rotation and diagnosis are applied once, generically, in [`crate::verify`].

mod common;
pub use common::{Digest, Encoding, SimpleHmac, ct_eq, hmac_digest};

mod adyen;
mod asaas;
mod detect;
mod discord;
mod generic_hmac;
mod github;
mod hotmart;
mod intercom;
mod lemonsqueezy;
mod linear;
mod mercadopago;
mod meta;
mod mollie;
mod nowpayments;
mod paddle;
mod pagarme;
mod razorpay;
mod shopify;
mod slack;
mod square;
mod standard_webhooks;
mod stripe;
mod token;
mod twilio;
mod twitch;
mod wompi;
mod zoom;

pub use detect::detect;
pub use generic_hmac::GenericHmacOptions;
pub use token::TokenOptions;

use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::request::RawRequest;
use crate::secret::Secret;
use serde::{Deserialize, Serialize};

/// Every provider Hooklab knows. The kebab-case names are the ids the CLI and config accept.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderId {
    Stripe,
    StandardWebhooks,
    Svix,
    Clerk,
    Resend,
    Supabase,
    Github,
    Slack,
    Shopify,
    Paddle,
    Twilio,
    Square,
    Mercadopago,
    Asaas,
    Wompi,
    Nowpayments,
    Razorpay,
    Lemonsqueezy,
    Linear,
    Zoom,
    Twitch,
    Discord,
    Adyen,
    AdyenBalance,
    Pagarme,
    Hotmart,
    Meta,
    Intercom,
    Mollie,
    GenericHmac,
    Token,
}

impl ProviderId {
    pub const ALL: [ProviderId; 31] = [
        Self::Stripe,
        Self::StandardWebhooks,
        Self::Svix,
        Self::Clerk,
        Self::Resend,
        Self::Supabase,
        Self::Github,
        Self::Slack,
        Self::Shopify,
        Self::Paddle,
        Self::Twilio,
        Self::Square,
        Self::Mercadopago,
        Self::Asaas,
        Self::Wompi,
        Self::Nowpayments,
        Self::Razorpay,
        Self::Lemonsqueezy,
        Self::Linear,
        Self::Zoom,
        Self::Twitch,
        Self::Discord,
        Self::Adyen,
        Self::AdyenBalance,
        Self::Pagarme,
        Self::Hotmart,
        Self::Meta,
        Self::Intercom,
        Self::Mollie,
        Self::GenericHmac,
        Self::Token,
    ];

    /// The id as the CLI and config spell it, e.g. `standard-webhooks`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stripe => "stripe",
            Self::StandardWebhooks => "standard-webhooks",
            Self::Svix => "svix",
            Self::Clerk => "clerk",
            Self::Resend => "resend",
            Self::Supabase => "supabase",
            Self::Github => "github",
            Self::Slack => "slack",
            Self::Shopify => "shopify",
            Self::Paddle => "paddle",
            Self::Twilio => "twilio",
            Self::Square => "square",
            Self::Mercadopago => "mercadopago",
            Self::Asaas => "asaas",
            Self::Wompi => "wompi",
            Self::Nowpayments => "nowpayments",
            Self::Razorpay => "razorpay",
            Self::Lemonsqueezy => "lemonsqueezy",
            Self::Linear => "linear",
            Self::Zoom => "zoom",
            Self::Twitch => "twitch",
            Self::Discord => "discord",
            Self::Adyen => "adyen",
            Self::AdyenBalance => "adyen-balance",
            Self::Pagarme => "pagarme",
            Self::Hotmart => "hotmart",
            Self::Meta => "meta",
            Self::Intercom => "intercom",
            Self::Mollie => "mollie",
            Self::GenericHmac => "generic-hmac",
            Self::Token => "token",
        }
    }
}

impl std::fmt::Display for ProviderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown provider id; its message lists the valid ones.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown provider `{0}`; expected one of: {list}", list = ProviderId::ALL.map(|p| p.as_str()).join(", "))]
pub struct UnknownProvider(pub String);

impl std::str::FromStr for ProviderId {
    type Err = UnknownProvider;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProvider(s.to_string()))
    }
}

/// How far a signed timestamp may be from "now". `None` on a side means unbounded on that side
/// (Stripe accepts future timestamps; Paddle too). Both `None`: the provider signs no time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Tolerance {
    /// How old (in seconds) a timestamp may be.
    pub past_secs: Option<u64>,
    /// How far in the future (in seconds) a timestamp may be.
    pub future_secs: Option<u64>,
}

impl Tolerance {
    pub const NONE: Tolerance = Tolerance {
        past_secs: None,
        future_secs: None,
    };
    pub const fn past_only(secs: u64) -> Self {
        Self {
            past_secs: Some(secs),
            future_secs: None,
        }
    }
    pub const fn both(secs: u64) -> Self {
        Self {
            past_secs: Some(secs),
            future_secs: Some(secs),
        }
    }
    /// The same directions with another magnitude (a user's `--tolerance`). Zero disables the
    /// check, as in Stripe's SDKs.
    pub fn with_secs(self, secs: u64) -> Self {
        if secs == 0 {
            return Self::NONE;
        }
        Self {
            past_secs: self.past_secs.map(|_| secs),
            future_secs: self.future_secs.map(|_| secs),
        }
    }
}

/// What `hooklab providers` prints: enough to configure a source without reading the docs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProviderInfo {
    pub id: ProviderId,
    /// Human name, e.g. "Stripe".
    pub name: String,
    /// Headers that carry the signature (and its timestamp / id), in the provider's spelling.
    pub headers: Vec<String>,
    /// e.g. `HMAC-SHA256`, `Ed25519`, `SHA-256`, `token`.
    pub algorithm: String,
    /// e.g. `hex`, `base64`.
    pub encoding: String,
    /// What is signed, e.g. `{timestamp}.{body}`.
    pub signed_payload: String,
    /// How the secret is read, e.g. "the whole `whsec_…` string, verbatim".
    pub secret_format: String,
    /// The official SDK's default tolerance.
    pub tolerance: Tolerance,
    /// Whether the signature covers the URL (so the public URL matters).
    pub signs_url: bool,
}

/// The result of checking one key against a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// Whether any signature in the request matches this key (timestamp not considered).
    pub matched: bool,
    /// The signed timestamp, when the scheme signs one; tolerance is applied by the caller.
    pub timestamp: Option<UnixMillis>,
}

/// Why a request could not be checked at all (before any key is tried).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("missing header `{header}`")]
    MissingHeader { header: String },
    #[error("malformed header `{header}`: {detail}")]
    MalformedHeader { header: String, detail: String },
    /// The signature or a signed field lives in the body and the body cannot be read as needed.
    #[error("malformed body: {detail}")]
    MalformedBody { detail: String },
    /// A route of this provider that is not signed (e.g. Mollie classic webhooks).
    #[error("not signed: {detail}")]
    NotSigned { detail: String },
    /// A URL-signed provider and no URL to check against.
    #[error("no URL to verify against: {detail}")]
    MissingUrl { detail: String },
}

/// A configured secret that cannot become a key (e.g. not base64 where base64 is required).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct KeyError {
    pub detail: String,
}

/// Signing failed (bad key, or the body lacks a field the provider signs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct SignError {
    pub detail: String,
}

impl From<KeyError> for SignError {
    fn from(e: KeyError) -> Self {
        Self { detail: e.detail }
    }
}

/// What to sign. Providers use what they need and ignore the rest.
#[derive(Debug, Clone)]
pub struct SignInput<'a> {
    pub body: &'a [u8],
    pub now: UnixMillis,
    /// The message / delivery id to sign (Standard Webhooks `webhook-id`, Twitch message id…);
    /// providers make one from the body's hash when it is `None`.
    pub id: Option<&'a str>,
    /// The absolute URL the request will be sent to (Twilio, Square, Mercado Pago).
    pub url: Option<&'a str>,
    /// The request's content type, where the scheme depends on it (Twilio form vs JSON).
    pub content_type: Option<&'a str>,
}

impl<'a> SignInput<'a> {
    pub fn new(body: &'a [u8], now: UnixMillis) -> Self {
        Self {
            body,
            now,
            id: None,
            url: None,
            content_type: None,
        }
    }
}

/// A signed request: the headers to add and, where the provider signs inside the body (Adyen,
/// Wompi) or the URL (Twilio JSON), the body or URL to send instead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signed {
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub url: Option<String>,
    /// Something the user should know (e.g. Discord: the public key to configure).
    pub note: Option<String>,
}

impl Signed {
    pub fn headers_as_pairs(&self) -> Vec<(String, Vec<u8>)> {
        self.headers
            .iter()
            .map(|(n, v)| (n.clone(), v.clone().into_bytes()))
            .collect()
    }
}

/// Per-source options for the configurable providers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderOptions {
    #[serde(default)]
    pub generic: Option<GenericHmacOptions>,
    #[serde(default)]
    pub token: Option<TokenOptions>,
}

/// One provider's signature scheme. Implementations are pure: no clock, no I/O.
pub trait Scheme: Send + Sync {
    fn info(&self) -> ProviderInfo;

    /// The key bytes for verification, derived from the secret as the provider's SDK does.
    fn key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        Ok(secret.expose().as_bytes().to_vec())
    }

    /// The key bytes for signing; differs from [`Scheme::key`] only for asymmetric schemes
    /// (Discord: the private seed signs, the public key verifies).
    fn signing_key(&self, secret: &Secret) -> Result<Vec<u8>, KeyError> {
        self.key(secret)
    }

    /// Whether any signature in `req` matches `key`, and the signed timestamp. Must never panic
    /// on any input, and must compare in constant time.
    fn check(&self, req: &RawRequest, key: &[u8]) -> Result<Check, CheckError>;

    /// Signs `input` with `key` as the provider would.
    fn sign(&self, input: &SignInput<'_>, key: &[u8]) -> Result<Signed, SignError>;

    /// Event id, type, object and provider time, where the provider has them.
    fn metadata(&self, req: &RawRequest) -> Metadata;
}

/// A configuration error for a source's provider (e.g. generic-hmac without a header name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The scheme for a provider with its options.
pub fn scheme(id: ProviderId, opts: &ProviderOptions) -> Result<Box<dyn Scheme>, ConfigError> {
    use standard_webhooks::{Flavor, StandardWebhooks};
    Ok(match id {
        ProviderId::Stripe => Box::new(stripe::Stripe),
        ProviderId::StandardWebhooks => Box::new(StandardWebhooks(Flavor::Standard)),
        ProviderId::Svix => Box::new(StandardWebhooks(Flavor::Svix)),
        ProviderId::Clerk => Box::new(StandardWebhooks(Flavor::Clerk)),
        ProviderId::Resend => Box::new(StandardWebhooks(Flavor::Resend)),
        ProviderId::Supabase => Box::new(StandardWebhooks(Flavor::Supabase)),
        ProviderId::Github => Box::new(github::Github),
        ProviderId::Slack => Box::new(slack::Slack),
        ProviderId::Shopify => Box::new(shopify::Shopify),
        ProviderId::Paddle => Box::new(paddle::Paddle),
        ProviderId::Twilio => Box::new(twilio::Twilio),
        ProviderId::Square => Box::new(square::Square),
        ProviderId::Mercadopago => Box::new(mercadopago::MercadoPago),
        ProviderId::Asaas => Box::new(asaas::Asaas),
        ProviderId::Wompi => Box::new(wompi::Wompi),
        ProviderId::Nowpayments => Box::new(nowpayments::NowPayments),
        ProviderId::Razorpay => Box::new(razorpay::Razorpay),
        ProviderId::Lemonsqueezy => Box::new(lemonsqueezy::LemonSqueezy),
        ProviderId::Linear => Box::new(linear::Linear),
        ProviderId::Zoom => Box::new(zoom::Zoom),
        ProviderId::Twitch => Box::new(twitch::Twitch),
        ProviderId::Discord => Box::new(discord::Discord),
        ProviderId::Adyen => Box::new(adyen::Adyen),
        ProviderId::AdyenBalance => Box::new(adyen::AdyenBalance),
        ProviderId::Pagarme => Box::new(pagarme::Pagarme),
        ProviderId::Hotmart => Box::new(hotmart::Hotmart),
        ProviderId::Meta => Box::new(meta::Meta),
        ProviderId::Intercom => Box::new(intercom::Intercom),
        ProviderId::Mollie => Box::new(mollie::Mollie),
        ProviderId::GenericHmac => Box::new(generic_hmac::GenericHmac::new(
            opts.generic.clone().unwrap_or_default(),
        )?),
        ProviderId::Token => Box::new(token::Token::new(opts.token.clone().unwrap_or_default())),
    })
}

/// Signs `input` for `id` with `secret` (convenience over [`scheme`]).
pub fn sign(
    id: ProviderId,
    opts: &ProviderOptions,
    secret: &Secret,
    input: &SignInput<'_>,
) -> Result<Signed, SignError> {
    let scheme = scheme(id, opts).map_err(|e| SignError { detail: e.0 })?;
    let key = scheme.signing_key(secret)?;
    scheme.sign(input, &key)
}

/// Every provider's description, in [`ProviderId::ALL`] order (default options).
pub fn catalog() -> Vec<ProviderInfo> {
    ProviderId::ALL
        .iter()
        .filter_map(|&id| scheme(id, &ProviderOptions::default()).ok())
        .map(|s| s.info())
        .collect()
}
