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
