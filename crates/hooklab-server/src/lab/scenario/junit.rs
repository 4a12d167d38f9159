//! A run as JUnit XML, the format CI systems show as a test report: one `<testsuite>` per
//! scenario, one `<testcase>` per expectation (a `<failure>` with the message when it does
//! not hold), and one more for the steps when a step could not run.

use super::run::RunReport;
use std::fmt::Write as _;

/// The report as a JUnit XML document.
pub fn to_xml(report: &RunReport) -> String {
    let suite = report.scenario.as_deref().unwrap_or("scenario");
    let mut cases: Vec<(String, Option<String>, String)> = report
        .checks
        .iter()
        .map(|c| {
            (
                c.expectation.clone(),
                (!c.passed).then(|| c.message.clone()),
                c.message.clone(),
            )
        })
        .collect();
    let step_errors: Vec<String> = report
        .steps
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| format!("{}: {e}", s.label)))
        .collect();
    if !step_errors.is_empty() {
        let all = step_errors.join("; ");
        cases.push(("steps".into(), Some(all.clone()), all));
    }
    let failures = cases.iter().filter(|(_, f, _)| f.is_some()).count();
    let seconds = report.duration_ms / 1000.0;
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"hooklab\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{seconds:.3}\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{seconds:.3}\">",
        escape(suite),
        cases.len()
    );
    let _ = writeln!(
        xml,
        "    <properties>\n      <property name=\"target\" value=\"{}\"/>\n      <property name=\"run\" value=\"{}\"/>\n    </properties>",
        escape(&report.target),
        escape(&report.run)
    );
    for (name, failure, message) in &cases {
        let _ = write!(
            xml,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
            escape(suite),
            escape(name)
        );
        match failure {
            Some(f) => {
                let _ = writeln!(
                    xml,
                    ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>",
                    escape(f),
                    escape(f)
                );
            }
            None => {
                let _ = writeln!(
                    xml,
                    ">\n      <system-out>{}</system-out>\n    </testcase>",
                    escape(message)
                );
            }
        }
    }
    let _ = writeln!(
        xml,
        "    <system-out>{}</system-out>\n  </testsuite>\n</testsuites>",
        escape(&report.oracle.verdict)
    );
    xml
}

/// Text safe in an XML attribute or element: the five entities escaped, and characters XML
/// 1.0 cannot hold (most control characters) replaced.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::oracle::judge;
    use crate::lab::scenario::expect::Check;
    use crate::lab::scenario::run::StepReport;

    fn report(checks: Vec<Check>, step_error: Option<&str>) -> RunReport {
        RunReport {
            scenario: Some("dup <race> & \"more\"".into()),
            target: "http://127.0.0.1:1/x".into(),
            run: "abc".into(),
            steps: vec![StepReport {
                index: 0,
                label: "race".into(),
                action: "generate".into(),
                sends: vec![],
                error: step_error.map(str::to_string),
            }],
            oracle: judge(&[], None),
            checks,
            passed: false,
            duration_ms: 1500.0,
        }
    }

    #[test]
    fn one_testcase_per_expectation_with_failures_escaped() {
        let xml = to_xml(&report(
            vec![
                Check {
                    expectation: "consistent_responses".into(),
                    passed: true,
                    message: "same".into(),
                },
                Check {
                    expectation: "handler_ran_once_per_key".into(),
                    passed: false,
                    message: "23 side effects <for> 1 key\u{1}".into(),
                },
            ],
            None,
        ));
        assert!(xml.starts_with("<?xml"));
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(
            xml.contains("name=\"dup &lt;race&gt; &amp; &quot;more&quot;\""),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"23 side effects &lt;for&gt; 1 key\u{fffd}\""),
            "{xml}"
        );
        assert_eq!(xml.matches("<testcase ").count(), 2);
        assert!(xml.contains("time=\"1.500\""));
    }

    #[test]
    fn a_step_that_could_not_run_is_a_failed_testcase() {
        let xml = to_xml(&report(vec![], Some("no answer from http://x")));
        assert!(xml.contains("name=\"steps\""), "{xml}");
        assert!(xml.contains("race: no answer from http://x"), "{xml}");
        assert!(xml.contains("failures=\"1\""));
    }
}
