//! The HTML pages over real HTTP: the form goes through the same path as the
//! API, errors sit next to their field, cross-site posts are refused, every
//! target-controlled string is escaped, and the target page says what changed.

use crate::common;

use axum::routing::post;
use common::app::{TestApp, rcp_reference, serve, worker_config};
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tower::ServiceExt;

const FINISH: Duration = Duration::from_secs(60);
const HOSTILE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// Loads the home page and returns the anti-forgery token (cookie and field agree).
async fn csrf(app: &TestApp, client: &reqwest::Client) -> String {
    let resp = client.get(app.url("/")).send().await.expect("GET /");
    assert_eq!(resp.status(), 200);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline")
            || csp.contains("style-src 'self'"),
        "{csp}"
    );
    assert!(
        !csp.contains("'unsafe-inline'"),
        "no inline scripts or styles: {csp}"
    );
    let cookie = resp.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .to_owned();
    assert!(
        cookie.contains("SameSite=Strict") && cookie.contains("HttpOnly"),
        "{cookie}"
    );
    let token = cookie
        .split(';')
        .next()
        .and_then(|kv| kv.split_once('='))
        .map(|(_, v)| v.to_owned())
        .expect("token");
    let html = resp.text().await.expect("html");
    assert!(html.contains(&format!("name=\"csrf\" value=\"{token}\"")));
    assert!(html.contains("<label for=\"url\">"), "labelled fields");
    token
}

async fn post_form(
    app: &TestApp,
    client: &reqwest::Client,
    token: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut form: Vec<(&str, &str)> = fields.to_vec();
    form.push(("csrf", token));
    client
        .post(app.url("/"))
        .header("cookie", format!("pc_csrf={token}"))
        .form(&form)
        .send()
        .await
        .expect("POST /")
}

#[tokio::test]
async fn the_form_queues_a_run_and_the_report_shows_its_verdict() {
    let target = rcp_reference(&["RCP-L0-017"], Duration::ZERO).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let client = no_redirects();
        let token = csrf(&app, &client).await;
        let resp = post_form(
            &app,
            &client,
            &token,
            &[("url", &target), ("suite", "rcp"), ("profile", "spec")],
        )
        .await;
        assert_eq!(resp.status(), 303, "{}", db.name());
        let location = resp.headers()["location"]
            .to_str()
            .expect("location")
            .to_owned();
        let id = location.trim_start_matches("/runs/").to_owned();
        app.wait_finished(&id, FINISH).await;
        // Signing follows the verdict; asking for the attestation waits for (or makes) it.
        let attestation = app
            .http
            .get(app.url(&format!("/api/v1/runs/{id}/attestation")))
            .send()
            .await
            .expect("attestation");
        assert_eq!(attestation.status(), 200);

        let html = client
            .get(app.url(&location))
            .send()
            .await
            .expect("run page")
            .text()
            .await
            .expect("html");
        assert!(
            html.contains("class=\"verdict failed tone-red\""),
            "{}",
            db.name()
        );
        assert!(
            html.contains("<p class=\"headline\"><span class=\"pill tone-red\">none"),
            "the certified level is shown, in the badge's colour"
        );
        // Failures first: the first finding listed is the broken rule, with its evidence.
        let first = html.find("<li class=\"finding").expect("findings");
        assert!(
            html[first..].starts_with("<li class=\"finding fail\""),
            "failures first"
        );
        assert!(html[first..first + 400].contains("RCP-L0-017"));
        assert!(html.contains("<details class=\"evidence\">"));
        for report in ["report.json", "report.junit.xml", "report.sarif"] {
            assert!(
                html.contains(&format!("/api/v1/runs/{id}/{report}\"")),
                "links to the {report}"
            );
        }
        assert!(
            html.contains("/attestation\">signed attestation</a>"),
            "links to the attestation"
        );
        assert!(html.contains("<img src=\"/badge/"), "shows the badge");
        assert!(
            html.contains("the signature verifies with published key"),
            "{}: shows the signature verifies",
            db.name()
        );
        for id in ["snippet-md", "snippet-html", "snippet-rst"] {
            assert!(html.contains(&format!("<textarea id=\"{id}\"")), "{id}");
        }
        assert!(html.contains("[![RCP conformance]("), "Markdown snippet");

        // The home page lists it.
        let home = client
            .get(app.url("/"))
            .send()
            .await
            .expect("home")
            .text()
            .await
            .expect("html");
        assert!(home.contains(&location));
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_running_run_shows_progress_and_never_reloads_itself() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let resp = app
        .post_json(
            "/api/v1/runs",
            &json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}),
        )
        .await;
    let body: Value = resp.json().await.expect("json");
    let html = app
        .http
        .get(app.url(&format!("/runs/{}", body["id"].as_str().expect("id"))))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        html.contains(&format!(
            "<progress id=\"bar\" aria-label=\"Rules checked\" max=\"{}\" value=\"0\">",
            protocheck::suite::index::rule_count(
                protocheck::suite::SuiteId::Rcp,
                &protocheck::suite::RunOptions::default()
            )
        )),
        "{html}"
    );
    // Without JavaScript the page never refreshes itself on a timer
    // (WCAG 2.2.1): it offers a link to reload instead.
    assert!(!html.contains("http-equiv"), "{html}");
    let id = body["id"].as_str().expect("id");
    assert!(
        html.contains(&format!("<noscript><p>This page does not update itself without JavaScript:\n  <a href=\"/runs/{id}\">reload it</a>")),
        "{html}"
    );
    let script = protocheck::web::pages::asset("run.js");
    assert!(script.starts_with("/static/run.") && script != "/static/run.js");
    assert!(html.contains(&format!("<script src=\"{script}\" defer></script>")));
    let js = app.http.get(app.url(&script)).send().await.expect("js");
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    // Named by its content: a browser keeps it for a year.
    assert_eq!(
        js.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert!(
        !js.text().await.expect("js").contains("innerHTML"),
        "findings are inserted as text"
    );
}

