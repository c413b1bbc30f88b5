//! A page per rule: `/rules` lists every rule of every suite, revision and
//! profile; `/rules/{id}` shows one (the requirement and its keyword, the
//! spec's link, how protocheck probes it, what a failure usually means, how
//! to fix it, the rules it waits on and those that wait on it, and the suite
//! versions it belongs to); `GET /api/v1/rules[/{id}]` serve the same as
//! JSON. Everything comes from the suites' catalogues through
//! [`crate::suite::index`]: the pages hold no rule text of their own.

use super::error::{ApiResult, AsPage, PageResult, WebError};
use super::extract::ApiJson;
use super::extract::{ApiPath, PagePath};
use super::pages::Page;
use crate::suite::index::{self, Entry};
use crate::suite::{Help, Outcome, SpecLevel, SuiteId};
use askama::Template;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

pub use crate::suite::index::page_path;

/// One rule, as `GET /api/v1/rules/{id}` serves it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleDoc {
    /// Stable identifier, e.g. `MCP-HDR-001`.
    pub id: String,
    pub title: String,
    /// `MUST`, `MUST NOT`, `SHOULD`, `SHOULD NOT` or `MAY`.
    pub keyword: String,
    pub level: SpecLevel,
    /// The outcome a violation produces: `fail`, `warn`, or `info` for notes.
    pub severity: Outcome,
    pub suite: SuiteId,
    /// The protocol revision the rule judges.
    pub spec_revision: String,
    /// The version of protocheck's rules for that revision.
    pub suite_version: String,
    /// The RCP profile (`spec` or `reference`); absent for MCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The RCP level (`L0`…) or the MCP category (`HDR`…).
    pub group: String,
    /// The requirement as protocheck states it in its findings.
    pub requirement: String,
    /// Where the requirement is written.
    pub spec_ref: String,
    /// A link to the requirement, where one exists.
    pub spec_url: Option<String>,
    /// Where the rule is judged (transport, capability), where recorded.
    pub applies: Option<String>,
    /// How protocheck probes it, what a failure usually means, how to fix it.
    pub help: Help,
    /// Rules whose failure leaves this one unverified.
    pub requires: Vec<String>,
    /// Rules left unverified when this one fails.
    pub dependents: Vec<String>,
    /// This rule's page, relative to the service.
    pub page: String,
    /// What the probes cover of the requirement, and what they leave out and
    /// why (`docs/coverage.md`); absent for the reference profile's rules,
    /// which reproduce the public harness's checks as it makes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageDoc>,
}

/// What a pass on a rule is worth: what its requirement names, what the
/// probes send and read, and what they leave out, for which reason.
#[derive(Debug, Serialize, ToSchema)]
pub struct CoverageDoc {
    /// Every method, field, value and moment the requirement names.
    pub required: String,
    /// What protocheck's probes send and what they read.
    pub probed: String,
    /// `full` when nothing is left out; else why: `side effects`,
    /// `not advertised`, `not observable`, `no bound`, or `missing probe`
    /// (a probe protocheck still lacks).
    pub gap: String,
    /// What is left out, when anything is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

impl CoverageDoc {
    fn of(c: &crate::suite::Coverage) -> Self {
        use crate::suite::coverage::{GapKind, gap_kind};
        let (gap, left_out) = match gap_kind(c.gap) {
            GapKind::None => ("full".to_owned(), None),
            GapKind::Reason(reason, rest) => (reason.to_owned(), Some(rest)),
            GapKind::MissingProbe(text) => ("missing probe".to_owned(), Some(text)),
        };
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        Self {
            required: flat(c.required),
            probed: flat(c.probed),
            gap,
            left_out: left_out.map(flat),
        }
    }

    /// The sentence a reader sees before what is left out.
    pub fn heading(&self) -> String {
        match self.gap.as_str() {
            "full" => "Probed in full: nothing the requirement names is left out.".to_owned(),
            "missing probe" => {
                "Not covered, and no accepted reason: a probe protocheck still lacks, so a pass \
                 certifies only what the probes send."
                    .to_owned()
            }
            reason => format!("Not covered ({reason}):"),
        }
    }
}

impl RuleDoc {
    /// The rule `id`, if the catalogue has it.
    pub fn find(id: &str) -> Option<Self> {
        index::entry(id).map(Self::of)
    }

    /// Every rule, in catalogue order.
    pub fn all() -> Vec<Self> {
        index::entries().iter().map(Self::of).collect()
    }

