//! Era detection (`mcp-2026-07-28.md` §15.3; versioning page, "Backward
//! Compatibility"): a modern request first, then a legacy `initialize`.
//!
//! The modern probe is `server/discover` with headers and `_meta`. Its answer is
//! "recognised modern" when it is a `DiscoverResult`, a 400 carrying -32020,
//! -32021 or -32022, or a 404 carrying -32601 (streamable-http,
//! "Backward Compatibility"). The `initialize` probe is always sent as a 2025-11-25
//! client would send it, because the DEP rules judge how it is handled.

use super::client::{McpClient, Probe, Reply, client_info, clip};
use super::wire::{self, H_PROTOCOL_VERSION, H_SESSION_ID, LEGACY_VERSION, code};
use crate::suite::context::EngineError;
use crate::transport::{HttpRequest, TransportError};
use serde_json::{Value, json};
use std::time::Duration;

/// What the server speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28 (or at least answers like a modern server), no `initialize`.
    Modern,
    /// Modern requests and a legacy `initialize` both work.
    Dual { legacy_version: String },
    /// Only `initialize` works: a 2025-11-25 (or older) server. `listed`:
    /// the revisions its answer to `server/discover` named, when it named
    /// some and 2026-07-28 was not among them (a `DiscoverResult`'s
    /// `supportedVersions`, or a -32022 refusal's `supported`): a server of
    /// the 2026-07-28 era that says it speaks older revisions only.
    Legacy {
        legacy_version: String,
        listed: Vec<String>,
    },
}

impl Era {
    pub fn describe(&self) -> String {
        match self {
            Self::Modern => format!(
                "modern: judged on MCP {}; a legacy `initialize` got no result",
                wire::PROTOCOL_VERSION
            ),
            Self::Dual { legacy_version } => format!(
                "dual-era: `server/discover` was answered as MCP {} and a legacy `initialize` \
                 negotiated {legacy_version}",
                wire::PROTOCOL_VERSION
            ),
            Self::Legacy {
                legacy_version,
                listed,
            } if listed.is_empty() => format!(
                "judged as MCP {legacy_version} only: `server/discover` got no MCP {} answer, \
                 and a legacy `initialize` negotiated {legacy_version}",
                wire::PROTOCOL_VERSION
            ),
            Self::Legacy {
                legacy_version,
                listed,
            } => format!(
                "judged as MCP {legacy_version} only: the server's answer to `server/discover` \
                 lists {} and not {}, and a legacy `initialize` negotiated {legacy_version}",
                listed.join(", "),
                wire::PROTOCOL_VERSION
            ),
        }
    }
}

/// Whether a reply to a modern request comes from a modern server.
pub fn recognised_modern(reply: &Reply) -> bool {
    if let Some(result) = reply.result() {
        return result.get("supportedVersions").is_some() || result.get("capabilities").is_some();
    }
    // Over stdio there is no status, and -32601 is what a 2025-11-25 server
    // answers an unknown method with too: only the errors a 2026-07-28
    // server alone gives are modern (stdio, "Backward Compatibility": any
    // other error or no answer means legacy).
    if reply.stdio {
        return matches!(
            reply.error_code(),
            Some(
                code::HEADER_MISMATCH
                    | code::MISSING_CLIENT_CAPABILITY
                    | code::UNSUPPORTED_PROTOCOL_VERSION
            )
        );
    }
    match (reply.status, reply.error_code()) {
        (Some(400), Some(c)) => matches!(
            c,
            code::HEADER_MISMATCH
                | code::MISSING_CLIENT_CAPABILITY
                | code::UNSUPPORTED_PROTOCOL_VERSION
        ),
        (Some(404), Some(code::METHOD_NOT_FOUND)) => true,
        _ => false,
    }
}

