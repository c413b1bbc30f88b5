//! Every kind of page, as a phone and a desktop show it, checked in a real
//! browser (headless Chromium over WebDriver): axe-core finds no WCAG 2.2 AA
//! violation, no page is wider than its window, no one-word column heading
//! breaks across lines, and a screenshot of each is kept.
//!
//! The pages: home, a run (passing MCP, failing MCP, RCP, not judged on a
//! service that keeps no credentials and on one that does, queued), the
//! sign-in page that run leads to, a target with a regression and a
//! recovery, a rule, the rules, the directory with listed servers, and an
//! error page. Each is checked with every `<details>` opened, as a reader who
//! unfolds the evidence sees it.
//!
//! axe-core comes from npm (`scripts/test-all.sh` fetches the pinned
//! version); its `axe.min.js` is named by `PROTOCHECK_AXE_JS`. Without it,
//! or without Chromium, the test says SKIPPED and passes, unless
//! `PROTOCHECK_REQUIRE_BROWSER=1`.

use crate::browser::{open_browser, say};
use crate::common;

use common::app::{TestApp, mcp_reference, mcp_reference_with, rcp_reference, worker_config};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The widths every page is checked at: a small phone and a desktop.
const WIDTHS: [u32; 2] = [320, 1280];

/// The axe-core tags of WCAG 2.0, 2.1 and 2.2, levels A and AA.
const WCAG22_AA: &str = "['wcag2a','wcag2aa','wcag21a','wcag21aa','wcag22aa']";

