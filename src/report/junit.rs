//! JUnit XML, in the shape Jenkins' JUnit schema accepts (`junit-4.xsd`):
//! one `testsuite` per suite and rule group (`rcp.L0`, `mcp.HDR`), one
//! `testcase` per finding, and a `protocheck` suite with the run's outcome.
//!
//! Outcomes map as follows:
//! - pass → a passing test case;
//! - fail → `<failure>` with the message, the rule and its evidence; a
//!   failure the gate's baseline expects → `<skipped>` saying so (as test
//!   runners report an expected failure), so the file agrees with the exit code;
//! - warn → a passing test case with the warning in `<system-out>`: a
//!   warning is a SHOULD the target did not follow, and the verdict does not
//!   fail on it (MCP `compliant`), so a red test would contradict exit code 0;
//!   `--min-grade strict` fails through the gate's own test case instead;
//! - info → passing, the note in `<system-out>`;
//! - skip → `<skipped>` with the reason;
//! - a baselined rule that now passes → `<failure>` (the stale entry fails the gate);
//! - a run that ended without a verdict → an `<error>` test case.

use super::Report;
use crate::suite::{Exchange, Finding, Outcome};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite, XmlString};
use std::fmt::Write;
use std::time::Duration;

/// Characters of a request or response body shown as evidence.
const BODY_CHARS: usize = 2048;
/// Exchanges shown per finding.
const EXCHANGES: usize = 3;

/// The JUnit XML document.
pub fn render(report: &Report) -> String {
    let mut suites: Vec<TestSuite> = Vec::new();
    let gate = report.gate.as_ref();
    for rf in &report.findings {
        let f = &rf.finding;
        let group = rf.rule.as_ref().map_or("unknown", |r| r.group.as_str());
        let name = format!("{}.{}", suite_prefix(&f.rule_id), group);
        let position = match suites.iter().position(|s| s.name.as_str() == name) {
            Some(i) => i,
            None => {
                suites.push(TestSuite::new(clean(&name)));
                suites.len() - 1
            }
        };
        let expected = gate.is_some_and(|g| g.expected_failures.contains(&f.rule_id));
        let stale = gate.is_some_and(|g| g.stale.contains(&f.rule_id));
        let details = details(rf);
        let status = match f.outcome {
            Outcome::Fail | Outcome::Warn if expected => skipped(&format!(
                "expected {} (listed in the baseline): {}\n\n{details}",
                if f.outcome == Outcome::Fail {
                    "failure"
                } else {
                    "warning"
                },
                f.message
            )),
            _ if stale => failure(
                &format!(
                    "listed in the baseline but {} now; remove it from the list",
                    if f.outcome == Outcome::Pass {
                        "passes"
                    } else {
                        "only informs"
                    }
                ),
                "stale-baseline",
                &details,
            ),
            Outcome::Fail => failure(&f.message, severity_type(rf), &details),
            Outcome::Skip => skipped(&f.message),
            Outcome::Pass | Outcome::Warn | Outcome::Info => TestCaseStatus::success(),
        };
        let mut case = TestCase::new(clean(&f.rule_id), status);
        case.set_classname(clean(&format!("protocheck.{name}")));
        case.set_time(Duration::from_millis(f.duration_ms));
        if matches!(f.outcome, Outcome::Warn | Outcome::Info) && !expected && !stale {
            let tag = if f.outcome == Outcome::Warn {
                "WARN"
            } else {
                "INFO"
            };
            case.set_system_out(clean(&format!("{tag}: {}\n\n{details}", f.message)));
        }
        suites[position].add_test_case(case);
    }
    suites.push(outcome_suite(report));

    let mut doc = quick_junit::Report::new("protocheck");
    doc.add_test_suites(suites);
    let mut xml = strip_root_skipped(doc.to_string().unwrap_or_default());
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    xml
}

/// The `protocheck` suite: the run's error, and the gate (or the verdict
/// without one) as a test case, so the file fails exactly when the exit code does.
fn outcome_suite(report: &Report) -> TestSuite {
    let mut suite = TestSuite::new("protocheck");
    suite.add_property(Property::new("target", clean(&report.target.url)));
    suite.add_property(Property::new(
        "generator",
        clean(&format!(
            "{} {}",
            report.generator.name, report.generator.version
        )),
    ));
    if let Some(run) = &report.run {
        suite.add_property(Property::new("run", run.id.to_string()));
        suite.add_property(Property::new("status", run.status.as_str()));
        if let Some(note) = run.credentials_note() {
            suite.add_property(Property::new("credentials", note));
        }
    }
    if let Some(e) = &report.error {
        let status = TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Error,
            message: Some(XmlString::new(clean(&one_line(e)))),
            ty: Some("run-error".into()),
            description: Some(XmlString::new(clean(e))),
            reruns: Default::default(),
        };
        let mut case = TestCase::new("run", status);
        case.set_classname("protocheck");
        suite.add_test_case(case);
    }
    if let Some(v) = &report.verdict {
        suite.add_property(Property::new("verdict", clean(&v.summary)));
        // A run that judged several MCP revisions: a property per revision.
        for r in v.revisions() {
            suite.add_property(Property::new(
                format!("verdict {}", clean(&r.spec_revision)),
                clean(&format!(
                    "{} ({})",
                    r.summary,
                    if r.passed { "passes" } else { "fails" }
                )),
            ));
        }
        let mut case = match &report.gate {
            Some(g) => {
                let status = if g.passed {
                    TestCaseStatus::success()
                } else {
                    failure(
                        &format!("the gate fails: {}", g.reasons.join("; ")),
                        "gate",
                        "",
                    )
                };
                TestCase::new("gate", status)
            }
            None => {
                let status = if v.passed {
                    TestCaseStatus::success()
                } else {
                    failure(&format!("the verdict fails: {}", v.summary), "verdict", "")
                };
                TestCase::new("verdict", status)
            }
        };
        case.set_classname("protocheck");
        suite.add_test_case(case);
    }
    suite
}

