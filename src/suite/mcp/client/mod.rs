//! A client for MCP 2026-07-28 over Streamable HTTP or stdio, built for probing: every
//! request is a [`Probe`] that starts conforming (headers mirrored from the body,
//! required `_meta`) and can be bent on purpose; every answer is a [`Reply`]
//! that keeps what a rule needs (status, media type, the final JSON-RPC message,
//! notifications and stray requests on an SSE stream, whether the stream ended)
//! together with bounded, redacted evidence. Replies are also logged as
//! [`Seen`] records, which the run-wide rules (RES, ERR, DSC-005) judge.
//!
//! The client itself lives here; `probe` builds requests, `reply` holds
//! what comes back, `streaming` sends over the pooled HTTP client,
//! `dedicated` over one HTTP/1.1 connection of a rule's own, and `watch`
//! watches a GET or DELETE answer in the background, for as long as the
//! run's round-trip times say an event could still come. `stdio` sends
//! over a child process instead, when the run's endpoint is one.

mod dedicated;
mod probe;
mod reply;
mod stdio;
mod streaming;
mod watch;

pub use dedicated::Spelling;
pub(crate) use probe::UNKNOWN_NAME_PREFIX;
pub use probe::{Intent, Invalidity, MODERN_METHODS, Probe};
pub use reply::{BareReply, Echo, EchoSearch, Reply, Seen, clip, some};
pub use streaming::STREAM_END_GRACE;
pub use watch::Watches;

use crate::suite::BearerToken;
use crate::suite::permits::Permits;
use crate::suite::rtt::RttRecord;
use crate::transport::{HttpClient, HttpRequest, TransportError};
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;
use url::Url;

/// The client identity protocheck declares in `_meta` (optional per spec, sent
/// because clients SHOULD).
pub fn client_info() -> Value {
    json!({"name": "protocheck", "version": env!("CARGO_PKG_VERSION")})
}
/// The MCP client of one run. Cheap to clone; clones share the id counter, the
/// concurrency limit and the log.
#[derive(Clone)]
pub struct McpClient {
    http: HttpClient,
    url: Url,
    timeout: Duration,
    permits: Permits,
    next_id: Arc<AtomicI64>,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set once a stream stayed open after its final response: later streams are
    /// not waited on, so a server that never closes them cannot stretch the run.
    open_stream_seen: Arc<AtomicBool>,
    /// The run's bearer token, sent on every request (authorization is per
    /// request: there is no session to carry it, spec §9.6).
    bearer: Option<BearerToken>,
    /// A value unique to this run, sent in [`CANARY_HEADER`] on every request so
    /// that MCP-SEC-003 can look for it in every reply.
    canary: Arc<str>,
    /// How long the run's exchanges took: every watch and grace period of
    /// the run is derived from it (see [`watch`]).
    rtt: RttRecord,
    /// Over stdio: the run's child process, which every probe goes to.
    stdio: Option<Arc<stdio::StdioLink>>,
    /// The tools the server annotates `readOnlyHint: true`, once the survey
    /// listed them: a call of one may be sent twice (see [`Self::send`]).
    read_only_tools: Arc<std::sync::OnceLock<std::collections::BTreeSet<String>>>,
}

/// The URL a stdio run's client and session carry: it names no host, so
/// nothing is ever sent to it (the rules that read the endpoint's URL are
/// Streamable HTTP rules, skipped over stdio).
pub const STDIO_URL: &str = "stdio:";

/// The header that carries the run's canary value: an ordinary, non-credential
/// header a server has no reason to repeat.
pub const CANARY_HEADER: &str = "x-protocheck-canary";

impl McpClient {
    pub fn new(http: HttpClient, url: Url, timeout: Duration, max_concurrency: usize) -> Self {
        Self {
            http,
            url,
            timeout,
            permits: Permits::new(max_concurrency),
            next_id: Arc::new(AtomicI64::new(1)),
            seen: Arc::new(Mutex::new(Vec::new())),
            open_stream_seen: Arc::new(AtomicBool::new(false)),
            bearer: None,
            canary: format!("pc-canary-{:016x}", rand::random::<u64>()).into(),
            rtt: RttRecord::default(),
            stdio: None,
            read_only_tools: Arc::default(),
        }
    }

