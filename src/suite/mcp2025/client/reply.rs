//! What came back for one frame, and the words a finding uses for it.

use crate::suite::mcp::aut_survey::auth_refusal;
use crate::suite::mcp::client::clip;
use crate::suite::mcp::wire::{AuthRefusal, unreached_text};
use crate::suite::{Exchange, RequestRecord};
use crate::transport::TransportError;
use serde_json::Value;

/// The answer to one conforming request, as the run-wide rules judge it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The id the request carried.
    pub id: Option<Value>,
    /// The JSON-RPC answer.
    pub message: Option<Value>,
    pub exchange: Exchange,
}

/// What came back for one frame sent.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The method sent (or a label for a raw frame).
    pub method: String,
    /// HTTP status; `None` on stdio.
    pub status: Option<u16>,
    pub content_type: Option<String>,
    /// The answer came as an SSE stream.
    pub sse: bool,
    /// The JSON-RPC answer: the JSON body, the SSE frame answering the
    /// request, or the stdout line; an array for the answer to a batch.
    pub message: Option<Value>,
    /// Something came back, but not JSON (HTTP body, or an SSE frame).
    pub not_json: bool,
    /// What came back was not valid UTF-8 (on stdio: a line held bytes that
    /// had to be replaced to be read).
    pub invalid_utf8: bool,
    /// Bytes of the HTTP body (or events of an SSE stream) read.
    pub body_len: usize,
    /// Notifications that arrived before the answer.
    pub notifications: Vec<Value>,
    /// Notifications that came after the answer, while protocheck read on
    /// (the rest of the SSE stream, or stdout) for a request sent with
    /// [`Connection::request_lingering`](super::Connection::request_lingering).
    pub after: Vec<Value>,
    /// Requests the server sent while the answer was awaited.
    pub server_requests: Vec<Value>,
    /// The `Mcp-Session-Id` response header.
    pub session_id: Option<String>,
    /// Why nothing (or not all) came back.
    pub error: Option<TransportError>,
    /// The request was still running when its budget on the wire (this
    /// long) ran out, and protocheck cancelled it
    /// ([`Connection::request_within`](super::Connection::request_within)).
    pub cut: Option<std::time::Duration>,
    pub exchange: Exchange,
}

impl Reply {
    pub(crate) fn new(method: &str, exchange: Exchange) -> Self {
        Self {
            method: method.to_owned(),
            status: None,
            content_type: None,
            sse: false,
            message: None,
            not_json: false,
            invalid_utf8: false,
            body_len: 0,
            notifications: Vec::new(),
            after: Vec::new(),
            server_requests: Vec::new(),
            session_id: None,
            error: None,
            cut: None,
            exchange,
        }
    }

    /// A reply to a frame that could not be sent at all.
    pub(crate) fn unsent(method: &str, error: TransportError) -> Self {
        let exchange = Exchange {
            request: RequestRecord {
                line: method.to_owned(),
                headers: Vec::new(),
                body: String::new(),
            },
            response: None,
            error: Some(error.to_string()),
        };
        Self {
            error: Some(error),
            ..Self::new(method, exchange)
        }
    }

    /// `result` of a response object that has no `error`.
    pub fn result(&self) -> Option<&Value> {
        let obj = self.message.as_ref()?.as_object()?;
        if obj.contains_key("error") {
            return None;
        }
        obj.get("result")
    }

    /// `error` of a response object.
    pub fn error_object(&self) -> Option<&Value> {
        self.message.as_ref()?.as_object()?.get("error")
    }

    /// `error.code`, when it is an integer.
    pub fn error_code(&self) -> Option<i64> {
        crate::suite::mcp::wire::as_integer(self.error_object()?.get("code")?)
    }

    /// Whether the target answered at all (a status, a line).
    pub fn answered(&self) -> bool {
        self.status.is_some() || self.message.is_some() || self.not_json
    }

    /// Whether the request got nowhere: no status, no line, only an error.
    pub fn unanswered(&self) -> bool {
        !self.answered()
    }

    /// Whether the target's answer was cut for being larger than protocheck reads.
    pub fn too_large(&self) -> bool {
        matches!(self.error, Some(TransportError::TooLarge { .. }))
    }

    /// The refusal, when the target's authorization refused this request
    /// with 403 `insufficient_scope` before looking at it
    /// ([`auth_refusal`]): such an answer is no evidence for the rule the
    /// request was sent for.
    pub fn scope_refusal(&self) -> Option<AuthRefusal> {
        let headers = self
            .exchange
            .response
            .as_ref()
            .map_or(&[][..], |r| r.headers.as_slice());
        match auth_refusal(self.status, headers)? {
            refusal @ AuthRefusal::Scope(_) => Some(refusal),
            AuthRefusal::Unauthorized => None,
        }
    }

    /// One line for a finding: `HTTP 400 with JSON-RPC error -32600 ("…")`.
    pub fn describe(&self) -> String {
        let status = self
            .status
            .map(|s| format!("HTTP {s} "))
            .unwrap_or_default();
        if let Some(TransportError::TooLarge { limit }) = &self.error {
            return format!("{status}with an answer over protocheck's {limit}-byte limit");
        }
        if let Some(budget) = self.cut {
            return format!(
                "with no answer yet after {} ms, its budget, so protocheck cancelled it \
                 (`notifications/cancelled`) and did not judge it",
                budget.as_millis()
            );
        }
        // A 403 `insufficient_scope` refused the request before the server
        // looked at it: the words `grade` reads, so the verdict names the
        // rules the token's scope left unjudged (as on 2026-07-28).
        if let Some(refusal) = self.scope_refusal() {
            return format!(
                "{status}with insufficient_scope: {}",
                unreached_text(&[(self.method.clone(), refusal)])
            );
        }
        if self.unanswered() {
            return match &self.error {
                Some(err) => format!("no answer ({err})"),
                None => "no answer".to_owned(),
            };
        }
        let media = if self.sse { "(SSE) " } else { "" };
        if let Some(error) = self.error_object() {
            let code = error
                .get("code")
                .map(Value::to_string)
                .unwrap_or_else(|| "without a code".into());
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(|m| format!(" (\"{}\")", clip(m, 120)))
                .unwrap_or_default();
            return format!("{status}{media}with JSON-RPC error {code}{message}");
        }
        if self.result().is_some() {
            return format!("{status}{media}with a result");
        }
        match &self.message {
            Some(Value::Array(items)) => {
                format!("{status}{media}with an array of {} items", items.len())
            }
            Some(other) => format!(
                "{status}{media}with JSON that is not a JSON-RPC response: {}",
                clip(&other.to_string(), 160)
            ),
            None if self.not_json => format!("{status}{media}with a body that is not JSON"),
            None if self.status.is_some() && self.body_len == 0 => {
                format!("{status}with an empty body")
            }
            None => match &self.error {
                Some(err) => format!("{status}{media}and no JSON-RPC answer ({err})"),
                None => format!("{status}{media}and no JSON-RPC answer"),
            },
        }
    }
}

/// What the target's authorization left unjudged among `replies`, in the
/// words `grade` reads (`` the token lacks the scope for `tools/call`
/// (`mcp:tools` asked) ``); `None` when none was refused with 403
/// `insufficient_scope`.
pub fn scope_refused<'a>(replies: impl IntoIterator<Item = &'a Reply>) -> Option<String> {
    let refused: Vec<(String, AuthRefusal)> = replies
        .into_iter()
        .filter_map(|r| Some((r.method.clone(), r.scope_refusal()?)))
        .collect();
    (!refused.is_empty()).then(|| unreached_text(&refused))
}