#[tokio::test]
async fn form_errors_sit_next_to_their_field_and_store_nothing() {
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let client = no_redirects();
        let token = csrf(&app, &client).await;
        let resp = post_form(
            &app,
            &client,
            &token,
            &[("url", "ftp://example.com/x"), ("suite", "auto")],
        )
        .await;
        assert_eq!(resp.status(), 422);
        let html = resp.text().await.expect("html");
        assert!(
            html.contains("id=\"url-error\">the scheme `ftp` is not supported"),
            "{html}"
        );
        assert!(
            html.contains("value=\"ftp://example.com/x\""),
            "what the user typed is kept"
        );
        let resp = post_form(
            &app,
            &client,
            &token,
            &[
                ("url", "http://example.com/"),
                ("server_json", "javascript:alert(1)"),
            ],
        )
        .await;
        assert_eq!(resp.status(), 422);
        assert!(resp.text().await.expect("html").contains("id=\"sj-error\""));
        let stored: i64 = db
            .store
            .count_by_status()
            .await
            .expect("counts")
            .iter()
            .map(|(_, n)| n)
            .sum();
        assert_eq!(stored, 0, "{}", db.name());
    }
}

#[tokio::test]
async fn cross_site_and_tokenless_posts_are_refused() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let client = no_redirects();
    let token = csrf(&app, &client).await;
    let form = [("url", "http://127.0.0.1:9/rcp"), ("csrf", token.as_str())];
    let cross = client
        .post(app.url("/"))
        .header("cookie", format!("pc_csrf={token}"))
        .header("origin", "https://evil.example")
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(cross.status(), 403);
    let fetch_meta = client
        .post(app.url("/"))
        .header("cookie", format!("pc_csrf={token}"))
        .header("sec-fetch-site", "cross-site")
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(fetch_meta.status(), 403);
    let no_cookie = client
        .post(app.url("/"))
        .form(&form)
        .send()
        .await
        .expect("post");
    assert_eq!(no_cookie.status(), 403);
    assert!(
        no_cookie
            .text()
            .await
            .expect("html")
            .contains("The form has expired")
    );
    let stored: i64 = db
        .store
        .count_by_status()
        .await
        .expect("counts")
        .iter()
        .map(|(_, n)| n)
        .sum();
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn errors_render_as_pages() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 1).await;
    let html = |path: &'static str| {
        app.http
            .get(app.url(path))
            .header("accept", "text/html")
            .send()
    };
    let r = html("/runs/0191f0a0-0000-7000-8000-000000000000")
        .await
        .expect("get");
    assert_eq!(r.status(), 404);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .expect("ct")
            .starts_with("text/html")
    );
    let r = html("/no/such/page").await.expect("get");
    assert_eq!(r.status(), 404);
    assert!(
        r.text()
            .await
            .expect("html")
            .contains("There is no page at this address")
    );
    let r = html("/targets/nope").await.expect("get");
    assert_eq!(r.status(), 404);

    // The rate limit on the form: one per minute here.
    let client = no_redirects();
    let token = csrf(&app, &client).await;
    assert_eq!(
        post_form(&app, &client, &token, &[("url", "http://127.0.0.1:9/a")])
            .await
            .status(),
        303
    );
    let limited = post_form(&app, &client, &token, &[("url", "http://127.0.0.1:9/b")]).await;
    assert_eq!(limited.status(), 429);
    assert!(limited.headers().contains_key("retry-after"));
    assert!(limited.text().await.expect("html").contains("Try again in"));
}

