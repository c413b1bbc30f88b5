//! The run loop: opens the session (cold probe, era, survey), judges each rule
//! with the no-cascade and capability rules applied, and grades the run. It
//! reads the rules from the catalogue and what sets a rule apart (judged on a
//! legacy server, when the server refuses the run, whatever the connection)
//! from the rule's properties, so it names no rule file.

use super::catalogue::{self, catalogue};
use super::client::{McpClient, Reply, Watches, clip};
use super::era::{self, Era};
use super::rule::{DISCOVER_ID, McpRule, Phase};
use super::sec;
use super::session::{Judgement, Kind, Session};
use super::survey::{self, Survey};
use super::wire;
use crate::suite::context::{EngineError, Reporter, RunContext, Stopwatch};
use crate::suite::permits::under_way;
use crate::suite::schedule::{self, Judged, RULES_PER_PERMIT, Scheduled};
use crate::suite::{Exchange, Finding, Outcome, SuiteId, Verdict, VerdictDetail, grade};
use std::sync::atomic::{AtomicBool, Ordering};
use url::Url;

/// Version of protocheck's MCP rules; stored with each run.
pub const SUITE_VERSION: &str = "0.2.0";
/// The MCP revision the rules judge against.
pub const SPEC_REVISION: &str = wire::PROTOCOL_VERSION;

/// Default limit on concurrent requests to one target.
pub const DEFAULT_MAX_CONCURRENCY: usize = crate::suite::context::DEFAULT_TARGET_CONCURRENCY;

/// Tunables of a run that [`crate::suite::RunOptions`] does not carry.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// Most requests in flight to the target at once.
    pub max_concurrency: usize,
}

impl McpSettings {
    /// The settings a run asks for: its target concurrency.
    pub fn for_run(ctx: &crate::suite::context::RunContext) -> Self {
        Self {
            max_concurrency: ctx.target_concurrency.max(1),
        }
    }
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
        }
    }
}

/// Longest finding message: messages quote what the target sent, so they are cut.
const MAX_MESSAGE_CHARS: usize = 2000;

impl Scheduled for McpRule {
    fn id(&self) -> &'static str {
        self.rule.id
    }
    fn requires(&self) -> &'static [&'static str] {
        self.requires
    }
    fn run_wide(&self) -> bool {
        self.phase == Phase::RunWide
    }
    /// The connection rules: when one fails, most rules cannot be judged at
    /// all (see `precondition`), and it must be known before any starts.
    fn goes_first(&self) -> bool {
        self.finds_connection_state
    }
}

/// Why a rule does not apply to this run, if it does not: what the opening
/// probes tell (the transport, a server refusing the run with 401, the era),
/// before anything else is judged. The engine reads it to start the watches
/// of the rules that apply as early as it can.
fn out_of_scope(
    rule: &McpRule,
    client: &McpClient,
    era: &Era,
    discover: &Reply,
    initialize: &Reply,
) -> Option<String> {
    // Over stdio, the rules about HTTP do not apply (a property of the rule).
    if client.is_stdio()
        && let Some(reason) = rule.stdio_skip_reason()
    {
        return Some(reason);
    }
    // A server that refuses both of the run's opening requests, of either
    // era, with 403 (a Host or Origin allow-list) is refused, not judged:
    // every rule but those of its TLS says so, and the run gets no grade.
    if !rule.judges_tls
        && let Some(reason) = super::client::refused_everything(&[
            ("server/discover", &discover.exchange),
            ("initialize", &initialize.exchange),
        ])
    {
        return Some(reason);
    }
    // A server that refuses the run's requests with 401 can be judged on its
    // authorization and its transport only; everything else is unverified,
    // not failed (§15.4, §15.9).
    if discover.status == Some(401) && rule.rule.group != "AUT" && !rule.judges_tls {
        // The first clause is the short reason a verdict without a grade
        // shows (see `grade`).
        return Some(if client.bearer().is_some() {
            "not verified: bearer token refused: the server refused the run's bearer token \
             (HTTP 401)"
                .to_owned()
        } else {
            "not verified: authorization required: the server requires authorization (HTTP \
             401) and the run has no bearer token; a token (`--bearer-token`) would let these \
             rules be judged"
                .to_owned()
        });
    }
    if matches!(era, Era::Legacy { .. }) && !rule.on_legacy {
        return Some(format!(
            "not applicable: {}; the {SPEC_REVISION} rules do not apply",
            era.describe()
        ));
    }
    // §15 amendment "Era scoping is consistent": a rule the spec writes for
    // servers that support only 2026-07-28 does not apply to a dual-era one.
    if rule.modern_only && matches!(era, Era::Dual { .. }) {
        return Some(format!(
            "not applicable: {}; the spec writes this requirement for servers that support \
             only {SPEC_REVISION} ({})",
            era.describe(),
            rule.rule.spec_ref
        ));
    }
    // The same requirement, on a server that did not answer `server/discover`
    // as a 2026-07-28 server at all (one that answers neither way is judged
    // as a modern server whose discover is broken, MCP-DSC-001): whether it
    // supports only 2026-07-28 is not known, so the rule is not verified. A
    // 2024-11-05 HTTP+SSE server is one (panel rows `sdk-legacy-sse`,
    // `everything-sse`): a 405 to its GET would say nothing of a revision it
    // does not speak.
    if rule.modern_only && matches!(era, Era::Modern) && !era::recognised_modern(discover) {
        return Some(format!(
            "not verified: {DISCOVER_ID} failed: the server did not answer `server/discover` as \
             a {SPEC_REVISION} server, so it is not known to support only {SPEC_REVISION}, as \
             the servers this requirement is written for do ({})",
            rule.rule.spec_ref
        ));
    }
    None
}

