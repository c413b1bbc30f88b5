//! The REST API end to end: real HTTP on loopback, real databases (SQLite
//! always, Postgres when configured), in-process workers and the RCP reference server.

use crate::common;

use common::app::{TestApp, mcp_reference, rcp_reference, worker_config};
use protocheck::store::RunStatus;
use serde_json::{Value, json};
use std::time::Duration;

const FINISH: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_submitted_run_is_executed_and_its_findings_and_verdict_are_served() {
    let target = rcp_reference(&[], Duration::ZERO).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(2, Duration::from_secs(30)));

        let resp = app
            .post_json("/api/v1/runs", &json!({"url": target, "suite": "rcp"}))
            .await;
        assert_eq!(resp.status(), 202, "{}", db.name());
        let location = resp.headers()["location"]
            .to_str()
            .expect("location")
            .to_owned();
        let body: Value = resp.json().await.expect("json");
        assert_eq!(body["reason"], "queued");
        let id = body["id"].as_str().expect("id").to_owned();
        assert_eq!(location, format!("/api/v1/runs/{id}"));

        let run = app.wait_finished(&id, FINISH).await;
        assert_eq!(run["status"], "passed", "{}: {run:#}", db.name());
        assert_eq!(run["verdict"]["certified_level"], "L2", "{}", db.name());
        assert_eq!(run["verdict"]["passed"], true);
        assert!(run["duration_ms"].as_i64().is_some());
        let findings = run["findings"].as_array().expect("findings");
        assert!(
            findings.len() >= 10,
            "{}: only {} findings",
            db.name(),
            findings.len()
        );
        assert!(
            findings.iter().all(|f| f["outcome"] != "fail"),
            "{}: {findings:#?}",
            db.name()
        );
        let seqs: Vec<i64> = findings
            .iter()
            .map(|f| f["seq"].as_i64().expect("seq"))
            .collect();
        assert_eq!(
            seqs,
            (0..findings.len() as i64).collect::<Vec<_>>(),
            "findings in order, none lost"
        );
        let counts = &run["verdict"]["counts"];
        let total: u64 = ["pass", "fail", "warn", "info", "skip"]
            .iter()
            .map(|k| counts[k].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(
            total as usize,
            findings.len(),
            "verdict counts match the stored findings"
        );

        // The target and its history.
        let target_id = run["target_id"].as_str().expect("target id");
        let (status, t) = app.get_json(&format!("/api/v1/targets/{target_id}")).await;
        assert_eq!(status, 200);
        assert_eq!(t["protocol"], "rcp");
        let (status, history) = app
            .get_json(&format!("/api/v1/targets/{target_id}/runs"))
            .await;
        assert_eq!(status, 200);
        assert_eq!(history["runs"][0]["id"], id.as_str());

        // A fresh result is returned instead of a new run, unless forced.
        let again: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
        assert_eq!(again["id"], id.as_str());
        assert_eq!(again["reason"], "fresh-result");
        let forced = app
            .post_json(
                "/api/v1/runs",
                &json!({"url": target, "suite": "rcp", "force": true}),
            )
            .await;
        assert_eq!(forced.status(), 202);
        let forced: Value = forced.json().await.expect("json");
        assert_ne!(forced["id"], id.as_str());
        app.wait_finished(forced["id"].as_str().expect("id"), FINISH)
            .await;
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn auto_detects_rcp_and_the_progress_stream_replays_then_ends_with_the_verdict() {
    let target = rcp_reference(&[], Duration::ZERO).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let body: Value = app.submit(&json!({"url": target})).await;
        assert_eq!(body["suite"], "auto");
        let id = body["id"].as_str().expect("id").to_owned();
        let run = app.wait_finished(&id, FINISH).await;
        assert_eq!(run["status"], "passed", "{}: {run:#}", db.name());
        assert_eq!(run["verdict"]["suite"], "rcp");

        // A late subscriber first gets everything that already happened, then the verdict.
        let text = app.get_text(&format!("/api/v1/runs/{id}/events")).await;
        let findings = text.matches("event: finding").count();
        assert_eq!(
            findings,
            run["findings"].as_array().map_or(0, Vec::len),
            "{}",
            db.name()
        );
        assert!(text.contains("event: verdict"), "{text}");
        assert!(
            text.trim_end().ends_with('}'),
            "the verdict is the last event"
        );
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn live_progress_streams_findings_while_the_run_executes() {
    let target = rcp_reference(&[], Duration::from_millis(30)).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
        let id = body["id"].as_str().expect("id").to_owned();
        // Subscribe before any worker runs, then start one: every event arrives live.
        let stream = app
            .http
            .get(app.url(&format!("/api/v1/runs/{id}/events")))
            .send()
            .await
            .expect("events");
        assert_eq!(stream.headers()["content-type"], "text/event-stream");
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let text = tokio::time::timeout(FINISH, stream.text())
            .await
            .expect("stream ends")
            .expect("body");
        let run = app.wait_finished(&id, FINISH).await;
        // A `restart` voids the findings before it (the first claim sends one
        // too); a retried attempt under load replays its findings after it.
        let last_attempt = text.rsplit("event: restart").next().unwrap_or(&text);
        assert_eq!(
            last_attempt.matches("event: finding").count(),
            run["findings"].as_array().map_or(0, Vec::len),
            "{}: attempts {}, error {}",
            db.name(),
            run["attempts"],
            run["error"]
        );
        assert!(text.contains("event: verdict"));
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn an_active_run_is_deduplicated_and_idempotency_keys_are_honoured() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let req = json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"});
        let first: Value = app
            .post_json("/api/v1/runs", &req)
            .await
            .json()
            .await
            .expect("json");
        let second = app
            .post_json(
                "/api/v1/runs",
                &json!({"url": "HTTP://127.0.0.1:9/rcp#x", "suite": "rcp"}),
            )
            .await;
        assert_eq!(second.status(), 200, "{}", db.name());
        let second: Value = second.json().await.expect("json");
        assert_eq!(second["id"], first["id"], "the canonical URL dedups");
        assert_eq!(second["reason"], "already-active");
        // A trailing slash names another resource, which a server may refuse.
        let slash: Value = app
            .submit(&json!({"url": "http://127.0.0.1:9/rcp/", "suite": "rcp"}))
            .await;
        assert_ne!(slash["id"], first["id"], "{}", db.name());
        // Different options are different work.
        let other: Value = app.submit(&json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp", "options": {"request_timeout_ms": 500}})).await;
        assert_ne!(other["id"], first["id"]);

        let keyed = |body: Value| {
            app.http
                .post(app.url("/api/v1/runs"))
                .header("idempotency-key", "ci-build-42")
                .json(&body)
                .send()
        };
        let a = keyed(json!({"url": "http://127.0.0.1:10/rcp", "suite": "rcp"}))
            .await
            .expect("post");
        assert_eq!(a.status(), 202);
        let a: Value = a.json().await.expect("json");
        let b = keyed(json!({"suite": "rcp", "url": "http://127.0.0.1:10/rcp"}))
            .await
            .expect("post");
        assert_eq!(b.status(), 200);
        let b: Value = b.json().await.expect("json");
        assert_eq!(b["id"], a["id"]);
        assert_eq!(b["reason"], "idempotent-replay");
        let c = keyed(json!({"url": "http://127.0.0.1:11/rcp", "suite": "rcp"}))
            .await
            .expect("post");
        assert_eq!(c.status(), 422);
        assert_eq!(c.headers()["content-type"], "application/problem+json");
    }
}

#[tokio::test]
async fn bad_input_gets_a_precise_problem_and_nothing_is_stored() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 1000).await;
        let long = format!("http://example.com/{}", "a".repeat(2100));
        let cases: Vec<(Value, u16, &str)> = vec![
            (json!({"url": "not a url"}), 422, "could not be parsed"),
            (json!({"url": "ftp://example.com/x"}), 422, "scheme `ftp`"),
            (
                json!({"url": "http://user:pw@example.com/"}),
                422,
                "credentials",
            ),
            (json!({"url": long}), 422, "limit is 2048"),
            // Input a parser would rewrite into another URL is refused, not normalised.
            (json!({"url": "http://exam\r\nple.com/mcp"}), 422, "U+000D"),
            (json!({"url": "http://ex\u{AD}ample.com/"}), 422, "U+00AD"),
            (
                json!({"url": "http:///example.com/mcp"}),
                422,
                "must start with `http://`",
            ),
            (json!({"url": "http://example.com:0/mcp"}), 422, "port 0"),
            // Null is not a suite; leaving the member out means `auto`.
            (
                json!({"url": "http://example.com/", "suite": null}),
                422,
                "not null; leave it out",
            ),
            (
                json!({"url": "http://example.com/", "suite": "smtp"}),
                422,
                "suite `smtp` is unknown",
            ),
            (
                json!({"url": "http://example.com/", "options": {"colour": "red"}}),
                422,
                "unknown field `colour`",
            ),
            (
                json!({"url": "http://example.com/", "options": {"profile": "fast"}}),
                422,
                "profile `fast`",
            ),
            (
                json!({"url": "http://example.com/", "options": {"bearer_token": "s3cret"}}),
                422,
                "bearer_token is not accepted",
            ),
            (
                json!({"url": "http://example.com/", "max_age_s": -1}),
                422,
                "max_age_s",
            ),
            // #31 item 10: options nobody will read are refused, naming the field.
            (
                json!({"url": "http://example.com/", "suite": "mcp", "options": {"server_json": 123}}),
                422,
                "options.server_json must be",
            ),
            (
                json!({"url": "http://example.com/", "suite": "mcp", "options": {"server_json": "neither"}}),
                422,
                "options.server_json must be",
            ),
            (
                json!({"url": "http://example.com/", "suite": "rcp", "options": {"mcp_revision": "2025-11-25"}}),
                422,
                "options.mcp_revision applies to the mcp suite only",
            ),
            (
                json!({"url": "http://example.com/", "suite": "rcp", "options": {"allow_tool_calls": true}}),
                422,
                "options.allow_tool_calls applies to the mcp suite only",
            ),
            (
                json!({"url": "http://example.com/", "suite": "mcp", "options": {"profile": "reference"}}),
                422,
                "options.profile applies to the rcp suite only",
            ),
            (
                json!({"URL": "http://example.com/"}),
                422,
                "unknown field `URL`",
            ),
            (json!({}), 422, "missing field `url`"),
        ];
        for (body, status, needle) in cases {
            let resp = app.post_json("/api/v1/runs", &body).await;
            assert_eq!(resp.status().as_u16(), status, "{}: {body}", db.name());
            assert_eq!(resp.headers()["content-type"], "application/problem+json");
            let problem: Value = resp.json().await.expect("problem json");
            assert_eq!(problem["status"], status);
            let detail = problem["detail"].as_str().unwrap_or_default();
            assert!(
                detail.contains(needle),
                "{body}: detail `{detail}` lacks `{needle}`"
            );
        }

        let raw = |body: &'static str, ctype: &'static str| {
            app.http
                .post(app.url("/api/v1/runs"))
                .header("content-type", ctype)
                .body(body)
                .send()
        };
        let r = raw("{\"url\": ", "application/json").await.expect("post");
        assert_eq!(r.status(), 400, "malformed JSON");
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let r = raw(
            "url=http://example.com",
            "application/x-www-form-urlencoded",
        )
        .await
        .expect("post");
        assert_eq!(r.status(), 415);
        let huge = format!(
            "{{\"url\": \"http://example.com/\", \"pad\": \"{}\"}}",
            "x".repeat(200_000)
        );
        let r = app
            .http
            .post(app.url("/api/v1/runs"))
            .header("content-type", "application/json")
            .body(huge)
            .send()
            .await
            .expect("post");
        assert_eq!(r.status(), 413);

        for path in [
            "/api/v1/runs/0191f0a0-0000-7000-8000-000000000000",
            "/api/v1/runs/nope",
            "/api/v1/targets/nope",
            "/api/v1/nothing",
        ] {
            let (status, problem) = app.get_json(path).await;
            assert_eq!(status, 404, "{path}");
            assert_eq!(problem["status"], 404);
        }

        let stored: i64 = db
            .store
            .count_by_status()
            .await
            .expect("counts")
            .iter()
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            stored,
            0,
            "{}: refused submissions left runs behind",
            db.name()
        );
    }
}

