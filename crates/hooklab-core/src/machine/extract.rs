//! From a delivery body to a [`MachineEvent`]: which object, which target state, and when the
//! provider says it happened. Reads JSON pointers only; any body, however odd, yields an event
//! or a typed reason why not, never a panic.

use super::table::{Machine, Target};
use crate::clock::UnixMillis;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event as the machine sees it: what the body says, plus (optionally) which delivery
/// carried it and when that delivery arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineEvent {
    /// The business object the event moves, e.g. a PaymentIntent id `pi_…`.
    pub object_id: String,
    /// The provider's event type, e.g. `payment_intent.succeeded`, kept for the timeline.
    pub event_type: String,
    /// The state the event says the object is now in.
    pub state: String,
    /// When the provider says it happened; orders events, not the arrival time.
    pub provider_time: UnixMillis,
    /// The delivery that carried the event, so a timeline row links to the raw request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    /// When that delivery arrived; `None` means "now" to [`super::ObjectState::apply`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_at: Option<UnixMillis>,
}

impl MachineEvent {
    /// The same event, tagged with the delivery that carried it and its arrival time.
    pub fn delivered(mut self, delivery_id: impl Into<String>, received_at: UnixMillis) -> Self {
        self.delivery_id = Some(delivery_id.into());
        self.received_at = Some(received_at);
        self
    }
}

/// Why a body is not an event for a machine. Not an error of the delivery: most deliveries
/// (a `customer.created`, a ping) are simply not about the machine's objects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    #[error("machine `{machine}` does not map event type `{event_type}`")]
    NotMapped { machine: String, event_type: String },
    #[error("the body has no event type at `{pointer}`")]
    MissingEventType { pointer: String },
    #[error("the body has no object id at `{pointer}`")]
    MissingObject { pointer: String },
    #[error("the body has no provider timestamp at `{pointer}`")]
    MissingTime { pointer: String },
    #[error(
        "`{value}` at `{pointer}` is not a timestamp \
         (unix seconds or millis, RFC 3339, or `YYYY-MM-DD[ HH:MM:SS]`)"
    )]
    BadTime { pointer: String, value: String },
    #[error("the body has no status at `{pointer}`")]
    MissingStatus { pointer: String },
    #[error("status `{value}` at `{pointer}` is not one the machine maps (known: {known})")]
    UnknownStatus {
        pointer: String,
        value: String,
        known: String,
    },
}

impl ExtractError {
    /// A stable snake_case code for the UI's `{code, message}`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotMapped { .. } => "not_mapped",
            Self::MissingEventType { .. } => "missing_event_type",
            Self::MissingObject { .. } => "missing_object",
            Self::MissingTime { .. } => "missing_time",
            Self::BadTime { .. } => "bad_time",
            Self::MissingStatus { .. } => "missing_status",
            Self::UnknownStatus { .. } => "unknown_status",
        }
    }
}

impl Machine {
    /// The event type the body names at the definition's `event_type` pointer.
    pub fn event_type_of(&self, body: &Value) -> Option<String> {
        text(body, &self.definition().event_type)
    }

    /// The machine event `body` carries as an `event_type`, or `None` when it is not one.
    pub fn event(&self, body: &Value, event_type: &str) -> Option<MachineEvent> {
        self.extract(body, event_type).ok()
    }

    /// Like [`Machine::event`], reading the event type from the body itself.
    pub fn event_from_body(&self, body: &Value) -> Option<MachineEvent> {
        self.extract_from_body(body).ok()
    }

    /// Like [`Machine::extract`], reading the event type from the body itself.
    pub fn extract_from_body(&self, body: &Value) -> Result<MachineEvent, ExtractError> {
        match self.event_type_of(body) {
            Some(event_type) => self.extract(body, &event_type),
            None => Err(ExtractError::MissingEventType {
                pointer: self.definition().event_type.clone(),
            }),
        }
    }

    /// Like [`Machine::event`], saying why a body is not an event (for diagnosis screens).
    pub fn extract(&self, body: &Value, event_type: &str) -> Result<MachineEvent, ExtractError> {
        let Some(mapping) = self.events.get(event_type) else {
            return Err(ExtractError::NotMapped {
                machine: self.name().to_string(),
                event_type: event_type.to_string(),
            });
        };
        let object_id = text(body, &mapping.object).ok_or_else(|| ExtractError::MissingObject {
            pointer: mapping.object.clone(),
        })?;
        let state = match &mapping.target {
            Target::Constant(state) => state.clone(),
            Target::Field { pointer, values } => {
                let value = text(body, pointer).ok_or_else(|| ExtractError::MissingStatus {
                    pointer: pointer.clone(),
                })?;
                match values.get(&value) {
                    Some(state) => state.clone(),
                    None => {
                        return Err(ExtractError::UnknownStatus {
                            pointer: pointer.clone(),
                            known: values.keys().cloned().collect::<Vec<_>>().join(", "),
                            value,
                        });
                    }
                }
            }
        };
        let offset = self.definition().naive_time_offset_minutes;
        let provider_time = match body.pointer(&mapping.time) {
            None | Some(Value::Null) => {
                return Err(ExtractError::MissingTime {
                    pointer: mapping.time.clone(),
                });
            }
            Some(value) => json_time(value, offset).ok_or_else(|| ExtractError::BadTime {
                pointer: mapping.time.clone(),
                value: shorten(value),
            })?,
        };
        Ok(MachineEvent {
            object_id,
            event_type: event_type.to_string(),
            state,
            provider_time,
            delivery_id: None,
            received_at: None,
        })
    }
}

