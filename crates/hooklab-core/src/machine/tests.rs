//! Unit tests of the engine's rules and of definition validation, on small machines. The
//! built-ins are tested beside their definitions and, in every arrival order, in
//! `tests/machines.rs`.

mod engine {
    use crate::clock::UnixMillis;
    use crate::machine::{Decision, Machine, MachineEvent, ObjectState, TimelineRow, builtin};
    use std::time::Duration;

    fn generic() -> Machine {
        builtin("generic-payment").expect("built in")
    }

    fn ev(state: &str, secs: i64) -> MachineEvent {
        MachineEvent {
            object_id: "pay_1".into(),
            event_type: format!("payment.{state}"),
            state: state.into(),
            provider_time: UnixMillis::from_secs(secs),
            delivery_id: Some(format!("dlv_{state}_{secs}")),
            received_at: None,
        }
    }

    fn at(secs: i64) -> UnixMillis {
        UnixMillis::from_secs(1_000 + secs)
    }

    fn only(rows: Vec<TimelineRow>) -> TimelineRow {
        assert_eq!(rows.len(), 1, "one decision expected: {rows:?}");
        rows.into_iter().next().expect("checked above")
    }

    #[test]
    fn rows_carry_everything_the_timeline_shows() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        let row = only(o.apply(&m, ev("pending", 10).delivered("dlv_a", at(1)), at(2)));
        assert_eq!(row.machine, "generic-payment");
        assert_eq!((row.from, row.to.as_str()), (None, "pending"), "first seen");
        assert_eq!(row.delivery_id.as_deref(), Some("dlv_a"));
        assert_eq!(
            (row.provider_time, row.received_at, row.decided_at),
            (UnixMillis::from_secs(10), at(1), at(2)),
            "provider, arrival and decision times are kept apart"
        );
        assert_eq!(row.decision, Decision::Applied);
        assert!(row.reason.contains("initial state"), "{}", row.reason);
        assert!(o.awaiting_confirmation(), "pending waits for the provider");
        let row = only(o.apply(&m, ev("confirmed", 11), at(3)));
        assert_eq!(row.from.as_deref(), Some("pending"));
        assert_eq!(row.received_at, at(3), "no arrival time given: now");
        assert!(!o.awaiting_confirmation(), "confirmed is no longer waiting");
    }

    #[test]
    fn stale_is_strictly_older_and_equal_times_still_move() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        o.apply(&m, ev("pending", 10), at(0));
        let row = only(o.apply(&m, ev("confirmed", 10), at(1)));
        assert_eq!(
            row.decision,
            Decision::Applied,
            "same second, next step: not stale"
        );
        let row = only(o.apply(&m, ev("refunded", 9), at(2)));
        assert_eq!(row.decision, Decision::IgnoredStale);
        assert!(
            row.reason.contains("before the current state `confirmed`"),
            "{}",
            row.reason
        );
        assert_eq!(
            o.state(),
            Some("confirmed"),
            "a stale event changes nothing"
        );
    }

    #[test]
    fn a_duplicate_keeps_the_state_and_advances_its_time() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        o.apply(&m, ev("pending", 10), at(0));
        assert_eq!(
            only(o.apply(&m, ev("pending", 10), at(1))).decision,
            Decision::Duplicate
        );
        let row = only(o.apply(&m, ev("pending", 20), at(2)));
        assert_eq!(row.decision, Decision::Duplicate);
        assert!(row.reason.contains("advances"), "{}", row.reason);
        let since = o.current().map(|c| c.since);
        assert_eq!(
            since,
            Some(UnixMillis::from_secs(20)),
            "the provider's latest word"
        );
        let row = only(o.apply(&m, ev("failed", 15), at(3)));
        assert_eq!(
            row.decision,
            Decision::IgnoredStale,
            "older than the newer pending"
        );
        assert_eq!(
            only(o.apply(&m, ev("refunded", 25), at(4))).decision,
            Decision::Parked
        );
        let rows = o.apply(&m, ev("pending", 30), at(5));
        let got: Vec<_> = rows.iter().map(|r| (r.to.as_str(), r.decision)).collect();
        assert_eq!(
            got,
            [
                ("pending", Decision::Duplicate),
                ("refunded", Decision::IgnoredStale)
            ],
            "a newer pending makes the parked refund stale, so it leaves the park"
        );
        assert!(o.parked().is_empty());
    }

    #[test]
    fn a_redelivered_parked_event_is_a_duplicate_not_a_second_park() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        assert_eq!(
            only(o.apply(&m, ev("confirmed", 20), at(0))).decision,
            Decision::Parked
        );
        let row = only(o.apply(&m, ev("confirmed", 20), at(1)));
        assert_eq!(row.decision, Decision::Duplicate);
        assert!(row.reason.contains("already parked"), "{}", row.reason);
        assert_eq!(o.parked().len(), 1, "parked once");
    }

    #[test]
    fn the_park_drains_in_provider_time_order_and_drops_what_became_stale() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        for (state, secs) in [("refunded", 40), ("confirmed", 20), ("failed", 15)] {
            assert_eq!(
                only(o.apply(&m, ev(state, secs), at(0))).decision,
                Decision::Parked
            );
        }
        let times: Vec<_> = o
            .parked()
            .iter()
            .map(|p| p.event.provider_time.as_secs())
            .collect();
        assert_eq!(
            times,
            [15, 20, 40],
            "kept in provider-time order, not arrival order"
        );
        let rows = o.apply(&m, ev("pending", 10), at(1));
        let got: Vec<_> = rows.iter().map(|r| (r.to.as_str(), r.decision)).collect();
        assert_eq!(
            got,
            [
                ("pending", Decision::Applied),
                ("failed", Decision::AppliedFromPark),
            ],
            "pending, then failed (15) applies; confirmed needs pending again"
        );
        assert_eq!(o.state(), Some("failed"));
        let rows = o.apply(&m, ev("pending", 18), at(2));
        let got: Vec<_> = rows.iter().map(|r| (r.to.as_str(), r.decision)).collect();
        assert_eq!(
            got,
            [
                ("pending", Decision::Applied),
                ("confirmed", Decision::AppliedFromPark),
                ("refunded", Decision::AppliedFromPark),
            ],
            "the provider's retry unblocks the rest of the park"
        );
        assert!(o.parked().is_empty());
    }

    #[test]
    fn parked_too_long_requires_review_once() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        o.apply(&m, ev("pending", 10), at(0));
        o.apply(&m, ev("refunded", 30), at(0));
        o.apply(&m, ev("disputed", 31), at(50));
        let timeout = Duration::from_secs(30 * 60);
        assert!(
            o.expire_parked(&m, at(1_799), timeout).is_empty(),
            "not yet"
        );
        let row = only(o.expire_parked(&m, at(1_800), timeout));
        assert_eq!(
            (row.decision, row.to.as_str()),
            (Decision::RequiresReview, "refunded")
        );
        assert!(row.reason.contains("30 min"), "{}", row.reason);
        assert!(
            o.requires_review() && o.parked().len() == 1,
            "disputed is younger"
        );
        assert!(
            o.expire_parked(&m, at(1_801), timeout).is_empty(),
            "no row twice"
        );
        assert_eq!(only(o.expire_parked(&m, at(1_850), timeout)).to, "disputed");
        let reviewed = o.take_review();
        assert_eq!(reviewed.len(), 2, "the reviewer gets both events");
        assert!(
            !o.requires_review() && o.review().is_empty(),
            "and the flag clears"
        );
    }

    #[test]
    fn foreign_events_are_rejected_without_touching_the_object() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        let mut other = ev("pending", 10);
        other.object_id = "pay_2".into();
        let mut unknown = ev("pending", 10);
        unknown.state = "teleported".into();
        let stripe = builtin("stripe-payment-intent").expect("built in");
        for (machine, event) in [(&m, other), (&m, unknown), (&stripe, ev("created", 10))] {
            let row = only(o.apply(machine, event, at(0)));
            assert_eq!(row.decision, Decision::Rejected, "{}", row.reason);
        }
        assert_eq!(o, ObjectState::new(&m, "pay_1"), "nothing changed");
    }

    #[test]
    fn an_object_state_round_trips_through_json() {
        let m = generic();
        let mut o = ObjectState::new(&m, "pay_1");
        o.apply(&m, ev("pending", 10), at(0));
        o.apply(&m, ev("refunded", 30), at(1));
        let json = serde_json::to_string(&o).expect("serializes");
        let back: ObjectState = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, o, "a store can keep the object as JSON");
        let rows = o.apply(&m, ev("confirmed", 20), at(2));
        let json = serde_json::to_value(&rows).expect("rows serialize");
        assert_eq!(
            json[1]["decision"], "applied_from_park",
            "decisions are snake_case"
        );
    }
}

