//! The comparison finding (RCP-REF-DIFF): where the harness and the `spec`
//! profile judge this server differently, and why, in plain words with the
//! spec section (decision 2).
//!
//! Every sentence states something this run observed: the harness's verdict
//! from its own checks, the `spec` profile's verdict and findings from its
//! run right after (on a new connection), and the answers the server gave.
//! A sentence is said only when the facts it states were seen; none is a
//! template that asserts what "would" happen. Each sentence has a test on a
//! server where it is said and one where it is not (tests/it/rcp_reference.rs).

use super::*;
use crate::suite::rcp::l0::{DECLARES_LEVEL, PER_SESSION_INIT};
use crate::suite::rcp::l2::RERANK as SPEC_RERANK;

/// Most items of the `spec` profile's "next level needs" list quoted.
const MAX_MISSING: usize = 6;

fn outcome(findings: &[Finding], rule: &Rule) -> Option<Outcome> {
    findings
        .iter()
        .rev()
        .find(|f| f.rule_id == rule.id)
        .map(|f| f.outcome)
}

fn outcome_words(outcome: Option<Outcome>) -> &'static str {
    match outcome {
        Some(Outcome::Pass) => "passed",
        Some(Outcome::Fail) => "failed",
        Some(Outcome::Warn) => "warned",
        Some(Outcome::Skip) => "was skipped",
        Some(Outcome::Info) => "was reported for information",
        None => "was not reported",
    }
}

/// What the harness prints as its verdict, in its own words.
fn harness_words(observed: &Observed, certified: Level, honest: bool) -> String {
    if let Some(stop) = &observed.stopped {
        return format!(
            "The harness raises at {} ({}), so it prints no certified level and exits 1.",
            stop.at, stop.why
        );
    }
    let level = match certified {
        Level::None => "NONE (L0 MUSTs failed)",
        other => other.as_str(),
    };
    // The harness prints the declaration line only for a truthy value.
    let declared = match &observed.declared {
        Some(d) if truthy(Some(d)) => format!(
            ", then \"declared _meta.conformance={} — {}\"",
            match d {
                // Python's `repr` of a string.
                Value::String(s) => format!("'{}'", crate::transport::excerpt(s.as_bytes(), 32).0),
                other => show(other),
            },
            if honest { "consistent" } else { "OVERCLAIMED" }
        ),
        _ => String::new(),
    };
    format!("The harness prints \"CERTIFIED LEVEL: {level}\"{declared}.")
}

