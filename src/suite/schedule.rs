//! Judging a suite's rules side by side: a rule starts as soon as every rule
//! it requires is judged, a run-wide rule (one that reads every reply of the
//! run) once every other rule is, and at most a given number run at once.
//! Findings are emitted in the order the suite lists its rules, each as soon
//! as every rule before it is judged, so a report reads the same whatever
//! order the rules finished in. Both MCP engines judge their rules here.

use super::Outcome;
use super::context::{EngineError, Reporter};
use crate::suite::Finding;
use futures::StreamExt;
use std::collections::HashMap;
use std::future::Future;

/// How many rules may be judged at once over HTTP for each request allowed
/// in flight: a rule in flight mostly waits (on a request permit, a watch
/// window, a tool call several rules share), so the target's load is bounded
/// by the permits, not by how many rules wait.
pub(crate) const RULES_PER_PERMIT: usize = 4;

/// What the rules judged so far came to: outcome and message by rule id.
/// A rule's precondition reads it (the no-cascade rule: a rule whose
/// requirement failed or was not verified is not verified either).
pub(crate) type Judged = HashMap<&'static str, (Outcome, String)>;

/// What the scheduler reads of a rule.
pub(crate) trait Scheduled {
    /// The rule's id.
    fn id(&self) -> &'static str;
    /// The rules that must be judged before this one. An id naming no rule
    /// of the run counts as judged.
    fn requires(&self) -> &'static [&'static str];
    /// Whether the rule judges the replies of the whole run, and so starts
    /// only once every other rule is judged.
    fn run_wide(&self) -> bool;
    /// Whether every rule that does not go first starts only once every
    /// rule that does is judged (a rule whose failure leaves most others
    /// unverified).
    fn goes_first(&self) -> bool {
        false
    }
}

