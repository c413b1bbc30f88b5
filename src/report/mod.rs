//! Reports: one versioned JSON document ([`Report`]) made from a stored run
//! or a local `check`, and renderers from it to JUnit XML, SARIF 2.1.0 and
//! text. Every renderer is a pure function of a `Report`, so a client that
//! downloads `report.json` renders exactly what the service would.
//!
//! The JSON form is published as a JSON Schema (draft 2020-12) at
//! [`SCHEMA_PATH`]; [`SCHEMA`] is that document.

pub mod gate;
pub mod junit;
pub mod sarif;
pub mod text;

use crate::store::{Run, RunStatus, StoredFinding};
use crate::suite::{self, Finding, Outcome, SpecLevel, Verdict};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use gate::{Gate, GateResult};

/// Version of the report document; bumped on any change a reader must know.
pub const REPORT_VERSION: &str = "1";
/// Where the service publishes the report's JSON Schema.
pub const SCHEMA_PATH: &str = "/api/v1/schema/report.json";
/// The report's JSON Schema (draft 2020-12).
pub const SCHEMA: &str = include_str!("../../schemas/report-v1.json");

/// Where protocheck is described, for report consumers (SARIF `informationUri`).
pub const INFORMATION_URI: &str = "https://github.com/protocheck/protocheck";
/// The RCP/1 specification's "latest" address, the link of rules that cite it by section.
const RCP_SPEC_URL: &str = "https://1ay1.github.io/rcp/spec/";

/// The report document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_VERSION`] for this shape.
    pub report_version: String,
    /// [`SCHEMA_PATH`], relative to the service that served the report.
    #[serde(rename = "$schema")]
    pub schema: String,
    pub generator: Generator,
    pub target: ReportTarget,
    /// The stored run; `None` for a local `check`.
    pub run: Option<RunInfo>,
    /// The verdict; `None` when the run did not finish with one (see `error`).
    pub verdict: Option<Verdict>,
    /// Why there is no verdict: the run ended as `error` or was cancelled,
    /// or the target could not be reached.
    pub error: Option<String>,
    pub findings: Vec<ReportFinding>,
    /// The gate applied by whoever rendered the report; the service never sets it.
    pub gate: Option<GateResult>,
}

/// What produced the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generator {
    pub name: String,
    pub version: String,
}

impl Generator {
    pub fn this() -> Self {
        Self {
            name: "protocheck".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The server under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportTarget {
    /// The canonical URL, or `stdio: CMD` for a local child process.
    pub url: String,
}

/// The stored run a report describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: Uuid,
    pub status: RunStatus,
    /// The suite requested: `auto`, `mcp` or `rcp`.
    pub suite: String,
    pub suite_version: Option<String>,
    /// RFC 3339 UTC with milliseconds.
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub attempts: i32,
}

/// A finding with its rule's catalogue entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// `None` when the rule is no longer in this version's catalogue.
    pub rule: Option<RuleInfo>,
}

/// A rule as reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleInfo {
    pub title: String,
    /// MUST, SHOULD or MAY.
    pub level: SpecLevel,
    /// The outcome a violation produces (`fail` or `warn`, `info` for notes).
    pub severity: Outcome,
    /// The RCP level (`L0`…) or the MCP category (`HDR`…).
    pub group: String,
    /// Where the requirement is written, as the catalogue cites it.
    pub spec_ref: String,
    /// A link to the requirement, where one exists.
    pub spec_url: Option<String>,
}

impl RuleInfo {
    pub fn of(id: &str) -> Option<Self> {
        suite::rule(id).map(|r| Self {
            title: r.title.to_owned(),
            level: r.level,
            severity: r.on_failure,
            group: r.group.to_owned(),
            spec_ref: r.spec_ref.to_owned(),
            spec_url: spec_url(r.spec_ref),
        })
    }
}

/// The link of a catalogue `spec_ref`: MCP rules cite a URL; RCP rules cite
/// `RCP/1 §n`, which links to the spec's latest published text.
fn spec_url(spec_ref: &str) -> Option<String> {
    let first = spec_ref.split_whitespace().next().unwrap_or_default();
    if first.starts_with("https://") {
        Some(first.trim_end_matches([',', ';']).to_owned())
    } else if spec_ref.starts_with("RCP/1") {
        Some(RCP_SPEC_URL.to_owned())
    } else {
        None
    }
}

