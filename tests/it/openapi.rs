//! The OpenAPI document at `/api/openapi.json`: it is OpenAPI 3.1, it documents
//! every route the API serves, and schemathesis, driving every documented
//! operation with generated good and bad input, finds no server error and no
//! answer that breaks the document.

use crate::common;

use common::app::{TestApp, mcp_reference, rcp_reference, worker_config};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// Every operation the router serves outside the HTML pages (`/`, `/runs/{id}`,
/// `/targets/{id}`, `/static/{name}`). A route added to the router must be
/// added here, and then the test fails until the document has it too.
const SERVED: &[(&str, &str)] = &[
    ("post", "/api/v1/runs"),
    ("get", "/api/v1/runs/{id}"),
    ("get", "/api/v1/runs/{id}/events"),
    ("get", "/api/v1/runs/{id}/attestation"),
    ("get", "/api/v1/runs/{id}/report.json"),
    ("get", "/api/v1/runs/{id}/report.junit.xml"),
    ("get", "/api/v1/runs/{id}/report.sarif"),
    ("get", "/api/v1/schema/report.json"),
    ("get", "/api/v1/rules"),
    ("get", "/api/v1/rules/{id}"),
    ("get", "/api/v1/targets/{id}"),
    ("get", "/api/v1/targets/{id}/runs"),
    ("get", "/api/v1/directory"),
    ("get", "/api/v1/directory/export.jsonl"),
    ("post", "/api/v1/targets/{id}/watch"),
    ("delete", "/api/v1/targets/{id}/watch"),
    ("get", "/api/v1/targets/{id}/badges"),
    ("post", "/api/v1/verify"),
    ("get", "/.well-known/protocheck/keys.json"),
    ("get", "/badge/{target}/{file}"),
    ("get", "/badge.svg"),
    ("get", "/badge.json"),
    ("get", "/targets/{target}/{suite}/latest"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/api/openapi.json"),
];

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Says on the real stderr (the harness captures `eprintln!` of passing tests)
/// that a part of a test did not run.
fn say_skipped(what: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}

async fn document(app: &TestApp) -> Value {
    let resp = app
        .http
        .get(app.url("/api/openapi.json"))
        .send()
        .await
        .expect("GET the document");
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    resp.json().await.expect("the document is JSON")
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_documents_every_served_route() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 30).await;
    let doc = document(&app).await;

    let version = doc["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3.1."), "{version}");
    assert_eq!(doc["info"]["title"], "protocheck");

    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                documented.insert((method.to_string(), path.clone()));
                let responses = op["responses"].as_object().expect("responses");
                assert!(!responses.is_empty(), "{method} {path} has no responses");
                // Errors of the API are problem documents; only readiness answers in text.
                for (status, response) in responses {
                    let response = match response.get("$ref").and_then(Value::as_str) {
                        Some(r) => {
                            let name = r.trim_start_matches("#/components/responses/");
                            doc["components"]["responses"]
                                .get(name)
                                .unwrap_or_else(|| panic!("{method} {path}: {r} is not defined"))
                        }
                        None => response,
                    };
                    if status.starts_with('4') || status == "500" {
                        let content = response["content"].as_object();
                        assert!(
                            content.is_some_and(|c| c.contains_key("application/problem+json")),
                            "{method} {path} {status} is not a problem document: {response}"
                        );
                    }
                }
            }
        }
    }
    let served: BTreeSet<(String, String)> = SERVED
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let unserved: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty(),
        "served but not documented: {undocumented:?}"
    );
    assert!(
        unserved.is_empty(),
        "documented but not in the list of served routes: {unserved:?}"
    );

    // The list is what the router serves: each route answers from its handler,
    // not from the fallback that answers unknown paths.
    let fallback = |body: &Value| {
        body["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("nothing is served at"))
    };
    for (method, path) in SERVED {
        let concrete = path
            .replace("{file}", "rcp.svg")
            .replace("{suite}", "rcp")
            .replace('{', "x")
            .replace('}', "");
        let req = match *method {
            "post" => app.http.post(app.url(&concrete)).body("{}"),
            _ => app.http.get(app.url(&concrete)),
        };
        let resp = req.send().await.expect("request");
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        assert!(!fallback(&body), "{method} {path} is not served: {body}");
    }
    let (status, body) = app.get_json("/api/v1/nothing-here").await;
    assert_eq!(status, 404);
    assert!(fallback(&body), "{body}");
}

