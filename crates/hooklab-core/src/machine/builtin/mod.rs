//! The machines Hooklab ships, one module per provider, each written as the TOML a developer
//! would write (so each doubles as an example to copy). They are parsed and validated on use;
//! the tests below prove every one of them loads.

mod asaas;
mod generic;
mod mercadopago;
mod paddle;
mod stripe;
mod wompi;

use super::table::Machine;

/// The built-in machines' names, in display order.
pub const BUILTIN_NAMES: [&str; 6] = [
    stripe::NAME,
    mercadopago::NAME,
    asaas::NAME,
    wompi::NAME,
    paddle::NAME,
    generic::NAME,
];

/// The built-in machine called `name` (see [`BUILTIN_NAMES`]), or `None` for another name.
pub fn builtin(name: &str) -> Option<Machine> {
    Machine::from_toml(builtin_toml(name)?).ok()
}

/// The TOML source of a built-in machine, as a template for a custom one.
pub fn builtin_toml(name: &str) -> Option<&'static str> {
    match name {
        stripe::NAME => Some(stripe::TOML),
        mercadopago::NAME => Some(mercadopago::TOML),
        asaas::NAME => Some(asaas::TOML),
        wompi::NAME => Some(wompi::TOML),
        paddle::NAME => Some(paddle::TOML),
        generic::NAME => Some(generic::TOML),
        _ => None,
    }
}

/// Every built-in machine, in display order.
pub fn builtins() -> Vec<Machine> {
    BUILTIN_NAMES
        .iter()
        .filter_map(|name| builtin(name))
        .collect()
}

#[cfg(test)]
pub(super) mod test_support {
    //! Runs a list of bodies through a machine, as a worker would, for the tests beside each
    //! built-in.

    use crate::clock::UnixMillis;
    use crate::machine::{Decision, Machine, ObjectState, TimelineRow};
    use serde_json::Value;

    /// Applies `bodies` in order to a fresh object `object_id`, one second of arrival apart.
    pub(crate) fn run(
        machine: &Machine,
        object_id: &str,
        bodies: &[Value],
    ) -> (ObjectState, Vec<TimelineRow>) {
        let mut object = ObjectState::new(machine, object_id);
        let mut rows = Vec::new();
        for (i, body) in bodies.iter().enumerate() {
            let event = machine
                .event_from_body(body)
                .unwrap_or_else(|| panic!("test body {i} is a machine event: {body}"));
            let now = UnixMillis::from_secs(1_800_000_000 + i as i64);
            let event = event.delivered(format!("dlv_{i}"), now);
            rows.extend(object.apply(machine, event, now));
        }
        (object, rows)
    }

    /// The decisions, in order, for compact assertions.
    pub(crate) fn decisions(rows: &[TimelineRow]) -> Vec<Decision> {
        rows.iter().map(|r| r.decision).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_loads_and_round_trips_through_toml() {
        for name in BUILTIN_NAMES {
            let source = builtin_toml(name).expect("every listed name has a source");
            let machine = match Machine::from_toml(source) {
                Ok(m) => m,
                Err(e) => panic!("built-in `{name}` must load: {e}"),
            };
            assert_eq!(machine.name(), name, "the constant names the machine");
            let text = machine
                .definition()
                .to_toml()
                .expect("a definition writes as TOML");
            let again = Machine::from_toml(&text).expect("and reads back");
            assert_eq!(
                again.definition(),
                machine.definition(),
                "{name} round-trips"
            );
        }
        assert_eq!(builtins().len(), BUILTIN_NAMES.len(), "none is dropped");
        assert!(
            builtin("nope").is_none(),
            "an unknown name is not a machine"
        );
    }
}
