//! The MCP 2026-07-28 wire vocabulary shared by the suite's client, its rules
//! and the reference server: header and `_meta` names, error codes, the Base64
//! sentinel encoding of header values, and the `x-mcp-header` walk over a tool's
//! input schema.

use serde_json::Value;

/// The revision this suite judges against (schema `LATEST_PROTOCOL_VERSION`).
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// The newest legacy (initialize-based) revision, used for the era probe.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// Legacy revisions a dual-era server may list (versioning page, "Terminology").
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Request headers, lower-case as HTTP/2 and hyper send them.
pub const H_PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub const H_METHOD: &str = "mcp-method";
pub const H_NAME: &str = "mcp-name";
pub const H_PARAM_PREFIX: &str = "mcp-param-";
pub const H_SESSION_ID: &str = "mcp-session-id";
pub const H_LAST_EVENT_ID: &str = "last-event-id";
pub const H_ACCEL_BUFFERING: &str = "x-accel-buffering";
/// A client MUST list both media types (streamable-http, "Sending Messages" 2).
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// JSON-RPC error codes the 2026-07-28 revision names (basic/index#error-codes).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const HEADER_MISMATCH: i64 = -32020;
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// Retired: resource not found before 2026-07-28 (now -32602).
    pub const RETIRED_RESOURCE_NOT_FOUND: i64 = -32002;
    /// Retired: URL elicitation required (2025-11-25 only).
    pub const RETIRED_URL_ELICITATION: i64 = -32042;
    /// The legacy implementation-defined sub-range, `-32000..=-32019`.
    pub const LEGACY_RANGE: std::ops::RangeInclusive<i64> = -32019..=-32000;
    /// The sub-range reserved for the MCP specification, `-32099..=-32020`.
    pub const RESERVED_RANGE: std::ops::RangeInclusive<i64> = -32099..=-32020;
}

/// A JSON number as an integer, the way JSON Schema 2020-12 reads one: any
/// number with a zero fractional part (`30000.0` is the integer 30000;
/// json-schema-core §6.3, "integer"). Every integer a target sends is read
/// through this, never through `as_i64`/`as_u64` alone, which refuse `30000.0`.
pub fn as_integer(value: &Value) -> Option<i64> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    if n.as_u64().is_some() {
        // Beyond i64: still an integer, but larger than anything judged here.
        return Some(i64::MAX);
    }
    let f = n.as_f64()?;
    // ±2^63 bounds the cast; beyond it a float is far past every limit judged.
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
}

/// Whether an HTTP answer refused the request before any JSON-RPC handling:
/// a status that speaks for itself (401, 403, 404, 405, 429, 5xx) with a
/// body that is no JSON-RPC message (an OAuth error such as
/// `{"error":"invalid_token"}`, a proxy's page, nothing). Such an answer is
/// judged by the rules about its status (authorization, rate limits,
/// availability), never by the rules about JSON-RPC messages: nothing in it
/// claims to be one. Both MCP revisions read answers through this.
pub fn http_refusal(status: Option<u16>, message: Option<&Value>) -> bool {
    let Some(status) = status else {
        return false;
    };
    matches!(status, 401 | 403 | 404 | 405 | 429 | 500..=599)
        && !message.is_some_and(claims_json_rpc)
}

/// Whether a JSON body presents itself as a JSON-RPC message (or a batch of
/// them), however badly: a `jsonrpc`, `id`, `result` or `method` member, or
/// an `error` that is an object. A string `error` is OAuth's (RFC 6750 §3),
/// not JSON-RPC's.
fn claims_json_rpc(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(claims_json_rpc),
        Value::Object(o) => {
            ["jsonrpc", "id", "result", "method"]
                .iter()
                .any(|k| o.contains_key(*k))
                || o.get("error").is_some_and(Value::is_object)
        }
        _ => false,
    }
}

/// How the target's authorization refused a request before the request was
/// looked at: a probe so answered is no evidence for the rule it was sent for
/// (authorization, "Scope Challenge Handling" lets a server check a token's
/// scope before anything else, and a 401 before any handler is what a
/// protected method answers). Both MCP revisions read answers through
/// [`auth_refusal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthRefusal {
    /// 403 with a Bearer challenge whose `error` is `insufficient_scope`: the
    /// token lacks a scope; the scopes the challenge asks for, when it names
    /// them (clipped: the target wrote them).
    Scope(Option<String>),
    /// 401 with a Bearer challenge: the method needs (other) authorization.
    Unauthorized,
}

