//! Every rule of every suite, revision and profile, as one list: what the
//! rule pages (`/rules`, `/rules/{id}`), their JSON and `protocheck rules`
//! show. It reads the suites' own catalogues, so it adds no rule data of its
//! own: a rule's page says what its catalogue entry says.

use super::{McpRevision, Rule, RunOptions, SpecLevel, SuiteId, mcp, mcp2025, rcp};
use std::sync::LazyLock;

/// The catalogue entry for `id`, in whichever suite or profile defines it.
pub fn rule(id: &str) -> Option<&'static Rule> {
    rcp::rules()
        .into_iter()
        .chain(rcp::harness::rules())
        .chain(mcp::rules().iter())
        .chain(mcp2025::rules().iter())
        .find(|r| r.id == id)
}

/// Number of rules a run of `suite` with `options` reports on (the progress bar's total).
pub fn rule_count(suite: SuiteId, options: &RunOptions) -> usize {
    match suite {
        SuiteId::Rcp if options.profile.as_deref() == Some("reference") => {
            rcp::harness::rules().len()
        }
        SuiteId::Rcp => rcp::rules().len(),
        // Before a run has chosen its revision, its total is that of the
        // revision asked for, else of the newest; `all` counts both suites,
        // so a target that speaks one revision ends its run short of it.
        SuiteId::Mcp => match options.mcp_revision.unwrap_or_default() {
            McpRevision::V2025_11_25 => mcp2025::rules().len(),
            McpRevision::Newest | McpRevision::V2026_07_28 => mcp::rules().len(),
            McpRevision::All => mcp::rules().len() + mcp2025::rules().len(),
        },
    }
}

/// One rule with the facts its page shows beyond [`Rule`].
#[derive(Debug, Clone)]
pub struct Entry {
    pub rule: &'static Rule,
    pub suite: SuiteId,
    /// The protocol revision the rule judges (`2026-07-28`, `RCP/1 1.0`…).
    pub spec_revision: &'static str,
    /// The version of protocheck's rules for that revision (stored with runs).
    pub suite_version: &'static str,
    /// The RCP profile the rule belongs to (`spec` or `reference`); `None` for MCP.
    pub profile: Option<&'static str>,
    /// The exact keyword: `MUST`, `MUST NOT`, `SHOULD`, `SHOULD NOT` or `MAY`.
    pub keyword: &'static str,
    /// The requirement as the suite states it in its findings, where it
    /// states one beyond the title.
    pub requirement: Option<&'static str>,
    /// Rules whose failure leaves this one unverified, as the suite records them.
    pub requires: &'static [&'static str],
    /// Where the rule is judged (transport, capability), in a sentence,
    /// where the suite's catalogue records it (MCP).
    pub applies: Option<String>,
}

/// Every rule: MCP 2026-07-28, MCP 2025-11-25, RCP/1 (`spec` profile), then
/// the RCP `reference` profile, each in its catalogue's order.
pub fn entries() -> &'static [Entry] {
    static ENTRIES: LazyLock<Vec<Entry>> = LazyLock::new(build);
    &ENTRIES
}

/// The entry of `id`.
pub fn entry(id: &str) -> Option<&'static Entry> {
    entries().iter().find(|e| e.rule.id == id)
}

/// The rules that record `id` among the rules they require.
pub fn dependents(id: &str) -> Vec<&'static Entry> {
    entries()
        .iter()
        .filter(|e| e.requires.contains(&id))
        .collect()
}

/// The path of `id`'s page on a protocheck service (rule ids are ASCII letters,
/// digits and dashes; anything else is percent-encoded).
pub fn page_path(id: &str) -> String {
    let mut path = String::from("/rules/");
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            path.push(char::from(b));
        } else {
            path.push_str(&format!("%{b:02X}"));
        }
    }
    path
}

fn build() -> Vec<Entry> {
    let mut all = Vec::new();
    for r in mcp::catalogue() {
        all.push(Entry {
            rule: &r.rule,
            suite: SuiteId::Mcp,
            spec_revision: mcp::SPEC_REVISION,
            suite_version: mcp::SUITE_VERSION,
            profile: None,
            keyword: spoken(r.keyword),
            requirement: Some(r.sentence).filter(|s| *s != r.rule.title),
            requires: r.requirements(),
            applies: Some(match r.over_stdio {
                mcp::OverStdio::Applies => "Judged over Streamable HTTP and over stdio.".into(),
                mcp::OverStdio::HttpOnly(what) => {
                    format!("Judged over Streamable HTTP only ({what}); skipped over stdio.")
                }
            }),
        });
    }
    for r in mcp2025::catalogue() {
        let transport = match r.transport() {
            Some(t) => format!("Judged over {} only.", t.as_str()),
            None => "Judged over Streamable HTTP and over stdio.".to_owned(),
        };
        all.push(Entry {
            rule: &r.rule,
            suite: SuiteId::Mcp,
            spec_revision: mcp2025::SPEC_REVISION,
            suite_version: mcp2025::SUITE_VERSION,
            profile: None,
            keyword: spoken(r.keyword),
            requirement: Some(r.sentence).filter(|s| *s != r.rule.title),
            requires: r.requirements(),
            applies: Some(match r.capability() {
                Some(c) => {
                    format!("{transport} Judged when the server advertises the `{c}` capability.")
                }
                None => transport,
            }),
        });
    }
    let rcp_rules = |rules: Vec<&'static Rule>, profile: &'static str, all: &mut Vec<Entry>| {
        for rule in rules {
            all.push(Entry {
                rule,
                suite: SuiteId::Rcp,
                spec_revision: rcp::SPEC_REVISION,
                suite_version: rcp::SUITE_VERSION,
                profile: Some(profile),
                keyword: match rule.level {
                    SpecLevel::Must => "MUST",
                    SpecLevel::Should => "SHOULD",
                    SpecLevel::May => "MAY",
                },
                requirement: None,
                requires: &[],
                applies: None,
            });
        }
    };
    rcp_rules(rcp::rules(), rcp::PROFILE_SPEC, &mut all);
    rcp_rules(rcp::harness::rules(), rcp::PROFILE_REFERENCE, &mut all);
    all
}

fn spoken(keyword: mcp::Keyword) -> &'static str {
    match keyword {
        mcp::Keyword::Must => "MUST",
        mcp::Keyword::MustNot => "MUST NOT",
        mcp::Keyword::Should => "SHOULD",
        mcp::Keyword::ShouldNot => "SHOULD NOT",
        mcp::Keyword::May => "MAY",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_listed_once() {
        let mut ids: Vec<&str> = entries().iter().map(|e| e.rule.id).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "a rule id appears in two catalogues");
        assert_eq!(
            n,
            mcp::rules().len()
                + mcp2025::rules().len()
                + rcp::rules().len()
                + rcp::harness::rules().len()
        );
    }

    #[test]
    fn every_rule_has_its_help_written() {
        let missing: Vec<&str> = entries()
            .iter()
            .filter(|e| !e.rule.help.is_written())
            .map(|e| e.rule.id)
            .collect();
        assert!(missing.is_empty(), "rules without help: {missing:?}");
    }

    #[test]
    fn every_required_rule_exists() {
        for e in entries() {
            for id in e.requires {
                assert!(entry(id).is_some(), "{} requires unknown {id}", e.rule.id);
            }
        }
    }
}
