//! A page per rule (#30 item 2): every rule id of every suite, revision and
//! profile has a page (HTML and JSON) with its help, and every finding of a
//! run against each reference server links to it: on the run page, in the
//! JSON report, SARIF (`helpUri`, `help`), JUnit and `check`'s text.

use crate::common;

use common::app::{TestApp, mcp_reference, rcp_reference, worker_config};
use protocheck::suite::index;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn every_rule_has_a_page_and_a_json_document_with_its_help() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let http = reqwest::Client::new();

    let (status, list) = app.get_json("/api/v1/rules").await;
    assert_eq!(status, 200);
    let listed: Vec<&str> = list["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    let ids: Vec<&str> = index::entries().iter().map(|e| e.rule.id).collect();
    assert_eq!(listed, ids, "the list is the catalogue, in its order");
    assert_eq!(list["count"], ids.len());
    assert_eq!(
        ids.len(),
        protocheck::suite::mcp::rules().len()
            + protocheck::suite::mcp2025::rules().len()
            + protocheck::suite::rcp::rules().len()
            + protocheck::suite::rcp::harness::rules().len()
    );

    let all = app.get_text("/rules").await;
    for e in index::entries() {
        let id = e.rule.id;
        let path = format!("/rules/{id}");
        assert!(
            all.contains(&format!("href=\"{path}\"")),
            "/rules links {id}"
        );
        let page = http.get(app.url(&path)).send().await.expect("GET");
        assert_eq!(page.status(), 200, "{path}");
        let html = page.text().await.expect("html");
        assert!(html.contains(&format!("<span class=\"rule-id\">{id}</span>")));
        // Askama writes `<`, `>`, `"`, `'` and `&` as numeric references.
        let plain = html
            .replace("<code>", "`")
            .replace("</code>", "`")
            .replace("&#60;", "<")
            .replace("&#62;", ">")
            .replace("&#34;", "\"")
            .replace("&#39;", "'")
            .replace("&#38;", "&");
        for heading in [
            "How protocheck probes it",
            "What a failure usually means",
            "How to fix it",
            "Suite versions",
        ] {
            assert!(html.contains(heading), "{path} has no {heading:?}");
        }
        assert!(
            html.contains(e.suite_version),
            "{path} names its rules version"
        );

        let (status, doc) = app.get_json(&format!("/api/v1/rules/{id}")).await;
        assert_eq!(status, 200, "{doc}");
        assert_eq!(doc["id"], id);
        assert_eq!(doc["page"], path);
        assert_eq!(doc["keyword"], e.keyword);
        assert_eq!(doc["spec_revision"], e.spec_revision);
        assert_eq!(doc["suite_version"], e.suite_version);
        for part in ["probe", "failure", "fix"] {
            let text = doc["help"][part].as_str().unwrap_or_default();
            assert!(text.len() > 40, "{id}: help.{part} is {text:?}");
            // The page shows the same text, escaped, names in <code>.
            assert!(plain.contains(text), "{path} shows help.{part}");
        }
        // What a pass covers: the coverage entry of docs/coverage.md, its
        // gap named by its reason, or said to be a missing probe.
        assert!(html.contains("What a pass covers"), "{path}");
        match protocheck::suite::coverage::entry(id) {
            None => {
                assert!(doc.get("coverage").is_none(), "{id}: {doc}");
                assert!(id.starts_with("RCP-REF-"), "{id} has no coverage entry");
                assert!(html.contains("the harness"), "{path}");
            }
            Some(c) => {
                let cov = &doc["coverage"];
                let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
                assert_eq!(cov["required"], flat(c.required), "{id}");
                assert!(
                    plain.contains(&flat(c.probed)),
                    "{path} shows what the probes send"
                );
                use protocheck::suite::coverage::{GapKind, gap_kind};
                match gap_kind(c.gap) {
                    GapKind::None => {
                        assert_eq!(cov["gap"], "full", "{id}");
                        assert!(html.contains("Probed in full"), "{path}");
                    }
                    GapKind::Reason(reason, rest) => {
                        assert_eq!(cov["gap"], reason, "{id}");
                        assert!(html.contains(&format!("Not covered ({reason}):")), "{path}");
                        assert!(plain.contains(&flat(rest)), "{path} shows what is left out");
                    }
                    GapKind::MissingProbe(text) => {
                        assert_eq!(cov["gap"], "missing probe", "{id}");
                        assert!(html.contains("a probe protocheck still lacks"), "{path}");
                        assert!(plain.contains(&flat(text)), "{path} shows what is left out");
                    }
                }
            }
        }
        for dependent in index::dependents(id) {
            assert!(
                html.contains(&format!("href=\"/rules/{}\"", dependent.rule.id)),
                "{path} links its dependent {}",
                dependent.rule.id
            );
        }
    }
}

#[tokio::test]
async fn an_unknown_rule_is_a_404_page_and_problem() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let http = reqwest::Client::new();
    let page = http
        .get(app.url("/rules/MCP-NOPE-001"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("GET");
    assert_eq!(page.status(), 404);
    let html = page.text().await.expect("html");
    assert!(html.contains("No rule has the id"), "{html}");
    let api = http
        .get(app.url("/api/v1/rules/%3Cscript%3E"))
        .send()
        .await
        .expect("GET");
    assert_eq!(api.status(), 404);
    assert_eq!(
        api.headers()["content-type"].to_str().unwrap_or_default(),
        "application/problem+json"
    );
    let problem: Value = api.json().await.expect("problem");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("`<script>`"),
        "{problem}"
    );
}

