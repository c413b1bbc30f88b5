//! Reports: `report.json`, `report.junit.xml` and `report.sarif` of stored
//! runs (through the API, both backends, in-process workers, the reference
//! servers with and without faults) and of `check --format`, each validated
//! against its schema: the report's own JSON Schema, Jenkins' JUnit XSD with
//! `xmllint`, and the SARIF 2.1.0 schema.

use crate::common;

use common::cli::{output, protocheck};

use common::app::{TestApp, mcp_reference, rcp_reference, serve, worker_config};
use protocheck::report::{Format, Report};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const FINISH: Duration = Duration::from_secs(90);

/// The external schema tools, or `None` (with a SKIPPED line) when they are
/// missing and `PROTOCHECK_REQUIRE_TOOLS` is not `1`.
struct Tools {
    junit_xsd: PathBuf,
    sarif_schema: jsonschema::Validator,
}

fn tools() -> Option<Tools> {
    let require = std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() == Ok("1");
    let missing = |what: String| {
        assert!(!require, "PROTOCHECK_REQUIRE_TOOLS=1 but {what}");
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: report schema validation; {what}"
        );
        None
    };
    let xmllint = Command::new("xmllint").arg("--version").output();
    if !xmllint.is_ok_and(|o| o.status.success()) {
        return missing("xmllint is not on PATH".into());
    }
    let Some(xsd) = std::env::var_os("PROTOCHECK_JUNIT_XSD").map(PathBuf::from) else {
        return missing("PROTOCHECK_JUNIT_XSD is not set".into());
    };
    if !xsd.is_file() {
        return missing(format!(
            "PROTOCHECK_JUNIT_XSD {} is not a file",
            xsd.display()
        ));
    }
    let Some(sarif) = std::env::var_os("PROTOCHECK_SARIF_SCHEMA").map(PathBuf::from) else {
        return missing("PROTOCHECK_SARIF_SCHEMA is not set".into());
    };
    let Ok(text) = std::fs::read_to_string(&sarif) else {
        return missing(format!(
            "PROTOCHECK_SARIF_SCHEMA {} is not readable",
            sarif.display()
        ));
    };
    let schema: Value = serde_json::from_str(&text).expect("the SARIF schema is JSON");
    let sarif_schema = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    Some(Tools {
        junit_xsd: xsd,
        sarif_schema,
    })
}

impl Tools {
    fn junit(&self, xml: &str, what: &str) {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("report.xml");
        std::fs::write(&file, xml).expect("write xml");
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&self.junit_xsd)
            .arg(&file)
            .output()
            .expect("run xmllint");
        assert!(
            out.status.success(),
            "{what}: JUnit XML does not validate: {}\n{xml}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn sarif(&self, doc: &Value, what: &str) {
        let errors: Vec<String> = self
            .sarif_schema
            .iter_errors(doc)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{what}: SARIF does not validate: {errors:#?}\n{doc:#}"
        );
        assert_eq!(doc["version"], "2.1.0");
    }
}

/// The report's own schema (draft 2020-12), as the service publishes it.
fn report_schema() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(protocheck::report::SCHEMA).expect("schema is JSON");
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the report schema compiles")
}

fn assert_report_valid(validator: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: report.json does not validate: {errors:#?}\n{doc:#}"
    );
}

/// Round trip: the JSON parses into a `Report` that serialises to the same
/// JSON, and renders the same JUnit and SARIF as the service did.
fn assert_lossless(json_text: &str, junit: &str, sarif: &Value, what: &str) -> Report {
    let report: Report = serde_json::from_str(json_text).expect("report.json parses as a Report");
    let again: Value = serde_json::to_value(&report).expect("serialise");
    let original: Value = serde_json::from_str(json_text).expect("json");
    assert_eq!(
        again, original,
        "{what}: Report -> JSON -> Report is lossless"
    );
    assert_eq!(report.render(Format::Junit), junit, "{what}: same JUnit");
    let sarif_again: Value =
        serde_json::from_str(&report.render(Format::Sarif)).expect("sarif json");
    assert_eq!(&sarif_again, sarif, "{what}: same SARIF");
    report
}

struct Downloaded {
    json: String,
    junit: String,
    sarif: Value,
}