pub(super) fn list(
    findings: &[Finding],
    observed: &Observed,
    certified: Level,
    honest: bool,
    spec: &Result<SpecView, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let caps = observed.caps();

    // The two verdicts side by side.
    let harness = harness_words(observed, certified, honest);
    match spec {
        Ok(view) => {
            let how = if observed.http {
                "on a connection of its own"
            } else {
                "in a new process of the same command"
            };
            out.push(format!(
                "{harness} The `spec` profile, run on this server right after the harness {how} \
                 (protocheck's own view), judges it: {}.",
                view.verdict.summary
            ));
            // Over HTTP the `spec` profile meets the process the harness
            // initialized; what it could not see is said, not hidden.
            if observed.http
                && !observed.already_initialized
                && !observed.init.is_empty()
                && view.outcome(&PER_SESSION_INIT) == Some(Outcome::Info)
            {
                out.push(format!(
                    "Over HTTP the `spec` profile runs after the harness, against the same server process (run \
                     first, it would change what the harness sees). The harness's `initialize` (id 2) succeeded, \
                     and the `spec` profile's own `initialize`, on a new connection, got -32600 ({}): this server \
                     keeps its initialized state beyond a connection, so the `spec` profile observed no handshake \
                     of its own and its level here is not a judgement of the server. `protocheck check --suite \
                     rcp` against a freshly started server runs the `spec` profile alone.",
                    PER_SESSION_INIT.id
                ));
            }
            let missing = match &view.verdict.detail {
                VerdictDetail::Rcp { report, .. } => report.missing_for_next.clone(),
                _ => Vec::new(),
            };
            if view.level() != certified.as_str() && !missing.is_empty() {
                let shown: Vec<String> = missing.iter().take(MAX_MISSING).cloned().collect();
                let more = missing.len().saturating_sub(MAX_MISSING);
                let more = if more > 0 {
                    format!(" (and {more} more)")
                } else {
                    String::new()
                };
                out.push(format!(
                    "The `spec` profile's next level up needs: {}{more}.",
                    shown.join("; ")
                ));
            }
        }
        Err(e) => out.push(format!(
            "{harness} The `spec` profile could not be run after the harness ({e}), so nothing here is \
             compared with it."
        )),
    }
    let spec_outcome = |rule: &Rule| spec.as_ref().ok().and_then(|v| v.outcome(rule));

    // Sessions (digest §2: a stateful server "MAY return a token in
    // `initialize.result._meta.session` and require it on later requests";
    // decision 5). The harness sends no header but `Content-Type`.
    if observed.session_token {
        let effect = if observed.gated_after_init.is_empty() {
            "none of its later checks was answered -32001 (NotInitialized), so this server did not require it"
                .to_owned()
        } else {
            format!(
                "{} of its later checks were answered -32001 (NotInitialized): {}",
                observed.gated_after_init.len(),
                observed.gated_after_init.join(", ")
            )
        };
        out.push(format!(
            "`initialize` (id 2) returned a session token in `_meta.session`; the harness never sends it back in \
             `RCP-Session`, and {effect}. protocheck's own view sends it back (RCP/1 §5 sessions; decision 5)."
        ));
    }

    // Q1: the rerank shape. Said only when #27 reached an initialized
    // session (its answer is not -32001), so the request shape is what
    // differs from the `spec` profile's rerank probe.
    let spec_rerank = spec_outcome(&SPEC_RERANK);
    let rerank_in_session = observed
        .rerank_answer
        .as_ref()
        .filter(|(_, gated)| !gated)
        .map(|(answer, _)| answer);
    match (outcome(findings, &RERANK), rerank_in_session) {
        (Some(Outcome::Fail), Some(answer)) if spec_rerank == Some(Outcome::Pass) => out.push(format!(
            "Check #27 (rerank) sends `documents` and reads `results`, `hits` or `ranking` (digest Q1); it \
             failed, answered {answer}. The `spec` profile's {}, sending the spec's `{{query, passages}}` and \
             reading `{{scores}}` (RCP/1 §7.6), passed.",
            SPEC_RERANK.id
        )),
        (Some(Outcome::Pass), _) if spec_rerank == Some(Outcome::Fail) => out.push(format!(
            "Check #27 (rerank) passed on the harness's own shape (`documents` → `results`/`hits`/`ranking`, \
             digest Q1), while the `spec` profile's {}, sending the spec's `{{query, passages}}` and reading \
             `{{scores}}` (RCP/1 §7.6), failed.",
            SPEC_RERANK.id
        )),
        _ => {}
    }

    // Q2: L2 on top of an L1 where nothing applied.
    let l1_applied = findings.iter().any(|f| {
        RULES.iter().any(|r| r.id == f.rule_id && r.group == "L1") && f.outcome != Outcome::Skip
    });
    if certified == Level::L2 && !l1_applied {
        out.push(
            "The harness certified L2 although none of its L1 checks applied (`retrieve` is not advertised), \
             inheriting the level below (digest Q2); the `spec` profile certifies L2 only on top of L1 (RCP/1 \
             §14.3: \"L1, plus\"; decision 9)."
                .to_owned(),
        );
    }

    // Q3: the declaration, as seen in `initialize` and in `info`.
    // Said only when the harness got to print its verdict (a harness that
    // raised prints nothing about the declaration).
    if observed.init_sent && observed.stopped.is_none() {
        let spec_declares = spec_outcome(&DECLARES_LEVEL);
        let because = if spec_declares == Some(Outcome::Fail) {
            ", because a server MUST state its level (RCP/1 §14)"
        } else {
            ""
        };
        let spec_part = if spec.is_ok() {
            format!(
                " The `spec` profile's {} {}{because}.",
                DECLARES_LEVEL.id,
                outcome_words(spec_declares)
            )
        } else {
            String::new()
        };
        match &observed.declared {
            None => {
                let init = if observed.init.is_empty() {
                    format!(
                        "was answered with {}",
                        observed.init_answer.as_deref().unwrap_or("nothing")
                    )
                } else {
                    "returned a result without one".to_owned()
                };
                let info: Vec<String> = observed
                    .info_declared
                    .iter()
                    .filter_map(|(id, d)| d.as_ref().map(|d| format!("`info` (id {id}) declared {}", show(d))))
                    .collect();
                let info = if info.is_empty() {
                    " No `info` result seen declared one either.".to_owned()
                } else {
                    format!(" {}, which the harness does not read.", info.join("; "))
                };
                out.push(format!(
                    "The harness reads `_meta.conformance` only from `initialize` (id 2), which {init}; with no \
                     declaration it prints no declaration line and counts it as honest (digest Q3).{info}{spec_part}"
                ));
            }
            Some(d) if d.as_str().and_then(Level::declared).is_none() => out.push(format!(
                "`initialize` declares `_meta.conformance` {}, not one of \"L0\", \"L1\", \"L2\" (compared \
                 case-sensitively, RCP/1 §4.6); the harness counts that as honest (digest Q3).{spec_part}",
                show(d)
            )),
            Some(_) => {}
        }
    }

    // An already-initialized server (digest Q6; decision 3).
    if observed.already_initialized {
        let spec_part = match spec_outcome(&PER_SESSION_INIT) {
            Some(Outcome::Info) => format!(
                " The `spec` profile found it already initialized too ({}) and skipped its pre-initialize checks \
                 as not verifiable (decision 3).",
                PER_SESSION_INIT.id
            ),
            Some(Outcome::Pass) => format!(
                " On its own connection the `spec` profile found it not initialized ({} passed).",
                PER_SESSION_INIT.id
            ),
            _ => String::new(),
        };
        out.push(format!(
            "The server was already initialized when the harness started: #3 (`retrieve` before `initialize`) \
             got no -32001 and `initialize` (id 2) got -32600, which the harness counts as failures.{spec_part}"
        ));
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
