//! The web interface in a real browser (headless Chromium over WebDriver):
//! submit the form against the local reference server, watch the progress
//! reach 100 %, read the verdict, open a finding's evidence, and save a
//! screenshot of the finished report.
//!
//! Needs Debian's `chromium` and `chromium-driver`. Without them the test says
//! so and passes, unless `PROTOCHECK_REQUIRE_BROWSER=1` (set by `scripts/test-all.sh`,
//! which installs them), where their absence is a failure.

use crate::common;

use common::app::{TestApp, rcp_reference, worker_config};
use fantoccini::{ClientBuilder, Locator};
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

pub(crate) struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn say(line: &str) {
    // The harness captures println! of passing tests; this must be seen.
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Chromium over WebDriver, or `None` (said) when it is not installed and
/// not required.
pub(crate) async fn open_browser() -> Option<(Driver, tempfile::TempDir, fantoccini::Client)> {
    let required = std::env::var("PROTOCHECK_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    if !std::path::Path::new(CHROMIUM).exists() || !std::path::Path::new(CHROMEDRIVER).exists() {
        assert!(
            !required,
            "PROTOCHECK_REQUIRE_BROWSER=1 but {CHROMIUM} or {CHROMEDRIVER} is missing"
        );
        say("SKIPPED: browser test; install Debian's chromium and chromium-driver to run it");
        return None;
    }
    let port = free_port();
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let webdriver = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let mut up = false;
    for _ in 0..100 {
        if http.get(format!("{webdriver}/status")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(up, "chromedriver answers");

    let profile = tempfile::tempdir().expect("profile dir");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--window-size=1200,1600",
                format!("--user-data-dir={}", profile.path().display()),
            ]
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let browser = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&webdriver)
        .await
        .expect("browser session");
    Some((driver, profile, browser))
}

#[tokio::test]
async fn a_person_submits_the_form_and_reads_the_report() {
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    // Slow replies keep the run going long enough to watch it.
    let target = rcp_reference(&["RCP-L0-017"], Duration::from_millis(100)).await;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));

    browser.goto(&app.url("/")).await.expect("open home");
    browser
        .find(Locator::Id("url"))
        .await
        .expect("url field")
        .send_keys(&target)
        .await
        .expect("type url");
    browser
        .find(Locator::Id("suite"))
        .await
        .expect("suite")
        .select_by_value("rcp")
        .await
        .expect("choose rcp");
    browser
        .find(Locator::Css("form.submit button[type=submit]"))
        .await
        .expect("button")
        .click()
        .await
        .expect("submit");

    // The run page: progress first, then the report after the verdict arrives.
    browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("bar"))
        .await
        .expect("progress bar");
    let url = browser.current_url().await.expect("url");
    assert!(
        url.path().starts_with("/runs/"),
        "the form led to the run page: {url}"
    );
    // A mark on this page: still there after the verdict means the report
    // replaced the progress in place, without a reload.
    browser
        .execute("window.protocheckMark = 1; return true;", vec![])
        .await
        .expect("mark the page");
    let mut highest = 0.0f64;
    let mut max = 0.0f64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        // `null` once the page has reloaded into the finished report.
        let read = "const b = document.getElementById('bar'); return b ? [b.value, b.max] : null;";
        let progress = browser
            .execute(read, vec![])
            .await
            .unwrap_or(serde_json::Value::Null);
        match (progress[0].as_f64(), progress[1].as_f64()) {
            (Some(v), Some(m)) => {
                highest = highest.max(v);
                max = m;
            }
            _ => break,
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run never finished (progress {highest}/{max})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rules = protocheck::suite::index::rule_count(
        protocheck::suite::SuiteId::Rcp,
        &protocheck::suite::RunOptions::default(),
    );
    assert_eq!(max, rules as f64, "the bar counts the RCP rules");
    assert_eq!(highest, max, "the progress reached 100 %");

    let headline = browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("section.verdict .headline"))
        .await
        .expect("verdict banner");
    let headline = headline.text().await.expect("text");
    assert!(
        headline.starts_with("none"),
        "one failing L0 rule certifies nothing: {headline}"
    );
    assert!(
        headline.contains("OVERCLAIMED"),
        "the declared L0 is now an overclaim: {headline}"
    );
    // The verdict is announced, once, through a status region, and the page
    // was not reloaded (a screen reader keeps its place).
    let told = browser
        .execute(
            "return [window.protocheckMark === 1, \
               Array.from(document.querySelectorAll('body > [role=status]')).map(e => e.textContent)];",
            vec![],
        )
        .await
        .expect("read the status region");
    assert_eq!(told[0], true, "the report came without a reload");
    let said = told[1][0].as_str().unwrap_or_default();
    assert!(
        said.starts_with("Run finished. Verdict: none"),
        "the verdict is announced: {told}"
    );

    // Failures come first; open the first finding's evidence.
    let first = browser
        .find(Locator::Css("li.finding"))
        .await
        .expect("a finding");
    assert!(
        first
            .attr("class")
            .await
            .expect("class")
            .unwrap_or_default()
            .contains("fail")
    );
    assert!(first.text().await.expect("text").contains("RCP-L0-017"));
    let summary = first
        .find(Locator::Css("details.evidence summary"))
        .await
        .expect("evidence summary");
    let request = first
        .find(Locator::Css("details.evidence pre.request"))
        .await
        .expect("evidence");
    assert!(
        !request.is_displayed().await.expect("displayed"),
        "evidence starts folded"
    );
    summary.click().await.expect("open evidence");
    assert!(
        request.is_displayed().await.expect("displayed"),
        "evidence opens"
    );
    assert!(
        request
            .text()
            .await
            .expect("text")
            .contains("POST http://127.0.0.1:")
    );

    let png = browser.screenshot().await.expect("screenshot");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    std::fs::write(&path, &png).expect("save screenshot");
    say(&format!(
        "browser test: screenshot of the finished report in {}",
        path.display()
    ));

    browser.close().await.expect("close browser");
    pool.shutdown().await;
    drop(driver);
}

