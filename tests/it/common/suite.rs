//! Suites run in-process, as the engine tests run them: findings collected as
//! they stream, the RCP reference server on loopback.
#![allow(dead_code)]

use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::suite::runner::run_suite;
use protocheck::suite::runner::{Endpoint, EngineError, RunContext};
use protocheck::suite::{Finding, RunOptions, SuiteChoice, Verdict};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use url::Url;

/// The RCP reference server with `config` on a free loopback port; its RCP base URL.
pub async fn rcp_at(config: RcpReferenceConfig) -> Url {
    router_at(rcp_router(config)).await
}

/// `router` (serving an RCP server under `/rcp`) on a free loopback port; its RCP base URL.
pub async fn router_at(router: axum::Router) -> Url {
    Url::parse(&format!("{}/rcp", super::app::serve(router).await)).expect("url")
}

/// A run context for loopback targets (hence `AllowPrivate`).
pub fn loopback(options: RunOptions) -> RunContext {
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    RunContext::new(http, options)
}

/// Runs `choice` against `endpoint`; the verdict and every finding streamed.
pub async fn run(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    ctx: &RunContext,
) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(async move {
        let mut findings = Vec::new();
        while let Some(f) = rx.recv().await {
            findings.push(f);
        }
        findings
    });
    let verdict = run_suite(choice, endpoint, ctx, tx).await;
    (verdict, collector.await.expect("collector"))
}

/// Findings one a line, for assertion messages.
pub fn dump(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("{} {:?}: {}", f.rule_id, f.outcome, f.message))
        .collect::<Vec<_>>()
        .join("\n")
}