/// An RCP-ish server whose every string is hostile markup.
async fn hostile_server() -> String {
    let router = axum::Router::new().route(
        "/rcp/{method}",
        post(|body: axum::Json<Value>| async move {
            let id = body.0.get("id").cloned().unwrap_or(Value::Null);
            axum::Json(json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {
                    "protocolVersion": 1,
                    "server": {"name": HOSTILE},
                    "capabilities": {"retrieve": {"modes": [HOSTILE]}},
                    "_meta": {"conformance": HOSTILE},
                    "hits": [{"id": HOSTILE, "score": 1}]
                }
            }))
        }),
    );
    format!("{}/rcp", serve(router).await)
}

#[tokio::test]
async fn target_controlled_text_is_escaped_everywhere() {
    let target = hostile_server().await;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    let id = body["id"].as_str().expect("id").to_owned();
    let run = app.wait_finished(&id, FINISH).await;
    let messages: String = run["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        messages.contains("<script>alert(1)</script>"),
        "the hostile name reached the findings"
    );
    for path in [
        format!("/runs/{id}"),
        "/".to_owned(),
        format!("/targets/{}", run["target_id"].as_str().expect("target")),
    ] {
        let html = app.get_text(&path).await;
        assert!(
            !html.contains("<script>alert"),
            "{path} carries live markup"
        );
        assert!(!html.contains("<img src=x"), "{path} carries live markup");
    }
    let page = app.get_text(&format!("/runs/{id}")).await;
    let at = page.find("alert(1)").unwrap_or(0).saturating_sub(60);
    let context: String = page[at..].chars().take(160).collect();
    let escaped = [
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&#60;script&#62;alert(1)&#60;/script&#62;",
    ];
    assert!(
        escaped.iter().any(|e| page.contains(e)),
        "shown, escaped: {context}"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn the_target_page_lists_history_and_what_changed() {
    // One URL whose server turns broken between two runs.
    let clean = rcp_router(RcpReferenceConfig::default());
    let broken = rcp_router(RcpReferenceConfig::new(["RCP-L0-017"]).expect("fault"));
    let is_broken = Arc::new(AtomicBool::new(false));
    let flag = is_broken.clone();
    let switch = axum::Router::new().fallback_service(tower::service_fn(
        move |req: axum::extract::Request| {
            let router = if flag.load(Ordering::SeqCst) {
                broken.clone()
            } else {
                clean.clone()
            };
            async move { router.oneshot(req).await }
        },
    ));
    let target = format!("{}/rcp", serve(switch).await);

    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let first: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    let first = app
        .wait_finished(first["id"].as_str().expect("id"), FINISH)
        .await;
    is_broken.store(true, Ordering::SeqCst);
    let second: Value = app
        .submit(&json!({"url": target, "suite": "rcp", "force": true}))
        .await;
    app.wait_finished(second["id"].as_str().expect("id"), FINISH)
        .await;

    let html = app
        .http
        .get(app.url(&format!(
            "/targets/{}",
            first["target_id"].as_str().expect("target")
        )))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    let newly_failing = html
        .lines()
        .find(|l| l.contains("Newly failing:"))
        .unwrap_or_default();
    assert!(newly_failing.contains("<code>RCP-L0-017</code>"), "{html}");
    assert!(!html.contains("Newly passing:"), "{html}");
    assert_eq!(html.matches("<tr>").count(), 3, "header and two runs");
    // "850 ms" or, on a slow machine, "1.3 s".
    assert!(
        html.contains(" ms</td>") || html.contains(" s</td>"),
        "durations shown"
    );
    assert!(html.contains(" · speaks rcp</p>"), "{html}");
    // The chart's points have their badges' colours, in the pills' shades:
    // the healthy run's is bright green (L2), the failing run's red (`none`),
    // whatever the shape.
    let fills: Vec<&str> = html
        .split("<path class=\"point ")
        .skip(1)
        .filter_map(|c| c.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(fills, ["#1a7f37", "#b42318"], "{html}");
    pool.shutdown().await;
}

/// A URL that answers every request with an HTTP 404 page is judged, but the
/// run never saw a JSON-RPC answer: the verdict says so, and neither the store
/// nor the target page claims the target speaks RCP.
#[tokio::test]
async fn a_target_that_only_answers_404_is_not_said_to_speak_rcp() {
    let router = axum::Router::new()
        .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "<h1>Not Found</h1>") });
    let target = format!("{}/rcp", serve(router).await);
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    let run = app
        .wait_finished(body["id"].as_str().expect("id"), FINISH)
        .await;
    assert_eq!(run["status"], "failed", "judged, not an error: {run}");
    assert_eq!(run["verdict"]["protocol_observed"], false, "{run}");
    assert_eq!(run["verdict"]["certified_level"], "none", "{run}");
    let target_id = run["target_id"].as_str().expect("target");
    let stored = db
        .store
        .get_target(target_id)
        .await
        .expect("store")
        .expect("the target");
    assert_eq!(stored.protocol, None);
    let html = app.get_text(&format!("/targets/{target_id}")).await;
    assert!(html.contains("<h1>"), "{html}");
    assert!(!html.contains("speaks"), "{html}");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_form_over_the_size_limit_is_refused_with_413() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let client = no_redirects();
    let token = csrf(&app, &client).await;
    let huge = "a".repeat(protocheck::web::MAX_API_BODY_BYTES + 1);
    let resp = post_form(&app, &client, &token, &[("url", &huge), ("suite", "rcp")]).await;
    assert_eq!(resp.status(), 413);
    let html = resp.text().await.expect("html");
    assert!(html.contains("Request body too large"), "{html}");
}

