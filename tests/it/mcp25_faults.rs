//! The fault matrix of the MCP 2025-11-25 suite: its reference server, clean
//! and with each fault switch of `supported_faults_2025()` on, over
//! Streamable HTTP and over stdio.
//!
//! The clean server must grade `strict` on both transports (every rule passes
//! or is skipped with a reason). Each fault must give its own rule the rule's
//! failure outcome, on every transport the rule is written for, and change no
//! other rule's outcome, except:
//! - rules then skipped as "not verified: …" (no cascades);
//! - the overlaps in [`ALSO`]: one behaviour that two rules read, written
//!   down in the reference server's `faults.rs`;
//! - after the faults of [`ERA_FAULTS`], the era gate's skips.
//!
//! One test per group, so that each group's matrix runs on its own
//! (`cargo test --test it mcp25_faults::htp`). The clean run of each
//! transport and setup is made once and shared by the groups' tests, and
//! the fault runs go concurrently, at most [`RUNS_AT_ONCE`] over all of them.

use crate::common::suite::{dump, loopback};
use protocheck::reference::mcp2025::{
    MCP25_SCOPE_READ, MCP25_SCOPE_TOOLS, Mcp25ReferenceConfig, serve_mcp25_reference,
    supported_faults_2025,
};
use protocheck::suite::mcp2025::{self, Mcp25Settings, client::Transport};
use protocheck::suite::runner::{Endpoint, Reporter};
use protocheck::suite::{BearerToken, Finding, Outcome, RunOptions, Verdict, VerdictDetail};
use std::collections::BTreeMap;
use url::Url;

/// Faults that, by the nature of the behaviour they break, also change the
/// outcome of another rule (see the reference server's `faults.rs`): the
/// fault, and the rules it may also change.
const ALSO: &[(&str, &[&str])] = &[
    // A notification or response POST answered with anything but 202 and
    // no body, or an HTTP error, breaks the one sentence MCP25-HTP-002 (what
    // the server accepts) and MCP25-HTP-003 (what it refuses) share: both
    // read the same POSTs, and a 200 is wrong under either branch.
    ("MCP25-HTP-002", &["MCP25-HTP-003"]),
    ("MCP25-HTP-003", &["MCP25-HTP-002"]),
    // A JSON-RPC answer to a notification comes with a 200 status: the
    // status rules read the same POSTs.
    ("MCP25-RPC-009", &["MCP25-HTP-002", "MCP25-HTP-003"]),
    // The `ping` answer carries an error too: MCP25-UTL-001 reads that ping.
    ("MCP25-RPC-002", &["MCP25-UTL-001"]),
    // Without `completions` declared, completion/complete must be refused,
    // and the rules scoped by the capability no longer apply.
    (
        "MCP25-CPL-001",
        &["MCP25-CPL-002", "MCP25-CPL-003", "MCP25-CPL-004"],
    ),
    // Without `tools` declared, the tool rules are not verified and call no
    // tool: MCP25-RPC-012 reads the `_meta` of those calls' results, and
    // MCP25-UTL-003 has no call to cancel.
    ("MCP25-TOL-001", &["MCP25-RPC-012", "MCP25-UTL-003"]),
    // The fault leaves `completions` undeclared: MCP25-CPL-001 then applies,
    // and the rules scoped by the capability no longer do.
    (
        "MCP25-CPL-002",
        &["MCP25-CPL-001", "MCP25-CPL-003", "MCP25-CPL-004"],
    ),
    // Tool results embed a resource while `resources` is undeclared: the
    // rules scoped by that capability no longer apply.
    (
        "MCP25-TOL-014",
        &[
            "MCP25-RES-001",
            "MCP25-RES-002",
            "MCP25-RES-003",
            "MCP25-RES-004",
            "MCP25-RES-005",
            "MCP25-RES-006",
            "MCP25-RES-007",
            "MCP25-RES-008",
        ],
    ),
    // Answering 2025-06-18 to a 2025-11-25 initialize is how a server that
    // speaks 2025-06-18 answers: MCP25-LIF-001 notes the revision it speaks.
    ("MCP25-LIF-002", &["MCP25-LIF-001"]),
    // Answering `notifications/initialized` with an error body over HTTP is
    // also a notification POST that got neither 202 nor an error status.
    ("MCP25-LIF-005", &["MCP25-HTP-002"]),
    // The related-task `_meta` is a `_meta` key: MCP25-RPC-012 judges its
    // name (well-formed), where the clean run has none to judge.
    ("MCP25-TSK-006", &["MCP25-RPC-012"]),
    // POST streams closed before their response lose the progress they
    // would have carried: the progress rules have nothing to judge.
    (
        "MCP25-HTP-007",
        &["MCP25-UTL-003", "MCP25-UTL-004", "MCP25-UTL-005"],
    ),
    // Log messages that answer no request travel on the GET stream only.
    ("MCP25-HTP-008", &["MCP25-LOG-004"]),
    // Messages tied to no stream (undeclared log messages, progress for a
    // token no request carried) go out on whichever stream is open, and a
    // resumption may replay one that another stream carried.
    ("MCP25-LOG-001", &["MCP25-HTP-011"]),
    ("MCP25-UTL-004", &["MCP25-HTP-011"]),
    // Tool results still embed a resource once `resources` is undeclared.
    ("MCP25-RES-001", &["MCP25-TOL-014"]),
    // Answers with ids of another JSON type are not the response a stream
    // is read for.
    ("MCP25-RPC-001", &["MCP25-HTP-005"]),
    // The invalid byte cuts the SSE streams it is written on short.
    (
        "MCP25-RPC-011",
        &[
            "MCP25-HTP-005",
            "MCP25-LOG-004",
            "MCP25-UTL-003",
            "MCP25-UTL-004",
            "MCP25-UTL-005",
        ],
    ),
];

