//! Era routing: `suite: auto` and `suite: mcp` send a server to the suite of
//! the newest MCP revision it speaks (or the one the run asks for), over
//! Streamable HTTP and stdio, and tell MCP from RCP on a child process.

use crate::common::suite::{dump, loopback, run};
use protocheck::reference::mcp::{McpReferenceConfig, ReferenceEra, serve_mcp_reference};
use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, serve_mcp25_reference};
use protocheck::suite::runner::Endpoint;
use protocheck::suite::{McpRevision, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail};
use std::collections::BTreeSet;
use url::Url;

async fn mcp2025_at() -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, Mcp25ReferenceConfig::new()).await;
    });
    Url::parse(&format!("http://{addr}/mcp")).expect("url")
}

async fn mcp2026_at(era: ReferenceEra) -> Url {
    let config = McpReferenceConfig::new(BTreeSet::new())
        .expect("no faults")
        .with_era(era);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    Url::parse(&format!("http://{addr}/mcp")).expect("url")
}

fn reference_stdio(args: &str) -> Endpoint {
    Endpoint::Stdio(format!(
        "{} reference {args} --stdio",
        env!("CARGO_BIN_EXE_protocheck")
    ))
}

/// The suite and revision that judged a run, and its grade or level.
async fn judged(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    revision: Option<McpRevision>,
) -> (SuiteId, String, String) {
    let ctx = loopback(RunOptions {
        mcp_revision: revision,
        ..RunOptions::default()
    });
    let (verdict, findings) = run(choice, endpoint, &ctx).await;
    let verdict: Verdict =
        verdict.unwrap_or_else(|e| panic!("{endpoint}: no verdict: {e}\n{}", dump(&findings)));
    let outcome = match &verdict.detail {
        VerdictDetail::Mcp { grade } => grade.clone(),
        VerdictDetail::Rcp {
            certified_level, ..
        } => certified_level.clone(),
    };
    (verdict.suite, verdict.spec_revision, outcome)
}

#[tokio::test]
async fn a_2025_11_25_server_is_judged_on_2025_11_25_by_auto_and_by_mcp() {
    let endpoint = Endpoint::Http(mcp2025_at().await);
    for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
        let (suite, revision, grade) = judged(choice, &endpoint, None).await;
        assert_eq!(suite, SuiteId::Mcp, "{choice:?}");
        assert_eq!(revision, "2025-11-25", "{choice:?}");
        assert_eq!(grade, "strict", "{choice:?}");
    }
}

#[tokio::test]
async fn a_2026_07_28_or_dual_era_server_is_judged_on_its_newest_revision() {
    for era in [ReferenceEra::Modern, ReferenceEra::DualEra] {
        let endpoint = Endpoint::Http(mcp2026_at(era).await);
        for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
            let (suite, revision, _) = judged(choice, &endpoint, None).await;
            assert_eq!(suite, SuiteId::Mcp, "{era:?} {choice:?}");
            assert_eq!(revision, "2026-07-28", "{era:?} {choice:?}");
        }
    }
}

#[tokio::test]
async fn a_dual_era_server_can_be_judged_on_the_older_revision_when_asked() {
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::DualEra).await);
    let (_, revision, _) =
        judged(SuiteChoice::Mcp, &endpoint, Some(McpRevision::V2025_11_25)).await;
    assert_eq!(revision, "2025-11-25");
}

#[tokio::test]
async fn a_legacy_only_server_is_no_longer_judged_on_rules_that_do_not_apply() {
    // The 2026-07-28 reference playing a 2025-11-25-only server: `mcp` used to
    // answer it with "the 2026-07-28 rules do not apply"; now the 2025-11-25
    // suite judges it.
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::LegacyOnly).await);
    let (suite, revision, _) = judged(SuiteChoice::Mcp, &endpoint, None).await;
    assert_eq!(suite, SuiteId::Mcp);
    assert_eq!(revision, "2025-11-25");
}

#[tokio::test]
async fn over_stdio_auto_tells_mcp_from_rcp() {
    let mcp = reference_stdio("mcp --revision 2025-11-25");
    let (suite, revision, grade) = judged(SuiteChoice::Auto, &mcp, None).await;
    assert_eq!(
        (suite, revision.as_str(), grade.as_str()),
        (SuiteId::Mcp, "2025-11-25", "strict")
    );
    let rcp = reference_stdio("rcp");
    let (suite, _, _) = judged(SuiteChoice::Auto, &rcp, None).await;
    assert_eq!(suite, SuiteId::Rcp);
}

#[tokio::test]
async fn over_stdio_a_2025_11_25_server_asked_for_2026_07_28_is_told_why_those_rules_do_not_apply()
{
    let endpoint = reference_stdio("mcp --revision 2025-11-25");
    let ctx = loopback(RunOptions {
        mcp_revision: Some(McpRevision::V2026_07_28),
        ..RunOptions::default()
    });
    let (verdict, findings) = run(SuiteChoice::Mcp, &endpoint, &ctx).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
    assert_eq!(
        (verdict.suite, verdict.spec_revision.as_str()),
        (SuiteId::Mcp, "2026-07-28")
    );
    assert!(
        verdict.summary.contains("2025-11-25"),
        "{}",
        verdict.summary
    );
}

#[test]
fn revisions_read_and_write_as_their_names() {
    for (name, revision) in [
        ("newest", McpRevision::Newest),
        ("2026-07-28", McpRevision::V2026_07_28),
        ("2025-11-25", McpRevision::V2025_11_25),
    ] {
        assert_eq!(McpRevision::parse(name), Some(revision));
        assert_eq!(
            serde_json::to_value(revision).expect("serialise"),
            serde_json::json!(name)
        );
    }
    assert_eq!(McpRevision::parse("2024-11-05"), None);
    let refused =
        serde_json::from_value::<RunOptions>(serde_json::json!({"mcp_revision": "latest"}));
    assert!(refused.is_err());
}
