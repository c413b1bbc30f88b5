//! Citations (spec §14.2, §6 `citations`: "hits carry `citation`/`trust`
//! fields", §7.7 Hit).

use super::*;
use crate::suite::rcp::shape;

pub const CITATIONS: Rule = item(
    "RCP-L1-006",
    "`citations` is advertised and every hit carries a `citation` or `trust`",
    SpecLevel::Should,
    "RCP/1 §14.2, §6 (citations), §7.7",
)
.help(
    "When `citations` is a top-level capability, protocheck reads every hit of every `retrieve` \
     result of the L1 run; each hit must carry a non-null `citation` or `trust`, and what it \
     carries must have the shape the schema gives it (a `citation` object, a `trust` object with \
     a `level`).",
    "The server advertises `citations` but fills them only for some sources, returns `citation` \
     as a bare string or with members of the wrong type, or puts `citations` inside `retrieve` \
     rather than at the top level (the rule is then skipped and L1 is not reached).",
    "Fill `citation` on every hit, as an object such as `{\"source\": …, \"uri\": …, \"title\": \
     …}`, or `trust` with a `level`, and advertise `citations` as a top-level capability, not \
     inside `retrieve`.",
);

impl L1Run<'_, '_> {
    pub(super) async fn citations(&mut self) -> Result<(), EngineError> {
        let rule = &CITATIONS;
        if !self.init.supports("citations") {
            // The Python reference server puts `citations` inside `retrieve`
            // (digest §10 Q4); §6 defines it as a top-level key.
            let nested = self
                .init
                .capability("retrieve")
                .and_then(|r| r.get("citations"))
                .is_some_and(|c| !c.is_null() && *c != Value::Bool(false));
            let detail = if nested {
                "`citations` is not a top-level capability; it appears inside `retrieve`, where §6 does not define it"
            } else {
                "`citations` is not advertised"
            };
            return self
                .conv
                .skip(rule, not_advertised("`citations`", detail))
                .await;
        }
        let judged: Vec<&Retrieved> = self
            .facts
            .retrieved
            .iter()
            .filter(|r| !r.hits().is_empty())
            .collect();
        if judged.is_empty() {
            let reason = self.conv.gone().unwrap_or_else(|| {
                "not verified: no `retrieve` of this run returned a hit to carry a citation"
                    .to_owned()
            });
            return self.conv.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut hits = 0;
        for r in &judged {
            let mut bad = false;
            for (i, hit) in r.hits().iter().enumerate() {
                hits += 1;
                let citation = hit.get("citation").filter(|c| !c.is_null());
                let trust = hit.get("trust").filter(|t| !t.is_null());
                if citation.is_none() && trust.is_none() {
                    bad = true;
                    problems.push(format!(
                        "hit {} of {} carries neither `citation` nor `trust`",
                        show(hit.get("id").unwrap_or(&Value::Null)),
                        r.label
                    ));
                    continue;
                }
                let mut p = shape::Problems::default();
                let path = format!("hits[{i}]");
                if let Some(c) = citation {
                    shape::citation(&mut p, &format!("{path}.citation"), c);
                }
                if let Some(t) = trust {
                    shape::trust(&mut p, &format!("{path}.trust"), t);
                }
                for problem in p.into_vec() {
                    bad = true;
                    problems.push(format!("{}: {problem}", r.label));
                }
            }
            if bad {
                check.keep(r.exchange.clone());
            }
        }
        let finding = check.verdict(
            &problems,
            format!("all {hits} hits of {} results carry a well-formed `citation` or `trust`", judged.len()),
            "a server advertising `citations` fills `Hit.citation` (and `trust`) on its hits (§6, §7.7, §14.2)",
        );
        self.conv.emit(finding).await
    }
}