/// The 2026-07-28 reference playing a dual-era server (it also answers a
/// 2025-11-25 `initialize`); its endpoint URL.
async fn dual_era_reference() -> String {
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
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn the_form_posts_the_mcp_revision_and_the_report_shows_each_one() {
    let target = dual_era_reference().await;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(60)));
    let client = no_redirects();
    let token = csrf(&app, &client).await;
    let home = client
        .get(app.url("/"))
        .send()
        .await
        .expect("home")
        .text()
        .await
        .expect("html");
    assert!(home.contains("<label for=\"mcp_revision\">MCP revision</label>"));
    for value in ["newest", "2026-07-28", "2025-11-25", "all"] {
        assert!(
            home.contains(&format!("<option value=\"{value}\"")),
            "{value}"
        );
    }

    // An unknown revision is refused on the form, next to what was typed.
    let resp = post_form(
        &app,
        &client,
        &token,
        &[
            ("url", &target),
            ("suite", "mcp"),
            ("mcp_revision", "2024-11-05"),
        ],
    )
    .await;
    assert_eq!(resp.status(), 422);
    let html = resp.text().await.expect("html");
    assert!(
        html.contains("The MCP revision `2024-11-05` is unknown."),
        "{html}"
    );

    let resp = post_form(
        &app,
        &client,
        &token,
        &[("url", &target), ("suite", "mcp"), ("mcp_revision", "all")],
    )
    .await;
    assert_eq!(resp.status(), 303);
    let location = resp.headers()["location"]
        .to_str()
        .expect("location")
        .to_owned();
    let id = location.trim_start_matches("/runs/").to_owned();
    let run = app.wait_finished(&id, FINISH).await;
    assert_eq!(run["options"]["mcp_revision"], "all", "{run:#}");
    let revisions = run["verdict"]["revisions"]
        .as_array()
        .expect("a verdict per revision");
    let names: Vec<&str> = revisions
        .iter()
        .filter_map(|r| r["spec_revision"].as_str())
        .collect();
    assert_eq!(names, ["2026-07-28", "2025-11-25"], "{run:#}");

    let html = client
        .get(app.url(&location))
        .send()
        .await
        .expect("run page")
        .text()
        .await
        .expect("html");
    assert!(
        html.contains("<h1>MCP 2026-07-28, 2025-11-25 run</h1>"),
        "{html}"
    );
    assert!(html.contains("aria-label=\"Verdict per MCP revision\""));
    // The headline names the combined (lowest) grade with each revision's
    // grade beside it.
    let grade = run["verdict"]["grade"].as_str().expect("a grade");
    let at = html.find("<p class=\"headline\">").expect("a headline");
    let pill = html[at..]
        .find("</span>")
        .map_or("", |end| &html[at..at + end]);
    assert!(pill.contains(&format!(">{grade}")), "{pill}");
    assert!(
        html[at..].contains("<p class=\"why\">2026-07-28 "),
        "each revision's grade in the sentence beside the pill\n{html}"
    );
    for revision in &names {
        let part = run["verdict"]["grade_by_revision"][revision]
            .as_str()
            .expect("each revision's grade");
        assert!(html.contains(&format!("{revision} {part}")), "{revision}");
    }
    for revision in names {
        assert!(
            html.contains(&format!("<strong>MCP {revision}</strong>: ")),
            "{revision}"
        );
        assert!(
            html.contains(&format!("<h3>MCP {revision} · ")),
            "{revision}: its findings grouped apart"
        );
    }
    pool.shutdown().await;
}

