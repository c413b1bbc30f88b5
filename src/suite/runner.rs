//! The runner: resolves the suite, applies the whole-run deadline, and streams
//! findings to whoever drives the run through a channel.

use super::detect::Route;
use super::{Finding, McpRevision, SuiteChoice, SuiteId, Verdict, detect, mcp, rcp};
use tokio::sync::mpsc;

// The suites and the detection name the context types by `context`, below
// them (tests/it/architecture.rs keeps `suite`'s modules free of cycles);
// this re-export keeps the runner's callers' one path to what it takes.
pub use super::context::{
    Endpoint, EngineError, HandshakeHistory, Reporter, RunContext, Stopwatch,
};

/// Runs `choice` against `endpoint`, sending each finding to `findings` as it is
/// produced, and returns the verdict. An MCP run with `mcp_revision: all`
/// runs the suite of each revision the target speaks, one after the other
/// within the one deadline, and returns their combined verdict.
pub async fn run_suite(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    ctx: &RunContext,
    findings: mpsc::Sender<Finding>,
) -> Result<Verdict, EngineError> {
    let deadline = ctx.deadline;
    // Every request of the run, whichever suite sends it, waits out the
    // target's rate limit within this deadline (transport::throttle).
    let ctx = &RunContext {
        http: ctx.http.for_run(std::time::Instant::now() + deadline),
        ..ctx.clone()
    };
    let every_revision = ctx.options.mcp_revision == Some(McpRevision::All);
    let work = async {
        // MCP-STL-003 judges the run's first request: when the run may judge
        // the server on 2026-07-28 and asks it first which revision it speaks,
        // that request is sent, and answered, before the question is.
        let mut cold = match endpoint {
            Endpoint::Http(url) if sends_cold_first(choice, ctx.options.mcp_revision) => {
                Some(mcp::cold_start(url, ctx).await?)
            }
            _ => None,
        };
        let route = match choice {
            SuiteChoice::Mcp if every_revision => None,
            SuiteChoice::Mcp => Some(detect::mcp_route(endpoint, ctx).await?),
            SuiteChoice::Rcp => Some(Route::Rcp),
            SuiteChoice::Auto => Some(detect::detect(endpoint, ctx).await?),
        };
        match route {
            Some(route) if !(every_revision && route.suite() == SuiteId::Mcp) => {
                run_route(route, endpoint, ctx, &findings, cold.take()).await
            }
            _ => run_every_revision(endpoint, ctx, &findings, cold.take()).await,
        }
    };
    // The deadline moves later by the time the run waited on the target's
    // rate limit (transport::throttle::WAIT_ALLOWANCE at most): that time is
    // the target's, and a busy machine must not turn it into another verdict.
    let throttle = ctx.http.throttle().clone();
    let fallback = std::time::Instant::now() + deadline;
    tokio::pin!(work);
    loop {
        let until = throttle.deadline().unwrap_or(fallback);
        tokio::select! {
            verdict = &mut work => return verdict,
            () = tokio::time::sleep_until(until.into()) => {
                if throttle.deadline().unwrap_or(fallback) <= std::time::Instant::now() {
                    return Err(EngineError::Deadline(deadline));
                }
            }
        }
    }
}

/// Whether a run of `choice` asks the server which MCP revision it speaks
/// and may then judge it on 2026-07-28: its first request is then the
/// 2026-07-28 suite's cold probe, sent before the question.
fn sends_cold_first(choice: SuiteChoice, revision: Option<McpRevision>) -> bool {
    let revision = revision.unwrap_or_default();
    match choice {
        SuiteChoice::Mcp => matches!(revision, McpRevision::Newest | McpRevision::All),
        SuiteChoice::Auto => revision != McpRevision::V2025_11_25,
        SuiteChoice::Rcp => false,
    }
}

/// Runs the one suite `route` names; a 2026-07-28 run goes on from `cold`,
/// its first request, when that was sent already.
async fn run_route(
    route: Route,
    endpoint: &Endpoint,
    ctx: &RunContext,
    findings: &mpsc::Sender<Finding>,
    cold: Option<mcp::ColdStart>,
) -> Result<Verdict, EngineError> {
    // Each suite grades its own findings: a reporter of its own.
    let mut reporter = Reporter::new(findings.clone());
    // Each engine's future is boxed: an engine keeps many requests in
    // flight at once, its state is large, and whoever awaits a run (a test
    // on its thread's stack, a worker) should not carry it inline.
    match (route, endpoint, cold) {
        (Route::Rcp, ..) => Box::pin(rcp::run(endpoint, ctx, &mut reporter)).await,
        (Route::Mcp2026, Endpoint::Http(url), Some(cold)) => {
            Box::pin(mcp::run_after(url, ctx, &mut reporter, cold)).await
        }
        (Route::Mcp2026, ..) => Box::pin(mcp::run(endpoint, ctx, &mut reporter)).await,
        (Route::Mcp2025, ..) => Box::pin(super::mcp2025::run(endpoint, ctx, &mut reporter)).await,
    }
}

/// Judges `endpoint` on every MCP revision it speaks. A target that speaks
/// none is judged as `newest` judges it, with that suite's verdict alone.
async fn run_every_revision(
    endpoint: &Endpoint,
    ctx: &RunContext,
    findings: &mpsc::Sender<Finding>,
    mut cold: Option<mcp::ColdStart>,
) -> Result<Verdict, EngineError> {
    let plan = detect::mcp_routes(endpoint, ctx).await?;
    let mut parts = Vec::with_capacity(plan.routes.len());
    for route in &plan.routes {
        let first = if *route == Route::Mcp2026 {
            cold.take()
        } else {
            None
        };
        parts.push(run_route(*route, endpoint, ctx, findings, first).await?);
    }
    if parts.len() == 1
        && plan.not_judged.is_empty()
        && let Some(only) = parts.pop()
    {
        return Ok(only);
    }
    Verdict::of_revisions(parts, plan.not_judged).ok_or_else(|| {
        EngineError::Unsupported("no MCP suite can judge this target over its transport".into())
    })
}
