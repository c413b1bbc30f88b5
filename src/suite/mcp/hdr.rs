//! HDR — request metadata headers (streamable-http#request-metadata through
//! #server-validation).
//!
//! Probes are built so that a conforming server refuses them before dispatch
//! and a non-conforming one still runs nothing with side effects: unknown
//! tool, prompt and method names, `server/discover`, reads of listed resources
//! and prompts, and tools annotated read-only (or any tool when the run sets
//! allow_tool_calls).

use super::client::{Probe, Reply, Spelling, some};
use super::era::Era;
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{Judgement, Session, Unreached};
use super::stl::COLD_ID;
use super::survey::{placeholder_arguments, prompt_arguments, send_family, unknown_name};
use super::wire::{self, H_METHOD, H_NAME, H_PROTOCOL_VERSION, HeaderAnnotation, code};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const MISSING_METHOD: McpRule = McpRule::new(
    "MCP-HDR-001",
    "Missing Mcp-Method rejected with 400 + HeaderMismatch",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#server-validation"),
    "HDR",
    |s| missing_method(s).boxed(),
)
.says("a request without the required Mcp-Method header MUST be rejected with HTTP 400 and -32020 (HeaderMismatch)")
.help(
    "For each method family the server serves (`server/discover`, and per advertised capability \
     its list method and a call, read or get of a made-up name), protocheck sends an otherwise \
     valid POST without the `Mcp-Method` header and expects HTTP 400 with JSON-RPC error -32020 \
     every time.",
    "The server routes on the JSON-RPC body and never looks at the header, so the request is \
     served or answered -32602 for the made-up name; or it checks the header on some methods \
     only, or refuses with another status or code (a plain 400, or -32600).",
    "Validate the standard headers on every POST before dispatch: when `Mcp-Method` is missing, \
     answer HTTP 400 with a JSON-RPC error whose code is -32020 (HeaderMismatch). One middleware \
     in front of every handler is more reliable than checks in each method.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const MISSING_NAME: McpRule = McpRule::new(
    "MCP-HDR-002",
    "Missing Mcp-Name on tools/call rejected with 400 + HeaderMismatch",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#server-validation"),
    "HDR",
    |s| missing_name(s).boxed(),
)
.says("tools/call, prompts/get and resources/read without the required Mcp-Name header MUST be rejected with HTTP 400 and -32020")
.help(
    "For each of `tools/call`, `resources/read` and `prompts/get` the server advertises, \
     protocheck sends a valid request without `Mcp-Name`, addressed to a listed tool (read-only, \
     or any with `allow_tool_calls`), resource or prompt where it can, else to a made-up name, \
     and expects HTTP 400 with -32020.",
    "The server does not require `Mcp-Name`, or checks it on `tools/call` only and lets \
     `resources/read` or `prompts/get` through. When only a made-up name could be used and the \
     server answers -32602 (unknown name) first, the rule is not verified rather than failed.",
    "Require `Mcp-Name` on `tools/call`, `prompts/get` and `resources/read`, and refuse a request \
     that lacks it with HTTP 400 and -32020 before the name is looked up. Annotating a harmless \
     tool `readOnlyHint: true` lets protocheck probe with a real name.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const NAME_MATCHES: McpRule = McpRule::new(
    "MCP-HDR-003",
    "Mcp-Name header must match the request body",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#server-validation"),
    "HDR",
    |s| name_matches(s).boxed(),
)
.says("servers that process the body MUST reject a request whose header values differ from the body values: HTTP 400 and -32020")
.help(
    "For each of `tools/call`, `resources/read` and `prompts/get` the server advertises, \
     protocheck sends a valid request (to a listed name where it can) whose `Mcp-Name` header \
     names something other than the body's `name` or `uri`, and one whose `Mcp-Name` is the \
     body's name in another letter case (values are case-sensitive); each must get HTTP 400 with \
     -32020.",
    "The server reads the name from the header or from the body and never compares the two, so \
     the request is served or answered with an unknown-name error; an intermediary routing on the \
     header would then see a different target than the handler runs.",
    "After decoding any Base64 sentinel, compare `Mcp-Name` with `params.name` (or `params.uri` \
     for `resources/read`) and refuse any difference with HTTP 400 and -32020 before the request \
     is dispatched.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

/// Streamable-http, "Protocol Version Header": "A server that supports
/// clients implementing protocol versions earlier than 2025-06-18 … MAY treat
/// a request that omits the header as protocol version 2025-03-26. A server
/// that does not support such clients MUST reject a request without the
/// header per Server Validation." Every method the server serves is sent
/// without the header (the family probes). The rule is judged on every server that
/// answers `server/discover` as a 2026-07-28 server, dual-era ones included,
/// by how the header-less `server/discover` was answered: 400 with -32020
/// passes; a 2026-07-28 answer (a `DiscoverResult`, or another 2026-07-28
/// error) fails, for serving the request as 2026-07-28 is neither reading;
/// and on a dual-era server an answer in legacy terms (the official Python
/// SDK's 200 with -32601, a legacy session error) is the MAY, and the rule is
/// skipped with what came back.
pub(crate) const MISSING_VERSION: McpRule = McpRule::new(
    "MCP-HDR-004",
    "Missing MCP-Protocol-Version rejected (modern-only servers)",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#protocol-version-header"),
    "HDR",
    |s| missing_version(s).boxed(),
)
.says("every POST MUST carry MCP-Protocol-Version; a missing header is answered 400 and -32020, unless the server supports pre-2025-06-18 clients and treats it as 2025-03-26")
.help(
    "protocheck sends a request of every method the server serves without the \
     `MCP-Protocol-Version` header (its `_meta` still names 2026-07-28) and expects HTTP 400 with \
     -32020 to each. On a dual-era server it also sends an `initialize` asking for 2025-03-26: \
     when that negotiates 2025-03-26 (the server supports older clients), an answer in legacy \
     terms is read as the permitted 2025-03-26 fallback and skipped; when it negotiates a later \
     revision, the fallback is not permitted and such an answer fails.",
    "Most often the server takes the version from `_meta` alone and serves the request with a \
     DiscoverResult, or defaults a missing header to its newest revision. Either way the request \
     is served as 2026-07-28, which neither permitted reading allows.",
    "Refuse a POST that lacks `MCP-Protocol-Version` with HTTP 400 and -32020; or, if the server \
     supports clients older than 2025-06-18, treat the request as 2025-03-26, which has no \
     `server/discover`. Never serve it as 2026-07-28.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const VERSION_MATCHES: McpRule = McpRule::new(
    "MCP-HDR-005",
    "MCP-Protocol-Version header must match _meta.protocolVersion",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#protocol-version-header"),
    "HDR",
    |s| version_matches(s).boxed(),
)
.says("an MCP-Protocol-Version header that differs from _meta protocolVersion MUST be rejected with HTTP 400 and -32020")
.help(
    "For each method family the server serves, protocheck sends two requests whose \
     `MCP-Protocol-Version` header and `_meta` `io.modelcontextprotocol/protocolVersion` disagree \
     (2026-07-28 against `1900-01-01`, both ways round) and expects HTTP 400 with -32020; 400 \
     with -32022 is accepted too and noted.",
    "The server reads the version from one place only, usually `_meta` or only the header, so one \
     of the two requests is served; sometimes the refusal carries the wrong status or a generic \
     -32600 or -32602.",
    "Read both the header and `_meta` `io.modelcontextprotocol/protocolVersion`, and when they \
     differ refuse the request with HTTP 400 and -32020 before checking whether the version is \
     supported and before dispatch.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const CASE: McpRule = McpRule::new(
    "MCP-HDR-006",
    "Header names compared case-insensitively",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#case-sensitivity"),
    "HDR",
    |s| case(s).boxed(),
)
.says("header names MUST be compared case-insensitively; header values are case-sensitive")
.help(
    "On dedicated HTTP/1.1 connections protocheck sends valid requests (`server/discover`, one of \
     every named method the server advertises, a call of each tool it may call that has an \
     `Mcp-Param-*` header) with header names lower-case, as the spec writes them, upper-case and \
     in mixed case (`mCp-NaMe`); each spelling must be answered alike. It also sends header \
     values in another letter case (`Mcp-Method: SERVER/DISCOVER`, each named method's \
     `Mcp-Method` and `Mcp-Name`, string and boolean `Mcp-Param-*` values) and expects 400 with \
     -32020 to each.",
    "Either header names are compared byte for byte (a plain string map or a hand-written lookup \
     of `Mcp-Method`), so one spelling is refused; or header values are lower-cased before \
     comparison, so `SERVER/DISCOVER` is taken to match the body's `server/discover` (or a \
     tool name, prompt name or `Mcp-Param-*` value is matched without case).",
    "Look headers up through your framework's case-insensitive header API, never a plain string \
     map, and compare values exactly as sent: `Mcp-Method` must equal the body's method byte for \
     byte, or the request gets HTTP 400 with -32020.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const BASE64: McpRule = McpRule::new(
    "MCP-HDR-007",
    "Base64 sentinel-encoded header values decoded before comparison",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#value-encoding"),
    "HDR",
    |s| base64(s).boxed(),
)
.says("servers MUST decode =?base64?...?= header values before comparing them with the body")
.help(
    "For each advertised `tools/call`, `resources/read` and `prompts/get`, protocheck sends \
     `Mcp-Name` in the `=?base64?...?=` sentinel form of the body's name (a listed name, or a \
     made-up non-ASCII one) and fails on -32020 or no answer; for every string `x-mcp-header` of \
     every tool it may call, it also sends a non-ASCII argument with its `Mcp-Param-*` header \
     encoded.",
    "The server compares the raw header with the body without decoding the sentinel, so a \
     correctly encoded request is refused as a mismatch (-32020); this usually surfaces first \
     with non-ASCII names or values.",
    "Before comparing `Mcp-Name` or an `Mcp-Param-*` value with the body, decode a value that \
     starts with `=?base64?` and ends with `?=` (standard padded Base64 of UTF-8) and compare the \
     decoded text; a value without both markers is literal.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const PARAM_MATCHES: McpRule = McpRule::new(
    "MCP-HDR-008",
    "Mcp-Param-{Name} validated against body when x-mcp-header is declared",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#server-behavior-for-custom-headers"),
    "HDR",
    |s| param_matches(s).boxed(),
)
.says("when an x-mcp-header argument has a value, the Mcp-Param-{Name} header MUST be sent and the server MUST validate it against the body, rejecting a missing or different one with 400 and -32020")
.help(
    "For every valid `x-mcp-header` (string, integer or boolean) of every tool protocheck may call \
     (read-only, or any with `allow_tool_calls`), it calls the tool with that `Mcp-Param-*` \
     header differing from the argument and without the header, expecting HTTP 400 with -32020 \
     both times; with the argument left out and with it `null` (no header), which must not be \
     refused with -32020; and for an integer with the header `7.0` for 7, which SHOULD be taken \
     as equal (a refusal is a warning).",
    "The server declares `x-mcp-header` in the schema but never validates the mirrored header, so \
     both calls run the tool; or it refuses a mismatch but accepts a missing header; or it \
     demands the header even when the argument is absent or null. Skipped when no callable tool \
     declares an annotation.",
    "For every `x-mcp-header` property whose argument is present, require the `Mcp-Param-{Name}` \
     header, decode it, compare it with the argument's text form (integers in decimal, booleans \
     `true`/`false`) and refuse a missing or different value with HTTP 400 and -32020.",
)
// A tools/call sent with no server/discover before it on its connection: a
// server failing STL-003 refuses it for that, not for its headers (§15.4).
.requires(&[DISCOVER_ID, COLD_ID])
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const PARAM_CHARACTERS: McpRule = McpRule::new(
    "MCP-HDR-009",
    "Mcp-Param-{Name} containing invalid characters is rejected",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#server-behavior-for-custom-headers"),
    "HDR",
    |s| param_characters(s).boxed(),
)
.says("servers MUST reject a recognised Mcp-Param-{Name} header containing invalid characters")
.help(
    "For every valid `x-mcp-header` of every tool protocheck may call, it sends the \
     `Mcp-Param-*` header holding raw UTF-8 (`café`) instead of the Base64 sentinel, and on a \
     dedicated HTTP/1.1 connection each control character a header can carry (0x01-0x1F but \
     HTAB, CR and LF, and 0x7F), and expects HTTP 400 with -32020; a bare HTTP 400 from the \
     server's HTTP layer is accepted and named.",
    "The server's HTTP stack accepts non-ASCII bytes in header values and the comparison with the \
     body then succeeds, so the tool runs: the server never checks that the header holds only the \
     characters a conforming client sends unencoded.",
    "Refuse a recognised `Mcp-Param-{Name}` whose raw value holds characters outside visible \
     ASCII, space and tab with HTTP 400 and -32020; only the `=?base64?...?=` form may carry such \
     text.",
)
// A tools/call sent with no server/discover before it on its connection: a
// server failing STL-003 refuses it for that, not for its headers (§15.4).
.requires(&[DISCOVER_ID, COLD_ID])
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const BEFORE_DISPATCH: McpRule = McpRule::new(
    "MCP-HDR-010",
    "Header validation runs before method dispatch",
    Keyword::May,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#server-validation"),
    "HDR",
    |s| before_dispatch(s).boxed(),
)
.says("header validation rejects a mismatched request before it is dispatched, so no handler ever runs it")
.help(
    "protocheck sends requests whose `Mcp-Method` header disagrees with the body: an unknown body \
     method under `Mcp-Method: server/discover`, and for each method family the server serves its \
     request (a listed tool, resource or prompt where it can) under a header naming another \
     method. Each must be refused with HTTP 400 and -32020.",
    "A -32601 answer usually means the method is looked up before the headers are validated; a \
     result means a handler actually ran a request whose header and body disagree, typically \
     because validation lives inside the handlers or after routing.",
    "Validate the headers in middleware in front of the router, so that a mismatched request gets \
     HTTP 400 and -32020 before any method lookup or handler runs; this also keeps intermediaries \
     that route on headers in step with the server.",
)
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

pub(crate) const RULES: &[McpRule] = &[
    MISSING_METHOD,
    MISSING_NAME,
    NAME_MATCHES,
    MISSING_VERSION,
    VERSION_MATCHES,
    CASE,
    BASE64,
    PARAM_MATCHES,
    PARAM_CHARACTERS,
    BEFORE_DISPATCH,
];

/// Whether `reply` is the refusal header validation requires.
fn is_mismatch(reply: &Reply) -> bool {
    reply.status == Some(400) && reply.error_code() == Some(code::HEADER_MISMATCH)
}

/// Judges a probe that a conforming server refuses with 400 and -32020.
fn expect_mismatch(reply: &Reply, what: &str, why: &str) -> Judgement {
    if is_mismatch(reply) {
        Judgement::pass(format!("{what} was refused with 400 and -32020"))
    } else {
        let accepted = if reply.ok() { " was accepted:" } else { "" };
        Judgement::fail(format!(
            "{what}{accepted} answered {}; {why}, expected 400 with -32020 (HeaderMismatch)",
            reply.describe()
        ))
        .reply(reply)
    }
}

const NO_NAMED_METHOD: &str =
    "the server advertises no tools, prompts or resources, so no request carries Mcp-Name";

/// Sends `bend(probe)` for every method family the server serves and
/// requires each to be refused with 400 and -32020. A server that checks a
/// header on some methods only fails on the first method it lets through.
async fn expect_mismatch_everywhere(
    s: &Session,
    bend: impl Fn(Probe) -> Probe,
    what: &str,
    why: &str,
) -> Judgement {
    let sends: Vec<_> = s
        .family_probes()
        .into_iter()
        .map(|probe| {
            let method = probe.method.clone();
            let bent = bend(probe);
            async move { (method, send_family(&s.client, &bent).await) }
        })
        .collect();
    // The probes are independent (see `Session::each`); judged in order.
    let mut methods = Vec::new();
    let mut unreached = Unreached::default();
    for (method, reply) in s.each(sends).await {
        if unreached.refused(&method, &reply) {
            continue;
        }
        if !is_mismatch(&reply) {
            return expect_mismatch(&reply, &format!("`{method}` {what}"), why);
        }
        methods.push(format!("`{method}`"));
    }
    if methods.is_empty() {
        return unreached.skip();
    }
    Judgement::pass(format!(
        "{} {what} were each refused with 400 and -32020{}",
        methods.join(", "),
        unreached.note()
    ))
}

async fn missing_method(s: &Session) -> Judgement {
    expect_mismatch_everywhere(
        s,
        |p| p.without_header(H_METHOD),
        "without `Mcp-Method`",
        "the header is required on every request",
    )
    .await
}

/// A tool protocheck may call, read-only ones first, with its input schema.
///
/// Decision (HDR-002/003/007/010): streamable-http#server-validation lists "a
/// required standard header missing" and "a header value not matching the
/// body" as failures but does not order them against the lookup of the tool,
/// resource or prompt, so a server may answer an unknown name with -32602
/// before it looks at the headers. Probing with a real name (a tool annotated
/// `readOnlyHint: true`, or any when the run sets allow_tool_calls, §15.6; a
/// listed resource; a listed prompt) makes that order irrelevant; the
/// unknown-name probe is the fallback, and its "unknown name" answer proves
/// nothing either way.
fn real_tool(s: &Session) -> Option<(String, Value)> {
    let tools = &s.survey.tools.items;
    let read_only = |t: &&Value| super::survey::read_only(t);
    tools
        .iter()
        .filter(read_only)
        .chain(tools.iter().filter(|t| !read_only(t)))
        .filter(|t| s.may_call(t))
        .find_map(|t| {
            let name = t.get("name")?.as_str()?.to_owned();
            Some((name, t.get("inputSchema").cloned().unwrap_or(Value::Null)))
        })
}

/// A conforming call of `tool` with placeholder arguments and mirrored headers.
fn real_call(s: &Session, tool: &str, schema: &Value) -> Probe {
    s.client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": placeholder_arguments(schema)}),
        )
        .with_param_headers(schema)
}

