//! What comes back: the [`Reply`] to one probe, the [`Seen`] record of it
//! that the run-wide rules judge, the [`BareReply`] to a GET or DELETE, and
//! the helpers that keep texts from a target short in a finding.

use super::probe::{Intent, Probe};
use crate::suite::Exchange;
use crate::suite::mcp::wire;
use crate::transport::TransportError;
use serde_json::{Value, json};

/// Most SSE event ids kept from one stream ([`Reply::event_ids`]).
pub const MAX_EVENT_IDS: usize = 64;

/// What came back for one probe.
#[derive(Debug, Clone)]
pub struct Reply {
    pub method: String,
    /// The intent of the probe this answers.
    pub intent: Intent,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub sse: bool,
    /// The final JSON-RPC message (the body, or the SSE frame answering the id).
    pub message: Option<Value>,
    /// Notifications received on the SSE stream before the final message.
    pub notifications: Vec<Value>,
    /// JSON-RPC requests the server sent on the stream (never allowed).
    pub server_requests: Vec<Value>,
    /// Frames after the final message, or with another id.
    pub stray_frames: Vec<Value>,
    /// The `id:` fields of the SSE events read, in order (at most
    /// [`MAX_EVENT_IDS`], each clipped): what a client resuming the stream
    /// would send back as `Last-Event-ID`.
    pub event_ids: Vec<String>,
    /// `Some(true)` when an SSE stream ended after the final message.
    pub terminated: Option<bool>,
    pub accel_buffering: Option<String>,
    pub session_id: Option<String>,
    /// The body length (JSON) or the number of SSE events read.
    pub body_len: usize,
    pub transport_error: Option<TransportError>,
    pub exchange: Exchange,
    /// The answer came over stdio: a line, with no HTTP status, headers or
    /// stream (see [`Reply::status_is`]).
    pub stdio: bool,
    /// The request headers whose values came back in this answer, searched
    /// before redaction and in the whole body read (see [`EchoSearch`]).
    pub echoes: Vec<Echo>,
}

impl Reply {
    /// Whether the answer carries the HTTP status a requirement names. Over
    /// stdio there is none: only the JSON-RPC part of the requirement
    /// applies, so the status part holds.
    pub fn status_is(&self, status: u16) -> bool {
        self.stdio || self.status == Some(status)
    }

    pub fn result(&self) -> Option<&Value> {
        self.message.as_ref()?.get("result")
    }

    pub fn error(&self) -> Option<&Value> {
        self.message.as_ref()?.get("error")
    }

    pub fn error_code(&self) -> Option<i64> {
        // JSON-RPC codes are integers; `-32601.0` is one too (JSON Schema reading).
        wire::as_integer(self.error()?.get("code")?)
    }

    pub fn ok(&self) -> bool {
        self.status_is(200) && self.result().is_some()
    }

    /// One line for a finding: `HTTP 400 with JSON-RPC error -32020 ("…")`.
    pub fn describe(&self) -> String {
        // A body over the limit is an answer, with too much: the target's
        // fault, worded as RCP words it.
        if let Some(TransportError::TooLarge { limit }) = &self.transport_error {
            if self.stdio {
                return format!("a line over protocheck's {limit}-byte limit");
            }
            let status = self
                .status
                .map(|s| format!("HTTP {s} "))
                .unwrap_or_default();
            return format!("{status}with a body over protocheck's {limit}-byte limit");
        }
        if let Some(err) = &self.transport_error {
            return format!("no answer ({err})");
        }
        let status = match self.status {
            Some(s) => format!("HTTP {s}"),
            None if self.stdio => "a line".to_owned(),
            None => String::new(),
        };
        let media = if self.sse { " (SSE)" } else { "" };
        if let Some(error) = self.error() {
            let code = error
                .get("code")
                .map(Value::to_string)
                .unwrap_or_else(|| "without a code".into());
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(|m| format!(" \"{}\"", clip(m, 120)))
                .unwrap_or_default();
            return format!("{status}{media} with JSON-RPC error {code}{message}");
        }
        if let Some(result) = self.result() {
            let kind = result
                .get("resultType")
                .and_then(Value::as_str)
                .map(|t| format!(" (resultType `{t}`)"))
                .unwrap_or_default();
            return format!("{status}{media} with a result{kind}");
        }
        if self.stdio {
            return if self.message.is_none() {
                "no line answering the request's id".to_owned()
            } else {
                "a line with the request's id that is neither a result nor an error".to_owned()
            };
        }
        if self.body_len == 0 {
            return format!("{status}{media} with an empty body");
        }
        let media_type = self.content_type.as_deref().unwrap_or("no content type");
        format!("{status}{media} with a body that is not a JSON-RPC response ({media_type})")
    }

