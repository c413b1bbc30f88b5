//! protocheck cannot be used to flood a third party: per target host, runs
//! are limited per hour and in `force` re-runs at submission, whoever submits
//! them, and in concurrency and spacing when workers claim them.

use crate::common;

use common::TestDb;
use common::app::TestApp;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::RunOrigin;
use protocheck::store::{HostLimits, Inserted, NewRun, Run, RunEnd, Store};
use protocheck::submit::HostQuota;
use protocheck::suite::{RunOptions, SuiteChoice};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Barrier;
use uuid::Uuid;

const LEASE_MS: i64 = 60_000;

/// A client whose connections come from `127.0.0.n`: another client address
/// as far as the service can tell (it reads the address of the connection;
/// `X-Forwarded-For` is not trusted).
fn client_from(n: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, n)))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn submit_from(app: &TestApp, n: u8, body: &Value) -> (u16, Option<u64>, Value) {
    let resp = client_from(n)
        .post(app.url("/api/v1/runs"))
        .json(body)
        .send()
        .await
        .expect("POST");
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (
        status,
        retry_after,
        resp.json().await.unwrap_or(Value::Null),
    )
}

/// A burst of forced submissions for one host (nothing listens there: no
/// worker runs, the queue only fills), from several client addresses.
#[tokio::test]
async fn forced_bursts_for_one_host_are_refused_whoever_sends_them() {
    for db in common::all_backends().await {
        let quota = HostQuota {
            runs_per_hour: 4,
            force_every: Duration::from_secs(120),
        };
        let app = TestApp::start_with(&db, 1000, quota).await;
        let target = |path: &str| format!("http://127.0.0.1:9/{path}");

        // A forced run of a target, then a forced run of the same target with
        // other options from another address: refused, the target was forced
        // moments ago.
        let (status, _, first) = submit_from(
            &app,
            2,
            &json!({"url": target("a"), "suite": "rcp", "force": true}),
        )
        .await;
        assert_eq!(status, 202, "{}: {first}", db.name());
        let again = json!({"url": target("a"), "suite": "rcp", "force": true,
                           "options": {"profile": "reference"}});
        let (status, retry, problem) = submit_from(&app, 3, &again).await;
        assert_eq!(status, 429, "{}: {problem}", db.name());
        assert_eq!(problem["type"], "/problems/target-rate-limited");
        let retry = retry.expect("Retry-After");
        assert!((1..=120).contains(&retry), "{retry}");
        assert_eq!(problem["retry_after_s"], retry);
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("at most once every 120 s"), "{detail}");
        // The same request as the active run is answered with that run: it
        // sends the host nothing more.
        let (status, _, same) = submit_from(
            &app,
            4,
            &json!({"url": target("a"), "suite": "rcp", "force": true}),
        )
        .await;
        assert_eq!(status, 200, "{same}");
        assert_eq!(same["reason"], "already-active");
        assert_eq!(same["id"], first["id"]);

        // Other servers of the same host, from other addresses, up to the
        // hourly budget of the host (4), then first runs of further servers
        // up to twice it (8); then refused.
        for (n, path) in [
            (5, "b"),
            (6, "c"),
            (7, "d"),
            (8, "e"),
            (9, "f"),
            (10, "g"),
            (11, "h"),
        ] {
            let (status, _, body) = submit_from(
                &app,
                n,
                &json!({"url": target(path), "suite": "rcp", "force": true}),
            )
            .await;
            assert_eq!(status, 202, "{}: {path} {body}", db.name());
        }
        let (status, retry, problem) = submit_from(
            &app,
            12,
            &json!({"url": target("i"), "suite": "rcp", "force": true}),
        )
        .await;
        assert_eq!(status, 429, "{}: {problem}", db.name());
        assert_eq!(problem["type"], "/problems/target-rate-limited");
        let retry = retry.expect("Retry-After");
        assert!((1..=3600).contains(&retry), "{retry}");
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("`127.0.0.1` has had 8 runs in the last hour")
                && detail.contains("at most 4 runs an hour"),
            "{detail}"
        );
        // Without force too: the limit is the host's, not the submission's.
        let (status, _, _) =
            submit_from(&app, 13, &json!({"url": target("j"), "suite": "rcp"})).await;
        assert_eq!(status, 429);
        // Another host is not affected (an address nothing is sent to: no
        // worker runs here).
        let (status, _, body) = submit_from(
            &app,
            9,
            &json!({"url": "http://10.0.0.9:9/a", "suite": "rcp"}),
        )
        .await;
        assert_eq!(status, 202, "{body}");

        let runs = db.store.recent_runs(100).await.expect("runs");
        assert_eq!(runs.len(), 9, "eight runs of the host and one of another");
    }
}