    /// Notes the tools the survey found annotated `readOnlyHint: true`
    /// (once; later notes are ignored).
    pub fn note_read_only_tools(&self, names: impl IntoIterator<Item = String>) {
        let _ = self.read_only_tools.set(names.into_iter().collect());
    }

    /// Whether `probe` changes nothing on the server when sent twice
    /// ([`Probe::may_be_sent_twice`], given the tools noted read-only).
    fn may_be_sent_twice(&self, probe: &Probe) -> bool {
        match self.read_only_tools.get() {
            Some(tools) => probe.may_be_sent_twice(tools),
            None => probe.may_be_sent_twice(&std::collections::BTreeSet::new()),
        }
    }

    /// A client that sends every probe to `child`, one line each, one at a
    /// time. `http` gives only the limits (line length, evidence size).
    pub fn over_stdio(
        http: HttpClient,
        child: crate::transport::stdio::StdioChild,
        timeout: Duration,
    ) -> Self {
        let url = Url::parse(STDIO_URL).unwrap_or_else(|_| unreachable!("a constant URL"));
        let mut client = Self::new(http, url, timeout, 1);
        client.stdio = Some(Arc::new(stdio::StdioLink::new(child)));
        client
    }

    /// Whether the client speaks to a child process over stdio.
    pub fn is_stdio(&self) -> bool {
        self.stdio.is_some()
    }

    /// Ends the run's child process, over stdio; nothing over HTTP.
    pub async fn close(&self) {
        if let Some(link) = &self.stdio {
            link.close().await;
        }
    }

    /// The same client sending `token` as a bearer token on every request.
    pub fn with_bearer(mut self, token: Option<BearerToken>) -> Self {
        self.bearer = token;
        self
    }

    /// The run's bearer token, if it has one.
    pub fn bearer(&self) -> Option<&BearerToken> {
        self.bearer.as_ref()
    }

    /// The canary value every request of the run carries.
    pub fn canary(&self) -> &str {
        &self.canary
    }

    /// Adds the run's credentials and canary to a request that sets neither.
    pub fn authorize(&self, mut req: HttpRequest) -> HttpRequest {
        let has = |req: &HttpRequest, name: &str| req.headers.iter().any(|(n, _)| n == name);
        if let Some(token) = &self.bearer
            && !has(&req, "authorization")
        {
            req = req.header("authorization", format!("Bearer {}", token.expose()));
        }
        if !has(&req, CANARY_HEADER) {
            req = req.header(CANARY_HEADER, self.canary.to_string());
        }
        req
    }

