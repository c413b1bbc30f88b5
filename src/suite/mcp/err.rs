//! ERR — error codes (basic/index#error-codes and #meta; streamable-http,
//! "Protocol Version Header"; resources#error-handling).
//!
//! ERR-004, 005 and 008 are run-wide: every error seen during the run counts.

use super::client::{Invalidity, Probe, Reply, Seen, client_info, clip, some};
use super::era::Era;
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session, Unreached};
use super::survey::{send_family, unknown_name};
use super::wire::{self, code};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const UNSUPPORTED_VERSION: McpRule = McpRule::new(
    "MCP-ERR-001",
    "Unsupported version returns -32022 with data.supported[]",
    Keyword::Must,
    Outcome::Fail,
    // The error-codes table defines -32022 and its data for every transport;
    // the HTTP 400 beside it is Streamable HTTP's alone (the help says so).
    spec!("/basic/index#error-codes"),
    "ERR",
    |s| unsupported_version(s).boxed(),
)
.says("an unsupported protocol version MUST be answered with -32022 whose data lists supported versions and echoes requested (over Streamable HTTP with status 400)")
.help(
    "For each method family the server serves, protocheck sends an otherwise valid request with \
     `MCP-Protocol-Version` and `_meta` both set to `1900-01-01` and expects HTTP 400 with \
     JSON-RPC error -32022 whose `data.supported` is a non-empty array of versions and \
     `data.requested` echoes `1900-01-01`; over stdio, where there is no status, the same error.",
    "The server ignores the version and serves the request, refuses it with a generic -32600 or \
     -32602, or returns -32022 without `data.supported` or `data.requested`; sometimes the error \
     comes with HTTP 200.",
    "Check the requested version before dispatch; when it is not one you support, answer HTTP 400 \
     with code -32022 and `data` holding `supported` (e.g. `[\"2026-07-28\"]`) and `requested` \
     (the version the client sent).",
);

pub(crate) const UNKNOWN_METHOD: McpRule = McpRule::new(
    "MCP-ERR-002",
    "Unknown method returns HTTP 404 and JSON-RPC -32601",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#protocol-version-header"),
    "ERR",
    |s| unknown_method(s).boxed(),
)
.says("a method the server does not implement (an unknown one, or one 2026-07-28 removed: initialize, ping, logging/setLevel, resources/subscribe, resources/unsubscribe) MUST be answered HTTP 404 with JSON-RPC -32601")
.help(
    "protocheck sends a valid request for a made-up method, then as valid 2026-07-28 requests \
     each method the revision removed: `initialize` (asking for 2026-07-28), `ping`, \
     `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe`. Each must get HTTP \
     404 with -32601 (over stdio, -32601); a result is noted for the DEP rules.",
    "Most often the server answers -32601 with HTTP 200 or 400, as JSON-RPC libraries do by \
     default, or answers -32600; a removed method may also get some other error, such as a header \
     or session error, instead of \"method not found\".",
    "When no handler exists for a method, answer HTTP 404 with a JSON-RPC error -32601 (Method \
     not found); mapping that error to 404 in the transport layer gives removed methods the same \
     answer.",
)
// Its probe may be the first request on a pooled connection: a server failing
// STL-003 refuses it for that, not because the method is unknown, and the
// verdict would depend on which connection the pool picked (§15.4).
.requires(&[super::stl::COLD_ID]);

pub(crate) const RESOURCE_NOT_FOUND: McpRule = McpRule::new(
    "MCP-ERR-003",
    "Resource-not-found uses -32602, not the retired -32002",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/server/resources#error-handling"),
    "ERR",
    |s| resource_not_found(s).boxed(),
)
.says("a missing resource is answered -32602; the retired -32002 MUST NOT be emitted")
.help(
    "protocheck sends `resources/read` for a URI that does not exist (a listed resource's URI \
     with a random suffix, or a `protocheck://missing/...` URI) and expects JSON-RPC error \
     -32602; the retired -32002, another error, or a result with empty `contents` fails.",
    "The server still uses the 2025-era -32002 \"Resource not found\" code, returns an empty \
     `contents` array for an unknown URI, or lets the read handler throw so the answer is -32603.",
    "Answer a read of an unknown URI with JSON-RPC error -32602 (Invalid params), optionally with \
     `data.uri` naming the URI, and replace every remaining use of -32002, shared error helpers \
     included.",
);

