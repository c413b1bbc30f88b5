//! Header and `_meta` validation of a 2026-07-28 request, all of it before
//! dispatch: `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`, the
//! `Mcp-Param-*` headers of a tool, and the connection-state faults.

use super::protocol::{Out, invalid_params, method_not_found, mismatch, rpc_error};
use super::tools::tools;
use super::{Allowed, HeaderFault, Inner};
use crate::suite::mcp::wire::{
    self, H_LAST_EVENT_ID, H_METHOD, H_NAME, H_PROTOCOL_VERSION, H_SESSION_ID, LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, PROTOCOL_VERSION, code,
};
use crate::suite::mcp::{err, hdr, stl};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;

/// The methods the server answers; with the MCP-HDR-010 fault, any other is
/// refused before its headers are looked at.
const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
];

/// A header's text: `None` when absent, `Err` when it is not visible ASCII.
fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<Result<&'h str, ()>> {
    headers.get(name).map(|v| v.to_str().map_err(|_| ()))
}

/// What a validated request carries.
pub(super) struct Validated<'a> {
    pub(super) id: &'a Value,
    pub(super) method: &'a str,
    pub(super) params: Map<String, Value>,
    pub(super) capabilities: Value,
    pub(super) client_name: Option<String>,
}

/// Header and `_meta` validation, all of it before dispatch
/// (streamable-http#server-validation, basic/index#meta).
pub(super) fn validate<'a>(
    state: &Inner,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    id: &'a Value,
    method: &'a str,
    params: Option<&Value>,
) -> Result<Validated<'a>, Out> {
    if state.breaks(&hdr::BEFORE_DISPATCH) && !METHODS.contains(&method) {
        return Err(method_not_found(state, id, method));
    }
    let method_header = if state.misses_by_case(peer, H_METHOD) {
        None
    } else {
        header_text(headers, H_METHOD)
    };
    // Over stdio there are no headers to validate (transports, "stdio").
    match method_header {
        _ if state.stdio => {}
        // The fault: Mcp-Method required on server/discover only.
        None if state.breaks(&hdr::MISSING_METHOD) && method != "server/discover" => {}
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the Mcp-Method header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: Mcp-Method holds invalid characters",
            ));
        }
        Some(Ok(value)) => {
            let same = if state.breaks(&hdr::CASE) {
                value.eq_ignore_ascii_case(method)
            } else {
                value == method
            };
            if !same {
                return Err(mismatch(
                    id,
                    format!(
                        "Header mismatch: Mcp-Method header value '{value}' does not match body value '{method}'"
                    ),
                ));
            }
        }
    }

    let params = match params {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(invalid_params(id, "params must be an object", None)),
    };
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Err(invalid_params(
            id,
            "Invalid params: params._meta is required",
            None,
        ));
    };
    let header_version = header_text(headers, H_PROTOCOL_VERSION);
    let meta_version = match meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str) {
        Some(v) => v.to_owned(),
        None => match &header_version {
            Some(Ok(v)) if state.breaks(&err::MISSING_META) => (*v).to_owned(),
            // The fault over stdio, where no header names a version.
            None if state.stdio && state.breaks(&err::MISSING_META) => PROTOCOL_VERSION.to_owned(),
            _ => {
                return Err(invalid_params(
                    id,
                    format!(
                        "Invalid params: _meta is missing the required {META_PROTOCOL_VERSION}"
                    ),
                    None,
                ));
            }
        },
    };
    let connection = state.connection(peer);
    let capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(c @ Value::Object(_)) => c.clone(),
        Some(_) => {
            return Err(invalid_params(
                id,
                format!("Invalid params: {META_CLIENT_CAPABILITIES} must be an object"),
                None,
            ));
        }
        None => match connection.and_then(|c| c.capabilities) {
            Some(remembered) if state.breaks(&stl::NO_CONNECTION_STATE) => remembered,
            _ => {
                return Err(invalid_params(
                    id,
                    format!(
                        "Invalid params: _meta is missing the required {META_CLIENT_CAPABILITIES}"
                    ),
                    None,
                ));
            }
        },
    };
    match header_version {
        _ if state.stdio => {}
        None if state.breaks(&hdr::MISSING_VERSION) => {}
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the MCP-Protocol-Version header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: MCP-Protocol-Version holds invalid characters",
            ));
        }
        Some(Ok(v)) if v != meta_version && !state.breaks(&hdr::VERSION_MATCHES) => {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: MCP-Protocol-Version header value '{v}' does not match _meta value '{meta_version}'"
                ),
            ));
        }
        Some(Ok(_)) => {}
    }
    if meta_version != PROTOCOL_VERSION && state.config.version_per_connection {
        let asked = meta_version.clone();
        state.remember(peer, |c| c.other_version = Some(asked));
    }
    if meta_version != PROTOCOL_VERSION {
        let data = if state.breaks(&err::UNSUPPORTED_VERSION) {
            json!({"requested": meta_version})
        } else {
            let mut supported = state.advertised_versions();
            if state.allows(Allowed::LegacyInSupported) {
                for v in LEGACY_VERSIONS {
                    if !supported.contains(v) {
                        supported.push(v);
                    }
                }
            }
            json!({"supported": supported, "requested": meta_version})
        };
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(data),
        ));
    }
    if state.allows(Allowed::ToolLookupFirst)
        && method == "tools/call"
        && let Some(name) = params.get("name").and_then(Value::as_str)
        && !tools(state, None).iter().any(|t| t["name"] == name)
    {
        return Err(invalid_params(id, format!("Unknown tool: {name}"), None));
    }
    if let Some(field) = wire::name_field(method).filter(|_| !state.stdio) {
        validate_name(state, headers, id, method, field, params.get(field))?;
    }
    if method == "tools/call"
        && !state.stdio
        && let Some(tool) = params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| tools(state, None).into_iter().find(|t| t["name"] == n))
    {
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        validate_params(state, headers, id, &tool["inputSchema"], &arguments)?;
    }

    if state.breaks(&stl::SESSION_IGNORED) && headers.contains_key(H_SESSION_ID) {
        return Err(rpc_error(
            StatusCode::NOT_FOUND,
            id,
            code::INVALID_REQUEST,
            "Session not found",
            None,
        ));
    }
    if state.breaks(&stl::LAST_EVENT_ID) && headers.contains_key(H_LAST_EVENT_ID) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::INVALID_REQUEST,
            "Cannot resume: unknown Last-Event-ID",
            None,
        ));
    }
    if method == "server/discover" {
        state.discovered.store(true, Ordering::SeqCst);
        state.remember(peer, |c| c.discovered = true);
    } else if method == "subscriptions/listen"
        && state.config.listen_needs_discover
        && !state.connection(peer).is_some_and(|c| c.discovered)
    {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::INVALID_REQUEST,
            "Not initialized: call server/discover on this connection first",
            None,
        ));
    } else if state.breaks(&stl::COLD_REQUEST) && !state.discovered.load(Ordering::SeqCst) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::INVALID_REQUEST,
            "Not initialized: call server/discover first",
            None,
        ));
    }
    state.remember_capabilities(peer, &capabilities);
    let client_name = meta
        .get(META_CLIENT_INFO)
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Validated {
        id,
        method,
        params,
        capabilities,
        client_name,
    })
}

