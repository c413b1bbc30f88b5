//! Probe coverage: for every rule of every suite, what its requirement names
//! (methods, headers, fields, option values) against what protocheck's probes
//! send and read, and, where the two differ, why. A probe that tries one
//! method or one value where the spec names several passes a server that
//! breaks the others, so the difference is written down beside the rule, and
//! `docs/coverage.md` is generated from these tables (a test keeps it
//! current: `PROTOCHECK_BLESS=1 cargo test --lib coverage` rewrites it).

use super::{Coverage, Rule};

/// One table of the generated document: a suite (and revision) with its
/// rules and their coverage.
pub struct Table {
    pub heading: &'static str,
    pub intro: &'static str,
    pub rules: Vec<&'static Rule>,
    pub coverage: &'static [Coverage],
}

/// Every table, in the order of the document.
pub fn tables() -> Vec<Table> {
    vec![
        Table {
            heading: "MCP 2026-07-28",
            intro: "The 79 rules of the suite `mcp`, revision 2026-07-28, in the order of the published rule list.",
            rules: super::mcp::rules().iter().collect(),
            coverage: super::mcp::COVERAGE,
        },
        Table {
            heading: "MCP 2025-11-25",
            intro: "The rules of the suite `mcp`, revision 2025-11-25 (`--mcp-revision 2025-11-25`).",
            rules: super::mcp2025::rules().iter().collect(),
            coverage: super::mcp2025::COVERAGE,
        },
        Table {
            heading: "RCP/1",
            intro: "The rules of the suite `rcp`, profile `spec` (the `reference` profile reproduces the public harness's 30 checks as the harness makes them, so its coverage is the harness's own).",
            rules: super::rcp::rules(),
            coverage: super::rcp::COVERAGE,
        },
    ]
}

/// The four reasons a probe may leave part of a requirement untried. A gap
/// whose text starts with one of them and a colon (`side effects: …`) is a
/// limit protocheck accepts; any other gap is a probe still missing, and the
/// document and the rule page say so.
pub const GAP_REASONS: [(&str, &str); 4] = [
    (
        "side effects",
        "only a request protocheck may not send by default (a write, a tool it may not run) could show it",
    ),
    (
        "not advertised",
        "the server does not offer the capability or option the probe needs",
    ),
    (
        "not observable",
        "it happens inside the server: no request or answer can show it",
    ),
    (
        "no bound",
        "the spec gives no number or finite set to test against",
    ),
];

/// What a coverage entry leaves out, classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapKind<'a> {
    /// The probes cover the whole requirement.
    None,
    /// Left out for one of the four accepted reasons: the reason, then the
    /// text after it.
    Reason(&'static str, &'a str),
    /// Left out for no accepted reason: a probe is missing.
    MissingProbe(&'a str),
}

/// Classifies a coverage entry's gap by [`GAP_REASONS`].
pub fn gap_kind(gap: Option<&str>) -> GapKind<'_> {
    let Some(gap) = gap else {
        return GapKind::None;
    };
    let text = gap.trim_start();
    for (reason, _) in GAP_REASONS {
        if let Some(rest) = text.strip_prefix(reason)
            && let Some(rest) = rest.strip_prefix(':')
        {
            return GapKind::Reason(reason, rest.trim_start());
        }
    }
    GapKind::MissingProbe(text)
}

