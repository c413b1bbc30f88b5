//! A whole protocheck on loopback: the router on a real socket, in-process
//! workers, and an RCP reference server to point it at.
#![allow(dead_code)]

use super::TestDb;
use protocheck::attest::Attestor;
use protocheck::attest::keys::SigningKeyPair;
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::submit::{HostQuota, Queue};
use protocheck::transport::AddressPolicy;
use protocheck::web::{self, AppState};
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Serves `router` on 127.0.0.1 at a free port; returns its base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    format!("http://{addr}")
}

/// An RCP reference server with the given faults and per-reply latency; returns its RCP base URL.
pub async fn rcp_reference(faults: &[&str], latency: Duration) -> String {
    let faults: BTreeSet<String> = faults.iter().map(|s| (*s).to_owned()).collect();
    let mut config = RcpReferenceConfig::new(faults).expect("known fault ids");
    config.latency = latency;
    format!("{}/rcp", serve(rcp_router(config)).await)
}

/// An MCP reference server with the given faults; returns its endpoint URL.
pub async fn mcp_reference(faults: &[&str]) -> String {
    use protocheck::reference::mcp::McpReferenceConfig;
    let faults: BTreeSet<String> = faults.iter().map(|s| (*s).to_owned()).collect();
    mcp_reference_with(McpReferenceConfig::new(faults).expect("known fault ids")).await
}

/// The MCP 2026-07-28 reference server with `config` (`--auth`, say), on
/// loopback; its endpoint URL.
pub async fn mcp_reference_with(config: protocheck::reference::mcp::McpReferenceConfig) -> String {
    use protocheck::reference::mcp::serve_mcp_reference;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    format!("http://{addr}/mcp")
}

/// Worker settings for tests: quick polls, short leases, quick retries.
pub fn worker_config(workers: usize, lease: Duration) -> WorkerConfig {
    let mut cfg = WorkerConfig::new(workers, lease, AddressPolicy::AllowPrivate);
    cfg.poll = Duration::from_millis(100);
    cfg.reap_every = Duration::from_millis(200);
    cfg.retry_base = Duration::from_millis(100);
    cfg.shutdown_grace = Duration::from_secs(5);
    cfg
}

pub struct TestApp {
    pub base: String,
    pub deps: WorkerDeps,
    pub http: reqwest::Client,
    /// Signs verdicts, for the web layer and for the workers `workers` starts.
    pub attestor: Attestor,
    /// Seals and opens submitted credentials; `None`: they are refused.
    pub keyring: Option<Arc<protocheck::credentials::Keyring>>,
    /// Wakes the scheduler of the workers `workers` starts when the API
    /// makes a watch, as `serve` wires them.
    pub schedule_wake: Arc<Notify>,
}

impl TestApp {
    /// The API on a socket, sharing `db`'s store; no workers (start them with `workers`).
    pub async fn start(db: &TestDb, submit_per_minute: u32) -> Self {
        Self::start_with(db, submit_per_minute, HostQuota::NONE).await
    }

    /// [`TestApp::start`], refusing runs beyond `quota` per target host.
    pub async fn start_with(db: &TestDb, submit_per_minute: u32, quota: HostQuota) -> Self {
        Self::start_full(db, submit_per_minute, quota, None, |_| {}).await
    }

    /// [`TestApp::start`], accepting credentials sealed with `keyring`.
    pub async fn start_with_keyring(
        db: &TestDb,
        submit_per_minute: u32,
        keyring: protocheck::credentials::Keyring,
    ) -> Self {
        Self::start_full(
            db,
            submit_per_minute,
            HostQuota::NONE,
            Some(Arc::new(keyring)),
            |_| {},
        )
        .await
    }

    /// [`TestApp::start_with_keyring`] with web options changed by `tune`.
    pub async fn start_with_keyring_tuned(
        db: &TestDb,
        submit_per_minute: u32,
        keyring: protocheck::credentials::Keyring,
        tune: impl FnOnce(&mut web::WebOptions),
    ) -> Self {
        Self::start_full(
            db,
            submit_per_minute,
            HostQuota::NONE,
            Some(Arc::new(keyring)),
            tune,
        )
        .await
    }

    /// [`TestApp::start`] with web options changed by `tune`.
    pub async fn start_tuned(
        db: &TestDb,
        submit_per_minute: u32,
        tune: impl FnOnce(&mut web::WebOptions),
    ) -> Self {
        Self::start_full(db, submit_per_minute, HostQuota::NONE, None, tune).await
    }

    async fn start_full(
        db: &TestDb,
        submit_per_minute: u32,
        quota: HostQuota,
        keyring: Option<Arc<protocheck::credentials::Keyring>>,
        tune: impl FnOnce(&mut web::WebOptions),
    ) -> Self {
        let deps = WorkerDeps {
            store: db.store.clone(),
            wake: Arc::new(Notify::new()),
            events: RunEvents::new(),
            metrics: Metrics::new(),
        };
        let schedule_wake = Arc::new(Notify::new());
        let queue = Queue::new(db.store.clone(), deps.wake.clone(), 3)
            .with_schedule_wake(schedule_wake.clone())
            .with_host_quota(quota)
            .with_keyring(keyring.clone());
        let attestor = Attestor::new(SigningKeyPair::generate().expect("signing key"));
        let mut options = web::WebOptions {
            submit_per_minute,
            attestor: Some(attestor.clone()),
            // With a key to seal tokens, the pages offer to sign in.
            sign_in_policy: keyring.as_ref().map(|_| AddressPolicy::AllowPrivate),
            ..web::WebOptions::default()
        };
        tune(&mut options);
        let state =
            AppState::with_options(queue, deps.events.clone(), deps.metrics.clone(), options);
        let base = serve(web::app(state)).await;
        Self {
            base,
            deps,
            http: reqwest::Client::new(),
            attestor,
            keyring,
            schedule_wake,
        }
    }

    /// Workers sharing the app's store, signing with its key unless `cfg` has one.
    pub fn workers(&self, mut cfg: WorkerConfig) -> WorkerPool {
        cfg.attestor.get_or_insert_with(|| self.attestor.clone());
        if cfg.keyring.is_none() {
            cfg.keyring = self.keyring.clone();
        }
        cfg.schedule.wake = self.schedule_wake.clone();
        WorkerPool::start(self.deps.clone(), cfg).expect("start workers")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("POST")
    }

    /// `POST /api/v1/runs` with `body`; the answer's JSON (whatever its status).
    pub async fn submit(&self, body: &Value) -> Value {
        self.post_json("/api/v1/runs", body)
            .await
            .json()
            .await
            .expect("json")
    }

    /// `GET path` as text (whatever its status).
    pub async fn get_text(&self, path: &str) -> String {
        let resp = self.http.get(self.url(path)).send().await.expect("GET");
        resp.text().await.expect("body")
    }

    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        let resp = self.http.get(self.url(path)).send().await.expect("GET");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// Polls a run until it is finished; panics after `limit` (a liveness bound, not a timing check).
    pub async fn wait_finished(&self, run_id: &str, limit: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let (status, run) = self.get_json(&format!("/api/v1/runs/{run_id}")).await;
            assert_eq!(status, 200, "GET run: {run}");
            let st = run["status"].as_str().unwrap_or_default().to_owned();
            if !matches!(st.as_str(), "queued" | "running") {
                return run;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "run {run_id} still {st} after {limit:?}: {run}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