/// The methods whose requests carry `Mcp-Name` (streamable-http, "Standard
/// Request Headers": "`tools/call`, `resources/read`, `prompts/get`
/// requests"), each with the capability that serves it and what it names.
const NAMED_METHODS: [(&str, &str, &str); 3] = [
    ("tools/call", "tools", "tool"),
    ("resources/read", "resources", "resource"),
    ("prompts/get", "prompts", "prompt"),
];

/// One conforming request of a method that carries `Mcp-Name`.
struct Named {
    method: &'static str,
    /// `tool`, `resource` or `prompt`.
    kind: &'static str,
    /// The request, its `Mcp-Name` mirrored from the body.
    probe: Probe,
    /// The listed name (or uri) it addresses; `None` for an unknown name.
    real: Option<String>,
    /// The name (or uri) the body carries.
    name: String,
}

impl Named {
    /// `` `tools/call` of the listed tool `echo` `` or `` `prompts/get` ``.
    fn describe(&self) -> String {
        match &self.real {
            Some(name) => format!("`{}` of the listed {} `{name}`", self.method, self.kind),
            None => format!("`{}`", self.method),
        }
    }
}

/// A request of every method that carries `Mcp-Name` and that the server
/// advertises, addressed to a real name where one was listed (see
/// [`real_tool`]), else to `unknown(kind)`; and the methods not advertised.
fn named_targets(s: &Session, unknown: impl Fn(&str) -> String) -> (Vec<Named>, Vec<&'static str>) {
    let c = &s.client;
    let mut targets = Vec::new();
    let mut absent = Vec::new();
    for (method, capability, kind) in NAMED_METHODS {
        if !s.advertises(capability) {
            absent.push(method);
            continue;
        }
        let listed = match kind {
            "tool" => real_tool(s).map(|(tool, schema)| {
                let probe = real_call(s, &tool, &schema);
                (tool, probe)
            }),
            "resource" => s
                .survey
                .resources
                .names("uri")
                .into_iter()
                .next()
                .map(|uri| {
                    let probe = c.request(method, json!({"uri": uri}));
                    (uri, probe)
                }),
            _ => s.survey.prompts.items.iter().find_map(|p| {
                let name = p.get("name")?.as_str()?.to_owned();
                let probe = c.request(
                    method,
                    json!({"name": name, "arguments": prompt_arguments(p)}),
                );
                Some((name, probe))
            }),
        };
        let target = match listed {
            Some((name, probe)) => Named {
                method,
                kind,
                probe,
                real: Some(name.clone()),
                name,
            },
            None => {
                let name = unknown(kind);
                let (name, params) = match kind {
                    "tool" => (name.clone(), json!({"name": name, "arguments": {}})),
                    "resource" => {
                        let uri = format!("protocheck://missing/{name}");
                        (uri.clone(), json!({"uri": uri}))
                    }
                    _ => (name.clone(), json!({"name": name})),
                };
                Named {
                    method,
                    kind,
                    probe: c.request(method, params),
                    real: None,
                    name,
                }
            }
        };
        targets.push(target);
    }
    (targets, absent)
}

