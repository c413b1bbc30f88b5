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

#[tokio::test]
async fn readiness_answers_503_when_the_database_goes_silent() {
    let Some(db) = common::postgres().await else {
        return;
    };
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
