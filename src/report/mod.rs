//! Reports: one versioned JSON document ([`Report`]) made from a stored run
//! or a local `check`, and renderers from it to JUnit XML, SARIF 2.1.0 and
//! text. Every renderer is a pure function of a `Report`, so a client that
//! downloads `report.json` renders exactly what the service would.
//!
//! The JSON form is published as a JSON Schema (draft 2020-12) at
//! [`SCHEMA_PATH`]; [`SCHEMA`] is that document.

pub mod gate;
pub mod github;
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
    /// Present when the run was judged with a token its submitter supplied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<RunCredentials>,
}

/// What a run was judged with beyond the URL: never the token, only its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCredentials {
    /// `bearer`.
    pub kind: String,
    /// "judged with a token supplied by the submitter".
    pub note: String,
}

impl RunInfo {
    /// The sentence reports show for a run judged with a submitted token.
    pub fn credentials_note(&self) -> Option<&str> {
        self.credentials.as_ref().map(|c| c.note.as_str())
    }
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
    /// The rule's page (`/rules/{id}`: how protocheck probes it, what a
    /// failure usually means, how to fix it) on the service that served the
    /// report, or on the one `check --public-url` names; absent when no
    /// service is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

impl RuleInfo {
    pub fn of(id: &str) -> Option<Self> {
        suite::index::rule(id).map(|r| Self {
            title: r.title.to_owned(),
            level: r.level,
            severity: r.on_failure,
            group: r.group.to_owned(),
            spec_ref: r.spec_ref.to_owned(),
            spec_url: spec_url(r.spec_ref),
            page: None,
        })
    }
}

/// `id`'s rule page under `base` (a service's public address).
pub fn rule_page(base: &str, id: &str) -> String {
    format!(
        "{}{}",
        base.trim_end_matches('/'),
        crate::suite::index::page_path(id)
    )
}

/// The link of a catalogue `spec_ref`: MCP rules cite a URL; RCP rules cite
/// `RCP/1 §n`, which links to the spec's latest published text.
pub(crate) fn spec_url(spec_ref: &str) -> Option<String> {
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
            suite: run.suite.as_str().to_owned(),
            suite_version: run.suite_version.clone(),
            created_at: crate::rfc3339(run.created_at_ms),
            started_at: run.started_at_ms.map(crate::rfc3339),
            finished_at: run.finished_at_ms.map(crate::rfc3339),
            attempts: run.attempts,
            credentials: run.credentials_used().map(|kind| RunCredentials {
                kind: kind.to_owned(),
                note: crate::credentials::judged_with(Some(kind), &run.options).unwrap_or_default(),
            }),
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

    /// Links every finding's rule to its page on the service at `base`.
    pub fn link_rules(&mut self, base: &str) {
        for f in &mut self.findings {
            if let Some(rule) = &mut f.rule {
                rule.page = Some(rule_page(base, &f.finding.rule_id));
            }
        }
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
    use crate::suite::{
        Counts, Exchange, LevelReport, RequestRecord, ResponseRecord, SuiteId, VerdictDetail,
    };

    /// A report using every optional part: run, RCP verdict with profile
    /// differences, evidence with headers, a rule that is not in the catalogue, a gate.
    fn full_report() -> Report {
        let findings = vec![
            Finding {
                rule_id: "RCP-REF-27".into(),
                outcome: Outcome::Fail,
                message: "rerank failed".into(),
                evidence: vec![Exchange {
                    request: RequestRecord {
                        line: "POST http://127.0.0.1:1/rcp/rerank".into(),
                        headers: vec![("content-type".into(), "application/json".into())],
                        body: "{}".into(),
                    },
                    response: Some(ResponseRecord {
                        status: Some(200),
                        headers: vec![("x-a".into(), "1".into()), ("x-a".into(), "2".into())],
                        body: "{\"error\":{}}".into(),
                        truncated: true,
                        elapsed_ms: 3,
                    }),
                    error: None,
                }],
                duration_ms: 4,
            },
            Finding {
                rule_id: "RCP-GONE-001".into(),
                outcome: Outcome::Warn,
                message: "a rule from an older catalogue".into(),
                evidence: vec![],
                duration_ms: 0,
            },
        ];
        let verdict = Verdict {
            suite: SuiteId::Rcp,
            suite_version: "0.2.0".into(),
            spec_revision: "RCP/1 1.0".into(),
            passed: false,
            summary: "L1".into(),
            counts: Counts::of(&findings),
            detail: VerdictDetail::Rcp {
                profile: "reference".into(),
                certified_level: "L1".into(),
                declared_level: None,
                honest: None,
                protocol_observed: true,
                report: Box::new(LevelReport {
                    honesty: "undeclared".into(),
                    missing_for_next: vec!["L2 needs #27".into()],
                    violations_outside_levels: 0,
                    levels: [("L2".to_owned(), Counts::of(&findings))].into(),
                    profile_differences: vec!["#27 differs".into()],
                    not_exercised: vec!["`log`: advertised, not exercised: over HTTP".into()],
                }),
            },
        };
        let mut report = Report::from_check("http://127.0.0.1:1/rcp", Ok(&verdict), &findings);
        report.run = Some(RunInfo {
            id: Uuid::nil(),
            status: RunStatus::Failed,
            suite: "rcp".into(),
            suite_version: Some("0.2.0".into()),
            created_at: crate::rfc3339(1_700_000_000_000),
            started_at: Some(crate::rfc3339(1_700_000_000_100)),
            finished_at: None,
            attempts: 1,
            credentials: None,
        });
        report.apply_gate(&Gate {
            expected_failures: Some(["RCP-REF-27".to_owned()].into()),
            ..Gate::default()
        });
        report
    }

    #[test]
    fn a_full_report_round_trips_and_matches_its_schema() {
        let report = full_report();
        assert!(report.findings[1].rule.is_none());
        assert_eq!(report.passed(), Some(true), "{:?}", report.gate);
        let text = report.to_json();
        let back: Report = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, report);
        let schema: serde_json::Value = serde_json::from_str(SCHEMA).expect("schema");
        let validator = jsonschema::draft202012::new(&schema).expect("compiles");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        for format in [Format::Text, Format::Junit, Format::Sarif] {
            assert_eq!(back.render(format), report.render(format));
        }
    }

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