    /// The page as plain text (`protocheck rules ID`).
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} {}\n{}\n\n{}: {}\nspec: {}{}\na violation is reported as {}\n",
            self.id,
            self.title,
            self.catalogue_name(),
            self.keyword,
            self.requirement,
            self.spec_ref,
            match &self.spec_url {
                Some(u) if !self.spec_ref.contains(u.as_str()) => format!(" <{u}>"),
                _ => String::new(),
            },
            self.severity.as_str(),
        );
        if let Some(a) = &self.applies {
            out.push_str(a);
            out.push('\n');
        }
        for (head, body) in [
            ("How protocheck probes it", self.help.probe),
            ("What a failure usually means", self.help.failure),
            ("How to fix it", self.help.fix),
        ] {
            out.push_str(&format!("\n{head}\n  {body}\n"));
        }
        if let Some(c) = &self.coverage {
            out.push_str(&format!(
                "\nWhat a pass covers\n  The requirement names: {}\n  The probes send and read: {}\n  {}",
                c.required,
                c.probed,
                c.heading()
            ));
            if let Some(left) = &c.left_out {
                out.push_str(&format!(" {left}"));
            }
            out.push('\n');
        }
        if !self.requires.is_empty() {
            out.push_str(&format!(
                "\nJudged only when these hold: {}\n",
                self.requires.join(", ")
            ));
        }
        if !self.dependents.is_empty() {
            out.push_str(&format!(
                "\nWhen it fails, these are not verified: {}\n",
                self.dependents.join(", ")
            ));
        }
        out.push_str(&format!(
            "\nRules version {} (group {}).\n",
            self.suite_version, self.group
        ));
        out
    }

    fn of(e: &Entry) -> Self {
        Self {
            id: e.rule.id.to_owned(),
            title: e.rule.title.to_owned(),
            keyword: e.keyword.to_owned(),
            level: e.rule.level,
            severity: e.rule.on_failure,
            suite: e.suite,
            spec_revision: e.spec_revision.to_owned(),
            suite_version: e.suite_version.to_owned(),
            profile: e.profile.map(str::to_owned),
            group: e.rule.group.to_owned(),
            requirement: e.requirement.unwrap_or(e.rule.title).to_owned(),
            spec_ref: e.rule.spec_ref.to_owned(),
            spec_url: crate::report::spec_url(e.rule.spec_ref),
            applies: e.applies.clone(),
            help: e.rule.help,
            requires: e.requires.iter().map(|s| (*s).to_owned()).collect(),
            dependents: index::dependents(e.rule.id)
                .into_iter()
                .map(|d| d.rule.id.to_owned())
                .collect(),
            page: page_path(e.rule.id),
            coverage: crate::suite::coverage::entry(e.rule.id).map(CoverageDoc::of),
        }
    }

    /// "MCP 2026-07-28", "RCP/1 1.0 (reference profile)".
    pub fn catalogue_name(&self) -> String {
        match (self.suite, self.profile.as_deref()) {
            (SuiteId::Mcp, _) => format!("MCP {}", self.spec_revision),
            (SuiteId::Rcp, Some(p)) if p != crate::suite::rcp::PROFILE_SPEC => {
                format!("{} ({p} profile)", self.spec_revision)
            }
            (SuiteId::Rcp, _) => self.spec_revision.clone(),
        }
    }
}

/// Every rule, as `GET /api/v1/rules` serves it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleList {
    /// How many rules there are.
    pub count: usize,
    pub rules: Vec<RuleDoc>,
}

fn not_found(id: &str) -> WebError {
    let shown: String = id.chars().take(64).collect();
    WebError::NotFound(format!(
        "No rule has the id `{shown}`; `/rules` lists every rule."
    ))
}

/// `GET /api/v1/rules`.
#[utoipa::path(
    get,
    path = "/api/v1/rules",
    tag = "rules",
    summary = "Every rule of every suite, revision and profile",
    responses(
        (status = 200, description = "The rules, in catalogue order", body = RuleList),
    )
)]
pub async fn list_rules() -> ApiJson<RuleList> {
    let rules: Vec<RuleDoc> = index::entries().iter().map(RuleDoc::of).collect();
    ApiJson(RuleList {
        count: rules.len(),
        rules,
    })
}

/// `GET /api/v1/rules/{id}`.
#[utoipa::path(
    get,
    path = "/api/v1/rules/{id}",
    tag = "rules",
    summary = "One rule: the requirement, the probe, what a failure means, the fix",
    params(("id" = String, Path, description = "The rule's id, e.g. `MCP-HDR-001`")),
    responses(
        (status = 200, description = "The rule", body = RuleDoc),
        (status = 404, response = super::openapi::NotFound),
    )
)]
pub async fn show_rule(ApiPath(id): ApiPath<String>) -> ApiResult<ApiJson<RuleDoc>> {
    let entry = index::entry(&id).ok_or_else(|| not_found(&id))?;
    Ok(ApiJson(RuleDoc::of(entry)))
}

/// A catalogue's rules on the list page.
struct CatalogueView {
    name: String,
    anchor: String,
    suite_version: String,
    rules: Vec<RuleDoc>,
}

#[derive(Template)]
#[template(path = "rules.html")]
struct RulesPage {
    count: usize,
    catalogues: Vec<CatalogueView>,
}

