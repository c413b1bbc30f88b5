//! The pre-2026 side of the reference server: the 2025-11-25 era it plays
//! for the suite's era detection (`initialize`, sessions), how a request is
//! told to be of that era, the methods 2026-07-28 removed, and the
//! back-compatibility behaviours (the `initialize` error that names the
//! versions, the deprecated HTTP+SSE transport) whose faults the DEP rules check.

use super::methods::server_info;
use super::protocol::{Out, late_body, rpc_error, sse_response};
use super::{Allowed, Inner, MAX_TRACKED, ReferenceEra, Shared};
use crate::suite::mcp::dep;
use crate::suite::mcp::wire::{
    H_METHOD, H_PROTOCOL_VERSION, H_SESSION_ID, LEGACY_VERSION, LEGACY_VERSIONS, code,
};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The deprecated HTTP+SSE transport's endpoint: absent unless its fault is on.
pub(super) async fn handle_legacy_sse(State(state): State<Shared>) -> Response {
    if !state.breaks(&dep::NO_LEGACY_SSE) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let session = format!("{:016x}", rand::random::<u64>());
    sse_response(
        &state,
        late_body(
            &state,
            format!("event: endpoint\ndata: /messages?sessionId={session}\n\n"),
        ),
    )
}

/// A modern-only server SHOULD name its versions in any error answering
/// `initialize` (versioning page): legacy clients cannot fall forward.
pub(super) fn name_versions(state: &Inner, out: Out) -> Out {
    if state.breaks(&dep::INITIALIZE_ERROR) {
        return out;
    }
    match out {
        Out::Json {
            status,
            mut body,
            content_type,
            session,
        } => {
            let versions = state.advertised_versions();
            if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut) {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                error.insert(
                    "message".into(),
                    json!(format!(
                        "{message}. This server does not use initialize: it speaks MCP {} \
                         (per-request _meta, server/discover)",
                        versions.join(", ")
                    )),
                );
                let data = error.entry("data").or_insert_with(|| json!({}));
                if let Some(d) = data.as_object_mut() {
                    d.insert("supported".into(), json!(versions));
                }
            }
            Out::Json {
                status,
                body,
                content_type,
                session,
            }
        }
        other => other,
    }
}

/// Methods 2026-07-28 removed; answered as unknown.
pub(super) const REMOVED: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Whether a POST is answered as a 2025-11-25 request: always by a
/// legacy-only server, never by a modern one; a dual-era server takes an
/// `initialize` or a legacy `MCP-Protocol-Version` without `Mcp-Method` as
/// legacy (and, where allowed, a request without the version header).
pub(super) fn speaks_legacy(state: &Inner, headers: &HeaderMap, method: &str) -> bool {
    match state.config.era {
        ReferenceEra::Modern => false,
        ReferenceEra::LegacyOnly => true,
        ReferenceEra::DualEra => {
            (state.allows(Allowed::MissingVersionIsLegacy)
                && !headers.contains_key(H_PROTOCOL_VERSION))
                || (headers.get(H_METHOD).is_none()
                    && (method == "initialize"
                        || headers
                            .get(H_PROTOCOL_VERSION)
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|v| LEGACY_VERSIONS.contains(&v))))
        }
    }
}

/// A DELETE that ends a legacy-only server's session (2025-11-25); `false`
/// when there is no such session, and the DELETE is answered as any other.
pub(super) fn end_session(state: &Inner, headers: &HeaderMap) -> bool {
    if state.config.era == ReferenceEra::LegacyOnly
        && let Some(sid) = headers.get(H_SESSION_ID).and_then(|v| v.to_str().ok())
        && let Ok(mut sessions) = state.legacy_sessions.lock()
    {
        return sessions.remove(sid);
    }
    false
}

/// A 2025-11-25 request: `initialize` (minting a session on a legacy-only
/// server), then `ping` and `tools/list` inside the session.
pub(super) fn legacy_request(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> Out {
    let ok = |result: Value| {
        Out::json(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        )
    };
    if method == "initialize" {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or(LEGACY_VERSION);
        let negotiated = if LEGACY_VERSIONS.contains(&asked) {
            asked
        } else {
            LEGACY_VERSION
        };
        let mut capabilities = json!({"tools": {}});
        if state.breaks(&dep::NO_DEPRECATED_CAPABILITIES) {
            capabilities["logging"] = json!({});
        }
        let mut out = ok(json!({
            "protocolVersion": negotiated,
            "capabilities": capabilities,
            "serverInfo": server_info()
        }));
        if state.config.era == ReferenceEra::LegacyOnly {
            let sid = format!("{:032x}", rand::random::<u128>());
            if let Ok(mut sessions) = state.legacy_sessions.lock() {
                if sessions.len() >= MAX_TRACKED {
                    sessions.clear();
                }
                sessions.insert(sid.clone());
            }
            if let Out::Json { session, .. } = &mut out {
                *session = Some(sid);
            }
        }
        return out;
    }
    if state.config.era == ReferenceEra::LegacyOnly {
        let known = headers
            .get(H_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|sid| state.legacy_sessions.lock().is_ok_and(|s| s.contains(sid)));
        if !known {
            // What a 2025-11-25 SDK answers a request outside a session: not a
            // modern error, so a modern client falls back to initialize.
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32000,
                "Bad Request: No valid session ID provided",
                None,
            );
        }
    }
    match method {
        "ping" => ok(json!({})),
        "tools/list" => {
            ok(json!({"tools": [{"name": "get_forecast", "inputSchema": {"type": "object"}}]}))
        }
        _ => rpc_error(
            StatusCode::OK,
            id,
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            None,
        ),
    }
}