/// The revisions an answer to `server/discover` lists, when it lists some
/// and 2026-07-28 is not among them: a `DiscoverResult`'s
/// `supportedVersions`, or the `supported` of a -32022 refusal. Empty when it
/// lists none, or lists 2026-07-28.
pub fn listed_without_current(reply: &Reply) -> Vec<String> {
    let list = match reply.result() {
        Some(result) => result.get("supportedVersions"),
        None if reply.error_code() == Some(code::UNSUPPORTED_PROTOCOL_VERSION) => reply
            .message
            .as_ref()
            .and_then(|m| m.pointer("/error/data/supported")),
        None => None,
    };
    let Some(list) = list.and_then(Value::as_array) else {
        return Vec::new();
    };
    let names: Vec<String> = list
        .iter()
        .filter_map(Value::as_str)
        .map(|v| clip(v, 40))
        .collect();
    if names.is_empty() || names.iter().any(|v| v == wire::PROTOCOL_VERSION) {
        return Vec::new();
    }
    names
}

/// A legacy `initialize` request as a 2025-11-25 client sends it.
pub fn initialize_probe(client: &McpClient) -> Probe {
    Probe {
        method: "initialize".into(),
        body: json!({
            "jsonrpc": "2.0", "id": client.next_id(), "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": client_info(),
            }
        }),
        headers: vec![("accept".into(), wire::ACCEPT_BOTH.into())],
        notification: false,
        legacy: true,
        intent: super::client::Intent::Valid,
    }
}

/// The protocol version an `initialize` result negotiated, if it is one.
pub fn negotiated_version(reply: &Reply) -> Option<String> {
    reply
        .result()?
        .get("protocolVersion")?
        .as_str()
        .map(str::to_owned)
}

/// What the opening probes found: the era and the three replies the rules
/// judge it by.
pub(crate) struct Opening {
    pub era: Era,
    /// `tools/list` sent as the very first request of the run, on a new connection.
    pub cold: Reply,
    pub discover: Reply,
    pub initialize: Reply,
}

/// The first request of an MCP 2026-07-28 run (MCP-STL-003), sent before
/// anything else the run sends, detection included: `tools/list` on a
/// connection nothing else has used, with no `server/discover` before it
/// anywhere. A server that refuses requests until some client has called
/// `server/discover`, on any connection, is then refused nothing by an
/// earlier probe of the same run, and the finding's "before any
/// server/discover" is true. It carries the client the run goes on with, so
/// that the answer is logged with the run's other answers.
pub(crate) struct ColdStart {
    pub(crate) client: McpClient,
    pub(crate) cold: Reply,
}

impl ColdStart {
    /// Sends the cold probe through `client` and waits for its answer.
    pub(crate) async fn send(client: McpClient) -> Result<Self, EngineError> {
        let cold = cold_probe(&client).await?;
        Ok(Self { client, cold })
    }
}

/// `tools/list` as the very first request of the run, on a new connection.
async fn cold_probe(client: &McpClient) -> Result<Reply, EngineError> {
    let cold_client = client
        .fresh_connection()
        .map_err(EngineError::from_transport)?;
    Ok(cold_client
        .send(&client.request("tools/list", json!({})))
        .await)
}

/// Sends the opening probes through `client` and tells the era. `cold` is the
/// answer to the cold probe when the run sent it already (see
/// [`ColdStart`]); otherwise it is sent here, first.
pub(crate) async fn detect(
    client: &McpClient,
    cold: Option<Reply>,
) -> Result<Opening, EngineError> {
    // STL-003: the very first request of the run is not discover, and travels on
    // a connection nothing else has used.
    let cold = match cold {
        Some(cold) => cold,
        None => cold_probe(client).await?,
    };

    // Over HTTP `server/discover` and `initialize` are independent requests
    // and go side by side; over stdio `initialize` follows the answer to
    // `server/discover` on the one child, as a client would send them.
    let discover_probe = client.request("server/discover", json!({}));
    let initialize_request = initialize_probe(client);
    let (discover, initialize) = if client.is_stdio() {
        let discover = client.send(&discover_probe).await;
        (discover, None)
    } else {
        let (discover, initialize) = tokio::join!(
            client.send(&discover_probe),
            client.send(&initialize_request)
        );
        (discover, Some(initialize))
    };
    // Over stdio a server that leaves `server/discover` unanswered may be a
    // legacy one waiting for `initialize`: only a closed pipe ends the run.
    let unanswered_over_stdio = discover.stdio
        && matches!(
            discover.transport_error,
            Some(TransportError::Timeout(_) | TransportError::TooLarge { .. })
        );
    if let Some(err) = &discover.transport_error
        && discover.status.is_none()
        && discover.message.is_none()
        && !unanswered_over_stdio
    {
        return Err(EngineError::from_transport(err.clone()));
    }
    let initialize = match initialize {
        Some(initialize) => initialize,
        None => client.send(&initialize_request).await,
    };
    let modern = recognised_modern(&discover);
    let legacy = negotiated_version(&initialize);
    let listed = listed_without_current(&discover);
    let era = match (modern, legacy) {
        // Versioning, "Backward Compatibility": the server lists what it
        // speaks; one that leaves 2026-07-28 out does not speak it, however
        // well it answers `server/discover`.
        (true, Some(v)) if !listed.is_empty() => Era::Legacy {
            legacy_version: v,
            listed,
        },
        (true, Some(v)) => Era::Dual { legacy_version: v },
        (false, Some(v)) => Era::Legacy {
            legacy_version: v,
            listed: Vec::new(),
        },
        // A server that answers neither way is judged as a modern server whose
        // discover is broken: MCP-DSC-001 fails and says what came back.
        (_, None) => Era::Modern,
    };
    Ok(Opening {
        era,
        cold,
        discover,
        initialize,
    })
}

