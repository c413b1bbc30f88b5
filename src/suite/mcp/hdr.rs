//! HDR — request metadata headers (streamable-http#request-metadata through
//! #server-validation).
//!
//! Probes are built so that a conforming server refuses them before dispatch
//! and a non-conforming one still runs nothing: unknown tool, prompt and method
//! names, `server/discover`, and tools annotated read-only (or any tool when the
//! run sets allow_tool_calls).

use super::client::{Probe, Reply, Spelling};
use super::era::Era;
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{Judgement, Session};
use super::stl::COLD_ID;
use super::survey::{placeholder_arguments, unknown_name};
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
.http_only("the Mcp-* and MCP-Protocol-Version HTTP headers");

/// Streamable-http, "Protocol Version Header": "A server that supports
/// clients implementing protocol versions earlier than 2025-06-18 … MAY treat
/// a request that omits the header as protocol version 2025-03-26. A server
/// that does not support such clients MUST reject a request without the
/// header per Server Validation." The rule is judged on every server that
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

/// A request that carries `Mcp-Name`, addressed to a name the server does not
/// have: refused before dispatch by a conforming server, harmless otherwise.
fn named_request(s: &Session, name: &str) -> Option<Probe> {
    let c = &s.client;
    if s.advertises("tools") {
        Some(c.request("tools/call", json!({"name": name, "arguments": {}})))
    } else if s.advertises("prompts") {
        Some(c.request("prompts/get", json!({"name": name})))
    } else if s.advertises("resources") {
        Some(c.request(
            "resources/read",
            json!({"uri": format!("protocheck://missing/{name}")}),
        ))
    } else {
        None
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
    let mut methods = Vec::new();
    for probe in s.family_probes() {
        let method = probe.method.clone();
        let reply = s.client.send(&bend(probe)).await;
        if !is_mismatch(&reply) {
            return expect_mismatch(&reply, &format!("`{method}` {what}"), why);
        }
        methods.push(format!("`{method}`"));
    }
    Judgement::pass(format!(
        "{} {what} were each refused with 400 and -32020",
        methods.join(", ")
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
/// Decision (HDR-002/003): streamable-http#server-validation lists "a required
/// standard header missing" and "a header value not matching the body" as
/// failures but does not order them against the lookup of the tool, so a
/// server may answer an unknown tool name with -32602 before it looks at the
/// headers. Probing with a real tool (annotated `readOnlyHint: true`, or any
/// when the run sets allow_tool_calls, §15.6) makes that order irrelevant; the
/// unknown-name probe is the fallback, and its "unknown tool" answer proves
/// nothing either way.
fn real_tool(s: &Session) -> Option<(String, Value)> {
    let tools = &s.survey.tools.items;
    let read_only = |t: &&Value| {
        t.pointer("/annotations/readOnlyHint")
            .and_then(Value::as_bool)
            == Some(true)
    };
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

/// Judges a header probe sent with an unknown tool name: an "unknown tool"
/// answer leaves the rule unverified (see [`real_tool`]).
fn judge_unknown_name_probe(reply: &Reply, what: &str, why: &str) -> Judgement {
    if is_mismatch(reply) {
        return Judgement::pass(format!(
            "{what} was refused with 400 and -32020 (probed with an unknown tool name: no tool \
             is annotated readOnlyHint: true and the run does not allow tool calls)"
        ));
    }
    if reply.error_code() == Some(code::INVALID_PARAMS) {
        return Judgement::skip(format!(
            "not verified: {what} answered {} (unknown tool): the server looked the tool up \
             before the headers, which the spec does not forbid, so this says nothing about its \
             header validation; no tool is annotated readOnlyHint: true to probe with a real \
             name (set allow_tool_calls to use any tool)",
            reply.describe()
        ));
    }
    expect_mismatch(reply, what, why)
}

async fn missing_name(s: &Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("the server does not advertise tools");
    }
    let why = "Mcp-Name is required on tools/call";
    if let Some((tool, schema)) = real_tool(s) {
        let probe = real_call(s, &tool, &schema).without_header(H_NAME);
        let reply = s.client.send(&probe).await;
        let what = format!("`tools/call` of the real tool `{tool}` without `Mcp-Name`");
        let j = expect_mismatch(&reply, &what, why);
        return match j.kind {
            super::session::Kind::Pass => Judgement::pass(format!(
                "{what} was refused with 400 and -32020 (a real tool, so the order in which the \
                 server checks the tool and the headers does not matter)"
            )),
            _ => j,
        };
    }
    let name = unknown_name("tool");
    let probe = s
        .client
        .request("tools/call", json!({"name": name, "arguments": {}}))
        .without_header(H_NAME);
    let reply = s.client.send(&probe).await;
    judge_unknown_name_probe(&reply, "`tools/call` without `Mcp-Name`", why)
}

async fn name_matches(s: &Session) -> Judgement {
    let header_name = unknown_name("b");
    let why = "the header must match the body";
    if s.advertises("tools")
        && let Some((tool, schema)) = real_tool(s)
    {
        let probe = real_call(s, &tool, &schema).with_header(H_NAME, header_name.clone());
        let reply = s.client.send(&probe).await;
        let what = format!(
            "`tools/call` with `Mcp-Name: {header_name}` and a body naming the real tool `{tool}`"
        );
        let j = expect_mismatch(&reply, &what, why);
        return match j.kind {
            super::session::Kind::Pass => Judgement::pass(format!(
                "{what} was refused with 400 and -32020 (a real tool, so the order in which the \
                 server checks the tool and the headers does not matter)"
            )),
            _ => j,
        };
    }
    let body_name = unknown_name("a");
    let Some(probe) = named_request(s, &body_name) else {
        return Judgement::skip(NO_NAMED_METHOD);
    };
    let method = probe.method.clone();
    let probe = probe.with_header(H_NAME, header_name.clone());
    let reply = s.client.send(&probe).await;
    let what = format!("`{method}` with `Mcp-Name: {header_name}` and a body naming `{body_name}`");
    if method == "tools/call" {
        judge_unknown_name_probe(&reply, &what, why)
    } else {
        expect_mismatch(&reply, &what, why)
    }
}

async fn missing_version(s: &Session) -> Judgement {
    let probe = s
        .client
        .request("server/discover", json!({}))
        .without_header(H_PROTOCOL_VERSION);
    let reply = s.client.send(&probe).await;
    let what = "`server/discover` without `MCP-Protocol-Version`";
    if is_mismatch(&reply) {
        return Judgement::pass(format!("{what} was refused with 400 and -32020"));
    }
    if discover_result(&reply) {
        return Judgement::fail(format!(
            "{what} was served as a {} request: it answered {}, a DiscoverResult. A server that \
             supports clients older than 2025-06-18 MAY treat the request as 2025-03-26, which \
             has no `server/discover`, and one that does not MUST reject it with 400 and \
             -32020: serving it as {} is neither",
            wire::PROTOCOL_VERSION,
            reply.describe(),
            wire::PROTOCOL_VERSION
        ))
        .reply(&reply);
    }
    if matches!(s.era, Era::Dual { .. }) && legacy_terms(&reply) {
        return Judgement::skip(format!(
            "not applicable: {}; {what} answered {}, which protocheck reads as an answer in \
             legacy terms (an inference: neither a 2026-07-28 result nor a 2026-07-28 error): a \
             server that supports clients older than 2025-06-18 MAY treat a request that omits \
             the header as 2025-03-26",
            s.era.describe(),
            reply.describe()
        ));
    }
    expect_mismatch(&reply, what, "the header is required on every POST")
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

/// Whether a dual-era server answered a header-less `server/discover` in the
/// terms of a revision before 2026-07-28: an answer that is neither a
/// 2026-07-28 result nor one of the errors only 2026-07-28 defines (-32020,
/// -32021, -32022). -32601 at any status counts as legacy: 2025-03-26 has no
/// `server/discover`, so "method not found" is what it answers. A request
/// that got no answer at all is not one.
fn legacy_terms(reply: &Reply) -> bool {
    reply.status.is_some()
        && reply.result().is_none()
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
    let cases = [
        (wire::PROTOCOL_VERSION, other),
        (other, wire::PROTOCOL_VERSION),
    ];
    let mut readings = Vec::new();
    let mut methods = Vec::new();
    for template in s.family_probes() {
        for (header, meta) in cases {
            let probe = template
                .clone()
                .with_meta(wire::META_PROTOCOL_VERSION, json!(meta))
                .with_header(H_PROTOCOL_VERSION, header);
            let reply = s.client.send(&probe).await;
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
        }
        methods.push(format!("`{}`", template.method));
    }
    let note = if readings.is_empty() {
        String::new()
    } else {
        format!(" ({})", readings.join("; "))
    };
    Judgement::pass(format!(
        "{} whose MCP-Protocol-Version header and `_meta` version differ were refused with \
         400{note}",
        methods.join(", ")
    ))
}

/// `(status, error code, has result)`: what two answers must share to count as the same.
fn shape(reply: &Reply) -> (Option<u16>, Option<i64>, bool) {
    (reply.status, reply.error_code(), reply.result().is_some())
}

async fn case(s: &Session) -> Judgement {
    // Names half (streamable-http#case-sensitivity: header names MUST be
    // compared case-insensitively). The pooled client sends names lower-case
    // only (hyper writes them so), which a server looking up `Mcp-Method`
    // case-sensitively would refuse while one looking up `mcp-method` would
    // not: so valid requests go, on a dedicated HTTP/1.1 connection where
    // names travel byte for byte, spelled lower-case, as the spec writes them
    // and upper-case, and every spelling must be answered like the first
    // (§15 amendment "Header names are probed in several spellings").
    if !s.discover.ok() {
        return Judgement::skip(
            "not verified: server/discover with lower-case header names failed",
        );
    }
    let mut requests = vec![s.client.request("server/discover", json!({}))];
    if let Some(named) = named_request(s, &unknown_name("case")) {
        requests.push(named);
    }
    if let Ok(target) = param_target(s, None) {
        let (value, _) = target.values();
        requests.push(target.call(s, value));
    }
    let mut conn = match s.client.dedicated().await {
        Ok(c) => c,
        Err(e) => {
            return Judgement::skip(format!(
                "could not open a connection to send header names as written: {e}"
            ));
        }
    };
    let mut baseline: Vec<Reply> = Vec::new();
    let mut tried = Vec::new();
    let mut refused: Option<(String, Reply, Reply)> = None;
    'spellings: for spelling in [Spelling::Lower, Spelling::Spec, Spelling::Upper] {
        for (i, template) in requests.iter().enumerate() {
            if conn.closed().is_some() {
                conn = match s.client.dedicated().await {
                    Ok(c) => c,
                    Err(e) => {
                        return Judgement::skip(format!(
                            "could not open a connection to send header names as written: {e}"
                        ));
                    }
                };
            }
            let mut probe = template.clone();
            if let Some(id) = probe.body.get_mut("id") {
                *id = json!(s.client.next_id());
            }
            let mut reply = s.client.send_on(&mut conn, &probe, spelling).await;
            if reply.status.is_none() {
                // The server closed the connection between requests: the
                // same request again on a new one (this rule needs no reuse).
                conn = match s.client.dedicated().await {
                    Ok(c) => c,
                    Err(e) => {
                        return Judgement::skip(format!(
                            "could not open a connection to send header names as written: {e}"
                        ));
                    }
                };
                reply = s.client.send_on(&mut conn, &probe, spelling).await;
            }
            if spelling == Spelling::Lower {
                baseline.push(reply);
                continue;
            }
            let Some(lower) = baseline.get(i) else {
                continue;
            };
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
    // Values half: a value in another case is a different value.
    let probe = s
        .client
        .request("server/discover", json!({}))
        .with_header(H_METHOD, "SERVER/DISCOVER");
    let reply = s.client.send(&probe).await;
    let value_problem = (!is_mismatch(&reply)).then(|| {
        let how = if reply.ok() {
            "was accepted with 200".to_owned()
        } else {
            format!("answered {}", reply.describe())
        };
        format!(
            "`Mcp-Method: SERVER/DISCOVER` with body `server/discover` {how}; header names are \
             case-insensitive but header values are case-sensitive and must match the body, \
             expected 400 with -32020"
        )
    });
    match (refused, value_problem) {
        (None, None) => Judgement::pass(format!(
            "{} were answered alike with header names spelled lower-case, as the spec writes \
             them and upper-case (HTTP/1.1, names sent byte for byte), and `Mcp-Method: \
             SERVER/DISCOVER` with body `server/discover` was refused with 400 and -32020",
            tried.join(", ")
        )),
        (Some((text, spelled, lower)), None) => Judgement::fail(text).reply(&spelled).reply(&lower),
        (None, Some(text)) => Judgement::fail(text).reply(&reply),
        (Some((names, spelled, lower)), Some(values)) => {
            Judgement::fail(format!("{names}; and {values}"))
                .reply(&spelled)
                .reply(&lower)
                .reply(&reply)
        }
    }
}

async fn base64(s: &Session) -> Judgement {
    // A name outside the header-safe set, so a conforming client must encode it.
    let name = format!("protocheck-ünknown-{:08x}", rand::random::<u32>());
    let Some(probe) = named_request(s, &name) else {
        return Judgement::skip(NO_NAMED_METHOD);
    };
    let method = probe.method.clone();
    let encoded = probe.header(H_NAME).unwrap_or_default().to_owned();
    let reply = s.client.send(&probe).await;
    if reply.error_code() == Some(code::HEADER_MISMATCH) {
        Judgement::fail(format!(
            "`{method}` with `Mcp-Name: {encoded}` (the Base64 sentinel form of the body's \
             `{name}`) answered {}; servers MUST decode `=?base64?…?=` values before comparing \
             them with the body",
            reply.describe()
        ))
        .reply(&reply)
    } else if reply.status.is_none() {
        Judgement::fail(format!(
            "`{method}` with a Base64 sentinel `Mcp-Name` got {}",
            reply.describe()
        ))
        .reply(&reply)
    } else {
        Judgement::pass(format!(
            "a Base64 sentinel `Mcp-Name` matching the body was decoded and accepted (the \
             request went on to answer {})",
            reply.describe()
        ))
    }
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

/// The first callable tool with a valid `x-mcp-header` annotation (of `kind`
/// when given), or why there is none.
fn param_target(s: &Session, kind: Option<&str>) -> Result<ParamTarget, String> {
    if !s.advertises("tools") {
        return Err("the server does not advertise tools".into());
    }
    let mut annotated_but_not_callable = Vec::new();
    for tool in &s.survey.tools.items {
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let valid = wire::header_annotations(&schema).into_iter().find(|a| {
            a.path.is_some()
                && a.name()
                    .is_some_and(|n| !n.is_empty() && n.chars().all(wire::is_tchar))
                && primitive(a).is_some_and(|k| kind.is_none_or(|want| want == k))
        });
        let Some(annotation) = valid else { continue };
        if !s.may_call(tool) {
            annotated_but_not_callable.push(name.to_owned());
            continue;
        }
        let kind = primitive(&annotation).unwrap_or("string");
        return Ok(ParamTarget {
            tool: name.to_owned(),
            schema,
            annotation,
            kind,
        });
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

    /// A conforming call with `value` at the annotated path.
    fn call(&self, s: &Session, value: Value) -> Probe {
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
                    obj.insert(step.clone(), value.clone());
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

    fn values(&self) -> (Value, String) {
        match self.kind {
            "integer" => (json!(7), "8".into()),
            "boolean" => (json!(true), "false".into()),
            _ => (json!("protocheck"), "protocheck-other".into()),
        }
    }
}

async fn param_matches(s: &Session) -> Judgement {
    let target = match param_target(s, None) {
        Ok(t) => t,
        Err(reason) => return Judgement::skip(reason),
    };
    let (body_value, other) = target.values();
    let header = target.header();
    let shown = target.shown_header();
    let mismatched = target
        .call(s, body_value.clone())
        .with_header(&header, other.clone());
    let reply = s.client.send(&mismatched).await;
    if !is_mismatch(&reply) {
        return expect_mismatch(
            &reply,
            &format!(
                "`tools/call` of `{}` with `{shown}: {other}` and the body value {body_value}",
                target.tool
            ),
            "Mcp-Param headers must match the body",
        );
    }
    let missing = target.call(s, body_value.clone()).without_header(&header);
    let reply = s.client.send(&missing).await;
    if !is_mismatch(&reply) {
        return expect_mismatch(
            &reply,
            &format!(
                "`tools/call` of `{}` without `{shown}` though the body carries {body_value}",
                target.tool
            ),
            "a value present in the body requires its header",
        );
    }
    Judgement::pass(format!(
        "`{}`: a mismatched and a missing `{shown}` were both refused with 400 and -32020",
        target.tool
    ))
}

async fn param_characters(s: &Session) -> Judgement {
    let target = match param_target(s, Some("string")) {
        Ok(t) => t,
        Err(reason) => return Judgement::skip(reason),
    };
    // Raw UTF-8 in the header, equal to the body value: only the characters are
    // wrong (a conforming client would have sent the Base64 sentinel).
    let value = "protocheck-café";
    let probe = target
        .call(s, json!(value))
        .with_header(&target.header(), value);
    let reply = s.client.send(&probe).await;
    expect_mismatch(
        &reply,
        &format!(
            "`tools/call` of `{}` with `{}: {value}` sent as raw UTF-8 (not Base64-encoded)",
            target.tool,
            target.shown_header()
        ),
        "a recognised Mcp-Param header with characters outside visible ASCII must be refused",
    )
}

async fn before_dispatch(s: &Session) -> Judgement {
    let method = format!("protocheck/{}", unknown_name("method"));
    let probe = s
        .client
        .request("server/discover", json!({}))
        .with_body_method(&method);
    let reply = s.client.send(&probe).await;
    if is_mismatch(&reply) {
        Judgement::pass(
            "a request whose Mcp-Method (server/discover) disagreed with an unknown body method \
             was refused by header validation (400, -32020) before dispatch",
        )
    } else if reply.error_code() == Some(code::METHOD_NOT_FOUND) {
        Judgement::fail(format!(
            "a request with `Mcp-Method: server/discover` and the body method `{method}` answered \
             {}: the method was looked up before the headers were validated; validating first \
             means no mismatched request ever reaches a handler",
            reply.describe()
        ))
        .reply(&reply)
    } else {
        Judgement::fail(format!(
            "a request with `Mcp-Method: server/discover` and the body method `{method}` answered \
             {}; header validation before dispatch refuses it with 400 and -32020",
            reply.describe()
        ))
        .reply(&reply)
    }
}
