//! The catalogue: every rule file's rules in the order of `mcp-rules-79.md`.
//! The engine reads the rules from here, so it names no rule file.

use super::rule::McpRule;
use super::{aut, cac, dep, dsc, err, hdr, reg, res, sch, sec, stl};
use crate::suite::Rule;
use std::sync::LazyLock;

/// Every implemented rule, in the order of `mcp-rules-79.md`.
pub fn catalogue() -> &'static [McpRule] {
    static CATALOGUE: LazyLock<Vec<McpRule>> = LazyLock::new(|| {
        [
            dsc::RULES,
            hdr::RULES,
            stl::RULES,
            res::RULES,
            err::RULES,
            cac::RULES,
            sch::RULES,
            aut::RULES,
            sec::RULES,
            dep::RULES,
            reg::RULES,
        ]
        .concat()
    });
    &CATALOGUE
}

/// The rules of [`catalogue`] as plain [`Rule`]s.
pub fn rules() -> &'static [Rule] {
    static RULES: LazyLock<Vec<Rule>> =
        LazyLock::new(|| catalogue().iter().map(|r| r.rule).collect());
    &RULES
}

/// The catalogue entry with this id.
pub fn rule(id: &str) -> Option<&'static McpRule> {
    catalogue().iter().find(|r| r.rule.id == id)
}
