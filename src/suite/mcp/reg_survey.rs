//! The registry survey the REG rules judge: the `server.json` a run carries,
//! given as the document or as a URL to fetch with the run's client (so the
//! same address rules apply as to the target).

use super::client::{McpClient, clip};
use crate::suite::Exchange;
use crate::transport::HttpRequest;
use serde_json::Value;
use url::Url;

/// The document a run carries, once read.
#[derive(Debug, Clone)]
pub(crate) struct RegistryDoc {
    pub doc: Value,
    /// Where it came from: a URL or "options.server_json".
    pub source: String,
    pub exchange: Option<Exchange>,
}

/// Why the document could not be read.
#[derive(Debug, Clone)]
pub(crate) struct RegistryError {
    pub message: String,
    pub exchange: Option<Exchange>,
}

/// Reads the server.json a run gave (`options.server_json`): the document
/// itself, or a URL fetched through `client`.
pub(crate) async fn read(client: &McpClient, given: Value) -> Result<RegistryDoc, RegistryError> {
    let text = match given {
        Value::Object(_) => {
            return Ok(RegistryDoc {
                doc: given,
                source: "options.server_json".into(),
                exchange: None,
            });
        }
        Value::String(text) => text,
        _ => {
            return Err(RegistryError {
                message: "options.server_json is neither a URL nor a server.json object".into(),
                exchange: None,
            });
        }
    };
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return serde_json::from_str::<Value>(trimmed)
            .ok()
            .filter(Value::is_object)
            .map(|doc| RegistryDoc {
                doc,
                source: "options.server_json".into(),
                exchange: None,
            })
            .ok_or(RegistryError {
                message: "options.server_json holds text that is not a JSON object".into(),
                exchange: None,
            });
    }
    let url = Url::parse(trimmed)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| RegistryError {
            message: format!(
                "options.server_json {:?} is neither an http(s) URL nor a JSON object",
                clip(trimmed, 80)
            ),
            exchange: None,
        })?;
    // Fetched through the guarded client: the same address rules as the target.
    let req = HttpRequest::get(url.clone())
        .header("accept", "application/json")
        .timeout(client.timeout());
    let (exchange, result) = client.http().exchange(&req).await;
    match result {
        Ok(resp) if resp.status == 200 => match resp.json().filter(Value::is_object) {
            Some(doc) => Ok(RegistryDoc {
                doc,
                source: url.to_string(),
                exchange: Some(exchange),
            }),
            None => Err(RegistryError {
                message: format!("{url} did not return a JSON object"),
                exchange: Some(exchange),
            }),
        },
        Ok(resp) => Err(RegistryError {
            message: format!("{url} answered HTTP {}", resp.status),
            exchange: Some(exchange),
        }),
        Err(e) => Err(RegistryError {
            message: format!("{url} could not be fetched: {e}"),
            exchange: Some(exchange),
        }),
    }
}