#[derive(Template)]
#[template(path = "rule.html")]
struct RulePage {
    rule: RuleDoc,
    /// The help's three parts, cut at their `code` spans.
    probe: Vec<Span>,
    failure: Vec<Span>,
    fix: Vec<Span>,
    /// What a pass covers: the requirement, the probes, what is left out.
    covered: Option<CoveredView>,
    catalogue: String,
    /// The rules it requires and those that wait on it, with their titles.
    requires: Vec<(String, String, String)>,
    dependents: Vec<(String, String, String)>,
}

/// `GET /rules`.
pub async fn rules_page() -> Response {
    let mut catalogues: Vec<CatalogueView> = Vec::new();
    let mut count = 0;
    for e in index::entries() {
        let doc = RuleDoc::of(e);
        count += 1;
        let name = doc.catalogue_name();
        match catalogues.iter_mut().find(|c| c.name == name) {
            Some(c) => c.rules.push(doc),
            None => catalogues.push(CatalogueView {
                anchor: name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '-'
                        }
                    })
                    .collect(),
                name,
                suite_version: doc.suite_version.clone(),
                rules: vec![doc],
            }),
        }
    }
    Page(StatusCode::OK, RulesPage { count, catalogues }).into_response()
}

fn linked(ids: &[String]) -> Vec<(String, String, String)> {
    ids.iter()
        .map(|id| {
            let title = index::entry(id).map_or("", |e| e.rule.title);
            (id.clone(), page_path(id), title.to_owned())
        })
        .collect()
}

/// `GET /rules/{id}`.
pub async fn rule_page(PagePath(id): PagePath<String>) -> PageResult<Response> {
    let entry = index::entry(&id).ok_or_else(|| AsPage(not_found(&id)))?;
    let rule = RuleDoc::of(entry);
    Ok(Page(
        StatusCode::OK,
        RulePage {
            probe: spans(rule.help.probe),
            failure: spans(rule.help.failure),
            fix: spans(rule.help.fix),
            covered: rule.coverage.as_ref().map(CoveredView::of),
            catalogue: rule.catalogue_name(),
            requires: linked(&rule.requires),
            dependents: linked(&rule.dependents),
            rule,
        },
    )
    .into_response())
}

/// The coverage section of a rule page, cut at its `code` spans.
struct CoveredView {
    required: Vec<Span>,
    probed: Vec<Span>,
    heading: String,
    left_out: Vec<Span>,
}

impl CoveredView {
    fn of(c: &CoverageDoc) -> Self {
        Self {
            required: spans(&c.required),
            probed: spans(&c.probed),
            heading: c.heading(),
            left_out: c.left_out.as_deref().map(spans).unwrap_or_default(),
        }
    }
}

/// A run of help text, and whether it was `backticked` (the catalogue's
/// way of naming methods, fields and headers): the page shows it in `<code>`.
pub(crate) struct Span {
    pub(crate) text: String,
    pub(crate) code: bool,
}

/// Help text cut at its backticks; an unpaired last backtick stays text. The
/// template escapes every span.
pub(crate) fn spans(text: &str) -> Vec<Span> {
    let parts: Vec<&str> = text.split('`').collect();
    // An even number of parts is an odd number of backticks: the last is unpaired.
    let paired = if parts.len().is_multiple_of(2) {
        parts.len() - 1
    } else {
        parts.len()
    };
    let mut out: Vec<Span> = parts[..paired]
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, p)| Span {
            text: (*p).to_owned(),
            code: i % 2 == 1,
        })
        .collect();
    if paired < parts.len() {
        let tail = format!("`{}", parts[paired]);
        match out.last_mut() {
            Some(last) if !last.code => last.text.push_str(&tail),
            _ => out.push(Span {
                text: tail,
                code: false,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<(String, bool)> {
        spans(text).into_iter().map(|s| (s.text, s.code)).collect()
    }

    #[test]
    fn names_in_backticks_are_code_and_an_unpaired_backtick_is_text() {
        assert_eq!(
            shown("send `a<b>` & \"c\""),
            [
                ("send ".to_owned(), false),
                ("a<b>".to_owned(), true),
                (" & \"c\"".to_owned(), false)
            ]
        );
        assert_eq!(shown("odd ` tick"), [("odd ` tick".to_owned(), false)]);
        assert_eq!(
            shown("`x` and ` y"),
            [("x".to_owned(), true), (" and ` y".to_owned(), false)]
        );
    }

    #[test]
    fn rule_paths_are_the_id_itself() {
        assert_eq!(page_path("MCP-DSC-001"), "/rules/MCP-DSC-001");
        assert_eq!(page_path("a b/c"), "/rules/a%20b%2Fc");
    }

    #[test]
    fn every_rule_has_a_document() {
        for e in index::entries() {
            let doc = RuleDoc::of(e);
            assert_eq!(doc.page, format!("/rules/{}", e.rule.id));
        }
    }
}
