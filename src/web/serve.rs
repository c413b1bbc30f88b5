//! The connection loop of `protocheck serve`: HTTP/1.1 and HTTP/2 (prior
//! knowledge) on hyper, with the limits that keep idle and slow clients from
//! holding the service's file descriptors.
//!
//! - A client must send a complete request head within `header_timeout`: from
//!   the accept for its first request, from the first byte of the head for the
//!   later ones on a kept-alive connection.
//! - A connection with no request in flight and no byte of a new request for
//!   `idle_timeout` is closed. A progress stream or a slow response is a request
//!   in flight: it is not idle.
//! - A connection whose client stops reading (every write waits on a full
//!   socket buffer) for `write_timeout` is closed, whatever it is sending: a
//!   response, a progress stream, or pipelined answers nobody reads.
//! - One client address holds at most `max_per_client` connections, and all
//!   clients together `max_connections`. A connection over the client's
//!   share is closed as soon as it is accepted, never queued: a queue would
//!   hold its descriptor. When all connections are taken, the newcomer takes
//!   the place of a connection that has no request in flight (one still
//!   sending its head, or idle between requests), from the address holding
//!   the most and the quietest longest first; only when every connection is
//!   serving a request is it closed.
//!
//! `axum::serve` sets none of these, so the loop is written here; it keeps what
//! `axum::serve` gave: `ConnectInfo<SocketAddr>` on every request and a
//! graceful shutdown that lets requests in flight finish.

use super::slots::{ClientSlots, Refused};
use axum::Router;
use axum::body::Body;
use axum::extract::connect_info::ConnectInfo;
use bytes::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// The connection limits (see the module documentation).
#[derive(Debug, Clone)]
pub struct ConnLimits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub write_timeout: Duration,
    pub max_connections: usize,
    pub max_per_client: usize,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_per_client: 64,
        }
    }
}

/// How long the loop waits after an accept error other than a refused
/// connection (typically: out of file descriptors) before it accepts again, so
/// it neither spins nor stays deaf for long.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How often a refusal for want of connections is logged.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// The largest request head the service reads (HTTP/1.1 read buffer, HTTP/2
/// header list); a larger one is answered 431.
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

/// How long, at most, a closing connection reads and discards what its
/// client still sends (see [`Watched::poll_shutdown`]).
pub const LINGER_TIME: Duration = Duration::from_secs(10);
/// How much, at most, a closing connection reads and discards.
pub const LINGER_BYTES: usize = 32 * 1024 * 1024;

