//! The public directory's registry sync (#52) against a stand-in registry
//! serving the published `/v0.1/servers` shape on loopback, on SQLite and
//! Postgres: the first sync lists every remote (with a watch when it can be
//! judged, with the reason when not), a later one reads only what changed
//! and drops what was deleted, a delisted URL never comes back, and a
//! registry that fails mid-sync leaves the directory as it was with the
//! failure recorded.

use crate::common;
use protocheck::directory::{SyncConfig, sync};
use protocheck::reference::registry::{RegistryFault, StandInRegistry, entry};
use protocheck::store::Store;
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use serde_json::json;
use std::time::Duration;

async fn serve(registry: &StandInRegistry) -> url::Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = registry.router();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url::Url::parse(&format!("http://{addr}/")).expect("url")
}

fn config(registry: url::Url) -> SyncConfig {
    SyncConfig {
        registry,
        watch_interval: Duration::from_secs(3600),
        user_agent: "protocheck-test".to_owned(),
        public_url: Some("https://protocheck.test".to_owned()),
    }
}

fn client() -> HttpClient {
    HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client")
}

fn remote(url: &str) -> serde_json::Value {
    json!([{"type": "streamable-http", "url": url}])
}

async fn urls(store: &dyn Store) -> Vec<(String, Option<String>, String)> {
    store
        .directory_entries()
        .await
        .expect("entries")
        .into_iter()
        .map(|e| (e.url, e.not_probed, e.status))
        .collect()
}

#[tokio::test]
async fn a_sync_lists_the_registry_then_follows_its_changes_and_deletions() {
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let registry = StandInRegistry::new(vec![
            entry(
                "io.example/alpha",
                "1.0.0",
                "active",
                "2026-11-01T00:00:00Z",
                remote("http://127.0.0.1:9/alpha/mcp"),
            ),
            entry(
                "io.example/beta",
                "2.0.0",
                "deprecated",
                "2026-11-01T00:00:01Z",
                json!([
                    {"type": "sse", "url": "http://127.0.0.1:9/beta/sse"},
                    {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                     "variables": {"tenant": {"isRequired": true}}},
                    {"type": "streamable-http", "url": "http://127.0.0.1:9/beta/keyed",
                     "headers": [{"name": "X-API-Key", "isRequired": true, "isSecret": true}]}
                ]),
            ),
            entry(
                "io.example/gone",
                "1.0.0",
                "deleted",
                "2026-11-01T00:00:02Z",
                remote("http://127.0.0.1:9/gone/mcp"),
            ),
        ]);
        let cfg = config(serve(&registry).await);

        let first = sync(store, &client(), &cfg).await.expect("first sync");
        assert!(!first.incremental);
        assert_eq!((first.judged, first.not_probed), (2, 2), "{first:?}");
        assert_eq!(
            urls(store).await,
            [
                (
                    "http://127.0.0.1:9/alpha/mcp".to_owned(),
                    None,
                    "active".to_owned()
                ),
                (
                    "http://127.0.0.1:9/beta/keyed".to_owned(),
                    Some("needs a header (X-API-Key)".to_owned()),
                    "deprecated".to_owned()
                ),
                (
                    "http://127.0.0.1:9/beta/sse".to_owned(),
                    None,
                    "deprecated".to_owned()
                ),
                (
                    "https://{tenant}.example.com/mcp".to_owned(),
                    Some("templated URL".to_owned()),
                    "deprecated".to_owned()
                ),
            ]
        );
        // The judged ones are watched, keyless and without end, on every
        // revision; their first slot falls within the interval.
        let watches = store.list_watches(None).await.expect("watches");
        assert_eq!(watches.len(), 2, "{watches:?}");
        for w in &watches {
            assert_eq!(w.suite, "mcp");
            assert_eq!(w.api_key, None);
            assert_eq!(w.expires_at_ms, None);
            assert_eq!(w.interval_ms, 3_600_000);
            assert!(w.next_due_at_ms <= protocheck::now_ms() + 3_600_000);
        }
        let sync_state = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("recorded");
        // The mark is the newest `updatedAt` read; a first sync does not
        // read a deleted entry (the registry leaves it out).
        assert_eq!(
            sync_state.high_water.as_deref(),
            Some("2026-11-01T00:00:01Z")
        );
        assert!(sync_state.last_error.is_none());

        // Later: alpha moves to a new URL, beta is deleted.
        registry.put(entry(
            "io.example/alpha",
            "1.0.0",
            "active",
            "2026-11-02T00:00:00Z",
            remote("http://127.0.0.1:9/alpha/v2/mcp"),
        ));
        registry.put(entry(
            "io.example/beta",
            "2.0.0",
            "deleted",
            "2026-11-02T00:00:01Z",
            json!([]),
        ));
        let second = sync(store, &client(), &cfg).await.expect("second sync");
        assert!(second.incremental);
        // Only what changed since the mark is read: alpha, beta, and the
        // entry deleted before the first sync (deleted entries come with
        // `updated_since`), which was never listed.
        assert_eq!(second.entries, 3, "{second:?}");
        assert_eq!(second.removed, 4, "{second:?}");
        assert_eq!(
            urls(store).await,
            [(
                "http://127.0.0.1:9/alpha/v2/mcp".to_owned(),
                None,
                "active".to_owned()
            )]
        );
        let watches = store.list_watches(None).await.expect("watches");
        assert_eq!(
            watches.len(),
            1,
            "the watches of what left end: {watches:?}"
        );

        // An operator delists alpha: it leaves, and a sync that reads it
        // again does not bring it back.
        let gone = store
            .delist_directory_url(
                "http://127.0.0.1:9/alpha/v2/mcp",
                "asked by its owner",
                "operator",
                1,
            )
            .await
            .expect("delist");
        assert!(gone.is_some());
        registry.put(entry(
            "io.example/alpha",
            "1.0.1",
            "active",
            "2026-11-03T00:00:00Z",
            remote("http://127.0.0.1:9/alpha/v2/mcp"),
        ));
        let third = sync(store, &client(), &cfg).await.expect("third sync");
        assert_eq!(third.delisted, 1, "{third:?}");
        assert!(urls(store).await.is_empty());
    }
}

