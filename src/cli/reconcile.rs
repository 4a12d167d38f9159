//! `hooklab reconcile`: ask the providers' APIs for the truth about stuck objects.

use super::DbArg;
use clap::Args;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  STRIPE_SECRET_KEY=sk_test_... hooklab reconcile --older-than 10m\n  hooklab reconcile --stripe-api http://127.0.0.1:12111 --stripe-key sk_test_x --json\n\nOnly HTTP API URLs work for now (TLS is not built in): point --stripe-api or\n--mercadopago-api at a local proxy or a stand-in such as stripe-mock."
)]
pub(crate) struct ReconcileArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    #[command(flatten)]
    pub(crate) apis: ApiArgs,
    /// Only objects not updated for this long (e.g. `30s`, `10m`, `2h`).
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub(crate) older_than: String,
    /// A JSON report instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The provider APIs to reconcile against (shared by `reconcile` and `listen`).
#[derive(Debug, Args)]
pub(crate) struct ApiArgs {
    /// Stripe secret key (sk_…), for PaymentIntents and event gap detection.
    #[arg(
        long,
        env = "STRIPE_SECRET_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub(crate) stripe_key: Option<String>,
    /// Stripe's API base URL.
    #[arg(long, default_value = "https://api.stripe.com", value_name = "URL")]
    pub(crate) stripe_api: String,
    /// Mercado Pago access token, for payments.
    #[arg(
        long,
        env = "MERCADOPAGO_ACCESS_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub(crate) mercadopago_token: Option<String>,
    /// Mercado Pago's API base URL.
    #[arg(
        long,
        default_value = "https://api.mercadopago.com",
        value_name = "URL"
    )]
    pub(crate) mercadopago_api: String,
}