/// A protected MCP server (the reference server with authorization on).
async fn protected_mcp() -> String {
    let config = protocheck::reference::mcp::McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    common::app::mcp_reference_with(config).await
}

/// A protected server's run page tells the person the next step that works
/// from where they are: on a service that keeps no credentials, that it
/// cannot judge the server from the web and what can; on one that keeps
/// them, to sign in. Neither says "Nothing to fix", and the verdict's pill
/// is neutral, not the failure colour.
#[tokio::test]
async fn a_protected_servers_run_page_says_what_to_do_next_from_the_web() {
    for db in common::all_backends().await {
        let target = protected_mcp().await;
        for with_key in [false, true] {
            let app = if with_key {
                let key = protocheck::credentials::Keyring::parse(&hex::encode(rand::random::<
                    [u8; 32],
                >(
                )))
                .expect("key");
                TestApp::start_with_keyring(&db, 100, key).await
            } else {
                TestApp::start(&db, 100).await
            };
            let pool = app.workers(worker_config(1, Duration::from_secs(60)));
            let created = app
                .submit(&json!({"url": target, "suite": "mcp", "force": true}))
                .await;
            let id = created["id"].as_str().expect("run id").to_owned();
            let run = app.wait_finished(&id, FINISH).await;
            assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
            let html = app.get_text(&format!("/runs/{id}")).await;
            let what = format!("{} with_key={with_key}", db.name());
            assert!(
                html.contains("<span class=\"pill tone-lightgrey\">not judged</span>"),
                "{what}: a neutral pill with the short verdict\n{html}"
            );
            assert!(
                html.contains("<p class=\"why\">Authorization required"),
                "{what}: the explanation as a sentence beside it"
            );
            assert!(!html.contains("Nothing to fix"), "{what}");
            assert!(html.contains("<h2 id=\"next-step-title\">What to do next</h2>"));
            if with_key {
                assert!(html.contains("Sign in below"), "{what}");
                assert!(
                    html.contains("id=\"sign-in\""),
                    "{what}: the sign-in button"
                );
                assert!(!html.contains("keeps no credentials"), "{what}");
            } else {
                assert!(
                    html.contains(
                        "This service keeps no credentials, so it cannot judge a protected server"
                    ),
                    "{what}"
                );
                assert!(
                    html.contains("<code>protocheck check --bearer-token TOKEN "),
                    "{what}"
                );
                assert!(!html.contains("id=\"sign-in\""), "{what}");
            }
            pool.shutdown().await;
        }
    }
}