    /// The same client on a new connection pool, so its first request opens a
    /// new connection (STL rules). Shares the limit and the log.
    /// Over stdio the child is the one connection: the same client.
    pub fn fresh_connection(&self) -> Result<Self, TransportError> {
        if self.stdio.is_some() {
            return Ok(self.clone());
        }
        let http = self.http.fresh()?;
        Ok(Self {
            http,
            ..self.clone()
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A conforming request with a fresh id.
    pub fn request(&self, method: &str, params: Value) -> Probe {
        Probe::request(self.next_id(), method, params)
    }

    /// The answers to the valid probes of the run so far: the one way the
    /// run-wide rules read replies. Answers to invalid probes are never here.
    pub async fn seen(&self) -> Vec<Seen> {
        let mut seen = self.seen.lock().await.clone();
        // Repeatability: the order of requests, not of concurrent answers.
        seen.sort_by_key(|r| r.order);
        seen
    }

    /// Builds the HTTP request of a probe.
    fn http_request(&self, probe: &Probe) -> HttpRequest {
        self.authorize(self.plain_request(probe))
    }

    /// The HTTP request of a probe without the run's token or canary: for the
    /// authorization probes, which must arrive unauthenticated or with a token
    /// of their own. Not sent through the log.
    pub fn plain_request(&self, probe: &Probe) -> HttpRequest {
        let mut req = HttpRequest::post_raw(
            self.url.clone(),
            "application/json",
            Bytes::from(probe.body.to_string()),
        )
        .timeout(self.timeout);
        for (name, value) in &probe.headers {
            req = req.header(name, value.clone());
        }
        req
    }
}

/// Why a finding on an answer over protocheck's read limit is "not
/// verified": what protocheck did not read it cannot judge, and its own
/// limit is never the server's failure. Both MCP suites say it alike.
pub(crate) fn over_limit_message(limit: usize, finding: &str) -> String {
    format!(
        "not verified: an answer was larger than protocheck reads (its {limit}-byte limit, set \
         with --max-answer-bytes or PROTOCHECK_MAX_ANSWER_BYTES), so it was not judged: {finding}"
    )
}

/// The most of a refusing server's own words a finding quotes.
const REFUSAL_WORDS_CHARS: usize = 200;

/// Why nothing of a run can be judged when the server refused the run's
/// opening requests (`asked`, each with its answer) all with the same 403:
/// the run is refused, not judged, and the verdict says so with the server's
/// words (escaped, bounded) and the likely cause, never a grade. The first
/// clause ("every request was refused with HTTP 403") is the short reason a
/// verdict without a grade shows (see `suite::grade`). A 401 has its own
/// reason ("authorization required"), given by each engine.
pub(crate) fn refused_everything(asked: &[(&str, &crate::suite::Exchange)]) -> Option<String> {
    let statuses: Vec<Option<u16>> = asked
        .iter()
        .map(|(_, e)| e.response.as_ref().and_then(|r| r.status))
        .collect();
    if asked.is_empty() || statuses.iter().any(|s| *s != Some(403)) {
        return None;
    }
    let (first, exchange) = asked[0];
    let words = exchange
        .response
        .as_ref()
        .map(|r| r.body.trim())
        .filter(|b| !b.is_empty())
        .map_or("no body".to_owned(), |b| {
            format!("{:?}", clip(b, REFUSAL_WORDS_CHARS))
        });
    let names: Vec<String> = asked.iter().map(|(m, _)| format!("`{m}`")).collect();
    Some(format!(
        "not verified: every request was refused with HTTP 403: the server answered {} with \
         HTTP 403 ({words} to `{first}`), so nothing of it could be judged. Likely cause: the \
         server accepts only the Host or Origin values it was told of (a DNS-rebinding \
         allow-list, such as one that allows only `localhost`); let it accept this host (an \
         option such as `--allowed-hosts`), or check it at a URL it allows",
        names.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::refused_everything;
    use crate::suite::{Exchange, RequestRecord, ResponseRecord};

    fn answered(status: u16, body: &str) -> Exchange {
        Exchange {
            request: RequestRecord {
                line: "POST http://127.0.0.1:1/mcp".into(),
                headers: Vec::new(),
                body: String::new(),
            },
            response: Some(ResponseRecord {
                status: Some(status),
                headers: Vec::new(),
                body: body.into(),
                truncated: false,
                elapsed_ms: 1,
            }),
            error: None,
        }
    }

    #[test]
    fn only_a_403_to_every_opening_request_is_a_refused_run() {
        let refused = answered(403, "Access is only allowed at localhost:1");
        let served = answered(200, "{}");
        assert!(
            refused_everything(&[("server/discover", &refused), ("initialize", &served)]).is_none()
        );
        assert!(refused_everything(&[("initialize", &answered(401, ""))]).is_none());
        assert!(refused_everything(&[]).is_none());
        let said = refused_everything(&[("server/discover", &refused), ("initialize", &refused)])
            .expect("refused");
        assert!(
            said.starts_with("not verified: every request was refused with HTTP 403: ")
                && said
                    .contains("(\"Access is only allowed at localhost:1\" to `server/discover`)"),
            "{said}"
        );
    }

    #[test]
    fn the_servers_words_are_escaped_and_bounded() {
        let hostile = format!("\"}}\n<script>{}", "x".repeat(5000));
        let said =
            refused_everything(&[("initialize", &answered(403, &hostile))]).expect("refused");
        assert!(!said.contains('\n') && !said.contains("\"}\n"), "{said}");
        assert!(said.len() < 1000, "{} bytes", said.len());
    }
}
