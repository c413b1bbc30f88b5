//! The runner: resolves the suite, applies the whole-run deadline, and streams
//! findings to whoever drives the run through a channel.

use super::detect::Route;
use super::{Finding, SuiteChoice, Verdict, detect, rcp};
use tokio::sync::mpsc;

// The suites, the detection and the tests reach the context types through
// this path as well; it stays a stable name for them.
pub use super::context::{
    Endpoint, EngineError, HandshakeHistory, Reporter, RunContext, Stopwatch,
};

/// Runs `choice` against `endpoint`, sending each finding to `findings` as it is
/// produced, and returns the verdict.
pub async fn run_suite(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    ctx: &RunContext,
    findings: mpsc::Sender<Finding>,
) -> Result<Verdict, EngineError> {
    let deadline = ctx.deadline;
    let work = async {
        let route = match choice {
            SuiteChoice::Mcp => detect::mcp_route(endpoint, ctx).await?,
            SuiteChoice::Rcp => Route::Rcp,
            SuiteChoice::Auto => detect::detect(endpoint, ctx).await?,
        };
        let mut reporter = Reporter::new(findings);
        match route {
            Route::Rcp => rcp::run(endpoint, ctx, &mut reporter).await,
            Route::Mcp2026 => super::mcp::run(endpoint, ctx, &mut reporter).await,
            Route::Mcp2025 => super::mcp2025::run(endpoint, ctx, &mut reporter).await,
        }
    };
    tokio::time::timeout(deadline, work)
        .await
        .map_err(|_| EngineError::Deadline(deadline))?
}
