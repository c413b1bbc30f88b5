//! Badges over real HTTP on loopback, on both backends: every state draws a
//! well-formed SVG and a shields endpoint document, caching validators work, hostile
//! text stays inert, and a run against the RCP reference server shows on its badge,
//! which links to its report and whose attestation verifies with the published key.

use crate::common;

use common::app::{TestApp, serve, worker_config};
use protocheck::attest::{Jwks, KeySet};
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::{Inserted, NewRun, RunEnd, Store};
use protocheck::submit::Queue;
use protocheck::suite::{Counts, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail};
use protocheck::target::CanonicalUrl;
use protocheck::web::{self, AppState};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const FINISH: Duration = Duration::from_secs(60);

fn rcp(level: &str, declared: Option<&str>, honest: Option<bool>) -> Verdict {
    Verdict {
        suite: SuiteId::Rcp,
        suite_version: "0.1.0".into(),
        spec_revision: "RCP/1 1.0".into(),
        passed: level != "none" && honest != Some(false),
        summary: level.into(),
        counts: Counts::default(),
        detail: VerdictDetail::Rcp {
            profile: "spec".into(),
            certified_level: level.into(),
            declared_level: declared.map(str::to_owned),
            honest,
            protocol_observed: true,
            report: Default::default(),
        },
    }
}

fn mcp(grade: &str, fail: u32) -> Verdict {
    Verdict {
        suite: SuiteId::Mcp,
        suite_version: "0.1.0".into(),
        spec_revision: "2026-07-28".into(),
        passed: grade != "non-compliant",
        summary: grade.into(),
        counts: Counts {
            fail,
            ..Counts::default()
        },
        detail: VerdictDetail::mcp(grade),
    }
}

/// Stores the target `url` (as given: the store does not validate) and returns its key.
async fn target(store: &dyn Store, url: &str) -> String {
    let key = protocheck::target::target_key(url);
    store.upsert_target(&key, url, 1).await.expect("target");
    key
}

async fn queue_run(store: &dyn Store, key: &str, suite: &str) -> Uuid {
    let new = NewRun {
        id: Uuid::now_v7(),
        target_id: key.to_owned(),
        suite: SuiteChoice::parse(suite).expect("a suite name"),
        options: RunOptions::default(),
        webhook_url: None,
        dedup_key: Uuid::new_v4().to_string(),
        max_attempts: 3,
        created_at_ms: protocheck::now_ms(),
    };
    let Ok(Inserted::New(run)) = store.insert_run(&new).await else {
        panic!("a new run");
    };
    run.id
}

/// Queues, claims and ends a run of `key`, as a worker would (no other run queued).
async fn finish_run(store: &dyn Store, key: &str, suite: &str, end: RunEnd) -> Uuid {
    finish_at(store, key, suite, end, protocheck::now_ms()).await
}

/// [`finish_run`], ended as if at `now` (milliseconds).
async fn finish_at(store: &dyn Store, key: &str, suite: &str, end: RunEnd, now: i64) -> Uuid {
    let id = queue_run(store, key, suite).await;
    let claimed = store
        .claim_run("w", protocheck::now_ms(), 60_000)
        .await
        .expect("claim");
    assert_eq!(claimed.map(|r| r.id), Some(id));
    assert!(
        store
            .finish_run(id, "w", &end, "0.1.0", now + 1)
            .await
            .expect("finish")
    );
    id
}

/// The message of a verdict's shields JSON without the day it ends with
/// (` · YYYY-MM-DD`, which the endpoint schema has no other place for).
fn json_message_without_day(doc: &Value) -> &str {
    let said = doc["message"].as_str().unwrap_or_default();
    match said.rsplit_once(" · ") {
        Some((message, day))
            if day.len() == 10 && day.as_bytes()[4] == b'-' && day.as_bytes()[7] == b'-' =>
        {
            message
        }
        _ => panic!("no day at the end of the message: {doc}"),
    }
}