// Where the target's authorization left a rule unjudged, the finding says so
// in the words `grade` reads (the verdict names those rules).
pub use crate::suite::grade::{LACKS_SCOPE, NEEDS_AUTHORIZATION};

/// What the target's authorization left unjudged, for a finding: `` the
/// token lacks the scope for `tools/call` (`mcp:read mcp:tools` asked) ``,
/// `` `tools/call` needs authorization (HTTP 401) ``, clauses joined by `; `.
/// `refused` pairs each refused method with its refusal, in the order sent;
/// a method is named once per refusal.
pub fn unreached_text(refused: &[(String, AuthRefusal)]) -> String {
    let mut groups: Vec<(&AuthRefusal, Vec<String>)> = Vec::new();
    for (method, refusal) in refused {
        let shown = format!("`{method}`");
        match groups.iter_mut().find(|(r, _)| *r == refusal) {
            Some((_, methods)) => {
                if !methods.contains(&shown) {
                    methods.push(shown);
                }
            }
            None => groups.push((refusal, vec![shown])),
        }
    }
    let clauses: Vec<String> = groups
        .into_iter()
        .map(|(refusal, methods)| match refusal {
            AuthRefusal::Scope(Some(scope)) => {
                format!("{LACKS_SCOPE}{} (`{scope}` asked)", methods.join(", "))
            }
            AuthRefusal::Scope(None) => format!(
                "{LACKS_SCOPE}{} (HTTP 403 insufficient_scope; the challenge names no scope)",
                methods.join(", ")
            ),
            AuthRefusal::Unauthorized => format!(
                "{} {} {NEEDS_AUTHORIZATION}",
                methods.join(", "),
                if methods.len() == 1 { "needs" } else { "need" }
            ),
        })
        .collect();
    clauses.join("; ")
}

/// The methods whose `Mcp-Name` header mirrors a body field, and that field
/// (streamable-http#standard-request-headers).
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// Whether `value` can travel as a plain header value: visible ASCII, space and
/// tab only, no leading or trailing whitespace, and not itself shaped like the
/// sentinel (streamable-http#value-encoding).
pub fn is_plain_header_safe(value: &str) -> bool {
    let bytes = value.as_bytes();
    let visible = bytes
        .iter()
        .all(|&b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t');
    let trimmed =
        !matches!(bytes.first(), Some(b' ' | b'\t')) && !matches!(bytes.last(), Some(b' ' | b'\t'));
    visible && trimmed && !looks_like_sentinel(value)
}

fn looks_like_sentinel(value: &str) -> bool {
    value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX)
}

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// The header form of `value`: as-is when safe, else the Base64 sentinel.
pub fn encode_header_value(value: &str) -> String {
    if is_plain_header_safe(value) {
        value.to_owned()
    } else {
        sentinel(value)
    }
}

/// Always the sentinel form, `=?base64?…?=`, of the UTF-8 bytes of `value`.
pub fn sentinel(value: &str) -> String {
    format!(
        "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
        base64_encode(value.as_bytes())
    )
}