#[tokio::test]
async fn the_form_explains_a_refusal_for_the_host() {
    let db = common::sqlite().await;
    let quota = HostQuota {
        runs_per_hour: 1,
        force_every: Duration::ZERO,
    };
    let app = TestApp::start_with(&db, 1000, quota).await;
    let token = "0123456789abcdef0123456789abcdef";
    let post = |url: &'static str| {
        client_from(2)
            .post(app.url("/"))
            .header("cookie", format!("pc_csrf={token}"))
            .form(&[("url", url), ("suite", "rcp"), ("csrf", token)])
            .send()
    };
    let first = post("http://127.0.0.1:9/a").await.expect("POST /");
    assert_eq!(first.status(), 303);
    let refused = post("http://127.0.0.1:9/b").await.expect("POST /");
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let html = refused.text().await.expect("html");
    assert!(
        html.contains("you have started 1 runs on the host `127.0.0.1` in the last hour"),
        "{html}"
    );
    assert!(
        html.contains("value=\"http://127.0.0.1:9/b\""),
        "what was typed stays"
    );
}

async fn queue_for(store: &dyn Store, host: &str, path: &str, created_at_ms: i64) -> Run {
    let url = format!("https://{host}/{path}");
    let key = format!("{host}-{path}");
    queue_at(store, &key, &url, created_at_ms, &RunOrigin::default()).await
}

/// Stores the target `key` at `url` and queues an RCP run of it from `origin`.
async fn queue_at(
    store: &dyn Store,
    key: &str,
    url: &str,
    created_at_ms: i64,
    origin: &RunOrigin,
) -> Run {
    store
        .upsert_target(key, url, created_at_ms)
        .await
        .expect("target");
    let new = NewRun {
        id: Uuid::now_v7(),
        target_id: key.to_owned(),
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        dedup_key: Uuid::new_v4().to_string(),
        max_attempts: 3,
        created_at_ms,
    };
    match store.insert_run_from(&new, origin).await.expect("insert") {
        Inserted::New(run) => run,
        other => panic!("{other:?}"),
    }
}

fn host_of(run: &Run) -> String {
    protocheck::store::host_of(&run.target_url).expect("host")
}

/// Store contract, both backends: however many workers claim at once, one
/// host never has more runs running than its limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_never_run_two_runs_of_one_host_at_once() {
    for db in common::all_backends().await {
        claims_respect_host_concurrency(&db).await;
    }
}