async fn download(app: &TestApp, id: &str) -> Downloaded {
    let get = |suffix: &'static str| {
        let url = app.url(&format!("/api/v1/runs/{id}/{suffix}"));
        let http = app.http.clone();
        async move {
            let resp = http.get(url).send().await.expect("GET report");
            assert_eq!(resp.status(), 200, "{suffix}");
            let ct = resp.headers()["content-type"]
                .to_str()
                .expect("content type")
                .to_owned();
            (ct, resp.text().await.expect("body"))
        }
    };
    let (ct, json) = get("report.json").await;
    assert_eq!(ct, "application/json");
    let (ct, junit) = get("report.junit.xml").await;
    assert_eq!(ct, "application/xml");
    let (ct, sarif) = get("report.sarif").await;
    assert_eq!(ct, "application/sarif+json");
    Downloaded {
        json,
        junit,
        sarif: serde_json::from_str(&sarif).expect("SARIF is JSON"),
    }
}

/// Every failing or warning finding has one SARIF result with its rule.
fn assert_sarif_matches(report: &Report, sarif: &Value, what: &str) {
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    let expected: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| matches!(f.finding.outcome.as_str(), "fail" | "warn"))
        .map(|f| f.finding.rule_id.as_str())
        .collect();
    let got: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().expect("ruleId"))
        .collect();
    assert_eq!(
        got, expected,
        "{what}: one result per failing or warning finding"
    );
    for r in results {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(
            rules[index]["id"], r["ruleId"],
            "{what}: ruleIndex points at the rule"
        );
        let level = if report
            .findings
            .iter()
            .any(|f| f.finding.rule_id == r["ruleId"] && f.finding.outcome.as_str() == "fail")
        {
            "error"
        } else {
            "warning"
        };
        assert_eq!(r["level"], level, "{what}");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            report.target.url.as_str(),
            "{what}: the location is the target"
        );
    }
    for rule in rules {
        let id = rule["id"].as_str().unwrap_or_default();
        // A service's report links each rule's page; a `check` without
        // --public-url links the spec's text (also cited in the description).
        let info = report
            .findings
            .iter()
            .find(|f| f.finding.rule_id == id)
            .and_then(|f| f.rule.as_ref());
        let expected = info.and_then(|r| r.page.clone().or(r.spec_url.clone()));
        assert_eq!(
            rule["helpUri"].as_str(),
            expected.as_deref(),
            "{what}: the rule's help link: {rule}"
        );
        if info.is_some_and(|r| r.page.is_some()) {
            assert!(
                expected
                    .is_some_and(|u| u.starts_with("http") && u.ends_with(&format!("/rules/{id}"))),
                "{what}: rules link to their page: {rule}"
            );
        }
        if id.starts_with("MCP-") {
            assert!(
                rule["fullDescription"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("https://modelcontextprotocol.io/")),
                "{what}: MCP rules cite the spec: {rule}"
            );
        }
    }
}

/// JUnit: one test case per finding, failures and skips where the findings say.
fn assert_junit_matches(report: &Report, xml: &str, what: &str) {
    let doc = roxmltree::Document::parse(xml).expect("JUnit is well-formed XML");
    let cases: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase") && n.attribute("classname") != Some("protocheck"))
        .collect();
    assert_eq!(
        cases.len(),
        report.findings.len(),
        "{what}: one case per finding"
    );
    // Cases come grouped by suite; each finding has its own, by rule id.
    let mut unused = cases.clone();
    for f in &report.findings {
        let at = unused
            .iter()
            .position(|c| c.attribute("name") == Some(f.finding.rule_id.as_str()))
            .unwrap_or_else(|| panic!("{what}: no test case for {}", f.finding.rule_id));
        let case = unused.remove(at);
        let failed = case.children().any(|c| c.has_tag_name("failure"));
        let skipped = case.children().any(|c| c.has_tag_name("skipped"));
        assert_eq!(
            failed,
            f.finding.outcome.as_str() == "fail",
            "{what}: {}",
            f.finding.rule_id
        );
        assert_eq!(
            skipped,
            f.finding.outcome.as_str() == "skip",
            "{what}: {}",
            f.finding.rule_id
        );
        if failed {
            let text: String = case
                .children()
                .find(|c| c.has_tag_name("failure"))
                .and_then(|c| c.text())
                .unwrap_or_default()
                .to_owned();
            assert!(
                text.contains(&f.finding.message),
                "{what}: failure text has the message"
            );
            if !f.finding.evidence.is_empty() {
                assert!(
                    text.contains("evidence 1 of"),
                    "{what}: failure text has evidence: {text}"
                );
            }
        }
    }
}

