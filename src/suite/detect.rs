//! `suite: "auto"`: ask the target, politely, which protocol it speaks.

use super::SuiteId;
use super::runner::{Endpoint, EngineError, RunContext};
use crate::transport::HttpRequest;
use serde_json::json;

/// The MCP revision the detection probe announces: the suite's own.
use super::mcp::wire::PROTOCOL_VERSION as MCP_REVISION;

/// Probes `endpoint` and returns the suite that fits, or says what was tried.
///
/// MCP is tried first with `server/discover` on the URL itself (the MCP endpoint
/// is the URL); then RCP with `info` at `<url>/info` (the URL is the RCP base).
/// Both probes are read-only and change no state on the target.
pub async fn detect(endpoint: &Endpoint, ctx: &RunContext) -> Result<SuiteId, EngineError> {
    let url = match endpoint {
        Endpoint::Http(url) => url,
        // A child process speaks one protocol on stdin; the CLI asks for RCP by default.
        Endpoint::Stdio(_) => return Ok(SuiteId::Rcp),
    };
    let timeout = ctx.options.request_timeout();
    let mut tried = Vec::new();

    let discover = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MCP_REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "protocheck", "version": env!("CARGO_PKG_VERSION")}
        }}
    });
    let req = HttpRequest::post_json(url.clone(), &discover)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MCP_REVISION)
        .header("mcp-method", "server/discover")
        .timeout(timeout);
    match ctx.http.send(&req).await {
        Ok(resp) => {
            let body = resp.json();
            let is_mcp = body.as_ref().is_some_and(|v| {
                v.pointer("/result/supportedVersions").is_some()
                    || v.pointer("/result/capabilities").is_some()
                        && v.pointer("/result/server").is_none()
            });
            if is_mcp {
                return Ok(SuiteId::Mcp);
            }
            tried.push(format!(
                "MCP `server/discover` at {url} answered HTTP {}",
                resp.status
            ));
        }
        Err(e @ crate::transport::TransportError::Forbidden { .. }) => {
            return Err(EngineError::Forbidden(e));
        }
        Err(e) if e.is_transient() => return Err(EngineError::Unreachable(e)),
        Err(e) => tried.push(format!("MCP `server/discover` at {url}: {e}")),
    }

    let info_url = join_method(url, "info");
    let info = json!({"jsonrpc": "2.0", "id": 1, "method": "info", "params": {}});
    let req = HttpRequest::post_json(info_url.clone(), &info).timeout(timeout);
    match ctx.http.send(&req).await {
        Ok(resp) => {
            if resp
                .json()
                .is_some_and(|v| v.pointer("/result/server").is_some())
            {
                return Ok(SuiteId::Rcp);
            }
            tried.push(format!(
                "RCP `info` at {info_url} answered HTTP {}",
                resp.status
            ));
        }
        Err(e) => tried.push(format!("RCP `info` at {info_url}: {e}")),
    }
    Err(EngineError::Detect(format!(
        "tried {}; choose the suite explicitly if the server speaks MCP or RCP",
        tried.join("; ")
    )))
}

/// `<base>/<method>`, the RCP HTTP binding's request path (spec §5).
pub fn join_method(base: &url::Url, method: &str) -> url::Url {
    let mut url = base.clone();
    let path = format!("{}/{}", base.path().trim_end_matches('/'), method);
    url.set_path(&path);
    url
}
