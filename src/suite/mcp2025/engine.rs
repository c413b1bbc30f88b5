//! The run loop: opens the run's connection (`initialize`, then
//! `notifications/initialized`), judges each rule with the no-cascade,
//! transport and capability skips applied, and grades the run. A rule is
//! judged as soon as every rule it requires is, side by side with the
//! others (how many at once: see [`RULES_PER_PERMIT`]; the order:
//! [`schedule`]). Findings are emitted in catalogue order, as soon as every
//! rule before them is judged.

use super::catalogue::catalogue;
use super::client::{Client, PROTOCOL_VERSION};
use super::rpc;
use super::rule::{INITIALIZE_ID, Mcp25Rule, Phase};
use super::session::{Countdown, Judgement, Kind, Session};
use crate::suite::context::{Endpoint, EngineError, Reporter, RunContext, Stopwatch};
use crate::suite::mcp::client::clip;
use crate::suite::schedule::{self, Judged, RULES_PER_PERMIT, Scheduled};
use crate::suite::{Finding, NOT_JUDGED, Outcome, SuiteId, Verdict, VerdictDetail, grade};
use std::collections::HashSet;

/// Version of protocheck's MCP 2025-11-25 rules; stored with each run.
pub const SUITE_VERSION: &str = "0.1.0";
/// The MCP revision the rules judge against.
pub const SPEC_REVISION: &str = PROTOCOL_VERSION;

/// Default limit on rules judged (and requests in flight) at once.
pub const DEFAULT_MAX_CONCURRENCY: usize = crate::suite::context::DEFAULT_TARGET_CONCURRENCY;

/// Tunables of a run that [`crate::suite::RunOptions`] does not carry.
#[derive(Debug, Clone)]
pub struct Mcp25Settings {
    /// Most requests in flight to the target at once (and, over stdio, rules
    /// judged at once; over HTTP [`RULES_PER_PERMIT`] times as many).
    pub max_concurrency: usize,
}

impl Mcp25Settings {
    /// The settings a run asks for: its target concurrency.
    pub fn for_run(ctx: &crate::suite::context::RunContext) -> Self {
        Self {
            max_concurrency: ctx.target_concurrency.max(1),
        }
    }
}

impl Default for Mcp25Settings {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
        }
    }
}

/// Longest finding message: messages quote what the target sent, so they are cut.
const MAX_MESSAGE_CHARS: usize = 2000;

impl Scheduled for Mcp25Rule {
    fn id(&self) -> &'static str {
        self.rule.id
    }
    fn requires(&self) -> &'static [&'static str] {
        self.requires
    }
    fn run_wide(&self) -> bool {
        self.phase == Phase::RunWide
    }
}

/// Why a rule cannot be judged before its check runs, if it cannot: the
/// transport it is written for, the rules it requires (no cascades), and
/// the capability it needs.
fn precondition(rule: &Mcp25Rule, session: &Session, judged: &Judged) -> Option<String> {
    if let Some(transport) = rule.transport
        && transport != session.transport()
    {
        return Some(format!(
            "not applicable: the requirement is written for the {} transport; this run speaks {}",
            transport.as_str(),
            session.transport().as_str()
        ));
    }
    // The era gate (digest, decision D1): a server that speaks another
    // revision is judged on nothing else, and every rule says why.
    if rule.rule.id != INITIALIZE_ID
        && let Some((Outcome::Info, message)) = judged.get(INITIALIZE_ID)
        && rule.requires.contains(&INITIALIZE_ID)
    {
        return Some(format!("not applicable: the server {}", uncited(message)));
    }
    // A server that refuses the run's `initialize` with 401 can be judged on
    // its authorization only (digest D13): everything else is unverified,
    // not failed, and the authorization rules judge the 401 itself, not
    // the session it refused. The first clause is the short reason a
    // verdict without a grade shows (see `grade`).
    // One refused with 403 (a Host or Origin allow-list) is refused, not
    // judged: no rule can be, the authorization rules included.
    if let Some(reason) =
        crate::suite::mcp::client::refused_everything(&[("initialize", &session.init.exchange)])
    {
        return Some(reason);
    }
    let unauthorized = session.init.status == Some(401);
    if unauthorized && rule.rule.group != "AUT" {
        return Some(if session.client.bearer().is_some() {
            "not verified: bearer token refused: the server answered the run's `initialize` \
             with HTTP 401 although it carried the run's bearer token"
                .to_owned()
        } else {
            "not verified: authorization required: the server answered `initialize` with HTTP \
             401 and the run has no bearer token; a token (`--bearer-token`) would let these \
             rules be judged"
                .to_owned()
        });
    }
    for id in rule.requires {
        if unauthorized && *id == INITIALIZE_ID {
            continue;
        }
        match judged.get(id) {
            None | Some((Outcome::Pass, _)) => {}
            Some((Outcome::Skip, message)) if message.starts_with("not verified:") => {
                return Some(message.clone());
            }
            Some((Outcome::Skip, _)) => return Some(format!("not verified: {id} was skipped")),
            // A warning is no failure: MCP25-AUT-001 warns on a server with a
            // credential scheme of its own, and the rules after it say so.
            Some((Outcome::Warn, _)) => return Some(format!("not verified: {id} warned")),
            Some(_) => return Some(format!("not verified: {id} failed")),
        }
    }
    if let Some(name) = rule.capability
        && !session.advertises(name)
    {
        return Some(format!(
            "not applicable: the server does not advertise the `{name}` capability in its \
             `initialize` result"
        ));
    }
    None
}