/// What every page carries: a description, the icon, a link to the rules;
/// pages are compressed for a browser that asks, static files named by their
/// content are kept for a year; badges say their verdict in their `alt` and
/// have a size, with copy buttons beside their snippets; the target page can
/// check its server again.
#[tokio::test]
async fn pages_carry_descriptions_an_icon_compression_and_long_lived_static_files() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(60)));
    let target = rcp_reference(&["RCP-L0-017"], Duration::ZERO).await;
    let created = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    let id = created["id"].as_str().expect("run id").to_owned();
    let run = app.wait_finished(&id, FINISH).await;
    let target_key = run["target_id"].as_str().expect("target").to_owned();

    let pages = [
        "/".to_owned(),
        format!("/runs/{id}"),
        format!("/targets/{target_key}"),
        "/rules".to_owned(),
        "/rules/RCP-L0-017".to_owned(),
    ];
    let mut descriptions = Vec::new();
    for path in &pages {
        let html = app.get_text(path).await;
        let at = html
            .find("<meta name=\"description\" content=\"")
            .unwrap_or_else(|| panic!("{path}: a description"));
        descriptions.push(html[at..].split('>').next().unwrap_or_default().to_owned());
        assert!(
            html.contains("<a href=\"/rules\">Rules</a>"),
            "{path}: the header links the rules"
        );
        assert!(
            html.contains("<link rel=\"icon\" href=\"/static/favicon."),
            "{path}"
        );
        assert!(
            !html.contains("<td>"),
            "{path}: every table cell is named for the stacked layout"
        );

        let gz = app
            .http
            .get(app.url(path))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .expect("page");
        assert_eq!(gz.status(), 200, "{path}");
        assert_eq!(
            gz.headers()["content-encoding"],
            "gzip",
            "{path}: compressed"
        );
    }
    descriptions.sort();
    descriptions.dedup();
    assert_eq!(
        descriptions.len(),
        pages.len(),
        "each page describes itself: {descriptions:#?}"
    );

    let icon = app
        .http
        .get(app.url("/favicon.ico"))
        .send()
        .await
        .expect("icon");
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    let style = protocheck::web::pages::asset("style.css");
    let css = app.http.get(app.url(&style)).send().await.expect("css");
    assert_eq!(
        css.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let plain = app
        .http
        .get(app.url("/static/style.css"))
        .send()
        .await
        .expect("css");
    assert_eq!(plain.headers()["cache-control"], "public, max-age=300");
    let stale = app
        .http
        .get(app.url("/static/style.000000000000.css"))
        .send()
        .await
        .expect("css");
    assert_eq!(stale.status(), 404);

    // The run page: a badge that states its verdict and has a size, its
    // snippets with copy buttons, and backticks shown as code.
    let html = app.get_text(&format!("/runs/{id}")).await;
    let alt = html
        .find("alt=\"RCP badge: ")
        .expect("the badge's alt states its verdict");
    assert!(
        html[alt..].split_once('>').is_some_and(
            |(img, _)| img.contains("OVERCLAIMED\" width=\"") && img.contains("height=\"20\"")
        ),
        "{}",
        &html[alt..alt + 120]
    );
    assert!(html.contains("data-copy=\"snippet-md\" hidden>Copy Markdown</button>"));
    let target_page = app.get_text(&format!("/targets/{target_key}")).await;
    assert!(target_page.contains("<button type=\"submit\">Check again</button>"));
    assert!(target_page.contains("<textarea id=\"snippet-md-rcp\""));
    assert!(target_page.contains("data-copy=\"snippet-md-rcp\""));
    pool.shutdown().await;
}
