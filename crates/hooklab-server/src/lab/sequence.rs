//! Reorder presets: the events of ONE payment, stamped with realistic provider times in the
//! order they truly happened, then sent in the wrong order — as providers really deliver them
//! (a success before its creation, a refund before the success, a late failure after the
//! retry that succeeded). Through a Hooklab receiver, its state machine must park what comes
//! early, ignore what comes stale, and end in the [`Sequence::final_state`]; straight at an
//! app, the app must do the same.
//!
//! Each preset is written once over abstract moments ([`Moment`]); each provider maps the
//! moments to its own event types, statuses and time fields.

use super::LabError;
use super::events::{Override, generate};
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::ProviderId;
use hooklab_core::templates::TestEvent;
use serde_json::{Value, json};

/// A misordered sequence.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Created, then succeeded; sent: the success first.
    SuccessBeforeCreation,
    /// Created, succeeded, refunded; sent: the refund before the success.
    RefundBeforeSuccess,
    /// Created, failed, succeeded (a retry); sent: the failure last.
    FailureThenSuccess,
}

impl Preset {
    pub const ALL: [Preset; 3] = [
        Preset::SuccessBeforeCreation,
        Preset::RefundBeforeSuccess,
        Preset::FailureThenSuccess,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SuccessBeforeCreation => "success-before-creation",
            Self::RefundBeforeSuccess => "refund-before-success",
            Self::FailureThenSuccess => "failure-then-success",
        }
    }

    /// The moments in the order they happened.
    fn true_order(self) -> &'static [Moment] {
        match self {
            Self::SuccessBeforeCreation => &[Moment::Created, Moment::Succeeded],
            Self::RefundBeforeSuccess => &[Moment::Created, Moment::Succeeded, Moment::Refunded],
            Self::FailureThenSuccess => &[Moment::Created, Moment::Failed, Moment::Succeeded],
        }
    }

    /// The order they are sent in, as indexes into [`Preset::true_order`].
    fn send_order(self) -> &'static [usize] {
        match self {
            Self::SuccessBeforeCreation => &[1, 0],
            Self::RefundBeforeSuccess => &[0, 2, 1],
            Self::FailureThenSuccess => &[0, 2, 1],
        }
    }

    /// The moment the object must end at.
    fn last(self) -> Moment {
        match self {
            Self::SuccessBeforeCreation | Self::FailureThenSuccess => Moment::Succeeded,
            Self::RefundBeforeSuccess => Moment::Refunded,
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.as_str()).collect();
                format!("unknown preset `{s}` (one of: {})", names.join(", "))
            })
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A moment in a payment's life, before a provider names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    Created,
    Succeeded,
    Failed,
    Refunded,
}

/// One provider event: its type, the status its body carries, and the state its built-in
/// machine reads.
struct Step {
    event_type: &'static str,
    status: &'static str,
    state: &'static str,
}

const fn step(event_type: &'static str, status: &'static str, state: &'static str) -> Step {
    Step {
        event_type,
        status,
        state,
    }
}