#[tokio::test]
async fn submissions_are_rate_limited_per_client_address_and_reads_are_not() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 3).await;
    for n in 0..3 {
        let r = app
            .post_json(
                "/api/v1/runs",
                &json!({"url": format!("http://127.0.0.1:{}/rcp", 20 + n)}),
            )
            .await;
        assert!(r.status().is_success(), "submission {n}");
    }
    let r = app
        .post_json("/api/v1/runs", &json!({"url": "http://127.0.0.1:30/rcp"}))
        .await;
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!(retry >= 1);
    let problem: Value = r.json().await.expect("json");
    assert_eq!(problem["retry_after_s"], retry);
    for _ in 0..10 {
        assert_eq!(
            app.get_json("/api/v1/runs/nope").await.0,
            404,
            "reads are never limited"
        );
    }
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        app.post_json("/api/v1/runs", &json!({"url": "http://127.0.0.1:9/rcp"}))
            .await;
        for path in ["/healthz", "/readyz"] {
            let r = app.http.get(app.url(path)).send().await.expect("get");
            assert_eq!(r.status(), 200, "{path}");
        }
        let text = app.get_text("/metrics").await;
        assert!(
            text.contains("protocheck_queue_depth 1"),
            "{}: {text}",
            db.name()
        );
        assert!(
            text.contains("protocheck_runs{status=\"queued\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("protocheck_http_request_duration_seconds_bucket"),
            "{text}"
        );
        assert!(text.contains("route=\"/api/v1/runs\""), "{text}");
    }
}