/// A badge as a client sees it.
struct Got {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

async fn get(app: &TestApp, path: &str, if_none_match: Option<&str>) -> Got {
    let mut req = app.http.get(app.url(path));
    if let Some(tag) = if_none_match {
        req = req.header("if-none-match", tag);
    }
    let resp = req.send().await.expect("GET");
    Got {
        status: resp.status().as_u16(),
        headers: resp.headers().clone(),
        body: resp.text().await.expect("body"),
    }
}

/// The SVG parses as XML; returns (title, the texts drawn, the message fill).
fn parse_svg(svg: &str) -> (String, Vec<String>, String) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert!(
        doc.descendants().all(|n| !matches!(
            n.tag_name().name(),
            "script" | "foreignObject" | "a" | "image" | "use"
        )),
        "nothing active in {svg}"
    );
    let title = root
        .children()
        .find(|n| n.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(root.attribute("aria-label"), Some(title.as_str()));
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("aria-hidden").is_none())
        .map(|n| n.text().unwrap_or_default().to_owned())
        .collect();
    let fill = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .nth(2)
        .and_then(|r| r.attribute("fill"))
        .unwrap_or_default()
        .to_owned();
    (title, texts, fill)
}

fn assert_svg_headers(got: &Got, what: &str) {
    assert_eq!(got.headers["content-type"], "image/svg+xml", "{what}");
    assert_eq!(
        got.headers["content-security-policy"], "default-src 'none'; style-src 'unsafe-inline'",
        "{what}"
    );
    assert_eq!(got.headers["x-content-type-options"], "nosniff", "{what}");
    assert_eq!(got.headers["cache-control"], "max-age=300", "{what}");
    assert!(got.headers.contains_key("etag"), "{what}");
}