/// The provider events of a moment (Paddle reaches `completed` through `paid`), or `None`
/// when the provider has no such moment on one object.
fn steps(provider: ProviderId, moment: Moment) -> Option<Vec<Step>> {
    use Moment::*;
    Some(match (provider, moment) {
        (ProviderId::Stripe, Created) => vec![step(
            "payment_intent.created",
            "requires_payment_method",
            "created",
        )],
        (ProviderId::Stripe, Succeeded) => {
            vec![step("payment_intent.succeeded", "succeeded", "succeeded")]
        }
        (ProviderId::Stripe, Failed) => vec![step(
            "payment_intent.payment_failed",
            "requires_payment_method",
            "payment_failed",
        )],
        (ProviderId::Stripe, Refunded) => vec![step("charge.refunded", "succeeded", "refunded")],
        (ProviderId::Mercadopago, Created) => vec![step("payment.created", "pending", "pending")],
        (ProviderId::Mercadopago, Succeeded) => {
            vec![step("payment.updated", "approved", "approved")]
        }
        (ProviderId::Mercadopago, Failed) => vec![step("payment.updated", "rejected", "rejected")],
        (ProviderId::Mercadopago, Refunded) => {
            vec![step("payment.updated", "refunded", "refunded")]
        }
        (ProviderId::Asaas, Created) => vec![step("PAYMENT_CREATED", "PENDING", "pending")],
        (ProviderId::Asaas, Succeeded) => vec![step("PAYMENT_RECEIVED", "RECEIVED", "received")],
        (ProviderId::Asaas, Failed) => vec![step("PAYMENT_OVERDUE", "OVERDUE", "overdue")],
        (ProviderId::Asaas, Refunded) => vec![step("PAYMENT_REFUNDED", "REFUNDED", "refunded")],
        (ProviderId::Paddle, Created) => vec![step("transaction.created", "ready", "ready")],
        (ProviderId::Paddle, Succeeded) => vec![
            step("transaction.paid", "paid", "paid"),
            step("transaction.completed", "completed", "completed"),
        ],
        (ProviderId::Paddle, Failed) => vec![step(
            "transaction.payment_failed",
            "ready",
            "payment_failed",
        )],
        (ProviderId::Wompi, Created) => vec![step("transaction.updated", "PENDING", "pending")],
        (ProviderId::Wompi, Succeeded) => {
            vec![step("transaction.updated", "APPROVED", "approved")]
        }
        (ProviderId::Wompi, Refunded) => vec![step("transaction.updated", "VOIDED", "voided")],
        // Paddle refunds are adjustments, not transaction states; a declined Wompi
        // transaction is final (a retry is a new transaction).
        _ => return None,
    })
}

/// The providers with presets.
pub const PROVIDERS: [ProviderId; 5] = [
    ProviderId::Stripe,
    ProviderId::Mercadopago,
    ProviderId::Asaas,
    ProviderId::Paddle,
    ProviderId::Wompi,
];

/// One event of a sequence.
#[derive(Debug, Clone)]
pub struct SequenceEvent {
    pub event: TestEvent,
    /// When the provider says it happened.
    pub provider_time: UnixMillis,
    /// The state the provider's built-in machine reads from it.
    pub state: &'static str,
    /// Its place in the true order (0 first).
    pub true_position: usize,
}

/// A preset made concrete for one provider and one object.
#[derive(Debug, Clone)]
pub struct Sequence {
    pub preset: Preset,
    pub provider: ProviderId,
    pub object_id: String,
    /// In the order they are to be sent.
    pub events: Vec<SequenceEvent>,
    /// The state the object must end in.
    pub final_state: &'static str,
}

impl Sequence {
    /// Whether events should be signed at their provider time rather than now: Wompi signs
    /// the body's `timestamp`, which is also the event's time.
    pub fn sign_at(&self, event: &SequenceEvent, now: UnixMillis) -> UnixMillis {
        match self.provider {
            ProviderId::Wompi => event.provider_time,
            _ => now,
        }
    }
}

impl Sequence {
    /// Its events as requests to `target`, signed with `secret` (unsigned without one).
    pub fn requests(
        &self,
        options: &hooklab_core::provider::ProviderOptions,
        secret: Option<&hooklab_core::secret::Secret>,
        target: &super::Target,
        now: UnixMillis,
    ) -> Result<Vec<super::Outgoing>, LabError> {
        self.events
            .iter()
            .map(|e| {
                super::Outgoing::signed_event(
                    options,
                    secret,
                    &e.event,
                    target,
                    self.sign_at(e, now),
                )
            })
            .collect()
    }
}

/// Sends `requests` one after another, `delay` apart; each one's result.
pub async fn send_in_order(
    requests: &[super::Outgoing],
    delay: std::time::Duration,
) -> Vec<crate::inject::CopyResult> {
    use crate::inject::{Mode, send_copies};
    let mut results = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let once = Mode::Sequential {
            interval: std::time::Duration::ZERO,
        };
        let mut sent = send_copies(&request.target.addr(), &request.bytes(), 1, once).await;
        if let Some(mut result) = sent.pop() {
            result.copy = i;
            results.push(result);
        }
    }
    results
}

/// The gap between two events' provider times.
const GAP_SECS: i64 = 10;

