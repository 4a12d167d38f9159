//! Retry schedules: what the worker waits between failed attempts, and when it gives up and
//! moves a job to the dead-letter queue. A schedule is data (a list of delays), never code:
//! written as `0.2s,5s,5m,30m`, or named after a provider whose behaviour it mirrors
//! (`stripe`, `svix`, `shopify`…; see [`PRESETS`] for each one's source).
//!
//! Everything here is pure. Randomness for jitter comes in as an argument, time scaling is a
//! division, so the worker's tests can pin every attempt to the millisecond.
//!
//! ```
//! use hooklab_core::retry::RetrySchedule;
//! use std::time::Duration;
//!
//! let schedule = RetrySchedule::parse("0.2s,5s,5m").unwrap();
//! // Attempt 1 failed: wait 200 ms (0.5 = no jitter). Four attempts in all, then dead.
//! assert_eq!(schedule.delay_before(1, 0.5), Some(Duration::from_millis(200)));
//! assert_eq!(schedule.delay_before(4, 0.5), None);
//! // Stripe's three days, shown in one minute.
//! let fast = RetrySchedule::parse("stripe").unwrap().with_time_scale(4320.0);
//! assert!(fast.total() <= Duration::from_secs(60));
//! ```

mod presets;

pub use presets::{PRESETS, Preset};

use presets::preset_names;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The forward handler's schedule unless configured otherwise: quick at first (a developer's
/// app restarting), then patient, about 13 minutes in all.
pub const DEFAULT_FORWARD_SCHEDULE: &str = "0.2s,1s,5s,30s,2m,10m";

/// The most a delay may add or take away, as a fraction of it (±10 %).
pub const MAX_JITTER: f64 = 0.1;

/// The longest single delay accepted (a year), so arithmetic on it can never overflow.
const MAX_DELAY: Duration = Duration::from_secs(366 * 24 * 3600);

/// The delays between attempts: `delays[0]` after the first attempt fails, `delays[1]` after
/// the second, and so on. A job gets `delays.len() + 1` attempts in all; an empty schedule
/// means a single attempt and no retry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RetrySchedule {
    pub delays: Vec<Duration>,
}

/// A schedule that cannot be read, said so that the fix is obvious. `#[non_exhaustive]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RetryScheduleError {
    #[error(
        "the retry schedule is empty; write delays like `0.2s,5s,5m`, `none` for no retry, or a preset ({})",
        preset_names()
    )]
    Empty,
    #[error("delay #{position} of the retry schedule is empty (two commas in a row?)")]
    EmptyDelay { position: usize },
    #[error(
        "`{name}` is neither a list of delays like `0.2s,5s,5m` nor a preset; presets: {}",
        preset_names()
    )]
    UnknownPreset { name: String },
    #[error("delay `{delay}` has no unit; write it like `500ms`, `5s`, `5m`, `2h` or `1d`")]
    MissingUnit { delay: String },
    #[error("delay `{delay}` has an unknown unit `{unit}`; use ms, s, m, h or d")]
    UnknownUnit { delay: String, unit: String },
    #[error("delay `{delay}` does not start with a number (e.g. `5s`, `0.2s`)")]
    BadNumber { delay: String },
    #[error("delay `{delay}` is longer than a year")]
    TooLong { delay: String },
    #[error(
        "time scale `{value}` must be a positive number (e.g. 4320 shows three days in a minute)"
    )]
    BadTimeScale { value: String },
}

impl RetrySchedule {
    pub fn new(delays: Vec<Duration>) -> Self {
        Self { delays }
    }

    /// No retry: one attempt, then the dead-letter queue.
    pub fn none() -> Self {
        Self { delays: Vec::new() }
    }

    /// The forward handler's default, [`DEFAULT_FORWARD_SCHEDULE`].
    pub fn default_forward() -> Self {
        parse_delays(DEFAULT_FORWARD_SCHEDULE).unwrap_or_else(|_| Self::none())
    }

