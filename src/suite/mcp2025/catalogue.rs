//! The catalogue: every rule file's rules in the order of
//! `docs/spec/mcp-2025-11-25-rules.md`. The engine reads the rules from
//! here, so it names no rule file.

use super::rule::Mcp25Rule;
use super::{aut, cpl, htp, lif, log, prm, res, rpc, stdio_rules, tol, tsk, utl};
use crate::suite::Rule;
use std::sync::LazyLock;

/// Every implemented rule, in catalogue order.
pub fn catalogue() -> &'static [Mcp25Rule] {
    static CATALOGUE: LazyLock<Vec<Mcp25Rule>> = LazyLock::new(|| {
        [
            lif::RULES,
            rpc::RULES,
            htp::RULES,
            stdio_rules::RULES,
            utl::RULES,
            tol::RULES,
            res::RULES,
            prm::RULES,
            cpl::RULES,
            log::RULES,
            aut::RULES,
            tsk::RULES,
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
pub fn rule(id: &str) -> Option<&'static Mcp25Rule> {
    catalogue().iter().find(|r| r.rule.id == id)
}