#[tokio::test]
async fn every_state_draws_a_well_formed_badge_and_endpoint_json() {
    let schema = jsonschema::validator_for(&json!({
        "type": "object",
        "required": ["schemaVersion", "label", "message", "color", "isError", "cacheSeconds"],
        "additionalProperties": false,
        "properties": {
            "schemaVersion": {"const": 1},
            "label": {"type": "string"},
            "message": {"type": "string", "minLength": 1},
            "color": {"type": "string"},
            "isError": {"type": "boolean"},
            "cacheSeconds": {"type": "integer", "minimum": 0},
        },
    }))
    .expect("schema");
    for db in common::all_backends().await {
        let b = db.name();
        let s = db.store.as_ref();
        let app = TestApp::start(&db, 100).await;
        let mut cases: Vec<(String, &str, &str, &str, &str)> = vec![(
            "0123456789abcdef01234567".into(),
            "rcp",
            "RCP",
            "unknown",
            "lightgrey",
        )];
        let verdicts = [
            (
                "rcp",
                rcp("L2", Some("L2"), Some(true)),
                "L2",
                "brightgreen",
            ),
            ("rcp", rcp("L1", None, None), "L1", "green"),
            ("rcp", rcp("L0", None, None), "L0", "yellowgreen"),
            ("rcp", rcp("none", None, None), "none", "red"),
            (
                "rcp",
                rcp("none", Some("L2"), Some(false)),
                "L2 OVERCLAIMED",
                "red",
            ),
            ("mcp", mcp("strict", 0), "strict", "brightgreen"),
            ("mcp", mcp("compliant", 0), "compliant", "green"),
            ("mcp", mcp("non-compliant", 3), "3 failing", "red"),
        ];
        for (n, (suite, verdict, message, color)) in verdicts.into_iter().enumerate() {
            let key = target(s, &format!("http://verdict-{n}.example/{suite}")).await;
            finish_run(s, &key, suite, RunEnd::Verdict(verdict)).await;
            let label = if suite == "rcp" {
                "RCP"
            } else {
                "MCP 2026-07-28"
            };
            cases.push((key, suite, label, message, color));
        }
        let errored = target(s, "http://errored.example/rcp").await;
        finish_run(s, &errored, "rcp", RunEnd::Error("unreachable".into())).await;
        cases.push((errored, "rcp", "RCP", "error", "lightgrey"));
        let never = target(s, "http://never.example/rcp").await;
        cases.push((never, "rcp", "RCP", "unknown", "lightgrey"));
        // Pending last: a queued run would be claimed by finish_run above.
        let pending = target(s, "http://pending.example/rcp").await;
        queue_run(s, &pending, "auto").await;
        cases.push((pending.clone(), "rcp", "RCP", "pending", "blue"));

        for (key, suite, label, message, color) in &cases {
            let what = format!("{b} {key} {suite} {message}");
            let got = get(&app, &format!("/badge/{key}/{suite}.svg"), None).await;
            assert_eq!(got.status, 200, "{what}");
            if *message != "pending" {
                assert_svg_headers(&got, &what);
            }
            let (title, texts, _) = parse_svg(&got.body);
            assert_eq!(
                texts,
                vec![label.to_string(), message.to_string()],
                "{what}"
            );
            assert!(
                title.starts_with(&format!("{label}: {message}")),
                "{what}: {title}"
            );

            let got = get(&app, &format!("/badge/{key}/{suite}.json"), None).await;
            assert_eq!(got.status, 200, "{what}");
            assert_eq!(got.headers["content-type"], "application/json");
            let doc: Value = serde_json::from_str(&got.body).unwrap();
            assert!(schema.is_valid(&doc), "{what}: {doc}");
            assert_eq!(doc["label"], *label, "{what}");
            // A verdict's JSON carries its day beside the message (the
            // schema has no other place for it); the SVG, in its title.
            let said = doc["message"].as_str().unwrap_or_default();
            match said.strip_prefix(&format!("{message} · ")) {
                Some(day) => {
                    assert!(
                        day.len() == 10 && day.as_bytes()[4] == b'-' && day.as_bytes()[7] == b'-',
                        "{what}: {said}"
                    );
                    assert!(
                        title.ends_with(&format!("— verdict of {day}")),
                        "{what}: {title}"
                    );
                }
                None => assert_eq!(said, *message, "{what}"),
            }
            assert_eq!(doc["color"], *color, "{what}");
            assert_eq!(
                doc["isError"],
                matches!(*message, "unknown" | "error"),
                "{what}"
            );
        }
        // A pending badge is cached briefly: it is about to change.
        let got = get(&app, &format!("/badge/{pending}/rcp.svg"), None).await;
        assert_eq!(got.headers["cache-control"], "max-age=30", "{b}");
        let got = get(&app, &format!("/badge/{pending}/rcp.json"), None).await;
        let doc: Value = serde_json::from_str(&got.body).unwrap();
        assert_eq!(doc["cacheSeconds"], 30, "{b}");
    }
}

#[tokio::test]
async fn bad_badge_urls_get_problems_and_unknown_targets_a_grey_badge() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    for path in [
        "/badge/<script>/rcp.svg",
        "/badge/0123456789abcdef01234567/rcp.svg",
        "/badge.svg?url=http://nobody.example/rcp&suite=rcp",
    ] {
        let got = get(&app, path, None).await;
        assert_eq!(got.status, 200, "{path}");
        let (title, texts, fill) = parse_svg(&got.body);
        assert_eq!(texts, ["RCP", "unknown"], "{path}");
        assert_eq!(
            title, "RCP: unknown",
            "{path}: nothing of the request is echoed"
        );
        assert_eq!(fill, "#9f9f9f");
    }
    for (path, status) in [
        ("/badge/0123456789abcdef01234567/xyz.svg", 404),
        ("/badge/0123456789abcdef01234567/rcp.png", 404),
        ("/badge.svg?url=ftp://x/&suite=rcp", 422),
        ("/badge.svg?url=http://x/&suite=xyz", 422),
        ("/badge.json?url=http://x/", 400),
        ("/targets/0123456789abcdef01234567/rcp/latest", 404),
        ("/targets/0123456789abcdef01234567/xyz/latest", 404),
        ("/api/v1/targets/0123456789abcdef01234567/badges", 404),
    ] {
        let got = get(&app, path, None).await;
        assert_eq!(got.status, status, "{path}: {}", got.body);
        assert_eq!(
            got.headers["content-type"], "application/problem+json",
            "{path}"
        );
    }
    // A query without its `url` is a malformed query, not a malformed body.
    let got = get(&app, "/badge.svg?suite=mcp", None).await;
    assert_eq!(got.status, 400, "{}", got.body);
    let problem: Value = serde_json::from_str(&got.body).expect("problem");
    assert_eq!(problem["title"], "Malformed query string", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("url"),
        "{problem}"
    );
}

