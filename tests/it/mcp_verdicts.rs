//! False verdicts the MCP suite once gave, each pinned by a reference server
//! that behaves as the specification allows (or, for false passes, with a
//! fault the old probes could not see). Loopback only.

use protocheck::reference::mcp::{
    Allowed, HeaderFault, McpReferenceConfig, ReferenceEra, serve_mcp_reference,
};
use protocheck::suite::context::{Endpoint, RunContext};
use protocheck::suite::mcp::{self, McpSettings};
use protocheck::suite::runner::Reporter;
use protocheck::suite::{Finding, Outcome, RunOptions, Verdict, VerdictDetail};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use std::collections::BTreeMap;
use std::time::Duration;
use url::Url;

struct Run {
    verdict: Verdict,
    findings: Vec<Finding>,
}

impl Run {
    fn finding(&self, id: &str) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.rule_id == id)
            .unwrap_or_else(|| panic!("no finding for {id}"))
    }

    fn outcome(&self, id: &str) -> Outcome {
        self.finding(id).outcome
    }

    fn grade(&self) -> &str {
        match &self.verdict.detail {
            VerdictDetail::Mcp { grade, .. } => grade,
            other => panic!("not an MCP verdict: {other:?}"),
        }
    }

    fn table(&self) -> String {
        self.findings
            .iter()
            .map(|f| format!("{} {:?}: {}", f.rule_id, f.outcome, f.message))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Outcome per rule: what must not change between runs.
    fn outcomes(&self) -> BTreeMap<String, Outcome> {
        self.findings
            .iter()
            .map(|f| (f.rule_id.clone(), f.outcome))
            .collect()
    }
}

fn config(faults: &[&str]) -> McpReferenceConfig {
    McpReferenceConfig::new(faults.iter().map(|f| (*f).to_owned()).collect()).expect("known faults")
}

/// Runs the suite against a reference server with `config` on 127.0.0.1.
async fn run(config: McpReferenceConfig) -> Run {
    run_within(config, Duration::from_secs(60)).await
}