#[tokio::test]
async fn a_registry_failing_mid_sync_leaves_the_directory_and_its_mark_as_they_were() {
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        // 150 entries: two pages of 100; the second fails.
        let registry = StandInRegistry::synthetic(150, "http://127.0.0.1:9");
        registry.set_fault(RegistryFault::FailAfterPages(1));
        let cfg = config(serve(&registry).await);
        let err = sync(store, &client(), &cfg).await.expect_err("fails");
        assert!(err.to_string().contains("HTTP 500"), "{err}");
        let state = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("the attempt is recorded");
        assert!(state.last_success_ms.is_none());
        assert!(state.high_water.is_none(), "the mark does not move");
        assert!(
            state
                .last_error
                .as_deref()
                .is_some_and(|e| e.contains("500"))
        );
        let listed = urls(store).await.len();
        assert_eq!(listed, 100, "the first page's entries stay listed");

        // A body that is not a server list is a failure too; then the
        // registry recovers and the whole list is read.
        registry.set_fault(RegistryFault::GarbageAfterPages(0));
        let err = sync(store, &client(), &cfg).await.expect_err("garbage");
        assert!(err.to_string().contains("not a server list"), "{err}");
        registry.set_fault(RegistryFault::None);
        let done = sync(store, &client(), &cfg).await.expect("recovered");
        assert!(
            !done.incremental,
            "no complete sync yet: the whole registry"
        );
        assert_eq!(done.entries, 150);
        assert_eq!(urls(store).await.len(), 150);
        let state = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("recorded");
        assert!(state.last_error.is_none() && state.last_success_ms.is_some());
    }
}

#[tokio::test]
async fn a_registry_on_a_private_address_is_refused_unless_private_targets_are_allowed() {
    let db = common::sqlite().await;
    let registry = StandInRegistry::synthetic(1, "http://127.0.0.1:9");
    let cfg = config(serve(&registry).await);
    let public_only =
        HttpClient::new(AddressPolicy::PublicOnly, Limits::default()).expect("client");
    let err = sync(db.store.as_ref(), &public_only, &cfg)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("could not be reached"), "{err}");
    assert!(urls(db.store.as_ref()).await.is_empty());
}

#[tokio::test]
async fn a_listed_server_is_judged_when_its_watch_is_due_and_the_entry_shows_the_grade() {
    use common::app::{TestApp, mcp_reference_with, worker_config};
    use protocheck::reference::mcp::McpReferenceConfig;
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let target =
            mcp_reference_with(McpReferenceConfig::new(Default::default()).expect("config")).await;
        let registry = StandInRegistry::new(vec![entry(
            "io.example/reference",
            "1.0.0",
            "active",
            "2026-11-01T00:00:00Z",
            remote(&target),
        )]);
        let mut cfg = config(serve(&registry).await);
        // A slot within the next second.
        cfg.watch_interval = Duration::from_secs(1);
        let report = sync(store, &client(), &cfg).await.expect("sync");
        assert_eq!(report.judged, 1, "{report:?}");

        // The watch's slot comes, the scheduler starts its run, and a
        // worker judges it.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let ticked = protocheck::scheduler::tick(
            store,
            &protocheck::scheduler::ScheduleConfig::default(),
            protocheck::now_ms(),
        )
        .await
        .expect("tick");
        assert_eq!(ticked.started.len(), 1, "{ticked:?}");
        let run = &ticked.started[0];
        assert_eq!(
            run.options.mcp_revision,
            Some(protocheck::suite::McpRevision::All),
            "every revision the server speaks"
        );
        assert!(run.options.bearer_token.is_none());
        let app = TestApp::start(&db, 100).await;
        let _pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let done = app
            .wait_finished(&run.id.to_string(), Duration::from_secs(120))
            .await;
        let listed = store
            .directory_entry(&target)
            .await
            .expect("entry")
            .expect("listed");
        assert_eq!(listed.grade.as_deref(), Some("strict"), "{done}");
        assert_eq!(listed.last_run_id, Some(run.id.to_string()));
        assert!(listed.judged_at_ms.is_some());
        assert_eq!(
            listed.previous_grade, None,
            "the first verdict has no trend"
        );
    }
}

/// `GET path` of `app`: status, content type and body.
async fn fetch(app: &common::app::TestApp, path: &str) -> (u16, String, String) {
    let resp = app.http.get(app.url(path)).send().await.expect("GET");
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, ctype, resp.text().await.expect("body"))
}