pub(crate) const NO_32042: McpRule = McpRule::new(
    "MCP-ERR-004",
    "The retired -32042 code is never emitted",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/index#error-codes"),
    "ERR",
    |s| no_32042(s).boxed(),
)
.says("the retired -32042 MUST NOT be emitted by a 2026-07-28 implementation")
.help(
    "After every other rule, protocheck reads the error code of every answer to the run's valid \
     requests and looks for -32042, the 2025-11-25 \"URL elicitation required\" code.",
    "A tool still asks for a URL elicitation the 2025-11-25 way, usually through an SDK helper or \
     a hard-coded error written before 2026-07-28; clients of this revision give the code no \
     meaning.",
    "Ask for input with an `input_required` result carrying the elicitation request, or answer \
     -32021 with `data.requiredCapabilities` when the client did not declare the capability; \
     never emit -32042.",
)
.run_wide();

pub(crate) const RESERVED_RANGE: McpRule = McpRule::new(
    "MCP-ERR-005",
    "No undefined code is emitted in the reserved -32020…-32099 range",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/index#error-codes"),
    "ERR",
    |s| reserved_range(s).boxed(),
)
.says("implementations MUST NOT emit codes in -32020..-32099 other than -32020, -32021 and -32022")
.help(
    "After every other rule, protocheck reads the error code of every answer to the run's valid \
     requests and looks for codes from -32020 to -32099 other than -32020, -32021 and -32022 \
     (-32042 is left to MCP-ERR-004).",
    "The server uses the reserved range for its own errors, most often application codes picked \
     close to the JSON-RPC ones (such as -32050 for a rate limit), or codes taken from a draft of \
     the specification.",
    "For application errors use a standard JSON-RPC code (-32600, -32601, -32602, -32603) or an \
     implementation-defined code outside -32768 to -32000, and leave -32020 to -32099 to the \
     codes the specification defines.",
)
.run_wide();

pub(crate) const MISSING_META: McpRule = McpRule::new(
    "MCP-ERR-006",
    "Missing required _meta field returns HTTP 400 + JSON-RPC -32602",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#meta"),
    "ERR",
    |s| missing_meta(s).boxed(),
)
.says("a request missing a required _meta field MUST be answered HTTP 400 with -32602")
.help(
    "For each method family the server serves, protocheck sends three requests, each on a new \
     connection: `_meta` without `io.modelcontextprotocol/protocolVersion`, `_meta` without \
     `io.modelcontextprotocol/clientCapabilities`, and no `_meta` at all. Each must get HTTP 400 \
     with -32602; -32020 is accepted where the version is missing.",
    "The server fills in defaults and serves the request (most often for a missing \
     `clientCapabilities`), refuses with -32600 or another status than 400, or lets a missing \
     `_meta` crash the handler into -32603.",
    "Validate `params._meta` before dispatch and refuse a request lacking \
     `io.modelcontextprotocol/protocolVersion` or `io.modelcontextprotocol/clientCapabilities` \
     with HTTP 400 and JSON-RPC -32602 naming the missing field.",
);

pub(crate) const MISSING_CAPABILITY: McpRule = McpRule::new(
    "MCP-ERR-007",
    "Missing client capability returns -32021 with data.requiredCapabilities",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#meta"),
    "ERR",
    |s| missing_capability(s).boxed(),
)
.says("a request needing a client capability it did not declare MUST be answered HTTP 400 with -32021 and data.requiredCapabilities")
.help(
    "protocheck reads the survey's calls of the tools it may run (annotated read-only, or any \
     with `allow_tool_calls`), each first sent with empty `clientCapabilities`. A -32021 answer \
     needs status 400 and a non-empty `data.requiredCapabilities` object; an `input_required` \
     result asking for elicitation, sampling or roots fails.",
    "The tool asks for elicitation, sampling or roots without checking that the request declared \
     the capability, or reports the missing capability with a list of names, an empty object or \
     HTTP 200. Skipped when no called tool needed a capability.",
    "Before asking for input, check the request's `io.modelcontextprotocol/clientCapabilities`; \
     when a needed capability is missing, answer HTTP 400 with -32021 and \
     `data.requiredCapabilities` as an object, e.g. `{\"elicitation\": {}}`.",
);