    /// A reply to nothing: a request that was never sent.
    pub fn empty(method: &str) -> Self {
        let exchange = Exchange {
            request: crate::suite::RequestRecord {
                line: String::new(),
                headers: Vec::new(),
                body: String::new(),
            },
            response: None,
            error: Some("not sent".into()),
        };
        let mut probe = Probe::request(0, method, json!({}));
        probe.headers.clear();
        Self::failed(
            &probe,
            exchange,
            TransportError::Io("the request was not sent".into()),
        )
    }

    pub(super) fn failed(probe: &Probe, exchange: Exchange, err: TransportError) -> Self {
        Self {
            transport_error: Some(err),
            ..Self::nothing_read(probe, exchange)
        }
    }

    /// The reply to `probe` over stdio, before anything was read.
    pub(super) fn over_stdio(probe: &Probe, exchange: Exchange) -> Self {
        Self {
            stdio: true,
            ..Self::nothing_read(probe, exchange)
        }
    }

    /// The reply to `probe` before anything of an answer was read.
    fn nothing_read(probe: &Probe, exchange: Exchange) -> Self {
        Self {
            method: probe.method.clone(),
            intent: probe.intent,
            status: None,
            content_type: None,
            sse: false,
            message: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            stray_frames: Vec::new(),
            event_ids: Vec::new(),
            terminated: None,
            accel_buffering: None,
            session_id: None,
            body_len: 0,
            transport_error: None,
            exchange,
            stdio: false,
            echoes: Vec::new(),
        }
    }

    /// Records that the exchange failed with `err`.
    pub(super) fn fail_with(&mut self, err: TransportError) {
        self.exchange.error = Some(err.to_string());
        self.transport_error = Some(err);
    }
}

pub use crate::suite::clip;

/// At most `max` items joined with `sep`, then how many were left out: lists
/// built from what a target sent stay short in a finding.
pub fn some(items: &[String], max: usize, sep: &str) -> String {
    let shown: Vec<&str> = items.iter().take(max).map(String::as_str).collect();
    let mut out = shown.join(sep);
    if items.len() > max {
        out.push_str(&format!("{sep}… and {} more", items.len() - max));
    }
    out
}

/// What the run-wide rules need to know about a reply to a modern request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The request's JSON-RPC id: [`McpClient::seen`](super::McpClient::seen)
    /// lists replies in this order, whatever order concurrent answers arrived
    /// in.
    pub order: i64,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub sse: bool,
    pub listen: bool,
    /// The result, when the final message carried one.
    pub result: Option<Value>,
    pub error_code: Option<i64>,
    pub server_requests: usize,
    pub terminated: Option<bool>,
    pub accel_buffering: Option<String>,
    /// Whether the request carried the run's bearer token (MCP-AUT-007).
    pub authorized: bool,
    pub exchange: Exchange,
    /// The answer came over stdio (a line; its server requests were read
    /// from stdout, the response stream of that transport).
    pub stdio: bool,
    /// An HTTP refusal whose body is no JSON-RPC message
    /// ([`crate::suite::mcp::wire::http_refusal`]): the rules about JSON-RPC
    /// answers pass it by.
    pub refusal: bool,
    /// The request headers whose values came back ([`Reply::echoes`]).
    pub echoes: Vec<Echo>,
}

/// A request header whose value came back in an answer (MCP-SEC-003,
/// MCP-SEC-007): the header's name and where its value was found. The value
/// itself is never kept, so a credential found is named, never shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Echo {
    /// The request header, in lower case (`authorization`, `user-agent`).
    pub header: String,
    /// `body`, or `response header `name``.
    pub place: String,
}

/// Request headers whose values are not looked for in answers: values any
/// answer may name for another reason (media types, the protocol version,
/// the host), and the headers that mirror the body (`Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`), whose values an answer names when it names
/// the method, tool or argument it refuses.
const NOT_DISTINCTIVE: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "last-event-id",
];
/// The shortest value looked for: shorter ones come back by chance.
const MIN_ECHO_BYTES: usize = 8;

/// Looks for the distinctive request header values (the canary, the
/// `User-Agent`, the credentials of `Authorization`, any other header whose
/// value the request body does not hold) in an answer: its headers before
/// redaction, and every byte of its body protocheck reads.
#[derive(Debug, Default)]
pub struct EchoSearch {
    needles: Vec<(String, Vec<u8>)>,
    found: Vec<Echo>,
}