/// Where `instance` breaks the document's component schema `name`.
fn violations(doc: &Value, name: &str, instance: &Value) -> Vec<String> {
    let schema = json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    let validator = jsonschema::draft202012::new(&schema).expect("a valid JSON Schema");
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn assert_matches(doc: &Value, name: &str, instance: &Value) {
    let errors = violations(doc, name, instance);
    assert!(
        errors.is_empty(),
        "{name} does not match the document: {errors:#?}\n{instance:#}"
    );
}

/// Schemathesis sees queued runs only (its app has no workers); finished runs
/// carry the verdicts, findings with evidence and attestations, checked here.
#[tokio::test]
async fn finished_runs_and_their_attestations_match_the_document() {
    let rcp = rcp_reference(&["RCP-L0-003"], Duration::ZERO).await;
    let mcp = mcp_reference(&["MCP-HDR-001"]).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(2, Duration::from_secs(30)));
        let doc = document(&app).await;
        for (url, suite) in [(&rcp, "rcp"), (&mcp, "mcp")] {
            let submitted = app.submit(&json!({"url": url, "suite": suite})).await;
            assert_matches(&doc, "SubmittedRun", &submitted);
            let id = submitted["id"].as_str().expect("id");
            let run = app.wait_finished(id, Duration::from_secs(60)).await;
            assert_eq!(run["status"], "failed", "{}: {run:#}", db.name());
            let findings = run["findings"].as_array().expect("findings");
            assert!(
                findings.iter().any(|f| f["evidence"].is_array()),
                "findings with evidence: {run:#}"
            );
            assert_matches(&doc, "RunView", &run);
            // The schemas say something: a verdict of the wrong shape breaks them.
            let mut broken = run.clone();
            broken["verdict"]["counts"]["fail"] = json!("many");
            assert!(!violations(&doc, "RunView", &broken).is_empty());

            let target = run["target_id"].as_str().expect("target id");
            let (status, history) = app
                .get_json(&format!("/api/v1/targets/{target}/runs"))
                .await;
            assert_eq!(status, 200);
            assert_matches(&doc, "HistoryPage", &history);
            let (status, badges) = app
                .get_json(&format!("/api/v1/targets/{target}/badges"))
                .await;
            assert_eq!(status, 200);
            assert_matches(&doc, "TargetBadges", &badges);

            let (status, envelope) = app
                .get_json(&format!("/api/v1/runs/{id}/attestation"))
                .await;
            assert_eq!(status, 200);
            assert_matches(&doc, "Envelope", &envelope);
            let verified: Value = app
                .post_json("/api/v1/verify", &envelope)
                .await
                .json()
                .await
                .expect("json");
            assert_eq!(verified["valid"], true, "{verified:#}");
            assert_matches(&doc, "Verification", &verified);
        }
        let (status, keys) = app.get_json("/.well-known/protocheck/keys.json").await;
        assert_eq!(status, 200);
        assert_matches(&doc, "Jwks", &keys);

        // A run submitted with an API key shows its owner and its webhook.
        let key = protocheck::api_keys::create_key(
            db.store.as_ref(),
            "ci",
            Some("Release team"),
            "60/min".parse().expect("rate"),
            1,
        )
        .await
        .expect("create key");
        let body = json!({"url": "http://127.0.0.1:9/rcp",
            "options": {"webhook_url": "http://127.0.0.1:9/hook/secret"}});
        let resp = app
            .http
            .post(app.url("/api/v1/runs"))
            .header("authorization", format!("Bearer {}", key.token))
            .json(&body)
            .send()
            .await
            .expect("POST");
        assert_eq!(resp.status(), 202);
        let submitted: Value = resp.json().await.expect("json");
        assert_eq!(submitted["owner"], "Release team");
        assert_matches(&doc, "SubmittedRun", &submitted);
        let id = submitted["id"].as_str().expect("id");
        let (_, run) = app.get_json(&format!("/api/v1/runs/{id}")).await;
        assert!(run["webhook"]["state"].is_string(), "{run:#}");
        assert_matches(&doc, "RunView", &run);
        pool.shutdown().await;
    }
}

