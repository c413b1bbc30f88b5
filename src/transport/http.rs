//! The outbound HTTP client: no redirects followed, no proxies, a size cap on
//! bodies, timeouts on everything, and the SSRF guard in the resolver.

use super::evidence::{Exchange, RequestRecord, ResponseRecord};
use super::throttle::{Throttle, Verdict};
use super::{AddressPolicy, Limits, TransportError, excerpt, redact_headers};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderMap, Method};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// A request to a target.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub method: Method,
    pub url: Url,
    pub headers: Vec<(String, String)>,
    pub body: Option<Bytes>,
    /// Overrides the client's default request timeout.
    pub timeout: Option<Duration>,
}

impl HttpRequest {
    pub fn get(url: Url) -> Self {
        Self {
            method: Method::GET,
            url,
            headers: Vec::new(),
            body: None,
            timeout: None,
        }
    }

    /// A POST with a JSON body and `Content-Type: application/json`.
    pub fn post_json(url: Url, body: &serde_json::Value) -> Self {
        Self::post_raw(url, "application/json", Bytes::from(body.to_string()))
    }

    /// A POST with any body: probes send malformed JSON on purpose.
    pub fn post_raw(url: Url, content_type: &str, body: Bytes) -> Self {
        Self {
            method: Method::POST,
            url,
            headers: vec![("content-type".into(), content_type.into())],
            body: Some(body),
            timeout: None,
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The request as kept in evidence: credentials redacted, body bounded.
    pub fn record(&self, max_body: usize) -> RequestRecord {
        let headers = redact_headers(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        let body = self
            .body
            .as_deref()
            .map(|b| excerpt(b, max_body).0)
            .unwrap_or_default();
        RequestRecord {
            line: format!("{} {}", self.method, redact_url(&self.url)),
            headers,
            body,
        }
    }
}

/// `url` with any user name and password replaced: reqwest sends them as an
/// `Authorization: Basic` header, so they are as secret as that header.
pub(crate) fn redact_url(url: &Url) -> std::borrow::Cow<'_, Url> {
    if url.username().is_empty() && url.password().is_none() {
        return std::borrow::Cow::Borrowed(url);
    }
    let mut shown = url.clone();
    // Neither call fails on a URL that already carries credentials.
    let _ = shown.set_username("redacted");
    if url.password().is_some() {
        let _ = shown.set_password(Some("redacted"));
    }
    std::borrow::Cow::Owned(shown)
}

/// A complete, bounded response.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub elapsed: Duration,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn record(&self, max_body: usize) -> ResponseRecord {
        let (body, truncated) = excerpt(&self.body, max_body);
        ResponseRecord {
            status: Some(self.status),
            headers: redact_headers(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))),
            body,
            truncated,
            elapsed_ms: u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// A response whose body is read as a stream (server-sent events).
pub struct StreamingResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: BoxStream<'static, Result<Bytes, TransportError>>,
    pub started: Instant,
}

/// The guarded client. Cheap to clone.
#[derive(Clone)]
pub struct HttpClient {
    inner: reqwest::Client,
    policy: AddressPolicy,
    limits: Arc<Limits>,
    /// CA certificates (DER) trusted beside the built-in roots: an operator's
    /// internal CA (`--ca-cert`, `PROTOCHECK_CA_CERT`), or a test's.
    extra_roots: Arc<Vec<Vec<u8>>>,
    /// Whether connections are kept for later requests (see [`HttpClient::for_target`]).
    reuse: bool,
    /// The addresses a run's target name is connected to (see [`HttpClient::pinned`]).
    pin: Option<Arc<Pin>>,
    /// The run's answer to its target's rate limit (see [`HttpClient::for_run`]).
    throttle: Arc<Throttle>,
    /// The User-Agent of its requests (see [`HttpClient::with_user_agent`]).
    user_agent: Arc<str>,
}