/// Syncs a registry listing the reference MCP server, a protected one and a
/// hostile entry; the watches' runs are judged by a worker; the page and the
/// API show each with its grade, date and badge (the protected one as
/// "authorization required", never a grade); a later sync's change and
/// deletion show on both.
#[tokio::test]
async fn judged_registry_servers_show_on_the_directory_page_and_api_and_follow_the_registry() {
    use common::app::{TestApp, mcp_reference_with, worker_config};
    use protocheck::reference::mcp::McpReferenceConfig;
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let open =
            mcp_reference_with(McpReferenceConfig::new(Default::default()).expect("config")).await;
        let protected = mcp_reference_with(
            McpReferenceConfig::new(Default::default())
                .expect("config")
                .with_auth(),
        )
        .await;
        let mut hostile = entry(
            "io.example/<script>alert(1)</script>",
            "1.0.0",
            "active",
            "2026-11-01T00:00:02Z",
            json!([{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                    "variables": {"tenant": {"isRequired": true}}}]),
        );
        hostile["server"]["description"] = json!("<img src=x onerror=alert(2)>");
        let registry = StandInRegistry::new(vec![
            entry(
                "io.example/open",
                "1.0.0",
                "active",
                "2026-11-01T00:00:00Z",
                remote(&open),
            ),
            entry(
                "io.example/protected",
                "1.0.0",
                "active",
                "2026-11-01T00:00:01Z",
                remote(&protected),
            ),
            hostile,
        ]);
        let mut cfg = config(serve(&registry).await);
        cfg.watch_interval = Duration::from_secs(1);
        let report = sync(store, &client(), &cfg).await.expect("sync");
        assert_eq!((report.judged, report.not_probed), (2, 1), "{report:?}");

        tokio::time::sleep(Duration::from_millis(1100)).await;
        let ticked = protocheck::scheduler::tick(
            store,
            &protocheck::scheduler::ScheduleConfig::default(),
            protocheck::now_ms(),
        )
        .await
        .expect("tick");
        assert_eq!(ticked.started.len(), 2, "{ticked:?}");
        let app = TestApp::start(&db, 100).await;
        // The test ticks the schedule itself: the workers' own would start
        // the one-second watches again while the test reads the first verdicts.
        let mut workers = worker_config(2, Duration::from_secs(30));
        workers.schedule.enabled = false;
        let _pool = app.workers(workers);
        for run in &ticked.started {
            app.wait_finished(&run.id.to_string(), Duration::from_secs(120))
                .await;
        }

        let (status, doc) = app.get_json("/api/v1/directory").await;
        assert_eq!(status, 200, "{doc}");
        let servers = doc["servers"].as_array().expect("servers");
        assert_eq!(servers.len(), 3, "{doc}");
        assert!(
            doc["next"].is_null() && doc["last_synced"].is_string(),
            "{doc}"
        );
        let by_name = |name: &str| {
            servers
                .iter()
                .find(|s| s["name"] == name)
                .cloned()
                .unwrap_or_else(|| panic!("{name} in {doc}"))
        };
        let judged = by_name("io.example/open");
        assert_eq!(judged["grade"], "strict", "{judged}");
        assert_eq!(judged["authorization_required"], false);
        assert!(judged["judged_at"].is_string(), "{judged}");
        assert!(
            judged["grades"]
                .as_object()
                .is_some_and(|g| !g.is_empty() && g.values().all(|v| v == "strict")),
            "{judged}"
        );
        assert!(judged["trend"].is_null(), "a first verdict has no trend");
        let badge = judged["links"]["badge"].as_str().expect("badge");
        let (status, ctype, svg) = fetch(&app, badge).await;
        assert_eq!((status, ctype.as_str()), (200, "image/svg+xml"), "{svg}");
        assert!(svg.contains("strict"), "{svg}");
        let report = judged["links"]["report"].as_str().expect("report");
        assert_eq!(fetch(&app, report).await.0, 200);
        let locked = by_name("io.example/protected");
        assert_eq!(locked["authorization_required"], true, "{locked}");
        assert_eq!(locked["withheld"], "authorization required", "{locked}");
        let unprobed = by_name("io.example/<script>alert(1)</script>");
        assert_eq!(unprobed["not_probed"], "templated URL");
        assert!(unprobed["links"]["badge"].is_null());

        // The page: every row, the grade, the badge, the target link; the
        // protected server without a grade; the registry's text escaped.
        let (status, ctype, html) = fetch(&app, "/directory").await;
        assert_eq!(status, 200);
        assert!(ctype.starts_with("text/html"), "{ctype}");
        let target = judged["links"]["target"].as_str().expect("target link");
        assert!(html.contains(&format!("href=\"{target}\"")), "{html}");
        assert!(html.contains(&format!("src=\"{badge}\"")), "{html}");
        assert!(html.contains(">strict<"), "{html}");
        assert!(html.contains(">authorization required<"), "{html}");
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(html.contains("&#60;script&#62;alert(1)"), "{html}");
        let (status, _, target_page) = fetch(&app, target).await;
        assert_eq!(status, 200, "{target_page}");

        // Filters read the verdicts.
        let (_, strict) = app.get_json("/api/v1/directory?grade=strict").await;
        assert_eq!(
            strict["servers"].as_array().map(Vec::len),
            Some(1),
            "{strict}"
        );
        let (_, none) = app.get_json("/api/v1/directory?grade=none").await;
        assert_eq!(none["servers"][0]["not_probed"], "templated URL", "{none}");
        let revision = judged["grades"]
            .as_object()
            .and_then(|g| g.keys().next().cloned())
            .expect("a revision");
        let (_, of_revision) = app
            .get_json(&format!(
                "/api/v1/directory?revision={revision}&grade=strict"
            ))
            .await;
        assert_eq!(
            of_revision["servers"][0]["name"], "io.example/open",
            "{of_revision}"
        );
        let (_, by_grade) = app
            .get_json("/api/v1/directory?sort=grade&order=desc")
            .await;
        assert_eq!(
            by_grade["servers"][0]["name"], "io.example/open",
            "{by_grade}"
        );

        // The dataset: a line per listed server, the judged ones with the
        // digest of their latest signed statement.
        let (status, ctype, jsonl) = fetch(&app, "/api/v1/directory/export.jsonl").await;
        assert_eq!(status, 200);
        assert!(ctype.starts_with("application/jsonl"), "{ctype}");
        let lines: Vec<serde_json::Value> = jsonl
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 3, "{jsonl}");
        let line = lines
            .iter()
            .find(|l| l["name"] == "io.example/open")
            .expect("the judged server");
        assert_eq!(line["grade"], "strict", "{line}");
        let attestation = line["attestation"].as_str().expect("attestation link");
        let (status, envelope) = app.get_json(attestation).await;
        assert_eq!(status, 200, "{envelope}");
        let payload = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(envelope["payload"].as_str().expect("payload"))
                .expect("base64")
        };
        let digest = {
            use sha2::Digest;
            format!("sha256:{}", hex::encode(sha2::Sha256::digest(&payload)))
        };
        assert_eq!(line["statement_digest"], digest.as_str(), "{line}");
        let locked_line = lines
            .iter()
            .find(|l| l["name"] == "io.example/protected")
            .expect("the protected server");
        assert!(locked_line["grade"].is_null(), "{locked_line}");
        assert_eq!(locked_line["authorization_required"], true);

        // The registry changes the open server's title and deletes the
        // protected one; the next sync shows both.
        let mut changed = entry(
            "io.example/open",
            "1.1.0",
            "deprecated",
            "2026-11-02T00:00:00Z",
            remote(&open),
        );
        changed["server"]["title"] = json!("Open Server");
        registry.put(changed);
        registry.put(entry(
            "io.example/protected",
            "1.0.0",
            "deleted",
            "2026-11-02T00:00:01Z",
            json!([]),
        ));
        let second = sync(store, &client(), &cfg).await.expect("second sync");
        assert!(second.incremental, "{second:?}");
        let (_, doc) = app.get_json("/api/v1/directory").await;
        let names: Vec<_> = doc["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(
            names,
            ["io.example/<script>alert(1)</script>", "io.example/open"],
            "{doc}"
        );
        let open_now = &doc["servers"][1];
        assert_eq!(
            (
                &open_now["title"],
                &open_now["status"],
                &open_now["version"]
            ),
            (&json!("Open Server"), &json!("deprecated"), &json!("1.1.0"))
        );
        assert_eq!(open_now["grade"], "strict", "the verdict stays: {doc}");
        let (_, _, html) = fetch(&app, "/directory").await;
        assert!(html.contains("Open Server") && !html.contains("io.example/protected"));
    }
}