/// Serves `app` on `listener` until `stop` is cancelled, then stops accepting
/// and waits for the open connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let slots = ClientSlots::new(limits.max_per_client, limits.max_connections);
    let open = Open::default();
    let connections = TaskTracker::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper's own head timeout would also run while a kept-alive connection
    // waits for its next request, merging the two timeouts into one; the
    // watchdog below keeps them apart.
    builder.http1().header_read_timeout(None::<Duration>);
    // A request head is a few hundred bytes; hyper would buffer ~400 KB of
    // one per connection before refusing it (#31 item 6: 3,200 unfinished
    // heads took 1 GB). Past this it answers 431 and closes.
    builder.http1().max_buf_size(MAX_HEAD_BYTES);
    builder.http2().max_header_list_size(MAX_HEAD_BYTES as u32);
    let builder = Arc::new(builder);
    let limits = Arc::new(limits);
    let mut last_warned = None;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let taken = match slots.take(peer.ip()) {
            // Every place is taken: a connection without a request in flight
            // gives its place up (#31 item 8), so that a few addresses holding
            // half-sent heads cannot keep everyone else out.
            // The newcomer's own share is checked first: nobody is shed for
            // a connection that would be refused anyway.
            Err(Refused::Total) => match slots.take_beyond_total(peer.ip()) {
                Ok(slot) if open.shed_one() => Ok(slot),
                Ok(_) => Err(Refused::Total),
                Err(refused) => Err(refused),
            },
            taken => taken,
        };
        let slot = match taken {
            Ok(slot) => slot,
            Err(refused) => {
                tracing::debug!(client = %peer.ip(), limit = ?refused, "connection refused: over the limit");
                // Dropped here: the client sees its connection closed at once.
                drop(stream);
                // Said once a minute at most: under a flood, each refusal would be a line.
                if refused == Refused::Total
                    && last_warned.is_none_or(|at: Instant| at.elapsed() >= WARN_EVERY)
                {
                    last_warned = Some(Instant::now());
                    tracing::warn!(
                        limit = slots.total_limit(),
                        "connection refused: the service holds its maximum of connections"
                    );
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let builder = builder.clone();
        let limits = limits.clone();
        let stop = stop.clone();
        let listed = open.add(peer);
        connections.spawn(async move {
            serve_connection(&builder, stream, peer, app, &limits, stop, &listed).await;
            drop(listed);
            drop(slot);
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Errors of one incoming connection that says nothing about the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

async fn serve_connection(
    builder: &auto::Builder<TokioExecutor>,
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: &ConnLimits,
    stop: CancellationToken,
    listed: &Listed,
) {
    let activity = listed.activity.clone();
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
        linger: None,
    });
    let per_request = activity.clone();
    let service = tower::service_fn(move |mut req: axum::http::Request<_>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let in_flight = InFlight::begin(per_request.clone());
        let answer = app.clone().oneshot(req);
        async move {
            let resp = answer.await?;
            Ok::<_, Infallible>(resp.map(|body| {
                Body::new(Counted {
                    inner: body,
                    _in_flight: in_flight,
                })
            }))
        }
    });
    let conn = builder.serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        let deadline = activity.deadline(limits);
        let changed = activity.changed.notified();
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(client = %peer, error = %e, "connection ended with an error");
                }
                return;
            }
            () = changed => {}
            () = sleep_until(deadline) => {
                if activity.deadline(limits).is_some_and(|d| d <= Instant::now()) {
                    // Dropping the connection closes the socket. Nothing is
                    // in flight, or the client stopped reading what is.
                    tracing::debug!(client = %peer, "connection closed: idle, slow request head, or a client that stopped reading");
                    return;
                }
            }
            () = listed.shed.cancelled() => {
                tracing::debug!(client = %peer, "connection closed: its place went to a new connection while it had no request in flight");
                return;
            }
            () = stop.cancelled(), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The connections open now, so that a full service can shed one that is
/// not serving a request (see the module documentation).
#[derive(Clone, Default)]
struct Open(Arc<Mutex<OpenList>>);

#[derive(Default)]
struct OpenList {
    next: u64,
    by_id: std::collections::HashMap<u64, (SocketAddr, Arc<Activity>, CancellationToken)>,
}

/// One open connection's entry; leaves the list when dropped.
struct Listed {
    open: Open,
    id: u64,
    activity: Arc<Activity>,
    /// Cancelled when the connection's place goes to a newcomer.
    shed: CancellationToken,
}

impl Open {
    fn list(&self) -> std::sync::MutexGuard<'_, OpenList> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, peer: SocketAddr) -> Listed {
        let activity = Arc::new(Activity::new());
        let shed = CancellationToken::new();
        let mut list = self.list();
        let id = list.next;
        list.next += 1;
        list.by_id
            .insert(id, (peer, activity.clone(), shed.clone()));
        Listed {
            open: self.clone(),
            id,
            activity,
            shed,
        }
    }

    /// Closes one connection with no request in flight: of the address
    /// holding the most connections, the one quiet longest. False when every
    /// connection is serving a request.
    fn shed_one(&self) -> bool {
        let mut list = self.list();
        let mut held: std::collections::HashMap<std::net::IpAddr, usize> =
            std::collections::HashMap::new();
        for (peer, _, _) in list.by_id.values() {
            *held
                .entry(super::ratelimit::client_key(peer.ip()))
                .or_default() += 1;
        }
        let chosen = list
            .by_id
            .iter()
            .filter(|(_, (_, activity, shed))| {
                !shed.is_cancelled() && activity.in_flight.load(Ordering::SeqCst) == 0
            })
            .max_by_key(|(_, (peer, activity, _))| {
                let by = held
                    .get(&super::ratelimit::client_key(peer.ip()))
                    .copied()
                    .unwrap_or(0);
                (by, std::cmp::Reverse(activity.quiet().since))
            })
            .map(|(id, _)| *id);
        match chosen.and_then(|id| list.by_id.remove(&id)) {
            Some((_, _, shed)) => {
                shed.cancel();
                true
            }
            None => false,
        }
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        self.open.list().by_id.remove(&self.id);
    }
}