/// Why a rule cannot be judged before its check runs, if it cannot. Checked
/// once here for every rule, never inside the checks: authorization, era (a
/// legacy-only server; a modern-only rule on a dual-era server) and the rules
/// this one requires (§15.4, no cascades).
fn precondition(rule: &McpRule, session: &Session, judged: &Judged) -> Option<String> {
    if let Some(reason) = out_of_scope(
        rule,
        &session.client,
        &session.era,
        &session.discover,
        &session.initialize,
    ) {
        return Some(reason);
    }
    for id in rule.requires {
        let Some((outcome, message)) = judged.get(id) else {
            continue;
        };
        match outcome {
            Outcome::Pass => {}
            Outcome::Skip if message.starts_with("not verified:") => {
                return Some(message.clone());
            }
            Outcome::Skip => return Some(format!("not verified: {id} was skipped")),
            Outcome::Fail | Outcome::Warn | Outcome::Info => {
                return Some(format!("not verified: {id} failed"));
            }
        }
    }
    // A server failing MCP-STL-003, -004 or -008 answers a request by what
    // came before it on its connection (a `server/discover`, a declaration
    // of capabilities). Every probe that travels over pooled connections
    // would then be judged by which connection the pool picked, and the same
    // server would get different verdicts on different runs. Only the rules
    // whose verdict cannot depend on that are judged; the others are
    // unverified, never failed (§15.4). Over stdio there is one child and
    // protocheck orders every line it gets, so no verdict depends on a pool.
    if !rule.pool_independent && !session.client.is_stdio() {
        let stateful =
            connection_rules().find(|id| matches!(judged.get(id), Some((Outcome::Fail, _))));
        if let Some(id) = stateful {
            return Some(format!(
                "not verified: {id} failed; a server that fails it may answer a request by \
                 what came before it on its connection (an inference, not observed here), so \
                 this rule's probes, sent over pooled connections, could be judged by the \
                 connection that carried them"
            ));
        }
    }
    None
}

/// The ids of the rules that find a server answering by its connection's
/// history, in catalogue order; they are judged before every other rule.
fn connection_rules() -> impl Iterator<Item = &'static str> {
    catalogue()
        .iter()
        .filter(|r| r.finds_connection_state)
        .map(|r| r.rule.id)
}

