//! Outbound traffic to targets. Every byte from a target is hostile input: the
//! transport bounds time, bytes, redirects and streams, and refuses addresses the
//! [`AddressPolicy`] forbids at connect time.

pub mod evidence;
pub mod guard;
pub mod http;
pub mod quickack;
pub mod raw;
pub mod sse;
pub mod stdio;
pub mod throttle;

use std::time::Duration;

pub use guard::{AddressPolicy, machine_of, machine_of_host};
pub use http::{
    HttpClient, HttpRequest, HttpResponse, Pin, StreamingResponse, read_pem_roots, resolve_machine,
};

/// Bounds on everything a target can make protocheck wait for or hold in memory.
#[derive(Debug, Clone)]
pub struct Limits {
    pub connect_timeout: Duration,
    /// Default time for one request, from sending to the last byte of the body.
    pub request_timeout: Duration,
    /// Largest response body read; a larger one is an error, never buffered whole.
    pub max_body_bytes: usize,
    /// Largest single server-sent event (all its `data:` lines together).
    pub sse_max_frame_bytes: usize,
    /// Longest time an event stream is read before it is cut.
    pub sse_max_duration: Duration,
    /// Most events read from one stream.
    pub sse_max_events: usize,
    /// Longest line read from a stdio child.
    pub stdio_max_line_bytes: usize,
    /// Size of the body excerpt kept as evidence.
    pub evidence_bytes: usize,
}

/// Default response size cap: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Default cap on one answer of a target under test (`check`, `serve` and
/// `worker` read up to this unless told otherwise): 16 MiB. Real results are
/// large: an MCP Apps `resources/read` returns an HTML bundle of megabytes
/// (one of 1.36 MB was seen on a published server), and an answer protocheck
/// stops reading is a finding it cannot judge, never the server's fault.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sse_max_frame_bytes: 256 * 1024,
            sse_max_duration: Duration::from_secs(30),
            sse_max_events: 1000,
            stdio_max_line_bytes: DEFAULT_MAX_BODY_BYTES,
            evidence_bytes: 4096,
        }
    }
}

impl Limits {
    /// These limits with every cap on one answer of a target set to `bytes`:
    /// an HTTP body, one server-sent event (which carries one whole message)
    /// and one stdio line.
    pub fn with_max_answer_bytes(self, bytes: usize) -> Self {
        Self {
            max_body_bytes: bytes,
            sse_max_frame_bytes: bytes,
            stdio_max_line_bytes: bytes,
            ..self
        }
    }
}

/// Why talking to a target failed. Messages are shown in findings and run errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    #[error("refused to connect to {host}: {reason}")]
    Forbidden { host: String, reason: String },
    #[error("could not resolve {host}: {detail}")]
    Resolve { host: String, detail: String },
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("no complete response within {0:?}")]
    Timeout(Duration),
    #[error("response body exceeds the {limit}-byte limit")]
    TooLarge { limit: usize },
    #[error("{0}")]
    Protocol(String),
    #[error("{0}")]
    Io(String),
    /// The target's rate limiter answered the request (see [`throttle`]) and
    /// it could not be sent again: the server never answered it.
    #[error(
        "rate limited: the target answered HTTP {status} with Retry-After {wait_s} s, {detail}"
    )]
    RateLimited {
        status: u16,
        wait_s: u64,
        detail: String,
        /// Set when the wait fits the run but the limiter closed the
        /// connection the request was on: a caller that may open another
        /// sends it again after this wait.
        resend_after: Option<Duration>,
    },
}

impl TransportError {
    /// Whether trying again later could succeed (the target was down or slow),
    /// as opposed to a refusal that will stay a refusal.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Connect(_) | Self::Timeout(_) | Self::Resolve { .. } | Self::Io(_)
        )
    }
}

/// Header names whose values are never kept in evidence.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
];

/// Redacts credentials from a header list kept as evidence.
pub fn redact_headers<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Vec<(String, String)> {
    headers
        .into_iter()
        .map(|(name, value)| {
            let lower = name.to_ascii_lowercase();
            let shown = if lower == "authorization" || lower == "proxy-authorization" {
                redact_credentials(value)
            } else if SECRET_HEADERS.contains(&lower.as_str()) {
                "[redacted]".to_owned()
            } else {
                excerpt(value, 512).0
            };
            (lower, shown)
        })
        .collect()
}

/// An `Authorization` value as evidence shows it: its scheme, which is a fact
/// about the request (`Bearer ‹redacted›`), and never the credentials.
fn redact_credentials(value: &[u8]) -> String {
    let scheme = value.split(|&b| b == b' ').next().unwrap_or_default();
    if value.len() > scheme.len()
        && (1..=20).contains(&scheme.len())
        && scheme.iter().all(u8::is_ascii_alphabetic)
    {
        format!("{} ‹redacted›", String::from_utf8_lossy(scheme))
    } else {
        "‹redacted›".to_owned()
    }
}

/// A UTF-8 (lossy) excerpt of at most `max` bytes, and whether it was cut.
pub fn excerpt(bytes: &[u8], max: usize) -> (String, bool) {
    if bytes.len() <= max {
        return (String::from_utf8_lossy(bytes).into_owned(), false);
    }
    let mut cut = max;
    // Do not split a UTF-8 sequence: back up to a char boundary when the input is
    // text. A sequence has at most three continuation bytes, so never back up
    // further: binary input full of 0x80..=0xBF bytes would otherwise shrink the
    // excerpt to nothing.
    while cut > 0 && max - cut < 3 && (bytes[cut] & 0b1100_0000) == 0b1000_0000 {
        cut -= 1;
    }
    (String::from_utf8_lossy(&bytes[..cut]).into_owned(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_keeps_utf8_sequences_whole() {
        // "é" is two bytes; a cut inside it backs up before it.
        assert_eq!(excerpt("aé".as_bytes(), 2), ("a".to_owned(), true));
        assert_eq!(excerpt("a😀".as_bytes(), 4), ("a".to_owned(), true));
        assert_eq!(excerpt(b"abc", 3), ("abc".to_owned(), false));
    }

    #[test]
    fn excerpt_of_binary_is_not_emptied() {
        // Bytes that all look like UTF-8 continuations: at most three are given up.
        let (text, cut) = excerpt(&[0x80; 100], 10);
        assert!(cut);
        assert_eq!(text.chars().count(), 7, "{text:?}");
    }

    #[test]
    fn secret_headers_are_redacted() {
        let shown = redact_headers([
            ("Authorization", &b"Bearer s3cret"[..]),
            ("Accept", b"*/*"),
            ("Cookie", b"a=s3cret"),
            ("Proxy-Authorization", b"s3cret"),
        ]);
        assert_eq!(
            shown,
            [
                ("authorization".to_owned(), "Bearer ‹redacted›".to_owned()),
                ("accept".to_owned(), "*/*".to_owned()),
                ("cookie".to_owned(), "[redacted]".to_owned()),
                ("proxy-authorization".to_owned(), "‹redacted›".to_owned()),
            ]
        );
    }
}