async fn claims_respect_host_concurrency(db: &TestDb) {
    let store = &db.store;
    for i in 0..6 {
        queue_for(store.as_ref(), "busy.example", &format!("p{i}"), 1_000 + i).await;
    }
    // Another port is the same host.
    queue_for(store.as_ref(), "busy.example:8443", "other-port", 1_010).await;
    queue_for(store.as_ref(), "calm.example", "p", 1_020).await;
    let limits = HostLimits {
        running_per_host: 1,
        gap_ms: 0,
    };
    let claimers = 8;
    let barrier = Arc::new(Barrier::new(claimers));
    let mut tasks = Vec::new();
    for w in 0..claimers {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            store
                .claim_run_within(&format!("w{w}"), 2_000, LEASE_MS, &limits)
                .await
                .expect("claim")
        }));
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.expect("join"));
    }
    let mut per_host: HashMap<String, usize> = HashMap::new();
    for run in &claimed {
        *per_host.entry(host_of(run)).or_default() += 1;
    }
    assert_eq!(
        per_host.get("busy.example"),
        Some(&1),
        "{}: {per_host:?}",
        db.name()
    );
    assert_eq!(
        per_host.get("calm.example"),
        Some(&1),
        "{}: {per_host:?}",
        db.name()
    );
    assert_eq!(claimed.len(), 2, "{}", db.name());

    // The oldest run of the busy host went first; the next waits for its end.
    let busy = claimed
        .iter()
        .find(|r| host_of(r) == "busy.example")
        .expect("busy run");
    assert!(busy.target_url.ends_with("/p0"), "{}", busy.target_url);
    let none = store
        .claim_run_within("late", 2_100, LEASE_MS, &limits)
        .await
        .expect("claim");
    assert!(none.is_none(), "{}: {none:?}", db.name());
    let ok = store
        .finish_run(
            busy.id,
            &busy.locked_by.clone().expect("holder"),
            &RunEnd::Error("x".into()),
            "1",
            2_200,
        )
        .await
        .expect("finish");
    assert!(ok);
    let next = store
        .claim_run_within("late", 2_300, LEASE_MS, &limits)
        .await
        .expect("claim")
        .expect("the next run of the host");
    assert!(next.target_url.ends_with("/p1"), "{}", next.target_url);

    // A limit of two lets a second run of the host start beside it.
    let two = HostLimits {
        running_per_host: 2,
        gap_ms: 0,
    };
    let second = store
        .claim_run_within("w-two", 2_400, LEASE_MS, &two)
        .await
        .expect("claim")
        .expect("a second run of the host");
    assert_eq!(host_of(&second), "busy.example");
    let third = store
        .claim_run_within("w-three", 2_500, LEASE_MS, &two)
        .await
        .expect("claim");
    assert!(third.is_none(), "{third:?}");
}

/// Store contract, both backends: a host's next run starts no sooner than
/// the gap after its last run ended; other hosts' runs are claimed meanwhile.
#[tokio::test]
async fn claims_keep_the_gap_between_runs_of_one_host() {
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let limits = HostLimits {
            running_per_host: 1,
            gap_ms: 10_000,
        };
        let first = queue_for(store, "polite.example", "a", 1_000).await;
        let second = queue_for(store, "polite.example", "b", 1_001).await;
        let claimed = store
            .claim_run_within("w", 2_000, LEASE_MS, &limits)
            .await
            .expect("claim")
            .expect("first");
        assert_eq!(claimed.id, first.id);
        let ended = store
            .finish_run(first.id, "w", &RunEnd::Error("x".into()), "1", 5_000)
            .await
            .expect("finish");
        assert!(ended);
        let other = queue_for(store, "elsewhere.example", "a", 1_002).await;
        let meanwhile = store
            .claim_run_within("w", 14_999, LEASE_MS, &limits)
            .await
            .expect("claim")
            .expect("another host's run");
        assert_eq!(meanwhile.id, other.id, "{}", db.name());
        let early = store
            .claim_run_within("w2", 14_999, LEASE_MS, &limits)
            .await
            .expect("claim");
        assert!(early.is_none(), "{}: {early:?}", db.name());
        let on_time = store
            .claim_run_within("w2", 15_001, LEASE_MS, &limits)
            .await
            .expect("claim")
            .expect("the gap has passed");
        assert_eq!(on_time.id, second.id, "{}", db.name());
        // Without limits (`claim_run`), nothing is passed over.
        let third = queue_for(store, "polite.example", "c", 1_003).await;
        let unlimited = store
            .claim_run("w3", 15_002, LEASE_MS)
            .await
            .expect("claim")
            .expect("unlimited");
        assert_eq!(unlimited.id, third.id);
    }
}

