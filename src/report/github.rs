//! A report as a GitHub Actions step reports it (#32): step outputs, appended
//! to the file `$GITHUB_OUTPUT` names, and a job summary in Markdown,
//! appended to `$GITHUB_STEP_SUMMARY`. `check --github` and `submit --wait
//! --github` write them; the protocheck action (`action.yml`) passes the flag.
//!
//! A summary quotes what a target said (finding messages): it is escaped so
//! that no target can write Markdown, HTML or links into a job's page.

use super::Report;
use crate::suite::{Outcome, VerdictDetail};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// The failing rules a summary lists; the report holds all of them.
const MAX_LISTED: usize = 50;
/// The longest message a summary quotes.
const MAX_MESSAGE_CHARS: usize = 300;

/// Links of a run on a protocheck service (`submit`); none for `check`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    pub run_url: Option<String>,
    pub badge_url: Option<String>,
}

impl Links {
    /// The run's page and the target's badge on `server`, for a report of a
    /// stored run; none for a local check.
    pub fn of(report: &Report, server: &str, target_id: Option<&str>) -> Self {
        let base = server.trim_end_matches('/');
        let Some(run) = &report.run else {
            return Self::default();
        };
        let suite = report
            .verdict
            .as_ref()
            .map_or(run.suite.as_str(), |v| v.suite.as_str());
        Self {
            run_url: Some(format!("{base}/runs/{}", run.id)),
            badge_url: target_id
                .filter(|_| matches!(suite, "mcp" | "rcp"))
                .map(|t| format!("{base}/badge/{t}/{suite}.svg")),
        }
    }
}

/// Where a verdict stands, as the outputs name it: the MCP grade and the RCP
/// level (one of them empty).
fn standing(report: &Report) -> (String, String) {
    match report.verdict.as_ref().map(|v| &v.detail) {
        Some(VerdictDetail::Mcp { grade, .. }) => (grade.clone(), String::new()),
        Some(VerdictDetail::Rcp {
            certified_level, ..
        }) => (String::new(), certified_level.clone()),
        None => (String::new(), String::new()),
    }
}

/// One line of an output's value: no newline can start another output.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The step outputs, one `name=value` a line: `passed` (`true`, `false`, or
/// empty without a verdict), `grade`, `level`, `report` (the report's path),
/// `run-url` and `badge-url`.
pub fn outputs(report: &Report, report_path: Option<&Path>, links: &Links) -> String {
    let (grade, level) = standing(report);
    let passed = report.passed().map_or(String::new(), |p| p.to_string());
    let mut out = String::new();
    for (name, value) in [
        ("passed", passed),
        ("grade", grade),
        ("level", level),
        (
            "report",
            report_path.map_or(String::new(), |p| p.display().to_string()),
        ),
        ("run-url", links.run_url.clone().unwrap_or_default()),
        ("badge-url", links.badge_url.clone().unwrap_or_default()),
    ] {
        let _ = writeln!(out, "{name}={}", one_line(&value));
    }
    out
}

/// Text a target may have written, made inert in Markdown: no HTML, no
/// link or image syntax, no code spans, no table cells, one line, bounded.
pub fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(MAX_MESSAGE_CHARS) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("&#124;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    if s.chars().count() > MAX_MESSAGE_CHARS {
        out.push('…');
    }
    out
}

/// The job summary: the verdict, the gate, the failing rules with their
/// messages (the first [`MAX_LISTED`]), and links.
pub fn summary(report: &Report, links: &Links) -> String {
    let mut out = String::new();
    let target = escape(&report.target.url);
    let _ = writeln!(out, "### protocheck: {target}\n");
    match (&report.verdict, &report.error) {
        (Some(v), _) => {
            let mark = if report.passed() == Some(true) {
                "✅ passes"
            } else {
                "❌ fails"
            };
            let c = v.counts;
            let _ = writeln!(
                out,
                "**{}** · {mark} · {} passed, {} failed, {} warnings, {} skipped\n",
                escape(&v.summary),
                c.pass,
                c.fail,
                c.warn,
                c.skip
            );
        }
        (None, Some(e)) => {
            let _ = writeln!(out, "**no verdict**: {}\n", escape(e));
        }
        (None, None) => {
            let _ = writeln!(out, "**no verdict**\n");
        }
    }
    if let Some(g) = &report.gate {
        if g.passed {
            let _ = writeln!(out, "Gate: passes.\n");
        } else {
            let _ = writeln!(out, "Gate: fails.\n");
            for reason in &g.reasons {
                let _ = writeln!(out, "- {}", escape(reason));
            }
            out.push('\n');
        }
    }
    let failing: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.finding.outcome == Outcome::Fail)
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(out, "| rule | message |\n|---|---|");
        for f in failing.iter().take(MAX_LISTED) {
            let id = f.finding.rule_id.replace('`', "");
            let rule = match f.rule.as_ref().and_then(|r| r.page.as_deref()) {
                Some(page) => format!("[`{id}`]({})", link(page)),
                None => format!("`{id}`"),
            };
            let _ = writeln!(out, "| {rule} | {} |", escape(&f.finding.message));
        }
        if failing.len() > MAX_LISTED {
            let _ = writeln!(
                out,
                "\n{} more failing findings are in the report.",
                failing.len() - MAX_LISTED
            );
        }
        out.push('\n');
    }
    if let Some(url) = &links.run_url {
        let _ = writeln!(out, "[The run on protocheck]({})", link(url));
    }
    if let Some(url) = &links.badge_url {
        let _ = writeln!(out, "\n![badge]({})", link(url));
    }
    out
}

/// A URL of protocheck's own making as a Markdown link target.
fn link(url: &str) -> String {
    url.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '<' | '>'))
        .collect()
}

/// Appends the outputs to `$GITHUB_OUTPUT` and the summary to
/// `$GITHUB_STEP_SUMMARY` (each only when the variable is set, as it is in
/// a GitHub Actions step).
pub fn write(report: &Report, report_path: Option<&Path>, links: &Links) -> Result<(), String> {
    for (var, text) in [
        ("GITHUB_OUTPUT", outputs(report, report_path, links)),
        ("GITHUB_STEP_SUMMARY", summary(report, links)),
    ] {
        let Some(path) = std::env::var_os(var) else {
            continue;
        };
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("cannot write ${var} ({}): {e}", Path::new(&path).display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_target_wrote_stays_text() {
        let hostile =
            "<img src=x onerror=alert(1)> [click](https://evil.example) | `code` ![i](x)\nnext";
        let shown = escape(hostile);
        for bad in ["<img", "](", "|", "\n", "`code`", "!["] {
            assert!(!shown.contains(bad), "{bad} in {shown}");
        }
        assert!(shown.contains("&lt;img"));
        assert_eq!(
            one_line("a\nrun-url=https://evil"),
            "a run-url=https://evil"
        );
    }
}