/// Waits (a liveness bound) for the browser to show a run page other than
/// `other`'s; returns its run id.
async fn run_page_other_than(browser: &fantoccini::Client, other: Option<&str>) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let url = browser.current_url().await.expect("url");
        if let Some(id) = url.path().strip_prefix("/runs/")
            && !id.contains('/')
            && Some(id) != other
        {
            return id.to_owned();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the browser never reached a new run page: {url}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_person_signs_in_at_the_servers_authorization_server_from_the_run_page() {
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let config = protocheck::reference::mcp::McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let target = common::app::mcp_reference_with(config).await;
    let db = common::sqlite().await;
    let key = protocheck::credentials::Keyring::parse(&hex::encode(rand::random::<[u8; 32]>()))
        .expect("key");
    let app = TestApp::start_with_keyring(&db, 100, key).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));

    browser.goto(&app.url("/")).await.expect("open home");
    browser
        .find(Locator::Id("url"))
        .await
        .expect("url field")
        .send_keys(&target)
        .await
        .expect("type url");
    browser
        .find(Locator::Css("form.submit button[type=submit]"))
        .await
        .expect("button")
        .click()
        .await
        .expect("submit");
    let first = run_page_other_than(&browser, None).await;
    let run = app.wait_finished(&first, Duration::from_secs(120)).await;
    assert_eq!(run["verdict"]["grade"], "not judged", "{run}");
    browser.refresh().await.expect("reload");
    browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("sign-in"))
        .await
        .expect("the page offers to sign in")
        .click()
        .await
        .expect("sign in");
    browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("continue-sign-in"))
        .await
        .expect("the page that says where the person goes")
        .click()
        .await
        .expect("continue");

    // The reference server's login page.
    browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("username"))
        .await
        .expect("login page")
        .send_keys("alice")
        .await
        .expect("user name");
    browser
        .find(Locator::Id("password"))
        .await
        .expect("password field")
        .send_keys("wonderland")
        .await
        .expect("password");
    browser
        .find(Locator::Id("sign-in"))
        .await
        .expect("sign-in button")
        .click()
        .await
        .expect("sign in");

    // Back at protocheck: the run judged with the token.
    let second = run_page_other_than(&browser, Some(&first)).await;
    let run = app.wait_finished(&second, Duration::from_secs(120)).await;
    assert_eq!(run["verdict"]["grade"], "strict", "{run}");
    browser.refresh().await.expect("reload");
    let headline = browser
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("section.verdict .headline"))
        .await
        .expect("verdict banner")
        .text()
        .await
        .expect("text");
    assert!(headline.contains("strict"), "{headline}");
    let credentials = browser
        .find(Locator::Id("credentials"))
        .await
        .expect("credentials line")
        .text()
        .await
        .expect("text");
    assert!(credentials.contains("signed in at"), "{credentials}");
    let steps = browser
        .find(Locator::Id("sign-in-steps"))
        .await
        .expect("the sign-in's steps")
        .text()
        .await
        .expect("text");
    for step in [
        "client registration",
        "authorization response",
        "token request",
    ] {
        assert!(steps.contains(step), "{step} in {steps}");
    }

    let png = browser.screenshot().await.expect("screenshot");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sign-in-report.png");
    std::fs::write(&path, &png).expect("save screenshot");
    browser.close().await.expect("close browser");
    pool.shutdown().await;
    drop(driver);
}

