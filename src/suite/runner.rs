//! The runner: resolves the suite, applies the whole-run deadline, and streams
//! findings to whoever drives the run through a channel.

use super::{Finding, SuiteChoice, SuiteId, Verdict, detect, rcp};
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
        let suite = match choice {
            SuiteChoice::Mcp => SuiteId::Mcp,
            SuiteChoice::Rcp => SuiteId::Rcp,
            SuiteChoice::Auto => detect::detect(endpoint, ctx).await?,
        };
        let mut reporter = Reporter::new(findings);
        match suite {
            SuiteId::Rcp => rcp::run(endpoint, ctx, &mut reporter).await,
            SuiteId::Mcp => super::mcp::run(endpoint, ctx, &mut reporter).await,
        }
    };
    tokio::time::timeout(deadline, work)
        .await
        .map_err(|_| EngineError::Deadline(deadline))?
}