/// #31 item 2 and #53 item 6: the cooldown holds what asks for a new run of
/// a server although a result may be fresh (`force`, a `max_age_s` below the
/// default), with other options or another query string alike, and never
/// holds another server of the same host. A query string makes a target of
/// its own: a plain first submission of one is queued, not refused, and a
/// plain repeat of the first URL is answered with its run.
#[tokio::test]
async fn the_cooldown_holds_force_and_max_age_and_never_a_plain_first_submission() {
    for db in common::all_backends().await {
        let quota = HostQuota {
            runs_per_hour: 100,
            force_every: Duration::from_secs(120),
        };
        let app = TestApp::start_with(&db, 1000, quota).await;
        let server = "http://127.0.0.1:9/mcp_1%5F";
        let tenant = |t: &str| format!("{server}?tenant={t}");
        let (status, _, first) =
            submit_from(&app, 2, &json!({"url": tenant("a"), "suite": "rcp"})).await;
        assert_eq!(status, 202, "{}", db.name());
        for (n, body) in [
            (
                3,
                json!({"url": tenant("a"), "suite": "rcp", "max_age_s": 0,
                       "options": {"profile": "reference"}}),
            ),
            (
                4,
                json!({"url": format!("{server}?x=1"), "suite": "rcp", "force": true}),
            ),
            (
                5,
                json!({"url": format!("{server}?y=2"), "suite": "rcp", "max_age_s": 0}),
            ),
            (6, json!({"url": server, "suite": "mcp", "force": true})),
        ] {
            let (status, retry, problem) = submit_from(&app, n, &body).await;
            assert_eq!(status, 429, "{}: {body} → {problem}", db.name());
            assert_eq!(problem["type"], "/problems/target-rate-limited");
            assert!(retry.is_some_and(|r| (1..=120).contains(&r)), "{retry:?}");
            let detail = problem["detail"].as_str().unwrap_or_default();
            assert!(detail.contains("at most once every 120 s"), "{detail}");
        }
        // The same URL, plainly: its run answers.
        let (status, _, again) =
            submit_from(&app, 7, &json!({"url": tenant("a"), "suite": "rcp"})).await;
        assert_eq!(status, 200, "{}: {again}", db.name());
        assert_eq!(again["id"], first["id"]);
        // Plain first submissions: another query string (another target),
        // other options, the URL without a query, a longer `max_age_s`.
        let mut targets = std::collections::BTreeSet::from([first["target_id"].to_string()]);
        for (n, body) in [
            (8, json!({"url": tenant("b"), "suite": "rcp"})),
            (
                9,
                json!({"url": tenant("a"), "suite": "rcp", "options": {"profile": "reference"}}),
            ),
            (
                10,
                json!({"url": server, "suite": "rcp", "max_age_s": 3600}),
            ),
        ] {
            let (status, _, run) = submit_from(&app, n, &body).await;
            assert_eq!(status, 202, "{}: {body} → {run}", db.name());
            targets.insert(run["target_id"].to_string());
        }
        assert_eq!(
            targets.len(),
            3,
            "{}: each query string is a target",
            db.name()
        );
        // Another server of the host, and a path that only looks like the
        // escaped pattern of the first (`_` and `%` are not wildcards), even
        // forced.
        for (n, url) in [
            (11, "http://127.0.0.1:9/other"),
            (12, "http://127.0.0.1:9/mcpX1%5F"),
        ] {
            let (status, _, body) =
                submit_from(&app, n, &json!({"url": url, "suite": "rcp", "force": true})).await;
            assert_eq!(status, 202, "{}: {url} {body}", db.name());
        }
    }
}