mod validation {
    use crate::machine::{Definition, DefinitionError, EventMapping, Machine};

    const BASE: &str = r#"
        name = "m"
        states = ["a", "b", "c"]
        initial = ["a"]
        final = ["c"]
        [transitions]
        a = ["b"]
        b = ["c"]
        [events.go]
        state = "b"
    "#;

    fn with(edit: impl FnOnce(&mut Definition)) -> Result<Machine, DefinitionError> {
        let mut def = Definition::from_toml(BASE).expect("the base parses");
        edit(&mut def);
        Machine::from_definition(def)
    }

    /// Applies `edit` to the base and checks the error names the place and the machine.
    fn rejects(edit: impl FnOnce(&mut Definition), expected: &str) {
        let got = match with(edit) {
            Ok(_) => panic!("the edit should make the definition invalid ({expected})"),
            Err(e) => e.to_string(),
        };
        assert!(got.contains(expected), "expected `{expected}` in: {got}");
        let named = got.starts_with("machine `m`") || got.contains("no `name`");
        assert!(named, "the message names the machine: {got}");
    }

    fn go(def: &mut Definition) -> &mut EventMapping {
        def.events.entry("go".into()).or_default()
    }

    #[test]
    fn the_base_is_valid() {
        let m = with(|_| {}).expect("valid");
        assert!(
            m.allows("a", "b") && !m.allows("a", "c"),
            "transitions are the table"
        );
        assert!(m.is_initial("a") && m.is_final("c") && !m.is_waiting("b"));
    }