#[tokio::test]
async fn history_is_paginated_newest_first() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let body: Value = app.submit(&json!({"url": "http://127.0.0.1:9/rcp", "options": {"request_timeout_ms": 100 + n}})).await;
        ids.push(body["id"].as_str().expect("id").to_owned());
    }
    let (_, run) = app.get_json(&format!("/api/v1/runs/{}", ids[0])).await;
    let target = run["target_id"].as_str().expect("target").to_owned();
    let mut seen = Vec::new();
    let mut path = format!("/api/v1/targets/{target}/runs?limit=2");
    loop {
        let (status, page) = app.get_json(&path).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(
            page["runs"]
                .as_array()
                .expect("runs")
                .iter()
                .map(|r| r["id"].as_str().expect("id").to_owned()),
        );
        match page["links"]["next"].as_str() {
            Some(next) => path = next.to_owned(),
            None => break,
        }
    }
    ids.reverse();
    assert_eq!(seen, ids);
    assert_eq!(
        app.get_json(&format!("/api/v1/targets/{target}/runs?limit=0"))
            .await
            .0,
        422
    );
    assert_eq!(
        app.get_json(&format!("/api/v1/targets/{target}/runs?before=zzz"))
            .await
            .0,
        422
    );
}

#[tokio::test]
async fn a_run_that_cannot_complete_ends_as_error_with_its_reason() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        // Nothing listens on port 9 (discard): connection refused, retried, then error.
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.limits.connect_timeout = Duration::from_secs(2);
        let pool = app.workers(cfg);
        let body: Value = app
            .submit(&json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
            .await;
        let run = app
            .wait_finished(body["id"].as_str().expect("id"), FINISH)
            .await;
        assert_eq!(run["status"], "error", "{}: {run:#}", db.name());
        assert_eq!(run["attempts"], 3, "retried up to max_attempts");
        let reason = run["error"].as_str().unwrap_or_default();
        assert!(
            reason.contains("could not be reached") && reason.contains("gave up after 3 attempts"),
            "{reason}"
        );
        pool.shutdown().await;

        // A service that refuses private targets ends such a run at once, without retrying.
        let mut strict = worker_config(1, Duration::from_secs(30));
        strict.policy = protocheck::transport::AddressPolicy::PublicOnly;
        let pool = app.workers(strict);
        let body: Value = app
            .submit(&json!({"url": "http://127.0.0.1:9/other", "suite": "rcp"}))
            .await;
        let run = app
            .wait_finished(body["id"].as_str().expect("id"), FINISH)
            .await;
        assert_eq!(run["status"], "error");
        assert_eq!(run["attempts"], 1);
        assert!(
            run["error"]
                .as_str()
                .unwrap_or_default()
                .contains("loopback"),
            "{run:#}"
        );
        pool.shutdown().await;
        assert!(
            db.store
                .count_by_status()
                .await
                .expect("counts")
                .iter()
                .all(|(s, n)| *s == RunStatus::Error || *n == 0)
        );
    }
}

