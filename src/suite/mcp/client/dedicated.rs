//! Sending on a dedicated HTTP/1.1 connection: probes travel one after the
//! other on the same TCP connection, with their header names spelled as the
//! rule chooses (names are case-insensitive, so every spelling of a valid
//! request must be served alike). Answers are judged by the rule that sent
//! them; those to valid probes also join the run's log.

use super::{CANARY_HEADER, McpClient, Probe, Reply};
use crate::suite::mcp::wire::{self, H_PROTOCOL_VERSION};
use crate::suite::{Exchange, ResponseRecord};
use crate::transport::raw::{RawConnection, RawRequest};
use crate::transport::{TransportError, excerpt, redact_headers};
use bytes::Bytes;
use serde_json::Value;

/// How the header names of a probe are spelled on a dedicated connection.
/// Header names are case-insensitive (streamable-http#case-sensitivity), so
/// every spelling of a valid request must be served alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `mcp-method`: what the pooled client sends (hyper lower-cases names).
    Lower,
    /// As the spec writes them: `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`,
    /// `Mcp-Param-{Name}`; other names in Title-Case.
    Spec,
    /// `MCP-METHOD`.
    Upper,
    /// Letters alternating lower and upper case by position: `mCp-MeThOd`,
    /// `mCp-NaMe`, a spelling no lookup of a few fixed spellings finds.
    Mixed,
}

impl Spelling {
    pub fn name(self, lower: &str) -> String {
        match self {
            Self::Lower => lower.to_ascii_lowercase(),
            Self::Upper => lower.to_ascii_uppercase(),
            Self::Mixed => {
                let mut letters = 0usize;
                lower
                    .chars()
                    .map(|c| {
                        if !c.is_ascii_alphabetic() {
                            return c;
                        }
                        letters += 1;
                        if letters.is_multiple_of(2) {
                            c.to_ascii_uppercase()
                        } else {
                            c.to_ascii_lowercase()
                        }
                    })
                    .collect()
            }
            Self::Spec if lower.eq_ignore_ascii_case(H_PROTOCOL_VERSION) => {
                "MCP-Protocol-Version".to_owned()
            }
            Self::Spec => lower
                .split('-')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(first) => {
                            first.to_ascii_uppercase().to_string()
                                + &chars.as_str().to_ascii_lowercase()
                        }
                        None => String::new(),
                    }
                })
                .collect::<Vec<_>>()
                .join("-"),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Self::Lower => "lower-case (`mcp-method`)",
            Self::Spec => {
                "as the spec writes them (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`)"
            }
            Self::Upper => "upper-case (`MCP-METHOD`)",
            Self::Mixed => "in mixed case (`mCp-MeThOd`, `mCp-NaMe`)",
        }
    }
}

/// The JSON-RPC messages of an event-stream body read so far.
fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    let mut out = Vec::new();
    // Only complete events: the text after the last blank line may be partial.
    let complete = match text.rfind("\n\n") {
        Some(end) => &text[..end],
        None => return out,
    };
    for event in complete.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) {
            out.push(v);
        }
    }
    out
}

/// Whether `frame` is the final answer to the request `id`.
fn answers(frame: &Value, id: Option<&Value>) -> bool {
    frame.get("method").is_none()
        && (frame.get("result").is_some() || frame.get("error").is_some())
        && frame
            .get("id")
            .is_none_or(|v| v.is_null() || id.is_none() || Some(v) == id)
}

impl McpClient {
    /// Opens a dedicated HTTP/1.1 connection to the endpoint: requests sent
    /// with [`Self::send_on`] travel on it one after the other, on the same
    /// TCP connection, or fail (it never reconnects).
    pub async fn dedicated(&self) -> Result<RawConnection, TransportError> {
        RawConnection::open(&self.http, &self.url).await
    }