pub(crate) const LEGACY_RANGE: McpRule = McpRule::new(
    "MCP-ERR-008",
    "New implementation-defined codes avoid the legacy -32000…-32019 range",
    Keyword::ShouldNot,
    Outcome::Warn,
    spec!("/basic/index#error-codes"),
    "ERR",
    |s| legacy_range(s).boxed(),
)
.says("new implementations SHOULD NOT emit codes in the legacy -32000..-32019 range")
.help(
    "After every other rule, protocheck reads the error code of every answer to the run's valid \
     requests and looks for codes from -32000 to -32019 (the retired -32002 is left to \
     MCP-ERR-003).",
    "The server uses -32000 (\"Server error\") or a nearby code as a catch-all, a habit carried \
     over from many JSON-RPC libraries; receivers give codes in this range no meaning.",
    "For new errors use a standard JSON-RPC code such as -32602 or -32603, or an \
     implementation-defined code outside -32768 to -32000, and put the details in `message` and \
     `data`.",
)
.run_wide();

pub(crate) const RULES: &[McpRule] = &[
    UNSUPPORTED_VERSION,
    UNKNOWN_METHOD,
    RESOURCE_NOT_FOUND,
    NO_32042,
    RESERVED_RANGE,
    MISSING_META,
    MISSING_CAPABILITY,
    LEGACY_RANGE,
];

/// The namespaces of the 2026-07-28 methods, each given an unknown method by
/// MCP-ERR-002.
const UNKNOWN_NAMESPACES: [&str; 6] = [
    "server",
    "tools",
    "resources",
    "prompts",
    "completion",
    "subscriptions",
];

/// Versions no server implements: a long-past one (the versioning page's
/// own example) and a well-formed future one, so that a server refusing only
/// versions that look unknown, or only those before its own, is caught.
const UNSUPPORTED: [&str; 2] = ["1900-01-01", "2099-12-31"];

async fn unsupported_version(s: &Session) -> Judgement {
    // Every method family the server serves: a server that checks the version
    // on some methods only lets the others through.
    let mut methods = Vec::new();
    let mut readings = Vec::new();
    let families = s.family_probes();
    let mut sends = Vec::new();
    for version in UNSUPPORTED {
        for template in &families {
            let mut probe = template.clone();
            probe.body["id"] = json!(s.client.next_id());
            sends.push(async move {
                let method = probe.method.clone();
                let reply = send_family(&s.client, &probe.with_version(version)).await;
                (method, version, reply)
            });
        }
    }
    // The probes are independent (see `Session::each`); judged in order.
    let mut unreached = Unreached::default();
    for (method, version, reply) in s.each(sends).await {
        if unreached.refused(&method, &reply) {
            continue;
        }
        match judge_unsupported(s, &reply, version) {
            Ok(reading) => {
                if !reading.is_empty() && !readings.contains(&reading) {
                    readings.push(reading);
                }
                let shown = format!("`{method}`");
                if !methods.contains(&shown) {
                    methods.push(shown);
                }
            }
            Err(problems) => {
                return Judgement::fail(format!(
                    "`{method}` for protocol version {version}: {}; an unsupported version \
                     MUST be answered {}with UnsupportedProtocolVersionError (-32022) whose \
                     data lists `supported` versions and echoes `requested`",
                    problems.join("; "),
                    http_400(s, " ")
                ))
                .reply(&reply);
            }
        }
    }
    if methods.is_empty() {
        return unreached.skip();
    }
    Judgement::pass(format!(
        "{} for versions {} were each refused with {}-32022 and the supported \
         versions{}{}",
        methods.join(", "),
        UNSUPPORTED.join(" and "),
        http_400(s, ", "),
        readings.join(""),
        unreached.note()
    ))
}

