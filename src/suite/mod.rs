//! The suite engine: rule catalogues, findings with evidence, verdicts, and the
//! runner. It knows nothing about the database or the router: a run reads a
//! target and writes findings into a channel, and whoever drives it (a worker,
//! the `check` command) decides where they go.

pub mod context;
pub mod coverage;
pub mod detect;
pub mod grade;
pub mod index;
pub mod mcp;
pub mod mcp2025;
pub(crate) mod permits;
pub mod rcp;
pub(crate) mod rtt;
pub mod runner;
pub(crate) mod schedule;
pub mod sign_in;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

// This file holds the types every other module of the suite builds on (and
// names none of them): the runner dispatches to the suites above them, the
// run's context is `context`, the rule lookups over every catalogue are
// `index` (tests/it/architecture.rs keeps it so).

/// The suite a user asks for. `Auto` probes the target and picks one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuiteChoice {
    Auto,
    Mcp,
    Rcp,
}

impl SuiteChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Mcp => "mcp",
            Self::Rcp => "rcp",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "mcp" => Some(Self::Mcp),
            "rcp" => Some(Self::Rcp),
            _ => None,
        }
    }

    /// The protocol a choice names; `None` for `auto`, which detection decides.
    pub fn protocol(self) -> Option<SuiteId> {
        match self {
            Self::Auto => None,
            Self::Mcp => Some(SuiteId::Mcp),
            Self::Rcp => Some(SuiteId::Rcp),
        }
    }
}

/// A protocol suite the engine can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuiteId {
    Mcp,
    Rcp,
}

impl SuiteId {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Rcp => "rcp",
        }
    }

    /// The suite a name such as `mcp` names; `auto` names none.
    pub fn parse(s: &str) -> Option<Self> {
        SuiteChoice::parse(s).and_then(SuiteChoice::protocol)
    }
}

/// The MCP revision a run judges. A server may speak several (a dual-era
/// server answers both `server/discover` and `initialize`); `newest`, the
/// default, judges it by the newest one it speaks (see [`detect::mcp_route`]),
/// `all` by each one it speaks, one suite after the other (see
/// [`detect::mcp_routes`]).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
pub enum McpRevision {
    /// The newest revision the server speaks.
    #[default]
    #[serde(rename = "newest")]
    Newest,
    /// MCP 2026-07-28 (`server/discover`, per-request metadata, stateless).
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
    /// MCP 2025-11-25 (`initialize`, sessions), over Streamable HTTP or stdio.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// Every revision the server speaks, each judged by its own suite in the
    /// one run: the verdict has one part per revision.
    #[serde(rename = "all")]
    All,
}

impl McpRevision {
    /// Every choice, in the order forms and messages list them.
    pub const CHOICES: [Self; 4] = [
        Self::Newest,
        Self::V2026_07_28,
        Self::V2025_11_25,
        Self::All,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Newest => "newest",
            Self::V2026_07_28 => "2026-07-28",
            Self::V2025_11_25 => "2025-11-25",
            Self::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::CHOICES.into_iter().find(|r| r.as_str() == s)
    }
}

/// What the spec says about the behaviour a rule checks (RFC 2119 keyword).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum SpecLevel {
    Must,
    Should,
    May,
}

/// The outcome of one rule on one target.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Warn,
    Info,
    Skip,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Skip => "skip",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pass" => Some(Self::Pass),
            "fail" => Some(Self::Fail),
            "warn" => Some(Self::Warn),
            "info" => Some(Self::Info),
            "skip" => Some(Self::Skip),
            _ => None,
        }
    }
}

/// One entry of a suite's rule catalogue. The id appears once in the source, here.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Rule {
    /// Stable identifier, e.g. `RCP-L0-003`.
    pub id: &'static str,
    pub title: &'static str,
    pub level: SpecLevel,
    /// The outcome a violation produces: `fail` for a MUST, usually `warn` for a SHOULD.
    pub on_failure: Outcome,
    /// Where the requirement is written: a spec section and, where one exists, a link.
    pub spec_ref: &'static str,
    /// Grouping shown in reports: the RCP level (`L0`…) or the MCP category (`HDR`…).
    pub group: &'static str,
    /// What the rule's page says beyond the requirement (see [`Help`]).
    #[serde(skip)]
    pub help: Help,
}