/// What a run's target name resolved to, once, before the run (#31 item 1).
/// The run connects to these addresses and to no others, so the machine its
/// per-host limits were counted by is the machine it talks to, however the
/// name's DNS answers change during the run. A name that did not resolve, or
/// resolved to a forbidden address, keeps that answer for the run too.
#[derive(Debug, Clone)]
pub struct Pin {
    /// The name as the URL spells it, lower case, without a trailing dot.
    name: String,
    answer: Result<Vec<IpAddr>, PinFailure>,
}

#[derive(Debug, Clone)]
enum PinFailure {
    /// The lookup failed: its error.
    Resolve(String),
    /// An address the policy forbids: why, and the address.
    Forbidden(String),
}

impl Pin {
    /// The machine the run connects to (see [`super::machine_of`]); `None`
    /// when the name did not resolve or is refused.
    pub fn machine(&self) -> Option<String> {
        let ips = self.answer.as_ref().ok()?;
        ips.first().map(|ip| super::machine_of(*ip))
    }

    /// Whether `name` (as a resolver or a URL spells it) is the pinned name.
    fn holds(&self, name: &str) -> bool {
        plain_name(name) == self.name
    }

    /// The pinned answer, as the resolver gives it.
    fn answer(&self) -> Result<Vec<IpAddr>, BoxError> {
        match &self.answer {
            Ok(ips) => Ok(ips.clone()),
            Err(PinFailure::Resolve(detail)) => Err(Box::new(ResolveFailure {
                detail: detail.clone(),
            })),
            Err(PinFailure::Forbidden(reason)) => Err(Box::new(GuardRefusal {
                host: self.name.clone(),
                reason: reason.clone(),
            })),
        }
    }