/// Judges one answer to a request for an unsupported version: the reading of
/// `data.supported` the server chose, or what is wrong.
fn judge_unsupported(s: &Session, reply: &Reply, requested: &str) -> Result<String, Vec<String>> {
    let mut problems = Vec::new();
    // Which reading of `data.supported` the server chose (§15.8): said in the
    // finding, never judged. No sentence of the spec requires `supported` to be
    // a subset of server/discover's `supportedVersions` (the spec's own
    // examples differ: basic/index#error-codes lists 2025-11-25 in it), so a
    // server may name legacy revisions it still speaks (§15 amendment).
    let mut reading = String::new();
    if !reply.status_is(400) {
        problems.push(format!(
            "the HTTP status was {} instead of 400",
            reply.status.map_or("missing".to_owned(), |s| s.to_string())
        ));
    }
    if reply.error_code() != Some(code::UNSUPPORTED_PROTOCOL_VERSION) {
        problems.push(format!(
            "the answer was {} instead of JSON-RPC error -32022",
            reply.describe()
        ));
    } else {
        let data = reply.error().and_then(|e| e.get("data"));
        match data.and_then(|d| d.get("supported")) {
            Some(Value::Array(list)) if !list.is_empty() && list.iter().all(Value::is_string) => {
                let listed: Vec<String> = list
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|v| super::client::clip(v, 40))
                    .collect();
                let extra: Vec<String> = match s.supported_versions() {
                    Some(advertised) => listed
                        .iter()
                        .filter(|v| !advertised.iter().any(|a| a == *v))
                        .cloned()
                        .collect(),
                    None => Vec::new(),
                };
                reading = if extra.is_empty() {
                    format!(
                        "; data.supported lists {}",
                        super::client::some(&listed, 6, ", ")
                    )
                } else {
                    format!(
                        "; data.supported lists {}, including {} that server/discover's \
                         supportedVersions does not (the spec allows either reading)",
                        super::client::some(&listed, 6, ", "),
                        super::client::some(&extra, 4, ", ")
                    )
                };
            }
            Some(other) => problems.push(format!(
                "data.supported is {}, not a non-empty array of versions",
                super::client::clip(&other.to_string(), 80)
            )),
            None => problems.push(
                "the error has no data.supported listing the versions the server supports".into(),
            ),
        }
        if data
            .and_then(|d| d.get("requested"))
            .and_then(Value::as_str)
            != Some(requested)
        {
            problems.push(format!("data.requested does not echo \"{requested}\""));
        }
    }
    if problems.is_empty() {
        Ok(reading)
    } else {
        Err(problems)
    }
}

/// The methods 2026-07-28 removed (changelog), each as a valid 2026-07-28
/// request would carry it: headers and `_meta` right, `initialize` asking for
/// 2026-07-28 itself, `resources/*subscribe` naming a listed resource and
/// mirroring it into `Mcp-Name` (defined only for the three named methods, so
/// harmless, and a server demanding it cannot answer -32020 for its absence).
fn removed_requests(s: &Session) -> Vec<Probe> {
    let c = &s.client;
    let uri = s
        .survey
        .resources
        .names("uri")
        .into_iter()
        .next()
        .unwrap_or_else(|| "protocheck://probe".to_owned());
    let mut probes = Vec::new();
    // Over stdio the process is the session: on a dual-era server the opening
    // `initialize` made it a legacy one, and a second `initialize` is a
    // question for that session, not for this rule.
    if !(s.client.is_stdio() && matches!(s.era, Era::Dual { .. })) {
        probes.push(c.request(
            "initialize",
            json!({
                "protocolVersion": wire::PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": client_info(),
            }),
        ));
    }
    probes.push(c.request("ping", json!({})));
    probes.push(c.request("logging/setLevel", json!({"level": "info"})));
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        probes.push(
            c.request(method, json!({"uri": uri}))
                .with_header(wire::H_NAME, wire::encode_header_value(&uri)),
        );
    }
    probes.extend(unadvertised_requests(s));
    probes
}

/// The methods behind each server capability the server does not advertise
/// (the schema's MethodNotFoundError covers them), addressed to made-up
/// names so that a server serving them anyway runs nothing.
fn unadvertised_requests(s: &Session) -> Vec<Probe> {
    let c = &s.client;
    let mut probes = Vec::new();
    if !s.advertises("tools") {
        probes.push(c.request("tools/list", json!({})));
        probes.push(c.request(
            "tools/call",
            json!({"name": unknown_name("tool"), "arguments": {}}),
        ));
    }
    if !s.advertises("resources") {
        probes.push(c.request("resources/list", json!({})));
        probes.push(c.request("resources/templates/list", json!({})));
        probes.push(c.request(
            "resources/read",
            json!({"uri": format!("protocheck://missing/{}", unknown_name("resource"))}),
        ));
    }
    if !s.advertises("prompts") {
        probes.push(c.request("prompts/list", json!({})));
        probes.push(c.request("prompts/get", json!({"name": unknown_name("prompt")})));
    }
    if !s.advertises("completions") {
        probes.push(c.request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": unknown_name("prompt")},
                "argument": {"name": "protocheck", "value": ""}
            }),
        ));
    }
    probes
}

/// Whether `reply` is the answer to a method the server does not implement:
/// 404 with -32601 (over stdio, where there is no status, -32601).
fn is_not_found(reply: &Reply) -> bool {
    reply.status_is(404) && reply.error_code() == Some(code::METHOD_NOT_FOUND)
}

