//! One HTTP/1.1 connection written byte for byte: for the probes that need
//! control no pooled client gives, namely header names spelled exactly as the
//! probe says (hyper lower-cases them) and several requests that must travel
//! on one and the same connection (a pool may open another at any time).
//!
//! The same guards as [`super::HttpClient`]: the address policy is checked on
//! every address a name resolves to before connecting, TLS verifies the chain
//! against the same roots, and every exchange is bounded in time (the
//! request timeout) and size (`max_body_bytes`, a 64 KiB head).

use super::quickack::QuickAck;
use super::{HttpClient, TransportError};
use bytes::{Buf, Bytes, BytesMut};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_rustls::rustls;
use url::Url;

/// Largest response head read.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most response headers parsed.
const MAX_HEADERS: usize = 100;
/// How long the end of an event stream is awaited once its answer is in: the
/// final response SHOULD terminate the stream (streamable-http, "Receiving
/// Messages"); the pooled MCP client grants the same.
pub const STREAM_END_GRACE: Duration = Duration::from_millis(1500);

trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// One request: header names are sent exactly as given.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

/// One response, read whole within bounds.
#[derive(Debug, Clone)]
pub struct RawResponse {
    pub status: u16,
    /// Names lower-cased, values as text (lossy).
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub elapsed: Duration,
    /// The body was cut where the caller's `enough` said so: the stream was
    /// still open, and the connection cannot be used again.
    pub cut: bool,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A dedicated connection to the target. Requests on it go one after the
/// other on the same TCP connection, or fail: it never reconnects.
pub struct RawConnection {
    stream: Box<dyn Stream>,
    buf: BytesMut,
    local: SocketAddr,
    peer: SocketAddr,
    host_header: String,
    path: String,
    timeout: Duration,
    max_body: usize,
    /// Set once the connection cannot carry another request.
    closed: Option<String>,
    /// Requests sent on it so far.
    pub requests: usize,
    /// Requests answered on it so far.
    pub answered: usize,
    /// Whether any byte came back since the last request was written: a
    /// kept connection the server closed while it was idle fails its next
    /// request with nothing read, and that request never reached a handler.
    answer_started: bool,
    /// The run's answer to its target's rate limit (see [`super::throttle`]).
    throttle: Arc<super::throttle::Throttle>,
}

impl std::fmt::Debug for RawConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawConnection")
            .field("local", &self.local)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

fn io(err: std::io::Error) -> TransportError {
    TransportError::Io(err.to_string())
}

impl RawConnection {
    /// Opens a connection to `url`'s host through `client`'s address policy,
    /// with TLS for `https` (HTTP/1.1 only, by ALPN).
    pub async fn open(client: &HttpClient, url: &Url) -> Result<Self, TransportError> {
        let limits = client.limits().clone();
        let host = url
            .host_str()
            .ok_or_else(|| TransportError::Protocol(format!("URL {url} has no host")))?
            .to_owned();
        let port = url
            .port_or_known_default()
            .ok_or_else(|| TransportError::Protocol(format!("URL {url} has no port")))?;
        let lookup = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        // The run's pinned addresses for its target's name; a vetted lookup else.
        let addrs = client.addresses(&lookup, port).await?;
        let mut last = TransportError::Connect(format!("{host} resolves to no address"));
        let mut tcp = None;
        for addr in addrs {
            match tokio::time::timeout(limits.connect_timeout, tokio::net::TcpStream::connect(addr))
                .await
            {
                Ok(Ok(stream)) => {
                    tcp = Some(stream);
                    break;
                }
                Ok(Err(e)) => last = TransportError::Connect(e.to_string()),
                Err(_) => last = TransportError::Timeout(limits.connect_timeout),
            }
        }
        let tcp = tcp.ok_or(last)?;
        let _ = tcp.set_nodelay(true);
        let local = tcp.local_addr().map_err(io)?;
        let peer = tcp.peer_addr().map_err(io)?;
        // Requests follow one another on this connection: see `quickack`.
        let tcp = QuickAck::new(tcp);
        let stream: Box<dyn Stream> = if url.scheme() == "https" {
            let config = tls_config(client.extra_roots())?;
            let name = rustls::pki_types::ServerName::try_from(lookup.clone())
                .map_err(|e| TransportError::Protocol(format!("bad TLS server name: {e}")))?;
            let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
            let tls = tokio::time::timeout(limits.connect_timeout, connector.connect(name, tcp))
                .await
                .map_err(|_| TransportError::Timeout(limits.connect_timeout))?
                .map_err(|e| TransportError::Connect(format!("TLS: {e}")))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Self {
            stream,
            buf: BytesMut::new(),
            local,
            peer,
            host_header,
            path,
            timeout: limits.request_timeout,
            max_body: limits.max_body_bytes,
            closed: None,
            requests: 0,
            answered: 0,
            answer_started: false,
            throttle: Arc::clone(client.throttle()),
        })
    }

