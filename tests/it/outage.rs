//! The service when its database stops answering: a Postgres connection runs
//! through a loopback proxy the test can freeze, which holds every byte from
//! then on without closing anything, as a host that went silent does.

use crate::common;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Liveness bound for the answers below; never a timing assertion on speed.
const PATIENCE: Duration = Duration::from_secs(10);

/// A TCP proxy on loopback to `upstream`; while `frozen`, nothing is forwarded.
async fn freezable_proxy(upstream: String, frozen: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            tokio::spawn(pump(cr, sw, frozen.clone()));
            tokio::spawn(pump(sr, cw, frozen.clone()));
        }
    });
    port
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let Ok(n) = from.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        while frozen.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// The app on a store whose every connection runs through a freezable proxy;
/// `None` without Postgres. The first value owns the database.
async fn app_behind_proxy() -> Option<(common::TestDb, common::app::TestApp, Arc<AtomicBool>)> {
    let db = common::postgres().await?;
    let mut url = url::Url::parse(&db.url).expect("url");
    let upstream = format!(
        "{}:{}",
        url.host_str().unwrap_or("127.0.0.1"),
        url.port().unwrap_or(5432)
    );
    let frozen = Arc::new(AtomicBool::new(false));
    let port = freezable_proxy(upstream, frozen.clone()).await;
    url.set_port(Some(port)).expect("port");
    let store = protocheck::store::connect(url.as_str())
        .await
        .expect("connect through the proxy");
    let app = common::app::TestApp::start(&db.through(store), 100).await;
    Some((db, app, frozen))
}

#[tokio::test]
async fn readiness_answers_503_when_the_database_goes_silent() {
    let Some((_db, app, frozen)) = app_behind_proxy().await else {
        return;
    };

    let ready = app
        .http
        .get(app.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);

    frozen.store(true, Ordering::SeqCst);
    let answer = tokio::time::timeout(PATIENCE, app.http.get(app.url("/readyz")).send())
        .await
        .expect("/readyz answers while the database is silent, instead of hanging")
        .expect("readyz");
    assert_eq!(answer.status(), 503);
    assert_eq!(answer.text().await.expect("body"), "database unreachable\n");
    // The process itself is alive.
    let health = app
        .http
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);

    frozen.store(false, Ordering::SeqCst);
}

/// Patience for a submission: it waits for the database up to
/// `SUBMIT_STORE_WITHIN` before it answers 503.
fn submit_patience() -> Duration {
    protocheck::web::SUBMIT_STORE_WITHIN + PATIENCE
}

#[tokio::test]
async fn a_submission_while_the_database_is_silent_gets_503_and_retry_after() {
    let Some((_db, app, frozen)) = app_behind_proxy().await else {
        return;
    };
    let body = serde_json::json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"});
    let before = app.post_json("/api/v1/runs", &body).await;
    assert_eq!(before.status(), 202, "{:?}", before.text().await);

    frozen.store(true, Ordering::SeqCst);
    let answer = tokio::time::timeout(
        submit_patience(),
        app.http
            .post(app.url("/api/v1/runs"))
            .json(&serde_json::json!({"url": "http://127.0.0.1:10/rcp", "suite": "rcp"}))
            .send(),
    )
    .await
    .expect("the API answers while the database is silent")
    .expect("POST");
    assert_eq!(answer.status(), 503);
    assert_eq!(answer.headers()["retry-after"], "5");
    assert_eq!(answer.headers()["content-type"], "application/problem+json");
    let problem: serde_json::Value = answer.json().await.expect("problem");
    assert_eq!(problem["type"], "/problems/unavailable");
    assert_eq!(problem["status"], 503);

    // The form: an HTML page saying the same.
    let token = "0123456789abcdef0123456789abcdef";
    let page = tokio::time::timeout(
        submit_patience(),
        app.http
            .post(app.url("/"))
            .header("cookie", format!("pc_csrf={token}"))
            .form(&[("url", "http://127.0.0.1:11/rcp"), ("csrf", token)])
            .send(),
    )
    .await
    .expect("the form answers while the database is silent")
    .expect("POST /");
    assert_eq!(page.status(), 503);
    assert_eq!(page.headers()["retry-after"], "5");
    assert!(
        page.headers()["content-type"]
            .to_str()
            .expect("type")
            .starts_with("text/html"),
        "{:?}",
        page.headers()
    );
    let html = page.text().await.expect("html");
    assert!(html.contains("cannot reach its database"), "{html}");

    // Back: submissions are accepted again.
    frozen.store(false, Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + submit_patience();
    loop {
        let again = app.post_json("/api/v1/runs", &body).await;
        if again.status().is_success() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "submissions still refused after the database came back: {}",
            again.status()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