#[tokio::test]
async fn hostile_text_draws_an_inert_well_formed_badge() {
    for db in common::all_backends().await {
        let b = db.name();
        let s = db.store.as_ref();
        let app = TestApp::start(&db, 100).await;
        // Stored as is, as if it had come through: the badge must not trust the store.
        let url = "http://evil.example/\"><script>alert(1)</script><x a='&amp;\u{1}";
        let key = target(s, url).await;
        let declared = "<script>alert('L9')</script>";
        finish_run(
            s,
            &key,
            "rcp",
            RunEnd::Verdict(rcp("none", Some(declared), Some(false))),
        )
        .await;

        let got = get(&app, &format!("/badge/{key}/rcp.svg"), None).await;
        assert_eq!(got.status, 200, "{b}");
        assert!(!got.body.contains("<script"), "{b}: {}", got.body);
        assert!(!got.body.contains('\u{1}'), "{b}: no control characters");
        let (title, texts, _) = parse_svg(&got.body);
        assert_eq!(texts[1], "<script>ale… OVERCLAIMED", "{b}");
        assert!(
            title.contains("\"><script>alert(1)</script><x a='&amp;\u{FFFD}"),
            "{b}: {title}"
        );

        let got = get(&app, &format!("/badge/{key}/rcp.json"), None).await;
        let doc: Value = serde_json::from_str(&got.body).expect("valid JSON");
        assert_eq!(
            json_message_without_day(&doc),
            "<script>ale… OVERCLAIMED",
            "{b}"
        );
    }
}

/// A router serving `app` state with custom badge settings.
async fn app_with_max_age(db: &common::TestDb, max_age: Duration) -> String {
    app_with_badges(
        db,
        web::badge::BadgeSettings {
            max_age,
            public_url: Some("https://checks.example/".into()),
            ..web::badge::BadgeSettings::default()
        },
    )
    .await
}

/// A router serving `app` state with `badges` for its badge settings.
async fn app_with_badges(db: &common::TestDb, badges: web::badge::BadgeSettings) -> String {
    let queue = Queue::new(db.store.clone(), Arc::new(Notify::new()), 3);
    let options = web::WebOptions {
        badges,
        ..web::WebOptions::default()
    };
    let state = AppState::with_options(queue, RunEvents::new(), Metrics::new(), options);
    serve(web::app(state)).await
}

