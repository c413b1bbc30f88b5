//! Watching the endpoint: a GET or DELETE whose answer is read as far as its
//! first event, the end of its body, or the end of a window (STL-005/006,
//! DEP-004). A server that rightly opens an event stream on GET sends nothing
//! on it, so a watch of that stream lasts its whole window; the window is
//! therefore derived from how long the run's exchanges took, and the watches
//! of a run are [`Watches`]: started in the background, early, and awaited by
//! the checks that judge them, so that they overlap each other and the rest
//! of the run.

use super::{BareReply, McpClient};
use crate::suite::{Exchange, ResponseRecord};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{HttpRequest, excerpt, redact_headers};
use bytes::BytesMut;
use futures::StreamExt;
use futures::future::{BoxFuture, FutureExt, Shared};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::task::AbortHandle;
use url::Url;

/// A window is twice the run's fastest round trip and this many times what
/// the slower answers (95th percentile) take beyond it (see
/// [`RttRecord::window`](crate::suite::rtt::RttRecord::window)). A server sends an event on a stream it has just opened (the legacy
/// transport's `endpoint` event comes first, as soon as the stream opens)
/// after about one answer's worth of work; eight answers' worth leaves room
/// for a target slower on this request than on its usual ones and for a
/// loaded machine, which slows every exchange alike and so widens the window.
const WATCH_MULTIPLIER: u32 = 8;
/// The shortest wait for something a correct server sends (the
/// acknowledgement on a `subscriptions/listen` stream, the end of a stream
/// after its final response): cutting it short would fail or warn a correct
/// server. On loopback the 95th percentile is a few milliseconds, and a
/// frame written right after the headers can still be held up for tens of
/// milliseconds by a garbage-collection pause in the target or a scheduler
/// on a busy machine; 300 ms is about a hundred loopback round trips.
const WAIT_FLOOR: Duration = Duration::from_millis(300);
/// The shortest window of a watch (GET and DELETE on the endpoint, read as
/// far as their first event). What a watch looks for is what a correct
/// server never sends: the legacy transport's `endpoint` event (MCP-DEP-004;
/// MCP-STL-005 and -006 read only the status). A legacy server writes that
/// event as soon as its stream opens: server-everything 2026.8.31 (`sse`)
/// in the same packet as the headers, the Python SDK 2.3.0's `sse_app`
/// within 0.5 ms of them (50 streams each on this machine, panel rows
/// `everything-sse` and `sdk-legacy-sse`). 100 ms is two hundred times the
/// longest of those and about thirty loopback round trips on a loaded
/// machine; a window this long fails no correct server whatever it is, and
/// a run against a server that rightly opens a silent GET stream is not
/// held for a floor it does not need.
const WATCH_FLOOR: Duration = Duration::from_millis(100);
/// The longest window of a watch: the fixed window protocheck used before
/// windows were derived from round-trip times, so that a target too slow for
/// the multiple gets exactly the time it always got and no verdict changes.
/// It is also never longer than the run's request timeout.
pub const WATCH_CEILING: Duration = Duration::from_secs(2);

/// How often a running watch looks again at the run's round-trip times.
const RECHECK: Duration = Duration::from_millis(25);

type Watch = Shared<BoxFuture<'static, BareReply>>;

/// The watches of one run, by method and URL: each is sent once, in a task
/// of its own, and its answer is shared by every check that awaits it (a GET
/// on the endpoint answers both whether GET is refused and whether a legacy
/// stream opens). Dropping the set stops the watches still running.
#[derive(Default)]
pub struct Watches {
    started: Mutex<HashMap<(http::Method, Url), (Watch, AbortHandle)>>,
}

impl Watches {
    /// The watch of `method` on `url`, started now unless it already was.
    /// Must be called within the run's Tokio runtime.
    pub fn start(&self, client: &McpClient, method: http::Method, url: &Url) -> Watch {
        let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (method, url.clone());
        if let Some((watch, _)) = started.get(&key) {
            return watch.clone();
        }
        let req = client.watch_request(key.0.clone(), url.clone());
        let record = client
            .authorize(req.clone())
            .record(client.http.limits().evidence_bytes);
        let task = tokio::spawn({
            let client = client.clone();
            async move { client.read_answer(req, None).await }
        });
        let abort = task.abort_handle();
        let watch = task
            .map(move |joined| {
                joined.unwrap_or_else(|err| unanswered(record, format!("the watch ended: {err}")))
            })
            .boxed()
            .shared();
        started.insert(key, (watch.clone(), abort));
        watch
    }

    /// Starts the watch of `method` on `url` in the background, unless it
    /// was started already; a check awaits it later.
    pub fn start_early(&self, client: &McpClient, method: http::Method, url: &Url) {
        drop(self.start(client, method, url));
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        let started = self
            .started
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for (_, abort) in started.values() {
            abort.abort();
        }
    }
}

fn unanswered(request: crate::suite::RequestRecord, error: String) -> BareReply {
    BareReply {
        status: None,
        first_event: None,
        sse: false,
        exchange: Exchange {
            request,
            response: None,
            error: Some(error),
        },
    }
}