/// The coverage entry of rule `id`, in whichever table has it.
pub fn entry(id: &str) -> Option<&'static Coverage> {
    [
        super::mcp::COVERAGE,
        super::mcp2025::COVERAGE,
        super::rcp::COVERAGE,
    ]
    .into_iter()
    .flat_map(|t| t.iter())
    .find(|c| c.rule == id)
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// `docs/coverage.md`, generated from [`tables`].
pub fn render() -> String {
    let mut out = String::from(
        "# Probe coverage\n\n\
         <!-- Generated from the rule catalogues (src/suite/coverage.rs and each suite's \
         coverage.rs); do not edit. `PROTOCHECK_BLESS=1 cargo test --lib coverage` rewrites it. -->\n\n\
         A probe covers the whole requirement: every method family, every required field, every \
         option value the spec names or the server advertises. For every rule, this page lists what \
         the requirement names, what protocheck's probes send and read, and, where the probes cover \
         less, what is left out and why. A rule with nothing in the last column is probed in full.\n\n\
         A part of a requirement may be left out for one of four reasons only, named at the start of \
         the last column:\n\n",
    );
    for (reason, meaning) in GAP_REASONS {
        out.push_str(&format!("- **{reason}**: {meaning}.\n"));
    }
    out.push_str(
        "\nA gap for any other reason is a probe protocheck still lacks: the last column says \
         **missing probe**, and a pass on that rule certifies only what the probes column names.\n",
    );
    for table in tables() {
        let gaps = table.coverage.iter().filter(|c| c.gap.is_some()).count();
        let missing = table
            .coverage
            .iter()
            .filter(|c| matches!(gap_kind(c.gap), GapKind::MissingProbe(_)))
            .count();
        out.push_str(&format!(
            "\n## {}\n\n{} {} rules; {} probed in full, {} left out in part for one of the four \
             reasons, {} with a probe still missing.\n\n",
            table.heading,
            table.intro,
            table.rules.len(),
            table.rules.len().saturating_sub(gaps),
            gaps - missing,
            missing
        ));
        out.push_str(
            "| rule | requirement names | probes send and read | not covered, and why |\n",
        );
        out.push_str("|---|---|---|---|\n");
        for rule in &table.rules {
            let Some(c) = table.coverage.iter().find(|c| c.rule == rule.id) else {
                out.push_str(&format!(
                    "| `{}` {} | — | — | not written down |\n",
                    rule.id,
                    cell(rule.title)
                ));
                continue;
            };
            out.push_str(&format!(
                "| `{}` {} | {} | {} | {} |\n",
                rule.id,
                cell(rule.title),
                cell(c.required),
                cell(c.probed),
                match gap_kind(c.gap) {
                    GapKind::None => "—".to_owned(),
                    GapKind::Reason(reason, rest) => format!("**{reason}**: {}", cell(rest)),
                    GapKind::MissingProbe(text) => format!("**missing probe**: {}", cell(text)),
                }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_rule_has_exactly_one_coverage_entry_and_no_entry_names_another() {
        for table in tables() {
            let ids: BTreeSet<&str> = table.rules.iter().map(|r| r.id).collect();
            let mut seen = BTreeSet::new();
            for c in table.coverage {
                assert!(
                    ids.contains(c.rule),
                    "{}: {} is not a rule of this suite",
                    table.heading,
                    c.rule
                );
                assert!(
                    seen.insert(c.rule),
                    "{}: {} is written down twice",
                    table.heading,
                    c.rule
                );
                assert!(
                    !c.required.trim().is_empty() && !c.probed.trim().is_empty(),
                    "{}: empty",
                    c.rule
                );
                if let Some(gap) = c.gap {
                    assert!(!gap.trim().is_empty(), "{}: an empty gap is None", c.rule);
                }
            }
            let missing: Vec<&&str> = ids.iter().filter(|id| !seen.contains(**id)).collect();
            assert!(
                missing.is_empty(),
                "{}: no coverage for {missing:?}",
                table.heading
            );
        }
    }

    #[test]
    fn a_gap_is_classified_by_its_leading_reason_only() {
        assert_eq!(gap_kind(None), GapKind::None);
        assert_eq!(
            gap_kind(Some("side effects: writes run only with allow_writes")),
            GapKind::Reason("side effects", "writes run only with allow_writes")
        );
        assert_eq!(
            gap_kind(Some("  no bound:every input")),
            GapKind::Reason("no bound", "every input")
        );
        // A reason named later in the text, or without its colon, is not one.
        assert_eq!(
            gap_kind(Some("not probed: side effects: x")),
            GapKind::MissingProbe("not probed: side effects: x")
        );
        assert_eq!(
            gap_kind(Some("not advertised, so skipped")),
            GapKind::MissingProbe("not advertised, so skipped")
        );
    }

    #[test]
    fn every_rule_id_finds_its_own_entry() {
        for table in tables() {
            for c in table.coverage {
                assert!(std::ptr::eq(entry(c.rule).expect(c.rule), c));
            }
        }
        assert!(entry("RCP-REF-13").is_none());
    }

    #[test]
    fn the_coverage_document_is_generated_from_the_catalogues() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/coverage.md");
        let rendered = render();
        if std::env::var("PROTOCHECK_BLESS").as_deref() == Ok("1") {
            std::fs::write(&path, &rendered)
                .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == rendered,
            "docs/coverage.md is not what the catalogues give; run PROTOCHECK_BLESS=1 cargo test --lib coverage"
        );
    }
}