fn validate_name(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    field: &str,
    body: Option<&Value>,
) -> Result<(), Out> {
    let raw = match header_text(headers, H_NAME) {
        None if state.breaks(&hdr::MISSING_NAME) => return Ok(()),
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the Mcp-Name header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: Mcp-Name holds invalid characters",
            ));
        }
        Some(Ok(raw)) => raw,
    };
    let decoded = if state.breaks(&hdr::BASE64) {
        raw.to_owned()
    } else {
        wire::decode_header_value(raw.trim())
            .map_err(|e| mismatch(id, format!("Header mismatch: Mcp-Name: {e}")))?
    };
    let Some(body) = body.and_then(Value::as_str) else {
        return Ok(());
    };
    let same =
        if state.has_header_fault(HeaderFault::PromptNameWithoutCase) && method == "prompts/get" {
            decoded.eq_ignore_ascii_case(body)
        } else {
            decoded == body
        };
    if !same && !state.breaks(&hdr::NAME_MATCHES) {
        return Err(mismatch(
            id,
            format!(
                "Header mismatch: Mcp-Name header value '{decoded}' does not match body value '{body}' (params.{field})"
            ),
        ));
    }
    Ok(())
}

/// `Mcp-Param-*` validation for a known tool (streamable-http,
/// "Server Behavior for Custom Headers").
fn validate_params(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    schema: &Value,
    arguments: &Value,
) -> Result<(), Out> {
    for annotation in wire::header_annotations(schema) {
        let (Some(name), Some(path)) = (annotation.name(), annotation.path.as_ref()) else {
            continue;
        };
        let header_name = format!("{}{}", wire::H_PARAM_PREFIX, name.to_ascii_lowercase());
        let shown = format!("Mcp-Param-{name}");
        let body_value = wire::value_at(arguments, path);
        let Some(raw) = headers.get(&header_name) else {
            if body_value.is_some() || state.has_header_fault(HeaderFault::ExpectsAbsentParams) {
                return Err(mismatch(
                    id,
                    format!("Header mismatch: the {shown} header is missing"),
                ));
            }
            continue;
        };
        let text = if state.breaks(&hdr::PARAM_CHARACTERS) {
            String::from_utf8_lossy(raw.as_bytes()).into_owned()
        } else {
            raw.to_str()
                .map_err(|_| {
                    mismatch(
                        id,
                        format!("Header mismatch: {shown} holds invalid characters"),
                    )
                })?
                .to_owned()
        };
        let decoded = wire::decode_header_value(text.trim())
            .map_err(|e| mismatch(id, format!("Header mismatch: {shown}: {e}")))?;
        if state.breaks(&hdr::PARAM_MATCHES) {
            continue;
        }
        let Some(body_value) = body_value else {
            return Err(mismatch(
                id,
                format!("Header mismatch: {shown} is set but the argument is absent"),
            ));
        };
        let same = match body_value {
            // Integers compare numerically (SHOULD, "Server Validation" note).
            Value::Number(n) if !state.has_header_fault(HeaderFault::IntegerParamsAsText) => {
                decoded.parse::<f64>().ok() == n.as_f64()
            }
            other => wire::header_text(other).is_some_and(|text| {
                if state.has_header_fault(HeaderFault::ParamValueWithoutCase) {
                    text.eq_ignore_ascii_case(&decoded)
                } else {
                    text == decoded
                }
            }),
        };
        if !same {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: {shown} header value '{decoded}' does not match body value '{body_value}'"
                ),
            ));
        }
    }
    Ok(())
}
