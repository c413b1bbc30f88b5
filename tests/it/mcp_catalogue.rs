//! The MCP catalogue against the rule table it implements
//! (`../shared/spec/mcp-rules-79.md`, or `PROTOCHECK_MCP_RULES`): every rule of
//! the categories in the catalogue is there, with its id, title, keyword and
//! outcome on failure exactly as listed. Without the table the test says so.

use protocheck::suite::Outcome;
use protocheck::suite::mcp;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn table_path() -> PathBuf {
    std::env::var_os("PROTOCHECK_MCP_RULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/mcp-rules-79.md")
        })
}

/// `id → (title, keyword, outcome)` from the markdown table rows.
fn table() -> Option<BTreeMap<String, (String, String, String)>> {
    let text = std::fs::read_to_string(table_path()).ok()?;
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() >= 5 && cells[1].starts_with("MCP-") {
            rows.insert(
                cells[1].to_owned(),
                (
                    cells[2].to_owned(),
                    cells[3].to_owned(),
                    cells[4].to_owned(),
                ),
            );
        }
    }
    Some(rows)
}

#[test]
fn catalogue_matches_the_rule_table() {
    let Some(rows) = table() else {
        println!(
            "skipped: the rule table is not at {}",
            table_path().display()
        );
        return;
    };
    assert_eq!(rows.len(), 79, "the table lists 79 rules");
    let groups: Vec<&str> = mcp::catalogue().iter().map(|r| r.rule.group).collect();
    let mut problems = Vec::new();
    for (id, (title, keyword, outcome)) in &rows {
        let group = &id[4..7];
        let Some(rule) = mcp::rule(id) else {
            if groups.contains(&group) && !NOT_YET.contains(&id.as_str()) {
                problems.push(format!("{id} is missing from the catalogue"));
            }
            continue;
        };
        if rule.rule.title != title {
            problems.push(format!("{id} title {:?} != {title:?}", rule.rule.title));
        }
        if rule.keyword.as_str() != keyword {
            problems.push(format!(
                "{id} keyword {} != {keyword}",
                rule.keyword.as_str()
            ));
        }
        if Outcome::parse(outcome) != Some(rule.rule.on_failure) {
            problems.push(format!(
                "{id} outcome {:?} != {outcome}",
                rule.rule.on_failure
            ));
        }
    }
    for rule in mcp::catalogue() {
        if !rows.contains_key(rule.rule.id) {
            problems.push(format!("{} is not in the table", rule.rule.id));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    assert_eq!(mcp::catalogue().len(), 79, "every rule is implemented");
}

/// Rules of a category in the catalogue that are not implemented yet.
const NOT_YET: &[&str] = &[];
