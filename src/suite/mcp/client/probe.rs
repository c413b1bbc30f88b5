//! Probes: the requests protocheck sends, conforming until a rule bends one
//! on purpose, each carrying its [`Intent`] so that only answers to valid
//! probes reach the run-wide rules.

use super::client_info;
use crate::suite::mcp::wire::{
    self, ACCEPT_BOTH, H_METHOD, H_NAME, H_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The 2026-07-28 requests that read and change nothing a server keeps.
const READ_ONLY_METHODS: [&str; 8] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
    "prompts/get",
    "completion/complete",
];

/// How every name protocheck makes up begins (see
/// [`crate::suite::mcp::survey::unknown_name`]).
pub(crate) const UNKNOWN_NAME_PREFIX: &str = "protocheck-no-such-";

/// What a probe is for, set where the request is built: a request a
/// conforming server serves, or one bent on purpose so that a conforming
/// server must refuse it.
///
/// §15 amendment "A finding judges only what its probe provoked": the answer
/// to an invalid probe is judged only by the rule that sent it, which holds
/// the [`Reply`](super::Reply). Only answers to valid probes enter the run's
/// log, so the run-wide rules ("every response", "every result", every error
/// code) never see the 403 to a bad Origin or the 400 to a missing header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Valid,
    Invalid(Invalidity),
}

/// How a probe was made invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidity {
    /// A required header (Mcp-Method, Mcp-Name, MCP-Protocol-Version,
    /// Mcp-Param-*) left out.
    MissingHeader,
    /// A required header whose value differs from the body.
    HeaderMismatch,
    /// An `Origin` the server does not serve.
    Origin,
    /// A method the 2026-07-28 revision does not define (or removed).
    UnknownMethod,
    /// A protocol version other than 2026-07-28.
    UnsupportedVersion,
    /// A required `_meta` key (or `_meta` itself) left out.
    MissingMeta,
    /// A credential the server did not issue.
    ForeignCredential,
}

impl Intent {
    pub fn is_valid(self) -> bool {
        self == Self::Valid
    }
}