    /// A preset by name (case-insensitive), or `None`.
    pub fn preset(name: &str) -> Option<Self> {
        let preset = PRESETS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name.trim()))?;
        parse_delays(preset.delays).ok()
    }

    /// A preset name, or delays separated by commas, each a decimal number and a unit
    /// (`ms`, `s`, `m`, `h`, `d`): `0.2s,5s,5m,30m`. Spaces around items are ignored.
    pub fn parse(text: &str) -> Result<Self, RetryScheduleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RetryScheduleError::Empty);
        }
        if let Some(schedule) = Self::preset(text) {
            return Ok(schedule);
        }
        let looks_like_a_name =
            !text.contains(',') && text.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if looks_like_a_name {
            return Err(RetryScheduleError::UnknownPreset {
                name: text.to_string(),
            });
        }
        parse_delays(text)
    }

    /// Every delay divided by `factor` (4320 turns three days into one minute), for watching a
    /// provider's schedule play out. A factor that is not a positive finite number changes
    /// nothing; [`TimeScale::parse`] refuses those with a clear error.
    pub fn with_time_scale(self, factor: f64) -> Self {
        if !(factor.is_finite() && factor > 0.0) {
            return self;
        }
        Self {
            delays: self.delays.iter().map(|d| d.div_f64(factor)).collect(),
        }
    }

    /// How many attempts a job gets: the first, plus one per delay.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.delays.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// The sum of the delays: how long after the first attempt the last one starts (ignoring
    /// how long the attempts themselves take, and jitter).
    pub fn total(&self) -> Duration {
        self.delays.iter().sum()
    }

    /// The wait before the next attempt once attempt `attempt` (1-based; 0 counts as 1) has
    /// failed, or `None` when the schedule is exhausted and the job goes to the dead-letter
    /// queue. `jitter_fraction` is a random number in `[0, 1)` supplied by the caller: it
    /// moves the delay by up to ±[`MAX_JITTER`] (0.5 keeps it exact; values outside `[0, 1]`
    /// are clamped), so retries of many jobs failing together spread out.
    pub fn delay_before(&self, attempt: u32, jitter_fraction: f64) -> Option<Duration> {
        let index = usize::try_from(attempt.max(1) - 1).ok()?;
        let delay = *self.delays.get(index)?;
        let fraction = if jitter_fraction.is_nan() {
            0.5
        } else {
            jitter_fraction.clamp(0.0, 1.0)
        };
        let factor = 1.0 + MAX_JITTER * (2.0 * fraction - 1.0);
        Some(delay.mul_f64(factor))
    }
}

impl Default for RetrySchedule {
    fn default() -> Self {
        Self::default_forward()
    }
}

impl FromStr for RetrySchedule {
    type Err = RetryScheduleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The delays in the syntax [`RetrySchedule::parse`] reads (`none` when empty).
impl fmt::Display for RetrySchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.delays.is_empty() {
            return f.write_str("none");
        }
        for (i, d) in self.delays.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(&format_duration(*d))?;
        }
        Ok(())
    }
}

/// A duration in the shortest exact unit: `200ms`, `5s`, `5m`, `2h`, `1d` (`0s` for zero).
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return if d.is_zero() {
            "0s".into()
        } else {
            format!("{}µs", d.as_micros())
        };
    }
    const UNITS: [(u128, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ];
    for (size, unit) in UNITS {
        if ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// One duration: a decimal number and a unit (`ms`, `s`, `m`, `h`, `d`), e.g. `30s`, `0.5s`.
pub fn parse_duration(text: &str) -> Result<Duration, RetryScheduleError> {
    let delay = text.trim();
    let split = delay
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(delay.len());
    let (number, unit) = delay.split_at(split);
    if number.is_empty() || number == "." {
        return Err(RetryScheduleError::BadNumber {
            delay: delay.to_string(),
        });
    }
    let value: f64 = number.parse().map_err(|_| RetryScheduleError::BadNumber {
        delay: delay.to_string(),
    })?;
    let seconds_per_unit = match unit.trim() {
        "" if value == 0.0 => 0.0,
        "" => {
            return Err(RetryScheduleError::MissingUnit {
                delay: delay.to_string(),
            });
        }
        "ms" => 0.001,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        other => {
            return Err(RetryScheduleError::UnknownUnit {
                delay: delay.to_string(),
                unit: other.to_string(),
            });
        }
    };
    let seconds = value * seconds_per_unit;
    if !(seconds.is_finite() && seconds <= MAX_DELAY.as_secs_f64()) {
        return Err(RetryScheduleError::TooLong {
            delay: delay.to_string(),
        });
    }
    // Whole milliseconds: `0.2s` is exactly 200 ms, not 199.999… ms.
    Ok(Duration::from_millis((seconds * 1000.0).round() as u64))
}

/// How much faster than real time a schedule plays: every delay is divided by it. Always a
/// positive, finite number (so it compares and hashes like the number it holds).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct TimeScale(f64);

impl TimeScale {
    /// Real time.
    pub const REAL: TimeScale = TimeScale(1.0);

    /// `None` unless `factor` is positive and finite.
    pub fn new(factor: f64) -> Option<Self> {
        (factor.is_finite() && factor > 0.0).then_some(Self(factor))
    }

    /// Reads a positive number, e.g. `4320` (three days in a minute) or `0.5` (twice as slow).
    pub fn parse(text: &str) -> Result<Self, RetryScheduleError> {
        text.trim()
            .parse::<f64>()
            .ok()
            .and_then(Self::new)
            .ok_or_else(|| RetryScheduleError::BadTimeScale {
                value: text.to_string(),
            })
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

// NaN is excluded by construction, so equality is reflexive.
impl Eq for TimeScale {}

impl Default for TimeScale {
    fn default() -> Self {
        Self::REAL
    }
}

impl FromStr for TimeScale {
    type Err = RetryScheduleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn parse_delays(text: &str) -> Result<RetrySchedule, RetryScheduleError> {
    if text.trim().is_empty() {
        return Ok(RetrySchedule::none());
    }
    text.split(',')
        .enumerate()
        .map(|(i, item)| {
            if item.trim().is_empty() {
                Err(RetryScheduleError::EmptyDelay { position: i + 1 })
            } else {
                parse_duration(item)
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(RetrySchedule::new)
}

#[cfg(test)]
mod tests;