/// What a rule's page (`/rules/{id}`) says beyond the requirement itself,
/// written beside the rule so that the catalogue stays the one source: how
/// protocheck probes it, what a failure usually means in practice, and how a
/// server author fixes it. Every rule of every suite carries one (a test
/// walks the catalogue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Help {
    /// How protocheck probes the requirement: what it sends and what it reads.
    pub probe: &'static str,
    /// What a failure usually means in practice.
    pub failure: &'static str,
    /// How to fix a failure.
    pub fix: &'static str,
}

impl Help {
    /// No help written yet; the catalogue test rejects a rule that keeps it.
    pub const NONE: Self = Self {
        probe: "",
        failure: "",
        fix: "",
    };

    pub const fn is_written(&self) -> bool {
        !self.probe.is_empty() && !self.failure.is_empty() && !self.fix.is_empty()
    }
}

impl Rule {
    /// The rule with its page's help: how protocheck probes it, what a
    /// failure usually means, and how to fix it.
    pub const fn help(
        mut self,
        probe: &'static str,
        failure: &'static str,
        fix: &'static str,
    ) -> Self {
        self.help = Help {
            probe,
            failure,
            fix,
        };
        self
    }
}

/// The evidence types live with the transport that records them; the suite
/// and everything above it name them through here.
pub use crate::transport::evidence::{Exchange, RequestRecord, ResponseRecord};

/// A finding: one rule's outcome on the target, with the message a server author
/// can act on and the exchanges that prove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Finding {
    pub rule_id: String,
    pub outcome: Outcome,
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Exchange>,
    pub duration_ms: u64,
}

impl Finding {
    /// Hides `secret` (a run's token) wherever the finding would show it:
    /// its message and every part of its evidence, whole copies and the
    /// pieces of one cut by an excerpt (see
    /// [`crate::transport::evidence::hide_secret`]). Request headers are
    /// redacted by the transport already; this catches a server that repeats
    /// the token in a body or another header (§15.9: never shown).
    pub fn redact(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        if let Some(hidden) =
            crate::transport::evidence::hide_secret(&self.message, secret, "[redacted]")
        {
            self.message = hidden;
        }
        for exchange in &mut self.evidence {
            exchange.replace_secret(secret, "[redacted]");
        }
    }
}

/// Findings per outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Counts {
    pub pass: u32,
    pub fail: u32,
    pub warn: u32,
    pub info: u32,
    pub skip: u32,
}

impl Counts {
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.pass += 1,
            Outcome::Fail => self.fail += 1,
            Outcome::Warn => self.warn += 1,
            Outcome::Info => self.info += 1,
            Outcome::Skip => self.skip += 1,
        }
    }

    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Self {
        let mut counts = Self::default();
        for f in findings {
            counts.add(f.outcome);
        }
        counts
    }

    pub fn total(&self) -> u32 {
        self.pass + self.fail + self.warn + self.info + self.skip
    }
}

/// The verdict of a finished run. `passed` decides the run's status
/// (`passed` / `failed`); the rest is what reports and badges show. A run
/// that judged several MCP revisions combines theirs (see
/// [`Verdict::of_revisions`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Verdict {
    pub suite: SuiteId,
    /// Version of protocheck's rules for this suite; stored so old reports
    /// keep meaning. For a run that judged several MCP revisions, each
    /// revision's (`2026-07-28 0.2.0 · 2025-11-25 0.1.0`).
    pub suite_version: String,
    /// The protocol revision judged against; for a run that judged several
    /// MCP revisions, each of them (`2026-07-28, 2025-11-25`).
    pub spec_revision: String,
    /// For a run that judged several MCP revisions: whether every one passed.
    pub passed: bool,
    /// One line for people: `L0`, `L1 · OVERCLAIMED (declared L2)`,
    /// `compliant`; for several MCP revisions, the lowest grade and each
    /// one's summary (`non-compliant — 2026-07-28 strict · 2025-11-25
    /// non-compliant: 2 failing`).
    pub summary: String,
    pub counts: Counts,
    #[serde(flatten)]
    pub detail: VerdictDetail,
}