/// A target broken and fixed between three runs: its page draws the level of
/// each run on a chart (server-side SVG, no script), marks the regression and
/// the recovery, and lists the rule each changed, with every run's date.
#[tokio::test]
async fn a_target_page_charts_its_levels_and_names_what_changed() {
    const FAULT: &str = "RCP-L0-003";
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let (target, broken) = crate::watches::switchable_rcp(FAULT).await;
    let created = crate::webhooks::key(&db).await;
    let mut ids = Vec::new();
    for fault in [false, true, false] {
        broken.store(fault, std::sync::atomic::Ordering::SeqCst);
        let run = crate::watches::submit_and_wait(&app, &created.token, &target).await;
        ids.push(run["target_id"].as_str().unwrap().to_owned());
    }
    let id = &ids[0];

    browser
        .goto(&app.url(&format!("/targets/{id}")))
        .await
        .expect("open the target page");
    let chart = browser
        .find(Locator::Css("#chart-RCP svg.history-chart"))
        .await
        .expect("the chart");
    assert!(chart.is_displayed().await.expect("displayed"));
    let points = chart
        .find_all(Locator::Css(".point"))
        .await
        .expect("points");
    assert_eq!(points.len(), 3, "one point per judged run");
    let mut classes = Vec::new();
    for p in &points {
        classes.push(p.attr("class").await.expect("class").unwrap_or_default());
    }
    assert_eq!(
        classes,
        ["point steady", "point regressed", "point recovered"],
        "oldest first"
    );
    // The broken run sits below the others: a lower level.
    let y = |i: usize| {
        let p = points[i].clone();
        async move {
            p.attr("data-y")
                .await
                .expect("data-y")
                .unwrap_or_default()
                .parse::<u32>()
                .expect("a number")
        }
    };
    let (healthy, failed, fixed) = (y(0).await, y(1).await, y(2).await);
    assert!(
        failed > healthy && fixed == healthy,
        "{healthy} {failed} {fixed}"
    );

    let events = browser
        .find(Locator::Css("section.events"))
        .await
        .expect("the regressions and recoveries")
        .text()
        .await
        .expect("text");
    assert!(
        events.contains(&format!("{FAULT}: pass → fail"))
            && events.contains(&format!("{FAULT}: fail → pass")),
        "{events}"
    );
    assert!(events.contains("regressed") && events.contains("recovered"));
    let dates = browser
        .find_all(Locator::Css("table.runs time"))
        .await
        .expect("run dates");
    assert_eq!(dates.len(), 3);
    let first = dates[0].text().await.expect("text");
    assert!(
        first.len() == 20 && first.as_bytes()[4] == b'-' && first.ends_with(" UTC"),
        "every run shows its date, readably: {first}"
    );
    let machine = dates[0]
        .attr("datetime")
        .await
        .expect("datetime")
        .unwrap_or_default();
    assert!(
        machine.contains('T'),
        "and as RFC 3339 for programs: {machine}"
    );

    let png = browser.screenshot().await.expect("screenshot");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("target.png");
    std::fs::write(&path, &png).expect("save screenshot");
    say(&format!(
        "browser test: screenshot of the target page in {}",
        path.display()
    ));
    browser.close().await.expect("close browser");
    pool.shutdown().await;
    drop(driver);
}