/// Faults the reference server has over HTTP only: MCP25-RPC-011's invalid
/// byte sits in an SSE comment, and stdio has no comments to hide it in
/// without breaking the messages other rules read.
const HTTP_ONLY: &[&str] = &["MCP25-RPC-011"];

/// Faults after which the server no longer looks like a 2025-11-25 server,
/// so the suite's era gate skips the rest as "not applicable: the server
/// speaks …" (digest, decision D1).
const ERA_FAULTS: &[&str] = &["MCP25-LIF-002"];

/// Faults that take a capability away: the rules about that feature are then
/// skipped as "not applicable" (nothing of it is offered or observed), which
/// is no other rule failing.
const UNDECLARING: &[&str] = &["MCP25-RES-001", "MCP25-PRM-001", "MCP25-LOG-001"];

/// A run's outcome per rule, with the findings for messages.
struct Run {
    verdict: Verdict,
    findings: Vec<Finding>,
}

impl Run {
    fn outcomes(&self) -> BTreeMap<&str, Outcome> {
        self.findings
            .iter()
            .map(|f| (f.rule_id.as_str(), f.outcome))
            .collect()
    }

    fn finding(&self, id: &str) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.rule_id == id)
            .unwrap_or_else(|| panic!("no finding for {id}:\n{}", dump(&self.findings)))
    }

    fn grade(&self) -> &str {
        match &self.verdict.detail {
            VerdictDetail::Mcp { grade, .. } => grade,
            other => panic!("not an MCP verdict: {other:?}"),
        }
    }
}

/// What the reference server plays besides its defaults: the groups AUT
/// and TSK run against a server with authorization / tasks on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Setup {
    tasks: bool,
    auth: bool,
}

async fn suite(endpoint: &Endpoint, options: RunOptions, settings: &Mcp25Settings) -> Run {
    let ctx = loopback(options);
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(async move {
        let mut findings = Vec::new();
        while let Some(f) = rx.recv().await {
            findings.push(f);
        }
        findings
    });
    let mut reporter = Reporter::new(tx);
    let verdict = mcp2025::run_with(endpoint, &ctx, &mut reporter, settings).await;
    drop(reporter);
    let findings = collector.await.expect("collector");
    let verdict =
        verdict.unwrap_or_else(|e| panic!("{endpoint}: no verdict: {e}\n{}", dump(&findings)));
    Run { verdict, findings }
}