fn axe_source() -> Option<String> {
    let required = std::env::var("PROTOCHECK_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let path = std::env::var("PROTOCHECK_AXE_JS").ok();
    match path.as_deref().map(std::fs::read_to_string) {
        Some(Ok(src)) => Some(src),
        other => {
            assert!(
                !required,
                "PROTOCHECK_REQUIRE_BROWSER=1 but PROTOCHECK_AXE_JS does not name axe.min.js: {path:?} {:?}",
                other.map(|r| r.err())
            );
            say(
                "SKIPPED: accessibility test; set PROTOCHECK_AXE_JS to axe-core's axe.min.js \
                 (scripts/test-all.sh fetches it)",
            );
            None
        }
    }
}

/// Where the screenshots go: kept after the test, named in its output.
fn shots_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("a11y");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Submits `body` and waits for its run to end; its id.
async fn finished_run(app: &TestApp, body: Value) -> String {
    let created = app.submit(&body).await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a run id: {created}"))
        .to_owned();
    app.wait_finished(&id, Duration::from_secs(120)).await;
    id
}

/// What one page at one width showed: axe's violations (one line each), how
/// wide the document was against the window, and the one-word headings that
/// broke.
struct Seen {
    violations: Vec<String>,
    scroll_width: f64,
    inner_width: f64,
    broken_headings: Vec<String>,
}

/// How a page is reached: opened at its URL, or (the sign-in page, the
/// answer to a POST) by a click on `button` of the page at the URL, then
/// waiting for `arrival`, an element of the page it leads to.
#[derive(Clone, Copy)]
enum Reach {
    Open,
    Click {
        button: &'static str,
        arrival: &'static str,
    },
}

async fn check_page(
    browser: &fantoccini::Client,
    axe: &str,
    (name, url, reach): (&str, &str, Reach),
    width: u32,
) -> Seen {
    browser
        .set_window_rect(0, 0, width, 900)
        .await
        .expect("window size");
    browser.goto(url).await.expect("open the page");
    if let Reach::Click { button, arrival } = reach {
        browser
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(fantoccini::Locator::Id(button))
            .await
            .unwrap_or_else(|e| panic!("{name}: #{button} on {url}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("{name}: click #{button}: {e}"));
        browser
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(fantoccini::Locator::Id(arrival))
            .await
            .unwrap_or_else(|e| panic!("{name}: #{arrival} after the click: {e}"));
    }
    // Every fold open: the widest the page gets.
    browser
        .execute(
            "document.querySelectorAll('details').forEach(d => d.open = true); return true;",
            vec![],
        )
        .await
        .expect("open the folds");
    // axe-core, injected through WebDriver (the pages' policy allows no
    // script but their own, and a WebDriver script is not a page's script).
    browser
        .execute(&format!("{axe}\n;return typeof axe;"), vec![])
        .await
        .expect("inject axe-core");
    let run = format!(
        "const done = arguments[arguments.length - 1];
         axe.run(document, {{ runOnly: {{ type: 'tag', values: {WCAG22_AA} }}, resultTypes: ['violations'] }})
           .then(r => done({{ passed: r.passes.length, violations: r.violations.map(v => ({{
               id: v.id, impact: v.impact, help: v.help,
               nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)
           }})) }}))
           .catch(e => done({{ passed: 0, violations: [{{ id: 'axe-error', impact: 'critical', help: String(e), nodes: [] }}] }}));"
    );
    let found = browser
        .execute_async(&run, vec![])
        .await
        .expect("run axe-core");
    assert!(
        found["passed"].as_u64().is_some_and(|n| n > 10),
        "{name} at {width} px: axe-core checked the page: {found}"
    );
    let violations = found["violations"]
        .as_array()
        .expect("a list of violations")
        .iter()
        .map(|v| {
            let nodes: Vec<String> = v["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .take(6)
                .map(|n| {
                    format!(
                        "\n      {}",
                        n.as_str().unwrap_or_default().replace('\n', " ")
                    )
                })
                .collect();
            format!(
                "{} ({}): {}{}",
                v["id"].as_str().unwrap_or("?"),
                v["impact"].as_str().unwrap_or("?"),
                v["help"].as_str().unwrap_or("?"),
                nodes.concat()
            )
        })
        .collect();
    let measure = "
        const broken = [];
        for (const th of document.querySelectorAll('th')) {
          const text = th.textContent.trim();
          if (!text || /\\s/.test(text)) continue;
          const range = document.createRange();
          range.selectNodeContents(th);
          const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
          if (lines.size > 1) broken.push(text);
        }
        return [document.documentElement.scrollWidth, window.innerWidth, broken];";
    let m = browser.execute(measure, vec![]).await.expect("measure");
    // The whole page in the screenshot: a window as tall as the page (within reason).
    let height = browser
        .execute("return document.documentElement.scrollHeight;", vec![])
        .await
        .expect("page height")
        .as_u64()
        .map_or(900, |h| u32::try_from(h.clamp(900, 12_000)).unwrap_or(900));
    browser
        .set_window_rect(0, 0, width, height)
        .await
        .expect("window as tall as the page");
    let png = browser.screenshot().await.expect("screenshot");
    std::fs::write(shots_dir().join(format!("{name}-{width}.png")), &png).expect("save screenshot");
    Seen {
        violations,
        scroll_width: m[0].as_f64().unwrap_or(f64::MAX),
        inner_width: m[1].as_f64().unwrap_or_default(),
        broken_headings: m[2]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| h.as_str().unwrap_or_default().to_owned())
            .collect(),
    }
}

/// A service with one run of each kind and their pages' URLs; the apps and
/// workers live as long as it does.
struct Site {
    app: TestApp,
    idle: TestApp,
    keyed: TestApp,
    pools: [protocheck::worker::WorkerPool; 2],
    pages: Vec<(&'static str, String, Reach)>,
    _dbs: [common::TestDb; 3],
}

async fn sample_site() -> Site {
    let db = common::sqlite().await;
    // A service with a directory: the servers checked below ask to be
    // listed, so its page has rows.
    let app = TestApp::start_tuned(&db, 100, |o| {
        o.directory = Some(crate::directory::listing())
    })
    .await;
    let pool = app.workers(worker_config(2, Duration::from_secs(60)));

    let passing = mcp_reference(&[]).await;
    let failing = mcp_reference(&["MCP-HDR-001", "MCP-DSC-005"]).await;
    let rcp = rcp_reference(&["RCP-L1-005"], Duration::ZERO).await;
    let config = protocheck::reference::mcp::McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let protected = mcp_reference_with(config).await;

    let listed = |url: &str| json!({"url": url, "suite": "mcp", "list_in_directory": true});
    let passing_run = finished_run(&app, listed(&passing)).await;
    let failing_run = finished_run(&app, listed(&failing)).await;
    let rcp_run = finished_run(&app, json!({"url": rcp, "suite": "rcp"})).await;
    let not_judged_run = finished_run(&app, json!({"url": protected, "suite": "mcp"})).await;
    let (_, nj) = app
        .get_json(&format!("/api/v1/runs/{not_judged_run}"))
        .await;
    assert_eq!(nj["verdict"]["grade"], "not judged", "{nj}");

    // A target broken and fixed between runs: its chart has a regression and a recovery.
    let (switchable, broken) = crate::watches::switchable_rcp("RCP-L0-003").await;
    let key = crate::webhooks::key(&db).await;
    let mut target = String::new();
    for fault in [false, true, false] {
        broken.store(fault, std::sync::atomic::Ordering::SeqCst);
        let run = crate::watches::submit_and_wait(&app, &key.token, &switchable).await;
        target = run["target_id"].as_str().expect("target").to_owned();
    }

    // The same protected server on a service that keeps credentials: its
    // run page offers to sign in, and the button leads to the sign-in page.
    let keyed_db = common::sqlite().await;
    let key = protocheck::credentials::Keyring::parse(&hex::encode(rand::random::<[u8; 32]>()))
        .expect("key");
    let keyed = TestApp::start_with_keyring(&keyed_db, 100, key).await;
    let keyed_pool = keyed.workers(worker_config(1, Duration::from_secs(60)));
    let keyed_run = finished_run(&keyed, json!({"url": protected, "suite": "mcp"})).await;

    // A run that stays queued: a service with no workers.
    let idle_db = common::sqlite().await;
    let idle = TestApp::start(&idle_db, 100).await;
    let queued = idle.submit(&json!({"url": rcp, "suite": "rcp"})).await;
    let queued_run = queued["id"].as_str().expect("queued run").to_owned();

    let open = |name: &'static str, url: String| (name, url, Reach::Open);
    let keyed_page = keyed.url(&format!("/runs/{keyed_run}"));
    let pages = vec![
        open("home", app.url("/")),
        open("run-passing", app.url(&format!("/runs/{passing_run}"))),
        open("run-failing", app.url(&format!("/runs/{failing_run}"))),
        open("run-rcp", app.url(&format!("/runs/{rcp_run}"))),
        open(
            "run-not-judged",
            app.url(&format!("/runs/{not_judged_run}")),
        ),
        open("run-not-judged-sign-in", keyed_page.clone()),
        (
            "sign-in",
            keyed_page,
            Reach::Click {
                button: "sign-in",
                arrival: "continue-sign-in",
            },
        ),
        open("run-queued", idle.url(&format!("/runs/{queued_run}"))),
        open("target", app.url(&format!("/targets/{target}"))),
        open("rule", app.url("/rules/MCP-HDR-001")),
        open("rules", app.url("/rules")),
        open("directory", app.url("/directory")),
        open("not-found", app.url("/runs/no-such-run")),
    ];
    Site {
        app,
        idle,
        keyed,
        pools: [pool, keyed_pool],
        pages,
        _dbs: [db, idle_db, keyed_db],
    }
}

#[tokio::test]
async fn every_page_kind_passes_axe_and_fits_a_phone_and_a_desktop() {
    let Some(axe) = axe_source() else { return };
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let site = sample_site().await;
    let mut problems = Vec::new();
    for (name, url, reach) in &site.pages {
        for width in WIDTHS {
            let seen = check_page(&browser, &axe, (name, url, *reach), width).await;
            for v in &seen.violations {
                problems.push(format!("{name} at {width} px: {v}"));
            }
            if seen.inner_width != f64::from(width) {
                problems.push(format!(
                    "{name}: the window is {} px wide, not {width}",
                    seen.inner_width
                ));
            }
            if seen.scroll_width > seen.inner_width {
                problems.push(format!(
                    "{name} at {width} px: the page is {} px wide in a {} px window",
                    seen.scroll_width, seen.inner_width
                ));
            }
            for h in &seen.broken_headings {
                problems.push(format!(
                    "{name} at {width} px: the heading {h:?} breaks across lines"
                ));
            }
            say(&format!(
                "a11y: {name} at {width} px: {} violation(s), {} of {} px wide",
                seen.violations.len(),
                seen.scroll_width,
                seen.inner_width
            ));
        }
    }
    say(&format!(
        "a11y: screenshots of each page at {WIDTHS:?} px in {}",
        shots_dir().display()
    ));
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );

    browser.close().await.expect("close browser");
    for pool in site.pools {
        pool.shutdown().await;
    }
    drop((site.app, site.idle, site.keyed));
    drop(driver);
}

/// Lighthouse's four scores (performance, accessibility, best practices,
/// SEO) of the home, a run, a target and a rule page, desktop and mobile:
/// a measurement, not a test of the suite (`scripts/lighthouse.sh` runs it
/// with `--ignored` and a pinned Lighthouse; the README keeps its figures).
/// `PROTOCHECK_LIGHTHOUSE` names Lighthouse's `cli/index.js`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: scripts/lighthouse.sh runs it"]
async fn lighthouse_scores_of_the_page_kinds() {
    let Ok(cli) = std::env::var("PROTOCHECK_LIGHTHOUSE") else {
        say("SKIPPED: Lighthouse scores; set PROTOCHECK_LIGHTHOUSE to Lighthouse's cli/index.js");
        return;
    };
    let site = sample_site().await;
    let wanted = ["home", "run-failing", "target", "rule"];
    assert!(
        wanted
            .iter()
            .all(|w| site.pages.iter().any(|(n, _, _)| n == w)),
        "the sample site has each page measured"
    );
    let mut table = String::from(
        "| page | form factor | performance | accessibility | best practices | SEO |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for (name, url, _) in site.pages.iter().filter(|(n, _, _)| wanted.contains(n)) {
        for preset in ["desktop", "mobile"] {
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(&cli)
                .arg(url)
                .args([
                    "--output=json",
                    "--output-path=stdout",
                    "--quiet",
                    "--only-categories=performance,accessibility,best-practices,seo",
                    "--chrome-flags=--headless --no-sandbox --disable-gpu",
                ])
                .env("CHROME_PATH", "/usr/bin/chromium");
            if preset == "desktop" {
                cmd.arg("--preset=desktop");
            }
            let out = cmd.output().await.expect("run Lighthouse");
            assert!(
                out.status.success(),
                "Lighthouse on {name} ({preset}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value = serde_json::from_slice(&out.stdout).expect("Lighthouse's JSON");
            let score = |category: &str| {
                let s = report["categories"][category]["score"]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{name} ({preset}): no {category} score"));
                (s * 100.0).round()
            };
            table.push_str(&format!(
                "| {name} | {preset} | {} | {} | {} | {} |\n",
                score("performance"),
                score("accessibility"),
                score("best-practices"),
                score("seo")
            ));
            for (id, audit) in report["audits"].as_object().into_iter().flatten() {
                let failed = audit["score"].as_f64().is_some_and(|s| s < 0.9)
                    && audit["scoreDisplayMode"] != "informative"
                    && audit["scoreDisplayMode"] != "notApplicable"
                    && audit["scoreDisplayMode"] != "manual";
                if failed {
                    say(&format!(
                        "lighthouse: {name} ({preset}): {id}: {}",
                        audit["title"].as_str().unwrap_or_default()
                    ));
                }
            }
        }
    }
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lighthouse.md");
    std::fs::write(&path, &table).expect("save the scores");
    say(&format!(
        "lighthouse scores (also in {}):\n{table}",
        path.display()
    ));
    for pool in site.pools {
        pool.shutdown().await;
    }
}

/// After a form error, focus moves to the summary of the errors (a role
/// `alert`, so it is announced), which links to the field at fault.
#[tokio::test]
async fn a_form_error_moves_focus_to_its_summary() {
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    browser.goto(&app.url("/")).await.expect("open home");
    browser
        .find(fantoccini::Locator::Id("url"))
        .await
        .expect("url field")
        .send_keys("ftp://example.com/x")
        .await
        .expect("type url");
    browser
        .find(fantoccini::Locator::Css("form.submit button[type=submit]"))
        .await
        .expect("button")
        .click()
        .await
        .expect("submit");
    let summary = browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(fantoccini::Locator::Id("error-summary"))
        .await
        .expect("the error summary");
    let focused = browser
        .execute(
            "return [document.activeElement.id, document.activeElement.getAttribute('role')];",
            vec![],
        )
        .await
        .expect("read the focus");
    assert_eq!(focused, json!(["error-summary", "alert"]));
    let link = summary
        .find(fantoccini::Locator::Css("a[href='#url']"))
        .await
        .expect("a link to the field");
    assert!(
        link.text().await.expect("text").contains("ftp"),
        "the summary says what is wrong"
    );
    browser.close().await.expect("close browser");
    drop(driver);
}