/// `preset` for `provider` about `object` (a fresh id when `None`), the first event dated two
/// minutes before `now`.
pub fn build(
    preset: Preset,
    provider: ProviderId,
    object: Option<&str>,
    now: UnixMillis,
    salt: &str,
) -> Result<Sequence, LabError> {
    if !PROVIDERS.contains(&provider) {
        let names: Vec<&str> = PROVIDERS.iter().map(|p| p.as_str()).collect();
        return Err(LabError::Unsupported(format!(
            "sequence presets are for the providers with a payment state machine: {}",
            names.join(", ")
        )));
    }
    let unsupported = || {
        LabError::Unsupported(format!(
            "{provider} has no `{preset}` on one payment (its machine has no such states)"
        ))
    };
    let mut true_steps = Vec::new();
    for moment in preset.true_order() {
        true_steps.push(steps(provider, *moment).ok_or_else(unsupported)?);
    }
    let final_state = steps(provider, preset.last())
        .and_then(|s| s.last().map(|s| s.state))
        .ok_or_else(unsupported)?;
    let short = &hex::encode(sha2::Digest::finalize(
        <sha2::Sha256 as sha2::Digest>::new_with_prefix(format!("{}:{salt}", now.0)),
    ))[..12];
    let object_id = object.map_or_else(|| fresh_object(provider, short), str::to_string);
    let start = UnixMillis::from_secs(now.as_secs() - 120);
    // Flatten the moments' steps in true order, each GAP_SECS after the last.
    let mut flat = Vec::new();
    for (moment_index, moment_steps) in true_steps.into_iter().enumerate() {
        for s in moment_steps {
            flat.push((moment_index, s));
        }
    }
    let mut events = Vec::new();
    for &moment_index in preset.send_order() {
        for (position, (_, s)) in flat
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| *m == moment_index)
        {
            let at = UnixMillis(start.0 + GAP_SECS * 1000 * position as i64);
            let event = make(
                provider,
                s,
                &object_id,
                at,
                short,
                &format!("{salt}:{position}"),
            )?;
            events.push(SequenceEvent {
                event,
                provider_time: at,
                state: s.state,
                true_position: position,
            });
        }
    }
    Ok(Sequence {
        preset,
        provider,
        object_id,
        events,
        final_state,
    })
}

fn fresh_object(provider: ProviderId, short: &str) -> String {
    match provider {
        ProviderId::Stripe => format!("pi_lab_{short}"),
        ProviderId::Mercadopago => u64::from_str_radix(&short[..10], 16)
            .unwrap_or(1)
            .to_string(),
        ProviderId::Asaas => format!("pay_lab_{short}"),
        ProviderId::Paddle => format!("txn_lab_{short}"),
        _ => format!("lab-{short}"),
    }
}

/// One provider event about `object` at `at`.
fn make(
    provider: ProviderId,
    s: &Step,
    object: &str,
    at: UnixMillis,
    short: &str,
    salt: &str,
) -> Result<TestEvent, LabError> {
    let set = |path: &str, value: Value| Override {
        path: path.to_string(),
        value,
    };
    let secs = at.as_secs();
    let overrides = match provider {
        ProviderId::Stripe if s.event_type.starts_with("charge.") => vec![
            set("created", json!(secs)),
            set(
                "data.object",
                json!({"id": format!("ch_lab_{short}"), "object": "charge", "amount": 2000,
                       "amount_refunded": 2000, "refunded": true, "currency": "usd",
                       "payment_intent": object, "status": s.status, "created": secs}),
            ),
        ],
        ProviderId::Stripe => vec![
            set("created", json!(secs)),
            set("data.object.id", json!(object)),
            set("data.object.status", json!(s.status)),
        ],
        ProviderId::Mercadopago => vec![
            set("date_created", json!(at.to_rfc3339())),
            set("data.id", json!(object)),
            set("data.status", json!(s.status)),
        ],
        ProviderId::Asaas => vec![
            // Asaas writes Brasília time without an offset.
            set("dateCreated", json!(brasilia(at))),
            set("payment.id", json!(object)),
            set("payment.status", json!(s.status)),
        ],
        ProviderId::Paddle => vec![
            set("occurred_at", json!(at.to_rfc3339())),
            set("data.id", json!(object)),
            set("data.status", json!(s.status)),
        ],
        _ => vec![
            set("timestamp", json!(secs)),
            set("sent_at", json!(at.to_rfc3339())),
            set("data.transaction.id", json!(object)),
            set("data.transaction.status", json!(s.status)),
        ],
    };
    generate(provider, Some(s.event_type), &overrides, at, salt)
}