/// Sorting by each column, both ways, page by page with the cursor, reads
/// every entry once and in order; filters keep only what they name.
#[tokio::test]
async fn the_directory_api_sorts_by_any_column_and_pages_with_its_cursor() {
    use common::app::TestApp;
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let registry = StandInRegistry::synthetic(60, "http://127.0.0.1:9");
        let mut sse = entry(
            "io.example.synthetic/streams",
            "1.0.0",
            "active",
            "2026-11-01T00:00:00Z",
            json!([{"type": "sse", "url": "http://127.0.0.1:9/sse"}]),
        );
        sse["server"]["title"] = json!("Weather Streams");
        registry.put(sse);
        let cfg = config(serve(&registry).await);
        sync(store, &client(), &cfg).await.expect("sync");
        let app = TestApp::start(&db, 100).await;
        let mut all: Vec<String> = store
            .directory_entries()
            .await
            .expect("entries")
            .into_iter()
            .map(|e| e.url)
            .collect();
        all.sort();
        assert_eq!(all.len(), 61);

        for sort in ["name", "url", "transport", "status", "grade", "judged"] {
            for order in ["asc", "desc"] {
                let mut read = Vec::new();
                let mut keys = Vec::new();
                let mut path = format!("/api/v1/directory?sort={sort}&order={order}&limit=7");
                let mut pages = 0;
                loop {
                    let (status, doc) = app.get_json(&path).await;
                    assert_eq!(status, 200, "{path}: {doc}");
                    pages += 1;
                    for s in doc["servers"].as_array().expect("servers") {
                        read.push(s["url"].as_str().expect("url").to_owned());
                        keys.push(match sort {
                            "name" => s["name"].as_str().unwrap_or_default().to_lowercase(),
                            "url" => s["url"].as_str().unwrap_or_default().to_owned(),
                            other => s[other].to_string(),
                        });
                    }
                    match doc["links"]["next"].as_str() {
                        Some(next) => path = next.to_owned(),
                        None => break,
                    }
                }
                assert_eq!(pages, 9, "{sort} {order}: 61 rows at 7 a page");
                let mut seen = read.clone();
                seen.sort();
                assert_eq!(seen, all, "{sort} {order}: each entry once");
                if matches!(sort, "name" | "url" | "transport" | "status") {
                    let mut sorted = keys.clone();
                    sorted.sort();
                    if order == "desc" {
                        sorted.reverse();
                    }
                    assert_eq!(keys, sorted, "{sort} {order}");
                }
            }
        }

        let count = |doc: &serde_json::Value| doc["servers"].as_array().map_or(0, Vec::len);
        let (_, doc) = app
            .get_json("/api/v1/directory?transport=sse&limit=200")
            .await;
        assert_eq!(count(&doc), 1, "{doc}");
        assert_eq!(doc["servers"][0]["title"], "Weather Streams");
        let (_, doc) = app.get_json("/api/v1/directory?q=WEATHER").await;
        assert_eq!(count(&doc), 1, "the title matches, any case: {doc}");
        let (_, doc) = app.get_json("/api/v1/directory?q=server-000004").await;
        assert_eq!(count(&doc), 1, "{doc}");
        let (_, doc) = app.get_json("/api/v1/directory?q=%25").await;
        assert_eq!(
            count(&doc),
            0,
            "a LIKE wildcard is a plain character: {doc}"
        );
        let (_, doc) = app.get_json("/api/v1/directory?grade=strict").await;
        assert_eq!(count(&doc), 0, "nothing judged yet: {doc}");
        let (_, doc) = app.get_json("/api/v1/directory?grade=none&limit=200").await;
        assert_eq!(count(&doc), 61, "{doc}");
        let (_, doc) = app.get_json("/api/v1/directory?revision=2025-11-25").await;
        assert_eq!(count(&doc), 0, "{doc}");
    }
}

/// Each parameter that cannot be read is answered 400 problem+json naming
/// it; so is an unknown parameter, and the page answers 400 too.
#[tokio::test]
async fn unreadable_directory_parameters_are_refused_naming_the_parameter() {
    use common::app::TestApp;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let cursor_of_name = {
        let registry = StandInRegistry::synthetic(3, "http://127.0.0.1:9");
        let cfg = config(serve(&registry).await);
        sync(db.store.as_ref(), &client(), &cfg)
            .await
            .expect("sync");
        let (_, doc) = app.get_json("/api/v1/directory?limit=1").await;
        doc["next"].as_str().expect("a next page").to_owned()
    };
    let long_q = format!("q={}", "a".repeat(101));
    let other_sort = format!("sort=grade&cursor={cursor_of_name}");
    for (query, field) in [
        ("grade=excellent", "grade"),
        ("revision=2024-11-05", "revision"),
        ("transport=stdio", "transport"),
        ("sort=stars", "sort"),
        ("order=sideways", "order"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("cursor=%21%21", "cursor"),
        ("cursor=W10", "cursor"),
        (long_q.as_str(), "q"),
        (other_sort.as_str(), "cursor"),
    ] {
        let resp = app
            .http
            .get(app.url(&format!("/api/v1/directory?{query}")))
            .send()
            .await
            .expect("GET");
        assert_eq!(resp.status().as_u16(), 400, "{query}");
        assert_eq!(
            resp.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/problem+json"),
            "{query}"
        );
        let problem: serde_json::Value = resp.json().await.expect("json");
        assert_eq!(problem["field"], field, "{query}: {problem}");
        assert_eq!(problem["type"], "/problems/invalid-parameter", "{problem}");
        let (status, _, page) = fetch(&app, &format!("/directory?{query}")).await;
        assert_eq!(status, 400, "{query}: {page}");
        assert!(page.contains(field), "{query}: {page}");
    }
    let (status, problem) = app.get_json("/api/v1/directory?color=red").await;
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("color")),
        "{problem}"
    );
}