    #[test]
    fn state_mistakes_are_named_with_their_place() {
        rejects(|d| d.name = " ".into(), "has no `name`");
        rejects(|d| d.states.clear(), "`states` is empty");
        rejects(|d| d.states.push("a".into()), "state `a` is declared twice");
        rejects(|d| d.initial.clear(), "`initial` is empty");
        rejects(
            |d| d.initial = vec!["z".into()],
            "`initial` names state `z`, which is not in `states` (declared: a, b, c)",
        );
        rejects(
            |d| d.waiting = vec!["c".into()],
            "`c` is final, so it cannot also be `waiting`",
        );
        rejects(
            |d| d.naive_time_offset_minutes = 2_000,
            "is not a UTC offset",
        );
    }

    #[test]
    fn transition_mistakes_are_named_with_their_place() {
        let set = |from: &str, to: &[&str], expected: &str| {
            let to: Vec<String> = to.iter().map(|s| s.to_string()).collect();
            rejects(|d| drop(d.transitions.insert(from.into(), to)), expected);
        };
        set("a", &["zz"], "`transitions.a` names state `zz`");
        set("q", &[], "a `transitions` key names state `q`");
        set(
            "c",
            &["a"],
            "state `c` is final but `transitions.c` leaves it",
        );
        set("a", &["a"], "`transitions.a` lists `a` itself");
    }

    #[test]
    fn pointer_and_event_mistakes_are_named_with_their_place() {
        rejects(
            |d| d.object = "data.id".into(),
            "`object` = `data.id` must be a JSON pointer starting with `/`",
        );
        rejects(|d| d.event_type = "type".into(), "`event_type` = `type`");
        rejects(
            |d| go(d).time = Some("ts".into()),
            "`events.\"go\".time` = `ts`",
        );
        rejects(
            |d| go(d).state = Some("z".into()),
            "`events.\"go\".state` names state `z`",
        );
        rejects(|d| go(d).state = None, "needs `state = \"…\"` or `status");
        rejects(
            |d| go(d).status = Some("/s".into()),
            "sets both `state` and `status`",
        );
        rejects(
            |d| drop(go(d).values.insert("x".into(), "b".into())),
            "has `values` but no `status`",
        );
        let status_only = |d: &mut Definition| {
            go(d).state = None;
            go(d).status = Some("/s".into());
        };
        rejects(status_only, "has `status` but no `values`");
        rejects(
            |d| {
                status_only(d);
                go(d).values.insert("ok".into(), "nope".into());
            },
            "`events.\"go\".values.ok` names state `nope`",
        );
    }

    #[test]
    fn toml_syntax_errors_point_at_the_line() {
        let err =
            Machine::from_toml("name = \"m\"\nstates = [\"a\"\n").expect_err("unclosed array");
        assert!(
            err.to_string()
                .starts_with("cannot read the machine definition"),
            "{err}"
        );
        assert!(err.to_string().contains("line 2"), "says where: {err}");
    }
}
