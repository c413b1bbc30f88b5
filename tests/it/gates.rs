//! CI gates of `protocheck check`: exit 0 when the target passes the gate, 1
//! when it fails it, 2 for usage and network errors. Level and grade
//! requirements, OVERCLAIMED, and the baseline of known failures, against the
//! reference servers with their fault switches, on loopback.

use crate::common;

use common::cli::protocheck;

use common::app::{mcp_reference, serve};
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use serde_json::Value;

/// An RCP reference server with `faults`, declaring `declared` (L2 when `None`).
async fn rcp(faults: &[&str], declared: Option<&str>) -> String {
    let mut config = RcpReferenceConfig::new(faults.iter().copied()).expect("known faults");
    config.declared = declared.map(str::to_owned);
    format!("{}/rcp", serve(rcp_router(config)).await)
}

struct Checked {
    code: Option<i32>,
    report: Value,
    stderr: String,
}

impl Checked {
    fn gate(&self) -> &Value {
        &self.report["gate"]
    }

    fn reasons(&self) -> String {
        self.gate()["reasons"].to_string()
    }
}

/// `protocheck check URL --format json ARGS…`.
async fn check(url: &str, args: &[&str]) -> Checked {
    check_target(&[url], args).await
}

/// `protocheck check TARGET… --format json ARGS…` (a URL, or `--stdio CMD`).
async fn check_target(target: &[&str], args: &[&str]) -> Checked {
    let mut cmd = protocheck();
    cmd.arg("check")
        .args(target)
        .args(["--format", "json"])
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run protocheck"))
        .await
        .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Checked {
        code: out.status.code(),
        report,
        stderr,
    }
}