/// "; `x`, `y` not probed: the server does not advertise them" for a message.
fn not_advertised(absent: &[&str]) -> String {
    if absent.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = absent.iter().map(|m| format!("`{m}`")).collect();
        format!(
            "; {} not probed: the server does not advertise {}",
            names.join(", "),
            if absent.len() == 1 { "it" } else { "them" }
        )
    }
}

/// What one `Mcp-Name` probe showed.
enum NameCheck {
    /// Refused with 400 and -32020.
    Refused,
    /// An unknown name answered -32602: the server looked the name up first.
    Unverified(String),
    /// Let through or refused otherwise: the rule fails.
    Failed(Judgement),
}

/// Judges a probe of `target` that a conforming server refuses with 400 and
/// -32020; an "unknown name" answer to an unknown-name probe leaves it
/// unverified (see [`real_tool`]).
fn judge_named(target: &Named, reply: &Reply, what: &str, why: &str) -> NameCheck {
    if is_mismatch(reply) {
        return NameCheck::Refused;
    }
    if target.real.is_none() && reply.error_code() == Some(code::INVALID_PARAMS) {
        let how = match target.kind {
            "tool" => {
                "no tool is annotated readOnlyHint: true (set allow_tool_calls to use any tool)"
            }
            "resource" => "resources/list lists no resource",
            _ => "prompts/list lists no prompt",
        };
        return NameCheck::Unverified(format!(
            "{what} answered {} (unknown {}): the server looked the name up before the headers, \
             which the spec does not forbid, so this says nothing about its header validation; \
             {how} to probe with a real name",
            reply.describe(),
            target.kind
        ));
    }
    NameCheck::Failed(expect_mismatch(reply, what, why))
}

/// Sends `bend(target)` for every method that carries `Mcp-Name` and judges
/// each answer with [`judge_named`]: fails on the first method let through,
/// names every method checked when it passes.
async fn expect_name_refused(
    s: &Session,
    unknown: impl Fn(&str) -> String,
    bend: impl Fn(&Named) -> Vec<(Probe, String)>,
    why: &str,
) -> Judgement {
    let (targets, absent) = named_targets(s, unknown);
    if targets.is_empty() {
        return Judgement::skip(NO_NAMED_METHOD);
    }
    let sends: Vec<_> = targets
        .iter()
        .flat_map(|target| {
            bend(target).into_iter().map(move |(mut probe, what)| {
                probe.body["id"] = json!(s.client.next_id());
                async move { (target, what, s.client.send(&probe).await) }
            })
        })
        .collect();
    // The probes are independent (see `Session::each`); judged in order.
    let mut refused = Vec::new();
    let mut unverified = Vec::new();
    let mut unreached = Unreached::default();
    for (target, what, reply) in s.each(sends).await {
        if unreached.refused(target.method, &reply) {
            continue;
        }
        match judge_named(target, &reply, &what, why) {
            NameCheck::Refused => refused.push(what),
            NameCheck::Unverified(text) => unverified.push(text),
            NameCheck::Failed(j) => return j,
        }
    }
    let real = targets.iter().any(|t| t.real.is_some());
    let order = if real {
        " (listed names where the server listed one, so the order in which it checks the name \
         and the headers does not matter)"
    } else {
        ""
    };
    if !unverified.is_empty() {
        let checked = if refused.is_empty() {
            String::new()
        } else {
            format!(
                "; {} {} refused with 400 and -32020",
                refused.join(", "),
                if refused.len() == 1 { "was" } else { "were" }
            )
        };
        return Judgement::skip(format!(
            "not verified: {}{checked}{}{}",
            unverified.join("; "),
            unreached.note(),
            not_advertised(&absent)
        ));
    }
    if refused.is_empty() {
        return unreached.skip();
    }
    Judgement::pass(format!(
        "{} {} refused with 400 and -32020{order}{}{}",
        refused.join(", "),
        if refused.len() == 1 {
            "was"
        } else {
            "were each"
        },
        unreached.note(),
        not_advertised(&absent)
    ))
}

async fn missing_name(s: &Session) -> Judgement {
    // Every method that carries Mcp-Name: a server checking it on tools/call
    // only lets resources/read through (issue #25).
    expect_name_refused(
        s,
        unknown_name,
        |t| {
            vec![(
                t.probe.clone().without_header(H_NAME),
                format!("{} without `Mcp-Name`", t.describe()),
            )]
        },
        "Mcp-Name is required on tools/call, resources/read and prompts/get",
    )
    .await
}

async fn name_matches(s: &Session) -> Judgement {
    let header_name = unknown_name("b");
    expect_name_refused(
        s,
        |kind| unknown_name(&format!("{kind}-a")),
        |t| {
            let mut probes = vec![(
                t.probe.clone().with_header(H_NAME, header_name.clone()),
                format!(
                    "{} with `Mcp-Name: {header_name}` and a body naming `{}`",
                    t.describe(),
                    t.name
                ),
            )];
            // The same name in another letter case: values are
            // case-sensitive, so a server comparing without case lets it in.
            if let Some(recased) = recased(&t.name, t.kind == "resource") {
                probes.push((
                    t.probe
                        .clone()
                        .with_header(H_NAME, wire::encode_header_value(&recased)),
                    format!(
                        "{} with `Mcp-Name: {recased}` (the body's name in another letter case) \
                         and a body naming `{}`",
                        t.describe(),
                        t.name
                    ),
                ));
            }
            probes
        },
        "the header must match the body",
    )
    .await
}

/// `name` with the case of its last ASCII letter swapped, or `None` when it
/// has none. For a URI only a letter after its authority counts: scheme and
/// host compare without case in URI equivalence (RFC 3986 §6.2.2.1), so a
/// careful server may fold them.
fn recased(name: &str, uri: bool) -> Option<String> {
    let from = if uri {
        let after_scheme = name.find("://").map_or(0, |i| i + 3);
        after_scheme + name[after_scheme..].find(['/', '?', '#'])?
    } else {
        0
    };
    let (at, c) = name
        .char_indices()
        .rev()
        .find(|(i, c)| *i >= from && c.is_ascii_alphabetic())?;
    let swapped = if c.is_ascii_lowercase() {
        c.to_ascii_uppercase()
    } else {
        c.to_ascii_lowercase()
    };
    let mut out = name.to_owned();
    out.replace_range(at..at + 1, &swapped.to_string());
    Some(out)
}

/// The revision a client older than 2025-06-18 asks for: the one a server
/// MAY treat a header-less request as.
const OLD_CLIENT_VERSION: &str = "2025-03-26";