/// A server origin on loopback whose `/.well-known/protocheck-optout` serves
/// what `file` holds (404 while it holds nothing).
async fn optout_origin(file: std::sync::Arc<std::sync::Mutex<Option<String>>>) -> String {
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    async fn optout(
        State(file): State<std::sync::Arc<std::sync::Mutex<Option<String>>>>,
    ) -> axum::response::Response {
        let body = file.lock().ok().and_then(|f| f.clone());
        match body {
            Some(text) => (StatusCode::OK, text).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        }
    }
    let app = axum::Router::new()
        .route("/.well-known/protocheck-optout", axum::routing::get(optout))
        .with_state(file);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn file(text: Option<&str>) -> std::sync::Arc<std::sync::Mutex<Option<String>>> {
    std::sync::Arc::new(std::sync::Mutex::new(text.map(str::to_owned)))
}

/// An owner's opt-out file naming this service (or every service) takes
/// its origin's URLs out at the sync that reads it, and at any later sync
/// when it appears afterwards; one naming another service does not. An
/// operator's delisting is for good too: no sync brings either back, and
/// the API no longer shows them.
#[tokio::test]
async fn an_owners_optout_file_and_an_operators_delisting_take_servers_out_for_good() {
    use common::app::TestApp;
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let named = optout_origin(file(Some(
            "# not in directories\nhttps://protocheck.test/\n",
        )))
        .await;
        let other_file = file(Some("https://another-service.example\n"));
        let other = optout_origin(other_file.clone()).await;
        let absent = optout_origin(file(None)).await;
        let registry = StandInRegistry::new(vec![
            entry(
                "io.example/named",
                "1.0.0",
                "active",
                "2026-11-01T00:00:00Z",
                remote(&format!("{named}/mcp")),
            ),
            entry(
                "io.example/other",
                "1.0.0",
                "active",
                "2026-11-01T00:00:01Z",
                remote(&format!("{other}/mcp")),
            ),
            entry(
                "io.example/absent",
                "1.0.0",
                "active",
                "2026-11-01T00:00:02Z",
                remote(&format!("{absent}/mcp")),
            ),
        ]);
        let cfg = config(serve(&registry).await);
        let first = sync(store, &client(), &cfg).await.expect("sync");
        assert_eq!((first.judged, first.delisted), (2, 1), "{first:?}");
        let listed: Vec<_> = urls(store).await.into_iter().map(|u| u.0).collect();
        assert_eq!(listed, [format!("{absent}/mcp"), format!("{other}/mcp")]);
        assert_eq!(
            store
                .directory_delisting(&format!("{named}/mcp"))
                .await
                .expect("read")
                .as_deref(),
            Some(protocheck::directory::OWNER_OPTED_OUT)
        );
        assert_eq!(store.list_watches(None).await.expect("watches").len(), 2);

        // The other origin's owner names this service later: the next sync
        // (the registry unchanged) takes it out with its watch.
        *other_file.lock().expect("lock") = Some("*".to_owned());
        let second = sync(store, &client(), &cfg).await.expect("sync");
        // It reads again only the entry at the mark (`updated_since` is
        // inclusive); the other origin's file is asked all the same.
        assert_eq!((second.entries, second.delisted), (1, 1), "{second:?}");
        let listed: Vec<_> = urls(store).await.into_iter().map(|u| u.0).collect();
        assert_eq!(listed, [format!("{absent}/mcp")]);
        assert_eq!(store.list_watches(None).await.expect("watches").len(), 1);

        // The operator delists the last one.
        store
            .delist_directory_url(&format!("{absent}/mcp"), "asked by mail", "operator", 1)
            .await
            .expect("delist");
        let app = TestApp::start(&db, 100).await;
        let (_, doc) = app.get_json("/api/v1/directory").await;
        assert_eq!(doc["servers"], json!([]), "{doc}");

        // The file goes and every entry is updated in the registry: none
        // comes back.
        *other_file.lock().expect("lock") = None;
        for (name, origin, at) in [
            ("io.example/named", &named, "2026-11-02T00:00:00Z"),
            ("io.example/other", &other, "2026-11-02T00:00:01Z"),
            ("io.example/absent", &absent, "2026-11-02T00:00:02Z"),
        ] {
            registry.put(entry(
                name,
                "1.0.1",
                "active",
                at,
                remote(&format!("{origin}/mcp")),
            ));
        }
        let third = sync(store, &client(), &cfg).await.expect("sync");
        assert_eq!(
            (third.entries, third.delisted, third.judged),
            (3, 3, 0),
            "{third:?}"
        );
        assert!(urls(store).await.is_empty());
        let (_, doc) = app.get_json("/api/v1/directory").await;
        assert_eq!(doc["servers"], json!([]), "{doc}");
    }
}

/// The listing a test service keeps: the owners' files read on loopback.
pub(crate) fn listing() -> protocheck::directory::Listing {
    protocheck::directory::Listing {
        optout_client: protocheck::directory::optout::client(&client()).expect("client"),
        public_url: Some("https://protocheck.test".to_owned()),
        user_agent: "protocheck-test".to_owned(),
        watch_interval: Duration::from_secs(3600),
    }
}

/// A person who checks an MCP server and asks to list it gets it listed
/// (source `submission`, watched, graded when its run ends), unless its
/// owner's file names this service; a service without a directory, or an
/// RCP run, refuses the request; the form offers it only with a directory.
#[tokio::test]
async fn a_checked_server_is_listed_on_request_unless_its_owner_opted_out() {
    use common::app::{TestApp, mcp_reference, worker_config};
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let plain = TestApp::start(&db, 100).await;
        let target = mcp_reference(&[]).await;
        let refused = plain
            .post_json(
                "/api/v1/runs",
                &json!({"url": target, "suite": "mcp", "list_in_directory": true}),
            )
            .await;
        assert_eq!(refused.status().as_u16(), 422);
        let problem: serde_json::Value = refused.json().await.expect("json");
        assert_eq!(problem["field"], "list_in_directory", "{problem}");
        assert!(!plain.get_text("/").await.contains("list_in_directory"));

        let app = TestApp::start_tuned(&db, 100, |o| o.directory = Some(listing())).await;
        assert!(
            app.get_text("/")
                .await
                .contains("name=\"list_in_directory\"")
        );
        let rcp = app
            .post_json(
                "/api/v1/runs",
                &json!({"url": target, "suite": "rcp", "list_in_directory": true}),
            )
            .await;
        assert_eq!(rcp.status().as_u16(), 422);

        let _pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let run = app
            .submit(&json!({"url": target, "suite": "mcp", "list_in_directory": true}))
            .await;
        assert_eq!(run["directory"], "listed", "{run}");
        let id = run["id"].as_str().expect("id").to_owned();
        app.wait_finished(&id, Duration::from_secs(120)).await;
        let listed = store
            .directory_entry(&target)
            .await
            .expect("read")
            .expect("listed");
        assert_eq!(listed.source, "submission");
        assert_eq!(listed.grade.as_deref(), Some("strict"), "{listed:?}");
        let watches = store.list_watches(None).await.expect("watches");
        assert_eq!(watches.len(), 1, "re-checked like a registry entry");
        assert_eq!(watches[0].api_key, None);
        let (_, doc) = app.get_json("/api/v1/directory").await;
        assert_eq!(doc["servers"][0]["source"], "submission", "{doc}");
        assert_eq!(doc["servers"][0]["grade"], "strict", "{doc}");
        assert!(doc["servers"][0]["name"].is_null());

        // The form's box does the same.
        let second = mcp_reference(&[]).await;
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let home = browser.get(app.url("/")).send().await.expect("GET /");
        let token = home
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|c| c.split(';').next())
            .and_then(|kv| kv.split_once('='))
            .map(|(_, v)| v.to_owned())
            .expect("csrf cookie");
        let posted = browser
            .post(app.url("/"))
            .header("cookie", format!("pc_csrf={token}"))
            .form(&[
                ("url", second.as_str()),
                ("suite", "mcp"),
                ("list_in_directory", "true"),
                ("csrf", token.as_str()),
            ])
            .send()
            .await
            .expect("POST /");
        assert_eq!(posted.status().as_u16(), 303, "{:?}", posted.text().await);
        let from_form = store
            .directory_entry(&second)
            .await
            .expect("read")
            .expect("listed from the form");
        assert_eq!(from_form.source, "submission");

        // An origin whose owner opted out: the run goes ahead, the listing
        // does not, for good.
        let opted = optout_origin(file(Some("*"))).await;
        let run = app
            .submit(
                &json!({"url": format!("{opted}/mcp"), "suite": "mcp", "list_in_directory": true}),
            )
            .await;
        assert_eq!(run["directory"], "opted-out", "{run}");
        assert!(run["id"].is_string());
        let url = format!("{opted}/mcp");
        assert!(store.directory_entry(&url).await.expect("read").is_none());
        assert!(
            store
                .directory_delisting(&url)
                .await
                .expect("read")
                .is_some()
        );
        let again = app
            .submit(&json!({"url": url, "suite": "mcp", "list_in_directory": true, "force": true}))
            .await;
        assert_eq!(again["directory"], "delisted", "{again}");
    }
}