/// What the run page shows above its fold and how it folds the rest.
struct Triage {
    first_class: String,
    first_top: f64,
    fold: f64,
    passed_counts: Vec<u64>,
}

/// Opens run `id`'s page in a 1280×900 window and checks the triage: the
/// first finding is a failure, above the fold; no passed rule is shown until
/// its group's fold is opened, and the folds count every passed rule.
async fn triage_of(browser: &fantoccini::Client, app: &TestApp, id: &str, passed: u64) -> Triage {
    browser
        .set_window_rect(0, 0, 1280, 900)
        .await
        .expect("window size");
    browser
        .goto(&app.url(&format!("/runs/{id}")))
        .await
        .expect("open the run page");
    let read = "const f = document.querySelector('li.finding'); \
                return [f.className, f.getBoundingClientRect().top, window.innerHeight, \
                  Array.from(document.querySelectorAll('details.fold.passed > summary')) \
                    .map(s => s.textContent)];";
    let got = browser.execute(read, vec![]).await.expect("read the page");
    let counts: Vec<u64> = got[3]
        .as_array()
        .expect("fold summaries")
        .iter()
        .map(|s| {
            let text = s.as_str().unwrap_or_default();
            text.strip_suffix(" passed")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("a fold's summary says how many passed: {text:?}"))
        })
        .collect();
    assert_eq!(
        counts.iter().sum::<u64>(),
        passed,
        "the folds count every pass"
    );
    let passes = browser
        .find_all(Locator::Css("li.finding.pass"))
        .await
        .expect("passed findings");
    assert_eq!(passes.len() as u64, passed);
    for p in &passes {
        assert!(
            !p.is_displayed().await.expect("displayed"),
            "a passed rule is folded"
        );
    }
    // Opening a fold shows its rules.
    if let Some(first) = passes.first() {
        browser
            .find(Locator::Css("details.fold.passed > summary"))
            .await
            .expect("a fold")
            .click()
            .await
            .expect("open it");
        assert!(
            first.is_displayed().await.expect("displayed"),
            "the fold opens"
        );
    }
    Triage {
        first_class: got[0].as_str().unwrap_or_default().to_owned(),
        first_top: got[1].as_f64().unwrap_or(f64::MAX),
        fold: got[2].as_f64().unwrap_or_default(),
        passed_counts: counts,
    }
}