/// The suite against the reference server over HTTP with `faults` on.
async fn over_http(faults: &[&str], setup: Setup) -> Run {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    let url = Url::parse(&format!("http://{addr}/mcp")).expect("url");
    let mut config = Mcp25ReferenceConfig::new()
        .with_faults(faults)
        .with_tasks(setup.tasks);
    let mut options = RunOptions::default();
    let settings = Mcp25Settings::default();
    if setup.auth {
        config = config.with_auth();
        let hour = std::time::Duration::from_secs(3600);
        let full = config
            .mint_token(
                url.as_str(),
                &format!("{MCP25_SCOPE_READ} {MCP25_SCOPE_TOOLS}"),
                hour,
            )
            .expect("a token");
        let limited = config
            .mint_token(url.as_str(), MCP25_SCOPE_READ, hour)
            .expect("a token");
        options.bearer_token = Some(BearerToken::new(full));
        options.limited_token = Some(BearerToken::new(limited));
    }
    let server = tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    let run = suite(&Endpoint::Http(url), options, &settings).await;
    server.abort();
    run
}

/// The suite against the reference server as a child process on stdio.
async fn over_stdio(faults: &[&str], setup: Setup) -> Run {
    let mut command = format!(
        "{} reference mcp --revision 2025-11-25 --stdio",
        env!("CARGO_BIN_EXE_protocheck")
    );
    if setup.tasks {
        command.push_str(" --tasks");
    }
    for fault in faults {
        command.push_str(&format!(" --break {fault}"));
    }
    suite(
        &Endpoint::Stdio(command),
        RunOptions::default(),
        &Mcp25Settings::default(),
    )
    .await
}

async fn over(transport: Transport, faults: &[&str], setup: Setup) -> Run {
    match transport {
        Transport::Http => over_http(faults, setup).await,
        Transport::Stdio => over_stdio(faults, setup).await,
    }
}

/// The transports a rule is judged on.
fn transports(id: &str) -> Vec<Transport> {
    let rule = mcp2025::rule(id).unwrap_or_else(|| panic!("{id} is not in the catalogue"));
    match rule.transport() {
        Some(only) => vec![only],
        None => vec![Transport::Http, Transport::Stdio],
    }
}

fn assert_clean(run: &Run, transport: Transport) {
    assert_eq!(
        run.grade(),
        "strict",
        "the clean reference server over {} is not strict:\n{}",
        transport.as_str(),
        dump(&run.findings)
    );
    for f in &run.findings {
        assert!(
            matches!(f.outcome, Outcome::Pass | Outcome::Skip),
            "clean server over {}: {} is {:?}:\n{}",
            transport.as_str(),
            f.rule_id,
            f.outcome,
            dump(&run.findings)
        );
    }
}

/// Most suite runs of the matrix at once, over every group's test. A run
/// mostly waits (on its server, on the windows its rules watch): eight at
/// once keep two cores far from busy, and leave room for the tests that
/// run beside the matrix.
const RUNS_AT_ONCE: usize = 8;

/// The permits of [`RUNS_AT_ONCE`], shared by every group's test (libtest
/// runs them on threads of their own, each with its own runtime; the
/// semaphore belongs to none of them).
static RUNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(RUNS_AT_ONCE);

/// A suite run against the reference server, holding one of the permits of
/// [`RUNS`] while it lasts.
async fn bounded(transport: Transport, faults: &[&str], setup: Setup) -> Run {
    let _permit = RUNS.acquire().await.expect("the semaphore is never closed");
    over(transport, faults, setup).await
}

/// The clean run of each transport and setup, shared by the groups' tests.
type CleanRuns = std::sync::Mutex<
    std::collections::HashMap<
        (Transport, Setup),
        std::sync::Arc<tokio::sync::OnceCell<std::sync::Arc<Run>>>,
    >,
>;
static CLEAN: std::sync::OnceLock<CleanRuns> = std::sync::OnceLock::new();

/// The run of the clean reference server over `transport` set up so: the
/// first test to ask runs it, the others read it (it holds only data, no
/// server or runtime of that test).
async fn clean(transport: Transport, setup: Setup) -> std::sync::Arc<Run> {
    let cell = CLEAN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry((transport, setup))
        .or_default()
        .clone();
    cell.get_or_init(|| async { std::sync::Arc::new(bounded(transport, &[], setup).await) })
        .await
        .clone()
}

