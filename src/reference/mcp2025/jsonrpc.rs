//! JSON-RPC 2.0 as the 2025-11-25 reference server reads and writes it:
//! what a message is (request, notification, response), the framing errors
//! (-32700, -32600: batches included, since 2025-06-18 removed them), and
//! the bytes each outgoing message becomes.

use super::{Mcp25ReferenceConfig, faults};
use serde_json::{Value, json};

/// A JSON-RPC answer, ready to send.
#[derive(Debug, Clone)]
pub(super) struct Reply(pub(super) Value);

impl Reply {
    pub(super) fn result(id: &Value, result: Value) -> Self {
        Self(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Whether this answer is an error (HTTP maps framing errors to 400).
    pub(super) fn code(&self) -> Option<i64> {
        self.0.pointer("/error/code").and_then(Value::as_i64)
    }
}

/// An error answer. An id that could not be read is left out: the
/// 2025-11-25 schema makes an error's `id` optional and never null
/// (`JSONRPCErrorResponse` in schema.ts).
pub(super) fn error(
    id: &Value,
    code: i64,
    message: impl Into<String>,
    data: Option<Value>,
) -> Reply {
    let mut err = json!({"code": code, "message": message.into()});
    if let Some(data) = data {
        err["data"] = data;
    }
    let mut body = json!({"jsonrpc": "2.0", "error": err});
    if !id.is_null() {
        body["id"] = id.clone();
    }
    Reply(body)
}

pub(super) fn invalid_params(id: &Value, message: impl Into<String>) -> Reply {
    error(id, -32602, message, None)
}

/// What a message read from the client is.
#[derive(Debug)]
pub(super) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to a request of the server's (it sends none; ignored).
    Response,
}

/// Reads one message; an `Err` is the error answer it gets.
pub(super) fn classify(config: &Mcp25ReferenceConfig, text: &[u8]) -> Result<Incoming, Reply> {
    let Ok(message) = serde_json::from_slice::<Value>(text) else {
        if config.breaks(faults::PARSE_ERROR) {
            return Err(Reply(json!({"jsonrpc": "2.0", "id": null, "result": {}})));
        }
        return Err(error(&Value::Null, -32700, "Parse error", None));
    };
    if message.is_array() {
        // 2025-06-18 removed JSON-RPC batching: an array is not a message.
        return Err(error(
            &Value::Null,
            -32600,
            "Invalid request: batches are not supported in MCP 2025-11-25",
            None,
        ));
    }
    let Some(msg) = message.as_object() else {
        return Err(error(
            &Value::Null,
            -32600,
            "Invalid request: not an object",
            None,
        ));
    };
    let id = msg.get("id").cloned();
    let usable_id = id
        .clone()
        .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
        .unwrap_or(Value::Null);
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error(
            &usable_id,
            -32600,
            "Invalid request: jsonrpc must be \"2.0\"",
            None,
        ));
    }
    let method = match msg.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => {
            return Err(error(
                &usable_id,
                -32600,
                "Invalid request: method must be a string",
                None,
            ));
        }
        None if id.is_some() && (msg.contains_key("result") || msg.contains_key("error")) => {
            return Ok(Incoming::Response);
        }
        None if config.breaks(faults::MISSING_METHOD) => {
            return Ok(Incoming::Request {
                id: usable_id,
                method: "ping".into(),
                params: json!({}),
            });
        }
        None => {
            return Err(error(
                &usable_id,
                -32600,
                "Invalid request: missing method",
                None,
            ));
        }
    };
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    if !(params.is_object() || params.is_array()) {
        return Err(error(
            &usable_id,
            -32600,
            "Invalid request: params must be an object",
            None,
        ));
    }
    match id {
        None => Ok(Incoming::Notification { method, params }),
        Some(Value::Null) if config.breaks(faults::NULL_ID) => Ok(Incoming::Request {
            id: Value::Null,
            method,
            params,
        }),
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => {
            Ok(Incoming::Request { id, method, params })
        }
        Some(_) => Err(error(
            &Value::Null,
            -32600,
            "Invalid request: id must be a string or an integer, never null",
            None,
        )),
    }
}

/// What goes on the wire for `message`: its JSON text, as the faults that
/// touch every message shape it.
pub(super) fn encode(config: &Mcp25ReferenceConfig, message: &Value) -> Vec<u8> {
    let mut message = message.clone();
    if config.breaks(faults::ERROR_SHAPE)
        && let Some(error) = message.get_mut("error").and_then(Value::as_object_mut)
    {
        error.remove("message");
    }
    let answer = message.get("result").is_some() || message.get("error").is_some();
    if config.breaks(faults::ID_TYPE)
        && answer
        && let Some(id) = message.get("id").and_then(Value::as_i64)
    {
        message["id"] = json!(id.to_string());
    }
    message.to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Mcp25ReferenceConfig {
        Mcp25ReferenceConfig::new()
    }

    #[test]
    fn framing_errors_have_their_codes() {
        let code = |text: &str| {
            classify(&config(), text.as_bytes())
                .err()
                .and_then(|r| r.code())
        };
        assert_eq!(code("{"), Some(-32700));
        assert_eq!(code("[]"), Some(-32600));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Some(-32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            Some(-32600)
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), Some(-32600));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert!(matches!(
            classify(
                &config(),
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
            ),
            Ok(Incoming::Notification { .. })
        ));
        assert!(matches!(
            classify(&config(), br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#),
            Ok(Incoming::Response)
        ));
    }
}