    /// Whether every pinned address is this machine's loopback.
    fn is_this_machine(&self) -> bool {
        matches!(&self.answer, Ok(ips) if !ips.is_empty() && ips.iter().all(|ip| {
            super::machine_of(*ip) == std::net::Ipv4Addr::LOCALHOST.to_string()
        }))
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A name as it is looked up: lower case, without the trailing dot of its
/// fully qualified spelling (`localhost.` is `localhost`).
fn plain_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The machine `url`'s host is (see [`super::machine_of`]): an IP literal's,
/// `localhost`'s without a lookup, else the first address the name resolves
/// to within `within`. `None` when the name does not resolve in time or
/// resolves to an address `policy` forbids (a worker would refuse it).
pub async fn resolve_machine(policy: AddressPolicy, url: &Url, within: Duration) -> Option<String> {
    let host = url.host()?;
    let url::Host::Domain(name) = host else {
        return Some(super::machine_of_host(&host));
    };
    let plain = super::machine_of_host(&host);
    if plain == std::net::Ipv4Addr::LOCALHOST.to_string() {
        return Some(plain);
    }
    let ips = vetted_lookup(policy, name, within).await.ok()?;
    ips.first().map(|ip| super::machine_of(*ip))
}

/// Looks `name` up with the system resolver within `within`, and refuses it
/// when any address it resolves to is forbidden: a mixed answer is a
/// rebinding attempt or a misconfiguration, and either way not a target to
/// probe.
async fn vetted_lookup(
    policy: AddressPolicy,
    name: &str,
    within: Duration,
) -> Result<Vec<IpAddr>, PinFailure> {
    let plain = plain_name(name);
    let addrs: Vec<IpAddr> =
        match tokio::time::timeout(within, tokio::net::lookup_host((plain.as_str(), 0))).await {
            Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect(),
            Ok(Err(e)) => return Err(PinFailure::Resolve(e.to_string())),
            Err(_) => {
                return Err(PinFailure::Resolve(format!(
                    "no answer within {} ms",
                    within.as_millis()
                )));
            }
        };
    for ip in &addrs {
        if let Err(reason) = policy.check(*ip) {
            return Err(PinFailure::Forbidden(format!("{reason} ({ip})")));
        }
    }
    if addrs.is_empty() {
        return Err(PinFailure::Resolve(format!(
            "{plain} resolves to no address"
        )));
    }
    Ok(addrs)
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The certificates of a PEM file (`-----BEGIN CERTIFICATE-----` blocks), as
/// DER, for [`HttpClient::with_extra_roots`]: an operator's internal CA, or
/// the one `protocheck reference mcp --tls --ca-out` writes. A file with no
/// certificate in it is an error, not an empty trust list, so that a wrong
/// path or a key file given by mistake is said at once.
pub fn read_pem_roots(path: &std::path::Path) -> Result<Vec<Vec<u8>>, String> {
    use tokio_rustls::rustls::pki_types::CertificateDer;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    let shown = path.display();
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read the CA certificate {shown}: {e}"))?;
    let roots = CertificateDer::pem_slice_iter(&bytes)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{shown} is not a PEM file of certificates: {e}"))?;
    if roots.is_empty() {
        return Err(format!(
            "{shown} holds no PEM certificate (a `-----BEGIN CERTIFICATE-----` block)"
        ));
    }
    for der in &roots {
        reqwest::Certificate::from_der(der)
            .map_err(|e| format!("{shown}: a certificate that cannot be used: {e}"))?;
    }
    Ok(roots)
}

pub(crate) const USER_AGENT: &str = concat!(
    "protocheck/",
    env!("CARGO_PKG_VERSION"),
    " (conformance checker)"
);

impl HttpClient {
    pub fn new(policy: AddressPolicy, limits: Limits) -> Result<Self, TransportError> {
        Self::build(
            policy,
            limits,
            Arc::default(),
            true,
            None,
            Arc::default(),
            Arc::from(USER_AGENT),
        )
    }

    /// This client for one run that must end by `deadline`: a rate limit the
    /// target answers with is waited out within it (see [`super::throttle`]).
    /// Every client made from this one shares what the run learns of it.
    pub fn for_run(&self, deadline: Instant) -> Self {
        Self {
            throttle: Arc::new(Throttle::new(Some(deadline))),
            ..self.clone()
        }
    }

    /// How the run's target has limited it so far (see [`HttpClient::for_run`]).
    pub fn throttle(&self) -> &Arc<Throttle> {
        &self.throttle
    }

    /// A client that also trusts the CA certificate `ca_der` (DER), as a test
    /// does for a server with a certificate made for it.
    pub fn with_extra_root(
        policy: AddressPolicy,
        limits: Limits,
        ca_der: &[u8],
    ) -> Result<Self, TransportError> {
        Self::with_extra_roots(policy, limits, vec![ca_der.to_vec()])
    }

    /// A client that also trusts `roots` (DER certificates), beside the
    /// built-in roots: targets behind an operator's internal CA
    /// ([`read_pem_roots`] reads them from a PEM file).
    pub fn with_extra_roots(
        policy: AddressPolicy,
        limits: Limits,
        roots: Vec<Vec<u8>>,
    ) -> Result<Self, TransportError> {
        Self::build(
            policy,
            limits,
            Arc::new(roots),
            true,
            None,
            Arc::default(),
            Arc::from(USER_AGENT),
        )
    }

    /// The same configuration on a new connection pool.
    pub fn fresh(&self) -> Result<Self, TransportError> {
        Self::build(
            self.policy,
            (*self.limits).clone(),
            self.extra_roots.clone(),
            self.reuse,
            self.pin.clone(),
            Arc::clone(&self.throttle),
            Arc::clone(&self.user_agent),
        )
    }

    /// The client for a run of many requests against `url`: this one, except
    /// for plain HTTP on this machine (`localhost` or a loopback address),
    /// where each request gets a connection of its own. A kept-alive
    /// connection to a server that writes a response's head and body
    /// separately costs each answer the client kernel's delayed
    /// acknowledgement, about 40 ms (see `quickack`, which protocheck's own
    /// connections use, but the pooled client offers no hook for); a new
    /// loopback connection costs a fraction of a millisecond and starts out
    /// acknowledging at once. Over a network a new connection costs a round
    /// trip (and a TLS handshake), so elsewhere connections are kept.
    pub fn for_target(&self, url: &Url) -> Result<Self, TransportError> {
        let pinned_here = self.pin.as_ref().is_some_and(|pin| {
            pin.is_this_machine() && url.host_str().is_some_and(|h| pin.holds(h))
        });
        if url.scheme() != "http" || !(is_this_machine(url) || pinned_here) {
            return Ok(self.clone());
        }
        Self::build(
            self.policy,
            (*self.limits).clone(),
            self.extra_roots.clone(),
            false,
            self.pin.clone(),
            Arc::clone(&self.throttle),
            Arc::clone(&self.user_agent),
        )
    }

    /// Resolves `url`'s host once, for a run (see [`Pin`]); `None` when the
    /// host is an IP literal (it is its own address) or absent. Of the
    /// addresses the name resolves to, the run keeps those of the first one's
    /// machine (both loopback addresses of `localhost`, say): a run talks to
    /// one machine, the one its limits count.
    pub async fn locate(&self, url: &Url) -> Option<Pin> {
        let Some(url::Host::Domain(name)) = url.host() else {
            return None;
        };
        let answer = vetted_lookup(self.policy, name, self.limits.connect_timeout)
            .await
            .map(|ips| {
                let first = ips.first().map(|ip| super::machine_of(*ip));
                let mut kept: Vec<IpAddr> = Vec::new();
                for ip in ips {
                    if Some(super::machine_of(ip)) == first && !kept.contains(&ip) {
                        kept.push(ip);
                    }
                }
                kept
            });
        Some(Pin {
            name: plain_name(name),
            answer,
        })
    }

    /// This client, connecting `pin`'s name to its addresses alone.
    pub fn pinned(&self, pin: Pin) -> Result<Self, TransportError> {
        Self::build(
            self.policy,
            (*self.limits).clone(),
            self.extra_roots.clone(),
            self.reuse,
            Some(Arc::new(pin)),
            Arc::clone(&self.throttle),
            Arc::clone(&self.user_agent),
        )
    }

    /// The addresses a connection to `host`:`port` may use: the pinned ones
    /// for the pinned name, else a lookup the policy vets (one forbidden
    /// address refuses the name, as in the pooled client's resolver).
    pub(crate) async fn addresses(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, TransportError> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            self.policy
                .check(ip)
                .map_err(|reason| TransportError::Forbidden {
                    host: host.to_owned(),
                    reason: format!("{reason} ({ip})"),
                })?;
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let answer = match self.pin.as_deref().filter(|pin| pin.holds(host)) {
            Some(pin) => pin.answer.clone(),
            None => vetted_lookup(self.policy, host, self.limits.connect_timeout).await,
        };
        match answer {
            Ok(ips) => Ok(ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect()),
            Err(PinFailure::Resolve(detail)) => Err(TransportError::Resolve {
                host: host.to_owned(),
                detail,
            }),
            Err(PinFailure::Forbidden(reason)) => Err(TransportError::Forbidden {
                host: host.to_owned(),
                reason,
            }),
        }
    }

    /// Whether connections are kept for later requests.
    pub fn reuses_connections(&self) -> bool {
        self.reuse
    }

    fn build(
        policy: AddressPolicy,
        limits: Limits,
        extra_roots: Arc<Vec<Vec<u8>>>,
        reuse: bool,
        pin: Option<Arc<Pin>>,
        throttle: Arc<Throttle>,
        user_agent: Arc<str>,
    ) -> Result<Self, TransportError> {
        let mut builder = reqwest::Client::builder();
        for der in extra_roots.iter() {
            let cert = reqwest::Certificate::from_der(der)
                .map_err(|e| TransportError::Io(format!("cannot read the extra root: {e}")))?;
            builder = builder.add_root_certificate(cert);
        }
        let inner = builder
            // A redirect is evidence about the target, never an instruction to follow.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect on our behalf to an address the guard never saw.
            .no_proxy()
            .connect_timeout(limits.connect_timeout)
            .dns_resolver(Arc::new(GuardedResolver {
                policy,
                pin: pin.clone(),
                within: limits.connect_timeout,
            }))
            .user_agent(&*user_agent)
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(if reuse { usize::MAX } else { 0 })
            .build()
            .map_err(|e| TransportError::Io(format!("cannot build HTTP client: {e}")))?;
        Ok(Self {
            inner,
            policy,
            limits: Arc::new(limits),
            extra_roots,
            reuse,
            pin,
            throttle,
            user_agent,
        })
    }

    /// The same configuration sending `user_agent` as its User-Agent (the
    /// directory's runs name the service and its contact), on a new
    /// connection pool. A request that sets its own keeps it.
    pub fn with_user_agent(&self, user_agent: &str) -> Result<Self, TransportError> {
        Self::build(
            self.policy,
            (*self.limits).clone(),
            self.extra_roots.clone(),
            self.reuse,
            self.pin.clone(),
            Arc::clone(&self.throttle),
            Arc::from(user_agent),
        )
    }

    /// The User-Agent its requests send.
    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }

    /// The same configuration under `policy`, on a new connection pool.
    pub fn with_policy(&self, policy: AddressPolicy) -> Result<Self, TransportError> {
        Self::build(
            policy,
            (*self.limits).clone(),
            self.extra_roots.clone(),
            self.reuse,
            self.pin.clone(),
            Arc::clone(&self.throttle),
            Arc::clone(&self.user_agent),
        )
    }

    pub fn policy(&self) -> AddressPolicy {
        self.policy
    }

    /// The extra CA certificate (DER) trusted beside the built-in roots, if any.
    pub(crate) fn extra_roots(&self) -> &[Vec<u8>] {
        &self.extra_roots
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Refuses a URL whose host is an IP literal the policy forbids. Names are
    /// checked by the resolver, at connect time.
    fn check_literal(&self, url: &Url) -> Result<(), TransportError> {
        let ip: Option<IpAddr> = match url.host() {
            Some(url::Host::Ipv4(v4)) => Some(v4.into()),
            Some(url::Host::Ipv6(v6)) => Some(v6.into()),
            Some(url::Host::Domain(_)) => None,
            None => {
                return Err(TransportError::Protocol(format!("URL {url} has no host")));
            }
        };
        if let Some(ip) = ip {
            self.policy
                .check(ip)
                .map_err(|reason| TransportError::Forbidden {
                    host: ip.to_string(),
                    reason: reason.to_owned(),
                })?;
        }
        Ok(())
    }

    async fn start(&self, req: &HttpRequest) -> Result<reqwest::Response, TransportError> {
        self.check_literal(&req.url)?;
        let mut builder = self.inner.request(req.method.clone(), req.url.clone());
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &req.body {
            builder = builder.body(body.clone());
        }
        builder
            .send()
            .await
            .map_err(|e| map_reqwest(&req.url, e, self.limits.connect_timeout))
    }

    /// Sends `req` and reads the whole body, within the request timeout and
    /// the size cap. An answer of the target's rate limiter is waited out and
    /// the request sent again (see [`super::throttle`]): every request of a
    /// run goes through here or [`HttpClient::send_streaming`].
    pub async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        loop {
            let place = self.throttle.place().await;
            let resp = self.send_once(req).await?;
            drop(place);
            match self
                .throttle
                .judge(resp.status, resp.header("retry-after"))?
            {
                Verdict::Answer => return Ok(resp),
                Verdict::Retry(wait) => tokio::time::sleep(wait).await,
            }
        }
    }

    async fn send_once(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let timeout = req.timeout.unwrap_or(self.limits.request_timeout);
        let started = Instant::now();
        let work = async {
            let mut resp = self.start(req).await?;
            let status = resp.status().as_u16();
            let headers = std::mem::take(resp.headers_mut());
            let limit = self.limits.max_body_bytes;
            if resp.content_length().is_some_and(|n| n > limit as u64) {
                return Err(TransportError::TooLarge { limit });
            }
            let mut body = BytesMut::new();
            let connect_timeout = self.limits.connect_timeout;
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| map_reqwest(&req.url, e, connect_timeout))?
            {
                if body.len() + chunk.len() > limit {
                    return Err(TransportError::TooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(HttpResponse {
                status,
                headers,
                body: body.freeze(),
                elapsed: started.elapsed(),
            })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| TransportError::Timeout(timeout))?
    }

    /// Sends `req` and returns the body as a stream; the caller bounds it (see [`super::sse`]).
    /// The request timeout covers only the wait for the response head (an
    /// answer of the rate limiter is waited out, as in [`HttpClient::send`]).
    pub async fn send_streaming(
        &self,
        req: &HttpRequest,
    ) -> Result<StreamingResponse, TransportError> {
        let timeout = req.timeout.unwrap_or(self.limits.request_timeout);
        let (started, mut resp) = loop {
            let place = self.throttle.place().await;
            let started = Instant::now();
            let resp = tokio::time::timeout(timeout, self.start(req))
                .await
                .map_err(|_| TransportError::Timeout(timeout))??;
            drop(place);
            let retry = resp
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok());
            match self.throttle.judge(resp.status().as_u16(), retry)? {
                Verdict::Answer => break (started, resp),
                Verdict::Retry(wait) => {
                    drop(resp);
                    tokio::time::sleep(wait).await;
                }
            }
        };
        let status = resp.status().as_u16();
        let headers = std::mem::take(resp.headers_mut());
        let url = req.url.clone();
        let connect_timeout = self.limits.connect_timeout;
        let body = resp
            .bytes_stream()
            .map(move |r| r.map_err(|e| map_reqwest(&url, e, connect_timeout)))
            .boxed();
        Ok(StreamingResponse {
            status,
            headers,
            body,
            started,
        })
    }

    /// Sends `req` and returns the exchange as evidence together with the result.
    pub async fn exchange(
        &self,
        req: &HttpRequest,
    ) -> (Exchange, Result<HttpResponse, TransportError>) {
        let result = self.send(req).await;
        let max = self.limits.evidence_bytes;
        let exchange = Exchange {
            request: req.record(max),
            response: result.as_ref().ok().map(|r| r.record(max)),
            error: result.as_ref().err().map(ToString::to_string),
        };
        (exchange, result)
    }
}

/// Set by the resolver when the guard refuses a name, found again in reqwest's error chain.
#[derive(Debug)]
struct GuardRefusal {
    host: String,
    reason: String,
}

impl std::fmt::Display for GuardRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} resolves to a {}", self.host, self.reason)
    }
}

