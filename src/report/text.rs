//! The text report: one line per finding, then the counts, the verdict and
//! the gate. `check` prints the finding lines as findings arrive and the
//! rest at the end; [`render`] is both at once.

use super::Report;
use crate::suite::{Finding, Outcome};
use std::fmt::Write;

/// One finding: `FAIL  RCP-L0-003    message`.
pub fn finding_line(f: &Finding) -> String {
    let tag = match f.outcome {
        Outcome::Pass => "PASS",
        Outcome::Fail => "FAIL",
        Outcome::Warn => "WARN",
        Outcome::Info => "INFO",
        Outcome::Skip => "SKIP",
    };
    format!("{tag:<4}  {:<12}  {}", f.rule_id, f.message)
}

/// Everything after the finding lines but the error: counts, verdict, gate.
/// (`check` prints the error on stderr.)
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    let to_fix: Vec<_> = report
        .findings
        .iter()
        .filter(|f| matches!(f.finding.outcome, Outcome::Fail | Outcome::Warn))
        .collect();
    if !to_fix.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "how to fix each failure and warning (its rule's page):"
        );
        for f in to_fix {
            let id = &f.finding.rule_id;
            match f.rule.as_ref().and_then(|r| r.page.as_deref()) {
                Some(page) => {
                    let _ = writeln!(out, "  {id:<12}  {page}");
                }
                None => {
                    let _ = writeln!(out, "  {id:<12}  protocheck rules {id}");
                }
            }
        }
    }
    if let Some(v) = &report.verdict {
        let c = v.counts;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} passed, {} failed, {} warnings, {} info, {} skipped",
            c.pass, c.fail, c.warn, c.info, c.skip
        );
        // A run that judged several MCP revisions: one line each, then the
        // verdict, whose summary names the lowest grade and each one's, so
        // that the last line never shows one revision's grade alone.
        for r in v.revisions() {
            let c = r.counts;
            let _ = writeln!(
                out,
                "  MCP {}: {} ({}); {} passed, {} failed, {} warnings, {} info, {} skipped",
                r.spec_revision,
                r.summary,
                if r.passed { "passes" } else { "fails" },
                c.pass,
                c.fail,
                c.warn,
                c.info,
                c.skip
            );
        }
        let _ = writeln!(
            out,
            "verdict: {} ({})",
            v.summary,
            if v.passed { "passes" } else { "fails" }
        );
    }
    if let Some(g) = &report.gate {
        if g.passed {
            let _ = writeln!(out, "gate: passes");
        } else {
            let _ = writeln!(out, "gate: fails");
            for reason in &g.reasons {
                let _ = writeln!(out, "  - {reason}");
            }
        }
        if !g.expected_failures.is_empty() {
            let _ = writeln!(
                out,
                "  expected failures (baseline): {}",
                g.expected_failures.join(", ")
            );
        }
    }
    out
}

/// The whole text report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&finding_line(&f.finding));
        out.push('\n');
    }
    out.push_str(&summary(report));
    if let Some(note) = report.run.as_ref().and_then(|r| r.credentials_note()) {
        out.push_str(&format!("credentials: {note}\n"));
    }
    if let Some(e) = &report.error {
        out.push_str(&format!("error: {e}\n"));
    }
    out
}