async fn missing_version(s: &Session) -> Judgement {
    // Every family probe without the header (the requirement is "every
    // POST"); on a dual-era server, beside them, an `initialize` asking for
    // 2025-03-26, which shows whether the MAY's premise (the server supports
    // clients older than 2025-06-18) holds.
    let sends: Vec<_> = s
        .family_probes()
        .into_iter()
        .map(|probe| {
            let method = probe.method.clone();
            let bare = probe.without_header(H_PROTOCOL_VERSION);
            async move { (method, send_family(&s.client, &bare).await) }
        })
        .collect();
    let premise = async {
        if !matches!(s.era, Era::Dual { .. }) {
            return None;
        }
        let mut probe = super::era::initialize_probe(&s.client);
        probe.body["params"]["protocolVersion"] = json!(OLD_CLIENT_VERSION);
        let reply = s.client.send(&probe).await;
        super::era::close(&s.client, None, &reply).await;
        Some(reply)
    };
    let (replies, premise) = tokio::join!(s.each(sends), premise);
    // Whether the server supports clients older than 2025-06-18: `Some(false)`
    // when a 2025-03-26 `initialize` negotiated a later revision.
    let old_clients = premise.as_ref().map(|reply| {
        super::era::negotiated_version(reply)
            .map(|v| v.as_str() < "2025-06-18")
            .ok_or(())
    });
    let mut refused = Vec::new();
    let mut legacy = Vec::new();
    let mut unreached = Unreached::default();
    for (method, reply) in replies {
        if unreached.refused(&method, &reply) {
            continue;
        }
        let what = format!("`{method}` without `MCP-Protocol-Version`");
        if is_mismatch(&reply) {
            refused.push(format!("`{method}`"));
            continue;
        }
        if served_modern(&method, &reply) {
            return Judgement::fail(format!(
                "{what} was served as a {} request: it answered {}. A server that supports \
                 clients older than 2025-06-18 MAY treat the request as 2025-03-26, and one that \
                 does not MUST reject it with 400 and -32020: serving it as {} is neither",
                wire::PROTOCOL_VERSION,
                reply.describe(),
                wire::PROTOCOL_VERSION
            ))
            .reply(&reply);
        }
        match (&old_clients, legacy_terms(&reply)) {
            (Some(Ok(true)), true) => legacy.push((method, reply)),
            (Some(Ok(false)), true) => {
                let init = premise.as_ref().map(|r| r.describe()).unwrap_or_default();
                let mut j = Judgement::fail(format!(
                    "{what} answered {} (legacy terms, an inference), but the server does not \
                     support clients older than 2025-06-18: an `initialize` asking for \
                     {OLD_CLIENT_VERSION} answered {init}. Only such a server MAY treat a \
                     header-less request as 2025-03-26; one that does not MUST reject it with \
                     400 and -32020",
                    reply.describe()
                ))
                .reply(&reply);
                if let Some(init) = &premise {
                    j = j.reply(init);
                }
                return j;
            }
            (Some(Err(())), true) => {
                let init = premise.as_ref().map(|r| r.describe()).unwrap_or_default();
                return Judgement::skip(format!(
                    "not verified: {what} answered {} (legacy terms, an inference), and an \
                     `initialize` asking for {OLD_CLIENT_VERSION} answered {init}, which \
                     negotiates no version: whether the server supports clients older than \
                     2025-06-18 (and so MAY answer in legacy terms) is not known",
                    reply.describe()
                ))
                .reply(&reply);
            }
            _ => return expect_mismatch(&reply, &what, "the header is required on every POST"),
        }
    }
    if !legacy.is_empty() {
        let methods: Vec<String> = legacy.iter().map(|(m, _)| format!("`{m}`")).collect();
        let shown = legacy
            .first()
            .map(|(_, r)| r.describe())
            .unwrap_or_default();
        let mut j = Judgement::skip(format!(
            "not applicable: {}; {} without `MCP-Protocol-Version` answered in legacy terms (an \
             inference: neither a 2026-07-28 result nor a 2026-07-28 error; the first: {shown}), \
             and an `initialize` asking for {OLD_CLIENT_VERSION} negotiated it, so the server \
             supports clients older than 2025-06-18 and MAY treat a request that omits the \
             header as 2025-03-26{}{}",
            s.era.describe(),
            methods.join(", "),
            if refused.is_empty() {
                String::new()
            } else {
                format!("; {} were refused with 400 and -32020", refused.join(", "))
            },
            unreached.note()
        ));
        if let Some((_, reply)) = legacy.first() {
            j = j.reply(reply);
        }
        return j;
    }
    if refused.is_empty() {
        return unreached.skip();
    }
    Judgement::pass(format!(
        "{} without `MCP-Protocol-Version` were each refused with 400 and -32020{}",
        refused.join(", "),
        unreached.note()
    ))
}

/// Whether `reply` to a header-less `method` serves it as 2026-07-28: a
/// `DiscoverResult` to `server/discover`, or a result carrying `resultType`
/// (which no earlier revision defines) to another method.
fn served_modern(method: &str, reply: &Reply) -> bool {
    if method == "server/discover" {
        discover_result(reply)
    } else {
        reply
            .result()
            .is_some_and(|r| r.get("resultType").is_some())
    }
}

/// Whether `reply` carries a `DiscoverResult`, the 2026-07-28 answer to
/// `server/discover` (its `supportedVersions`, or its `capabilities`
/// without an initialize result's `protocolVersion`).
fn discover_result(reply: &Reply) -> bool {
    reply.result().is_some_and(|r| {
        r.get("supportedVersions").is_some()
            || r.get("capabilities").is_some() && r.get("protocolVersion").is_none()
    })
}

/// Whether a dual-era server answered a header-less request in the terms of
/// a revision before 2026-07-28: an answer that is neither a 2026-07-28
/// result (one with `resultType`, or a `DiscoverResult`) nor one of the
/// errors only 2026-07-28 defines (-32020, -32021, -32022). -32601 at any status counts as legacy: 2025-03-26 has no
/// `server/discover`, so "method not found" is what it answers. A request
/// that got no answer at all is not one.
fn legacy_terms(reply: &Reply) -> bool {
    reply.status.is_some()
        && reply
            .result()
            .is_none_or(|r| r.get("resultType").is_none() && r.get("supportedVersions").is_none())
        && !matches!(
            reply.error_code(),
            Some(
                code::HEADER_MISMATCH
                    | code::MISSING_CLIENT_CAPABILITY
                    | code::UNSUPPORTED_PROTOCOL_VERSION
            )
        )
}

async fn version_matches(s: &Session) -> Judgement {
    // Both directions: a server reading only the body, or only the header,
    // accepts one of them. Which error wins between "mismatch" and "unsupported
    // version" is not specified, so either is accepted and named (§15.8).
    // Every method family the server serves is probed.
    let other = "1900-01-01";
    let mut cases = vec![
        (wire::PROTOCOL_VERSION.to_owned(), other.to_owned()),
        (other.to_owned(), wire::PROTOCOL_VERSION.to_owned()),
    ];
    // Two versions the server lists: neither is unsupported, so only a
    // comparison of header and body refuses the request. The header names
    // 2026-07-28 (a header naming an earlier revision may select that
    // revision's semantics on a dual-era server, which has no `_meta` rule).
    if let Some(second) = s
        .supported_versions()
        .unwrap_or_default()
        .into_iter()
        .find(|v| v != wire::PROTOCOL_VERSION)
    {
        cases.push((wire::PROTOCOL_VERSION.to_owned(), second));
    }
    let families = s.family_probes();
    let mut sends = Vec::new();
    for template in &families {
        for (header, meta) in &cases {
            let mut probe = template
                .clone()
                .with_meta(wire::META_PROTOCOL_VERSION, json!(meta))
                .with_header(H_PROTOCOL_VERSION, header.as_str());
            probe.body["id"] = json!(s.client.next_id());
            sends.push(
                async move { (template, header, meta, send_family(&s.client, &probe).await) },
            );
        }
    }
    // The probes are independent (see `Session::each`); judged in order.
    let mut readings = Vec::new();
    let mut methods = Vec::new();
    let mut unreached = Unreached::default();
    for (template, header, meta, reply) in s.each(sends).await {
        if unreached.refused(&template.method, &reply) {
            continue;
        }
        let what = format!(
            "`{}` with `MCP-Protocol-Version: {header}` and `_meta` protocolVersion \"{meta}\"",
            template.method
        );
        match (reply.status, reply.error_code()) {
            (Some(400), Some(code::HEADER_MISMATCH)) => {}
            (Some(400), Some(code::UNSUPPORTED_PROTOCOL_VERSION)) => {
                let reading = format!(
                    "`MCP-Protocol-Version: {header}` with `_meta` \"{meta}\" was refused as an \
                     unsupported version (-32022)"
                );
                if !readings.contains(&reading) {
                    readings.push(reading);
                }
            }
            _ => {
                return Judgement::fail(format!(
                    "{what}{} answered {}; the header MUST match the body, expected 400 with \
                     -32020 (HeaderMismatch)",
                    if reply.ok() { " was accepted:" } else { "" },
                    reply.describe()
                ))
                .reply(&reply);
            }
        }
        // A family answered as it should (in at least one case; a case
        // refused by authorization is named in the note).
        let shown = format!("`{}`", template.method);
        if !methods.contains(&shown) {
            methods.push(shown);
        }
    }
    if methods.is_empty() {
        return unreached.skip();
    }
    let note = if readings.is_empty() {
        String::new()
    } else {
        format!(" ({})", readings.join("; "))
    };
    Judgement::pass(format!(
        "{} whose MCP-Protocol-Version header and `_meta` version differ were refused with \
         400{note}{}",
        methods.join(", "),
        unreached.note()
    ))
}

