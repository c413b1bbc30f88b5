//! Where the `spec` profile would judge this server differently from the
//! harness, in plain words with the spec section (decision 2), from what the
//! harness run saw. Only disagreements the run can show are named; the many
//! L0 MUSTs the harness never checks (digest Q4) need a `spec` run to judge.

use super::*;
use crate::suite::rcp::l0::DECLARES_LEVEL;

fn outcome(findings: &[Finding], rule: &Rule) -> Option<Outcome> {
    findings
        .iter()
        .rev()
        .find(|f| f.rule_id == rule.id)
        .map(|f| f.outcome)
}

/// The L1 items of §14.2 that the capabilities do not advertise.
fn missing_l1_items(caps: &Map<String, Value>) -> Vec<String> {
    let mut missing = Vec::new();
    let modes: Vec<&str> = caps
        .get("retrieve")
        .and_then(|r| r.get("modes"))
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for mode in ["dense", "sparse", "hybrid"] {
        if !modes.contains(&mode) {
            missing.push(format!("`retrieve` mode `{mode}`"));
        }
    }
    let offered = |k: &str| {
        caps.get(k)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    };
    if !offered("filter") {
        missing.push("`filter`".to_owned());
    }
    if !offered("citations") {
        let nested = caps
            .get("retrieve")
            .and_then(|r| r.get("citations"))
            .is_some_and(|c| !c.is_null() && *c != Value::Bool(false));
        missing.push(if nested {
            "`citations` as a top-level capability (it sits inside `retrieve`, where §6 does not define it)".to_owned()
        } else {
            "`citations`".to_owned()
        });
    }
    missing
}

pub(super) fn list(findings: &[Finding], observed: &Observed, certified: Level) -> Vec<String> {
    let mut out = Vec::new();
    let caps = observed.caps();

    // Q1: the rerank shape.
    if let Some((spec_ok, answer)) = &observed.spec_rerank {
        match (outcome(findings, &RERANK), spec_ok) {
            (Some(Outcome::Fail), true) => out.push(
                "Check #27 (rerank) failed because the harness sends `documents` and reads `results`, `hits` or \
                 `ranking`, while this server answers the spec's `{query, passages}` with `{scores, order}` (RCP/1 \
                 §7.6; digest Q1). The `spec` profile accepts this rerank."
                    .to_owned(),
            ),
            (Some(Outcome::Pass), false) => out.push(format!(
                "Check #27 (rerank) passed on the harness's own shape (`documents` → `results`/`hits`/`ranking`), \
                 but asked in the spec's shape (`{{query, passages}}`) the server answered {answer}; the `spec` \
                 profile fails its rerank ({}, RCP/1 §7.6; digest Q1).",
                crate::suite::rcp::l2::RERANK.id
            )),
            _ => {}
        }
    }

    // Q2: L2 on top of an L1 where nothing applied.
    let l1_applied = findings.iter().any(|f| {
        RULES.iter().any(|r| r.id == f.rule_id && r.group == "L1") && f.outcome != Outcome::Skip
    });
    if certified == Level::L2 && !l1_applied {
        out.push(
            "The harness certified L2 although none of its L1 checks applied (`retrieve` is not advertised), \
             inheriting the level below (digest Q2). The `spec` profile certifies L2 only on top of L1 (RCP/1 \
             §14.3: \"L1, plus\"; decision 9), and its L1 needs `retrieve` (§14.2)."
                .to_owned(),
        );
    } else if certified >= Level::L1 {
        let missing = missing_l1_items(&caps);
        if !missing.is_empty() {
            out.push(format!(
                "The harness certified {} from `retrieve` basics alone; the `spec` profile's L1 also needs {} \
                 (RCP/1 §14.2; decision 9), which this server does not advertise, so it certifies at most L0 there.",
                certified.as_str(),
                missing.join(", ")
            ));
        }
    }

    // Q3: the declaration.
    match &observed.declared {
        None => out.push(format!(
            "The server declares no `_meta.conformance`, which the harness counts as honest (digest Q3); the \
             `spec` profile fails {} and certifies nothing, because a server MUST state its level (RCP/1 §14).",
            DECLARES_LEVEL.id
        )),
        Some(d) if d.as_str().and_then(Level::declared).is_none() => out.push(format!(
            "The server declares `_meta.conformance` {}, not one of \"L0\", \"L1\", \"L2\" (compared \
             case-sensitively, RCP/1 §4.6); the harness counts that as honest (digest Q3), the `spec` profile \
             fails {} (§14).",
            show(d),
            DECLARES_LEVEL.id
        )),
        Some(_) => {}
    }

    // Sessions (digest Q6, decisions 3 and 5).
    if observed.already_initialized {
        out.push(
            "The server was already initialized when this run started (one initialized flag for the whole \
             process, RCP/1 §5.2): the harness counts the pre-initialize and handshake checks as failures, while \
             the `spec` profile skips the pre-initialize checks as not verifiable (decision 3)."
                .to_owned(),
        );
    }
    if observed.session_token {
        out.push(
            "The server issued a session token in `initialize` `_meta.session`; protocheck sends it back in \
             `RCP-Session` (RCP/1 §5.2; decision 5). The harness never does, so the harness itself would run every \
             check after `initialize` in an uninitialized session against this server (digest Q6)."
                .to_owned(),
        );
    }

    // Writes (decision 7).
    let writable = caps
        .get("index")
        .and_then(|i| i.get("writable"))
        .is_some_and(|w| *w == Value::Bool(true));
    if writable && !observed.writes_allowed {
        out.push(
            "Checks #28–#30 write to the index; protocheck runs them only when the run allows writes \
             (`allow_writes`, decision 7), so they are skipped here where the harness would have written."
                .to_owned(),
        );
    }
    out
}