/// A legacy session opened for the DEP rules on a legacy-only server.
pub(crate) struct LegacySession {
    pub version: String,
    pub session_id: Option<String>,
}

impl LegacySession {
    /// Opens a session with `initialize` and `notifications/initialized`.
    pub(crate) async fn open(client: &McpClient) -> Option<(Self, Reply)> {
        let reply = client.send(&initialize_probe(client)).await;
        let version = negotiated_version(&reply)?;
        let legacy = Self {
            version,
            session_id: reply.session_id.clone(),
        };
        let initialized = legacy.probe(Value::Null, "notifications/initialized", json!({}));
        client.send(&initialized).await;
        Some((legacy, reply))
    }

    /// Over stdio the process is the session, and the opening `initialize`
    /// (`initialize`, answered) opened it: a second one would be refused.
    /// Completes that handshake with `notifications/initialized`.
    pub(crate) async fn adopt(client: &McpClient, initialize: &Reply) -> Option<Self> {
        let legacy = Self {
            version: negotiated_version(initialize)?,
            session_id: None,
        };
        let initialized = legacy.probe(Value::Null, "notifications/initialized", json!({}));
        client.send(&initialized).await;
        Some(legacy)
    }

    /// A legacy request (or, with a null id, a notification) in this session.
    pub(crate) fn probe(&self, id: Value, method: &str, params: Value) -> Probe {
        let mut body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        if !id.is_null()
            && let Some(obj) = body.as_object_mut()
        {
            obj.insert("id".into(), id.clone());
        }
        let mut headers = vec![
            ("accept".to_owned(), wire::ACCEPT_BOTH.to_owned()),
            (H_PROTOCOL_VERSION.to_owned(), self.version.clone()),
        ];
        if let Some(sid) = &self.session_id {
            headers.push((H_SESSION_ID.to_owned(), sid.clone()));
        }
        Probe {
            method: method.to_owned(),
            body,
            headers,
            notification: id.is_null(),
            legacy: true,
            intent: super::client::Intent::Valid,
        }
    }

    /// Ends the session politely, as a 2025-11-25 client does (HTTP DELETE).
    pub(crate) async fn close(&self, client: &McpClient) {
        if let Some(sid) = &self.session_id {
            let req = HttpRequest {
                method: http::Method::DELETE,
                ..HttpRequest::get(client.url().clone())
            }
            .header(H_SESSION_ID, sid.clone())
            .header(H_PROTOCOL_VERSION, self.version.clone());
            client.bare(req, Duration::from_millis(200)).await;
        }
    }
}

/// Ends the legacy sessions the run opened: the DEP rules' one, if any, and
/// the one the opening `initialize` may have started.
pub(crate) async fn close(client: &McpClient, legacy: Option<&LegacySession>, initialize: &Reply) {
    if let Some(legacy) = legacy {
        legacy.close(client).await;
    }
    if let (Some(version), Some(sid)) = (
        negotiated_version(initialize),
        initialize.session_id.clone(),
    ) {
        LegacySession {
            version,
            session_id: Some(sid),
        }
        .close(client)
        .await;
    }
}