/// A run judged on every MCP revision its target speaks: the API takes
/// `mcp_revision: all`, documents it, and its verdict of several parts
/// matches the document; a revision that is not one is a precise 422.
#[tokio::test]
async fn a_run_of_every_mcp_revision_matches_the_document() {
    use protocheck::reference::mcp::{McpReferenceConfig, ReferenceEra, serve_mcp_reference};
    let config = McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_era(ReferenceEra::DualEra);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    let url = format!("http://{addr}/mcp");

    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(60)));
    let doc = document(&app).await;
    let choices = &doc["components"]["schemas"]["McpRevision"]["enum"];
    assert!(
        choices
            .as_array()
            .is_some_and(|c| c.contains(&json!("all"))),
        "{choices}"
    );

    let resp = app
        .post_json(
            "/api/v1/runs",
            &json!({"url": url, "suite": "mcp", "options": {"mcp_revision": "latest"}}),
        )
        .await;
    assert_eq!(resp.status(), 422);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/problem+json"
    );
    let problem: Value = resp.json().await.expect("problem");
    assert_eq!(problem["field"], "options.mcp_revision", "{problem}");
    assert_eq!(
        problem["detail"],
        "options.mcp_revision is `latest`; use one of `newest`, `2026-07-28`, `2025-11-25`, `all`"
    );

    let submitted = app
        .submit(&json!({"url": url, "suite": "mcp", "options": {"mcp_revision": "all"}}))
        .await;
    assert_matches(&doc, "SubmittedRun", &submitted);
    let id = submitted["id"].as_str().expect("id");
    let run = app.wait_finished(id, Duration::from_secs(60)).await;
    assert_eq!(run["options"]["mcp_revision"], "all", "{run:#}");
    assert_eq!(
        run["verdict"]["revisions"].as_array().map(Vec::len),
        Some(2),
        "{run:#}"
    );
    assert_matches(&doc, "RunView", &run);
    let mut broken = run.clone();
    broken["verdict"]["revisions"][0]["counts"] = json!("many");
    assert!(!violations(&doc, "RunView", &broken).is_empty());

    // The report document says the same, and its schema knows the parts.
    let report = app
        .get_text(&format!("/api/v1/runs/{id}/report.json"))
        .await;
    let report: Value = serde_json::from_str(&report).expect("a JSON report");
    assert_eq!(report["verdict"], run["verdict"]);
    let schema: Value =
        serde_json::from_str(protocheck::report::SCHEMA).expect("the report schema");
    let validator = jsonschema::draft202012::new(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // The signed statement carries each revision's verdict too.
    let (status, envelope) = app
        .get_json(&format!("/api/v1/runs/{id}/attestation"))
        .await;
    assert_eq!(status, 200);
    let verified: Value = app
        .post_json("/api/v1/verify", &envelope)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(verified["valid"], true, "{verified:#}");
    assert_matches(&doc, "Verification", &verified);
    let predicate = &verified["statement"]["predicate"];
    assert_eq!(predicate["spec_revision"], "2026-07-28, 2025-11-25");
    assert_eq!(
        predicate["verdict"]["revisions"], run["verdict"]["revisions"],
        "{predicate:#}"
    );
    pool.shutdown().await;
}