/// A loopback server that records the User-Agent of every request and
/// answers 404; returns its URL and what it saw.
async fn agent_recorder() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<String>>>;
    async fn record(State(seen): State<Seen>, headers: HeaderMap) -> StatusCode {
        let agent = headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if let Ok(mut s) = seen.lock() {
            s.push(agent);
        }
        StatusCode::NOT_FOUND
    }
    let seen: Seen = Default::default();
    let app = axum::Router::new()
        .fallback(record)
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp"), seen)
}

/// The run of a listed server names the service and its contact in its
/// User-Agent; the run of a server the directory does not list keeps
/// protocheck's plain one.
#[tokio::test]
async fn a_listed_servers_run_names_the_service_and_its_contact() {
    use common::app::{TestApp, worker_config};
    let db = common::sqlite().await;
    let store = db.store.as_ref();
    let (listed, listed_saw) = agent_recorder().await;
    let (other, other_saw) = agent_recorder().await;
    let registry = StandInRegistry::new(vec![entry(
        "io.example/recorded",
        "1.0.0",
        "active",
        "2026-11-01T00:00:00Z",
        remote(&listed),
    )]);
    let mut cfg = config(serve(&registry).await);
    cfg.watch_interval = Duration::from_secs(1);
    sync(store, &client(), &cfg).await.expect("sync");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let ticked = protocheck::scheduler::tick(
        store,
        &protocheck::scheduler::ScheduleConfig::default(),
        protocheck::now_ms(),
    )
    .await
    .expect("tick");
    assert_eq!(ticked.started.len(), 1, "{ticked:?}");
    let app = TestApp::start(&db, 100).await;
    let agent = protocheck::config::directory_user_agent(
        Some("https://protocheck.test"),
        Some("mailto:ops@protocheck.test"),
    );
    let mut workers = worker_config(1, Duration::from_secs(30));
    workers.directory_user_agent = Some(agent.clone());
    workers.schedule.enabled = false;
    let _pool = app.workers(workers);
    app.wait_finished(&ticked.started[0].id.to_string(), Duration::from_secs(120))
        .await;
    let run = app.submit(&json!({"url": other, "suite": "mcp"})).await;
    app.wait_finished(run["id"].as_str().expect("id"), Duration::from_secs(120))
        .await;

    let listed_saw = listed_saw.lock().expect("lock").clone();
    let from_run: Vec<&String> = listed_saw
        .iter()
        // The sync's own request (its opt-out file) carries the sync's agent.
        .filter(|a| a.as_str() != "protocheck-test")
        .collect();
    assert!(!from_run.is_empty(), "the run reached the server");
    assert!(
        from_run.iter().any(|a| **a == agent),
        "the run named the service: {listed_saw:?}"
    );
    assert!(
        agent.contains("https://protocheck.test") && agent.contains("mailto:ops@protocheck.test"),
        "{agent}"
    );
    let other_saw = other_saw.lock().expect("lock").clone();
    assert!(!other_saw.is_empty());
    assert!(
        other_saw.iter().all(|a| !a.contains("public directory")),
        "{other_saw:?}"
    );
}

/// An MCP reference server on one address that can be broken and fixed
/// between runs: `broken` picks which of two reference servers answers.
async fn switchable_mcp(fault: &str) -> (String, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use protocheck::reference::mcp::{McpReferenceConfig, mcp_router};
    use std::sync::atomic::{AtomicBool, Ordering};
    let healthy = mcp_router(McpReferenceConfig::new(Default::default()).expect("config"));
    let broken_router =
        mcp_router(McpReferenceConfig::new([fault.to_owned()].into()).expect("known fault"));
    let broken = std::sync::Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let front = axum::Router::new().fallback_service(tower::service_fn(
        move |req: axum::extract::Request| {
            let router = if flag.load(Ordering::SeqCst) {
                broken_router.clone()
            } else {
                healthy.clone()
            };
            tower::ServiceExt::oneshot(router, req)
        },
    ));
    (format!("{}/mcp", common::app::serve(front).await), broken)
}