/// `(status, error code, has result)`: what two answers must share to count as the same.
fn shape(reply: &Reply) -> (Option<u16>, Option<i64>, bool) {
    (reply.status, reply.error_code(), reply.result().is_some())
}

/// [`case`]'s requests, each with a fresh id, one after another on a
/// dedicated connection with header names spelled `spelling` (a new
/// connection where the server closed the last): each request and its
/// answer, or the skip when no connection could be opened.
async fn spelled(
    s: &Session,
    requests: &[Probe],
    spelling: Spelling,
) -> Result<Vec<(Probe, Reply)>, Judgement> {
    let unopened = |e: crate::transport::TransportError| {
        Judgement::skip(format!(
            "could not open a connection to send header names as written: {e}"
        ))
    };
    let mut conn = s.client.dedicated().await.map_err(unopened)?;
    let mut answered = Vec::new();
    for template in requests {
        if conn.closed().is_some() {
            conn = s.client.dedicated().await.map_err(unopened)?;
        }
        let mut probe = template.clone();
        if let Some(id) = probe.body.get_mut("id") {
            *id = json!(s.client.next_id());
        }
        let mut reply = s.client.send_on(&mut conn, &probe, spelling).await;
        if reply.status.is_none() {
            // The server closed the connection between requests: the same
            // request again on a new one (this rule needs no reuse).
            conn = s.client.dedicated().await.map_err(unopened)?;
            reply = s.client.send_on(&mut conn, &probe, spelling).await;
        }
        answered.push((probe, reply));
    }
    Ok(answered)
}

async fn case(s: &Session) -> Judgement {
    // Names half (streamable-http#case-sensitivity: header names MUST be
    // compared case-insensitively). The pooled client sends names lower-case
    // only (hyper writes them so), which a server looking up `Mcp-Method`
    // case-sensitively would refuse while one looking up `mcp-method` would
    // not: so valid requests go, on a dedicated HTTP/1.1 connection where
    // names travel byte for byte, spelled lower-case, as the spec writes
    // them, upper-case and in mixed case (`mCp-NaMe`), and every spelling
    // must be answered like the first (§15 amendment "Header names are probed
    // in several spellings"). The requests: `server/discover`, every named
    // method the server advertises (to a listed name where it can), and a
    // call of each tool protocheck may call that mirrors an argument into an
    // `Mcp-Param-*` header.
    if !s.discover.ok() {
        return Judgement::skip(
            "not verified: server/discover with lower-case header names failed",
        );
    }
    let (named, absent) = named_targets(s, |kind| unknown_name(&format!("case-{kind}")));
    let params = param_targets(s, None).unwrap_or_default();
    let mut requests = vec![s.client.request("server/discover", json!({}))];
    requests.extend(named.iter().map(|t| t.probe.clone()));
    let mut called = Vec::new();
    for target in &params {
        if !called.contains(&target.tool) {
            called.push(target.tool.clone());
            let (value, _) = target.values();
            requests.push(target.call(s, value));
        }
    }
    // Values half (on the pooled client): a value in another case is another
    // value. `Mcp-Method` upper-cased on `server/discover` and on each named
    // method; `Mcp-Name` with one letter's case swapped (for a URI only after
    // its authority, as MCP-HDR-003 does); each string or boolean
    // `Mcp-Param-*` in another case.
    // Beside each `Mcp-Name` and `Mcp-Param-*` probe, the same request with
    // a wholly different value: a server accepting that too does not compare
    // the header with the body at all (MCP-HDR-003, MCP-HDR-008 judge it),
    // which says nothing of letter case.
    let mut values: Vec<(Option<&Named>, Probe, String, Option<Probe>)> = vec![(
        None,
        s.client
            .request("server/discover", json!({}))
            .with_header(H_METHOD, "SERVER/DISCOVER"),
        "`Mcp-Method: SERVER/DISCOVER` with body `server/discover`".to_owned(),
        None,
    )];
    let other_name = unknown_name("case-other");
    for t in &named {
        let upper = t.method.to_ascii_uppercase();
        values.push((
            Some(t),
            t.probe.clone().with_header(H_METHOD, upper.as_str()),
            format!("{} with `Mcp-Method: {upper}`", t.describe()),
            None,
        ));
        if let Some(recased) = recased(&t.name, t.kind == "resource") {
            values.push((
                Some(t),
                t.probe
                    .clone()
                    .with_header(H_NAME, wire::encode_header_value(&recased)),
                format!(
                    "{} with `Mcp-Name: {recased}` (the body's `{}` in another letter case)",
                    t.describe(),
                    t.name
                ),
                Some(t.probe.clone().with_header(H_NAME, other_name.clone())),
            ));
        }
    }
    for target in &params {
        let (body, header) = match target.kind {
            "string" => (json!("protocheck"), "protochecK".to_owned()),
            "boolean" => (json!(true), "TRUE".to_owned()),
            _ => continue,
        };
        values.push((
            None,
            target
                .call(s, body.clone())
                .with_header(&target.header(), header.clone()),
            format!(
                "{} with `{}: {header}` and the body value {body}",
                target.describe(),
                target.shown_header()
            ),
            Some(
                target
                    .call(s, body.clone())
                    .with_header(&target.header(), "protocheck-other-value"),
            ),
        ));
    }
    let value_sends: Vec<_> = values
        .iter()
        .map(|(t, probe, what, other)| async move {
            let (reply, other) = tokio::join!(s.client.send(probe), async {
                match other {
                    Some(p) => Some(s.client.send(p).await),
                    None => None,
                }
            });
            (*t, what, reply, other)
        })
        .collect();
    // Each spelling on a dedicated connection of its own, side by side, and
    // the values half beside them; the spellings are compared in the order
    // spec, upper-case, mixed, each request in turn, as if they had gone one
    // after another.
    let (lower, spec_spelled, upper, mixed, value_replies) = tokio::join!(
        spelled(s, &requests, Spelling::Lower),
        spelled(s, &requests, Spelling::Spec),
        spelled(s, &requests, Spelling::Upper),
        spelled(s, &requests, Spelling::Mixed),
        s.each(value_sends),
    );
    let baseline = match lower {
        Ok(replies) => replies,
        Err(skip) => return skip,
    };
    let mut tried = Vec::new();
    let mut refused: Option<(String, Reply, Reply)> = None;
    'spellings: for (spelling, answered) in [
        (Spelling::Spec, spec_spelled),
        (Spelling::Upper, upper),
        (Spelling::Mixed, mixed),
    ] {
        let answered = match answered {
            Ok(replies) => replies,
            Err(skip) => return skip,
        };
        for ((probe, reply), (_, lower)) in answered.into_iter().zip(&baseline) {
            if is_mismatch(&reply) || shape(&reply) != shape(lower) {
                let text = format!(
                    "`{}` with header names spelled {} answered {}, but {} with the same names \
                     lower-case; header names are case-insensitive and MUST be compared so",
                    probe.method,
                    spelling.describe(),
                    reply.describe(),
                    lower.describe()
                );
                refused = Some((text, reply, lower.clone()));
                break 'spellings;
            }
            tried.push(format!("`{}`", probe.method));
        }
    }
    tried.sort();
    tried.dedup();
    // Values half: each must be refused as a mismatch; an unknown name
    // answered -32602 leaves its probe unverified (see [`judge_named`]).
    let why = "header names are case-insensitive but header values are case-sensitive and must \
               match the body";
    let mut value_problem: Option<(String, Reply)> = None;
    let mut values_refused = Vec::new();
    let mut unverified = Vec::new();
    let mut unreached = Unreached::default();
    let mut uncompared = Vec::new();
    for (target, what, reply, other) in value_replies {
        if unreached.refused(&reply.method, &reply) {
            continue;
        }
        if !is_mismatch(&reply)
            && reply.status.is_some()
            && target.is_none_or(|t| t.real.is_some())
            && other
                .as_ref()
                .is_some_and(|o| o.status.is_some() && !is_mismatch(o))
        {
            uncompared.push(what.clone());
            continue;
        }
        let check = match target {
            Some(t) => judge_named(t, &reply, what, why),
            None if is_mismatch(&reply) => NameCheck::Refused,
            None => NameCheck::Failed(expect_mismatch(&reply, what, why)),
        };
        match check {
            NameCheck::Refused => values_refused.push(what.clone()),
            NameCheck::Unverified(text) => unverified.push(text),
            NameCheck::Failed(_) => {
                let how = if reply.ok() {
                    "was accepted with 200".to_owned()
                } else {
                    format!("answered {}", reply.describe())
                };
                value_problem = Some((
                    format!("{what} {how}; {why}, expected 400 with -32020"),
                    reply,
                ));
                break;
            }
        }
    }
    let mut scope = format!("{}{}", not_advertised(&absent), uncallable_note(s, None));
    if !uncompared.is_empty() {
        scope.push_str(&format!(
            "; not judged here: {} was not refused, but neither was the same request with a \
             wholly different value, so the server does not compare that header with the body \
             at all (MCP-HDR-003 and MCP-HDR-008 judge that), which shows nothing of letter case",
            some(&uncompared, 3, "; ")
        ));
    }
    match (refused, value_problem) {
        (None, None) if unverified.is_empty() => Judgement::pass(format!(
            "{} were answered alike with header names spelled lower-case, as the spec writes \
             them, upper-case and in mixed case (HTTP/1.1, names sent byte for byte); values in \
             another case were each refused with 400 and -32020: {}{}{scope}",
            tried.join(", "),
            some(&values_refused, 12, "; "),
            unreached.note()
        )),
        (None, None) => Judgement::skip(format!(
            "not verified: {}; header names were answered alike in every spelling on {}, and {} \
             {} refused with 400 and -32020{}{scope}",
            unverified.join("; "),
            tried.join(", "),
            some(&values_refused, 12, "; "),
            if values_refused.len() == 1 {
                "was"
            } else {
                "were"
            },
            unreached.note()
        )),
        (Some((text, spelled, lower)), None) => Judgement::fail(text).reply(&spelled).reply(&lower),
        (None, Some((text, reply))) => Judgement::fail(text).reply(&reply),
        (Some((names, spelled, lower)), Some((values, reply))) => {
            Judgement::fail(format!("{names}; and {values}"))
                .reply(&spelled)
                .reply(&lower)
                .reply(&reply)
        }
    }
}