#[tokio::test]
async fn a_non_compliant_run_shows_its_failures_first_and_folds_its_passes() {
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(2, Duration::from_secs(60)));
    let mcp = common::app::mcp_reference(&["MCP-HDR-001", "MCP-DSC-005"]).await;
    let mcp25 = crate::rule_pages::mcp25_reference(&["MCP25-RPC-007"]).await;
    let rcp = rcp_reference(&["RCP-L1-005"], Duration::ZERO).await;
    let runs = [
        (
            "MCP 2026-07-28",
            serde_json::json!({"url": mcp, "suite": "mcp"}),
        ),
        (
            "MCP 2025-11-25",
            serde_json::json!({"url": mcp25, "suite": "mcp",
                               "options": {"mcp_revision": "2025-11-25"}}),
        ),
        ("RCP/1", serde_json::json!({"url": rcp, "suite": "rcp"})),
    ];
    for (what, body) in runs {
        let created = app.submit(&body).await;
        let id = created["id"].as_str().expect("run id").to_owned();
        let run = app.wait_finished(&id, Duration::from_secs(120)).await;
        assert_eq!(run["status"], "failed", "{what}: {run:#}");
        let passed = run["verdict"]["counts"]["pass"].as_u64().expect("passes");
        assert!(passed > 10, "{what}: {run:#}");
        let t = triage_of(&browser, &app, &id, passed).await;
        assert!(
            t.first_class.split_whitespace().any(|c| c == "fail"),
            "{what}: the first finding shown is a failure: {}",
            t.first_class
        );
        assert!(
            t.first_top < t.fold,
            "{what}: the first failure is above the fold ({} of {})",
            t.first_top,
            t.fold
        );
        assert!(t.passed_counts.len() > 1, "{what}: passes fold per group");
        say(&format!(
            "browser test: {what}: first failure at {} px of {}, passes folded as {:?}",
            t.first_top, t.fold, t.passed_counts
        ));
    }
    let png = browser.screenshot().await.expect("screenshot");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("triage.png");
    std::fs::write(&path, &png).expect("save screenshot");
    browser.close().await.expect("close browser");
    pool.shutdown().await;
    drop(driver);
}