/// The methods a 2026-07-28 client may send (schema `ClientRequest`); any other
/// method name makes a probe [`Invalidity::UnknownMethod`].
pub const MODERN_METHODS: &[&str] = &[
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

/// Headers that mirror the body: changing or dropping one makes a probe invalid.
fn is_mirrored(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == H_METHOD
        || name == H_NAME
        || name == H_PROTOCOL_VERSION
        || name.starts_with(wire::H_PARAM_PREFIX)
}

/// One request, conforming until a rule bends it.
#[derive(Debug, Clone)]
pub struct Probe {
    pub method: String,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// A notification expects 202 and no body.
    pub notification: bool,
    /// Legacy (initialize-era) traffic is not judged by the run-wide rules.
    pub legacy: bool,
    /// Set by the builders below whenever they bend the request; never
    /// cleared once invalid.
    pub intent: Intent,
}

impl Probe {
    /// A conforming modern request: `_meta` with version, capabilities and
    /// client info, and every required header mirrored from the body.
    pub fn request(id: i64, method: &str, params: Value) -> Self {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        params.insert(
            "_meta".into(),
            json!({
                wire::META_PROTOCOL_VERSION: PROTOCOL_VERSION,
                wire::META_CLIENT_CAPABILITIES: {},
                wire::META_CLIENT_INFO: client_info(),
            }),
        );
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let intent = if MODERN_METHODS.contains(&method) {
            Intent::Valid
        } else {
            Intent::Invalid(Invalidity::UnknownMethod)
        };
        let mut probe = Self {
            method: method.to_owned(),
            body,
            headers: vec![
                ("accept".into(), ACCEPT_BOTH.into()),
                (H_PROTOCOL_VERSION.into(), PROTOCOL_VERSION.into()),
                (H_METHOD.into(), method.into()),
            ],
            notification: false,
            legacy: false,
            intent,
        };
        probe.mirror_name();
        probe
    }

    /// A notification POST (no id) with the request headers: the spec leaves
    /// headers on notifications undefined, so sending them is harmless.
    pub fn notification(method: &str, params: Value) -> Self {
        let mut probe = Self::request(0, method, params);
        if let Some(obj) = probe.body.as_object_mut() {
            obj.remove("id");
        }
        probe.notification = true;
        probe
    }

    /// Sets `Mcp-Name` from the body field it mirrors, encoded when needed.
    fn mirror_name(&mut self) {
        let Some(field) = wire::name_field(&self.method) else {
            return;
        };
        if let Some(value) = self
            .body
            .pointer(&format!("/params/{field}"))
            .and_then(Value::as_str)
        {
            let encoded = wire::encode_header_value(value);
            self.put_header(H_NAME, encoded);
        }
    }

    /// Marks the probe invalid (the first reason is kept).
    pub fn invalid(mut self, why: Invalidity) -> Self {
        self.mark(why);
        self
    }

    fn mark(&mut self, why: Invalidity) {
        if self.intent.is_valid() {
            self.intent = Intent::Invalid(why);
        }
    }

    /// Sets a header without judging what it does to the probe's intent.
    fn put_header(&mut self, name: &str, value: String) {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value));
    }

    /// Whether sending this probe a second time changes nothing on the
    /// server: a request whose body method only reads (discover, a list, a
    /// read, a get, a completion), or a `tools/call` of a name protocheck
    /// made up ([`crate::suite::mcp::survey::unknown_name`]), which no
    /// server runs, or of one of `read_only_tools` (annotated
    /// `readOnlyHint: true`). Over HTTP such a probe that met no answer at
    /// all is sent once more (see [`super::McpClient::send`]).
    pub fn may_be_sent_twice(&self, read_only_tools: &BTreeSet<String>) -> bool {
        if self.notification || self.legacy {
            return false;
        }
        match self.body.get("method").and_then(Value::as_str) {
            Some("tools/call") => self
                .body
                .pointer("/params/name")
                .and_then(Value::as_str)
                .is_some_and(|name| {
                    name.starts_with(UNKNOWN_NAME_PREFIX) || read_only_tools.contains(name)
                }),
            Some(method) => READ_ONLY_METHODS.contains(&method),
            None => false,
        }
    }

    pub fn id(&self) -> Option<&Value> {
        self.body.get("id")
    }

    /// Sets a header. A mirrored header given another value than it has makes
    /// the probe a header mismatch; an `Origin` (protocheck sends one only to
    /// probe Origin validation) or an `Authorization` of its own (a credential
    /// the server did not issue) make it invalid too.
    pub fn set_header(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        let lower = name.to_ascii_lowercase();
        if is_mirrored(&lower) && self.header(&lower) != Some(value.as_str()) {
            self.mark(Invalidity::HeaderMismatch);
        } else if lower == "origin" {
            self.mark(Invalidity::Origin);
        } else if lower == "authorization" {
            self.mark(Invalidity::ForeignCredential);
        }
        self.put_header(&lower, value);
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.set_header(name, value);
        self
    }

    pub fn without_header(mut self, name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        if is_mirrored(&name) && self.header(&name).is_some() {
            self.mark(Invalidity::MissingHeader);
        }
        self.headers.retain(|(n, _)| *n != name);
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn meta_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.body
            .pointer_mut("/params/_meta")
            .and_then(Value::as_object_mut)
    }

    pub fn with_meta(mut self, key: &str, value: Value) -> Self {
        if key == wire::META_PROTOCOL_VERSION && value.as_str() != Some(PROTOCOL_VERSION) {
            self.mark(Invalidity::UnsupportedVersion);
        }
        if let Some(meta) = self.meta_mut() {
            meta.insert(key.to_owned(), value);
        }
        self
    }

    pub fn without_meta(mut self, key: &str) -> Self {
        self.mark(Invalidity::MissingMeta);
        if let Some(meta) = self.meta_mut() {
            meta.remove(key);
        }
        self
    }

    /// Drops `params._meta` entirely.
    pub fn without_meta_object(mut self) -> Self {
        self.mark(Invalidity::MissingMeta);
        if let Some(params) = self.body.get_mut("params").and_then(Value::as_object_mut) {
            params.remove("_meta");
        }
        self
    }

    pub fn with_capabilities(self, capabilities: Value) -> Self {
        self.with_meta(wire::META_CLIENT_CAPABILITIES, capabilities)
    }

    /// Sets the `_meta` protocol version and the header to `version`.
    pub fn with_version(self, version: &str) -> Self {
        self.with_meta(wire::META_PROTOCOL_VERSION, json!(version))
            .with_header(H_PROTOCOL_VERSION, version)
    }

    /// Mirrors `x-mcp-header` arguments into `Mcp-Param-*` headers, as a
    /// conforming client must for a tool with that input schema.
    pub fn with_param_headers(mut self, input_schema: &Value) -> Self {
        let arguments = self
            .body
            .pointer("/params/arguments")
            .cloned()
            .unwrap_or(Value::Null);
        // Mirroring the body is what a conforming client does: still valid.
        for (name, value) in wire::param_headers(input_schema, &arguments) {
            self.put_header(&name, value);
        }
        self
    }

    pub fn with_params_field(mut self, key: &str, value: Value) -> Self {
        if let Some(params) = self.body.get_mut("params").and_then(Value::as_object_mut) {
            params.insert(key.to_owned(), value);
        }
        self
    }

    /// Replaces the body's `method` without touching the headers.
    pub fn with_body_method(mut self, method: &str) -> Self {
        if method != self.method {
            self.mark(Invalidity::HeaderMismatch);
        }
        if let Some(obj) = self.body.as_object_mut() {
            obj.insert("method".into(), json!(method));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_probes_that_change_nothing_may_be_sent_twice() {
        let made_up = format!("{UNKNOWN_NAME_PREFIX}tool-0000abcd");
        let none = BTreeSet::new();
        let echo_read_only = BTreeSet::from(["echo".to_owned()]);
        assert!(Probe::request(1, "server/discover", json!({})).may_be_sent_twice(&none));
        assert!(
            Probe::request(2, "resources/read", json!({"uri": "x:/a"})).may_be_sent_twice(&none)
        );
        assert!(
            Probe::request(3, "tools/call", json!({"name": made_up, "arguments": {}}))
                .without_header(H_METHOD)
                .may_be_sent_twice(&none)
        );
        // A listed tool may do something each time it runs, unless it is
        // annotated read-only.
        let echo = Probe::request(4, "tools/call", json!({"name": "echo", "arguments": {}}));
        assert!(!echo.may_be_sent_twice(&none));
        assert!(echo.may_be_sent_twice(&echo_read_only));
        assert!(
            !Probe::notification("notifications/cancelled", json!({})).may_be_sent_twice(&none)
        );
        // What the server reads is the body's method, not the header's.
        assert!(
            !Probe::request(5, "tools/list", json!({}))
                .with_body_method("tools/call")
                .may_be_sent_twice(&none)
        );
    }

    #[test]
    fn probes_mirror_the_body_into_headers() {
        let probe = Probe::request(7, "tools/call", json!({"name": "météo", "arguments": {}}));
        assert_eq!(probe.header("mcp-method"), Some("tools/call"));
        assert_eq!(probe.header("mcp-protocol-version"), Some(PROTOCOL_VERSION));
        // A name outside the header-safe set travels Base64-encoded.
        assert_eq!(
            probe.header("mcp-name"),
            Some(wire::sentinel("météo").as_str())
        );
        assert_eq!(
            probe
                .body
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"),
            Some(&json!(PROTOCOL_VERSION))
        );
        let bent = probe
            .without_header("MCP-Method")
            .without_meta(wire::META_PROTOCOL_VERSION);
        assert_eq!(bent.header("mcp-method"), None);
        assert!(
            bent.body
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_none()
        );
        let note = Probe::notification("notifications/cancelled", json!({}));
        assert!(note.notification && note.id().is_none());
    }
}
