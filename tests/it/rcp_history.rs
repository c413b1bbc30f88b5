//! RCP decision 3 through the service, on SQLite and Postgres: the worker
//! looks up whether an earlier run of the same target saw its `initialize`
//! handshake succeed, so a long-lived server that keeps one initialized flag
//! for the whole process keeps its level on a second run, while a server
//! whose `initialize` never succeeds is never certified.

use crate::common;

use common::app::{TestApp, serve, worker_config};
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use serde_json::{Value, json};
use std::time::Duration;

const FINISH: Duration = Duration::from_secs(60);

async fn reference(config: RcpReferenceConfig) -> String {
    format!("{}/rcp", serve(rcp_router(config)).await)
}

fn finding<'a>(run: &'a Value, rule: &str) -> &'a Value {
    run["findings"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["rule_id"] == rule))
        .unwrap_or_else(|| panic!("{rule} missing: {run:#}"))
}

async fn run_once(app: &TestApp, target: &str, force: bool) -> Value {
    let body = json!({"url": target, "suite": "rcp", "force": force});
    let submitted = app.submit(&body).await;
    let id = submitted["id"].as_str().expect("run id").to_owned();
    app.wait_finished(&id, FINISH).await
}

#[tokio::test]
async fn a_second_run_on_a_process_wide_server_keeps_the_level_the_first_run_showed() {
    for db in common::all_backends().await {
        let name = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let target = reference(RcpReferenceConfig {
            process_wide: true,
            ..RcpReferenceConfig::default()
        })
        .await;

        let first = run_once(&app, &target, false).await;
        assert_eq!(first["status"], "passed", "{name}: {first:#}");
        assert_eq!(first["verdict"]["certified_level"], "L2", "{name}");
        assert_eq!(finding(&first, "RCP-L0-011")["outcome"], "pass", "{name}");
        let first_id = first["id"].as_str().expect("id");

        // The server is still initialized from the first run.
        let second = run_once(&app, &target, true).await;
        assert_ne!(second["id"], first["id"]);
        let handshake = finding(&second, "RCP-L0-011");
        assert_eq!(handshake["outcome"], "info", "{name}: {second:#}");
        let message = handshake["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(
                "Run {first_id} saw this target complete `initialize` at "
            )),
            "{name}: {message}"
        );
        assert_eq!(finding(&second, "RCP-L0-027")["outcome"], "info", "{name}");
        assert_eq!(
            second["verdict"]["certified_level"], first["verdict"]["certified_level"],
            "{name}: {second:#}"
        );
        assert_eq!(second["status"], "passed", "{name}");
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_whose_initialize_never_succeeds_gets_no_level_through_the_service() {
    for db in common::all_backends().await {
        let name = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        // A correct server on another address has a history of its own, which
        // must not lend this target a level.
        let other = reference(RcpReferenceConfig::default()).await;
        let run = run_once(&app, &other, false).await;
        assert_eq!(run["verdict"]["certified_level"], "L2", "{name}");

        let target = reference(RcpReferenceConfig {
            never_initialize: true,
            ..RcpReferenceConfig::default()
        })
        .await;
        for force in [false, true] {
            let run = run_once(&app, &target, force).await;
            assert_eq!(run["status"], "failed", "{name}: {run:#}");
            assert_eq!(run["verdict"]["certified_level"], "none", "{name}");
            assert_eq!(
                run["verdict"]["summary"], "none · handshake not observed",
                "{name}"
            );
            let handshake = finding(&run, "RCP-L0-011");
            assert_eq!(handshake["outcome"], "skip", "{name}");
            let message = handshake["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with("the handshake was not observed")
                    && message.contains("no earlier run of this target saw `initialize` succeed")
                    && message.contains("Restart the server and run again"),
                "{name}: {message}"
            );
        }
        pool.shutdown().await;
    }
}