#[tokio::test]
async fn max_age_is_configurable_and_snippets_use_the_public_url() {
    let db = common::sqlite().await;
    let key = target(db.store.as_ref(), "http://configured.example/rcp").await;
    finish_run(
        db.store.as_ref(),
        &key,
        "rcp",
        RunEnd::Verdict(rcp("L1", None, None)),
    )
    .await;
    let base = app_with_max_age(&db, Duration::from_secs(3600)).await;
    let http = reqwest::Client::new();
    let resp = http
        .get(format!("{base}/badge/{key}/rcp.svg"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["cache-control"], "max-age=3600");
    let doc: Value = http
        .get(format!("{base}/badge/{key}/rcp.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["cacheSeconds"], 3600);
    let snippets: Value = http
        .get(format!("{base}/api/v1/targets/{key}/badges"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let badge = &snippets["badges"][0];
    let svg = format!("https://checks.example/badge/{key}/rcp.svg");
    let link = format!("https://checks.example/targets/{key}/rcp/latest");
    assert_eq!(badge["svg"], svg);
    assert_eq!(badge["message"], "L1");
    assert_eq!(
        badge["markdown"],
        format!("[![RCP conformance]({svg})]({link})")
    );
    assert_eq!(
        badge["html"],
        format!(r#"<a href="{link}"><img src="{svg}" alt="RCP conformance"></a>"#)
    );
    assert_eq!(
        badge["rst"],
        format!(".. image:: {svg}\n   :alt: RCP conformance\n   :target: {link}")
    );
    assert_eq!(
        badge["shields"],
        format!(
            "https://img.shields.io/endpoint?url=https%3A%2F%2Fchecks.example%2Fbadge%2F{key}%2Frcp.json"
        )
    );
}

/// An RCP reference server on `listener` until `stop`.
fn reference_on(listener: tokio::net::TcpListener, faults: &[&str], stop: CancellationToken) {
    let config = RcpReferenceConfig::new(faults.iter().copied()).expect("known faults");
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            rcp_router(config).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(stop.cancelled_owned())
        .await;
    });
}

async fn submit(app: &TestApp, url: &str) -> String {
    let resp = app
        .post_json(
            "/api/v1/runs",
            &json!({"url": url, "suite": "rcp", "force": true}),
        )
        .await;
    assert!(resp.status().is_success(), "{}", resp.status());
    let body: Value = resp.json().await.unwrap();
    body["id"].as_str().expect("run id").to_owned()
}

#[tokio::test]
async fn a_readme_badge_shows_the_latest_run_links_to_it_and_verifies() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(2, Duration::from_secs(30)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        reference_on(listener, &[], stop.clone());
        let url = format!("http://{addr}/rcp");
        let key = CanonicalUrl::parse(&url).unwrap().key();
        let svg_path = format!("/badge/{key}/rcp.svg");

        // Before any run: grey, and looking does not start one.
        let got = get(&app, &svg_path, None).await;
        assert_eq!(parse_svg(&got.body).1, ["RCP", "unknown"], "{b}");
        assert_eq!(db.store.get_target(&key).await.unwrap(), None, "{b}");

        let id = submit(&app, &url).await;
        let run = app.wait_finished(&id, FINISH).await;
        assert_eq!(run["status"], "passed", "{b}: {run}");
        assert_eq!(run["target_id"], key.as_str());

        // The badge shows the level at once, by key and by URL alike.
        let got = get(&app, &svg_path, None).await;
        assert_svg_headers(&got, b);
        let (title, texts, fill) = parse_svg(&got.body);
        assert_eq!(texts, ["RCP", "L2"], "{b}");
        assert_eq!(fill, "#4c1");
        assert!(
            title.starts_with(&format!("RCP: L2 — {url} — verdict of ")),
            "{title}"
        );
        let by_url = get(
            &app,
            &format!("/badge.svg?url={}&suite=rcp", url.replace(':', "%3A")),
            None,
        )
        .await;
        assert_eq!(by_url.body, got.body, "{b}");

        // ETag and 304.
        let etag = got.headers["etag"].to_str().unwrap().to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"'),
            "strong: {etag}"
        );
        let again = get(&app, &svg_path, Some(&etag)).await;
        assert_eq!(again.status, 304, "{b}");
        assert!(again.body.is_empty());
        assert_eq!(again.headers["etag"], etag.as_str());
        assert_eq!(again.headers["cache-control"], "max-age=300");
        let weak = get(&app, &svg_path, Some(&format!("\"x\", W/{etag}"))).await;
        assert_eq!(weak.status, 304, "{b}");
        let json = get(&app, &format!("/badge/{key}/rcp.json"), None).await;
        let json_etag = json.headers["etag"].to_str().unwrap().to_owned();
        assert_ne!(json_etag, etag, "each representation has its own validator");

        // The link behind the badge leads to the run's report.
        let resp = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(app.url(&format!("/targets/{key}/rcp/latest")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 302, "{b}");
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        assert_eq!(location, format!("/runs/{id}"));
        let report = app.http.get(app.url(&location)).send().await.unwrap();
        assert_eq!(report.status(), 200);
        let html = report.text().await.unwrap();
        assert!(
            html.contains(&format!("/api/v1/runs/{id}")),
            "{b}: the report of that run"
        );

        // The snippets point at this badge and this link.
        let (status, snippets) = app.get_json(&format!("/api/v1/targets/{key}/badges")).await;
        assert_eq!(status, 200, "{b}: {snippets}");
        let badge = &snippets["badges"][0];
        assert_eq!(
            snippets["badges"].as_array().unwrap().len(),
            1,
            "{b}: the detected protocol only"
        );
        assert_eq!(badge["svg"], app.url(&svg_path));
        assert_eq!(
            badge["link"],
            app.url(&format!("/targets/{key}/rcp/latest"))
        );
        assert_eq!(badge["message"], "L2");

        // Its attestation verifies with the published key.
        let (_, jwks) = app.get_json("/.well-known/protocheck/keys.json").await;
        let keys = KeySet::from_jwks(&serde_json::from_value::<Jwks>(jwks).unwrap()).unwrap();
        let envelope = app
            .http
            .get(app.url(&format!("/api/v1/runs/{id}/attestation")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let verified =
            protocheck::attest::verify::verify_json(envelope.as_bytes(), &keys).expect("verifies");
        assert_eq!(verified.statement.predicate.run_id, id);
        assert_eq!(
            verified
                .statement
                .predicate
                .verdict
                .certified_level
                .as_deref(),
            Some("L2")
        );
        let answer: Value = app
            .http
            .post(app.url("/api/v1/verify"))
            .header("content-type", "application/json")
            .body(envelope)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["valid"], true, "{b}: {answer}");

        // The server goes away: the next run cannot reach it. Within the stale
        // limit the badge keeps its verdict (dated) and links to the run that
        // gave it (#28: a run that could not reach the target does not undo
        // the last verdict until the stale limit, then "unreachable since").
        stop.cancel();
        let errored = submit(&app, &url).await;
        let run = app.wait_finished(&errored, FINISH).await;
        assert_eq!(run["status"], "error", "{b}: {run}");
        assert!(
            run["error"]
                .as_str()
                .is_some_and(|e| e.starts_with(protocheck::suite::context::UNREACHABLE_PREFIX)),
            "{b}: {run}"
        );
        let got = get(&app, &svg_path, None).await;
        assert_eq!(got.status, 200, "{b}");
        assert_eq!(parse_svg(&got.body).1, ["RCP", "L2"], "{b}");
        let resp = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(app.url(&format!("/targets/{key}/rcp/latest")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.headers()["location"], format!("/runs/{id}").as_str());

        // Back, but broken: the badge shows the new verdict. The reference still
        // declares L2, and now certifies nothing.
        let listener = tokio::net::TcpListener::bind(addr).await.expect("rebind");
        let stop = CancellationToken::new();
        reference_on(listener, &["RCP-L0-003"], stop.clone());
        let broken = submit(&app, &url).await;
        let run = app.wait_finished(&broken, FINISH).await;
        assert_eq!(run["status"], "failed", "{b}: {run}");
        let got = get(&app, &svg_path, None).await;
        let (_, texts, fill) = parse_svg(&got.body);
        assert_eq!(texts, ["RCP", "L2 OVERCLAIMED"], "{b}");
        assert_eq!(fill, "#e05d44");
        stop.cancel();
        pool.shutdown().await;
    }
}

/// A badge names the MCP revision its verdict certifies; for a run that
/// judged several, each revision beside its grade, in the colour of the
/// lowest grade (the run's combined grade), in the SVG and the shields JSON.
#[tokio::test]
async fn an_mcp_badge_names_each_revision_it_certifies() {
    let db = common::sqlite().await;
    let s = db.store.as_ref();
    let app = TestApp::start(&db, 100).await;
    let mut older = mcp("compliant", 0);
    older.spec_revision = "2025-11-25".into();
    let both = Verdict::of_revisions(vec![mcp("strict", 0), older.clone()], Vec::new())
        .expect("two parts");
    let mut failing_newer = mcp("non-compliant", 2);
    failing_newer.passed = false;
    let one_fails =
        Verdict::of_revisions(vec![failing_newer, older.clone()], Vec::new()).expect("two parts");
    let only_older =
        Verdict::of_revisions(vec![older.clone()], vec!["2026-07-28: not spoken".into()])
            .expect("one part");
    for (n, (verdict, label, message, color)) in [
        (older, "MCP 2025-11-25", "compliant", "green"),
        (
            both,
            "MCP",
            "2026-07-28 strict · 2025-11-25 compliant",
            "green",
        ),
        (
            one_fails,
            "MCP",
            "2026-07-28 2 failing · 2025-11-25 compliant",
            "red",
        ),
        (only_older, "MCP 2025-11-25", "compliant", "green"),
    ]
    .into_iter()
    .enumerate()
    {
        let key = target(s, &format!("http://revisions-{n}.example/mcp")).await;
        finish_run(s, &key, "mcp", RunEnd::Verdict(verdict)).await;
        let got = get(&app, &format!("/badge/{key}/mcp.svg"), None).await;
        assert_eq!(got.status, 200, "{label}");
        let (title, texts, _) = parse_svg(&got.body);
        assert_eq!(texts, vec![label.to_owned(), message.to_owned()]);
        assert!(title.starts_with(&format!("{label}: {message}")), "{title}");
        let got = get(&app, &format!("/badge/{key}/mcp.json"), None).await;
        let doc: Value = serde_json::from_str(&got.body).expect("json");
        assert_eq!(
            (&doc["label"], json_message_without_day(&doc), &doc["color"]),
            (&json!(label), message, &json!(color))
        );
    }
}

/// A protected MCP server submitted with `suite: auto` and no token is
/// recognised as MCP, judged on its authorization only, and its badge and
/// shields endpoint say "authorization required" in grey: never a grade
/// earned on the 401 alone.
#[tokio::test]
async fn a_protected_server_without_a_token_gets_no_grade_on_its_badge() {
    use protocheck::reference::mcp::McpReferenceConfig;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let _pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let config = McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let url = common::app::mcp_reference_with(config).await;
    let resp = app
        .post_json("/api/v1/runs", &json!({"url": url, "suite": "auto"}))
        .await;
    assert!(resp.status().is_success(), "{}", resp.status());
    let body: Value = resp.json().await.unwrap();
    let id = body["id"].as_str().expect("run id").to_owned();
    let run = app.wait_finished(&id, FINISH).await;
    assert_eq!(run["verdict"]["suite"], "mcp", "{run}");
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    assert_eq!(run["verdict"]["withheld"], "authorization required");
    assert_ne!(run["status"], "passed", "{run}");
    let key = CanonicalUrl::parse(&url).unwrap().key();
    let got = get(&app, &format!("/badge/{key}/mcp.svg"), None).await;
    let (_, texts, fill) = parse_svg(&got.body);
    assert_eq!(texts, ["MCP 2026-07-28", "authorization required"]);
    assert_eq!(fill, "#9f9f9f");
    let got = get(&app, &format!("/badge/{key}/mcp.json"), None).await;
    let doc: Value = serde_json::from_str(&got.body).expect("json");
    assert_eq!(
        json_message_without_day(&doc),
        "authorization required",
        "{doc}"
    );
    assert_eq!(doc["color"], "lightgrey", "{doc}");
}

/// #28 item 2: a verdict older than the stale limit is drawn grey with
/// "stale" beside it, and carries its day; a target whose runs have not
/// reached it for longer than the limit shows "unreachable since" the first
/// of them, in the SVG and the shields JSON alike; within the limit its last
/// verdict stays, and the badge's link follows the run it shows.
#[tokio::test]
async fn old_verdicts_are_stale_and_a_lost_target_is_unreachable_since() {
    const DAY_MS: i64 = 24 * 3600 * 1000;
    let schema_keys = [
        "schemaVersion",
        "label",
        "message",
        "color",
        "isError",
        "cacheSeconds",
    ];
    for db in common::all_backends().await {
        let b = db.name();
        let s = db.store.as_ref();
        let base = app_with_badges(&db, web::badge::BadgeSettings::default()).await;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let badge = |key: String| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let svg = http
                    .get(format!("{base}/badge/{key}/mcp.svg"))
                    .send()
                    .await
                    .expect("svg")
                    .text()
                    .await
                    .expect("svg body");
                let json: Value = http
                    .get(format!("{base}/badge/{key}/mcp.json"))
                    .send()
                    .await
                    .expect("json")
                    .json()
                    .await
                    .expect("json body");
                let latest = http
                    .get(format!("{base}/targets/{key}/mcp/latest"))
                    .send()
                    .await
                    .expect("latest");
                let location = latest.headers()["location"]
                    .to_str()
                    .expect("location")
                    .to_owned();
                (parse_svg(&svg), json, location)
            }
        };
        let day = |ms: i64| protocheck::rfc3339(ms).chars().take(10).collect::<String>();
        let now = protocheck::now_ms();

        // Eight days old: stale, grey, dated.
        let old = target(s, "http://old.example/mcp").await;
        let run = finish_at(
            s,
            &old,
            "mcp",
            RunEnd::Verdict(mcp("strict", 0)),
            now - 8 * DAY_MS,
        )
        .await;
        let ((title, texts, fill), json, location) = badge(old.clone()).await;
        assert_eq!(texts[1], "stale · strict", "{b}");
        assert_eq!(fill, "#9f9f9f", "{b}: grey");
        assert!(
            title.ends_with(&format!("— verdict of {}", day(now - 8 * DAY_MS))),
            "{b}: {title}"
        );
        assert_eq!(
            json["message"],
            format!("stale · strict · {}", day(now - 8 * DAY_MS))
        );
        assert_eq!(json["color"], "lightgrey");
        assert!(
            json.as_object()
                .expect("object")
                .keys()
                .all(|k| schema_keys.contains(&k.as_str()))
        );
        assert_eq!(location, format!("/runs/{run}"), "{b}");

        // A verdict two days old, then runs that could not reach the target
        // for the last day: the verdict stays, with its link.
        let lost = target(s, "http://lost.example/mcp").await;
        let good = finish_at(
            s,
            &lost,
            "mcp",
            RunEnd::Verdict(mcp("strict", 0)),
            now - 2 * DAY_MS,
        )
        .await;
        let unreachable = |n: i64| {
            RunEnd::Error(format!(
                "{} could not connect: connection refused (attempt {n})",
                protocheck::suite::context::UNREACHABLE_PREFIX
            ))
        };
        for n in 0..2 {
            finish_at(s, &lost, "mcp", unreachable(n), now - DAY_MS + n * 1000).await;
        }
        let ((_, texts, fill), json, location) = badge(lost.clone()).await;
        assert_eq!(texts[1], "strict", "{b}");
        assert_eq!(fill, "#4c1", "{b}");
        assert_eq!(
            json["message"],
            format!("strict · {}", day(now - 2 * DAY_MS))
        );
        assert_eq!(location, format!("/runs/{good}"), "{b}: the run it shows");

        // The same streak, begun eight days ago: unreachable since then.
        let gone = target(s, "http://gone.example/mcp").await;
        finish_at(
            s,
            &gone,
            "mcp",
            RunEnd::Verdict(mcp("strict", 0)),
            now - 9 * DAY_MS,
        )
        .await;
        // Another error before the streak ends nothing: it is not the streak.
        finish_at(
            s,
            &gone,
            "mcp",
            RunEnd::Error("the run's deadline passed".into()),
            now - 8 * DAY_MS - 1000,
        )
        .await;
        let first = now - 8 * DAY_MS;
        finish_at(s, &gone, "mcp", unreachable(0), first).await;
        let last = finish_at(s, &gone, "mcp", unreachable(1), now - 1000).await;
        let ((_, texts, fill), json, location) = badge(gone.clone()).await;
        let says = format!("unreachable since {}", day(first));
        assert_eq!(texts[1], says, "{b}");
        assert_eq!(fill, "#9f9f9f", "{b}");
        assert_eq!(json["message"], says.as_str(), "{b}");
        assert_eq!(json["isError"], true, "{b}");
        assert_eq!(location, format!("/runs/{last}"), "{b}");
    }
}
