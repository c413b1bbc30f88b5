//! Reading what came back: a reply's JSON, result and error code, the names
//! of the spec's error codes (§12) for findings, and how a body is classified
//! (empty, JSON, or not JSON).

use super::{Body, Reply};
use serde_json::Value;

impl Reply {
    pub fn json(&self) -> Option<&Value> {
        match &self.body {
            Body::Json(v) => Some(v),
            _ => None,
        }
    }

    /// `result` of a success reply (an object with `result` and no `error`).
    pub fn result(&self) -> Option<&Value> {
        let obj = self.json()?.as_object()?;
        if obj.contains_key("error") {
            return None;
        }
        obj.get("result")
    }

    /// `error.code` of an error reply, when it is an integer.
    pub fn error_code(&self) -> Option<i64> {
        self.json()?.get("error")?.get("code")?.as_i64()
    }

    /// Whether the answer is a well-formed JSON-RPC 2.0 response (`"jsonrpc":
    /// "2.0"`, an `id` member, exactly one of `result` and `error`), or a
    /// batch holding one; its HTTP status does not matter.
    pub fn is_jsonrpc_response(&self) -> bool {
        match self.json() {
            Some(Value::Array(members)) => members.iter().any(is_response),
            Some(v) => is_response(v),
            None => false,
        }
    }

    /// What the server answered, in words for a finding: "a result",
    /// "error -32601 (MethodNotFound: \"Method not found\")", "HTTP 500 with a
    /// body that is not JSON".
    pub fn describe(&self) -> String {
        let what = match &self.body {
            Body::Empty => "an empty body".to_owned(),
            Body::NotJson => "a body that is not JSON".to_owned(),
            Body::TooLarge { limit } => format!("a body over protocheck's {limit}-byte limit"),
            Body::Json(v) => match v.as_object() {
                Some(obj) if obj.contains_key("error") => describe_error(&obj["error"]),
                Some(obj) if obj.contains_key("result") => "a result".to_owned(),
                _ => "JSON that is not a JSON-RPC response".to_owned(),
            },
        };
        let what = match self.status {
            Some(200) | None => what,
            Some(status) => format!("HTTP {status} with {what}"),
        };
        // -32001 is the one answer whose meaning depends on the connection
        // it came on (§5.2), so the connection is named with it.
        match &self.connection_note {
            Some(note) if self.error_code() == Some(-32001) => {
                format!("{what} (the request was {note})")
            }
            _ => what,
        }
    }
}

fn is_response(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && obj.contains_key("id")
        && (obj.contains_key("result") != obj.contains_key("error"))
}

fn describe_error(error: &Value) -> String {
    let Some(code) = error.get("code").and_then(Value::as_i64) else {
        return "an error without an integer code".to_owned();
    };
    let name = error_name(code)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    format!("error {code}{name}")
}

/// Names of the error codes of spec §12, as the digest spells them.
pub(crate) fn error_name(code: i64) -> Option<&'static str> {
    Some(match code {
        -32700 => "ParseError",
        -32600 => "InvalidRequest",
        -32601 => "MethodNotFound",
        -32602 => "InvalidParams",
        -32603 => "InternalError",
        -32001 => "NotInitialized",
        -32002 => "VersionMismatch",
        -32003 => "CapabilityMissing",
        -32004 => "UnknownMethod",
        -32005 => "OptionUnsupported",
        -32006 => "Cancelled",
        -32010 => "BackendUnavailable",
        -32011 => "RateLimited",
        -32012 => "Unauthorized",
        -32013 => "PayloadTooLarge",
        -32014 => "Timeout",
        -32015 => "NotFound",
        -32016 => "Conflict",
        _ => return None,
    })
}

pub(super) fn parse_body(bytes: &[u8]) -> Body {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Body::Empty;
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Body::Json(v),
        Err(_) => Body::NotJson,
    }
}