/// Suite-specific verdict fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum VerdictDetail {
    Rcp {
        profile: String,
        /// `none`, `L0`, `L1` or `L2`.
        certified_level: String,
        declared_level: Option<String>,
        /// Whether a valid declaration was compared with the certified level:
        /// false when it is above it (OVERCLAIMED), true when it is not, and
        /// null when nothing was compared (no declaration, one that is not a
        /// level, or no level established; `honesty` says which). Verdicts
        /// stored with a plain `true` or `false` read as they were.
        honest: Option<bool>,
        /// Whether the run saw the target speak RCP: at least one request was
        /// answered with a well-formed JSON-RPC 2.0 response (`"jsonrpc":
        /// "2.0"`, an `id`, and exactly one of `result` and `error`), whatever
        /// its HTTP status. A target that answered only with HTTP errors,
        /// other bodies or silence is still judged, but not recorded as an
        /// RCP server. Verdicts stored before the field existed read as true:
        /// their target's protocol was recorded then.
        #[serde(default = "observed_before_recorded")]
        protocol_observed: bool,
        /// The level report: honesty, what the next level needs, per-level
        /// counts. Flattened into the same JSON object; boxed so a verdict
        /// stays small to move around.
        #[serde(flatten)]
        report: Box<LevelReport>,
    },
    Mcp {
        /// `strict`, `compliant`, `non-compliant`, or `not judged` when the
        /// core rules could not be judged (see [`grade`]); for a run that
        /// judged several revisions, the lowest of theirs.
        grade: String,
        /// Why no grade was given, in a few words (`authorization
        /// required`), when `grade` is `not judged`; absent otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        withheld: Option<String>,
        /// For a run that judged several revisions: each one's grade, beside
        /// the lowest (`{"2026-07-28": "strict", "2025-11-25": "compliant"}`),
        /// so that `grade` is never read as every revision's. Absent when
        /// the run judged one revision.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        grade_by_revision: BTreeMap<String, String>,
        /// For a run that judged each revision the target speaks
        /// (`mcp_revision: all`): one verdict per revision, newest first.
        /// Empty (and absent on the wire) when the run judged one revision,
        /// as in every verdict stored before the field existed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        revisions: Vec<RevisionVerdict>,
        /// For such a run: the revisions it did not judge, and why
        /// (`2026-07-28: not spoken`). Absent when there are none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_judged: Vec<String>,
    },
}

impl VerdictDetail {
    /// The detail of an MCP verdict of one revision.
    pub fn mcp(grade: impl Into<String>) -> Self {
        Self::mcp_graded(grade, None)
    }

    /// The detail of an MCP verdict of one revision, with why no grade was
    /// given when none was.
    pub fn mcp_graded(grade: impl Into<String>, withheld: Option<String>) -> Self {
        Self::Mcp {
            grade: grade.into(),
            withheld,
            grade_by_revision: BTreeMap::new(),
            revisions: Vec::new(),
            not_judged: Vec::new(),
        }
    }
}

/// One MCP revision's verdict inside a run that judged several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RevisionVerdict {
    /// The revision this part judged, e.g. `2025-11-25`.
    pub spec_revision: String,
    /// Version of protocheck's rules for that revision's suite.
    pub suite_version: String,
    /// `strict`, `compliant`, `non-compliant` or `not judged`.
    pub grade: String,
    /// Why no grade was given, when `grade` is `not judged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    pub passed: bool,
    /// The suite's own one-line summary for this revision.
    pub summary: String,
    /// Findings of this revision's suite only.
    pub counts: Counts,
}

/// The MCP grades, lowest first: a failure is a fact about the server, so
/// it ranks below a revision that could not be judged.
const GRADES: [&str; 4] = ["non-compliant", NOT_JUDGED, "compliant", "strict"];

/// The grade of a revision whose core rules could not be judged.
pub const NOT_JUDGED: &str = "not judged";

impl Verdict {
    /// The grade of an MCP verdict, of one revision or several.
    pub fn mcp_grade(&self) -> Option<&str> {
        match &self.detail {
            VerdictDetail::Mcp { grade, .. } => Some(grade),
            VerdictDetail::Rcp { .. } => None,
        }
    }

    /// Each judged revision's grade, newest first, for a verdict of several
    /// MCP revisions (`2026-07-28 strict · 2025-11-25 compliant`); `None`
    /// for any other verdict.
    pub fn grades_by_revision(&self) -> Option<String> {
        let revisions = self.revisions();
        if revisions.is_empty() {
            return None;
        }
        Some(
            revisions
                .iter()
                .map(|r| format!("{} {}", r.spec_revision, r.grade))
                .collect::<Vec<_>>()
                .join(" · "),
        )
    }