/// [`run`], for a run that may take up to `limit`.
async fn run_within(config: McpReferenceConfig, limit: Duration) -> Run {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    let server = tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    let url: Url = format!("http://{addr}/mcp").parse().expect("url");
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let ctx = RunContext::new(http, RunOptions::default());
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let mut reporter = Reporter::new(tx);
    let verdict = tokio::time::timeout(
        limit,
        mcp::run_with(
            &Endpoint::Http(url),
            &ctx,
            &mut reporter,
            &McpSettings::default(),
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("run finishes within {limit:?}"))
    .expect("run gives a verdict");
    let findings = reporter.findings().to_vec();
    drop(reporter);
    let _ = drain.await;
    server.abort();
    Run { verdict, findings }
}

#[tokio::test]
async fn a_dual_era_server_may_read_a_missing_version_header_as_2025_03_26() {
    // What the official Python SDK does: `server/discover` without the header
    // is answered as a 2025-03-26 request, 200 with -32601.
    let run = run(config(&[])
        .with_era(ReferenceEra::DualEra)
        .allowing(Allowed::MissingVersionIsLegacy))
    .await;
    let f = run.finding("MCP-HDR-004");
    assert_eq!(f.outcome, Outcome::Skip, "{}", f.message);
    assert!(f.message.contains("dual-era"), "{}", f.message);
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn a_403_to_a_bad_origin_may_have_any_body() {
    let run = run(config(&[]).allowing(Allowed::PlainForbidden)).await;
    assert_eq!(run.outcome("MCP-SEC-001"), Outcome::Pass, "{}", run.table());
    let f = run.finding("MCP-RES-005");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn an_origin_check_by_prefix_is_caught_by_a_look_alike() {
    // A server that lets in any Origin starting with `http://localhost` still
    // refuses the plainly foreign one; only a look-alike shows the bug.
    let prefix = run(config(&[]).with_origin_prefix_match()).await;
    let f = prefix.finding("MCP-SEC-001");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message
            .contains("with Origin http://localhost.protocheck.invalid got HTTP 200"),
        "the look-alike sent and what came back are named: {}",
        f.message
    );
    assert!(f.message.contains("prefix match"), "{}", f.message);
    assert_eq!(prefix.grade(), "non-compliant", "{}", prefix.table());
    // The correct reference refuses every look-alike, and says which it sent.
    let clean = run(config(&[])).await;
    let f = clean.finding("MCP-SEC-001");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    for lookalike in [
        "null",
        "http://localhost.protocheck.invalid",
        "http://127.0.0.1.protocheck.invalid",
        "http://attacker-localhost",
    ] {
        assert!(f.message.contains(lookalike), "{lookalike}: {}", f.message);
    }
}

#[tokio::test]
async fn unsupported_version_may_name_legacy_versions() {
    let run = run(config(&[]).allowing(Allowed::LegacyInSupported)).await;
    let f = run.finding("MCP-ERR-001");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    // The reading the server chose is named.
    assert!(f.message.contains("2025-11-25"), "{}", f.message);
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn a_ttl_with_a_zero_fraction_is_an_integer() {
    let run = run(config(&[]).allowing(Allowed::IntegralFloatTtl)).await;
    let f = run.finding("MCP-CAC-004");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn header_names_are_probed_as_the_spec_spells_them() {
    // A server that finds `mcp-method` only in lower case refuses `Mcp-Method:`
    // as the spec spells it; lower-case-only probes never see it.
    let run = run(config(&[]).case_sensitive_names()).await;
    let f = run.finding("MCP-HDR-006");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message.contains("as the spec writes them"),
        "{}",
        f.message
    );
    assert!(
        f.evidence[0]
            .request
            .headers
            .iter()
            .any(|(n, _)| n == "Mcp-Method"),
        "the evidence shows the spelling sent: {:?}",
        f.evidence[0].request.headers
    );
}

#[tokio::test]
async fn mcp_method_is_required_on_every_method_family() {
    // `--break MCP-HDR-001` requires Mcp-Method on server/discover only.
    let run = run(config(&["MCP-HDR-001"])).await;
    let f = run.finding("MCP-HDR-001");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(!f.message.contains("`server/discover`"), "{}", f.message);
}

#[tokio::test]
async fn a_server_refusing_cold_requests_is_not_failed_twice() {
    let run = run(config(&["MCP-STL-003"])).await;
    assert_eq!(run.outcome("MCP-STL-003"), Outcome::Fail, "{}", run.table());
    for id in ["MCP-HDR-008", "MCP-HDR-009", "MCP-STL-008"] {
        let f = run.finding(id);
        assert_eq!(f.outcome, Outcome::Skip, "{id}: {}", f.message);
        assert_eq!(f.message, "not verified: MCP-STL-003 failed", "{id}");
    }
    // Every rule whose probes travel over pooled connections is unverified:
    // its answer would depend on whether the connection had seen a discover.
    for id in ["MCP-ERR-002", "MCP-ERR-003", "MCP-HDR-001", "MCP-RES-001"] {
        let f = run.finding(id);
        assert_eq!(f.outcome, Outcome::Skip, "{id}: {}", f.message);
        assert!(
            f.message.starts_with("not verified: MCP-STL-003 failed"),
            "{id}: {}",
            f.message
        );
    }
    // Those judged from `server/discover` alone, or on dedicated connections,
    // still are.
    for id in ["MCP-DSC-001", "MCP-DSC-002", "MCP-STL-004"] {
        assert_ne!(run.outcome(id), Outcome::Skip, "{id}: {}", run.table());
    }
}

#[tokio::test]
async fn modern_only_rules_are_skipped_for_dual_era_servers() {
    let run = run(config(&[]).with_era(ReferenceEra::DualEra)).await;
    for r in mcp::catalogue() {
        let f = run.finding(r.rule.id);
        if r.is_modern_only() {
            assert_eq!(f.outcome, Outcome::Skip, "{}: {}", r.rule.id, f.message);
            assert!(
                f.message.starts_with("not applicable: dual-era"),
                "{}: {}",
                r.rule.id,
                f.message
            );
        } else {
            assert!(
                !f.message.starts_with("not applicable"),
                "{}: {}",
                r.rule.id,
                f.message
            );
        }
    }
    let modern_only: Vec<&str> = mcp::catalogue()
        .iter()
        .filter(|r| r.is_modern_only())
        .map(|r| r.rule.id)
        .collect();
    for id in ["MCP-STL-005", "MCP-STL-006", "MCP-STL-007"] {
        assert!(modern_only.contains(&id), "{id} is modern-only");
    }
    // HDR-004 binds a dual-era server too, unless it answers a request
    // without the header in legacy terms: this one refuses it with -32020.
    assert!(!modern_only.contains(&"MCP-HDR-004"));
    assert_eq!(
        run.outcome("MCP-HDR-004"),
        Outcome::Pass,
        "{}",
        run.finding("MCP-HDR-004").message
    );
}

#[tokio::test]
async fn a_dual_era_server_that_serves_a_request_without_the_version_header_as_2026_07_28_fails() {
    // The MAY lets a server with pre-2025-06-18 clients read the request as
    // 2025-03-26; one without them MUST refuse it (400, -32020). Answering it
    // with a DiscoverResult is neither (the official TypeScript SDK v2 refuses
    // exactly this request).
    let run = run(config(&["MCP-HDR-004"]).with_era(ReferenceEra::DualEra)).await;
    let f = run.finding("MCP-HDR-004");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message.contains("was served as a 2026-07-28 request"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("`server/discover` without `MCP-Protocol-Version` was served")
            && f.message.contains("with a result"),
        "{}",
        f.message
    );
    assert_eq!(run.grade(), "non-compliant", "{}", run.table());
}

#[tokio::test]
async fn same_connection_rules_give_the_same_verdict_every_run() {
    for fault in ["MCP-STL-004", "MCP-STL-008"] {
        for _ in 0..6 {
            let run = run(config(&[fault])).await;
            let f = run.finding(fault);
            assert_eq!(f.outcome, Outcome::Fail, "{fault}: {}", f.message);
            assert!(f.message.contains("connection"), "{}", f.message);
        }
    }
}

#[tokio::test]
async fn the_same_server_gets_the_same_verdict_every_run() {
    for faults in [
        &[][..],
        &["MCP-STL-004", "MCP-HDR-006"][..],
        &["MCP-RES-005"][..],
    ] {
        let first = run(config(faults)).await;
        for _ in 0..2 {
            let again = run(config(faults)).await;
            assert_eq!(
                first.outcomes(),
                again.outcomes(),
                "{faults:?}:\n{}\n---\n{}",
                first.table(),
                again.table()
            );
        }
    }
}

#[tokio::test]
async fn every_non_pass_finding_cites_its_spec_sentence() {
    // A server whose answers depend on its connection's history (STL-004)
    // leaves the pooled rules unverified, so its fault runs on its own.
    let fault_sets: [&[&str]; 2] = [
        &[
            "MCP-HDR-001",
            "MCP-HDR-006",
            "MCP-STL-007",
            "MCP-RES-005",
            "MCP-ERR-001",
            "MCP-CAC-004",
            "MCP-SEC-001",
            "MCP-DEP-001",
        ],
        &["MCP-STL-004"],
    ];
    for faults in fault_sets {
        let run = run(config(faults)).await;
        let mut non_pass = 0;
        for f in &run.findings {
            if matches!(f.outcome, Outcome::Pass | Outcome::Skip) {
                continue;
            }
            non_pass += 1;
            let rule = mcp::rule(&f.rule_id).expect("rule");
            assert!(
                f.message.contains(&format!("[Spec, {} ", f.rule_id))
                    && f.message.contains(rule.sentence)
                    && f.message.contains(rule.rule.spec_ref),
                "{} does not cite its sentence: {}",
                f.rule_id,
                f.message
            );
        }
        assert!(non_pass >= faults.len(), "{}", run.table());
    }
}

#[tokio::test]
async fn header_probes_use_a_real_read_only_tool() {
    // A server may look the tool up before it reads Mcp-Name; a probe naming
    // a real read-only tool reaches the header check either way.
    let run = run(config(&[]).allowing(Allowed::ToolLookupFirst)).await;
    for id in ["MCP-HDR-002", "MCP-HDR-003", "MCP-HDR-007", "MCP-HDR-010"] {
        let f = run.finding(id);
        assert_eq!(f.outcome, Outcome::Pass, "{id}: {}", f.message);
        // Every method that carries Mcp-Name, each with a listed name.
        for method in [
            "`tools/call` of the listed tool",
            "`resources/read` of the listed resource",
            "`prompts/get` of the listed prompt",
        ] {
            assert!(f.message.contains(method), "{id}: {}", f.message);
        }
    }
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn unknown_and_removed_methods_are_each_answered_404() {
    // streamable-http: "If the server does not implement the requested RPC
    // method, it MUST respond with 404 Not Found and ... -32601"; 2026-07-28
    // removed these, so each is probed as a 2026-07-28 request.
    let run = run(config(&[])).await;
    let f = run.finding("MCP-ERR-002");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    for method in [
        "`initialize`",
        "`ping`",
        "`logging/setLevel`",
        "`resources/subscribe`",
        "`resources/unsubscribe`",
    ] {
        assert!(f.message.contains(method), "{}", f.message);
    }
    // A server that still answers `ping` is judged by MCP-DEP-001, not here.
    let run = self::run(config(&["MCP-DEP-001"])).await;
    let f = run.finding("MCP-ERR-002");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(
        f.message
            .contains("not judged here: `ping` answered with a result"),
        "{}",
        f.message
    );
    assert_eq!(run.outcome("MCP-DEP-001"), Outcome::Warn);
}

/// The rules that watch an answer for a while (a GET or DELETE read until its
/// first event or the end of a window), and whose faults send what they watch
/// for: the legacy `endpoint` event beside the endpoint (DEP-004), an event
/// stream on GET (STL-005), a 200 to DELETE (STL-006).
const WATCHING: [&str; 3] = ["MCP-STL-005", "MCP-STL-006", "MCP-DEP-004"];

#[tokio::test]
async fn a_slow_server_gets_the_verdicts_of_a_fast_one() {
    // Every answer 600 ms late, and each fault's first event 600 ms after its
    // headers: later than the shortest watch window, so a window that did
    // not grow with the server's round-trip times would miss the `endpoint`
    // event and pass MCP-DEP-004 on a server that serves the legacy transport.
    // Tools only: fewer requests, so a shorter test, and the same watches.
    let slow = Duration::from_millis(600);
    let limit = Duration::from_secs(300);
    let (correct, broken, correct_fast, broken_fast) = tokio::join!(
        run_within(config(&[]).tools_only().with_latency(slow), limit),
        run_within(config(&WATCHING).tools_only().with_latency(slow), limit),
        run(config(&[]).tools_only()),
        run(config(&WATCHING).tools_only()),
    );
    for id in WATCHING {
        let f = correct.finding(id);
        assert_eq!(f.outcome, Outcome::Pass, "{id}: {}", f.message);
        let f = broken.finding(id);
        assert_eq!(f.outcome, Outcome::Warn, "{id}: {}", f.message);
    }
    assert!(
        broken.finding("MCP-DEP-004").message.contains("`endpoint`"),
        "{}",
        broken.table()
    );
    assert_eq!(
        correct.outcomes(),
        correct_fast.outcomes(),
        "\n{}\n---\n{}",
        correct.table(),
        correct_fast.table()
    );
    assert_eq!(
        broken.outcomes(),
        broken_fast.outcomes(),
        "\n{}\n---\n{}",
        broken.table(),
        broken_fast.table()
    );
}

#[tokio::test]
async fn header_names_are_probed_in_mixed_case() {
    // A server that finds a header in three spellings only (lower-case, as
    // the spec writes it, upper-case) misses `mCp-MeThOd`.
    let run = run(config(&[]).with_header_fault(HeaderFault::ThreeSpellings)).await;
    let f = run.finding("MCP-HDR-006");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(f.message.contains("in mixed case"), "{}", f.message);
}

#[tokio::test]
async fn header_value_case_is_probed_on_every_named_method() {
    // `Mcp-Name` compared without case on `prompts/get` only: the third
    // named method.
    let run = run(config(&[]).with_header_fault(HeaderFault::PromptNameWithoutCase)).await;
    let f = run.finding("MCP-HDR-006");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message.contains("`prompts/get` of the listed prompt")
            && f.message.contains("in another letter case")
            && f.message.contains("expected 400 with -32020"),
        "{}",
        f.message
    );
    // `Mcp-Param-*` values in another case.
    let run = run_annotated(HeaderFault::ParamValueWithoutCase).await;
    let f = run.finding("MCP-HDR-006");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(f.message.contains("Mcp-Param-"), "{}", f.message);
}

async fn run_annotated(fault: HeaderFault) -> Run {
    run(config(&[]).with_annotated_tools().with_header_fault(fault)).await
}

#[tokio::test]
async fn an_absent_argument_needs_no_header() {
    let run = run(config(&[]).with_header_fault(HeaderFault::ExpectsAbsentParams)).await;
    let f = run.finding("MCP-HDR-008");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message.contains("MUST NOT expect it") && f.message.contains("its message names"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn an_integer_header_compared_as_text_is_a_warning() {
    let run = run_annotated(HeaderFault::IntegerParamsAsText).await;
    let f = run.finding("MCP-HDR-008");
    assert_eq!(f.outcome, Outcome::Warn, "{}", f.message);
    assert!(
        f.message.contains("`Mcp-Param-Limit: 7.0`"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn every_annotation_of_every_callable_tool_is_probed() {
    let run = run(config(&[]).with_annotated_tools()).await;
    for id in ["MCP-HDR-006", "MCP-HDR-007", "MCP-HDR-008", "MCP-HDR-009"] {
        let f = run.finding(id);
        assert_eq!(f.outcome, Outcome::Pass, "{id}: {}", f.message);
    }
    let f = run.finding("MCP-HDR-008");
    for header in [
        "Mcp-Param-Region",
        "Mcp-Param-Zone",
        "Mcp-Param-Limit",
        "Mcp-Param-Exact",
    ] {
        assert!(f.message.contains(header), "{header}: {}", f.message);
    }
    assert!(f.message.contains("taken as equal"), "{}", f.message);
    let f = run.finding("MCP-HDR-009");
    assert!(
        f.message
            .contains("`lookup_zone` `Mcp-Param-Exact` (boolean)")
            && f.message.contains("each of the 29 control characters"),
        "{}",
        f.message
    );
    let f = run.finding("MCP-HDR-006");
    assert!(
        f.message.contains("in mixed case")
            && f.message.contains("`Mcp-Param-Exact: TRUE`")
            && f.message.contains("`prompts/get` of the listed prompt"),
        "{}",
        f.message
    );
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn a_listen_gated_on_a_discover_on_the_connection_is_caught_cold() {
    // The run's first request is `tools/list`, and the pooled listens go on
    // connections that carried a discover: only a listen sent first on a new
    // connection meets the gate.
    let (gated, clean) = tokio::join!(
        run(config(&[]).gating_listen_on_discover()),
        run(config(&[]))
    );
    let f = gated.finding("MCP-STL-003");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(
        f.message.contains("`subscriptions/listen`"),
        "{}",
        f.message
    );
    assert!(f.message.contains("no acknowledgement"), "{}", f.message);
    let f = gated.finding("MCP-STL-004");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    for id in ["MCP-STL-003", "MCP-STL-004"] {
        let f = clean.finding(id);
        assert_eq!(f.outcome, Outcome::Pass, "{id}: {}", f.message);
        assert!(
            f.message.contains("`subscriptions/listen`"),
            "{id}: {}",
            f.message
        );
    }
}

#[tokio::test]
async fn a_version_kept_per_connection_is_caught_after_a_warm_up() {
    // The server lists one tool fewer on a connection that carried another
    // protocol version: the warm-up with a discover and a list alone never
    // shows it.
    let (kept, clean) = tokio::join!(
        run(config(&[]).keeping_version_per_connection()),
        run(config(&[]))
    );
    let f = kept.finding("MCP-STL-004");
    assert_eq!(f.outcome, Outcome::Fail, "{}", f.message);
    assert!(f.message.contains("version 2025-11-25"), "{}", f.message);
    assert!(f.message.contains("`initialize`"), "{}", f.message);
    assert_eq!(
        kept.outcome("MCP-STL-003"),
        Outcome::Pass,
        "{}",
        kept.table()
    );
    let f = clean.finding("MCP-STL-004");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(
        f.message.contains("lists no other version"),
        "the version sent is named: {}",
        f.message
    );
}

#[tokio::test]
async fn a_dual_era_server_is_warmed_up_with_its_legacy_version() {
    let run = run(config(&[]).with_era(ReferenceEra::DualEra)).await;
    let f = run.finding("MCP-STL-004");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(
        f.message.contains("versions `supportedVersions` lists"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_stream_resumed_on_last_event_id_is_caught() {
    // The server labels its events and replays those after the id a request
    // carries: a made-up `Last-Event-ID` finds nothing to resume, only an id
    // the server sent does.
    let (replaying, clean) = tokio::join!(
        run(config(&[]).replaying_on_last_event_id()),
        run(config(&[]))
    );
    let f = replaying.finding("MCP-STL-007");
    assert_eq!(f.outcome, Outcome::Warn, "{}", f.message);
    assert!(
        f.message.contains("a frame of an earlier stream"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("the first event id the first stream carried"),
        "{}",
        f.message
    );
    let f = clean.finding("MCP-STL-007");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(
        f.message.contains("`tools/call` of `count`"),
        "{}",
        f.message
    );
    assert!(f.message.contains("replayed nothing"), "{}", f.message);
    assert!(f.message.contains("a GET carrying"), "{}", f.message);
}