#[tokio::test]
async fn auto_on_a_server_that_speaks_neither_protocol_ends_as_error_saying_what_was_tried() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        // protocheck's own API answers both probes with a 404 problem document.
        let url = app.url("/not-a-protocol-server");
        let body: Value = app.submit(&json!({"url": url})).await;
        let run = app
            .wait_finished(body["id"].as_str().expect("id"), FINISH)
            .await;
        assert_eq!(run["status"], "error", "{}: {run:#}", db.name());
        assert_eq!(
            run["attempts"], 1,
            "a target that speaks neither protocol is not retried"
        );
        let reason = run["error"].as_str().unwrap_or_default();
        assert!(
            reason.contains("server/discover")
                && reason.contains("`info`")
                && reason.contains("404"),
            "{reason}"
        );
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn an_mcp_run_through_the_api_is_graded() {
    let good = mcp_reference(&[]).await;
    let broken = mcp_reference(&["MCP-HDR-001"]).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(2, Duration::from_secs(30)));
        let a: Value = app.submit(&json!({"url": good, "suite": "mcp"})).await;
        let b: Value = app.submit(&json!({"url": broken})).await;
        let a = app
            .wait_finished(a["id"].as_str().expect("id"), FINISH)
            .await;
        assert_eq!(a["status"], "passed", "{}: {a:#}", db.name());
        assert_eq!(a["verdict"]["grade"], "strict");
        assert_eq!(a["verdict"]["suite"], "mcp");
        let b = app
            .wait_finished(b["id"].as_str().expect("id"), FINISH)
            .await;
        assert_eq!(
            b["status"], "failed",
            "auto detected MCP and judged it: {b:#}"
        );
        assert_eq!(b["verdict"]["grade"], "non-compliant");
        let failed: Vec<&str> = b["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["outcome"] == "fail")
            .filter_map(|f| f["rule_id"].as_str())
            .collect();
        assert_eq!(failed, ["MCP-HDR-001"]);
        pool.shutdown().await;
    }
}