/// Judges one rule (precondition, then its check) into a finding.
async fn judge(rule: &McpRule, session: &Session, judged: &Judged, ctx: &RunContext) -> Finding {
    let watch = Stopwatch::start();
    let judgement = match precondition(rule, session, judged) {
        Some(reason) => Judgement::skip(reason),
        None => {
            // The run-wide rules read the run's log: the survey's tool calls
            // are in it before they judge.
            if rule.phase == Phase::RunWide {
                session.reads().await;
                session.tool_calls().await;
            }
            (rule.check)(session).await.within_limits()
        }
    };
    let outcome = match judgement.kind {
        Kind::Pass => Outcome::Pass,
        Kind::Fail => rule.rule.on_failure,
        Kind::Warn => Outcome::Warn,
        Kind::Skip => Outcome::Skip,
    };
    // Evidence is kept where a server author needs it: on what went wrong.
    let evidence = match outcome {
        Outcome::Pass | Outcome::Skip => Vec::new(),
        _ => judgement.evidence,
    };
    let message = match outcome {
        Outcome::Pass | Outcome::Skip => judgement.message,
        // Every non-pass points to the sentence it enforces.
        _ => cite(rule, &judgement.message),
    };
    let mut finding = Finding {
        rule_id: rule.rule.id.to_owned(),
        outcome,
        message: clip(&message, MAX_MESSAGE_CHARS),
        evidence,
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

/// `message` with the rule's requirement appended: what a fail, warn or info
/// enforces, its keyword, and the link to the sentence in the published spec. The message is cut first so
/// that the citation always survives [`MAX_MESSAGE_CHARS`].
pub(crate) fn cite(rule: &McpRule, message: &str) -> String {
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

/// The client of a run against `url`: the one the cold probe and every
/// later probe of the run go through.
pub(crate) fn client_for(
    url: &Url,
    ctx: &RunContext,
    settings: &McpSettings,
) -> Result<McpClient, EngineError> {
    let http = ctx
        .http
        .for_target(url)
        .map_err(EngineError::from_transport)?;
    Ok(McpClient::new(
        http,
        url.clone(),
        ctx.options.request_timeout(),
        settings.max_concurrency,
    )
    .with_bearer(ctx.options.bearer_token.clone()))
}

/// Runs the suite over HTTP. `cold` is the run's first request when it was
/// sent before the run chose this suite (see [`era::ColdStart`]).
pub(crate) async fn run(
    url: Url,
    ctx: &RunContext,
    reporter: &mut Reporter,
    settings: &McpSettings,
    cold: Option<era::ColdStart>,
) -> Result<Verdict, EngineError> {
    let (client, cold) = match cold {
        Some(start) => (start.client, Some(start.cold)),
        None => (client_for(&url, ctx, settings)?, None),
    };
    let opening = match era::detect(&client, cold).await {
        Ok(opening) => opening,
        Err(EngineError::Unreachable(err)) if url.scheme() == "https" && is_certificate(&err) => {
            return untrusted_endpoint(&url, &err, reporter).await;
        }
        Err(e) => return Err(e),
    };
    // Over HTTP the rules are judged side by side: the target's load is
    // bounded by the client's request permits, and a rule in flight is
    // mostly waiting on them or on a watch.
    let rules_at_once = settings.max_concurrency.saturating_mul(RULES_PER_PERMIT);
    judge_all(client, url, opening, None, ctx, reporter, rules_at_once).await
}

/// Runs the suite over stdio: one child started with `command` for the whole
/// run, ended when the run is. The rules that judge HTTP are skipped with
/// that reason; the others read the lines the child wrote.
pub(crate) async fn run_stdio(
    command: &str,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    let child = crate::transport::stdio::StdioChild::spawn(command, ctx.http.limits())
        .map_err(EngineError::from_transport)?;
    let client = McpClient::over_stdio(ctx.http.clone(), child, ctx.options.request_timeout());
    let url = client.url().clone();
    let verdict = match era::detect(&client, None).await {
        // One child reads one line at a time, so the rules are judged one
        // after another, in catalogue order: the child sees its requests in
        // the same order on every run.
        Ok(mut opening) => {
            let fresh = initialize_in_fresh_child(command, ctx, &mut opening).await;
            judge_all(client.clone(), url, opening, fresh, ctx, reporter, 1).await
        }
        Err(e) => Err(e),
    };
    client.close().await;
    verdict
}

/// Over stdio, asks `initialize` again of a child of its own when the run's
/// child answered `server/discover` as a 2026-07-28 server and then refused
/// `initialize`; true when it did. Versioning, "Backward Compatibility": an
/// `initialize` selects legacy semantics "scoped to the stdio process", and
/// a dual-era server MAY (not must) serve both eras in one process. A
/// process that `server/discover` opened may rightly refuse `initialize`
/// (the Python SDK does), while a legacy client, which opens its own process
/// with `initialize`, is served: only a fresh child tells the two apart. The
/// child is spawned for this one probe, bounded by the run's timeout and
/// limits, and ended after it. A legacy-only server keeps the run's child's
/// answer: its session is the run's child, which the DEP rules go on using.
async fn initialize_in_fresh_child(
    command: &str,
    ctx: &RunContext,
    opening: &mut era::Opening,
) -> Option<String> {
    if !era::recognised_modern(&opening.discover)
        || era::negotiated_version(&opening.initialize).is_some()
    {
        return None;
    }
    // A new process that leaves `initialize` unanswered within the timeout
    // (a slow start on a loaded machine) is tried once more: the era, and
    // with it the rules written for servers that speak only 2026-07-28, must
    // not rest on an answer protocheck did not wait for.
    let mut reply = None;
    for _ in 0..2 {
        let Ok(child) = crate::transport::stdio::StdioChild::spawn(command, ctx.http.limits())
        else {
            // The run's own child started with the same command moments
            // ago; should this one not start, the run's child's answer
            // stands.
            return None;
        };
        let client = McpClient::over_stdio(ctx.http.clone(), child, ctx.options.request_timeout());
        let answer = client.send(&era::initialize_probe(&client)).await;
        client.close().await;
        let unanswered = answer.message.is_none()
            && matches!(
                answer.transport_error,
                Some(crate::transport::TransportError::Timeout(_))
            );
        reply = Some(answer);
        if !unanswered {
            break;
        }
    }
    let reply = reply?;
    if let Some(legacy_version) = era::negotiated_version(&reply) {
        opening.era = Era::Dual { legacy_version };
    }
    let first = std::mem::replace(&mut opening.initialize, reply);
    Some(first.describe())
}

/// Takes the survey and judges every rule, once the opening probes told the
/// era, at most `rules_at_once` at a time. `initialize_fresh`: see
/// [`Session::initialize_fresh`].
async fn judge_all(
    client: McpClient,
    url: Url,
    opening: era::Opening,
    initialize_fresh: Option<String>,
    ctx: &RunContext,
    reporter: &mut Reporter,
    rules_at_once: usize,
) -> Result<Verdict, EngineError> {
    // Watches read an answer for a while (a whole window, when the server
    // rightly opens a stream and sends nothing on it): they start now, for
    // every rule the opening probes show to apply, and run while the survey
    // and the other rules are, so their windows overlap each other and the
    // rest of the run. A watch whose rule is later skipped (a connection rule
    // failed) is never read.
    let watches = Watches::default();
    for rule in catalogue() {
        if let Some(start) = rule.watches
            && out_of_scope(
                rule,
                &client,
                &opening.era,
                &opening.discover,
                &opening.initialize,
            )
            .is_none()
        {
            start(&watches, &client, &url);
        }
    }
    let clock = std::time::Instant::now();
    let survey = if matches!(opening.era, Era::Legacy { .. }) {
        Survey::default()
    } else {
        // The run-wide SEC rules' provoking requests go with the survey's
        // first (they are HTTP's alone).
        let provoke = (!client.is_stdio()).then_some(sec::provocations as survey::Provoke);
        // Boxed: the survey's requests side by side make a large future.
        Box::pin(Survey::take(
            &client,
            &opening.discover,
            ctx.options.allow_tool_calls,
            provoke,
        ))
        .await
    };
    tracing::debug!(ms = clock.elapsed().as_millis() as u64, "survey taken");
    client.note_read_only_tools(
        survey
            .tools
            .items
            .iter()
            .filter(|tool| survey::read_only(tool))
            .filter_map(|tool| Some(tool.get("name")?.as_str()?.to_owned())),
    );
    let session = Session {
        client,
        options: ctx.options.clone(),
        url,
        era: opening.era,
        cold: opening.cold,
        discover: opening.discover,
        initialize: opening.initialize,
        initialize_fresh,
        survey,
        reads: Default::default(),
        tool_calls: Default::default(),
        legacy: Default::default(),
        registry: Default::default(),
        auth: Default::default(),
        watches,
        sessioned: Default::default(),
        cold_warm: Default::default(),
    };

    let ordered: Vec<&McpRule> = catalogue()
        .iter()
        .filter(|r| r.phase == Phase::Probe)
        .chain(catalogue().iter().filter(|r| r.phase == Phase::RunWide))
        .collect();
    // `server/discover` is judged first, alone: every rule reads it. The
    // connection rules go next, side by side (each carries its probes on
    // dedicated connections of its own), before every other rule (see
    // `goes_first`).
    let mut early = Vec::new();
    if let Some(first) = catalogue::rule(DISCOVER_ID) {
        early.push(judge(first, &session, &Judged::new(), ctx).await);
    }
    // The survey's tool calls (see `Session::tool_calls`): over stdio before
    // any rule (one pipe, one order); over HTTP beside the rules, from when
    // the first rule that does not go first starts. Never beside the
    // connection rules: a call may declare client capabilities (the MRTR
    // retries), and a server keeping such context for all its connections
    // would then answer those rules' probes by how the two happened to
    // interleave on that run.
    if session.client.is_stdio() {
        session.reads().await;
        session.tool_calls().await;
    }
    let (gate, opened) = (tokio::sync::Notify::new(), AtomicBool::new(false));
    // Then every other rule, `rules_at_once` at a time.
    let shared = &session;
    let rules = async {
        let judged = schedule::judge_all(
            &ordered,
            early,
            rules_at_once,
            |rule, judged| {
                if !rule.goes_first() && !opened.swap(true, Ordering::Relaxed) {
                    gate.notify_one();
                }
                async move { judge(rule, shared, &judged, ctx).await }
            },
            reporter,
        )
        .await;
        // Every rule is judged: the calls stop waiting for a gate no rule
        // left (and are not made).
        gate.notify_one();
        judged
    };
    let calls = async {
        gate.notified().await;
        if opened.load(Ordering::Relaxed) {
            under_way(shared.tool_calls()).await;
        }
    };
    // The survey's reads go beside the connection rules (they declare
    // nothing and run nothing).
    let (judged, (), _) = tokio::join!(
        Box::pin(rules),
        Box::pin(calls),
        Box::pin(under_way(shared.reads()))
    );
    judged?;
    let legacy = session.legacy.get().and_then(Option::as_ref);
    era::close(&session.client, legacy, &session.initialize).await;
    Ok(verdict(reporter, &session.era))
}

/// Whether a connection failed because the server's certificate was refused.
fn is_certificate(err: &crate::transport::TransportError) -> bool {
    let text = err.to_string().to_ascii_lowercase();
    text.contains("certificate") || text.contains("unknownissuer")
}

/// The verdict on an https endpoint whose certificate the client refused:
/// the rule that judges TLS (MCP-SEC-002) fails, and every other rule is skipped, for nothing can be
/// verified over a connection that is not trusted (§15.4, no cascades).
async fn untrusted_endpoint(
    url: &Url,
    err: &crate::transport::TransportError,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    let tls_id = catalogue()
        .iter()
        .find(|r| r.judges_tls)
        .map_or("the TLS rule", |r| r.rule.id);
    let host = url.host_str().unwrap_or("?");
    for rule in catalogue() {
        let finding = if rule.judges_tls {
            Finding {
                rule_id: rule.rule.id.to_owned(),
                outcome: rule.rule.on_failure,
                message: clip(
                    &format!(
                        "the TLS handshake with {host} failed: {err}; the certificate chain MUST \
                         reach a trusted root, name this host and be within its validity period"
                    ),
                    MAX_MESSAGE_CHARS,
                ),
                evidence: vec![Exchange {
                    request: crate::suite::RequestRecord {
                        line: format!("POST {url}"),
                        headers: Vec::new(),
                        body: String::new(),
                    },
                    response: None,
                    error: Some(err.to_string()),
                }],
                duration_ms: 0,
            }
        } else {
            Finding {
                rule_id: rule.rule.id.to_owned(),
                outcome: Outcome::Skip,
                message: format!(
                    "not verified: {tls_id} failed (no trusted TLS connection to {host})"
                ),
                evidence: Vec::new(),
                duration_ms: 0,
            }
        };
        reporter.emit(finding).await?;
    }
    Ok(verdict(reporter, &Era::Modern))
}

/// The grade of `mcp-2026-07-28.md` §15.2 (see [`grade::grade`]: no grade
/// without the core rules judged).
fn verdict(reporter: &Reporter, era: &Era) -> Verdict {
    let graded = grade::grade(reporter.findings());
    let summary = match era {
        Era::Legacy { .. } => {
            format!("{}; the {SPEC_REVISION} rules do not apply", era.describe())
        }
        _ => graded.summary,
    };
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