/// Judges one rule (precondition, then its check) into a finding.
async fn judge(rule: &Mcp25Rule, session: &Session, judged: &Judged, ctx: &RunContext) -> Finding {
    let watch = Stopwatch::start();
    let judgement = match precondition(rule, session, judged) {
        Some(reason) => Judgement::skip(reason),
        None => on_a_live_process(session, (rule.check)(session).await.within_limits()).await,
    };
    let outcome = match judgement.kind {
        Kind::Pass => Outcome::Pass,
        Kind::Fail => rule.rule.on_failure,
        Kind::Warn => Outcome::Warn,
        Kind::Info => Outcome::Info,
        Kind::Skip => Outcome::Skip,
    };
    let message = match outcome {
        Outcome::Pass | Outcome::Skip => judgement.message,
        _ => cite(rule, &judgement.message),
    };
    let mut finding = Finding {
        rule_id: rule.rule.id.to_owned(),
        outcome,
        message: clip(&message, MAX_MESSAGE_CHARS),
        evidence: judgement.evidence,
        duration_ms: watch.ms(),
    };
    crate::suite::sign_in::fold_cited(
        &mut finding,
        ctx.options.sign_in.as_ref(),
        rule.rule.on_failure,
        MAX_MESSAGE_CHARS,
        |message| cite(rule, message),
    );
    for token in [&ctx.options.bearer_token, &ctx.options.limited_token]
        .into_iter()
        .flatten()
    {
        finding.redact(token.expose());
    }
    finding
}

/// `judgement`, unless the run's own stdio child had ended by the time it
/// was made: a failure or a warning then rests on a dead pipe (every probe
/// sent to it meets a closed stdin or stdout), not on what the server
/// answered, and is not verified instead. The messages that may end a
/// process go to children of their rules' own (MCP25-RPC-004, -005, -008),
/// whose findings say so; this catches a process that ended otherwise.
async fn on_a_live_process(session: &Session, judgement: Judgement) -> Judgement {
    if !matches!(judgement.kind, Kind::Fail | Kind::Warn) {
        return judgement;
    }
    let Some(status) = session.main.exited().await else {
        return judgement;
    };
    let mut skip = Judgement::skip(format!(
        "not verified: the server's process (the run's own) had ended ({status}) by the time \
         this rule was judged, so its probes met a closed pipe; protocheck judges no rule on a \
         dead process (what it would have said: {})",
        clip(&judgement.message, 300)
    ));
    skip.evidence = judgement.evidence;
    skip
}

/// `message` with the rule's requirement appended: its keyword, the
/// requirement and the link to it. The message is cut first so that the
/// citation always survives [`MAX_MESSAGE_CHARS`].
pub(crate) fn cite(rule: &Mcp25Rule, message: &str) -> String {
    let citation = format!(
        " [Spec, {} {}: {} — {}]",
        rule.rule.id,
        rule.keyword.as_str().replace('_', " "),
        rule.sentence,
        rule.rule.spec_ref
    );
    let room = MAX_MESSAGE_CHARS.saturating_sub(citation.chars().count() + 1);
    format!("{}{citation}", clip(message, room))
}

/// A finding's message without the citation [`cite`] appended.
fn uncited(message: &str) -> &str {
    message.split(" [Spec, ").next().unwrap_or(message)
}