/// A listed server judged again with another grade shows the trend against
/// the judgement before it, in the API and on the page: `down` when it
/// broke, `up` when it was fixed, `same` when the grade held.
#[tokio::test]
async fn a_listed_servers_trend_follows_its_last_two_judgements() {
    use common::app::{TestApp, worker_config};
    use std::sync::atomic::Ordering;
    for db in common::all_backends().await {
        let b = db.name();
        let store = db.store.as_ref();
        let (target, broken) = switchable_mcp("MCP-HDR-001").await;
        let registry = StandInRegistry::new(vec![entry(
            "io.example/switchable",
            "1.0.0",
            "active",
            "2026-11-01T00:00:00Z",
            remote(&target),
        )]);
        // The watch's slot is within the hour: the runs below are the only ones.
        let cfg = config(serve(&registry).await);
        let report = sync(store, &client(), &cfg).await.expect("sync");
        assert_eq!(report.judged, 1, "{b}: {report:?}");
        let app = TestApp::start(&db, 100).await;
        let mut workers = worker_config(1, Duration::from_secs(30));
        workers.schedule.enabled = false;
        let _pool = app.workers(workers);

        let judge = async |is_broken: bool| -> (serde_json::Value, String) {
            broken.store(is_broken, Ordering::SeqCst);
            let run = app
                .submit(&json!({"url": target, "suite": "mcp", "force": true}))
                .await;
            let id = run["id"].as_str().unwrap_or_else(|| panic!("{b}: {run}"));
            app.wait_finished(id, Duration::from_secs(120)).await;
            let (status, doc) = app.get_json("/api/v1/directory").await;
            assert_eq!(status, 200, "{b}: {doc}");
            let (_, _, html) = fetch(&app, "/directory").await;
            (doc["servers"][0].clone(), html)
        };

        let (first, html) = judge(false).await;
        assert_eq!(first["grade"], "strict", "{b}: {first}");
        assert!(first["trend"].is_null(), "{b}: {first}");
        assert!(
            html.contains("<td data-label=\"Trend\">—</td>"),
            "{b}: {html}"
        );

        let (worse, html) = judge(true).await;
        assert_eq!(worse["grade"], "non-compliant", "{b}: {worse}");
        assert_eq!(worse["previous_grade"], "strict", "{b}: {worse}");
        assert_eq!(worse["trend"], "down", "{b}: {worse}");
        assert!(
            html.contains("<td data-label=\"Trend\">down</td>"),
            "{b}: {html}"
        );

        let (fixed, html) = judge(false).await;
        assert_eq!(fixed["grade"], "strict", "{b}: {fixed}");
        assert_eq!(fixed["previous_grade"], "non-compliant", "{b}: {fixed}");
        assert_eq!(fixed["trend"], "up", "{b}: {fixed}");
        assert!(
            html.contains("<td data-label=\"Trend\">up</td>"),
            "{b}: {html}"
        );

        let (held, html) = judge(false).await;
        assert_eq!(held["previous_grade"], "strict", "{b}: {held}");
        assert_eq!(held["trend"], "same", "{b}: {held}");
        assert!(
            html.contains("<td data-label=\"Trend\">same</td>"),
            "{b}: {html}"
        );
    }
}

/// `protocheck` with `args` against the database `db`.
async fn cli(db: &common::TestDb, args: &[&str]) -> std::process::Output {
    let mut cmd = common::cli::protocheck();
    cmd.args(args).env("DATABASE_URL", &db.url);
    common::cli::output(cmd).await
}

/// The operator's commands through the binary: `registry sync` lists a
/// stand-in registry and says what it did, `directory delist` takes a URL
/// out for good (its watch ends, a later sync does not bring it back), and a
/// malformed invocation or an unreachable registry is refused with a clear
/// message and a non-zero exit.
#[tokio::test]
async fn the_registry_sync_and_delist_commands_change_the_directory_through_the_binary() {
    use common::cli::show;
    for db in common::all_backends().await {
        let b = db.name();
        let store = db.store.as_ref();
        let registry = StandInRegistry::new(vec![
            entry(
                "io.example/alpha",
                "1.0.0",
                "active",
                "2026-11-01T00:00:00Z",
                remote("http://127.0.0.1:9/alpha/mcp"),
            ),
            entry(
                "io.example/templated",
                "1.0.0",
                "active",
                "2026-11-01T00:00:01Z",
                json!([{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                        "variables": {"tenant": {"isRequired": true}}}]),
            ),
        ]);
        let base = serve(&registry).await;
        let sync_args = [
            "registry",
            "sync",
            "--registry",
            base.as_str(),
            "--allow-private-targets",
            "true",
        ];

        // A loopback registry is refused unless private targets are allowed.
        let out = cli(&db, &sync_args[..4]).await;
        assert_eq!(out.status.code(), Some(1), "{b}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stopped") && err.contains("could not be reached"),
            "{b}: {}",
            show(&out)
        );
        assert!(urls(store).await.is_empty(), "{b}");

        let out = cli(&db, &sync_args).await;
        assert_eq!(out.status.code(), Some(0), "{b}: {}", show(&out));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains(&format!("synced {base}: 1 page(s), 2 entries (the whole registry), 1 judged, 1 listed without a verdict")),
            "{b}: {}",
            show(&out)
        );
        assert_eq!(urls(store).await.len(), 2, "{b}");
        assert_eq!(store.list_watches(None).await.expect("watches").len(), 1);

        // Delisting the judged URL, written loosely (the directory keeps
        // it canonical), ends its watch.
        let out = cli(
            &db,
            &[
                "directory",
                "delist",
                "HTTP://127.0.0.1:9/alpha/mcp",
                "--reason",
                "asked by mail",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{b}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains("delisted http://127.0.0.1:9/alpha/mcp: it left the directory"),
            "{b}: {}",
            show(&out)
        );
        assert_eq!(
            store
                .directory_delisting("http://127.0.0.1:9/alpha/mcp")
                .await
                .expect("read")
                .as_deref(),
            Some("asked by mail"),
            "{b}"
        );
        assert!(store.list_watches(None).await.expect("watches").is_empty());
        // A listed template is delisted as the registry wrote it.
        let out = cli(
            &db,
            &[
                "directory",
                "delist",
                "https://{tenant}.example.com/mcp",
                "--reason",
                "asked by mail",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{b}: {}", show(&out));
        assert!(urls(store).await.is_empty(), "{b}");

        // The registry updates alpha; the next sync reads it and the
        // template at the mark (`updated_since` is inclusive) and lists
        // neither.
        registry.put(entry(
            "io.example/alpha",
            "1.0.1",
            "active",
            "2026-11-02T00:00:00Z",
            remote("http://127.0.0.1:9/alpha/mcp"),
        ));
        let out = cli(&db, &sync_args).await;
        assert_eq!(out.status.code(), Some(0), "{b}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains("0 judged, 0 listed without a verdict, 2 delisted"),
            "{b}: {}",
            show(&out)
        );
        assert!(urls(store).await.is_empty(), "{b}");
        let out = cli(&db, &["directory", "list"]).await;
        assert_eq!(out.status.code(), Some(0), "{b}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("the directory is empty"),
            "{b}: {}",
            show(&out)
        );

        // Malformed invocations: each says what is wrong, exit 2, and
        // changes nothing.
        for (args, says) in [
            (
                &["directory", "delist", "http://127.0.0.1:9/other/mcp"][..],
                "--reason",
            ),
            (
                &[
                    "directory",
                    "delist",
                    "http://127.0.0.1:9/other/mcp",
                    "--reason",
                    " ",
                ][..],
                "--reason must say why",
            ),
            (
                &["directory", "delist", "not a url", "--reason", "spam"][..],
                "is not an http(s) URL",
            ),
            (
                &["registry", "sync", "--registry", "ftp://registry.example/"][..],
                "use http or https",
            ),
            (
                &["registry", "sync", "--registry", "registry.example"][..],
                "--registry registry.example",
            ),
        ] {
            let out = cli(&db, args).await;
            assert_eq!(out.status.code(), Some(2), "{b} {args:?}: {}", show(&out));
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(says),
                "{b} {args:?}: {}",
                show(&out)
            );
        }
        assert!(
            store
                .directory_delisting("not a url")
                .await
                .expect("read")
                .is_none(),
            "{b}"
        );
    }
}