impl EchoSearch {
    /// The values of `headers` (name, value as sent) worth looking for;
    /// `body` is the request body.
    pub fn new<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>, body: &[u8]) -> Self {
        let mut needles: Vec<(String, Vec<u8>)> = Vec::new();
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if NOT_DISTINCTIVE.contains(&name.as_str()) || name.starts_with(wire::H_PARAM_PREFIX) {
                continue;
            }
            // The credentials of `Authorization`, not its scheme.
            let value = if name == "authorization" || name == "proxy-authorization" {
                value.split_once(' ').map_or(value, |(_, c)| c).trim()
            } else {
                value.trim()
            };
            if value.len() < MIN_ECHO_BYTES || contains(body, value.as_bytes()) {
                continue;
            }
            if !needles
                .iter()
                .any(|(n, v)| *n == name && v == value.as_bytes())
            {
                needles.push((name, value.as_bytes().to_vec()));
            }
        }
        Self {
            needles,
            found: Vec::new(),
        }
    }

    fn note(&mut self, header: &str, place: &str) {
        if !self
            .found
            .iter()
            .any(|e| e.header == header && e.place == place)
        {
            self.found.push(Echo {
                header: header.to_owned(),
                place: place.to_owned(),
            });
        }
    }

    /// Searches response headers, as received.
    pub fn headers<'a>(&mut self, headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) {
        for (name, value) in headers {
            let hits: Vec<String> = self
                .needles
                .iter()
                .filter(|(_, needle)| contains(value, needle))
                .map(|(header, _)| header.clone())
                .collect();
            for header in hits {
                self.note(
                    &header,
                    &format!("response header `{}`", name.to_ascii_lowercase()),
                );
            }
        }
    }

    /// Searches body bytes (a JSON body, or one SSE event's data); a value
    /// holding `/` is also looked for as JSON may escape it (`\/`).
    pub fn body(&mut self, bytes: &[u8]) {
        let hits: Vec<String> = self
            .needles
            .iter()
            .filter(|(_, needle)| {
                contains(bytes, needle)
                    || (needle.contains(&b'/')
                        && contains(
                            bytes,
                            String::from_utf8_lossy(needle)
                                .replace('/', "\\/")
                                .as_bytes(),
                        ))
            })
            .map(|(header, _)| header.clone())
            .collect();
        for header in hits {
            self.note(&header, "body");
        }
    }

    /// What was found.
    pub fn found(self) -> Vec<Echo> {
        self.found
    }
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack.len() >= needle.len()
        && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The answer to a GET or DELETE on the endpoint.
#[derive(Debug, Clone)]
pub struct BareReply {
    pub status: Option<u16>,
    pub sse: bool,
    pub first_event: Option<crate::transport::sse::SseEvent>,
    pub exchange: Exchange,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_name_the_header_and_never_keep_the_value() {
        let headers = [
            ("Authorization", "Bearer pc-authz-canary-0123456789abcdef"),
            ("x-protocheck-canary", "pc-canary-00112233"),
            ("mcp-name", "protocheck-elsewhere-tool"),
            ("accept", "application/json, text/event-stream"),
            ("user-agent", "protocheck/0.1.0 (conformance checker)"),
            ("x-short", "abc"),
        ];
        let body = br#"{"params":{"name":"x"}}"#;
        let mut search = EchoSearch::new(headers, body);
        // Mcp-Name mirrors the body and media types are common text: never looked for.
        search.body(b"unknown tool protocheck-elsewhere-tool; accepts application/json, abc");
        search.headers([("X-Debug", &b"auth=pc-authz-canary-0123456789abcdef"[..])]);
        search.body(br#"{"error":{"message":"from protocheck\/0.1.0 (conformance checker) pc-canary-00112233"}}"#);
        let found = search.found();
        assert_eq!(
            found,
            [
                Echo {
                    header: "authorization".into(),
                    place: "response header `x-debug`".into()
                },
                Echo {
                    header: "x-protocheck-canary".into(),
                    place: "body".into()
                },
                Echo {
                    header: "user-agent".into(),
                    place: "body".into()
                },
            ]
        );
        assert!(!format!("{found:?}").contains("0123456789abcdef"));
        // A value the request body holds is not distinctive.
        let mirrored = EchoSearch::new(
            [("x-tool", "weather-report")],
            br#"{"name":"weather-report"}"#,
        );
        assert!(mirrored.needles.is_empty());
    }

    #[test]
    fn lists_and_texts_from_targets_stay_short() {
        let items: Vec<String> = (1..=8).map(|i| i.to_string()).collect();
        assert_eq!(some(&items, 3, ", "), "1, 2, 3, … and 5 more");
        assert_eq!(some(&items[..2], 3, ", "), "1, 2");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
    }
}