/// Decodes a header value that may carry the sentinel. A value without both
/// markers (or with upper-case ones) is literal text; a sentinel whose payload
/// is not valid padded Base64 of UTF-8 is an error.
pub fn decode_header_value(value: &str) -> Result<String, String> {
    if value.len() >= SENTINEL_PREFIX.len() + SENTINEL_SUFFIX.len() && looks_like_sentinel(value) {
        let inner = &value[SENTINEL_PREFIX.len()..value.len() - SENTINEL_SUFFIX.len()];
        let bytes = base64_decode(inner).ok_or("the Base64 payload is malformed")?;
        return String::from_utf8(bytes).map_err(|_| "the decoded value is not UTF-8".to_owned());
    }
    Ok(value.to_owned())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard Base64 with padding (RFC 4648 §4), the alphabet of the spec's examples.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Base64url without padding (RFC 4648 §5), as JWT segments use it.
pub fn base64url_encode(bytes: &[u8]) -> String {
    base64_encode(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// Decodes unpadded base64url.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    if text.contains(['+', '/', '=']) {
        return None;
    }
    let mut standard = text.replace('-', "+").replace('_', "/");
    while !standard.len().is_multiple_of(4) {
        standard.push('=');
    }
    base64_decode(&standard)
}

/// Strict decoding: length a multiple of four, padding only at the end.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.len() / 4;
    for (q, quad) in bytes.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && q + 1 != quads) {
            return None;
        }
        let mut n: u32 = 0;
        for &c in &quad[..4 - pad] {
            let v = B64.iter().position(|&a| a == c)? as u32;
            n = (n << 6) | v;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

/// RFC 9110 `tchar`.
pub fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// One `x-mcp-header` annotation found in a tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderAnnotation {
    /// The annotation's raw value (not necessarily a string).
    pub value: Value,
    /// Property names from the root when the annotation sits on a chain made only
    /// of `properties` keys; `None` when it is reachable any other way.
    pub path: Option<Vec<String>>,
    /// Where it sits, as a JSON pointer into `inputSchema`, for messages.
    pub pointer: String,
    /// The annotated schema's `type` keyword.
    pub schema_type: Option<Value>,
    /// The one type the annotated property's values can have, as JSON Schema
    /// 2020-12 reads the property schema (see [`value_type`]); `None` when no
    /// single type follows.
    pub value_type: Option<String>,
}

impl HeaderAnnotation {
    /// The header name suffix when the annotation is a string.
    pub fn name(&self) -> Option<&str> {
        self.value.as_str()
    }
}

/// Keywords whose value is one subschema (JSON Schema 2020-12 core/applicator).
const SUBSCHEMA_ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas.
const SUBSCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Bounds on the walk: a hostile schema must not make it run away.
const MAX_WALK_DEPTH: usize = 64;
const MAX_WALK_NODES: usize = 20_000;

/// Every `x-mcp-header` annotation in `schema`, reachable or not, in document order.
pub fn header_annotations(schema: &Value) -> Vec<HeaderAnnotation> {
    let mut found = Vec::new();
    let mut budget = MAX_WALK_NODES;
    walk(
        schema,
        Some(Vec::new()),
        String::new(),
        0,
        &mut budget,
        &mut found,
    );
    for a in &mut found {
        let node = if a.pointer == "/" {
            Some(schema)
        } else {
            schema.pointer(&a.pointer)
        };
        a.value_type = node.and_then(|n| value_type(n, schema, 0));
    }
    found
}

/// Most local `$ref` hops followed when typing a property.
const MAX_REF_HOPS: usize = 8;

/// The one JSON type the values of the property schema `node` can have, read
/// as JSON Schema 2020-12 reads it, for the x-mcp-header type rule
/// (streamable-http#schema-extension: "integer, string, boolean" properties).
///
/// Decisions (the spec names the types but not how they are declared):
/// - `type: ["string", "null"]`: null is "no value", for which the client
///   sends no header (streamable-http#schema-extension: absent or null ⇒
///   header omitted), so one allowed type plus null is that type.
/// - no `type`, a local `$ref` (`#…`): the referenced schema's type; `$ref` is
///   an applicator beside its siblings in 2020-12, so the property admits only
///   what the target admits. Remote `$ref`s are never fetched (MCP-SEC-005):
///   no type.
/// - no `type`, only `enum` (or `const`): the type all its non-null values
///   share (an enum of strings admits only strings); mixed values: no type.
pub fn value_type(node: &Value, root: &Value, hops: usize) -> Option<String> {
    let obj = node.as_object()?;
    match obj.get("type") {
        Some(Value::String(t)) => return Some(t.clone()),
        Some(Value::Array(ts)) => {
            let real: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            return (real.len() == 1 && ts.iter().all(Value::is_string))
                .then(|| real[0].to_owned());
        }
        Some(_) => return None,
        None => {}
    }
    if let Some(Value::String(reference)) = obj.get("$ref")
        && let Some(pointer) = reference.strip_prefix('#')
        && hops < MAX_REF_HOPS
    {
        let target = if pointer.is_empty() {
            Some(root)
        } else {
            root.pointer(pointer)
        };
        return value_type(target?, root, hops + 1);
    }
    let values: Vec<&Value> = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(list)), _) => list.iter().collect(),
        (None, Some(c)) => vec![c],
        _ => return None,
    };
    let kinds: std::collections::BTreeSet<&str> = values
        .iter()
        .filter(|v| !v.is_null())
        .map(|v| match v {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            n @ Value::Number(_) if as_integer(n).is_some() => "integer",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            _ => "object",
        })
        .collect();
    (kinds.len() == 1)
        .then(|| kinds.into_iter().next().map(str::to_owned))
        .flatten()
}