    /// Our end of the connection: the same on every request, by construction.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// Why the connection cannot carry another request, once it cannot.
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// `Host` as sent.
    pub fn host(&self) -> &str {
        &self.host_header
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// How long each later exchange may take (the request timeout by default).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Whether the last request got any byte back before it ended, well or not.
    pub fn answer_started(&self) -> bool {
        self.answer_started
    }

    /// Sends `req` and reads the answer. `enough` is asked after each piece of
    /// an event-stream body whether what was read so far suffices (the final
    /// JSON-RPC message arrived); the rest is then not waited for, and the
    /// connection is closed, since it still carries that stream.
    pub async fn send(
        &mut self,
        req: &RawRequest,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<RawResponse, TransportError> {
        let path = self.path.clone();
        self.send_to(&path, req, enough).await
    }

    /// [`send`](Self::send) to another path of the same origin (`path` with
    /// its query, as the request line carries it). An answer of the target's
    /// rate limiter is waited out and the request sent again on this
    /// connection (see [`super::throttle`]); when the limiter closed it, the
    /// request fails as rate limited rather than be judged by that answer.
    pub async fn send_to(
        &mut self,
        path: &str,
        req: &RawRequest,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<RawResponse, TransportError> {
        let throttle = Arc::clone(&self.throttle);
        loop {
            let place = throttle.place().await;
            let resp = self.send_once(path, req, enough).await?;
            drop(place);
            match throttle.judge(resp.status, resp.header("retry-after"))? {
                super::throttle::Verdict::Answer => return Ok(resp),
                super::throttle::Verdict::Retry(wait) => {
                    if self.closed.is_some() {
                        return Err(TransportError::RateLimited {
                            status: resp.status,
                            wait_s: wait.as_secs(),
                            detail: "and closed the connection the request was to travel on"
                                .to_owned(),
                            resend_after: Some(wait),
                        });
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn send_once(
        &mut self,
        path: &str,
        req: &RawRequest,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<RawResponse, TransportError> {
        if path.contains(['\r', '\n', ' ']) {
            return Err(TransportError::Protocol(format!(
                "the path {path:?} cannot be written"
            )));
        }
        if let Some(why) = &self.closed {
            return Err(TransportError::Io(format!(
                "the connection can carry no more requests: {why}"
            )));
        }
        self.requests += 1;
        self.answer_started = false;
        let timeout = self.timeout;
        let started = Instant::now();
        let result = tokio::time::timeout(timeout, self.exchange(path, req, enough, started))
            .await
            .unwrap_or(Err(TransportError::Timeout(timeout)));
        match &result {
            Ok(_) => self.answered += 1,
            Err(e) => self.closed = Some(e.to_string()),
        }
        result
    }

    async fn exchange(
        &mut self,
        path: &str,
        req: &RawRequest,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
        started: Instant,
    ) -> Result<RawResponse, TransportError> {
        let mut head = format!("{} {} HTTP/1.1\r\n", req.method, path);
        let has = |name: &str| {
            req.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        if !has("host") {
            head.push_str(&format!("Host: {}\r\n", self.host_header));
        }
        for (name, value) in &req.headers {
            // A name or value with CR/LF would split the request: never sent.
            if name.contains(['\r', '\n', ':']) || value.contains(['\r', '\n']) {
                return Err(TransportError::Protocol(format!(
                    "header {name:?} cannot be written"
                )));
            }
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !has("content-length") {
            head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
        }
        head.push_str("\r\n");
        let mut out = Vec::with_capacity(head.len() + req.body.len());
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(&req.body);
        self.stream.write_all(&out).await.map_err(io)?;
        self.stream.flush().await.map_err(io)?;

        let (status, headers) = loop {
            let (status, headers) = self.read_head().await?;
            // Interim answers (100 Continue, 103) precede the real one.
            if !(100..200).contains(&status) {
                break (status, headers);
            }
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let chunked = header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let length = header("content-length").and_then(|v| v.trim().parse::<usize>().ok());
        let close = header("connection").is_some_and(|v| v.contains("close"));
        let stream = header("content-type").is_some_and(|v| v.contains("text/event-stream"));
        let never_body = status == 204 || status == 304 || req.method == "HEAD";
        let mut body = BytesMut::new();
        let mut cut = false;
        if never_body {
        } else if chunked {
            cut = self.read_chunked(&mut body, stream, enough).await?;
        } else if let Some(n) = length {
            if n > self.max_body {
                return Err(TransportError::TooLarge {
                    limit: self.max_body,
                });
            }
            self.fill(n).await?;
            body.extend_from_slice(&self.buf.split_to(n));
        } else {
            // Delimited by the end of the connection.
            cut = self.read_to_end(&mut body, stream, enough).await?;
            self.closed = Some("the server ended the body by closing the connection".into());
        }
        if close {
            self.closed = Some("the server answered `Connection: close`".into());
        } else if cut {
            self.closed = Some("an event stream was left open by the server".into());
        }
        Ok(RawResponse {
            status,
            headers,
            body: body.freeze(),
            elapsed: started.elapsed(),
            cut,
        })
    }

    /// Reads more bytes into the buffer; an error at the end of the stream.
    async fn more(&mut self) -> Result<(), TransportError> {
        let mut chunk = [0u8; 8192];
        let n = self.stream.read(&mut chunk).await.map_err(io)?;
        if n == 0 {
            self.closed = Some("the server closed the connection".into());
            return Err(TransportError::Io(
                "the server closed the connection".into(),
            ));
        }
        self.answer_started = true;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    async fn fill(&mut self, n: usize) -> Result<(), TransportError> {
        while self.buf.len() < n {
            self.more().await?;
        }
        Ok(())
    }

    /// The status and headers of the next response head; an HTTP/1.0 answer
    /// without `Connection: keep-alive` gets `connection: close` added, for
    /// that is what it means.
    async fn read_head(&mut self) -> Result<(u16, Vec<(String, String)>), TransportError> {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let raw = self.buf.split_to(end + 4);
                let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
                let mut parsed = httparse::Response::new(&mut slots);
                parsed
                    .parse(&raw)
                    .map_err(|e| TransportError::Protocol(format!("bad response head: {e}")))?;
                let status = parsed
                    .code
                    .ok_or_else(|| TransportError::Protocol("response without status".into()))?;
                let mut headers: Vec<(String, String)> = parsed
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_ascii_lowercase(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                let keep_alive = headers.iter().any(|(n, v)| {
                    n == "connection" && v.to_ascii_lowercase().contains("keep-alive")
                });
                if parsed.version == Some(0) && !keep_alive {
                    headers.push(("connection".into(), "close".into()));
                }
                return Ok((status, headers));
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(TransportError::TooLarge {
                    limit: MAX_HEAD_BYTES,
                });
            }
            self.more().await?;
        }
    }

    async fn read_line(&mut self) -> Result<Bytes, TransportError> {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n") {
                let line = self.buf.split_to(end).freeze();
                self.buf.advance(2);
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(TransportError::Protocol("chunk line too long".into()));
            }
            self.more().await?;
        }
    }

    /// Decodes a chunked body; `Ok(true)` when it was cut by `enough`. Once
    /// `enough` is satisfied, the end of the stream is awaited for
    /// [`STREAM_END_GRACE`] at most: a stream that ends with its answer (as it
    /// SHOULD) leaves the connection usable, one kept open does not.
    async fn read_chunked(
        &mut self,
        body: &mut BytesMut,
        stream: bool,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<bool, TransportError> {
        loop {
            if stream && enough(body) {
                let rest = async {
                    while self.read_chunk(body).await? {}
                    Ok::<(), TransportError>(())
                };
                return Ok(!matches!(
                    tokio::time::timeout(STREAM_END_GRACE, rest).await,
                    Ok(Ok(()))
                ));
            }
            if !self.read_chunk(body).await? {
                return Ok(false);
            }
        }
    }

    /// Reads one chunk into `body`; `false` at the last (empty) chunk.
    async fn read_chunk(&mut self, body: &mut BytesMut) -> Result<bool, TransportError> {
        let line = self.read_line().await?;
        let text = String::from_utf8_lossy(&line);
        let size_text = text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| TransportError::Protocol(format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, then the blank line.
            while !self.read_line().await?.is_empty() {}
            return Ok(false);
        }
        if body.len() + size > self.max_body {
            return Err(TransportError::TooLarge {
                limit: self.max_body,
            });
        }
        self.fill(size + 2).await?;
        body.extend_from_slice(&self.buf.split_to(size));
        self.buf.advance(2);
        Ok(true)
    }

    async fn read_to_end(
        &mut self,
        body: &mut BytesMut,
        stream: bool,
        enough: &(dyn Fn(&[u8]) -> bool + Sync),
    ) -> Result<bool, TransportError> {
        loop {
            body.extend_from_slice(&self.buf.split());
            if body.len() > self.max_body {
                return Err(TransportError::TooLarge {
                    limit: self.max_body,
                });
            }
            if stream && enough(body) {
                return Ok(true);
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await.map_err(io)?;
            if n == 0 {
                return Ok(false);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The TLS configuration of the pooled client: the built-in roots, plus the
/// extra roots an operator or a test gave; HTTP/1.1 only.
fn tls_config(extra_roots: &[Vec<u8>]) -> Result<rustls::ClientConfig, TransportError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for der in extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| TransportError::Io(format!("cannot read the extra root: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Io(format!("TLS configuration: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{AddressPolicy, Limits};

    #[tokio::test]
    async fn the_address_policy_guards_dedicated_connections_too() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let url: Url = format!("http://{addr}/mcp")
            .parse()
            .unwrap_or_else(|e| panic!("url: {e}"));
        let public = HttpClient::new(AddressPolicy::PublicOnly, Limits::default())
            .unwrap_or_else(|e| panic!("client: {e}"));
        let refused = RawConnection::open(&public, &url).await;
        assert!(
            matches!(refused, Err(TransportError::Forbidden { .. })),
            "{refused:?}"
        );
        let private = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default())
            .unwrap_or_else(|e| panic!("client: {e}"));
        let server = tokio::spawn(async move {
            // Two answers on one connection, one chunked, then the end.
            let (mut tcp, _) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            let mut answered = 0;
            while answered < 2 {
                let n = tcp.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                while let Some(end) = find(&seen, b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&seen[..end]).into_owned();
                    seen.drain(..end + 4);
                    assert!(head.contains("\r\nMcp-Method: x"), "{head}");
                    let answer: &[u8] = if answered == 0 {
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"
                    } else {
                        // An event stream whose answer is in its first chunk
                        // and which then ends, as it should.
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n1\r\n[\r\n1\r\n]\r\n0\r\n\r\n"
                    };
                    let _ = tcp.write_all(answer).await;
                    answered += 1;
                }
            }
        });
        let mut conn = RawConnection::open(&private, &url)
            .await
            .unwrap_or_else(|e| panic!("open: {e}"));
        let req = RawRequest {
            method: "POST",
            headers: vec![("Mcp-Method".into(), "x".into())],
            body: Bytes::new(),
        };
        let never = |_: &[u8]| false;
        let first = conn
            .send(&req, &never)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((first.status, &first.body[..]), (200, &b"{}"[..]));
        // `enough` at once: the rest of the stream is still read, since it ends.
        let at_once = |_: &[u8]| true;
        let second = conn
            .send(&req, &at_once)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&second.body[..], b"[]");
        assert!(
            !second.cut,
            "the stream ended, so the connection stays usable"
        );
        assert_eq!(conn.requests, 2);
        assert!(conn.closed().is_none());
        let _ = server.await;
        // A header that would split the request is never written.
        let bad = RawRequest {
            method: "POST",
            headers: vec![("X".into(), "a\r\nInjected: 1".into())],
            body: Bytes::new(),
        };
        assert!(matches!(
            conn.send(&bad, &never).await,
            Err(TransportError::Protocol(_))
        ));
    }
}
