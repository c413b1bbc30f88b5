//! What protocheck saw while signing in at a protected MCP server's
//! authorization server for a person on the web form (`web::sign_in`), carried
//! by the run it started (`RunOptions::sign_in`) so that the engine can judge
//! each step under the authorization rule it bears on.
//!
//! The record holds no secret: the authorization code, the PKCE verifier and
//! every token are replaced in its evidence before it is kept, and the state
//! value is never recorded. It is set only by the sign-in flow: the API's
//! options cannot carry it (`submit::SubmitOptions` has no such field).

use super::{Finding, Outcome};
use crate::transport::evidence::Exchange;

pub use super::{SignIn, SignInStep};

/// Replaces each of `secrets` (an authorization code, a verifier, a token)
/// wherever it appears in `exchange` with `‹redacted›`.
pub fn redact(exchange: &mut Exchange, secrets: &[&str]) {
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        exchange.replace_secret(secret, "‹redacted›");
    }
}

fn rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Skip => 0,
        Outcome::Pass => 1,
        Outcome::Info => 2,
        Outcome::Warn => 3,
        Outcome::Fail => 4,
    }
}

/// `finding` with the sign-in's steps that bear on its rule added: their
/// messages after its own ("During sign-in: …"), their evidence, and the
/// worse of the two outcomes. A failed step counts as the rule's own
/// failure outcome (`on_failure`: a SHOULD rule's failure is a warning). A
/// rule skipped by the run but judged by the sign-in takes the sign-in's
/// outcome.
pub fn fold(finding: &mut Finding, sign_in: Option<&SignIn>, on_failure: Outcome) {
    let Some(sign_in) = sign_in else { return };
    let steps: Vec<&SignInStep> = sign_in
        .steps
        .iter()
        .filter(|s| s.rules.iter().any(|r| r == &finding.rule_id))
        .collect();
    if steps.is_empty() {
        return;
    }
    let mut outcome = if finding.outcome == Outcome::Skip {
        Outcome::Pass
    } else {
        finding.outcome
    };
    let mut said = Vec::new();
    for step in &steps {
        let step_outcome = match step.outcome {
            Outcome::Fail => on_failure,
            other => other,
        };
        if rank(step_outcome) > rank(outcome) {
            outcome = step_outcome;
        }
        said.push(format!("{}: {}", step.step, step.message));
        finding.evidence.extend(step.evidence.iter().cloned());
    }
    let sign_in_text = format!("During sign-in at {}: {}", sign_in.issuer, said.join("; "));
    finding.message = if finding.outcome == Outcome::Skip {
        format!("{sign_in_text} (the run's own probe: {})", finding.message)
    } else {
        format!("{} {sign_in_text}", finding.message)
    };
    finding.outcome = outcome;
}

/// [`fold`], then the finding's message cut to `max_chars`; a rule the
/// sign-in turned from a pass or skip to anything else cites its sentence
/// (`cite`) like any other non-pass.
pub(crate) fn fold_cited(
    finding: &mut Finding,
    sign_in: Option<&SignIn>,
    on_failure: Outcome,
    max_chars: usize,
    cite: impl FnOnce(&str) -> String,
) {
    let judged = |o: Outcome| !matches!(o, Outcome::Pass | Outcome::Skip);
    let before = finding.outcome;
    fold(finding, sign_in, on_failure);
    let message = if !judged(before) && judged(finding.outcome) {
        cite(&finding.message)
    } else {
        std::mem::take(&mut finding.message)
    };
    finding.message = crate::suite::clip(&message, max_chars);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::evidence::{RequestRecord, ResponseRecord};

    fn step(rules: &[&str], outcome: Outcome, message: &str) -> SignInStep {
        SignInStep {
            step: "token request".into(),
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            outcome,
            message: message.into(),
            evidence: Vec::new(),
        }
    }

    fn finding(rule: &str, outcome: Outcome) -> Finding {
        Finding {
            rule_id: rule.into(),
            outcome,
            message: "own".into(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    #[test]
    fn steps_fold_into_their_rules_only_and_never_improve_an_outcome() {
        let sign_in = SignIn {
            issuer: "http://as".into(),
            registration: "dynamic-registration".into(),
            token_obtained: true,
            steps: vec![
                step(&["MCP-AUT-010"], Outcome::Pass, "accepted"),
                step(&["MCP-AUT-005"], Outcome::Fail, "no iss"),
            ],
        };
        let mut f = finding("MCP-AUT-010", Outcome::Pass);
        fold(&mut f, Some(&sign_in), Outcome::Fail);
        assert_eq!(f.outcome, Outcome::Pass);
        assert!(
            f.message
                .contains("During sign-in at http://as: token request: accepted")
        );

        let mut f = finding("MCP-AUT-005", Outcome::Pass);
        fold(&mut f, Some(&sign_in), Outcome::Warn);
        assert_eq!(f.outcome, Outcome::Warn, "{f:?}");

        let mut f = finding("MCP-AUT-005", Outcome::Skip);
        fold(&mut f, Some(&sign_in), Outcome::Warn);
        assert_eq!(f.outcome, Outcome::Warn);

        let mut f = finding("MCP-AUT-010", Outcome::Fail);
        fold(&mut f, Some(&sign_in), Outcome::Fail);
        assert_eq!(
            f.outcome,
            Outcome::Fail,
            "a pass on the way never hides a failure"
        );

        let mut f = finding("MCP-DSC-001", Outcome::Pass);
        fold(&mut f, Some(&sign_in), Outcome::Fail);
        assert_eq!(f.message, "own");
    }

    #[test]
    fn secrets_are_redacted_everywhere_in_an_exchange() {
        let mut x = Exchange {
            request: RequestRecord {
                line: "POST http://as/token?code=CODE1234".into(),
                headers: vec![("x".into(), "VERIFIER99".into())],
                body: "code=CODE1234&code_verifier=VERIFIER99".into(),
            },
            response: Some(ResponseRecord {
                status: Some(200),
                headers: Vec::new(),
                body: r#"{"access_token":"TOKEN5678"}"#.into(),
                truncated: false,
                elapsed_ms: 1,
            }),
            error: None,
        };
        redact(&mut x, &["CODE1234", "VERIFIER99", "TOKEN5678"]);
        let text = serde_json::to_string(&x).expect("json");
        for secret in ["CODE1234", "VERIFIER99", "TOKEN5678"] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(text.contains("‹redacted›"));
    }
}