/// What one connection is doing, as its watchdog sees it.
struct Activity {
    in_flight: AtomicUsize,
    quiet: Mutex<Quiet>,
    /// Whether a write is waiting on a full socket buffer (see `Quiet::stalled_since`).
    stalled: std::sync::atomic::AtomicBool,
    /// Woken when a request begins or ends, at the first byte of a head, and
    /// when a write starts waiting.
    changed: tokio::sync::Notify,
}

/// Since when nothing is in flight, and whether a new head has begun.
struct Quiet {
    since: Instant,
    served_any: bool,
    head_began: Option<Instant>,
    /// Since when writes have waited on a full socket buffer without any
    /// byte going out: the client stopped reading.
    stalled_since: Option<Instant>,
}

impl Activity {
    fn new() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            quiet: Mutex::new(Quiet {
                since: Instant::now(),
                served_any: false,
                head_began: None,
                stalled_since: None,
            }),
            stalled: std::sync::atomic::AtomicBool::new(false),
            changed: tokio::sync::Notify::new(),
        }
    }

    fn quiet(&self) -> std::sync::MutexGuard<'_, Quiet> {
        self.quiet.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When the connection is to be closed if nothing changes: while a
    /// request is in flight, only when the client stops reading.
    fn deadline(&self, limits: &ConnLimits) -> Option<Instant> {
        let quiet = self.quiet();
        let stalled = quiet
            .stalled_since
            .map(|since| since + limits.write_timeout);
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return stalled;
        }
        let waiting = match (quiet.served_any, quiet.head_began) {
            (false, _) => quiet.since + limits.header_timeout,
            (true, Some(began)) => began + limits.header_timeout,
            (true, None) => quiet.since + limits.idle_timeout,
        };
        Some(stalled.map_or(waiting, |at| at.min(waiting)))
    }

    /// A write waits on a full socket buffer.
    fn write_waits(&self) {
        if self.stalled.swap(true, Ordering::SeqCst) {
            return;
        }
        self.quiet().stalled_since.get_or_insert_with(Instant::now);
        self.changed.notify_one();
    }

    /// A write went out: the client reads.
    fn wrote(&self) {
        if self.stalled.swap(false, Ordering::SeqCst) {
            self.quiet().stalled_since = None;
        }
    }

    /// What a write came to, told to the watchdog.
    fn after_write<T>(&self, polled: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        match &polled {
            Poll::Pending => self.write_waits(),
            Poll::Ready(_) => self.wrote(),
        }
        polled
    }

    /// Bytes arrived from the client.
    fn read_some(&self) {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            // A request body: the request is in flight already.
            return;
        }
        let mut quiet = self.quiet();
        if quiet.head_began.is_none() {
            quiet.head_began = Some(Instant::now());
            drop(quiet);
            self.changed.notify_one();
        }
    }
}

/// A request in flight, from its head until its response body is dropped.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn begin(activity: Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        activity.quiet().served_any = true;
        activity.changed.notify_one();
        Self(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut quiet = self.0.quiet();
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            quiet.since = Instant::now();
            quiet.head_began = None;
        }
        drop(quiet);
        self.0.changed.notify_one();
    }
}

/// A response body that keeps its request counted as in flight until it is
/// dropped (sent to the end, or abandoned).
struct Counted {
    inner: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The client's socket, telling the watchdog when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    /// The lingering close under way, once the connection is closing.
    linger: Option<Linger>,
}