impl std::error::Error for GuardRefusal {}

/// Set by the resolver when a name does not resolve, found again in reqwest's error chain.
#[derive(Debug)]
struct ResolveFailure {
    detail: String,
}

impl std::fmt::Display for ResolveFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for ResolveFailure {}

/// Resolves names with the system resolver and refuses the name when any address
/// it resolves to is forbidden (see [`vetted_lookup`]); the pinned name gets
/// its pinned answer.
struct GuardedResolver {
    policy: AddressPolicy,
    pin: Option<Arc<Pin>>,
    /// How long a lookup may take.
    within: Duration,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let pin = self.pin.clone();
        let within = self.within;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let ips =
                match pin.as_deref().filter(|pin| pin.holds(&host)) {
                    Some(pin) => pin.answer()?,
                    // Failures are wrapped in types of ours: the io::Error's kind
                    // is not a reliable sign of a lookup failure (std reports it
                    // as `Uncategorized`), and reqwest's wrapping is no better.
                    None => vetted_lookup(policy, &host, within).await.map_err(
                        |failure| -> BoxError {
                            match failure {
                                PinFailure::Resolve(detail) => Box::new(ResolveFailure { detail }),
                                PinFailure::Forbidden(reason) => {
                                    Box::new(GuardRefusal { host, reason })
                                }
                            }
                        },
                    )?,
                };
            let addrs: Vec<SocketAddr> = ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            let iter: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(iter)
        })
    }
}