impl McpClient {
    /// The request of a watch: `method` on `url`, accepting an event stream.
    fn watch_request(&self, method: http::Method, url: Url) -> HttpRequest {
        HttpRequest {
            method,
            ..HttpRequest::get(url)
        }
        .header("accept", "text/event-stream")
        .timeout(self.timeout)
    }

    /// A watch of `method` on `url` carrying one more header (`name: value`),
    /// sent now and not shared: read as far as its first event or the watch
    /// window, as [`Watches::start`] reads the plain one.
    pub async fn watch_with_header(
        &self,
        method: http::Method,
        url: &Url,
        name: &str,
        value: &str,
    ) -> BareReply {
        let req = self.watch_request(method, url.clone()).header(name, value);
        self.read_answer(req, None).await
    }

    /// How long to wait for something a correct server sends, at most
    /// `ceiling` (and never longer than the request timeout): a multiple of
    /// the run's round-trip times (see [`WATCH_MULTIPLIER`] and
    /// [`WAIT_FLOOR`]).
    pub fn adaptive_window(&self, ceiling: Duration) -> Duration {
        self.rtt
            .window(WATCH_MULTIPLIER, WAIT_FLOOR, ceiling.min(self.timeout))
    }

    /// The window of a watch: the same multiple of the run's round-trip
    /// times, from [`WATCH_FLOOR`] to [`WATCH_CEILING`] (and never longer
    /// than the request timeout).
    fn watch_window(&self) -> Duration {
        self.rtt.window(
            WATCH_MULTIPLIER,
            WATCH_FLOOR,
            WATCH_CEILING.min(self.timeout),
        )
    }

    /// Awaits `work` until `window` after `since`, or, without a fixed
    /// window, until the adaptive window after `since` has passed. The
    /// adaptive window is judged again as the rest of the run records round
    /// trips (every [`RECHECK`] at most), so a watch started early, when only
    /// the first and slowest exchanges of a run are known, ends by the
    /// window the whole run gives. `None` when the window passed first.
    async fn within_window<F: std::future::Future>(
        &self,
        since: tokio::time::Instant,
        window: Option<Duration>,
        work: F,
    ) -> Option<F::Output> {
        if let Some(window) = window {
            return tokio::time::timeout_at(since + window, work).await.ok();
        }
        let mut work = std::pin::pin!(work);
        loop {
            let deadline = since + self.watch_window();
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            let wake = deadline.min(now + RECHECK);
            if let Ok(done) = tokio::time::timeout_at(wake, work.as_mut()).await {
                return Some(done);
            }
        }
    }

    /// Sends a GET or DELETE to the endpoint and reads its answer only as far
    /// as the first event or `window` after the headers (closing a legacy
    /// session at the end of a run).
    pub async fn bare(&self, req: HttpRequest, window: Duration) -> BareReply {
        self.read_answer(req, Some(window)).await
    }

    /// Reads the answer to `req` for `window` after its headers, or, without
    /// one, for the watch window derived from the run's round-trip times
    /// (see [`McpClient::within_window`]).
    async fn read_answer(&self, req: HttpRequest, window: Option<Duration>) -> BareReply {
        // The permit is held while the request is in flight and given back
        // once the headers are in: a stream that is only being listened to
        // costs the target no work, and holding a permit through a window
        // would leave the rest of the run one request wide for its length.
        // The connections kept open that way are few: a run watches at most
        // a GET on the endpoint, a GET beside it and a DELETE.
        let permit = self.permits.acquire().await;
        let req = self.authorize(req);
        let evidence_bytes = self.http.limits().evidence_bytes;
        let record = req.record(evidence_bytes);
        let started = Instant::now();
        let resp = match self.http.send_streaming(&req).await {
            Ok(resp) => resp,
            Err(err) => return unanswered(record, err.to_string()),
        };
        drop(permit);
        self.rtt.record(started.elapsed());
        let headers_at = tokio::time::Instant::now();
        let status = resp.status;
        let sse = is_event_stream(&resp.headers);
        let headers = redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        let mut first_event = None;
        let mut shown = String::new();
        if sse {
            let mut reader = SseReader::new(resp, self.http.limits());
            if let Some(Ok(Some(event))) = self
                .within_window(headers_at, window, reader.next_event())
                .await
            {
                shown = format!(
                    "event: {}\ndata: {}\n\n",
                    event.event.as_deref().unwrap_or("message"),
                    event.data
                );
                first_event = Some(event);
            }
        } else {
            let mut body = resp.body;
            let mut bytes = BytesMut::new();
            while bytes.len() < evidence_bytes {
                match self.within_window(headers_at, window, body.next()).await {
                    Some(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
                    _ => break,
                }
            }
            shown = excerpt(&bytes, evidence_bytes).0;
        }
        let (body, truncated) = excerpt(shown.as_bytes(), evidence_bytes);
        BareReply {
            status: Some(status),
            first_event,
            sse,
            exchange: Exchange {
                request: record,
                response: Some(ResponseRecord {
                    status: Some(status),
                    headers,
                    body,
                    truncated,
                    elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }),
                error: None,
            },
        }
    }
}