/// Decision (ERR-002): streamable-http, "Protocol Version Header": "If the
/// server does not implement the requested RPC method, it MUST respond with
/// 404 Not Found and a JSON-RPC error with code -32601". The probes are an
/// invented method and every method 2026-07-28 removed, each a valid
/// 2026-07-28 request. A result to a removed method means the server still
/// implements it: the 404 sentence is not about such a server, and the DEP
/// rules judge it (MCP-DEP-001…003 warn), so it is named, not failed here.
/// For `initialize`, VERSION ("A dual-era server selects its behavior from how
/// the client opens ... An `initialize` request selects legacy semantics")
/// lets a dual-era server answer even a 2026-07-28 `initialize` with a legacy
/// result; a modern-only one does not implement it. Any error other than 404
/// with -32601 fails under every reading over HTTP: the request's version is
/// one the server supports (not -32022) and its headers match its body (not
/// -32020). Over stdio the 404 sentence does not apply and VERSION leaves the
/// code of an `initialize` error to the implementation, so any error to it is
/// accepted there and named (the official Python SDK answers -32022, its
/// process being bound to 2026-07-28); the other methods still need -32601.
async fn unknown_method(s: &Session) -> Judgement {
    // Unknown methods outside the protocol's namespaces and inside each of
    // them: a server routing by prefix may hand `tools/…` to its tools
    // handler, which then answers something else.
    let invented: Vec<String> = std::iter::once("protocheck")
        .chain(UNKNOWN_NAMESPACES)
        .map(|ns| format!("{ns}/{}", unknown_name("method")))
        .collect();
    let sends: Vec<_> = invented
        .iter()
        .map(|method| async move {
            let probe = s.client.request(method, json!({}));
            (method, s.client.send(&probe).await)
        })
        .collect();
    let mut not_found = Vec::new();
    for (method, reply) in s.each(sends).await {
        if !is_not_found(&reply) {
            return Judgement::fail(format!(
                "the unknown method `{method}` answered {}; it MUST be answered HTTP 404 with \
                 JSON-RPC error -32601 (the JSON-RPC body tells a modern 404 from a legacy one)",
                reply.describe()
            ))
            .reply(&reply);
        }
        not_found.push(format!("`{method}`"));
    }
    let mut implemented = Vec::new();
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    let sends: Vec<_> = removed_requests(s)
        .into_iter()
        .map(|probe| async move { (probe.method.clone(), s.client.send(&probe).await) })
        .collect();
    // The probes are independent (see `Session::each`); judged in order.
    for (name, reply) in s.each(sends).await {
        if is_not_found(&reply) {
            not_found.push(format!("`{name}`"));
        } else if name == "initialize" && reply.stdio && reply.error().is_some() {
            // stdio has no 404 sentence, and VERSION leaves the code of a
            // stdio server's error to `initialize` open ("the server rejects
            // initialize with a JSON-RPC error; the exact code is
            // implementation-defined"): any error is a careful reading.
            implemented.push(format!(
                "`initialize` refused with {} (over stdio VERSION leaves the code of an \
                 `initialize` error to the implementation)",
                reply.describe()
            ));
        } else if let Some(result) = reply.result() {
            let negotiated = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(|v| format!(", negotiating {}", super::client::clip(v, 40)))
                .unwrap_or_default();
            implemented.push(format!("`{name}` answered with a result{negotiated}"));
        } else {
            let sent = if name == "initialize" {
                format!(
                    "`initialize` sent as a {} request (MCP-Protocol-Version, `_meta` and \
                     params.protocolVersion all {})",
                    wire::PROTOCOL_VERSION,
                    wire::PROTOCOL_VERSION
                )
            } else {
                format!("`{name}` sent as a {} request", wire::PROTOCOL_VERSION)
            };
            problems.push(format!("{sent} answered {}", reply.describe()));
            evidence.push(reply);
        }
    }
    let status = if s.client.is_stdio() {
        "-32601"
    } else {
        "404 with -32601"
    };
    if !problems.is_empty() {
        let mut j = Judgement::fail(format!(
            "{}; a method the server does not implement (unknown, removed by {}, or behind a \
             capability it does not advertise) MUST be answered HTTP 404 with JSON-RPC error \
             -32601 (only a server that implements the method answers it with a result)",
            super::client::some(&problems, 4, "; "),
            wire::PROTOCOL_VERSION,
        ));
        for r in &evidence {
            j = j.reply(r);
        }
        return j;
    }
    let note = if implemented.is_empty() {
        String::new()
    } else {
        format!(
            "; not judged here: {} (a result means the method is implemented: a removed one is \
             the DEP rules' to judge, and VERSION lets a dual-era server answer `initialize` \
             with legacy semantics)",
            implemented.join(", ")
        )
    };
    Judgement::pass(format!(
        "{} {} answered {status}{note}",
        not_found.join(", "),
        if not_found.len() == 1 {
            "was"
        } else {
            "were each"
        }
    ))
}