/// Judges every rule of `rules` with `judge` (given the rule and what was
/// judged when it started) and emits the findings in the order of `rules`.
/// `done` holds the findings of rules judged before (they are emitted in
/// their place and never judged again). A rule starts as soon as every rule
/// it requires is judged (and, unless it goes first, every rule that goes
/// first is), a run-wide rule once every other rule is; at most
/// `max_rules` are judged at once (1 judges them one after another, in the
/// order of `rules`). A rule that waits long (a watch window, a slow tool)
/// so holds up only the rules that require it.
pub(crate) async fn judge_all<'r, R, F, Fut>(
    rules: &[&'r R],
    done: Vec<Finding>,
    max_rules: usize,
    judge: F,
    reporter: &mut Reporter,
) -> Result<(), EngineError>
where
    R: Scheduled + ?Sized,
    F: Fn(&'r R, Judged) -> Fut,
    Fut: Future<Output = Finding>,
{
    let clock = std::time::Instant::now();
    let mut judged = Judged::new();
    let mut started = vec![false; rules.len()];
    let mut findings: Vec<Option<Finding>> = vec![None; rules.len()];
    for finding in done {
        if let Some(i) = rules.iter().position(|r| r.id() == finding.rule_id) {
            judged.insert(rules[i].id(), (finding.outcome, finding.message.clone()));
            started[i] = true;
            findings[i] = Some(finding);
        }
    }
    let known = |id: &str| rules.iter().any(|r| r.id() == id);
    let mut emitted = 0;
    let mut running = futures::stream::FuturesUnordered::new();
    loop {
        let probing = rules
            .iter()
            .any(|r| !r.run_wide() && !judged.contains_key(r.id()));
        let first = rules
            .iter()
            .any(|r| r.goes_first() && !judged.contains_key(r.id()));
        let ready = (0..rules.len())
            .filter(|&i| !started[i])
            .filter(|&i| rules[i].goes_first() || !first)
            .filter(|&i| !rules[i].run_wide() || !probing)
            .filter(|&i| {
                rules[i]
                    .requires()
                    .iter()
                    .all(|id| judged.contains_key(id) || !known(id))
            })
            .collect::<Vec<usize>>();
        for i in ready {
            if running.len() >= max_rules.max(1) {
                break;
            }
            started[i] = true;
            let rule = rules[i];
            // Each rule is a check under way of its own: once one of its
            // requests is answered, its next go before the first requests
            // of rules not yet answered (see `permits`).
            let judging = super::permits::under_way(judge(rule, judged.clone()));
            let began = clock.elapsed();
            running.push(async move {
                let finding = judging.await;
                // When each rule ran, for reading a run's critical path
                // (`RUST_LOG=protocheck::suite::schedule=debug`).
                tracing::debug!(
                    rule = rule.id(),
                    from_ms = began.as_millis() as u64,
                    to_ms = clock.elapsed().as_millis() as u64,
                    "judged"
                );
                (i, finding)
            });
        }
        let Some((i, finding)) = running.next().await else {
            // Nothing running and nothing ready: done, or a cycle of
            // requirements, whose rules are judged one by one.
            let rest: Vec<usize> = (0..rules.len()).filter(|&i| !started[i]).collect();
            if rest.is_empty() {
                break;
            }
            for i in rest {
                started[i] = true;
                let finding = judge(rules[i], judged.clone()).await;
                judged.insert(rules[i].id(), (finding.outcome, finding.message.clone()));
                findings[i] = Some(finding);
            }
            continue;
        };
        judged.insert(rules[i].id(), (finding.outcome, finding.message.clone()));
        findings[i] = Some(finding);
        while let Some(Some(finding)) = findings.get_mut(emitted).map(Option::take) {
            reporter.emit(finding).await?;
            emitted += 1;
        }
    }
    for finding in findings.into_iter().skip(emitted).flatten() {
        reporter.emit(finding).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::Duration;

    struct TestRule {
        id: &'static str,
        requires: &'static [&'static str],
        run_wide: bool,
        first: bool,
        /// How long the rule's check takes.
        ms: u64,
    }

    impl Scheduled for TestRule {
        fn id(&self) -> &'static str {
            self.id
        }
        fn requires(&self) -> &'static [&'static str] {
            self.requires
        }
        fn run_wide(&self) -> bool {
            self.run_wide
        }
        fn goes_first(&self) -> bool {
            self.first
        }
    }

    fn finding(id: &str, outcome: Outcome) -> Finding {
        Finding {
            rule_id: id.to_owned(),
            outcome,
            message: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    /// Runs the scheduler over `rules` and returns the emitted ids, the
    /// order the checks started in, and what each check saw judged.
    async fn schedule(
        rules: &[TestRule],
        done: Vec<Finding>,
        max: usize,
    ) -> (
        Vec<String>,
        Vec<&'static str>,
        HashMap<&'static str, Judged>,
    ) {
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let mut reporter = Reporter::new(tx);
        let starts = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Mutex::new(HashMap::new()));
        let refs: Vec<&TestRule> = rules.iter().collect();
        judge_all(
            &refs,
            done,
            max,
            |rule: &TestRule, judged: Judged| {
                // Recorded when the scheduler starts the rule, not when its
                // future is first polled.
                starts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(rule.id);
                seen.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(rule.id, judged);
                async move {
                    tokio::time::sleep(Duration::from_millis(rule.ms)).await;
                    finding(rule.id, Outcome::Pass)
                }
            },
            &mut reporter,
        )
        .await
        .expect("the receiver is alive");
        drop(reporter);
        let mut emitted = Vec::new();
        while let Some(f) = rx.recv().await {
            emitted.push(f.rule_id);
        }
        let starts = starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let seen = seen.lock().unwrap_or_else(PoisonError::into_inner).clone();
        (emitted, starts, seen)
    }

    const fn rule(id: &'static str, requires: &'static [&'static str], ms: u64) -> TestRule {
        TestRule {
            id,
            requires,
            run_wide: false,
            first: false,
            ms,
        }
    }

    #[tokio::test]
    async fn rules_that_go_first_are_judged_side_by_side_before_any_other() {
        let first = |r: TestRule| TestRule { first: true, ..r };
        let rules = [
            rule("A", &[], 0),
            first(rule("F1", &[], 40)),
            first(rule("F2", &["F1"], 20)),
            first(rule("F3", &[], 40)),
            rule("B", &[], 0),
        ];
        let (emitted, starts, seen) = schedule(&rules, Vec::new(), 8).await;
        assert_eq!(emitted, ["A", "F1", "F2", "F3", "B"]);
        assert_eq!(&starts[..2], ["F1", "F3"], "side by side, in list order");
        assert_eq!(starts[2], "F2", "after what it requires");
        for other in ["A", "B"] {
            assert_eq!(
                seen[other].len(),
                3,
                "{other} starts after every rule that goes first"
            );
        }
    }

    #[tokio::test]
    async fn findings_come_in_list_order_whatever_order_the_rules_finish_in() {
        let rules = [rule("A", &[], 30), rule("B", &[], 10), rule("C", &[], 20)];
        let (emitted, starts, _) = schedule(&rules, Vec::new(), 4).await;
        assert_eq!(emitted, ["A", "B", "C"]);
        assert_eq!(starts, ["A", "B", "C"], "all three at once");
    }

    #[tokio::test]
    async fn a_rule_waits_for_its_requirements_and_sees_them_judged() {
        let rules = [
            rule("A", &["B"], 0),
            rule("B", &[], 50),
            rule("C", &["UNKNOWN"], 0),
        ];
        let (emitted, starts, seen) = schedule(&rules, Vec::new(), 4).await;
        assert_eq!(emitted, ["A", "B", "C"]);
        assert_eq!(starts, ["B", "C", "A"]);
        assert!(seen["A"].contains_key("B"));
        assert!(
            seen["C"].is_empty(),
            "an unknown requirement counts as judged"
        );
    }

    #[tokio::test]
    async fn run_wide_rules_start_after_every_other_rule() {
        let rules = [
            TestRule {
                run_wide: true,
                ..rule("W", &[], 0)
            },
            rule("A", &[], 40),
            rule("B", &["A"], 40),
        ];
        let (emitted, starts, seen) = schedule(&rules, Vec::new(), 4).await;
        assert_eq!(emitted, ["W", "A", "B"]);
        assert_eq!(starts, ["A", "B", "W"]);
        assert_eq!(seen["W"].len(), 2);
    }

    #[tokio::test]
    async fn rules_judged_before_are_emitted_in_place_and_not_judged_again() {
        let rules = [rule("A", &[], 0), rule("B", &["A"], 0), rule("C", &[], 0)];
        let done = vec![finding("B", Outcome::Fail)];
        let (emitted, starts, seen) = schedule(&rules, done, 4).await;
        assert_eq!(emitted, ["A", "B", "C"]);
        assert_eq!(starts, ["A", "C"]);
        assert_eq!(seen["A"]["B"].0, Outcome::Fail);
    }

    #[tokio::test]
    async fn one_at_a_time_keeps_the_list_order_and_a_cycle_is_still_judged() {
        let rules = [
            rule("A", &[], 10),
            rule("B", &[], 0),
            rule("X", &["Y"], 0),
            rule("Y", &["X"], 0),
        ];
        let (emitted, starts, _) = schedule(&rules, Vec::new(), 1).await;
        assert_eq!(emitted, ["A", "B", "X", "Y"]);
        assert_eq!(starts, ["A", "B", "X", "Y"]);
    }
}