/// A lingering close, as nginx does it: the answer is sent and the write
/// side shut (the client reads the answer, then the end), and what the
/// client still sends is read and thrown away until it closes its side, for
/// [`LINGER_TIME`] and [`LINGER_BYTES`] at most. Closing at once with unread
/// bytes in the socket would make the kernel answer them with a reset, which
/// can reach the client before it has read the answer: a client that writes
/// a whole refused upload before it reads (Python's urllib) then saw a broken
/// pipe instead of its 413, as one that sent too large a head did instead of
/// its 431.
struct Linger {
    fin_sent: bool,
    left: usize,
    until: Pin<Box<tokio::time::Sleep>>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.activity.after_write(polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.activity.after_write(polled)
    }

    /// Called by hyper as it closes the connection: a lingering close (see
    /// [`Linger`]). A connection the watchdog closes is dropped instead,
    /// without lingering.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let linger = this.linger.get_or_insert_with(|| Linger {
            fin_sent: false,
            left: LINGER_BYTES,
            until: Box::pin(tokio::time::sleep(LINGER_TIME)),
        });
        if !linger.fin_sent {
            std::task::ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            linger.fin_sent = true;
        }
        let mut scratch = [0u8; 8192];
        loop {
            if linger.left == 0 || linger.until.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let room = linger.left.min(scratch.len());
            let mut buf = ReadBuf::new(&mut scratch[..room]);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                // The client closed its side, or reset: nothing more can help it.
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => linger.left -= buf.filled().len(),
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.activity.after_write(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The process's file limit and the connections it leaves room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBudget {
    /// The soft `RLIMIT_NOFILE` in force, after raising it where allowed.
    pub file_limit: u64,
    /// Descriptors kept for everything but client connections.
    pub reserved: u64,
}

impl FileBudget {
    /// Descriptors kept for the database pool, the workers' connections to
    /// targets, the listener, logs and files: a fixed share plus a share per
    /// worker, as a run can hold several connections to its target at once.
    /// Under a small file limit the reserve is at most half of it, so
    /// connections keep the other half.
    pub fn for_workers(file_limit: u64, workers: usize) -> Self {
        let workers = u64::try_from(workers).unwrap_or(u64::MAX);
        Self {
            file_limit,
            reserved: 64u64
                .saturating_add(workers.saturating_mul(16))
                .min(file_limit / 2),
        }
    }

    /// The connection limit: `wanted` (or everything the budget allows when
    /// `None`), never more than the descriptors left after the reserve, and at
    /// least a handful so a tiny limit still serves someone.
    pub fn max_connections(&self, wanted: Option<usize>) -> usize {
        let room = usize::try_from(self.file_limit.saturating_sub(self.reserved))
            .unwrap_or(usize::MAX)
            .max(MIN_CONNECTIONS);
        wanted.map_or(room.min(AUTO_CEILING), |w| w.clamp(1, room))
    }
}

/// The fewest connections the service accepts, whatever the file limit.
const MIN_CONNECTIONS: usize = 16;
/// The automatic limit's ceiling, for systems whose file limit is in the millions.
const AUTO_CEILING: usize = 65_536;

/// Raises the soft file limit to the hard one where the system allows it, and
/// returns the limit in force (`None` where it cannot be read).
pub fn raise_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => Some(limit),
        Err(e) => {
            tracing::warn!(error = %e, "could not raise the file limit");
            rlimit::Resource::NOFILE.get().ok().map(|(soft, _)| soft)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_limit_leaves_the_reserve_free() {
        let budget = FileBudget::for_workers(1024, 4);
        assert_eq!(budget.reserved, 128);
        assert_eq!(budget.max_connections(None), 896);
        assert_eq!(budget.max_connections(Some(100)), 100);
        assert_eq!(budget.max_connections(Some(5000)), 896);
        // A limit of 128 with four workers: half of it for connections.
        assert_eq!(FileBudget::for_workers(128, 4).max_connections(None), 64);
        assert_eq!(
            FileBudget::for_workers(20, 4).max_connections(None),
            MIN_CONNECTIONS
        );
        assert_eq!(
            FileBudget::for_workers(1 << 20, 4).max_connections(None),
            AUTO_CEILING
        );
    }
}