/// A non-empty string, number or boolean at `pointer`, as text.
fn text(body: &Value, pointer: &str) -> Option<String> {
    let text = match body.pointer(pointer)? {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// A value for an error message, cut to a readable length on a character boundary.
fn shorten(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A timestamp in JSON: a number (or digit string) of Unix seconds below 10^11, of
/// milliseconds above; RFC 3339; or a date-time without offset (`2024-06-12 16:45:03`,
/// `2024-06-12T16:45:03.5`, `2024-06-12`) read at `offset_minutes` from UTC.
pub(super) fn json_time(value: &Value, offset_minutes: i32) -> Option<UnixMillis> {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(unix_number(i)),
            None => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(|f| match f.abs() < 1e11 {
                    // `as` saturates on overflow: absurd floats become extreme times, not panics.
                    true => UnixMillis((f * 1000.0) as i64),
                    false => UnixMillis(f as i64),
                }),
        },
        Value::String(s) => time_text(s.trim(), offset_minutes),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

fn unix_number(n: i64) -> UnixMillis {
    match n.unsigned_abs() < 100_000_000_000 {
        true => UnixMillis::from_secs(n),
        false => UnixMillis(n),
    }
}

fn time_text(s: &str, offset_minutes: i32) -> Option<UnixMillis> {
    use time::macros::format_description;
    if let Ok(n) = s.parse::<i64>() {
        return Some(unix_number(n));
    }
    if let Some(t) = UnixMillis::parse_rfc3339(s) {
        return Some(t);
    }
    let offset = time::UtcOffset::from_whole_seconds(offset_minutes.saturating_mul(60)).ok()?;
    let date_time = [
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"),
    ]
    .iter()
    .find_map(|f| time::PrimitiveDateTime::parse(s, f).ok())
    .or_else(|| {
        time::Date::parse(s, format_description!("[year]-[month]-[day]"))
            .ok()
            .map(|d| d.midnight())
    })?;
    let nanos = date_time.assume_offset(offset).unix_timestamp_nanos();
    i64::try_from(nanos / 1_000_000).ok().map(UnixMillis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_in_every_shape_providers_use() {
        let at = |v: Value| json_time(&v, 0);
        let secs = UnixMillis::from_secs(1_700_000_000);
        assert_eq!(
            at(json!(1_700_000_000)),
            Some(secs),
            "Stripe/Wompi unix seconds"
        );
        assert_eq!(at(json!(1_700_000_000_000_i64)), Some(secs), "unix millis");
        assert_eq!(
            at(json!("1700000000")),
            Some(secs),
            "seconds as a digit string"
        );
        assert_eq!(
            at(json!(1_700_000_000.5)),
            Some(UnixMillis(1_700_000_000_500))
        );
        assert_eq!(at(json!("2023-11-14T22:13:20Z")), Some(secs), "RFC 3339");
        assert_eq!(
            at(json!("2023-11-14T22:13:20.621022Z")),
            Some(UnixMillis(1_700_000_000_621)),
            "Paddle's microseconds are cut to millis"
        );
        assert_eq!(
            at(json!("2023-11-14 22:13:20")),
            Some(secs),
            "naive, UTC by default"
        );
        assert_eq!(
            json_time(&json!("2023-11-14 19:13:20"), -180),
            Some(secs),
            "Asaas local time at UTC-3"
        );
        assert_eq!(
            at(json!("2023-11-14")),
            Some(UnixMillis::from_secs(1_699_920_000))
        );
        for odd in [
            json!("soon"),
            json!(null),
            json!([1]),
            json!({}),
            json!(true),
            json!(""),
        ] {
            assert_eq!(at(odd.clone()), None, "{odd} is not a time");
        }
        assert!(
            at(json!(1e300)).is_some(),
            "an absurd float saturates, never panics"
        );
        assert!(at(json!(i64::MIN)).is_some(), "an absurd integer saturates");
    }

    #[test]
    fn shorten_cuts_on_a_char_boundary() {
        let long = Value::String("ñ".repeat(100));
        assert_eq!(
            shorten(&long).chars().count(),
            61,
            "60 characters and an ellipsis"
        );
    }
}