pub(crate) async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
    settings: &Mcp25Settings,
) -> Result<Verdict, EngineError> {
    let client = Client::new(
        endpoint.clone(),
        ctx.http.clone(),
        ctx.options.request_timeout(),
        settings.max_concurrency,
    )
    .with_bearer(ctx.options.bearer_token.as_ref());
    let main = client
        .connect()
        .await
        .map_err(EngineError::from_transport)?;
    let init = main.initialize(PROTOCOL_VERSION).await;
    if init.unanswered() {
        let err = init.error.clone().unwrap_or_else(|| {
            crate::transport::TransportError::Protocol("`initialize` got no answer".into())
        });
        main.close().await;
        return Err(EngineError::from_transport(err));
    }
    let initialized = match init.result() {
        Some(_) => Some(main.initialized().await),
        None => None,
    };
    let rules: Vec<&Mcp25Rule> = catalogue().iter().collect();
    let before_debug = before_debug(&rules);
    let session = Session {
        client,
        main,
        init,
        initialized,
        unknown_versions: Default::default(),
        allow_tool_calls: ctx.options.allow_tool_calls == Some(true),
        shared: Default::default(),
        limited_token: ctx.options.limited_token.clone(),
        progress_calls: Default::default(),
        before_debug: Countdown::new(before_debug.len()),
        subscribed: Default::default(),
    };
    // Over HTTP a rule in flight is mostly waiting (on a watch window, on
    // the tool calls several rules share); the target's load is bounded by
    // the client's request permits, not by how many rules wait. Over stdio
    // rules that start children of their own are kept to the request limit.
    let rules_at_once = match endpoint {
        Endpoint::Http(_) => settings.max_concurrency.saturating_mul(RULES_PER_PERMIT),
        Endpoint::Stdio(_) => settings.max_concurrency,
    };
    let shared = &session;
    let before_debug = &before_debug;
    // The passive probe (the listings, a `ping` and read-only tool calls
    // with progress tokens, which the run-wide progress rules read) needs
    // nothing but the handshake. It goes out beside the rules, not after
    // every other rule, where the rules reading it would wait for it at the
    // end of the run; so do MCP25-RPC-001's pings.
    let early = async {
        if shared.probes_early() {
            tokio::join!(shared.passive_probe(), rpc::id_pings(shared));
        }
    };
    // Both boxed: many requests side by side make large futures.
    let (judged, ()) = tokio::join!(
        Box::pin(schedule::judge_all(
            &rules,
            Vec::new(),
            rules_at_once,
            |rule, judged| async move {
                let finding = judge(rule, shared, &judged, ctx).await;
                if before_debug.contains(rule.rule.id) {
                    shared.before_debug.judged();
                }
                finding
            },
            reporter,
        )),
        Box::pin(early)
    );
    // A run whose own stdio child ended before the rules were judged
    // judged the rest on nothing: no grade, and the verdict says why.
    let ended = session.main.exited().await;
    session.main.close().await;
    judged?;
    let mut verdict = verdict(reporter);
    if let Some(status) = ended
        && verdict.mcp_grade() != Some("non-compliant")
    {
        verdict.passed = false;
        verdict.summary = format!(
            "{NOT_JUDGED}: the server's process ended during the run ({status}); the rules judged \
             after it were not verified (their findings say so), and none of them is certified"
        );
        verdict.detail =
            VerdictDetail::mcp_graded(NOT_JUDGED, Some("the server's process ended".to_owned()));
    }
    Ok(verdict)
}

/// The rules MCP25-LOG-002 waits for when it sets `debug` on the run's own
/// session (see `log::levels`): every rule judged before the run-wide ones,
/// except itself and the rules that require it (they start once it is
/// judged, so none of them can be waited for).
fn before_debug(rules: &[&Mcp25Rule]) -> HashSet<&'static str> {
    let set_level = super::log::SET_LEVEL.rule.id;
    let mut after: HashSet<&'static str> = HashSet::from([set_level]);
    // Every rule that requires one after it comes after it too.
    loop {
        let more: Vec<&'static str> = rules
            .iter()
            .filter(|r| !after.contains(r.rule.id))
            .filter(|r| r.requires.iter().any(|id| after.contains(id)))
            .map(|r| r.rule.id)
            .collect();
        if more.is_empty() {
            break;
        }
        after.extend(more);
    }
    rules
        .iter()
        .filter(|r| r.phase != Phase::RunWide && !after.contains(r.rule.id))
        .map(|r| r.rule.id)
        .collect()
}