/// `MUST`, `SHOULD` or `MAY`.
pub(crate) fn keyword(level: SpecLevel) -> &'static str {
    match level {
        SpecLevel::Must => "MUST",
        SpecLevel::Should => "SHOULD",
        SpecLevel::May => "MAY",
    }
}

fn with_rules(findings: impl IntoIterator<Item = Finding>) -> Vec<ReportFinding> {
    findings
        .into_iter()
        .map(|finding| ReportFinding {
            rule: RuleInfo::of(&finding.rule_id),
            finding,
        })
        .collect()
}

/// RFC 3339 UTC with milliseconds, as the API writes times.
fn rfc3339(ms: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

impl Report {
    fn new(target: String) -> Self {
        Self {
            report_version: REPORT_VERSION.to_owned(),
            schema: SCHEMA_PATH.to_owned(),
            generator: Generator::this(),
            target: ReportTarget { url: target },
            run: None,
            verdict: None,
            error: None,
            findings: Vec::new(),
            gate: None,
        }
    }

    /// The report of a stored run (finished or not: the caller decides what
    /// to serve for a run still going).
    pub fn from_run(run: &Run, findings: &[StoredFinding]) -> Self {
        let mut report = Self::new(run.target_url.clone());
        report.run = Some(RunInfo {
            id: run.id,
            status: run.status,
            suite: run.suite.clone(),
            suite_version: run.suite_version.clone(),
            created_at: rfc3339(run.created_at_ms),
            started_at: run.started_at_ms.map(rfc3339),
            finished_at: run.finished_at_ms.map(rfc3339),
            attempts: run.attempts,
        });
        report.verdict = run.verdict.clone();
        report.error = match run.status {
            RunStatus::Error => Some(
                run.error
                    .clone()
                    .unwrap_or_else(|| "the run ended without a verdict".to_owned()),
            ),
            RunStatus::Cancelled => Some(
                run.error
                    .clone()
                    .unwrap_or_else(|| "the run was cancelled".to_owned()),
            ),
            _ => None,
        };
        report.findings = with_rules(findings.iter().map(|f| f.finding.clone()));
        report
    }

    /// The report of a local `check`: its verdict, or why there is none.
    pub fn from_check(target: &str, verdict: Result<&Verdict, &str>, findings: &[Finding]) -> Self {
        let mut report = Self::new(target.to_owned());
        match verdict {
            Ok(v) => report.verdict = Some(v.clone()),
            Err(e) => report.error = Some(e.to_owned()),
        }
        report.findings = with_rules(findings.iter().cloned());
        report
    }

    /// The findings alone, as the gate judges them.
    pub fn plain_findings(&self) -> Vec<Finding> {
        self.findings.iter().map(|f| f.finding.clone()).collect()
    }

    /// Applies `gate` to the verdict and records the result in the report.
    /// Without a verdict there is nothing to judge and the report is unchanged.
    pub fn apply_gate(&mut self, gate: &Gate) -> Option<&GateResult> {
        let verdict = self.verdict.as_ref()?;
        let result = gate.evaluate(verdict, &self.plain_findings());
        self.gate = Some(result);
        self.gate.as_ref()
    }

    /// Whether the report passes: the gate's answer when one was applied,
    /// else the verdict's; `None` without a verdict (a usage or network error).
    pub fn passed(&self) -> Option<bool> {
        let verdict = self.verdict.as_ref()?;
        Some(self.gate.as_ref().map_or(verdict.passed, |g| g.passed))
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Report formats, as the CLI names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Junit,
    Sarif,
}

impl Report {
    /// The report rendered in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => text::render(self),
            Format::Json => {
                let mut s = self.to_json();
                s.push('\n');
                s
            }
            Format::Junit => junit::render(self),
            Format::Sarif => {
                let mut s = serde_json::to_string_pretty(&sarif::render(self)).unwrap_or_default();
                s.push('\n');
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_links() {
        assert_eq!(
            spec_url("https://modelcontextprotocol.io/specification/2026-07-28/x#y"),
            Some("https://modelcontextprotocol.io/specification/2026-07-28/x#y".into())
        );
        assert_eq!(spec_url("RCP/1 §14.2, §8"), Some(RCP_SPEC_URL.into()));
        assert_eq!(spec_url("protocheck decision 2"), None);
    }
}