fn walk(
    node: &Value,
    path: Option<Vec<String>>,
    pointer: String,
    depth: usize,
    budget: &mut usize,
    found: &mut Vec<HeaderAnnotation>,
) {
    let Some(obj) = node.as_object() else { return };
    if depth > MAX_WALK_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    if let Some(value) = obj.get("x-mcp-header") {
        found.push(HeaderAnnotation {
            value: value.clone(),
            // The root itself carries no property value to mirror.
            path: path.clone().filter(|p| !p.is_empty()),
            pointer: if pointer.is_empty() {
                "/".to_owned()
            } else {
                pointer.clone()
            },
            schema_type: obj.get("type").cloned(),
            value_type: None,
        });
    }
    for (key, child) in obj {
        let child_pointer = format!("{pointer}/{}", escape_pointer(key));
        if SUBSCHEMA_MAP.contains(&key.as_str()) {
            if let Some(map) = child.as_object() {
                for (name, sub) in map {
                    let sub_path = if key == "properties" {
                        path.clone().map(|mut p| {
                            p.push(name.clone());
                            p
                        })
                    } else {
                        None
                    };
                    let sub_pointer = format!("{child_pointer}/{}", escape_pointer(name));
                    walk(sub, sub_path, sub_pointer, depth + 1, budget, found);
                }
            }
        } else if SUBSCHEMA_LIST.contains(&key.as_str()) && child.is_array() {
            for (i, sub) in child.as_array().into_iter().flatten().enumerate() {
                walk(
                    sub,
                    None,
                    format!("{child_pointer}/{i}"),
                    depth + 1,
                    budget,
                    found,
                );
            }
        } else if SUBSCHEMA_ONE.contains(&key.as_str()) {
            walk(child, None, child_pointer, depth + 1, budget, found);
        }
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The value at `path` inside `arguments`, if present and not null.
pub fn value_at<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut node = arguments;
    for step in path {
        node = node.get(step)?;
    }
    (!node.is_null()).then_some(node)
}

/// The header text of an argument value: strings as-is, integers in decimal,
/// booleans as `true`/`false` (streamable-http#value-encoding, "Type conversion").
pub fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
            .map(|f| format!("{}", f as i64)),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers a conforming client sends for `arguments` of a tool
/// with `input_schema`: only valid, statically reachable, string-named annotations.
pub fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    header_annotations(input_schema)
        .into_iter()
        .filter_map(|a| {
            let name = a.name()?;
            let path = a.path.as_ref()?;
            if name.is_empty() || !name.chars().all(is_tchar) {
                return None;
            }
            let text = header_text(value_at(arguments, path)?)?;
            Some((
                format!("{H_PARAM_PREFIX}{}", name.to_ascii_lowercase()),
                encode_header_value(&text),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_http_refusal_without_a_json_rpc_body_is_no_json_rpc_answer() {
        use serde_json::json;
        let oauth = json!({"error": "invalid_token", "error_description": "expired"});
        for status in [401, 403, 404, 405, 429, 500, 503] {
            assert!(http_refusal(Some(status), Some(&oauth)), "{status}");
            assert!(http_refusal(Some(status), None), "{status} without JSON");
        }
        // A JSON-RPC error in a refusal is a JSON-RPC message, judged as one.
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}});
        assert!(!http_refusal(Some(401), Some(&rpc)));
        assert!(!http_refusal(
            Some(404),
            Some(&json!({"error": {"code": 1}}))
        ));
        assert!(!http_refusal(Some(500), Some(&json!([{"id": 1}]))));
        // Other statuses, and stdio, are answers.
        assert!(!http_refusal(Some(400), Some(&oauth)));
        assert!(!http_refusal(Some(200), Some(&oauth)));
        assert!(!http_refusal(None, Some(&oauth)));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn sentinel_examples_from_the_spec() {
        // The encoding table of streamable-http#value-encoding.
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn decoding_round_trips_and_rejects_bad_payloads() {
        for s in ["", "a", "ab", "abc", "Hello, 世界", "=?base64?literal?="] {
            assert_eq!(decode_header_value(&sentinel(s)).as_deref(), Ok(s));
        }
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_err());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_err());
        // Upper-case markers or a missing suffix: literal text.
        assert_eq!(
            decode_header_value("=?BASE64?SGVsbG8=?=").as_deref(),
            Ok("=?BASE64?SGVsbG8=?=")
        );
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").as_deref(),
            Ok("=?base64?SGVsbG8=")
        );
    }

    #[test]
    fn annotations_know_whether_they_are_statically_reachable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "nested": {"type": "object", "properties": {
                    "zone": {"type": "integer", "x-mcp-header": "Zone"}
                }},
                "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}
            },
            "anyOf": [{"properties": {"alt": {"type": "string", "x-mcp-header": "Alt"}}}]
        });
        let found = header_annotations(&schema);
        let by_name = |n: &str| {
            found
                .iter()
                .find(|a| a.name() == Some(n))
                .expect("annotation")
                .path
                .clone()
        };
        assert_eq!(by_name("Region"), Some(vec!["region".to_owned()]));
        assert_eq!(
            by_name("Zone"),
            Some(vec!["nested".to_owned(), "zone".to_owned()])
        );
        assert_eq!(by_name("Item"), None);
        assert_eq!(by_name("Alt"), None);
        let mut headers = param_headers(
            &schema,
            &json!({"region": "eu", "nested": {"zone": 3}, "list": ["x"]}),
        );
        headers.sort();
        assert_eq!(
            headers,
            [
                ("mcp-param-region".to_owned(), "eu".to_owned()),
                ("mcp-param-zone".to_owned(), "3".to_owned())
            ]
        );
    }
}

