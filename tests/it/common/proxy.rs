//! A TCP proxy on loopback in front of a database, which a test (or a
//! benchmark, through `#[path]`) can make misbehave as a database host does:
//! freeze (hold every byte, close nothing: a host gone silent) or go down
//! (close every connection and refuse new ones: a restart).
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The switches of a running proxy.
#[derive(Clone, Default)]
pub struct Proxy {
    pub port: u16,
    frozen: Arc<AtomicBool>,
    down: Arc<AtomicBool>,
    /// Bumped by `go_down`: connections opened before it close.
    epoch: Arc<AtomicU64>,
    /// Wakes the accept loop to stop for good (see `stop`).
    stopped: Arc<tokio::sync::Notify>,
}

impl Proxy {
    /// Starts a proxy on 127.0.0.1 to `upstream` (`host:port`).
    pub async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = Self {
            port: listener.local_addr().expect("addr").port(),
            ..Self::default()
        };
        let state = proxy.clone();
        tokio::spawn(async move {
            loop {
                let client = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((client, _)) => client,
                        Err(_) => break,
                    },
                    () = state.stopped.notified() => break,
                };
                if state.down.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let epoch = state.epoch.load(Ordering::SeqCst);
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pump(cr, sw, state.clone(), epoch));
                tokio::spawn(pump(sr, cw, state.clone(), epoch));
            }
        });
        proxy
    }

    /// Starts a proxy in front of the Postgres database `url` names; returns
    /// it and the same URL through it.
    pub async fn postgres(url: &str) -> (Self, String) {
        let mut url = url::Url::parse(url).expect("database URL");
        let upstream = format!(
            "{}:{}",
            url.host_str().unwrap_or("127.0.0.1"),
            url.port().unwrap_or(5432)
        );
        let proxy = Self::start(upstream).await;
        url.set_port(Some(proxy.port)).expect("port");
        (proxy, url.to_string())
    }

    pub fn freeze(&self, frozen: bool) {
        self.frozen.store(frozen, Ordering::SeqCst);
    }

    /// Closes every open connection and refuses new ones until `come_back`.
    pub fn go_down(&self) {
        self.down.store(true, Ordering::SeqCst);
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Closes every open connection and the listening socket: from then on a
    /// connection to the port is refused, as to a database server that has
    /// stopped. For good: the proxy does not come back.
    pub fn stop(&self) {
        self.go_down();
        self.stopped.notify_one();
    }

    pub fn come_back(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    state: Proxy,
    epoch: u64,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let gone = || state.epoch.load(Ordering::SeqCst) != epoch;
    loop {
        // Reads are polled with a short bound so a connection notices it was cut.
        let n = match tokio::time::timeout(Duration::from_millis(50), from.read(&mut buf)).await {
            Err(_) if gone() => return,
            Err(_) => continue,
            Ok(Ok(0) | Err(_)) => return,
            Ok(Ok(n)) => n,
        };
        while state.frozen.load(Ordering::SeqCst) && !gone() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if gone() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