async fn base64(s: &Session) -> Judgement {
    // Every method that carries Mcp-Name (value-encoding: "servers MUST
    // decode an encoded Mcp-Name ... before comparing it to the corresponding
    // request body value"). A listed name travels in the sentinel form even
    // when it is plain ASCII: clients must encode any plain value shaped like
    // the sentinel, so every sentinel value is an encoded one, and a real
    // name means an answer other than -32020 shows the decoded name matched.
    // Without a listed name, an unknown one outside the header-safe set, which
    // a conforming client must encode.
    //
    // The encoding applies to `Mcp-Param-{Name}` too (value-encoding: "Applies
    // to `Mcp-Name` and `Mcp-Param-{Name}`"): a tool whose schema mirrors a
    // string argument into a header is called with a value a conforming
    // client must encode (non-ASCII), its header in the sentinel form.
    let tag = format!("{:08x}", rand::random::<u32>());
    let (targets, absent) = named_targets(s, |kind| format!("protocheck-ünknown-{kind}-{tag}"));
    let params = param_targets(s, Some("string"));
    let params_list: &[ParamTarget] = params.as_deref().unwrap_or_default();
    if targets.is_empty() && params_list.is_empty() {
        let why = params.as_ref().err().cloned().unwrap_or_default();
        return Judgement::skip(format!("{NO_NAMED_METHOD}; `Mcp-Param-{{Name}}`: {why}"));
    }
    // Every probe goes out side by side (see `Session::each`); they are
    // judged in this order, the named methods first, then every string
    // annotation of every tool protocheck may call.
    let value = format!("protocheck-ü-{tag}");
    let mut probes: Vec<Probe> = targets
        .iter()
        .map(|t| t.probe.clone().with_header(H_NAME, wire::sentinel(&t.name)))
        .collect();
    for target in params_list {
        probes.push(
            target
                .call(s, json!(value))
                .with_header(&target.header(), wire::sentinel(&value)),
        );
    }
    let replies = s
        .each(probes.iter().map(|p| s.client.send(p)).collect())
        .await;
    let (named, param_replies) = replies.split_at(targets.len().min(replies.len()));
    let mut decoded = Vec::new();
    let mut inferred = Vec::new();
    for (target, reply) in targets.iter().zip(named) {
        let encoded = wire::sentinel(&target.name);
        let what = format!(
            "{} with `Mcp-Name: {encoded}` (the Base64 sentinel form of the body's `{}`)",
            target.describe(),
            target.name
        );
        if reply.error_code() == Some(code::HEADER_MISMATCH) {
            return Judgement::fail(format!(
                "{what} answered {}; servers MUST decode `=?base64?…?=` values before \
                 comparing them with the body",
                reply.describe()
            ))
            .reply(reply);
        }
        if reply.status.is_none() {
            return Judgement::fail(format!("{what} got {}", reply.describe())).reply(reply);
        }
        let line = format!("{} (answered {})", target.describe(), reply.describe());
        if target.real.is_some() {
            decoded.push(line);
        } else {
            inferred.push(line);
        }
    }
    let mut param_lines = Vec::new();
    for (target, reply) in params_list.iter().zip(param_replies) {
        let encoded = wire::sentinel(&value);
        let shown = target.shown_header();
        let what = format!(
            "{} with `{shown}: {encoded}` (the Base64 sentinel form of the body's \"{value}\")",
            target.describe()
        );
        if reply.error_code() == Some(code::HEADER_MISMATCH) {
            return Judgement::fail(format!(
                "{what} answered {}; servers MUST decode `=?base64?…?=` values before \
                 comparing them with the body",
                reply.describe()
            ))
            .reply(reply);
        }
        if reply.status.is_none() {
            return Judgement::fail(format!("{what} got {}", reply.describe())).reply(reply);
        }
        param_lines.push(format!(
            "`{shown}` on `{}` (answered {})",
            target.tool,
            reply.describe()
        ));
    }
    let param_part = match &params {
        Ok(_) => format!(
            "a Base64 sentinel `Mcp-Param-*` matching the body was not refused as a mismatch: {}{}",
            param_lines.join(", "),
            uncallable_note(s, Some("string"))
        ),
        Err(why) => format!("`Mcp-Param-{{Name}}` not probed: {why}"),
    };
    let mut parts = Vec::new();
    if !decoded.is_empty() {
        parts.push(format!(
            "a Base64 sentinel `Mcp-Name` matching the body was decoded and accepted on {}",
            decoded.join(", ")
        ));
    }
    if !inferred.is_empty() {
        parts.push(format!(
            "a sentinel `Mcp-Name` of an unknown name was not refused as a mismatch on {} (an \
             inference: the server decoded it, or looked the name up before the headers)",
            inferred.join(", ")
        ));
    }
    if targets.is_empty() {
        parts.push(format!("`Mcp-Name` not probed: {NO_NAMED_METHOD}"));
    }
    parts.push(param_part);
    Judgement::pass(format!("{}{}", parts.join("; "), not_advertised(&absent)))
}

/// A tool protocheck may call whose schema mirrors an argument into a header.
struct ParamTarget {
    tool: String,
    schema: Value,
    annotation: HeaderAnnotation,
    kind: &'static str,
}

fn primitive(annotation: &HeaderAnnotation) -> Option<&'static str> {
    // The property's type as JSON Schema reads it: a local `$ref`, an
    // enum-only schema and `["string", "null"]` count (see `wire::value_type`).
    match annotation.value_type.as_deref()? {
        "string" => Some("string"),
        "integer" => Some("integer"),
        "boolean" => Some("boolean"),
        _ => None,
    }
}

/// Every valid `x-mcp-header` annotation (of `kind` when given) of every tool
/// protocheck may call, in list order; or why there is none.
fn param_targets(s: &Session, kind: Option<&str>) -> Result<Vec<ParamTarget>, String> {
    if !s.advertises("tools") {
        return Err("the server does not advertise tools".into());
    }
    let mut annotated_but_not_callable = Vec::new();
    let mut found = Vec::new();
    for tool in &s.survey.tools.items {
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let valid: Vec<HeaderAnnotation> = wire::header_annotations(&schema)
            .into_iter()
            .filter(|a| {
                a.path.is_some()
                    && a.name()
                        .is_some_and(|n| !n.is_empty() && n.chars().all(wire::is_tchar))
                    && primitive(a).is_some_and(|k| kind.is_none_or(|want| want == k))
            })
            .collect();
        if valid.is_empty() {
            continue;
        }
        if !s.may_call(tool) {
            annotated_but_not_callable.push(name.to_owned());
            continue;
        }
        for annotation in valid {
            let kind = primitive(&annotation).unwrap_or("string");
            found.push(ParamTarget {
                tool: name.to_owned(),
                schema: schema.clone(),
                annotation,
                kind,
            });
        }
    }
    if !found.is_empty() {
        return Ok(found);
    }
    if annotated_but_not_callable.is_empty() {
        Err(match kind {
            Some(k) => format!("no tool declares a valid x-mcp-header on a {k} parameter"),
            None => "no tool declares a valid x-mcp-header parameter".into(),
        })
    } else {
        Err(format!(
            "the tools declaring x-mcp-header ({}) are not annotated readOnlyHint: true, and a \
             non-conforming server would run them; set allow_tool_calls to probe them",
            annotated_but_not_callable.join(", ")
        ))
    }
}

/// "; `a`, `b` not probed: ..." naming the annotated tools protocheck may not
/// call, beside those it probed.
fn uncallable_note(s: &Session, kind: Option<&str>) -> String {
    let skipped: Vec<String> = s
        .survey
        .tools
        .items
        .iter()
        .filter(|tool| !s.may_call(tool))
        .filter(|tool| {
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            wire::header_annotations(&schema).iter().any(|a| {
                a.path.is_some() && primitive(a).is_some_and(|k| kind.is_none_or(|w| w == k))
            })
        })
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(|n| format!("`{n}`"))
        .collect();
    if skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; {} not probed: not annotated readOnlyHint: true, and a non-conforming server would \
             run {} (set allow_tool_calls to probe them)",
            some(&skipped, 8, ", "),
            if skipped.len() == 1 { "it" } else { "them" }
        )
    }
}

