//! RCP/1 suite (placeholder until the L0 checks land).

use super::Verdict;
use super::runner::{Endpoint, EngineError, Reporter, RunContext};

/// Version of protocheck's RCP rules.
pub const SUITE_VERSION: &str = "0.1.0";

pub async fn run(
    _endpoint: &Endpoint,
    _ctx: &RunContext,
    _reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    Err(EngineError::Unsupported(
        "RCP suite under construction".into(),
    ))
}