/// #31 item 3: one submitter holds at most its share of a host's hour (half
/// of it), so another submitter's first run of that host is accepted; and
/// once the host's budget is spent by others, a server's first run of the
/// hour is still accepted (up to twice the budget), a repeat is not.
#[tokio::test]
async fn one_submitter_cannot_lock_others_out_of_a_host() {
    for db in common::all_backends().await {
        let quota = HostQuota {
            runs_per_hour: 4,
            force_every: Duration::ZERO,
        };
        let app = TestApp::start_with(&db, 1000, quota).await;
        let target = |path: &str| format!("http://127.0.0.1:9/{path}");
        for path in ["a", "b"] {
            let (status, _, body) =
                submit_from(&app, 2, &json!({"url": target(path), "suite": "rcp"})).await;
            assert_eq!(status, 202, "{}: {body}", db.name());
        }
        let (status, retry, problem) =
            submit_from(&app, 2, &json!({"url": target("c"), "suite": "rcp"})).await;
        assert_eq!(status, 429, "{}: {problem}", db.name());
        assert!(retry.is_some());
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("you have started 2 runs") && detail.contains("may start 2 of the 4"),
            "{detail}"
        );
        // Another submitter's runs of the host are accepted.
        for path in ["c", "d"] {
            let (status, _, body) =
                submit_from(&app, 3, &json!({"url": target(path), "suite": "rcp"})).await;
            assert_eq!(status, 202, "{}: {body}", db.name());
        }
        // The budget is spent; a third submitter's first run of a server is
        // still accepted, its run of a server already run this hour is not.
        let (status, _, body) =
            submit_from(&app, 4, &json!({"url": target("e"), "suite": "rcp"})).await;
        assert_eq!(status, 202, "{}: {body}", db.name());
        let (status, _, problem) = submit_from(
            &app,
            5,
            &json!({"url": target("a"), "suite": "rcp", "options": {"profile": "reference"}}),
        )
        .await;
        assert_eq!(status, 429, "{}: {problem}", db.name());
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("has had 5 runs in the last hour"),
            "{detail}"
        );
    }
}

/// #31 item 1: the hourly budget counts machines, not names. Once the
/// budget of 127.0.0.1 is spent (up to its ceiling for servers' first runs),
/// `localhost`, its fully qualified spelling, a hosts-file alias, another
/// loopback address and the IPv4-mapped IPv6 form are refused alike, each
/// refusal naming the machine; another address is not.
#[tokio::test]
async fn every_name_of_one_address_shares_one_budget() {
    for db in common::all_backends().await {
        let quota = HostQuota {
            runs_per_hour: 2,
            force_every: Duration::ZERO,
        };
        let app = TestApp::start_with(&db, 1000, quota).await;
        // Four servers' first runs: the budget of two, and up to its ceiling.
        for (n, path) in [(2, "a"), (3, "b"), (4, "c"), (5, "d")] {
            let url = format!("http://127.0.0.1:9/{path}");
            let (status, _, body) =
                submit_from(&app, n, &json!({"url": url, "suite": "rcp"})).await;
            assert_eq!(status, 202, "{}: {url} {body}", db.name());
        }
        let mut spellings = vec![
            "localhost".to_owned(),
            "localhost.".to_owned(),
            "LocalHost".to_owned(),
            "127.0.0.2".to_owned(),
            "[::ffff:127.0.0.1]".to_owned(),
            "[::ffff:7f00:1]".to_owned(),
        ];
        match common::names::hosts_file_alias() {
            Some(alias) => spellings.push(alias),
            None => eprintln!("no hosts-file alias of 127.0.0.1 here; that spelling is not tried"),
        }
        for (n, host) in (6u8..).zip(&spellings) {
            let url = format!("http://{host}:9/e");
            let (status, retry, problem) =
                submit_from(&app, n, &json!({"url": url, "suite": "rcp"})).await;
            assert_eq!(status, 429, "{}: {url} {problem}", db.name());
            assert!(retry.is_some(), "{url}");
            let detail = problem["detail"].as_str().unwrap_or_default();
            assert!(
                detail.contains("the host `127.0.0.1`") && detail.contains("has had 4 runs"),
                "{url}: {detail}"
            );
        }
        let (status, _, body) = submit_from(
            &app,
            40,
            &json!({"url": "http://10.0.0.9:9/e", "suite": "rcp"}),
        )
        .await;
        assert_eq!(status, 202, "{}: {body}", db.name());
        let runs = db.store.recent_runs(100).await.expect("runs");
        assert_eq!(
            runs.len(),
            5,
            "{}: only the four and the other machine's",
            db.name()
        );
    }
}