impl ParamTarget {
    fn header(&self) -> String {
        format!(
            "{}{}",
            wire::H_PARAM_PREFIX,
            self.annotation
                .name()
                .unwrap_or_default()
                .to_ascii_lowercase()
        )
    }

    fn shown_header(&self) -> String {
        format!("Mcp-Param-{}", self.annotation.name().unwrap_or_default())
    }

    /// A conforming call with `value` at the annotated path (`None`: the
    /// argument left out), its `Mcp-Param-*` headers mirrored from the body.
    fn call_with(&self, s: &Session, value: Option<Value>) -> Probe {
        let mut arguments = placeholder_arguments(&self.schema);
        if let Some(path) = &self.annotation.path {
            let mut node = &mut arguments;
            for (i, step) in path.iter().enumerate() {
                if !node.is_object() {
                    *node = json!({});
                }
                let Some(obj) = node.as_object_mut() else {
                    break;
                };
                if i + 1 == path.len() {
                    match &value {
                        Some(v) => {
                            obj.insert(step.clone(), v.clone());
                        }
                        None => {
                            obj.remove(step);
                        }
                    }
                    break;
                }
                node = obj.entry(step.clone()).or_insert_with(|| json!({}));
            }
        }
        s.client
            .request(
                "tools/call",
                json!({"name": self.tool, "arguments": arguments}),
            )
            .with_param_headers(&self.schema)
    }

    /// A conforming call with `value` at the annotated path.
    fn call(&self, s: &Session, value: Value) -> Probe {
        self.call_with(s, Some(value))
    }

    /// `` `tools/call` of `tool` `` for a message.
    fn describe(&self) -> String {
        format!("`tools/call` of `{}`", self.tool)
    }

    fn values(&self) -> (Value, String) {
        match self.kind {
            "integer" => (json!(7), "8".into()),
            "boolean" => (json!(true), "false".into()),
            _ => (json!("protocheck"), "protocheck-other".into()),
        }
    }
}

/// What one MCP-HDR-008 probe checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ParamCase {
    /// The header differs from the argument: MUST be refused.
    Different,
    /// The header left out though the argument has a value: MUST be refused.
    Missing,
    /// The argument left out, so no header: MUST NOT be refused for it.
    Absent,
    /// The argument `null`, so no header: MUST NOT be refused for it.
    Null,
    /// An integer header `7.0` for the argument 7: SHOULD compare equal.
    Decimal,
}

/// Whether a refusal's message names `header` (any letter case).
fn names_header(reply: &Reply, shown: &str) -> bool {
    reply
        .error()
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .is_some_and(|m| m.to_ascii_lowercase().contains(&shown.to_ascii_lowercase()))
}

async fn param_matches(s: &Session) -> Judgement {
    // Every valid annotation of every tool protocheck may call (string,
    // integer and boolean alike): a header differing from the argument and a
    // missing header (both MUST be refused), the argument absent and null
    // (the server MUST NOT expect the header then), and for an integer the
    // header `7.0` (numeric comparison, a SHOULD). All side by side.
    let targets = match param_targets(s, None) {
        Ok(t) => t,
        Err(reason) => return Judgement::skip(reason),
    };
    let mut probes = Vec::new();
    for t in &targets {
        let (body_value, other) = t.values();
        let header = t.header();
        let shown = t.shown_header();
        let tool = t.describe();
        probes.push((
            t,
            ParamCase::Different,
            t.call(s, body_value.clone())
                .with_header(&header, other.clone()),
            format!("{tool} with `{shown}: {other}` and the body value {body_value}"),
        ));
        probes.push((
            t,
            ParamCase::Missing,
            t.call(s, body_value.clone()).without_header(&header),
            format!("{tool} without `{shown}` though the body carries {body_value}"),
        ));
        probes.push((
            t,
            ParamCase::Absent,
            t.call_with(s, None),
            format!("{tool} with the argument behind `{shown}` left out (and no such header)"),
        ));
        probes.push((
            t,
            ParamCase::Null,
            t.call(s, Value::Null),
            format!("{tool} with the argument behind `{shown}` null (and no such header)"),
        ));
        if t.kind == "integer" {
            probes.push((
                t,
                ParamCase::Decimal,
                t.call(s, json!(7)).with_header(&header, "7.0"),
                format!("{tool} with `{shown}: 7.0` and the body value 7"),
            ));
        }
    }
    let sends: Vec<_> = probes
        .iter()
        .map(|(t, case, probe, what)| async move { (*t, *case, what, s.client.send(probe).await) })
        .collect();
    // Judged in order once all are back: a MUST broken fails; the SHOULD warns.
    let mut refused = Vec::new();
    let mut let_be = Vec::new();
    let mut decimal_refused: Option<(String, Reply)> = None;
    let mut decimal_equal = Vec::new();
    let mut unreached = Unreached::default();
    for (t, case, what, reply) in s.each(sends).await {
        if unreached.refused("tools/call", &reply) {
            continue;
        }
        let shown = t.shown_header();
        match case {
            ParamCase::Different | ParamCase::Missing => {
                if !is_mismatch(&reply) {
                    let why = if case == ParamCase::Different {
                        "Mcp-Param headers must match the body"
                    } else {
                        "a value present in the body requires its header"
                    };
                    return expect_mismatch(&reply, what, why);
                }
                refused.push(format!(
                    "{} `{shown}` on `{}`",
                    if case == ParamCase::Different {
                        "a different"
                    } else {
                        "a missing"
                    },
                    t.tool
                ));
            }
            ParamCase::Absent | ParamCase::Null => {
                if is_mismatch(&reply) {
                    let named = if names_header(&reply, &shown) {
                        format!("; its message names `{shown}`")
                    } else {
                        "; every other header of the request mirrored its body".to_owned()
                    };
                    return Judgement::fail(format!(
                        "{what} was refused with 400 and -32020{named}: with the argument absent \
                         or null the client omits the header and the server MUST NOT expect it"
                    ))
                    .reply(&reply);
                }
                let_be.push(format!(
                    "`{}` with the argument {} (answered {})",
                    t.tool,
                    if case == ParamCase::Absent {
                        "absent"
                    } else {
                        "null"
                    },
                    reply.describe()
                ));
            }
            ParamCase::Decimal => {
                if is_mismatch(&reply) {
                    decimal_refused.get_or_insert((what.clone(), reply));
                } else {
                    decimal_equal.push(format!("`{}`", t.tool));
                }
            }
        }
    }
    if refused.is_empty() && let_be.is_empty() {
        return unreached.skip();
    }
    let mut text = format!(
        "{} {} refused with 400 and -32020; no missing header was held against {}",
        some(&refused, 12, ", "),
        if refused.len() == 1 {
            "was"
        } else {
            "were each"
        },
        some(&let_be, 12, ", ")
    );
    if !decimal_equal.is_empty() {
        text.push_str(&format!(
            "; an integer header `7.0` for the argument 7 was taken as equal on {}",
            decimal_equal.join(", ")
        ));
    }
    text.push_str(&unreached.note());
    text.push_str(&uncallable_note(s, None));
    match decimal_refused {
        Some((what, reply)) => Judgement::warn(format!(
            "{what} was refused with 400 and -32020: integer values SHOULD be compared \
             numerically (7.0 equals 7); {text}"
        ))
        .reply(&reply),
        None => Judgement::pass(text),
    }
}

/// The control characters a header value can carry over HTTP/1.1 but a
/// plain `Mcp-Param-*` value may not (streamable-http#value-encoding: 0x00-0x1F
/// and 0x7F must be encoded): all but NUL, CR and LF (which no HTTP message
/// carries in a field) and HTAB (a plain value may hold it).
fn control_characters() -> Vec<char> {
    (0x01u8..=0x1f)
        .chain([0x7f])
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'))
        .map(char::from)
        .collect()
}

/// How one MCP-HDR-009 answer reads.
enum CharCheck {
    /// 400 with -32020.
    Refused,
    /// HTTP 400 without a JSON-RPC body: the HTTP layer refused the field.
    RefusedByHttp,
    /// No answer at all (the connection closed, or time ran out).
    Unanswered,
}

/// Judges an answer to a probe whose `Mcp-Param-*` value holds an invalid
/// character. Decision: a 400 that carries no JSON-RPC message is read as the
/// server's HTTP stack refusing the field value (RFC 9110 §5.5 lets a
/// recipient reject control characters in a field), a rejection too, named
/// as such; no answer at all is noted, never failed (it may be a lost
/// connection); anything else fails.
fn judge_character(reply: &Reply, what: &str) -> Result<CharCheck, Judgement> {
    if is_mismatch(reply) {
        return Ok(CharCheck::Refused);
    }
    if reply.status.is_none() {
        return Ok(CharCheck::Unanswered);
    }
    if reply.status == Some(400) && reply.result().is_none() && reply.error().is_none() {
        return Ok(CharCheck::RefusedByHttp);
    }
    Err(expect_mismatch(
        reply,
        what,
        "a recognised Mcp-Param header with characters outside visible ASCII, space and tab must \
         be refused",
    ))
}

/// `0x01` for a message.
fn hex(c: char) -> String {
    format!("0x{:02X}", u32::from(c))
}