fn failure(message: &str, ty: &str, description: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status.set_message(clean(&one_line(message)));
    status.set_type(clean(ty));
    let text = if description.is_empty() {
        message.to_owned()
    } else {
        format!("{message}\n\n{description}")
    };
    status.set_description(clean(&text));
    status
}

/// `<skipped>` carries text only: the Jenkins schema allows it no attributes.
fn skipped(text: &str) -> TestCaseStatus {
    TestCaseStatus::Skipped {
        message: None,
        ty: None,
        description: Some(XmlString::new(clean(text))),
    }
}

/// `MUST`/`SHOULD`/`MAY` as the failure's type.
fn severity_type(rf: &super::ReportFinding) -> &'static str {
    rf.rule.as_ref().map_or("fail", |r| super::keyword(r.level))
}

/// `rcp` or `mcp`, from the rule id.
fn suite_prefix(rule_id: &str) -> String {
    rule_id
        .split('-')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The rule and the evidence, as text for a failure or `system-out`.
pub(crate) fn details(rf: &super::ReportFinding) -> String {
    let mut out = String::new();
    let f = &rf.finding;
    if let Some(rule) = &rf.rule {
        let level = super::keyword(rule.level);
        let _ = writeln!(out, "{} ({level}): {}", f.rule_id, rule.title);
        let _ = write!(out, "spec: {}", rule.spec_ref);
        match &rule.spec_url {
            Some(url) if !rule.spec_ref.contains(url.as_str()) => {
                let _ = writeln!(out, " <{url}>");
            }
            _ => out.push('\n'),
        }
        if let Some(page) = &rule.page {
            let _ = writeln!(out, "how to fix: {page}");
        }
    }
    out.push_str(&evidence_text(f));
    out
}

/// The request line, status and clipped bodies of the first exchanges.
pub(crate) fn evidence_text(f: &Finding) -> String {
    let mut out = String::new();
    let total = f.evidence.len();
    for (i, x) in f.evidence.iter().take(EXCHANGES).enumerate() {
        let _ = writeln!(out, "\nevidence {} of {total}:", i + 1);
        exchange_text(&mut out, x);
    }
    if total > EXCHANGES {
        let _ = writeln!(
            out,
            "\n({} more exchanges in the JSON report)",
            total - EXCHANGES
        );
    }
    out
}

fn exchange_text(out: &mut String, x: &Exchange) {
    let _ = writeln!(out, "> {}", x.request.line);
    if !x.request.body.is_empty() {
        let _ = writeln!(out, "> {}", clip(&x.request.body));
    }
    if let Some(r) = &x.response {
        let status = r
            .status
            .map_or_else(|| "reply".to_owned(), |s| s.to_string());
        let _ = writeln!(out, "< {status} in {} ms", r.elapsed_ms);
        if !r.body.is_empty() {
            let more = if r.truncated { " …(truncated)" } else { "" };
            let _ = writeln!(out, "< {}{more}", clip(&r.body));
        }
    }
    if let Some(e) = &x.error {
        let _ = writeln!(out, "! {}", clip(e));
    }
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(BODY_CHARS) {
        Some((at, _)) => format!("{} …({} bytes in all)", &s[..at], s.len()),
        None => s.to_owned(),
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    match line.char_indices().nth(500) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// Text a target wrote, made safe for XML 1.0: quick-junit strips control
/// characters and escapes markup, but U+FFFE and U+FFFF are not XML
/// characters either, so they are replaced.
fn clean(s: &str) -> String {
    s.replace(['\u{FFFE}', '\u{FFFF}'], "\u{FFFD}")
}

/// Jenkins' schema has no `skipped` attribute on `<testsuites>`, which
/// quick-junit always writes; the counts stay on each `<testsuite>`.
fn strip_root_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let Some(len) = xml[start..].find('>') else {
        return xml;
    };
    let tag = &xml[start..start + len];
    let Some(attr) = tag.find(" skipped=\"") else {
        return xml;
    };
    let value_start = start + attr + " skipped=\"".len();
    let Some(value_len) = xml[value_start..].find('"') else {
        return xml;
    };
    let mut out = String::with_capacity(xml.len());
    out.push_str(&xml[..start + attr]);
    out.push_str(&xml[value_start + value_len + 1..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_loses_only_its_skipped_count() {
        let xml = "<?xml version=\"1.0\"?>\n<testsuites name=\"protocheck\" tests=\"2\" skipped=\"1\" failures=\"0\" errors=\"0\">\n<testsuite name=\"a\" tests=\"2\" skipped=\"1\"/>";
        assert_eq!(
            strip_root_skipped(xml.to_owned()),
            "<?xml version=\"1.0\"?>\n<testsuites name=\"protocheck\" tests=\"2\" failures=\"0\" errors=\"0\">\n<testsuite name=\"a\" tests=\"2\" skipped=\"1\"/>"
        );
    }
}