/// Runs the matrix for the faults whose rule is in `group`.
async fn matrix(group: &str) {
    matrix_with(group, Setup::default()).await;
}

/// Runs the matrix for the faults whose rule is in `group`, against the
/// reference server set up so: one run per fault and transport, at most
/// [`RUNS_AT_ONCE`] at a time, each compared with the shared clean run.
async fn matrix_with(group: &str, setup: Setup) {
    let prefix = format!("MCP25-{group}-");
    let faults: Vec<&'static str> = supported_faults_2025()
        .iter()
        .copied()
        .filter(|f| f.starts_with(&prefix) && mcp2025::rule(f).is_some())
        .collect();
    assert!(!faults.is_empty(), "no fault switch for the {group} group");
    // Authorization is written for HTTP only.
    let on: &[Transport] = if setup.auth {
        &[Transport::Http]
    } else {
        &[Transport::Http, Transport::Stdio]
    };
    let mut cases = tokio::task::JoinSet::new();
    for &transport in on {
        let clean = clean(transport, setup).await;
        assert_clean(&clean, transport);
        for &fault in &faults {
            if !transports(fault).contains(&transport)
                || transport == Transport::Stdio && HTTP_ONLY.contains(&fault)
            {
                continue;
            }
            let clean = clean.clone();
            cases.spawn(async move {
                let broken = bounded(transport, &[fault], setup).await;
                (
                    fault,
                    transport,
                    judge_case(fault, transport, &clean, &broken),
                )
            });
        }
    }
    let mut problems = Vec::new();
    while let Some(case) = cases.join_next().await {
        let (fault, transport, found) = case.unwrap_or_else(|e| {
            std::panic::resume_unwind(e.try_into_panic().expect("a case is never cancelled"))
        });
        problems.push((fault, transport.as_str(), found));
    }
    // In the order of the faults, whichever run ended first.
    problems.sort_by_key(|(fault, transport, _)| (*fault, *transport));
    let problems: Vec<String> = problems.into_iter().flat_map(|(_, _, p)| p).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What is wrong with the run of `fault` over `transport`: its own rule not
/// given the rule's failure outcome, or another rule's outcome changed from
/// the clean run's, but for the changes the module's header allows.
fn judge_case(fault: &str, transport: Transport, clean: &Run, broken: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    let clean_outcomes = clean.outcomes();
    let rule = mcp2025::rule(fault).expect("catalogue rule");
    let got = broken.finding(fault);
    if got.outcome != rule.rule.on_failure {
        problems.push(format!(
            "{fault} over {}: {:?}, not {:?}: {}",
            transport.as_str(),
            got.outcome,
            rule.rule.on_failure,
            got.message
        ));
    }
    let also = ALSO
        .iter()
        .find(|(f, _)| *f == fault)
        .map_or(&[][..], |(_, also)| also);
    for (id, outcome) in broken.outcomes() {
        if id == fault || also.contains(&id) {
            continue;
        }
        let before = clean_outcomes.get(id).copied();
        if Some(outcome) == before {
            continue;
        }
        let f = broken.finding(id);
        if outcome == Outcome::Skip && f.message.starts_with("not verified") {
            continue;
        }
        if outcome == Outcome::Skip
            && UNDECLARING.contains(&fault)
            && f.message.starts_with("not applicable")
        {
            continue;
        }
        if outcome == Outcome::Skip
            && ERA_FAULTS.contains(&fault)
            && f.message.starts_with("not applicable: the server speaks")
        {
            continue;
        }
        problems.push(format!(
            "{fault} over {} also changed {id}: {before:?} -> {outcome:?}: {}",
            transport.as_str(),
            f.message
        ));
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lif() {
    matrix("LIF").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc() {
    matrix("RPC").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn htp() {
    matrix("HTP").await;
}

/// The suite against the reference server over HTTP as `config` sets it up.
async fn over_http_with(config: Mcp25ReferenceConfig) -> Run {
    let _permit = RUNS.acquire().await.expect("the semaphore is never closed");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    let server = tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    let url = Url::parse(&format!("http://{addr}/mcp")).expect("url");
    let run = suite(
        &Endpoint::Http(url),
        RunOptions::default(),
        &Mcp25Settings::default(),
    )
    .await;
    server.abort();
    run
}

/// A server that lets in any Origin starting with `http://localhost` still
/// refuses the plainly foreign one: MCP25-HTP-018 fails on a look-alike, and
/// only that rule does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn htp_origin_by_prefix_fails_on_a_look_alike() {
    let run = over_http_with(Mcp25ReferenceConfig::new().with_origin_prefix_match()).await;
    let f = run.finding("MCP25-HTP-018");
    assert_eq!(f.outcome, Outcome::Fail, "{}", dump(&run.findings));
    assert!(
        f.message
            .contains("with Origin `http://localhost.protocheck.invalid` got HTTP 200"),
        "the look-alike sent and what came back are named: {}",
        f.message
    );
    let others: Vec<_> = run
        .findings
        .iter()
        .filter(|f| f.rule_id != "MCP25-HTP-018" && f.outcome == Outcome::Fail)
        .collect();
    assert!(others.is_empty(), "{}", dump(&run.findings));
}

/// The HTP rules on the reference server without sessions (the session
/// rules skip, saying why; every other rule is judged) and answering every
/// request over SSE (the stream rules pass).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn htp_without_sessions_and_over_sse() {
    let stateless = over_http_with(Mcp25ReferenceConfig::new().with_sessions(false)).await;
    assert_clean(&stateless, Transport::Http);
    for n in 12..=16 {
        let f = stateless.finding(&format!("MCP25-HTP-0{n}"));
        assert_eq!(f.outcome, Outcome::Skip, "{}", dump(&stateless.findings));
        assert!(f.message.contains("does not use sessions"), "{}", f.message);
    }
    for id in [
        "MCP25-HTP-001",
        "MCP25-HTP-004",
        "MCP25-HTP-017",
        "MCP25-HTP-018",
    ] {
        assert_eq!(stateless.finding(id).outcome, Outcome::Pass, "{id}");
    }
    let sse = over_http_with(Mcp25ReferenceConfig::new().with_sse_responses(true)).await;
    assert_clean(&sse, Transport::Http);
    for n in [1, 4, 5, 6, 8, 9, 10, 11] {
        let id = format!("MCP25-HTP-0{n:02}");
        assert_eq!(
            sse.finding(&id).outcome,
            Outcome::Pass,
            "{id}: {}",
            dump(&sse.findings)
        );
    }
    // Without SSE answers protocheck had no stream but the ones its progress
    // tokens invite; with a connection closed early (the fault), HTP-007
    // judges the stream its resumption completed.
    let cut = over_http_with(
        Mcp25ReferenceConfig::new()
            .with_sse_responses(true)
            .with_faults(&["MCP25-HTP-007"]),
    )
    .await;
    for (id, outcome) in [
        ("MCP25-HTP-005", Outcome::Pass),
        ("MCP25-HTP-007", Outcome::Warn),
    ] {
        let f = cut.finding(id);
        assert_eq!(f.outcome, outcome, "{id}: {}", f.message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utl() {
    matrix("UTL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn res() {
    matrix("RES").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prm() {
    matrix("PRM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log() {
    matrix("LOG").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tol() {
    matrix("TOL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpl() {
    matrix("CPL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn std() {
    matrix("STD").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aut() {
    matrix_with(
        "AUT",
        Setup {
            auth: true,
            ..Setup::default()
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tsk() {
    matrix_with(
        "TSK",
        Setup {
            tasks: true,
            ..Setup::default()
        },
    )
    .await;
}

#[test]
fn every_rule_has_a_fault_switch_and_every_switch_a_catalogue_row() {
    let faults = supported_faults_2025();
    let missing: Vec<&str> = mcp2025::rules()
        .iter()
        .map(|r| r.id)
        .filter(|id| !faults.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a fault switch: {missing:?}"
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalogue = std::fs::read_to_string(root.join("docs/spec/mcp-2025-11-25-rules.md"))
        .expect("read the catalogue");
    for fault in faults {
        assert!(
            catalogue.contains(&format!("| {fault} |")),
            "{fault} is a fault switch of the reference server but no row of the catalogue"
        );
    }
}