/// A `%` that is not a percent-escape is refused, by the API and by the form
/// alike, with the same message: never passed on as it is or rewritten.
#[tokio::test]
async fn broken_percent_escapes_are_refused_by_the_api_and_the_form() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let token = "0123456789abcdef0123456789abcdef";
    for url in ["http://127.0.0.1:9/%zz", "http://127.0.0.1:9/rcp%4"] {
        let resp = app.post_json("/api/v1/runs", &json!({"url": url})).await;
        assert_eq!(resp.status(), 422, "{url}");
        let problem: Value = resp.json().await.expect("problem");
        assert_eq!(problem["field"], "url", "{problem}");
        let detail = problem["detail"].as_str().expect("detail").to_owned();
        assert!(detail.contains("not a percent-escape"), "{detail}");

        let page = app
            .http
            .post(app.url("/"))
            .header("cookie", format!("pc_csrf={token}"))
            .form(&[("url", url), ("csrf", token)])
            .send()
            .await
            .expect("POST /");
        assert_eq!(page.status(), 422, "{url}");
        let html = page.text().await.expect("html");
        // The page escapes the message for HTML; its words are the API's.
        assert!(html.contains("not a percent-escape"), "{html}");
    }
    let queued = db.store.recent_runs(10).await.expect("runs");
    assert!(queued.is_empty(), "nothing was queued: {queued:?}");
}

/// #31 item 11: a target that only ever answers redirects, or bodies that
/// are not JSON-RPC (invalid, too deep, too large), gets its MCP verdict (it
/// fails the handshake) but is not recorded as speaking MCP; a real MCP
/// server is.
#[tokio::test]
async fn a_target_that_never_answers_json_rpc_is_not_recorded_as_speaking_mcp() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 1000).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let redirector = common::app::serve(axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::FOUND,
            [(axum::http::header::LOCATION, "https://example.invalid/")],
        )
    }))
    .await;
    // 200s with bodies that are not JSON-RPC: not JSON, nested past any
    // parser's depth, and larger than protocheck reads.
    let answering = |body: String| {
        common::app::serve(axum::Router::new().fallback(move || {
            let body = body.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body,
                )
            }
        }))
    };
    let invalid = answering("{\"jsonrpc\": \"2.0\", \"result\": ".to_owned()).await;
    let deep = answering(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))).await;
    let huge = answering(format!("\"{}\"", "a".repeat(3 * 1024 * 1024))).await;
    let real = mcp_reference(&[]).await;
    for (url, protocol) in [
        (format!("{redirector}/mcp"), Value::Null),
        (format!("{invalid}/mcp"), Value::Null),
        (format!("{deep}/mcp"), Value::Null),
        (format!("{huge}/mcp"), Value::Null),
        (real, json!("mcp")),
    ] {
        let submitted = app.submit(&json!({"url": url, "suite": "mcp"})).await;
        let id = submitted["id"].as_str().expect("id").to_owned();
        let run = app.wait_finished(&id, Duration::from_secs(120)).await;
        assert!(
            matches!(run["status"].as_str(), Some("passed" | "failed")),
            "a verdict: {run}"
        );
        let target_id = run["target_id"].as_str().expect("target id");
        let (status, t) = app.get_json(&format!("/api/v1/targets/{target_id}")).await;
        assert_eq!(status, 200);
        assert_eq!(t["protocol"], protocol, "{url}: {run}");
    }
    pool.shutdown().await;
}