async fn resource_not_found(s: &Session) -> Judgement {
    if !s.advertises("resources") {
        return Judgement::skip("the server does not advertise resources");
    }
    // A URI in the server's own namespace, so that it reaches the lookup that
    // reports "not found", not a scheme check.
    let uri = s
        .survey
        .resources
        .names("uri")
        .first()
        .map(|u| format!("{u}-protocheck-missing-{:08x}", rand::random::<u32>()))
        .unwrap_or_else(|| format!("protocheck://missing/{:08x}", rand::random::<u32>()));
    let reply = s
        .client
        .send(&s.client.request("resources/read", json!({"uri": uri})))
        .await;
    match (reply.error_code(), reply.result()) {
        (Some(code::INVALID_PARAMS), _) => Judgement::pass(format!(
            "reading the missing resource `{uri}` answered -32602"
        )),
        (Some(code::RETIRED_RESOURCE_NOT_FOUND), _) => Judgement::fail(format!(
            "reading the missing resource `{uri}` answered the retired code -32002; since \
             {} resource-not-found is -32602 (Invalid params), optionally with data.uri",
            wire::PROTOCOL_VERSION
        ))
        .reply(&reply),
        (None, Some(result)) => {
            let empty = result
                .get("contents")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                Judgement::fail(format!(
                    "reading the missing resource `{uri}` answered a result with no contents; \
                     a missing resource MUST be an error (-32602), never an empty `contents`"
                ))
                .reply(&reply)
            } else {
                Judgement::skip(format!(
                    "the server returned contents for the made-up URI `{uri}`, so protocheck \
                     found no missing resource to probe"
                ))
            }
        }
        _ => Judgement::fail(format!(
            "reading the missing resource `{uri}` answered {}; resource-not-found MUST be \
             JSON-RPC error -32602",
            reply.describe()
        ))
        .reply(&reply),
    }
}

/// Judges every error code seen: `bad` picks the codes that break the rule.
async fn codes_seen(
    s: &Session,
    bad: impl Fn(i64) -> bool,
    describe: impl Fn(&[i64], &str) -> String,
) -> Judgement {
    let seen = s.client.seen().await;
    let errors: Vec<&Seen> = seen.iter().filter(|r| r.error_code.is_some()).collect();
    let offending: Vec<&Seen> = errors
        .iter()
        .copied()
        .filter(|r| r.error_code.is_some_and(&bad))
        .collect();
    if offending.is_empty() {
        return Judgement::pass(format!(
            "none of the {} error responses (of {} responses) used such a code",
            errors.len(),
            seen.len()
        ));
    }
    let mut codes: Vec<i64> = offending.iter().filter_map(|r| r.error_code).collect();
    codes.sort_unstable();
    codes.dedup();
    let mut methods: Vec<&str> = offending.iter().map(|r| r.method.as_str()).collect();
    methods.sort_unstable();
    methods.dedup();
    let mut j = Judgement::fail(describe(&codes, &methods.join("`, `")));
    for r in offending.iter().take(2) {
        j = j.with(&r.exchange);
    }
    j
}

async fn no_32042(s: &Session) -> Judgement {
    codes_seen(
        s,
        |c| c == code::RETIRED_URL_ELICITATION,
        |_, methods| {
            format!(
                "`{methods}` answered -32042 (URL elicitation required), a 2025-11-25 code that \
                 {} implementations MUST NOT emit; ask for input with an InputRequiredResult, \
                 or -32021 when the client lacks the capability",
                wire::PROTOCOL_VERSION
            )
        },
    )
    .await
}