/// The grade, as the first MCP suite grades (see [`grade::grade`]: no
/// grade without the core rules judged).
fn verdict(reporter: &Reporter) -> Verdict {
    let graded = grade::grade(reporter.findings());
    let mut summary = graded.summary;
    // The era gate: a server that speaks another revision is judged on
    // nothing else, and the summary says why.
    if let Some(gate) = reporter
        .findings()
        .iter()
        .find(|f| f.rule_id == INITIALIZE_ID && f.outcome == Outcome::Info)
    {
        summary = format!(
            "{}; the {SPEC_REVISION} rules do not apply",
            uncited(&gate.message)
        );
    }
    Verdict {
        suite: SuiteId::Mcp,
        suite_version: SUITE_VERSION.to_owned(),
        spec_revision: SPEC_REVISION.to_owned(),
        passed: graded.passed,
        summary,
        counts: reporter.counts(),
        detail: VerdictDetail::mcp_graded(graded.grade, graded.withheld),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::mcp::Keyword;
    use crate::suite::mcp2025::client::Transport;
    use crate::suite::mcp2025::rule::spec;
    use futures::FutureExt;
    use serde_json::json;

    fn rule() -> Mcp25Rule {
        named("MCP25-TST-001")
    }

    /// A rule of the tests, judged `pass` whatever the server does.
    fn named(id: &'static str) -> Mcp25Rule {
        Mcp25Rule::new(
            id,
            "a rule of this test",
            Keyword::Must,
            Outcome::Fail,
            spec!("/basic"),
            "TST",
            |_| async { Judgement::pass("judged") }.boxed(),
        )
    }

    /// A session over HTTP (nothing is sent) whose `initialize` advertised `tools`.
    async fn session() -> Session {
        Session::offline(json!({"tools": {}})).await
    }

    #[test]
    fn the_debug_window_waits_for_the_rules_before_the_run_wide_ones() {
        let rules: Vec<&Mcp25Rule> = catalogue().iter().collect();
        let set = before_debug(&rules);
        // Not itself, and not the run-wide rules, which start after it.
        assert!(!set.contains("MCP25-LOG-002"));
        assert!(!set.contains("MCP25-LOG-004"));
        // The tool rules' calls and the other probes are.
        for id in ["MCP25-TOL-010", "MCP25-LOG-003", "MCP25-HTP-010"] {
            assert!(set.contains(id), "{id}");
        }
        let probes = rules.iter().filter(|r| r.phase != Phase::RunWide).count();
        assert_eq!(set.len(), probes - 1);
    }

    #[test]
    fn rules_after_the_debug_window_are_not_waited_for() {
        let log = super::super::log::SET_LEVEL;
        // A requires LOG-002, B requires A: both start after the window.
        let a = named("MCP25-TST-001").requires(&["MCP25-LOG-002"]);
        let b = named("MCP25-TST-002").requires(&["MCP25-TST-001"]);
        let c = named("MCP25-TST-003");
        let set = before_debug(&[&b, &log, &a, &c]);
        assert_eq!(set, HashSet::from(["MCP25-TST-003"]));
    }

    #[tokio::test]
    async fn scoped_rules_are_skipped_with_their_reason() {
        let s = session().await;
        let judged = Judged::new();
        assert_eq!(precondition(&rule(), &s, &judged), None);
        let prompts = rule().needs_capability("prompts");
        let reason = precondition(&prompts, &s, &judged).expect("skipped");
        assert!(
            reason.contains("does not advertise the `prompts` capability"),
            "{reason}"
        );
        assert_eq!(
            precondition(&rule().needs_capability("tools"), &s, &judged),
            None
        );
        let stdio = rule().only_on(Transport::Stdio);
        let reason = precondition(&stdio, &s, &judged).expect("skipped");
        assert!(
            reason.contains("written for the stdio transport"),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn a_failed_requirement_skips_without_a_cascade() {
        let s = session().await;
        let mut judged = Judged::new();
        judged.insert(INITIALIZE_ID, (Outcome::Fail, "bad".into()));
        let reason = precondition(&rule(), &s, &judged).expect("skipped");
        assert_eq!(reason, format!("not verified: {INITIALIZE_ID} failed"));
        let dependent = rule().requires(&["MCP25-TST-002"]);
        judged.insert("MCP25-TST-002", (Outcome::Skip, reason.clone()));
        assert_eq!(precondition(&dependent, &s, &judged), Some(reason));
        judged.insert("MCP25-TST-002", (Outcome::Pass, "ok".into()));
        assert_eq!(precondition(&dependent, &s, &judged), None);
    }
}
