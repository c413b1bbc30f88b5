//! The stdio face of the 2026-07-28 reference server (transports, "stdio"):
//! one JSON-RPC message per line on stdin and stdout, nothing else on stdout
//! (logs go to stderr), and the end of stdin ends the server. Each line goes
//! through the same checks and methods as a POST body (`protocol::process`),
//! with no headers to validate; an answer is written as one line, and each
//! frame of a stream (progress, a listen's acknowledgement) as a line of its
//! own. Lines are read with the 2025-11-25 server's bounded reader.
//!
//! The faults of the rules that judge HTTP (headers, status codes, sessions,
//! connections, Origin, TLS, authorization) change nothing here; MCP-ERR-002's
//! and MCP-ERR-006's have a stdio form (see `protocol` and `validate`).

use super::protocol::{self, Out};
use super::{Inner, McpReferenceConfig};
use crate::reference::mcp2025::stdio::read_line;
use crate::suite::mcp::wire::code;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Serves newline-delimited JSON-RPC on `stdin`/`stdout` until `stdin` ends.
pub async fn serve_mcp_stdio<R, W>(
    config: McpReferenceConfig,
    stdin: R,
    mut stdout: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let state = Inner {
        stdio: true,
        ..Inner::new(config)
    };
    let latency = state.config.latency;
    let mut reader = BufReader::new(stdin);
    let headers = HeaderMap::new();
    loop {
        let out = match read_line(&mut reader).await? {
            None => return Ok(()),
            Some(None) => protocol::rpc_error(
                axum::http::StatusCode::OK,
                &Value::Null,
                code::INVALID_REQUEST,
                "message too long",
                None,
            ),
            Some(Some(line)) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Some(Some(line)) => protocol::process(&state, None, &headers, &line),
        };
        let frames = lines_of(out);
        if frames.is_empty() {
            continue;
        }
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        for frame in frames {
            let mut line = frame.to_string().into_bytes();
            line.push(b'\n');
            stdout.write_all(&line).await?;
        }
        stdout.flush().await?;
    }
}

/// The lines an answer is written as: none for a notification, one per
/// message otherwise. A `subscriptions/listen` writes its acknowledgement;
/// the client ends it with `notifications/cancelled`, which needs no answer.
fn lines_of(out: Out) -> Vec<Value> {
    match out {
        Out::Json { body, .. } => match body {
            // A plain-text answer of an HTTP fault: still one JSON-RPC line.
            Value::String(text) => vec![json!({
                "jsonrpc": "2.0",
                "error": {"code": code::INVALID_REQUEST, "message": text}
            })],
            other => vec![other],
        },
        Out::Empty(_) => Vec::new(),
        Out::Stream(frames) => frames,
        Out::Listen { ack, .. } => vec![ack],
    }
}