async fn param_characters(s: &Session) -> Judgement {
    // Every valid annotation of every tool protocheck may call. Raw UTF-8
    // (`é`) travels on the pooled client; each control character on a
    // dedicated HTTP/1.1 connection (the pooled client refuses to write
    // them), one after another per annotation, the annotations side by side.
    // A string argument carries the same text as its header, so only the
    // characters are wrong; an integer or boolean argument cannot hold them,
    // so its header (`7…`, `true…`) differs from the body as well.
    let targets = match param_targets(s, None) {
        Ok(t) => t,
        Err(reason) => return Judgement::skip(reason),
    };
    let controls = control_characters();
    let controls: &[char] = &controls;
    let text_of = |t: &ParamTarget, extra: &str| -> (Value, String) {
        match t.kind {
            "string" => {
                let v = format!("protocheck-{extra}-x");
                (json!(v), v)
            }
            _ => {
                let (body, _) = t.values();
                let text = wire::header_text(&body).unwrap_or_default();
                (body, format!("{text}{extra}"))
            }
        }
    };
    let utf8 = targets.iter().map(|t| {
        let (body, header) = text_of(t, "café");
        let probe = t.call(s, body).with_header(&t.header(), header.clone());
        async move {
            let what = format!(
                "{} with `{}: {header}` sent as raw UTF-8 (not Base64-encoded)",
                t.describe(),
                t.shown_header()
            );
            vec![(what, s.client.send(&probe).await)]
        }
        .boxed()
    });
    let lanes = targets.iter().map(|t| {
        let probes: Vec<Probe> = controls
            .iter()
            .map(|c| {
                let (body, header) = text_of(t, &c.to_string());
                t.call(s, body).with_header(&t.header(), header)
            })
            .collect();
        async move {
            let answered = match spelled(s, &probes, Spelling::Lower).await {
                Ok(answered) => answered,
                Err(_) => {
                    let what = format!(
                        "{} with control characters in `{}`: no dedicated connection could be \
                         opened",
                        t.describe(),
                        t.shown_header()
                    );
                    return vec![(what, Reply::empty("tools/call"))];
                }
            };
            answered
                .into_iter()
                .zip(controls)
                .map(|((_, reply), c)| {
                    let what = format!(
                        "{} with `{}` holding the control character {} (raw, on a dedicated \
                         HTTP/1.1 connection)",
                        t.describe(),
                        t.shown_header(),
                        hex(*c)
                    );
                    (what, reply)
                })
                .collect::<Vec<_>>()
        }
        .boxed()
    });
    let sends: Vec<_> = utf8.chain(lanes).collect();
    let mut refused = 0usize;
    let mut by_http = Vec::new();
    let mut unanswered = Vec::new();
    let mut unreached = Unreached::default();
    for answers in s.each(sends).await {
        for (what, reply) in answers {
            if unreached.refused("tools/call", &reply) {
                continue;
            }
            match judge_character(&reply, &what) {
                Ok(CharCheck::Refused) => refused += 1,
                Ok(CharCheck::RefusedByHttp) => by_http.push(what),
                Ok(CharCheck::Unanswered) => unanswered.push(what),
                Err(fail) => return fail,
            }
        }
    }
    // A refusal by the HTTP layer says nothing of the server's own validation
    // where the server refused the other probes before it (authorization):
    // judged only beside at least one -32020.
    if refused == 0 && (by_http.is_empty() || !unreached.note().is_empty()) {
        if by_http.is_empty() && !unanswered.is_empty() {
            return Judgement::skip(format!(
                "not verified: no probe got an answer ({})",
                some(&unanswered, 3, "; ")
            ));
        }
        return unreached.skip();
    }
    let tools: Vec<String> = targets
        .iter()
        .map(|t| format!("`{}` `{}` ({})", t.tool, t.shown_header(), t.kind))
        .collect();
    let mut text = format!(
        "on {}: raw UTF-8 (`é`) and each of the {} control characters (0x01-0x08, 0x0B, \
         0x0C, 0x0E-0x1F, 0x7F; NUL, CR and LF no HTTP field carries, HTAB a plain value may hold) \
         were refused: {refused} with 400 and -32020",
        tools.join(", "),
        controls.len()
    );
    if !by_http.is_empty() {
        text.push_str(&format!(
            ", {} with HTTP 400 and no JSON-RPC body (read as the HTTP layer refusing the field \
             value, which RFC 9110 §5.5 lets a recipient do; e.g. {})",
            by_http.len(),
            some(&by_http, 1, "")
        ));
    }
    if !unanswered.is_empty() {
        text.push_str(&format!(
            "; {} got no answer and were not judged (e.g. {})",
            unanswered.len(),
            some(&unanswered, 1, "")
        ));
    }
    text.push_str(&unreached.note());
    text.push_str(&uncallable_note(s, None));
    Judgement::pass(text)
}

/// Decision (HDR-010): `Mcp-Method` is required on "All requests"
/// (streamable-http, "Standard Request Headers"), so validation before
/// dispatch is probed on every method family the server serves: each
/// request's body (a real tool, resource or prompt where one was listed, see
/// [`real_tool`]) under an `Mcp-Method` naming another method, and an unknown
/// body method under `Mcp-Method: server/discover`. A conforming server
/// refuses each with 400 and -32020; -32601 means it looked the method up
/// first, a result that a handler ran the request. Running a mismatched
/// request also breaks the Server Validation MUST, but the rule stays the
/// warning the catalogue lists it as (MAY, "best practice").
async fn before_dispatch(s: &Session) -> Judgement {
    let method = format!("protocheck/{}", unknown_name("method"));
    let unknown = s
        .client
        .request("server/discover", json!({}))
        .with_body_method(&method);
    let (named, _) = named_targets(s, unknown_name);
    let families = s.family_probes();
    // The header names another method the server serves, so that a server
    // routing on the header finds a handler too: server/discover, or for a
    // server/discover body the next family's list.
    let alternate = families
        .iter()
        .map(|p| p.method.clone())
        .find(|m| m != "server/discover")
        .unwrap_or_else(|| "tools/list".to_owned());
    let mut probes = vec![(
        unknown,
        format!("a request with `Mcp-Method: server/discover` and the body method `{method}`"),
    )];
    for template in families {
        let body_method = template.method.clone();
        let (probe, shown) = match named.iter().find(|n| n.method == body_method) {
            Some(n) => (n.probe.clone(), n.describe()),
            None => (template, format!("`{body_method}`")),
        };
        let header = if body_method == "server/discover" {
            alternate.as_str()
        } else {
            "server/discover"
        };
        probes.push((
            probe.with_header(H_METHOD, header),
            format!("{shown} with `Mcp-Method: {header}`"),
        ));
    }
    let sends: Vec<_> = probes
        .iter()
        .map(|(probe, what)| async move { (probe, what, send_family(&s.client, probe).await) })
        .collect();
    // The probes are independent (see `Session::each`); judged in order.
    let mut refused = Vec::new();
    let mut unreached = Unreached::default();
    for (probe, what, reply) in s.each(sends).await {
        if unreached.refused(&probe.method, &reply) {
            continue;
        }
        if is_mismatch(&reply) {
            refused.push(what.clone());
            continue;
        }
        let why = if reply.error_code() == Some(code::METHOD_NOT_FOUND) {
            "the method was looked up before the headers were validated"
        } else if reply.result().is_some() {
            "a handler ran a request whose header and body disagree"
        } else {
            "header validation before dispatch refuses it with 400 and -32020"
        };
        return Judgement::fail(format!(
            "{what} answered {}: {why}; validating the headers first means no mismatched request \
             ever reaches a handler",
            reply.describe()
        ))
        .reply(&reply);
    }
    if refused.is_empty() {
        return unreached.skip();
    }
    Judgement::pass(format!(
        "requests whose Mcp-Method disagreed with the body were refused by header validation \
         (400, -32020) before dispatch: {}{}",
        refused.join("; "),
        unreached.note()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: Option<u16>, message: Option<Value>) -> Reply {
        let mut reply = Reply::empty("tools/call");
        reply.status = status;
        reply.message = message;
        reply
    }

    #[test]
    fn a_control_character_let_through_fails() {
        let what = "`tools/call` of `t` with `Mcp-Param-Region` holding 0x01";
        let ran = answered(
            Some(200),
            Some(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})),
        );
        assert!(judge_character(&ran, what).is_err());
        let other_code = answered(
            Some(400),
            Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "x"}})),
        );
        assert!(judge_character(&other_code, what).is_err());
        let refused = answered(
            Some(400),
            Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "x"}})),
        );
        assert!(matches!(
            judge_character(&refused, what),
            Ok(CharCheck::Refused)
        ));
        // The HTTP layer's own refusal of the field, and no answer at all.
        assert!(matches!(
            judge_character(&answered(Some(400), None), what),
            Ok(CharCheck::RefusedByHttp)
        ));
        assert!(matches!(
            judge_character(&answered(None, None), what),
            Ok(CharCheck::Unanswered)
        ));
    }

    #[test]
    fn control_characters_are_those_a_field_can_carry() {
        let controls = control_characters();
        assert_eq!(controls.len(), 29);
        for c in ['\0', '\t', '\n', '\r'] {
            assert!(!controls.contains(&c), "{c:?}");
        }
        assert!(controls.contains(&'\u{7f}') && controls.contains(&'\u{1}'));
    }

    #[test]
    fn mixed_case_spells_names_as_no_fixed_spelling_does() {
        assert_eq!(Spelling::Mixed.name("mcp-name"), "mCp-NaMe");
        assert_eq!(Spelling::Mixed.name("mcp-method"), "mCp-MeThOd");
    }
}