/// A registry that answers a page 429 or 503 with `Retry-After` is waited
/// as it asks and the page asked for again; one asking for longer than a
/// sync waits stops the sync at once as failed, with the reason, and the
/// directory keeps its state.
#[tokio::test]
async fn a_registry_asking_to_wait_is_waited_out_unless_it_asks_for_too_long() {
    for db in common::all_backends().await {
        let b = db.name();
        let store = db.store.as_ref();
        // 150 entries: two pages of 100.
        let registry = StandInRegistry::synthetic(150, "http://127.0.0.1:9");
        let cfg = config(serve(&registry).await);

        registry.set_fault(RegistryFault::ThrottleEachPage {
            status: 503,
            retry_after: "3600".to_owned(),
        });
        let err = sync(store, &client(), &cfg).await.expect_err("too long");
        assert!(
            err.to_string()
                .contains("HTTP 503 asking to wait 3600, more than the 60 s a sync waits"),
            "{b}: {err}"
        );
        assert_eq!(registry.requests(), 1, "{b}: not asked again");
        let state = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("the attempt is recorded");
        assert!(
            state
                .last_error
                .as_deref()
                .is_some_and(|e| e.contains("asking to wait 3600")),
            "{b}: {state:?}"
        );
        assert!(state.last_success_ms.is_none(), "{b}");
        assert!(urls(store).await.is_empty(), "{b}");

        registry.set_fault(RegistryFault::ThrottleEachPage {
            status: 429,
            retry_after: "1".to_owned(),
        });
        let done = sync(store, &client(), &cfg).await.expect("waited out");
        assert_eq!((done.pages, done.entries), (2, 150), "{b}: {done:?}");
        assert_eq!(
            registry.requests(),
            4,
            "{b}: each page refused once, then read"
        );
        assert_eq!(urls(store).await.len(), 150, "{b}");
        let state = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("recorded");
        assert!(
            state.last_error.is_none() && state.last_success_ms.is_some(),
            "{b}: {state:?}"
        );
    }
}

/// After a complete sync, an incremental one that fails on its second page
/// keeps what the first page changed, leaves the entries it did not reach
/// as they were, and does not advance "last synced" or the mark: the page
/// and the API still give the last complete sync, and the next sync reads
/// every change again.
#[tokio::test]
async fn a_sync_failing_part_way_keeps_its_first_pages_and_the_last_complete_sync() {
    use common::app::TestApp;
    for db in common::all_backends().await {
        let b = db.name();
        let store = db.store.as_ref();
        let registry = StandInRegistry::synthetic(150, "http://127.0.0.1:9");
        let cfg = config(serve(&registry).await);
        sync(store, &client(), &cfg).await.expect("first sync");
        let complete = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("recorded");
        let synced_at = complete.last_success_ms.expect("a complete sync");

        // Every entry gets a new version; the second page of the changes fails.
        for i in 0..150 {
            registry.put(entry(
                &format!("io.example.synthetic/server-{i:06}"),
                "2.0.0",
                "active",
                "2026-11-02T00:00:00Z",
                remote(&format!("http://127.0.0.1:9/s/{i}/mcp")),
            ));
        }
        registry.set_fault(RegistryFault::FailAfterPages(1));
        let err = sync(store, &client(), &cfg).await.expect_err("fails");
        assert!(err.to_string().contains("HTTP 500"), "{b}: {err}");
        let versions = |entries: Vec<protocheck::store::DirectoryEntry>| {
            let mut by_version = std::collections::BTreeMap::<String, usize>::new();
            for e in entries {
                *by_version.entry(e.version.unwrap_or_default()).or_default() += 1;
            }
            by_version
        };
        let now = versions(store.directory_entries().await.expect("entries"));
        assert_eq!(
            now.get("2.0.0"),
            Some(&100),
            "{b}: the first page's changes: {now:?}"
        );
        assert_eq!(
            now.get("1.0.0"),
            Some(&50),
            "{b}: the entries not reached as they were: {now:?}"
        );
        let failed = store
            .directory_sync(cfg.registry.as_str())
            .await
            .expect("state")
            .expect("recorded");
        assert_eq!(failed.last_success_ms, Some(synced_at), "{b}: {failed:?}");
        assert_eq!(failed.high_water, complete.high_water, "{b}: {failed:?}");
        assert!(failed.last_error.is_some(), "{b}: {failed:?}");
        let app = TestApp::start(&db, 100).await;
        let (_, doc) = app.get_json("/api/v1/directory").await;
        assert_eq!(
            doc["last_synced"],
            protocheck::rfc3339(synced_at).as_str(),
            "{b}: {doc}"
        );

        registry.set_fault(RegistryFault::None);
        let done = sync(store, &client(), &cfg).await.expect("recovered");
        assert!(done.incremental, "{b}: {done:?}");
        assert_eq!(done.entries, 150, "{b}: every change read again: {done:?}");
        let now = versions(store.directory_entries().await.expect("entries"));
        assert_eq!(now.keys().collect::<Vec<_>>(), ["2.0.0"], "{b}: {now:?}");
    }
}