/// `YYYY-MM-DD HH:MM:SS` at UTC−3.
fn brasilia(at: UnixMillis) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::OffsetDateTime::from_unix_timestamp(at.as_secs() - 3 * 3600)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooklab_core::machine::{Decision, ObjectState, builtins};
    use hooklab_core::provider::ProviderId;

    /// Runs a sequence through the provider's built-in machine, in send order.
    fn decisions(seq: &Sequence) -> (Option<String>, Vec<Decision>) {
        let machine = builtins()
            .into_iter()
            .find(|m| {
                matches!(m.provider(), hooklab_core::machine::ProviderScope::Only(p) if p == seq.provider)
            })
            .expect("a built-in machine");
        let mut object = ObjectState::new(&machine, seq.object_id.clone());
        let mut all = Vec::new();
        let now = UnixMillis::now();
        for e in &seq.events {
            let body: serde_json::Value = serde_json::from_slice(&e.event.body).unwrap();
            let event = machine
                .event_from_body(&body)
                .unwrap_or_else(|| panic!("{}: the machine reads {body}", seq.provider));
            assert_eq!(event.object_id, seq.object_id, "one object");
            assert_eq!(
                event.state, e.state,
                "{}: the state it carries",
                seq.provider
            );
            assert_eq!(event.provider_time, e.provider_time, "the time it carries");
            all.extend(
                object
                    .apply(&machine, event, now)
                    .into_iter()
                    .map(|r| r.decision),
            );
        }
        (object.state().map(str::to_string), all)
    }

    #[test]
    fn every_preset_misorders_and_every_machine_ends_in_the_final_state() {
        let now = UnixMillis::from_secs(1_750_000_000);
        let mut ran = 0;
        for provider in PROVIDERS {
            for preset in Preset::ALL {
                let Ok(seq) = build(preset, provider, None, now, "t") else {
                    continue;
                };
                ran += 1;
                let positions: Vec<usize> = seq.events.iter().map(|e| e.true_position).collect();
                let mut sorted = positions.clone();
                sorted.sort_unstable();
                assert_ne!(positions, sorted, "{provider} {preset}: sent out of order");
                let (state, decisions) = decisions(&seq);
                assert_eq!(
                    state.as_deref(),
                    Some(seq.final_state),
                    "{provider} {preset}: {decisions:?}"
                );
                assert!(
                    decisions
                        .iter()
                        .any(|d| matches!(d, Decision::Parked | Decision::IgnoredStale)),
                    "{provider} {preset}: the misorder shows: {decisions:?}"
                );
            }
        }
        assert_eq!(
            ran, 13,
            "5 providers × 3 presets, less Paddle's and Wompi's missing one"
        );
    }

    #[test]
    fn stripe_presets_decide_as_the_design_says() {
        let now = UnixMillis::from_secs(1_750_000_000);
        let run = |preset| {
            decisions(&build(preset, ProviderId::Stripe, Some("pi_x"), now, "s").unwrap()).1
        };
        use Decision::*;
        assert_eq!(
            run(Preset::SuccessBeforeCreation),
            [Parked, Applied, AppliedFromPark]
        );
        assert_eq!(
            run(Preset::RefundBeforeSuccess),
            [Applied, Parked, Applied, AppliedFromPark]
        );
        assert_eq!(
            run(Preset::FailureThenSuccess),
            [Applied, Applied, IgnoredStale]
        );
    }

    #[test]
    fn unsupported_combinations_say_why() {
        let now = UnixMillis::from_secs(1_750_000_000);
        let err = build(
            Preset::RefundBeforeSuccess,
            ProviderId::Paddle,
            None,
            now,
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("paddle has no `refund-before-success`"),
            "{err}"
        );
        let err = build(
            Preset::FailureThenSuccess,
            ProviderId::Github,
            None,
            now,
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("stripe, mercadopago"), "{err}");
        assert!("nope".parse::<Preset>().is_err());
        assert_eq!(
            "refund-before-success".parse(),
            Ok(Preset::RefundBeforeSuccess)
        );
    }

    #[test]
    fn asaas_times_are_brasilia_wall_clock() {
        assert_eq!(
            brasilia(UnixMillis::from_secs(1_700_000_000)),
            "2023-11-14 19:13:20"
        );
    }
}