/// A body is a JSON object: serde would read a struct from an array by
/// position, and the document says object.
#[tokio::test]
async fn bodies_and_options_that_are_not_objects_are_refused() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let url = "http://127.0.0.1:9/rcp";
        for (path, body, field) in [
            ("/api/v1/runs", json!([url]), "body"),
            (
                "/api/v1/runs",
                json!({"url": url, "options": [null, null]}),
                "options",
            ),
            (
                "/api/v1/runs",
                json!({"url": url, "max_age_s": 1u64 << 63}),
                "max_age_s",
            ),
            (
                "/api/v1/verify",
                json!(["e30=", "application/vnd.in-toto+json", []]),
                "body",
            ),
        ] {
            let resp = app.post_json(path, &body).await;
            assert_eq!(resp.status(), 422, "{path} {body}");
            let problem: Value = resp.json().await.expect("problem");
            assert_eq!(problem["field"], field, "{path} {body}: {problem}");
        }
        let (_, runs) = app.get_json("/api/v1/targets/anything/runs").await;
        assert_eq!(runs["status"], 404, "nothing was stored: {runs}");
    }
}

/// The schemathesis CLI named by `PROTOCHECK_SCHEMATHESIS`; `None` (with a
/// SKIPPED line) when it is not there, unless `PROTOCHECK_REQUIRE_TOOLS=1`.
fn schemathesis() -> Option<String> {
    let st = std::env::var("PROTOCHECK_SCHEMATHESIS")
        .ok()
        .filter(|p| std::path::Path::new(p).is_file());
    if st.is_none() {
        assert!(
            std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_SCHEMATHESIS names no schemathesis `st`"
        );
        say_skipped(
            "schemathesis run against the OpenAPI document; set PROTOCHECK_SCHEMATHESIS to its `st`",
        );
    }
    st
}

/// The checks every response must pass: every check of schemathesis 4.32 that
/// applies to an API without authentication or stateful links, except
/// `positive_data_acceptance` (a schema cannot say which strings are URLs
/// protocheck accepts, nor which base64 is a signed statement).
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
    response_headers_conformance,response_schema_conformance,negative_data_rejection,\
    missing_required_header,unsupported_method,allow_header_conformance";

#[tokio::test]
async fn schemathesis_finds_no_server_error_and_no_response_that_breaks_the_document() {
    let Some(st) = schemathesis() else {
        return;
    };
    for db in common::all_backends().await {
        // No workers: a submitted run is only queued, so no URL that
        // schemathesis generates is ever probed. A high submit limit keeps the
        // generated submissions from being throttled into 429s.
        let app = TestApp::start(&db, 1_000_000).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");
        let run = tokio::process::Command::new(&st)
            .args(["--config-file", config])
            .arg("run")
            .arg(app.url("/api/openapi.json"))
            .args(["--url", &app.base])
            .args(["--checks", CHECKS])
            .args(["--mode", "all"])
            // Stateful testing would follow links to runs it created, whose
            // progress streams stay open while the run is queued.
            .args(["--phases", "examples,coverage,fuzzing"])
            .args(["--max-examples", "30"])
            .args(["--seed", "8"])
            .args(["--generation-database", "none"])
            .args(["--max-redirects", "0"])
            .args(["--request-timeout", "10"])
            // One worker: the run is short anyway, and hypothesis is not
            // reliable when several threads generate at once.
            .args(["--workers", "1"])
            .arg("--no-color")
            .current_dir(dir.path())
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .kill_on_drop(true)
            .output();
        // A liveness bound on the tool, not a timing assertion.
        let out = tokio::time::timeout(Duration::from_secs(600), run)
            .await
            .expect("schemathesis finishes")
            .expect("schemathesis starts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "schemathesis found problems ({}):\n{stdout}\n{stderr}",
            db.name()
        );
        // It tested every documented operation but the document itself, which
        // schemathesis leaves out.
        let operations = SERVED.len() - 1;
        assert!(
            stdout.contains(&format!("Selected: {operations}/{operations}"))
                && stdout.contains(&format!("Tested: {operations}")),
            "schemathesis did not test every operation ({}):\n{stdout}",
            db.name()
        );
    }
}