#[tokio::test]
async fn reports_of_passing_and_failing_runs_validate_against_their_schemas() {
    let tools = tools();
    let validator = report_schema();
    let targets = [
        ("rcp", rcp_reference(&[], Duration::ZERO).await, true),
        (
            "rcp",
            rcp_reference(&["RCP-L0-003"], Duration::ZERO).await,
            false,
        ),
        ("mcp", mcp_reference(&[]).await, true),
        (
            "mcp",
            mcp_reference(&["MCP-HDR-001", "MCP-CAC-005"]).await,
            false,
        ),
    ];
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(2, Duration::from_secs(30)));
        for (suite, url, passes) in &targets {
            let what = format!("{} {suite} {url}", db.name());
            let body = app.submit(&json!({"url": url, "suite": suite})).await;
            let id = body["id"].as_str().expect("run id").to_owned();
            let run = app.wait_finished(&id, FINISH).await;
            assert_eq!(
                run["status"],
                if *passes { "passed" } else { "failed" },
                "{what}: {run:#}"
            );
            let got = download(&app, &id).await;
            let doc: Value = serde_json::from_str(&got.json).expect("report.json is JSON");
            assert_report_valid(&validator, &doc, &what);
            assert_eq!(doc["report_version"], "1");
            assert_eq!(doc["$schema"], "/api/v1/schema/report.json");
            assert_eq!(doc["run"]["id"], id.as_str());
            assert_eq!(doc["verdict"], run["verdict"], "{what}: the run's verdict");
            assert_eq!(
                doc["findings"].as_array().map(Vec::len),
                run["findings"].as_array().map(Vec::len),
                "{what}: every stored finding"
            );
            assert!(doc["gate"].is_null(), "the service applies no gate");
            let report = assert_lossless(&got.json, &got.junit, &got.sarif, &what);
            assert!(
                report.findings.iter().all(|f| f.rule.is_some()),
                "{what}: every finding names its rule"
            );
            assert_sarif_matches(&report, &got.sarif, &what);
            assert_junit_matches(&report, &got.junit, &what);
            if let Some(tools) = &tools {
                tools.junit(&got.junit, &what);
                tools.sarif(&got.sarif, &what);
            }
        }
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_run_that_ended_in_error_reports_the_error() {
    let tools = tools();
    let validator = report_schema();
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        // Workers that refuse private targets end a loopback run as `error` at once.
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.policy = protocheck::transport::AddressPolicy::PublicOnly;
        let pool = app.workers(cfg);
        let body = app
            .submit(&json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
            .await;
        let id = body["id"].as_str().expect("run id").to_owned();
        let run = app.wait_finished(&id, FINISH).await;
        assert_eq!(run["status"], "error", "{run:#}");
        let got = download(&app, &id).await;
        let doc: Value = serde_json::from_str(&got.json).expect("json");
        assert_report_valid(&validator, &doc, db.name());
        assert!(doc["verdict"].is_null());
        assert!(
            doc["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{doc:#}"
        );
        assert_lossless(&got.json, &got.junit, &got.sarif, db.name());
        let xml = roxmltree::Document::parse(&got.junit).expect("xml");
        assert!(
            xml.descendants().any(|n| n.has_tag_name("error")),
            "an <error> element: {}",
            got.junit
        );
        assert_eq!(
            got.sarif["runs"][0]["invocations"][0]["executionSuccessful"],
            false
        );
        if let Some(tools) = &tools {
            tools.junit(&got.junit, db.name());
            tools.sarif(&got.sarif, db.name());
        }
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn report_endpoints_answer_404_for_unknown_runs_and_409_for_unfinished_ones() {
    let target = rcp_reference(&[], Duration::ZERO).await;
    for db in common::all_backends().await {
        // No workers: a submitted run stays queued.
        let app = TestApp::start(&db, 100).await;
        let body = app.submit(&json!({"url": target, "suite": "rcp"})).await;
        let id = body["id"].as_str().expect("run id").to_owned();
        for suffix in ["report.json", "report.junit.xml", "report.sarif"] {
            let resp = app
                .http
                .get(app.url(&format!("/api/v1/runs/{id}/{suffix}")))
                .send()
                .await
                .expect("GET");
            assert_eq!(resp.status(), 409, "{} {suffix}", db.name());
            assert_eq!(resp.headers()["content-type"], "application/problem+json");
            let problem: Value = resp.json().await.expect("problem json");
            assert_eq!(problem["status"], 409);
            assert_eq!(problem["run_status"], "queued");
            assert!(
                problem["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("queued"))
            );

            let unknown = uuid::Uuid::new_v4();
            let (status, problem) = app
                .get_json(&format!("/api/v1/runs/{unknown}/{suffix}"))
                .await;
            assert_eq!(status, 404, "{suffix}");
            assert_eq!(problem["status"], 404);
            let (status, _) = app
                .get_json(&format!("/api/v1/runs/not-a-uuid/{suffix}"))
                .await;
            assert_eq!(
                status, 404,
                "a malformed id is not found, as on the run itself"
            );
        }
        for other in ["report.pdf", "report.xml", "report", "report.json.gz"] {
            let (status, problem) = app.get_json(&format!("/api/v1/runs/{id}/{other}")).await;
            assert_eq!(status, 404, "{other}");
            assert_eq!(problem["status"], 404);
        }
    }
}

#[tokio::test]
async fn the_report_schema_is_published() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let resp = app
        .http
        .get(app.url("/api/v1/schema/report.json"))
        .send()
        .await
        .expect("GET schema");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/schema+json");
    let schema: Value = resp.json().await.expect("schema json");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(jsonschema::draft202012::meta::is_valid(&schema));
    // Drift is caught: a field the schema does not know is refused.
    let validator = report_schema();
    let mut doc = serde_json::to_value(Report::from_check(
        "http://127.0.0.1:9/rcp",
        Err("unreachable"),
        &[],
    ))
    .expect("report");
    assert!(validator.is_valid(&doc));
    doc["surprise"] = json!(1);
    assert!(!validator.is_valid(&doc));
}

#[tokio::test]
async fn check_prints_every_format_valid_against_its_schema() {
    let tools = tools();
    let validator = report_schema();
    let targets = [
        ("rcp", rcp_reference(&[], Duration::ZERO).await, 0),
        (
            "rcp",
            rcp_reference(&["RCP-L1-001"], Duration::ZERO).await,
            1,
        ),
        ("mcp", mcp_reference(&[]).await, 0),
        ("mcp", mcp_reference(&["MCP-HDR-001"]).await, 1),
    ];
    for (suite, url, code) in &targets {
        let mut outputs = Vec::new();
        for format in ["json", "junit", "sarif", "text"] {
            let mut cmd = protocheck();
            cmd.args(["check", url, "--suite", suite, "--format", format]);
            let out = output(cmd).await;
            let stdout = String::from_utf8(out.stdout).expect("utf-8");
            assert_eq!(
                out.status.code(),
                Some(*code),
                "{suite} {url} {format}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            outputs.push(stdout);
        }
        let what = format!("check {suite} {url}");
        let doc: Value = serde_json::from_str(&outputs[0]).expect("--format json prints JSON");
        assert_report_valid(&validator, &doc, &what);
        assert!(doc["run"].is_null(), "a local check has no stored run");
        let report: Report = serde_json::from_value(doc).expect("a Report");
        assert_junit_matches(&report, &outputs[1], &what);
        let sarif: Value = serde_json::from_str(&outputs[2]).expect("--format sarif prints JSON");
        assert_sarif_matches(&report, &sarif, &what);
        assert!(
            outputs[3].contains("verdict: "),
            "{what}: text ends with the verdict: {}",
            outputs[3]
        );
        if let Some(tools) = &tools {
            tools.junit(&outputs[1], &what);
            tools.sarif(&sarif, &what);
        }
    }
}

#[tokio::test]
async fn a_stdio_target_gets_a_logical_location_in_sarif() {
    let tools = tools();
    let server = format!(
        "'{}' reference rcp --stdio --break RCP-L1-001",
        env!("CARGO_BIN_EXE_protocheck")
    );
    let mut outputs = Vec::new();
    for format in ["json", "junit", "sarif"] {
        let mut cmd = protocheck();
        cmd.args([
            "check", "--stdio", &server, "--suite", "rcp", "--format", format,
        ]);
        let out = output(cmd).await;
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(String::from_utf8(out.stdout).expect("utf-8"));
    }
    let doc: Value = serde_json::from_str(&outputs[0]).expect("json");
    assert_report_valid(&report_schema(), &doc, "stdio");
    assert!(
        doc["target"]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("stdio: ")),
        "{}",
        doc["target"]
    );
    let sarif: Value = serde_json::from_str(&outputs[2]).expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        assert!(r["locations"][0]["physicalLocation"].is_null(), "{r}");
        assert_eq!(r["locations"][0]["logicalLocations"][0]["kind"], "resource");
    }
    if let Some(tools) = &tools {
        tools.junit(&outputs[1], "stdio");
        tools.sarif(&sarif, "stdio");
    }
}

/// A target that answers everything with markup, CDATA terminators and
/// characters XML cannot hold.
async fn hostile_target() -> String {
    use axum::response::IntoResponse;
    const BODY: &str = "<script>alert(1)</script> ]]> <![CDATA[ x ]]> & \"' \u{0}\u{1b}[31m \u{FFFE}\u{FFFF} </testsuites>";
    let router = axum::Router::new().fallback(|| async {
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            BODY,
        )
            .into_response()
    });
    format!("{}/rcp", serve(router).await)
}

#[tokio::test]
async fn hostile_target_text_yields_well_formed_xml() {
    let tools = tools();
    let url = hostile_target().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("report.xml");
    let mut cmd = protocheck();
    cmd.args([
        "check", &url, "--suite", "rcp", "--format", "junit", "--output",
    ])
    .arg(&file);
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "a hostile target fails or cannot be judged: {stderr}"
    );
    let xml = std::fs::read_to_string(&file).expect("--output wrote the report");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let text: String = doc
        .descendants()
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("");
    if out.status.code() == Some(1) {
        assert!(
            text.contains("<script>alert(1)</script> ]]>"),
            "the hostile body is kept as text, escaped: {xml}"
        );
    }
    if let Some(tools) = &tools {
        let parsed = Command::new("xmllint")
            .arg("--noout")
            .arg(&file)
            .output()
            .expect("xmllint");
        assert!(
            parsed.status.success(),
            "xmllint parses it: {}",
            String::from_utf8_lossy(&parsed.stderr)
        );
        tools.junit(&xml, "hostile target");
    }

    // The same text in a report made directly: message, evidence and target.
    use protocheck::suite::{Exchange, Finding, Outcome, RequestRecord, ResponseRecord};
    let hostile = "<script>]]>\u{FFFF}\u{7}</script>";
    let finding = Finding {
        rule_id: "RCP-L0-003".into(),
        outcome: Outcome::Fail,
        message: format!("message {hostile}"),
        evidence: vec![Exchange {
            request: RequestRecord {
                line: format!("POST http://127.0.0.1:9/{hostile}"),
                headers: vec![],
                body: hostile.into(),
            },
            response: Some(ResponseRecord {
                status: Some(200),
                headers: vec![("x-evil".into(), hostile.into())],
                body: hostile.repeat(2000),
                truncated: true,
                elapsed_ms: 1,
            }),
            error: None,
        }],
        duration_ms: 1,
    };
    let report = Report::from_check(
        &format!("http://127.0.0.1:9/{hostile}"),
        Err(hostile),
        &[finding],
    );
    let xml = report.render(Format::Junit);
    roxmltree::Document::parse(&xml).expect("well-formed XML");
    assert!(
        xml.len() < 64 * 1024,
        "evidence is clipped: {} bytes",
        xml.len()
    );
    let sarif: Value = serde_json::from_str(&report.render(Format::Sarif)).expect("json");
    if let Some(tools) = &tools {
        tools.junit(&xml, "hostile report");
        tools.sarif(&sarif, "hostile report");
    }
}