/// An RCP reference server on 127.0.0.1 whose replies take `latency`,
/// counting the requests it is answering at once; its port, and the most it
/// ever answered at once. A run sends its independent probes side by side
/// (up to the workers' `target_concurrency`): with that set to 1, two
/// requests answered at once are two runs'.
async fn counting_rcp_server(latency: Duration) -> (u16, Arc<AtomicUsize>) {
    let now = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let mut config = RcpReferenceConfig::new(Vec::<String>::new()).expect("config");
    config.latency = latency;
    let (count, peak) = (now.clone(), most.clone());
    let router = rcp_router(config).layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let (count, peak) = (count.clone(), peak.clone());
            async move {
                let at_once = count.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(at_once, Ordering::SeqCst);
                let resp = next.run(req).await;
                count.fetch_sub(1, Ordering::SeqCst);
                resp
            }
        },
    ));
    let base = common::app::serve(router).await;
    let port = url::Url::parse(&base).expect("base").port().expect("port");
    (port, most)
}

/// #31 item 1, at connect time: a run is counted by the machine its
/// target's name resolves to when the worker connects, whatever the
/// submission counted it by (a name it could not resolve, or an answer that
/// changed since). Here one run was counted by another address at
/// submission, as a name whose DNS answer changed would be; with one run per
/// machine at once, the server never answers two runs together (with
/// three workers and no such check, all three would run at once), and
/// waiting is not an attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_hold_the_limits_of_the_machine_they_connect_to() {
    for db in common::all_backends().await {
        let (port, most) = counting_rcp_server(Duration::from_millis(40)).await;
        let app = TestApp::start(&db, 1000).await;
        let store = db.store.as_ref();
        let mut ids = Vec::new();
        for (n, (host, counted_by)) in [
            ("127.0.0.1", None),
            ("localhost", Some("203.0.113.9")),
            ("localhost.", Some("198.51.100.7")),
        ]
        .into_iter()
        .enumerate()
        {
            let url = format!("http://{host}:{port}/rcp");
            let origin = RunOrigin {
                machine: counted_by.map(str::to_owned),
                ..RunOrigin::default()
            };
            let key = format!("connect-{n}");
            let run = queue_at(store, &key, &url, protocheck::now_ms(), &origin).await;
            ids.push(run.id);
        }
        let mut cfg = common::app::worker_config(3, Duration::from_secs(30));
        cfg.target_concurrency = 1;
        // One run at once, and a gap after each (the service's default is
        // 10 s): the server counts its answers, and an answer to a request a
        // run gave up on at its end must not meet the next run's first.
        cfg.host_limits = HostLimits {
            running_per_host: 1,
            gap_ms: 300,
        };
        let pool = app.workers(cfg);
        app.deps.wake.notify_waiters();
        for id in &ids {
            let run = app
                .wait_finished(&id.to_string(), Duration::from_secs(120))
                .await;
            assert_ne!(run["status"], "error", "{}: {run}", db.name());
            let stored = store.get_run(*id).await.expect("get").expect("run");
            assert_eq!(
                stored.target_host.as_deref(),
                Some("127.0.0.1"),
                "{}: counted by the machine it connected to",
                db.name()
            );
            assert_eq!(
                stored.attempts,
                1,
                "{}: waiting is not an attempt",
                db.name()
            );
        }
        pool.shutdown().await;
        assert_eq!(
            most.load(Ordering::SeqCst),
            1,
            "{}: the server answered two runs at once",
            db.name()
        );
        // (The runs' stored times are not compared: a claim's time is read
        // before it waits for the claim lock, so a run may be stamped a few
        // milliseconds before the end of the one it waited for.)
    }
}