    /// Sends `probe` on `conn` with its header names spelled `spelling`. The
    /// answer is judged by the rule that sent it; an answer to a valid probe
    /// also joins the run's log for the run-wide rules (its stream's end not
    /// measured: only the streaming client waits to see it).
    pub async fn send_on(
        &self,
        conn: &mut RawConnection,
        probe: &Probe,
        spelling: Spelling,
    ) -> Reply {
        let _permit = self.permits.acquire().await;
        let body = Bytes::from(probe.body.to_string());
        let mut headers: Vec<(String, String)> = vec![
            (spelling.name("content-type"), "application/json".to_owned()),
            (spelling.name("user-agent"), USER_AGENT_RAW.to_owned()),
        ];
        for (name, value) in &probe.headers {
            headers.push((spelling.name(name), value.clone()));
        }
        if let Some(token) = &self.bearer
            && probe.header("authorization").is_none()
        {
            headers.push((
                spelling.name("authorization"),
                format!("Bearer {}", token.expose()),
            ));
        }
        headers.push((spelling.name(CANARY_HEADER), self.canary.to_string()));
        let evidence_bytes = self.http.limits().evidence_bytes;
        let record = crate::suite::RequestRecord {
            line: format!(
                "POST {} (dedicated connection {} → {}, request {})",
                self.url,
                conn.local_addr(),
                conn.peer_addr(),
                conn.requests + 1
            ),
            // Names as sent (the spelling is what a finding may be about),
            // values redacted as everywhere.
            headers: redact_headers(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())))
                .into_iter()
                .zip(&headers)
                .map(|((_, value), (name, _))| (name.clone(), value))
                .collect(),
            body: excerpt(&body, evidence_bytes).0,
        };
        let id = probe.id().cloned();
        // A `subscriptions/listen` stream has no final answer: it is read
        // until its first notification (the acknowledgement) or an answer,
        // and then closed with the connection, as the pooled client closes
        // its listens.
        let listen = probe.method == "subscriptions/listen";
        let enough = move |so_far: &[u8]| {
            sse_messages(so_far).iter().any(|f| {
                answers(f, id.as_ref())
                    || (listen
                        && f.get("method").is_some()
                        && f.get("id").is_none_or(Value::is_null))
            })
        };
        let req = RawRequest {
            method: "POST",
            headers,
            body,
        };
        let mut echoes = super::EchoSearch::new(
            req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            &req.body,
        );
        let resp = match conn.send(&req, &enough).await {
            Ok(resp) => resp,
            Err(err) => {
                let exchange = Exchange {
                    request: record,
                    response: None,
                    error: Some(err.to_string()),
                };
                return Reply::failed(probe, exchange, err);
            }
        };
        let content_type = resp.header("content-type").map(str::to_owned);
        let sse = content_type
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("text/event-stream"));
        let mut reply = Reply {
            method: probe.method.clone(),
            intent: probe.intent,
            status: Some(resp.status),
            content_type,
            sse,
            message: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            stray_frames: Vec::new(),
            event_ids: Vec::new(),
            terminated: None,
            accel_buffering: resp.header(wire::H_ACCEL_BUFFERING).map(str::to_owned),
            session_id: resp.header(wire::H_SESSION_ID).map(str::to_owned),
            body_len: resp.body.len(),
            transport_error: None,
            exchange: Exchange {
                request: record,
                response: None,
                error: None,
            },
            stdio: false,
            echoes: Vec::new(),
        };
        echoes.headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        echoes.body(&resp.body);
        reply.echoes = echoes.found();
        if sse {
            let id = probe.id();
            for frame in sse_messages(&resp.body) {
                let has_method = frame.get("method").is_some();
                let has_id = frame.get("id").is_some_and(|v| !v.is_null());
                if has_method && has_id {
                    reply.server_requests.push(frame);
                } else if has_method {
                    reply.notifications.push(frame);
                } else if reply.message.is_none() && answers(&frame, id) {
                    reply.message = Some(frame);
                } else {
                    reply.stray_frames.push(frame);
                }
            }
            reply.terminated = Some(!resp.cut);
        } else {
            reply.message = serde_json::from_slice::<Value>(&resp.body)
                .ok()
                .filter(Value::is_object);
        }
        let (shown, truncated) = excerpt(&resp.body, evidence_bytes);
        reply.exchange.response = Some(ResponseRecord {
            status: Some(resp.status),
            headers: redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))),
            body: shown,
            truncated,
            elapsed_ms: u64::try_from(resp.elapsed.as_millis()).unwrap_or(u64::MAX),
        });
        // An answer to a valid probe is evidence for every rule it bears on,
        // on whichever connection it came: it joins the run's log as the
        // pooled client's do. How its stream ended is not known (reading
        // stopped at the answer), so it is logged as not measured.
        let logged = Reply {
            terminated: None,
            ..reply.clone()
        };
        self.log_answer(probe, &logged, listen).await;
        reply
    }
}

/// The user agent of the dedicated connections (the pooled client's own).
const USER_AGENT_RAW: &str = concat!(
    "protocheck/",
    env!("CARGO_PKG_VERSION"),
    " (conformance checker)"
);