fn baseline(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write baseline");
    path.display().to_string()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn min_level_passes_at_or_below_the_certified_level_and_fails_above() {
    // Declares L1 honestly: L2's rerank is broken, so it certifies L1.
    let url = rcp(&["RCP-L2-001"], Some("L1")).await;
    let c = check(&url, &["--suite", "rcp", "--min-level", "L1"]).await;
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(c.report["verdict"]["certified_level"], "L1");
    assert_eq!(c.gate()["passed"], true);

    let c = check(&url, &["--suite", "rcp", "--min-level", "L2"]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert_eq!(c.gate()["passed"], false);
    assert!(
        c.reasons().contains("below the required L2"),
        "{}",
        c.reasons()
    );

    // Without a flag the gate is the verdict: L1, honest, passes.
    let c = check(&url, &["--suite", "rcp"]).await;
    assert_eq!(c.code, Some(0));
    assert!(c.gate().is_null(), "no gate asked, none embedded");

    let good = rcp(&[], None).await;
    let c = check(&good, &["--min-level", "L2"]).await;
    assert_eq!(c.code, Some(0), "auto-detected RCP: {}", c.stderr);
}

#[tokio::test]
async fn overclaimed_always_fails_the_gate() {
    // Declares L2 (the default) but certifies L1: OVERCLAIMED.
    let url = rcp(&["RCP-L2-001"], None).await;
    for args in [
        &["--min-level", "L0"][..],
        &["--min-level", "L1"][..],
        &[][..],
    ] {
        let c = check(&url, &[&["--suite", "rcp"][..], args].concat()).await;
        assert_eq!(c.code, Some(1), "{args:?}: {}", c.stderr);
        assert_eq!(c.report["verdict"]["honest"], false);
    }
    let c = check(&url, &["--suite", "rcp", "--min-level", "L1"]).await;
    assert!(c.reasons().contains("OVERCLAIMED"), "{}", c.reasons());

    // Baselining the broken rule does not excuse the overclaim.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = baseline(&dir, "b.yaml", "- RCP-L2-001\n");
    let c = check(&url, &["--suite", "rcp", "--expected-failures", &file]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(c.reasons().contains("OVERCLAIMED"), "{}", c.reasons());
    // And the honesty rule itself cannot be listed.
    let file = baseline(&dir, "c.yaml", "- RCP-CERT-001\n");
    let c = check(&url, &["--suite", "rcp", "--expected-failures", &file]).await;
    assert_eq!(c.code, Some(2));
    assert!(c.stderr.contains("RCP-CERT-001"), "{}", c.stderr);
}

#[tokio::test]
async fn min_grade_compares_the_mcp_grade() {
    // MCP-CAC-005 is a MAY whose violation warns: the grade is `compliant`.
    let url = mcp_reference(&["MCP-CAC-005"]).await;
    let c = check(&url, &["--suite", "mcp", "--min-grade", "compliant"]).await;
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(c.report["verdict"]["grade"], "compliant");
    let c = check(&url, &["--suite", "mcp", "--min-grade", "strict"]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert!(
        c.reasons().contains("below the required strict"),
        "{}",
        c.reasons()
    );

    let broken = mcp_reference(&["MCP-HDR-001"]).await;
    let c = check(&broken, &["--min-grade", "compliant"]).await;
    assert_eq!(c.code, Some(1), "auto-detected MCP: {}", c.stderr);
    assert_eq!(c.report["verdict"]["grade"], "non-compliant");
}

#[tokio::test]
async fn a_baseline_forgives_listed_failures_and_fails_new_and_stale_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let both = mcp_reference(&["MCP-HDR-001", "MCP-CAC-005"]).await;

    // Everything that fails or warns is listed: the gate passes, even
    // `strict`, because a baselined failure does not lower the grade.
    let file = baseline(
        &dir,
        "all.yaml",
        "# known failures\n- MCP-HDR-001  # header\n- MCP-CAC-005\n",
    );
    let c = check(
        &both,
        &["--expected-failures", &file, "--min-grade", "strict"],
    )
    .await;
    assert_eq!(c.code, Some(0), "{}: {}", c.stderr, c.reasons());
    assert_eq!(
        c.report["verdict"]["grade"], "non-compliant",
        "the verdict is unchanged"
    );
    assert_eq!(
        strings(&c.gate()["expected_failures"]),
        ["MCP-HDR-001", "MCP-CAC-005"]
    );

    // A JSON baseline works the same; a failure it does not list is new.
    let file = baseline(&dir, "some.json", r#"["MCP-CAC-005"]"#);
    let c = check(&both, &["--expected-failures", &file]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert_eq!(strings(&c.gate()["unexpected_failures"]), ["MCP-HDR-001"]);
    assert!(
        c.reasons().contains("not in the baseline"),
        "{}",
        c.reasons()
    );

    // A listed rule that passes now is stale and fails the gate.
    let clean = mcp_reference(&[]).await;
    let file = baseline(&dir, "stale.yaml", "- MCP-HDR-001\n");
    let c = check(&clean, &["--expected-failures", &file]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert_eq!(strings(&c.gate()["stale"]), ["MCP-HDR-001"]);
    assert!(c.reasons().contains("no longer failing"), "{}", c.reasons());

    // A listed rule of the other suite was not reported: neither forgiven nor stale.
    let file = baseline(&dir, "other.yaml", "- RCP-L0-003\n");
    let c = check(&clean, &["--expected-failures", &file]).await;
    assert_eq!(c.code, Some(0), "{}: {}", c.stderr, c.reasons());

    // An empty baseline is a baseline: every failure is new.
    let file = baseline(&dir, "empty.yaml", "# nothing fails any more\n");
    let c = check(&clean, &["--expected-failures", &file]).await;
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    let c = check(
        &both,
        &["--expected-failures", &file, "--min-grade", "compliant"],
    )
    .await;
    assert_eq!(c.code, Some(1));
}

#[tokio::test]
async fn a_baselined_level_failure_does_not_cap_the_level() {
    // Declares L0 honestly; an L1 rule is broken, so it certifies L0.
    let url = rcp(&["RCP-L1-001"], Some("L0")).await;
    let c = check(&url, &["--suite", "rcp", "--min-level", "L1"]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert_eq!(c.report["verdict"]["certified_level"], "L0");

    let dir = tempfile::tempdir().expect("tempdir");
    let file = baseline(&dir, "b.yml", "- RCP-L1-001\n");
    let c = check(
        &url,
        &[
            "--suite",
            "rcp",
            "--min-level",
            "L2",
            "--expected-failures",
            &file,
        ],
    )
    .await;
    assert_eq!(c.code, Some(0), "{}: {}", c.stderr, c.reasons());
    assert_eq!(strings(&c.gate()["expected_failures"]), ["RCP-L1-001"]);
}

#[tokio::test]
async fn usage_and_network_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mcp = mcp_reference(&[]).await;
    let rcp_url = rcp(&[], None).await;

    let cases: Vec<(String, Vec<String>, &str)> = vec![
        (
            mcp.clone(),
            vec![
                "--suite".into(),
                "mcp".into(),
                "--min-level".into(),
                "L1".into(),
            ],
            "--min-level applies to RCP",
        ),
        (
            mcp.clone(),
            vec!["--min-level".into(), "L1".into()],
            "--min-level applies to RCP",
        ),
        (
            rcp_url.clone(),
            vec!["--min-grade".into(), "strict".into()],
            "--min-grade applies to MCP",
        ),
        (
            mcp.clone(),
            vec![
                "--min-grade".into(),
                "strict".into(),
                "--min-level".into(),
                "L0".into(),
            ],
            "judge different suites",
        ),
        (
            mcp.clone(),
            vec![
                "--expected-failures".into(),
                dir.path().join("missing.yaml").display().to_string(),
            ],
            "cannot read",
        ),
        (
            mcp.clone(),
            vec![
                "--expected-failures".into(),
                baseline(&dir, "bad.yaml", "a: [1, 2\n"),
            ],
            "not a YAML list of rule ids",
        ),
        (
            mcp.clone(),
            vec![
                "--expected-failures".into(),
                baseline(&dir, "bad.json", "{\"MCP-HDR-001\": 1}"),
            ],
            "not a JSON list of rule ids",
        ),
        (
            mcp.clone(),
            vec![
                "--expected-failures".into(),
                baseline(&dir, "typo.yaml", "- MCP-HDR-001\n- MCP-HDR-9999\n"),
            ],
            "unknown rule ids: `MCP-HDR-9999`",
        ),
        (
            mcp.clone(),
            vec!["--min-grade".into(), "perfect".into()],
            "invalid value",
        ),
        (
            "http://127.0.0.1:9/rcp".into(),
            vec![
                "--suite".into(),
                "rcp".into(),
                "--min-level".into(),
                "L0".into(),
            ],
            "could not be reached",
        ),
    ];
    for (url, args, message) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let c = check(&url, &args).await;
        assert_eq!(c.code, Some(2), "{args:?}: {}", c.stderr);
        assert!(c.stderr.contains(message), "{args:?}: {}", c.stderr);
    }

    // Unreachable: the JSON report still says why, with no verdict.
    let c = check("http://127.0.0.1:9/rcp", &["--suite", "rcp"]).await;
    assert_eq!(c.code, Some(2));
    assert!(c.report["verdict"].is_null());
    assert!(
        c.report["error"]
            .as_str()
            .is_some_and(|e| e.contains("could not be reached")),
        "{}",
        c.report
    );
}

#[tokio::test]
async fn the_reference_profile_is_gated_by_the_harness_certification() {
    // The harness's rerank check (#27) disagrees with the spec, so the
    // clean server fails it and the harness certifies L1: a baseline is how
    // a CI job lives with a known disagreement. Over stdio: the HTTP
    // reference server issues a session token, which the harness never sends
    // back, so there it certifies nothing.
    let command = format!(
        "'{}' reference rcp --stdio --declare L1",
        env!("CARGO_BIN_EXE_protocheck")
    );
    let target = ["--stdio", command.as_str()];
    let c = check_target(&target, &["--suite", "rcp", "--profile", "reference"]).await;
    assert_eq!(c.code, Some(1), "{}", c.stderr);
    assert_eq!(c.report["verdict"]["certified_level"], "L1");

    let dir = tempfile::tempdir().expect("tempdir");
    let file = baseline(&dir, "harness.yaml", "- RCP-REF-27\n");
    for extra in [&[][..], &["--min-level", "L2"][..]] {
        let args = [
            &[
                "--suite",
                "rcp",
                "--profile",
                "reference",
                "--expected-failures",
                &file,
            ][..],
            extra,
        ]
        .concat();
        let c = check_target(&target, &args).await;
        assert_eq!(c.code, Some(0), "{extra:?}: {}: {}", c.stderr, c.reasons());
        assert_eq!(strings(&c.gate()["expected_failures"]), ["RCP-REF-27"]);
    }
}