/// #31 item 2, under a burst: forced submissions of one server that arrive
/// together, from many addresses and under several names of its machine,
/// are counted one after the other: exactly one is queued, the others get
/// 429 (or the run already queued).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_of_forced_submissions_passes_the_cooldown_once() {
    for db in common::all_backends().await {
        let quota = HostQuota {
            runs_per_hour: 100,
            force_every: Duration::from_secs(300),
        };
        let app = Arc::new(TestApp::start_with(&db, 1000, quota).await);
        let barrier = Arc::new(Barrier::new(20));
        let mut tasks = Vec::new();
        for n in 0..20u8 {
            let (app, barrier) = (app.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let host = ["127.0.0.1", "localhost", "localhost."][usize::from(n % 3)];
                let body = json!({"url": format!("http://{host}:9/rcp?n={n}"), "suite": "rcp", "force": true});
                barrier.wait().await;
                submit_from(&app, 10 + n, &body).await.0
            }));
        }
        let mut statuses = Vec::new();
        for t in tasks {
            statuses.push(t.await.expect("join"));
        }
        assert!(
            statuses.iter().all(|s| *s == 202 || *s == 429),
            "{}: {statuses:?}",
            db.name()
        );
        let runs = db.store.recent_runs(100).await.expect("runs");
        assert_eq!(runs.len(), 1, "{}: {statuses:?}", db.name());
    }
}

/// A run held by the per-host limits says why and until when: in its API
/// resource (`queue`), on its page, and in its progress stream, until it
/// starts. Two reference servers on one machine; one run at a time and a
/// pause of three seconds between runs there.
#[tokio::test]
async fn a_run_held_by_the_host_limits_says_why_and_until_when() {
    let limits = HostLimits {
        running_per_host: 1,
        gap_ms: 3_000,
    };
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |o| o.host_limits = limits).await;
        let mut cfg = common::app::worker_config(2, Duration::from_secs(30));
        cfg.host_limits = limits;
        let first = common::app::rcp_reference(&[], Duration::from_millis(10)).await;
        let second = common::app::rcp_reference(&[], Duration::ZERO).await;
        let a = app
            .submit(&json!({"url": first, "suite": "rcp", "force": true}))
            .await;
        let held = app
            .submit(&json!({"url": second, "suite": "rcp", "force": true}))
            .await;
        let id = held["id"].as_str().expect("id").to_owned();
        assert_eq!(held["queue"]["position"], 2, "{b}: {held}");
        // Followed from before anything runs.
        let stream = app
            .http
            .get(app.url(&format!("/api/v1/runs/{id}/events")))
            .send()
            .await
            .expect("events");
        let pool = app.workers(cfg);

        // Held: first behind the run in progress, then by the pause after it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut saw = Vec::new();
        let paused = loop {
            let (_, run) = app.get_json(&format!("/api/v1/runs/{id}")).await;
            if let Some(why) = run["queue"]["waiting_for"].as_str() {
                if saw.last().map(String::as_str) != Some(why) {
                    saw.push(why.to_owned());
                }
                if why.contains("pause of 3 s") {
                    break run;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline && run["status"] == "queued",
                "{b}: never held by the pause: {saw:?} {run}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(
            paused["queue"]["waiting_for"]
                .as_str()
                .unwrap()
                .contains("127.0.0.1"),
            "{b}: {paused}"
        );
        let not_before = paused["queue"]["not_before"].as_str().expect("until when");
        let (_, first_run) = app
            .get_json(&format!("/api/v1/runs/{}", a["id"].as_str().unwrap()))
            .await;
        assert_eq!(first_run["status"], "passed", "{b}: {first_run}");
        assert!(
            not_before > first_run["finished_at"].as_str().unwrap(),
            "{b}: not before the pause after the first run ended: {paused}"
        );
        let page = app.get_text(&format!("/runs/{id}")).await;
        assert!(
            page.contains("in the queue, waiting for") && page.contains("pause of 3 s"),
            "{b}: the page says why"
        );

        let text = tokio::time::timeout(Duration::from_secs(60), stream.text())
            .await
            .expect("the stream ends with the verdict")
            .expect("body");
        assert!(text.contains("event: queue"), "{b}: {text}");
        assert!(text.contains("pause of 3 s"), "{b}: {text}");
        assert!(
            text.contains("event: queue\ndata: null"),
            "{b}: the stream says when the run left the queue"
        );
        let run = app.wait_finished(&id, Duration::from_secs(60)).await;
        assert!(run.get("queue").is_none(), "{b}: {run}");
        pool.shutdown().await;
    }
}