#[cfg(test)]
mod value_type_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotated_properties_are_typed_as_json_schema_reads_them() {
        let schema = json!({
            "type": "object",
            "$defs": {"Region": {"type": "string"}, "Alias": {"$ref": "#/$defs/Region"}},
            "properties": {
                "a": {"$ref": "#/$defs/Region", "x-mcp-header": "A"},
                "b": {"$ref": "#/$defs/Alias", "x-mcp-header": "B"},
                "c": {"enum": ["eu", "us", null], "x-mcp-header": "C"},
                "d": {"type": ["string", "null"], "x-mcp-header": "D"},
                "e": {"enum": [1, 2.0], "x-mcp-header": "E"},
                "f": {"enum": ["x", 1], "x-mcp-header": "F"},
                "g": {"type": ["string", "integer"], "x-mcp-header": "G"},
                "h": {"$ref": "https://example.com/s.json", "x-mcp-header": "H"},
                "i": {"type": "number", "x-mcp-header": "I"},
                "j": {"const": true, "x-mcp-header": "J"}
            }
        });
        let types: Vec<(String, Option<String>)> = header_annotations(&schema)
            .into_iter()
            .map(|a| (a.name().unwrap_or_default().to_owned(), a.value_type))
            .collect();
        let expected = [
            ("A", Some("string")),
            ("B", Some("string")),
            ("C", Some("string")),
            ("D", Some("string")),
            ("E", Some("integer")),
            ("F", None),
            ("G", None),
            ("H", None),
            ("I", Some("number")),
            ("J", Some("boolean")),
        ];
        for (name, want) in expected {
            let got = types
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.clone());
            assert_eq!(got, Some(want.map(str::to_owned)), "{name}");
        }
        assert_eq!(as_integer(&json!(30000.0)), Some(30000));
        assert_eq!(as_integer(&json!(0.5)), None);
        assert_eq!(as_integer(&json!(-32601)), Some(-32601));
    }
}