/// Waits until a click has left `before` and the new page has loaded (a
/// liveness bound, not a timing check).
async fn followed(browser: &fantoccini::Client, before: &url::Url) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let now = browser.current_url().await.expect("url");
        let ready = browser
            .execute("return document.readyState", vec![])
            .await
            .unwrap_or_default();
        if now != *before && ready == "complete" {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the click never left {before}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the element `locator` finds and waits for the page it leads to.
async fn click_through(browser: &fantoccini::Client, locator: Locator<'_>) {
    let before = browser.current_url().await.expect("url");
    browser
        .find(locator)
        .await
        .expect("the link or button")
        .click()
        .await
        .expect("click");
    followed(browser, &before).await;
}

/// The names in the directory page's rows, in order.
async fn directory_names(browser: &fantoccini::Client) -> Vec<String> {
    let mut names = Vec::new();
    for cell in browser
        .find_all(Locator::Css("#directory tbody td.dir-name"))
        .await
        .expect("rows")
    {
        let text = cell.text().await.expect("text");
        names.push(text.lines().next().unwrap_or_default().trim().to_owned());
    }
    names
}

/// The public directory in a real browser, without JavaScript doing the
/// work: a page of a synced registry, the next page, sorting by a column
/// header, the grade filter form, and a row's links to the target page and
/// the report.
#[tokio::test]
async fn a_person_filters_sorts_and_pages_the_directory_and_opens_a_report() {
    use protocheck::reference::registry::{StandInRegistry, entry};
    let Some((driver, _profile, browser)) = open_browser().await else {
        return;
    };
    let db = common::sqlite().await;
    let store = db.store.as_ref();
    let target = common::app::mcp_reference(&[]).await;
    let registry = StandInRegistry::synthetic(12, "http://127.0.0.1:9");
    registry.put(entry(
        "io.example.synthetic/reference",
        "1.0.0",
        "active",
        "2026-11-01T00:00:00Z",
        serde_json::json!([{"type": "streamable-http", "url": target}]),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let router = registry.router();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let cfg = protocheck::directory::SyncConfig {
        registry: url::Url::parse(&format!("http://{addr}/")).expect("url"),
        watch_interval: Duration::from_secs(1),
        user_agent: "protocheck-test".to_owned(),
        public_url: Some("https://protocheck.test".to_owned()),
    };
    let http = protocheck::transport::HttpClient::new(
        protocheck::transport::AddressPolicy::AllowPrivate,
        protocheck::transport::Limits::default(),
    )
    .expect("client");
    protocheck::directory::sync(store, &http, &cfg)
        .await
        .expect("sync");
    // The reference server's watch comes due; a worker judges it.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let ticked = protocheck::scheduler::tick(
        store,
        &protocheck::scheduler::ScheduleConfig::default(),
        protocheck::now_ms(),
    )
    .await
    .expect("tick");
    let app = TestApp::start(&db, 100).await;
    // The test ticked the schedule itself; the workers tick none.
    let mut workers = worker_config(2, Duration::from_secs(30));
    workers.schedule.enabled = false;
    let pool = app.workers(workers);
    let reference_target = protocheck::target::CanonicalUrl::parse(&target)
        .expect("url")
        .key();
    for run in &ticked.started {
        app.wait_finished(&run.id.to_string(), Duration::from_secs(120))
            .await;
    }
    assert!(
        ticked
            .started
            .iter()
            .any(|r| r.target_id == reference_target),
        "the reference server was judged"
    );

    // The header links to the directory; its first page holds five rows.
    browser.goto(&app.url("/")).await.expect("open home");
    click_through(&browser, Locator::Css("header a[href='/directory']")).await;
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.path(), "/directory");
    browser
        .goto(&app.url("/directory?limit=5"))
        .await
        .expect("open directory");
    let first = directory_names(&browser).await;
    assert_eq!(first.len(), 5, "{first:?}");
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(first, sorted, "by name by default");

    // The next page continues after it.
    click_through(&browser, Locator::Id("dir-next")).await;
    let second = directory_names(&browser).await;
    assert_eq!(second.len(), 5, "{second:?}");
    assert!(second[0] > first[4], "{first:?} then {second:?}");
    browser
        .find(Locator::Id("dir-first"))
        .await
        .expect("first page link");

    // A click on the Server header turns the order around.
    click_through(&browser, Locator::Css("#directory thead a.sort")).await;
    let descending = directory_names(&browser).await;
    assert_eq!(descending.len(), 5, "the page size is kept");
    let mut expected = descending.clone();
    expected.sort();
    expected.reverse();
    assert_eq!(descending, expected, "{descending:?}");
    assert!(descending[0] > first[4], "{descending:?}");

    // The grade filter keeps the judged server only; its row leads to the
    // target page and to the report.
    browser
        .find(Locator::Id("dir-grade"))
        .await
        .expect("grade filter")
        .select_by_value("strict")
        .await
        .expect("choose strict");
    click_through(&browser, Locator::Id("dir-apply")).await;
    let kept = directory_names(&browser).await;
    assert_eq!(kept, ["io.example.synthetic/reference"], "{kept:?}");
    let badge = browser
        .find(Locator::Css("#directory tbody img"))
        .await
        .expect("badge image");
    let loaded = browser
        .execute(
            "return arguments[0].complete && arguments[0].naturalWidth > 0;",
            vec![serde_json::to_value(&badge).expect("element")],
        )
        .await
        .expect("badge state");
    assert_eq!(loaded, serde_json::json!(true), "the badge image loads");
    click_through(&browser, Locator::Css("#directory tbody a.report")).await;
    // The watch re-checks the server every second here, so the latest run
    // may be a later one than the first: any run of the reference server.
    let url = browser.current_url().await.expect("url");
    let shown = url.path().strip_prefix("/runs/").expect("a run page");
    let (_, run) = app.get_json(&format!("/api/v1/runs/{shown}")).await;
    assert_eq!(run["target_id"], reference_target.as_str(), "{run}");
    browser
        .find(Locator::Css("section.verdict .headline"))
        .await
        .expect("the report");
    let report_url = browser.current_url().await.expect("url");
    browser.back().await.expect("back");
    followed(&browser, &report_url).await;
    click_through(&browser, Locator::Css("#directory tbody a.target")).await;
    let url = browser.current_url().await.expect("url");
    assert_eq!(url.path(), format!("/targets/{reference_target}"));

    browser.close().await.expect("close browser");
    pool.shutdown().await;
    drop(driver);
}