    /// The per-revision verdicts of a run that judged several MCP revisions;
    /// empty for any other verdict.
    pub fn revisions(&self) -> &[RevisionVerdict] {
        match &self.detail {
            VerdictDetail::Mcp { revisions, .. } => revisions,
            _ => &[],
        }
    }

    /// One verdict of the MCP verdicts `parts` (one per revision judged,
    /// newest first) and the revisions not judged, with why: it passes only
    /// if every part passed, its grade is the lowest of theirs, its counts
    /// their sum, and its summary and revision name each part. `None` when
    /// `parts` is empty.
    pub fn of_revisions(parts: Vec<Verdict>, not_judged: Vec<String>) -> Option<Verdict> {
        let first = parts.first()?;
        let suite = first.suite;
        let mut counts = Counts::default();
        let mut revisions = Vec::with_capacity(parts.len());
        for part in &parts {
            let c = part.counts;
            counts.pass += c.pass;
            counts.fail += c.fail;
            counts.warn += c.warn;
            counts.info += c.info;
            counts.skip += c.skip;
            let grade = part
                .mcp_grade()
                .unwrap_or(if part.passed {
                    "compliant"
                } else {
                    "non-compliant"
                })
                .to_owned();
            let withheld = match &part.detail {
                VerdictDetail::Mcp { withheld, .. } => withheld.clone(),
                VerdictDetail::Rcp { .. } => None,
            };
            revisions.push(RevisionVerdict {
                spec_revision: part.spec_revision.clone(),
                suite_version: part.suite_version.clone(),
                grade,
                withheld,
                passed: part.passed,
                summary: part.summary.clone(),
                counts: c,
            });
        }
        let lowest = revisions.iter().min_by_key(|r| {
            GRADES
                .iter()
                .position(|known| *known == r.grade)
                .unwrap_or(0)
        });
        let grade = lowest
            .map_or("non-compliant", |r| r.grade.as_str())
            .to_owned();
        let withheld = lowest.and_then(|r| r.withheld.clone());
        let join = |f: &dyn Fn(&RevisionVerdict) -> String| {
            revisions.iter().map(f).collect::<Vec<_>>().join(" · ")
        };
        // The combined grade first, each revision's beside it: the lowest
        // grade alone would read as every revision's.
        let mut summary = format!(
            "{grade} — {}",
            join(&|r| format!("{} {}", r.spec_revision, r.summary))
        );
        for note in &not_judged {
            summary.push_str(" · ");
            summary.push_str(note);
        }
        let spec_revision = revisions
            .iter()
            .map(|r| r.spec_revision.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let suite_version = join(&|r| format!("{} {}", r.spec_revision, r.suite_version));
        Some(Verdict {
            suite,
            suite_version,
            spec_revision,
            passed: revisions.iter().all(|r| r.passed),
            summary,
            counts,
            detail: VerdictDetail::Mcp {
                grade,
                withheld,
                grade_by_revision: revisions
                    .iter()
                    .map(|r| (r.spec_revision.clone(), r.grade.clone()))
                    .collect(),
                revisions,
                not_judged,
            },
        })
    }
}

fn observed_before_recorded() -> bool {
    true
}

/// Whether an MCP run's findings show the target speaking MCP: its
/// discovery or initialize handshake passed, or it challenged as a protected
/// MCP server does. A target that answered nothing but redirects, errors or
/// non-JSON gets a verdict (it fails the handshake) but is not recorded as
/// speaking MCP (#31 item 11), as an RCP target must first answer JSON-RPC.
pub fn mcp_observed<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> bool {
    const SPOKEN: [&str; 4] = [
        "MCP-DSC-001",
        "MCP25-LIF-001",
        "MCP-AUT-001",
        "MCP25-AUT-001",
    ];
    findings
        .into_iter()
        .any(|f| f.outcome == Outcome::Pass && SPOKEN.contains(&f.rule_id.as_str()))
}

impl VerdictDetail {
    /// Whether the run observed the target speaking the suite's protocol, so
    /// that the target may be recorded as speaking it. For MCP the verdict
    /// alone cannot tell; the worker reads the findings ([`mcp_observed`]).
    pub fn protocol_observed(&self) -> bool {
        match self {
            Self::Rcp {
                protocol_observed, ..
            } => *protocol_observed,
            Self::Mcp { .. } => true,
        }
    }
}

/// What an RCP verdict reports beyond the certified and declared levels.
/// Every field defaults, so verdicts stored before a field existed still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LevelReport {
    /// The declaration against the certified level: `consistent`,
    /// `OVERCLAIMED`, `undeclared`, `invalid`, or `unverified` (no level
    /// could be established: the handshake was not observed, RCP decision 3).
    #[serde(default)]
    pub honesty: String,
    /// What the level above the certified one is missing, one line each
    /// ("L1 needs `filter`, spec §14.2; not advertised").
    #[serde(default)]
    pub missing_for_next: Vec<String>,
    /// Rules outside the levels that failed or warned: reported, counted,
    /// never lowering the certified level (RCP decision 10).
    #[serde(default)]
    pub violations_outside_levels: u32,
    /// Findings per level group (`L0`, `L1`, `L2`, `outside`).
    #[serde(default)]
    pub levels: BTreeMap<String, Counts>,
    /// Where the `spec` and `reference` profiles judge this server
    /// differently, and why, naming the spec section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_differences: Vec<String>,
    /// Advertised features protocheck could not exercise, with what would
    /// exercise them: they neither count for a level nor block it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_exercised: Vec<String>,
}