async fn reserved_range(s: &Session) -> Judgement {
    let defined = [
        code::HEADER_MISMATCH,
        code::MISSING_CLIENT_CAPABILITY,
        code::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    // -32042 is judged by ERR-004: a retired code the spec names, reported once.
    codes_seen(
        s,
        |c| {
            code::RESERVED_RANGE.contains(&c)
                && !defined.contains(&c)
                && c != code::RETIRED_URL_ELICITATION
        },
        |codes, methods| {
            format!(
                "`{methods}` answered {codes:?}, in the range -32020…-32099 that the MCP \
                 specification reserves; only -32020, -32021 and -32022 are defined there. Use \
                 a standard JSON-RPC code or one outside -32768…-32000"
            )
        },
    )
    .await
}

async fn legacy_range(s: &Session) -> Judgement {
    // -32002 is judged by ERR-003: it is a retired code with a known meaning,
    // not a new implementation-defined one.
    codes_seen(
        s,
        |c| code::LEGACY_RANGE.contains(&c) && c != code::RETIRED_RESOURCE_NOT_FOUND,
        |codes, methods| {
            format!(
                "`{methods}` answered {codes:?}, in the legacy range -32000…-32019 that new \
                 implementations SHOULD NOT use and receivers give no meaning; use a standard \
                 JSON-RPC code or one outside -32768…-32000"
            )
        },
    )
    .await
}

async fn missing_meta(s: &Session) -> Judgement {
    // Each probe travels on its own new connection, so no earlier request could
    // supply what it lacks.
    let cases: [(&str, Bend, bool); 4] = [
        (
            "`_meta` without io.modelcontextprotocol/protocolVersion",
            |p| p.without_meta(wire::META_PROTOCOL_VERSION),
            true,
        ),
        (
            "`_meta` without io.modelcontextprotocol/clientCapabilities",
            |p| p.without_meta(wire::META_CLIENT_CAPABILITIES),
            false,
        ),
        ("no `_meta` at all", |p| p.without_meta_object(), true),
        ("no `params` at all", without_params, true),
    ];
    let mut problems = Vec::new();
    let mut readings = Vec::new();
    let mut evidence: Vec<Reply> = Vec::new();
    // Every method family the server serves (§15 amendment).
    let families = s.family_probes();
    let mut sends = Vec::new();
    for (what, bend, mismatch_allowed) in cases {
        for template in &families {
            let client = match s.client.fresh_connection() {
                Ok(c) => c,
                Err(e) => return Judgement::skip(format!("could not open a new connection: {e}")),
            };
            let mut probe = template.clone();
            if let Some(id) = probe.body.get_mut("id") {
                *id = json!(client.next_id());
            }
            sends.push(async move {
                let reply = send_family(&client, &bend(probe)).await;
                (what, mismatch_allowed, template, reply)
            });
        }
    }
    // The probes are independent (each on its own connection).
    let mut unreached = Unreached::default();
    let mut judged = 0;
    for (what, mismatch_allowed, template, reply) in s.each(sends).await {
        if unreached.refused(&template.method, &reply) {
            continue;
        }
        judged += 1;
        let code = reply.error_code();
        // The header still names a version the body lacks: the spec does not
        // rank "missing field" above "mismatch", so -32020 is an accepted reading.
        let ok_code = code == Some(code::INVALID_PARAMS)
            || (mismatch_allowed && code == Some(code::HEADER_MISMATCH));
        if reply.status_is(400) && ok_code {
            let reading = format!("{what} was read as a header mismatch (-32020)");
            if code == Some(code::HEADER_MISMATCH) && !readings.contains(&reading) {
                readings.push(reading);
            }
        } else {
            problems.push(format!(
                "`{}` with {what} answered {}",
                template.method,
                reply.describe()
            ));
            evidence.push(reply);
        }
    }
    if judged == 0 {
        return unreached.skip();
    }
    if problems.is_empty() {
        let note = if readings.is_empty() {
            String::new()
        } else {
            format!(" ({})", readings.join("; "))
        };
        Judgement::pass(format!(
            "requests missing required `_meta` fields were refused with {}-32602{note}{}",
            http_400(s, " and "),
            unreached.note()
        ))
    } else {
        let mut j = Judgement::fail(format!(
            "{}; a request missing a required `_meta` field is malformed and MUST be refused \
             with HTTP 400 and JSON-RPC -32602",
            super::client::some(&problems, 4, "; ")
        ));
        for r in &evidence {
            j = j.reply(r);
        }
        j
    }
}

/// A change that makes a conforming probe lack something.
type Bend = fn(Probe) -> Probe;

/// The probe with no `params` member at all (so no `_meta` either): as
/// invalid as one without `_meta`, so its answer is this rule's evidence
/// alone, never the run-wide rules' (a plain-text 400 to it is MCP-ERR-006's
/// matter, not MCP-RES-005's).
fn without_params(mut probe: Probe) -> Probe {
    if let Some(body) = probe.body.as_object_mut() {
        body.remove("params");
    }
    probe.invalid(Invalidity::MissingMeta)
}

/// The capability each input-request method needs from the client.
fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

async fn missing_capability(s: &Session) -> Judgement {
    // Every request of the run that declared no client capability and could
    // need one: the survey's tool calls (first round), its `resources/read`
    // of listed resources and its `prompts/get` (the three methods that may
    // ask for input, MRTR).
    let (tool_calls, reads) = tokio::join!(s.tool_calls(), s.reads());
    let mut answers: Vec<(String, &Reply)> = tool_calls
        .iter()
        .map(|call| (format!("calling `{}`", clip(&call.tool, 60)), &call.first))
        .collect();
    answers.extend(
        reads
            .reads
            .iter()
            .map(|read| (format!("reading `{}`", clip(&read.uri, 80)), &read.reply)),
    );
    if let Some((name, reply)) = &reads.prompt {
        answers.push((format!("getting the prompt `{}`", clip(name, 60)), reply));
    }
    if answers.is_empty() {
        return Judgement::skip(
            "protocheck made no request that could need a client capability: no tool call (no \
             tool is annotated readOnlyHint: true and allow_tool_calls is unset, or none is \
             listed), and the server lists no resource or prompt to read",
        );
    }
    let mut judged = Vec::new();
    for (what, reply) in &answers {
        if reply.error_code() == Some(code::MISSING_CLIENT_CAPABILITY) {
            let required = reply
                .error()
                .and_then(|e| e.pointer("/data/requiredCapabilities"));
            let problem = match required {
                Some(Value::Object(map)) if !map.is_empty() => None,
                Some(Value::Object(_)) => {
                    Some("data.requiredCapabilities is an empty object".to_owned())
                }
                Some(other) => Some(format!(
                    "data.requiredCapabilities is {}; it MUST be a ClientCapabilities object \
                     such as {{\"elicitation\": {{}}}}, not a list of names",
                    clip(&other.to_string(), 80)
                )),
                None => Some("the error has no data.requiredCapabilities".to_owned()),
            };
            let status = (!reply.status_is(400)).then(|| {
                format!(
                    "the HTTP status was {} instead of 400",
                    reply.status.map_or("missing".into(), |s| s.to_string())
                )
            });
            let problems: Vec<String> = problem.into_iter().chain(status).collect();
            if !problems.is_empty() {
                return Judgement::fail(format!(
                    "{what} with no client capabilities answered -32021, but {}",
                    problems.join("; ")
                ))
                .reply(reply);
            }
            judged.push(what.clone());
            continue;
        }
        // Asking for input the client never declared is the failure -32021 exists for.
        if let Some(requests) = reply
            .result()
            .filter(|r| r.get("resultType").and_then(Value::as_str) == Some("input_required"))
            .and_then(|r| r.get("inputRequests"))
            .and_then(Value::as_object)
        {
            let undeclared: Vec<&str> = requests
                .values()
                .filter_map(|r| r.get("method").and_then(Value::as_str))
                .filter(|m| capability_of(m).is_some())
                .collect();
            if !undeclared.is_empty() {
                return Judgement::fail(format!(
                    "{what} with no client capabilities answered an input request for \
                     {undeclared:?}, which the request never declared; a server MUST NOT rely \
                     on undeclared capabilities and MUST answer 400 with -32021 and \
                     data.requiredCapabilities"
                ))
                .reply(reply);
            }
        }
    }
    if judged.is_empty() {
        Judgement::skip(format!(
            "none of the {} requests that declared no client capability ({}) needed one",
            answers.len(),
            some(
                &answers.iter().map(|(w, _)| w.clone()).collect::<Vec<_>>(),
                4,
                ", "
            )
        ))
    } else {
        Judgement::pass(format!(
            "{} answered {}-32021 and a requiredCapabilities object without the capability \
             it needs",
            some(&judged, 5, ", "),
            http_400(s, " with ")
        ))
    }
}

/// "400" and `then`, for a message about an answer that has an HTTP status;
/// nothing over stdio, where there is none.
fn http_400(s: &Session, then: &str) -> String {
    if s.client.is_stdio() {
        String::new()
    } else {
        format!("400{then}")
    }
}
