//! Retry schedules that mirror what each provider does, with where each comes from (the design's
//! PROVIDERS.md and the providers' docs, also listed in docs/forwarding.md). Approximations are
//! marked: several providers publish only "exponential backoff over N hours".

use super::DEFAULT_FORWARD_SCHEDULE;

/// A named schedule mirroring what a provider does, with where that comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name accepted by [`RetrySchedule::parse`].
    pub name: &'static str,
    /// The delays, in the [`RetrySchedule::parse`] syntax.
    pub delays: &'static str,
    /// Where the schedule comes from (docs/providers.md and the design's PROVIDERS.md).
    pub source: &'static str,
    /// The provider publishes no exact schedule: these delays approximate what it says.
    pub approximate: bool,
}

/// Every preset. Sources say "after N" for delays and "at N" for times since the first
/// attempt; times are turned into delays here.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "default",
        delays: DEFAULT_FORWARD_SCHEDULE,
        source: "Hooklab's forward default: quick at first, then patient (about 13 min)",
        approximate: false,
    },
    Preset {
        name: "none",
        delays: "",
        source: "a single attempt, then the dead-letter queue",
        approximate: false,
    },
    Preset {
        name: "stripe",
        delays: "5m,25m,90m,2h,4h,8h,8h,24h,24h",
        source: "Stripe docs: live mode retries for up to 3 days with exponential backoff; times \
                 observed by third parties: 5 min, 30 min, 2 h, 4 h, 8 h, 16 h, then about daily \
                 to 72 h",
        approximate: true,
    },
    Preset {
        name: "standard-webhooks",
        delays: "5s,5m,30m,2h,5h,10h,14h,20h,24h",
        source: "Standard Webhooks spec: attempts immediately, then after 5 s, 5 min, 30 min, \
                 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (\"immediately\" is the first attempt)",
        approximate: false,
    },
    Preset {
        name: "svix",
        delays: "5s,5m,30m,2h,5h,10h,14h,20h,24h",
        source: "Svix follows the Standard Webhooks schedule",
        approximate: false,
    },
    Preset {
        name: "resend",
        delays: "5s,5m,30m,2h,5h,10h,10h",
        source: "Resend docs: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h",
        approximate: false,
    },
    Preset {
        name: "shopify",
        delays: "1m,2m,4m,8m,15m,30m,1h,2h",
        source: "Shopify changelog (2024-09-10): 8 retries over 4 hours with exponential \
                 backoff; the intervals are not published",
        approximate: true,
    },
    Preset {
        name: "slack",
        delays: "0s,1m,5m",
        source: "Slack Events API: 3 retries, almost immediately, after about 1 min and about \
                 5 min",
        approximate: true,
    },
    Preset {
        name: "github",
        delays: "",
        source: "GitHub docs: failed deliveries are not redelivered automatically",
        approximate: false,
    },
    Preset {
        name: "paddle",
        delays: "3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,3m,\
                 105m,105m,105m,105m,105m,105m,105m,105m,105m,105m,\
                 105m,105m,105m,105m,105m,105m,105m,105m,105m,105m,\
                 105m,105m,105m,105m,105m,105m,105m,105m,105m,105m,\
                 105m,105m,105m,105m,105m,105m,105m,105m,105m,105m",
        source: "Paddle Billing (secondary): live accounts retry 60 times over 3 days, 20 of \
                 them in the first hour; spread evenly within each part here",
        approximate: true,
    },
    Preset {
        name: "razorpay",
        delays: "1m,5m,15m,30m,1h,2h,4h,8h,8h",
        source: "Razorpay docs: exponential backoff for 24 hours after the event; the \
                 intervals are not published",
        approximate: true,
    },
    Preset {
        name: "wompi",
        delays: "30m,150m,21h",
        source: "Wompi docs (Eventos): at most 3 retries within 24 h, at 30 min, 3 h and 24 h \
                 (read as times since the first attempt)",
        approximate: false,
    },
    Preset {
        name: "asaas",
        delays: "30s,1m,3.5m,5m,15m,25m,1h,1h,1h,1h,1h,1h,1h,3h",
        source: "Asaas docs (Queue penalty): 15 attempts with 30 s, 1 min, 3.5 min, 5 min, \
                 15 min, 25 min, 7 × 1 h, 3 h between them; then the webhook's queue pauses",
        approximate: false,
    },
    Preset {
        name: "mercadopago",
        delays: "15m,15m,330m,42h,48h",
        source: "Mercado Pago docs (notifications): retries at 15 min, 30 min, 6 h, 48 h and \
                 96 h after the first dispatch (another page of the docs says 5 min, 45 min, \
                 6 h, 2 d, 4 d)",
        approximate: false,
    },
];

pub(super) fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}