/// Options a run carries, as the engine reads them. Unknown keys are refused so
/// a typo is not silently ignored. What a submission carries beyond them (where
/// to announce the run's end) is the service's concern: see
/// `submit::SubmitOptions`, the API's `options` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// RCP profile: `spec` (default) or `reference`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Allow probes that write to the target (RCP `index/*`, `feedback`,
    /// `memory/build`). Off when absent: no side effects on a stranger's server
    /// unless the run asks for them (see [`RunOptions::writes_allowed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_writes: Option<bool>,
    /// Allow MCP tool calls with real arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_tool_calls: Option<bool>,
    /// MCP registry `server.json`: a URL or the document itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_json: Option<serde_json::Value>,
    /// Per-request timeout in milliseconds (bounded by the service's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_ms: Option<u64>,
    /// An OAuth bearer token for an MCP server that requires authorization
    /// (`mcp-2026-07-28.md` §15.9): sent on every request of this run and never
    /// kept. It is read from input but never serialised, so it is absent from
    /// the stored options and from the dedup key (`submit::dedup_key`);
    /// only a run driven in-process (`protocheck check`) can use it.
    #[serde(default, skip_serializing)]
    pub bearer_token: Option<BearerToken>,
    /// A second token for the same server with less scope than
    /// `bearer_token`: MCP25-AUT-007 sends it on a request that needs more
    /// and expects 403 `insufficient_scope`. Kept like `bearer_token`: never
    /// serialised, so only `protocheck check` can use it.
    #[serde(default, skip_serializing)]
    pub limited_token: Option<BearerToken>,
    /// The MCP revision to judge: `newest` (the default), `2026-07-28`,
    /// `2025-11-25` or `all` (every revision the server speaks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_revision: Option<McpRevision>,
    /// What protocheck saw while signing in for a person on the web form
    /// (see [`sign_in`]): set by the sign-in flow only, judged by the
    /// authorization rules each step bears on. Holds no secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<SignIn>,
}

/// A credential given with a run. Its `Debug` form and every serialisation
/// hide the value; only [`BearerToken::expose`] reads it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct BearerToken(String);

impl BearerToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token itself, for the `Authorization` header and for redaction.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken([redacted])")
    }
}

/// Per-request timeout when a run does not set one.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest per-request timeout a run may ask for.
pub const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest bearer token a run may carry.
pub const MAX_BEARER_TOKEN_BYTES: usize = 4096;
/// Whole-run deadline: a run still going after this ends as `error`.
pub const DEFAULT_RUN_DEADLINE: Duration = Duration::from_secs(120);