/// Submits `body`, waits for the run, and checks that each of its findings
/// links to its rule everywhere the run is shown.
async fn findings_link_their_rules(app: &TestApp, body: Value) {
    let created = app.submit(&body).await;
    let id = created["id"].as_str().expect("run id").to_owned();
    let run = app.wait_finished(&id, Duration::from_secs(120)).await;
    assert!(
        matches!(run["status"].as_str(), Some("passed" | "failed")),
        "{run:#}"
    );
    let (status, report) = app
        .get_json(&format!("/api/v1/runs/{id}/report.json"))
        .await;
    assert_eq!(status, 200);
    let findings = report["findings"].as_array().expect("findings");
    assert!(findings.len() > 20, "{body}: {} findings", findings.len());
    let html = app.get_text(&format!("/runs/{id}")).await;
    let sarif: Value = serde_json::from_str(
        &app.get_text(&format!("/api/v1/runs/{id}/report.sarif"))
            .await,
    )
    .expect("sarif");
    let junit = app
        .get_text(&format!("/api/v1/runs/{id}/report.junit.xml"))
        .await;
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("sarif rules");
    let base = app.url("");
    let base = base.trim_end_matches('/');
    for f in findings {
        let rule = f["rule_id"].as_str().expect("rule id");
        let page = format!("{base}/rules/{rule}");
        assert!(
            html.contains(&format!("href=\"/rules/{rule}\"")),
            "the run page links {rule}"
        );
        assert_eq!(f["rule"]["page"], page.as_str(), "report.json: {f}");
        let descriptor = rules
            .iter()
            .find(|d| d["id"] == rule)
            .unwrap_or_else(|| panic!("SARIF has no descriptor for {rule}"));
        assert_eq!(descriptor["helpUri"], page.as_str(), "{descriptor}");
        assert!(
            descriptor["help"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("How to fix it")),
            "{descriptor}"
        );
        if f["outcome"] == "fail" {
            assert!(
                junit.contains(&format!("how to fix: {page}")),
                "JUnit links the failing {rule}"
            );
        }
        // And the page is there.
        let (status, _) = app.get_json(&format!("/api/v1/rules/{rule}")).await;
        assert_eq!(status, 200, "{rule}");
    }
}

#[tokio::test]
async fn every_finding_of_a_run_against_each_reference_server_links_to_its_rule() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(2, Duration::from_secs(60)));

    let mcp = mcp_reference(&["MCP-HDR-001"]).await;
    findings_link_their_rules(&app, json!({"url": mcp, "suite": "mcp"})).await;

    let mcp25 = mcp25_reference(&["MCP25-RPC-007"]).await;
    findings_link_their_rules(
        &app,
        json!({"url": mcp25, "suite": "mcp", "options": {"mcp_revision": "2025-11-25"}}),
    )
    .await;

    let rcp = rcp_reference(&["RCP-L0-003"], Duration::ZERO).await;
    findings_link_their_rules(&app, json!({"url": rcp, "suite": "rcp"})).await;
    findings_link_their_rules(
        &app,
        json!({"url": rcp, "suite": "rcp", "options": {"profile": "reference"}}),
    )
    .await;
    pool.shutdown().await;
}

/// The MCP 2025-11-25 reference server with `faults`, on loopback.
pub async fn mcp25_reference(faults: &[&str]) -> String {
    use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, serve_mcp25_reference};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let config = Mcp25ReferenceConfig::new().with_faults(faults);
    tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    format!("http://{addr}/mcp")
}

/// `protocheck ARGS`: exit code, stdout, stderr.
async fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = common::cli::protocheck();
    cmd.args(args);
    let out = common::cli::output(cmd).await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn check_links_each_failure_to_its_rule_page_or_to_protocheck_rules() {
    let target = mcp_reference(&["MCP-HDR-001"]).await;
    let (_, text, _) = cli(&["check", &target, "--suite", "mcp"]).await;
    let names = |out: &str, link: &str| {
        out.lines()
            .any(|l| l.trim_start().starts_with("MCP-HDR-001 ") && l.trim_end().ends_with(link))
    };
    assert!(names(&text, "protocheck rules MCP-HDR-001"), "{text}");
    let (_, linked, _) = cli(&[
        "check",
        &target,
        "--suite",
        "mcp",
        "--public-url",
        "https://checks.example/",
    ])
    .await;
    assert!(
        names(&linked, " https://checks.example/rules/MCP-HDR-001"),
        "{linked}"
    );
    let (code, page, _) = cli(&["rules", "MCP-HDR-001"]).await;
    assert_eq!(code, Some(0));
    assert!(page.contains("How to fix it"), "{page}");
    let (code, list, _) = cli(&["rules", "--json"]).await;
    assert_eq!(code, Some(0));
    let list: Value = serde_json::from_str(&list).expect("json");
    assert_eq!(list["count"], index::entries().len());
    let (code, _, err) = cli(&["rules", "MCP-NOPE-001"]).await;
    assert_eq!(code, Some(2));
    assert!(err.contains("no rule has the id"), "{err}");
    let (code, _, err) = cli(&["check", &target, "--public-url", "ftp://x"]).await;
    assert_eq!(code, Some(2));
    assert!(err.contains("is not an http(s) URL"), "{err}");
}