/// `connect_timeout` is the only timeout reqwest itself enforces (the others are
/// ours, around the whole exchange), so a reqwest timeout is that one.
fn map_reqwest(url: &Url, err: reqwest::Error, connect_timeout: Duration) -> TransportError {
    let host = url.host_str().unwrap_or_default().to_owned();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<GuardRefusal>() {
            return TransportError::Forbidden {
                host,
                reason: refusal.to_string(),
            };
        }
        if let Some(failure) = e.downcast_ref::<ResolveFailure>() {
            return TransportError::Resolve {
                host,
                detail: failure.detail.clone(),
            };
        }
        source = e.source();
    }
    if err.is_timeout() {
        TransportError::Timeout(connect_timeout)
    } else if err.is_connect() {
        TransportError::Connect(chain(&err))
    } else {
        TransportError::Io(chain(&err))
    }
}

/// The error and its causes on one line, as people read them in a finding.
fn chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = e.source();
    }
    out
}

/// Whether `url` names this machine: `localhost` (or a name under it) or a
/// loopback address.
fn is_this_machine(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolver that fails every lookup, so no packet leaves the machine.
    struct FailingResolver;

    impl reqwest::dns::Resolve for FailingResolver {
        fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
            Box::pin(async {
                let failure = ResolveFailure {
                    detail: "no such name".into(),
                };
                Err(Box::new(failure) as Box<dyn std::error::Error + Send + Sync>)
            })
        }
    }

    #[tokio::test]
    async fn resolver_failure_maps_to_resolve() {
        let client = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(FailingResolver))
            .build()
            .expect("client");
        let url: Url = "http://nowhere.test/".parse().expect("url");
        let err = client
            .get(url.clone())
            .send()
            .await
            .expect_err("lookup fails");
        assert_eq!(
            map_reqwest(&url, err, Duration::from_secs(1)),
            TransportError::Resolve {
                host: "nowhere.test".into(),
                detail: "no such name".into()
            }
        );
    }

    #[test]
    fn credentials_in_the_url_are_redacted_from_evidence() {
        let url: Url = "http://user:hunter2@example.test/x?q=1"
            .parse()
            .expect("url");
        let line = HttpRequest::get(url).record(100).line;
        assert_eq!(line, "GET http://redacted:redacted@example.test/x?q=1");
        let url: Url = "http://token@example.test/".parse().expect("url");
        assert_eq!(
            HttpRequest::get(url).record(100).line,
            "GET http://redacted@example.test/"
        );
        let url: Url = "http://example.test/".parse().expect("url");
        assert_eq!(
            HttpRequest::get(url).record(100).line,
            "GET http://example.test/"
        );
    }

    #[test]
    fn only_plain_http_on_this_machine_gets_a_connection_per_request() {
        let client = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default())
            .unwrap_or_else(|e| panic!("client: {e}"));
        let reuse = |u: &str| {
            let url = Url::parse(u).unwrap_or_else(|e| panic!("{u}: {e}"));
            client
                .for_target(&url)
                .unwrap_or_else(|e| panic!("{u}: {e}"))
                .reuses_connections()
        };
        for near in [
            "http://127.0.0.1:8000/mcp",
            "http://127.3.4.5/mcp",
            "http://[::1]:9/mcp",
            "http://localhost:8000/mcp",
            "http://LocalHost./mcp",
            "http://api.localhost/mcp",
        ] {
            assert!(!reuse(near), "{near}");
        }
        for far in [
            "https://127.0.0.1/mcp",
            "https://localhost/mcp",
            "http://example.com/mcp",
            "http://10.0.0.1/mcp",
            "http://localhost.example.com/mcp",
        ] {
            assert!(reuse(far), "{far}");
        }
    }
}