impl RunOptions {
    /// Checks values that serde cannot: returns a message for the user.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(p) = &self.profile
            && p != "spec"
            && p != "reference"
        {
            return Err(format!(
                "options.profile `{p}` is unknown; use `spec` or `reference`"
            ));
        }
        if let Some(ms) = self.request_timeout_ms
            && (ms == 0 || ms > MAX_REQUEST_TIMEOUT.as_millis() as u64)
        {
            return Err(format!(
                "options.request_timeout_ms must be between 1 and {}",
                MAX_REQUEST_TIMEOUT.as_millis()
            ));
        }
        for (name, token) in [
            ("bearer_token", &self.bearer_token),
            ("limited_token", &self.limited_token),
        ] {
            if let Some(token) = token
                && (token.0.is_empty()
                    || token.0.len() > MAX_BEARER_TOKEN_BYTES
                    || !token.0.bytes().all(|b| b.is_ascii_graphic()))
            {
                // RFC 6750 §2.1 b64token: visible ASCII; a bounded length keeps it a header.
                return Err(format!(
                    "options.{name} must be 1 to {MAX_BEARER_TOKEN_BYTES} visible ASCII characters"
                ));
            }
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and the options that only one suite
    /// reads refused on a run of the other (#31: "MCP-only options on an RCP
    /// run are accepted and silently ignored"); under `auto` the suite is not
    /// known yet, so every option is taken. `options.server_json` must be
    /// what the MCP registry rules can read: an object, an http(s) URL, or
    /// the text of a JSON object.
    pub fn validate_for(&self, suite: SuiteChoice) -> Result<(), String> {
        self.validate()?;
        if let Some(doc) = &self.server_json {
            let readable = match doc {
                serde_json::Value::Object(_) => true,
                serde_json::Value::String(text) => {
                    let t = text.trim();
                    if t.starts_with('{') {
                        serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| v.is_object())
                    } else {
                        url::Url::parse(t).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
                    }
                }
                _ => false,
            };
            if !readable {
                return Err(
                    "options.server_json must be an http(s) URL or a server.json object".into(),
                );
            }
        }
        let only_mcp = [
            ("server_json", self.server_json.is_some()),
            ("allow_tool_calls", self.allow_tool_calls.is_some()),
            ("mcp_revision", self.mcp_revision.is_some()),
        ];
        let only_rcp = [
            ("profile", self.profile.is_some()),
            ("allow_writes", self.allow_writes.is_some()),
        ];
        let (foreign, other): (&[(&str, bool)], &str) = match suite {
            SuiteChoice::Rcp => (&only_mcp, "mcp"),
            SuiteChoice::Mcp => (&only_rcp, "rcp"),
            SuiteChoice::Auto => return Ok(()),
        };
        if let Some((name, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(format!(
                "options.{name} applies to the {other} suite only, and this run asks for `{}`",
                suite.as_str()
            ));
        }
        Ok(())
    }

    /// Whether probes may write to the target; off unless the run says so.
    pub fn writes_allowed(&self) -> bool {
        self.allow_writes.unwrap_or(false)
    }

    pub fn request_timeout(&self) -> Duration {
        self.request_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT)
            .min(MAX_REQUEST_TIMEOUT)
    }

    /// Whether the options carry a credential, which storage drops: a run
    /// handed to a worker through the store would run without it.
    pub fn carries_credentials(&self) -> bool {
        self.bearer_token.is_some() || self.limited_token.is_some()
    }
}

/// Where the sign-in started and each step of it, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The authorization server's issuer (from its metadata).
    pub issuer: String,
    /// `client-id-metadata-document` or `dynamic-registration`.
    pub registration: String,
    /// Whether a token was obtained, so that the run was judged with it.
    pub token_obtained: bool,
    pub steps: Vec<SignInStep>,
}

/// One step of the sign-in and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignInStep {
    /// What was done, in a few words ("token request").
    pub step: String,
    /// The rules it bears on, by id, of every revision that has one
    /// (`MCP-AUT-010`, `MCP25-AUT-004`); empty when no rule judges it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    pub outcome: Outcome,
    /// What was sent and what came back, and any inference labelled as one.
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<crate::transport::evidence::Exchange>,
}

/// One rule's coverage.
#[derive(Debug, Clone, Copy)]
pub struct Coverage {
    /// The rule's id, as in its catalogue.
    pub rule: &'static str,
    /// What the requirement names: every method family, header, field and
    /// option value it applies to (advertised or defaulted).
    pub required: &'static str,
    /// What the probes send and what they read, as the code does it.
    pub probed: &'static str,
    /// Where `probed` covers less than `required`: what is left out and
    /// why. `None` when the probes cover the whole requirement.
    pub gap: Option<&'static str>,
}

/// `text` cut to at most `max` characters, with `…` where it was cut: what a
/// target sent stays short in a finding.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}
