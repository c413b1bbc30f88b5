//! RES — resources (server/resources): the capability, the list and
//! template list, reading, URIs, binary contents, the not-found error and
//! subscriptions. Reading is side-effect free by definition, so protocheck
//! reads listed resources; it subscribes only when the server advertises
//! subscriptions, and unsubscribes right after.
//!
//! Also the helpers the prompt group shares: walking a paginated list, the
//! content blocks of a result, and the judgement of a preferred error code.

use super::client::{Connection, Reply, Seen};
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Session};
use super::uri::uri_problem;
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::{clip, some};
use crate::suite::mcp::wire::base64_decode;
use crate::transport::TransportError;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const RESOURCES_DECLARED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-001",
    "A server that lists resources declares the resources capability",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#capabilities"),
    "RES",
    |s| resources_declared(s).boxed(),
)
.says("servers that support resources declare the `resources` capability")
.help(
    "protocheck reads the `initialize` capabilities; when `resources` is not declared, it sends \
     `resources/list` and `resources/templates/list` anyway and fails if either result lists \
     anything.",
    "The server lists resources although its `capabilities` lack `resources`, usually because \
     resources were registered on a low-level server whose capabilities are set by hand.",
    "Declare `\"resources\": {}` (with `subscribe` and `listChanged` as the server supports them) \
     in the `capabilities` of the `initialize` result whenever the server offers resources.",
);

pub(crate) const LIST_SHAPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-002",
    "resources/list returns a resources array; each has a string uri and name",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#listing-resources"),
    "RES",
    |s| list_shape(s).boxed(),
)
.says(
    "a listed resource is identified by a URI and carries a name; `mimeType` is a string and \
     `size` a number when present",
)
.help(
    "protocheck walks `resources/list` from its first page, following `nextCursor` (at most 20 \
     pages and 1000 items). Each page must be a result with a `resources` array, and each \
     resource an object with a string `uri` and `name`, a string `mimeType` and a numeric `size` \
     when present.",
    "A page is an error, `nextCursor` is not a string, or a resource misses `name` or has `size` \
     as a string or `mimeType` as `null`, usually when list items are serialised from a loose \
     data model.",
    "Give every listed resource a string `uri` and `name`; omit optional fields rather than \
     sending `null`, send `size` as a number of bytes, and `nextCursor` only as a string.",
)
.needs_capability("resources");

pub(crate) const URIS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-003",
    "Every resource URI is an RFC 3986 URI",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#custom-uri-schemes"),
    "RES",
    |s| uris(s).boxed(),
)
.says("resource URIs, custom schemes included, follow RFC 3986")
.help(
    "After every other rule, protocheck collects every resource URI the run saw (listed by \
     `resources/list`, in `resources/read` contents, in `resource_link` and embedded `resource` \
     blocks, in `notifications/resources/updated`) and checks each against RFC 3986: a scheme, then allowed characters and well-formed \
     percent-encodings.",
    "A URI has no scheme (a bare path such as `docs/readme.md`), holds spaces or non-ASCII \
     characters unencoded, or has a broken percent-encoding, usually when file paths are used as \
     URIs directly.",
    "Give every resource a full URI with a scheme (`file:///…`, `https://…`, or a custom scheme \
     such as `myapp://…`) and percent-encode spaces and other characters RFC 3986 does not allow.",
)
.run_wide();

pub(crate) const TEMPLATES: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-004",
    "resources/templates/list returns resourceTemplates with a string uriTemplate and name",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#resource-templates"),
    "RES",
    |s| templates(s).boxed(),
)
.says("resource templates are listed with a URI template and a name")
.help(
    "protocheck walks `resources/templates/list` (following `nextCursor`) and checks that each \
     page has a `resourceTemplates` array and each template a string `uriTemplate` and `name`. A \
     -32601 answer is a warning.",
    "The method is not implemented (-32601), usually in a server without templates, or a template \
     misses `name` or has a `uriTemplate` that is not a string.",
    "Implement `resources/templates/list` whenever `resources` is declared, answering \
     `{\"resourceTemplates\": []}` when there are none, and give each template a string \
     `uriTemplate` and `name`.",
)
.needs_capability("resources");

pub(crate) const READ: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-005",
    "resources/read returns contents, each with a string uri and exactly one of text and blob",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#reading-resources"),
    "RES",
    |s| read(s).boxed(),
)
.says("read results hold contents that are either text (`text`) or binary (`blob`)")
.help(
    "protocheck reads up to three resources listed by `resources/list` with `resources/read` and \
     checks each result: a `contents` array whose items each have a string `uri` and exactly one \
     of a string `text` and a string `blob`.",
    "A listed resource cannot be read (an error, often a URI that differs between list and read), \
     or a content holds both `text` and `blob`, neither, or a value that is not a string, such as \
     a JSON object in `text`.",
    "Make every listed URI readable, and answer with `{\"contents\": [{\"uri\": …, \"mimeType\": \
     …, \"text\": …}]}`, or `blob` (base64) instead of `text` for binary data: one of the two per \
     item.",
)
.needs_capability("resources");

pub(crate) const BLOBS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-006",
    "blob values are valid base64",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/resources#security-considerations"),
    "RES",
    |s| blobs(s).boxed(),
)
.says("binary data is properly encoded: a `blob` holds base64")
.help(
    "After every other rule, protocheck collects every `blob` the run saw (in `resources/read` \
     contents and in embedded `resource` blocks) and checks that each is standard base64: the \
     standard alphabet, padded, no whitespace.",
    "Blobs are base64url (with `-` and `_`), lack `=` padding, hold line breaks from a MIME-style \
     encoder, or are raw text rather than encoded bytes.",
    "Encode blobs with standard base64 (RFC 4648, section 4: `+` and `/`, `=` padding) without \
     line breaks; many libraries wrap lines or use the URL-safe alphabet unless told otherwise.",
)
.run_wide();

pub(crate) const NOT_FOUND: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-007",
    "Reading an unknown resource gets error -32002",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/resources#error-handling"),
    "RES",
    |s| not_found(s).boxed(),
)
.says("a resource that is not found is answered with error -32002")
.help(
    "protocheck sends `resources/read` for `protocheck://missing/` with a random segment and, \
     when resources are listed, for the first listed URI with a random segment appended; each \
     should get error -32002 (Resource not found). Any other answer is a warning.",
    "The server answers another code (-32602, which the 2026-07-28 revision names, or -32603), or \
     a result with empty contents or an error text, usually because the read handler does not \
     tell a missing resource apart.",
    "Answer `resources/read` of a URI the server does not have with `{\"code\": -32002, \
     \"message\": \"Resource not found\", \"data\": {\"uri\": …}}`, not with an empty result.",
)
.needs_capability("resources");

pub(crate) const SUBSCRIBE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RES-008",
    "With resources.subscribe declared, subscribe and unsubscribe succeed with an empty result",
    Keyword::Must,
    Outcome::Warn,
    spec!("/server/resources#subscriptions"),
    "RES",
    |s| subscribe(s).boxed(),
)
.says(
    "declaring `subscribe` promises that clients can subscribe to changes of individual \
     resources (the promise is the capability's, so a broken one is a warning)",
)
.help(
    "When the `resources` capability declares `subscribe: true`, protocheck sends \
     `resources/subscribe` for the first URI listed by `resources/list`, then \
     `resources/unsubscribe` for it, and checks that both get an empty result (`{}`, or only \
     `_meta`). Over HTTP with sessions it first opens a second session and sends it a `ping` \
     while the subscription lasts: an update that reaches a session that did not subscribe \
     fails MCP25-LIF-008.",
    "The server declares `subscribe` without implementing the methods (-32601), rejects the \
     listed URI, or answers with a result that is not empty, often a capability copied from an \
     example.",
    "Implement `resources/subscribe` and `resources/unsubscribe` for listed resources, answering \
     `{}`, or stop declaring `subscribe: true` in the `resources` capability.",
)
.needs_capability("resources");

pub(crate) const RULES: &[Mcp25Rule] = &[
    RESOURCES_DECLARED,
    LIST_SHAPE,
    URIS,
    TEMPLATES,
    READ,
    BLOBS,
    NOT_FOUND,
    SUBSCRIBE,
];

/// Most pages of one list walked.
pub(crate) const MAX_PAGES: usize = 20;
/// Most items of one list kept.
pub(crate) const MAX_ITEMS: usize = 1000;
/// Most listed resources (and prompts) fetched one by one (side by side).
pub(crate) const MAX_FETCHED: usize = 20;
/// Most problems named in one finding.
pub(crate) const MAX_NAMED: usize = 5;

/// What walking a paginated list gave.
pub(crate) struct Listing {
    pub(crate) items: Vec<Value>,
    pub(crate) replies: Vec<Reply>,
    /// Why the walk stopped before the last page: an error answer, a page
    /// without the list, a cursor that is not a string.
    pub(crate) problem: Option<String>,
    /// Where the walk stopped at protocheck's own bound (pages or items)
    /// while the list went on: said in every finding on the list.
    pub(crate) stopped: Option<String>,
}

impl Listing {
    /// The judgement `j` with the first and the last page as evidence, and
    /// the bound the walk stopped at, if it did, added to its message.
    pub(crate) fn evidence(&self, mut j: Judgement) -> Judgement {
        if let Some(why) = &self.stopped {
            j.message = format!("{} (the walk stopped: {why})", j.message);
        }
        if let Some(first) = self.replies.first() {
            j = j.reply(first);
        }
        if self.replies.len() > 1
            && let Some(last) = self.replies.last()
        {
            j = j.reply(last);
        }
        j
    }
}

/// Walks `method` from its first page, following `nextCursor` (at most
/// [`MAX_PAGES`] pages, [`MAX_ITEMS`] items); the items are the `key` arrays.
pub(crate) async fn list_pages(s: &Session, method: &str, key: &str) -> Listing {
    let mut listing = Listing {
        items: Vec::new(),
        replies: Vec::new(),
        problem: None,
        stopped: None,
    };
    let mut cursors: Vec<String> = Vec::new();
    for page in 1..=MAX_PAGES {
        let params = match cursors.last() {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let reply = s.main.request(method, params).await;
        let next = match reply.result() {
            None => {
                listing.problem = Some(format!(
                    "`{method}` (page {page}) was answered {}",
                    reply.describe()
                ));
                None
            }
            Some(result) => {
                match result.get(key) {
                    Some(Value::Array(items)) => {
                        let room = MAX_ITEMS.saturating_sub(listing.items.len());
                        if items.len() > room {
                            listing.stopped = Some(format!(
                                "protocheck keeps at most {MAX_ITEMS} items of a list; page \
                                 {page} went past them"
                            ));
                        }
                        listing.items.extend(items.iter().take(room).cloned());
                    }
                    Some(other) => {
                        listing.problem = Some(format!(
                            "page {page} of `{method}` has `{key}` of type {}, not an array",
                            type_name(other)
                        ));
                    }
                    None => {
                        listing.problem =
                            Some(format!("page {page} of `{method}` has no `{key}` array"));
                    }
                }
                match result.get("nextCursor") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(c)) if cursors.contains(c) => None,
                    Some(Value::String(c)) => Some(c.clone()),
                    Some(other) => {
                        listing.problem.get_or_insert(format!(
                            "page {page} of `{method}` has a `nextCursor` of type {}, not a string",
                            type_name(other)
                        ));
                        None
                    }
                }
            }
        };
        listing.replies.push(reply);
        match next {
            Some(_) if page == MAX_PAGES && listing.problem.is_none() => {
                listing.stopped.get_or_insert(format!(
                    "protocheck reads at most {MAX_PAGES} pages of a list; page {page} named a \
                     next one"
                ));
            }
            Some(cursor) if listing.problem.is_none() => cursors.push(cursor),
            _ => break,
        }
    }
    listing
}

/// The JSON type of `v`, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A short name for list item `i`: its `key` member, or its position.
pub(crate) fn label(item: &Value, key: &str, i: usize) -> String {
    match item.get(key).and_then(Value::as_str) {
        Some(name) => format!("`{}`", clip(name, 80)),
        None => format!("item {}", i + 1),
    }
}

/// A random path segment, so that no server can know it.
pub(crate) fn random_segment() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// Whether a result is empty: `{}`, or only a `_meta` member.
pub(crate) fn is_empty_result(result: &Value) -> bool {
    result
        .as_object()
        .is_some_and(|obj| obj.keys().all(|k| k == "_meta"))
}

/// The judgement of a probe whose preferred answer is error `code`: pass on
/// it, a warning on another error code, the rule's failure on a result or
/// on no answer at all.
pub(crate) fn preferred_code(reply: &Reply, code: i64, what: &str, note: &str) -> Judgement {
    match reply.error_code() {
        Some(got) if got == code => Judgement::pass(format!("{what} got error {code}")),
        Some(got) => Judgement::warn(format!(
            "{what} got error {got}, not the {code} the spec names{note}"
        )),
        None if reply.result().is_some() => Judgement::fail(format!(
            "{what} was answered with a result, not error {code}"
        )),
        None => Judgement::fail(format!(
            "{what} was answered {}, not error {code}",
            reply.describe()
        )),
    }
    .reply(reply)
}

/// MCP25-RES-001: both lists that show resource support, resources and
/// resource templates, even when `resources` is not declared.
async fn resources_declared(s: &Session) -> Judgement {
    if s.advertises("resources") {
        return declared(s, "resources/list", "resources", "resources").await;
    }
    let (listed, templates) = tokio::join!(
        declared(s, "resources/list", "resources", "resources"),
        declared(
            s,
            "resources/templates/list",
            "resourceTemplates",
            "resources"
        ),
    );
    super::session::worst_of(vec![listed, templates])
}

/// `method` even when the capability is not declared: a non-empty `key`
/// list from a server that does not declare `capability` fails.
pub(crate) async fn declared(s: &Session, method: &str, key: &str, capability: &str) -> Judgement {
    if s.advertises(capability) {
        return Judgement::pass(format!(
            "the server declares the `{capability}` capability in its `initialize` result"
        ))
        .reply(&s.init);
    }
    let reply = s.main.request(method, json!({})).await;
    let listed = reply
        .result()
        .and_then(|r| r.get(key))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if listed > 0 {
        return Judgement::fail(format!(
            "`{method}` listed {listed} item(s), but the `initialize` result does not declare \
             the `{capability}` capability"
        ))
        .reply(&s.init)
        .reply(&reply);
    }
    Judgement::pass(format!(
        "the server does not declare `{capability}`, and `{method}` listed nothing (answered {})",
        reply.describe()
    ))
    .reply(&reply)
}

/// The content blocks of a result: a tool result's `content`, and the
/// `content` of each message of a prompt.
pub(crate) fn content_blocks(result: &Value) -> Vec<&Value> {
    let mut blocks: Vec<&Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    if let Some(messages) = result.get("messages").and_then(Value::as_array) {
        blocks.extend(messages.iter().filter_map(|m| m.get("content")));
    }
    blocks
}

/// The result of a run's answer, when it is one.
fn result_of(seen: &Seen) -> Option<&Value> {
    let obj = seen.message.as_ref()?.as_object()?;
    if obj.contains_key("error") {
        return None;
    }
    obj.get("result")
}

async fn list_shape(s: &Session) -> Judgement {
    let listing = list_pages(s, "resources/list", "resources").await;
    let mut bad: Vec<String> = listing.problem.iter().cloned().collect();
    for (i, item) in listing.items.iter().enumerate() {
        let name = label(item, "uri", i);
        let Some(obj) = item.as_object() else {
            bad.push(format!("{name} is a {}, not an object", type_name(item)));
            continue;
        };
        for key in ["uri", "name"] {
            match obj.get(key) {
                Some(Value::String(_)) => {}
                Some(other) => bad.push(format!(
                    "{name} has `{key}` of type {}, not a string",
                    type_name(other)
                )),
                None => bad.push(format!("{name} has no `{key}`")),
            }
        }
        if let Some(m) = obj.get("mimeType").filter(|m| !m.is_string()) {
            bad.push(format!(
                "{name} has `mimeType` of type {}, not a string",
                type_name(m)
            ));
        }
        if let Some(size) = obj.get("size").filter(|v| !v.is_number()) {
            bad.push(format!(
                "{name} has `size` of type {}, not a number",
                type_name(size)
            ));
        }
        super::shapes::strings(item, &["title", "description"], &name, &mut bad);
        super::shapes::icons(item, &name, &mut bad);
        super::shapes::annotations(item, &name, &mut bad);
        super::shapes::meta(item, &name, &mut bad);
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "{} resource(s) over {} page(s), each with a string `uri` and `name`, and \
             well-typed optional members",
            listing.items.len(),
            listing.replies.len()
        ))
    } else {
        Judgement::fail(some(&bad, MAX_NAMED, "; "))
    };
    listing.evidence(j)
}

/// Every resource URI in the run's answers: listed, read, and in resource
/// links and embedded resources; with the answer it came in.
fn observed_uris(seen: &[Seen]) -> Vec<(String, &Seen)> {
    let mut uris = Vec::new();
    for s in seen {
        let Some(result) = result_of(s) else { continue };
        let mut found: Vec<&Value> = Vec::new();
        match s.method.as_str() {
            "resources/list" => {
                if let Some(items) = result.get("resources").and_then(Value::as_array) {
                    found.extend(items.iter().filter_map(|r| r.get("uri")));
                }
            }
            "resources/read" => {
                if let Some(items) = result.get("contents").and_then(Value::as_array) {
                    found.extend(items.iter().filter_map(|r| r.get("uri")));
                }
            }
            _ => {}
        }
        for block in content_blocks(result) {
            match block.get("type").and_then(Value::as_str) {
                Some("resource_link") => found.extend(block.get("uri")),
                Some("resource") => found.extend(block.pointer("/resource/uri")),
                _ => {}
            }
        }
        uris.extend(
            found
                .into_iter()
                .filter_map(Value::as_str)
                .map(|u| (u.to_owned(), s)),
        );
        if uris.len() >= MAX_ITEMS {
            break;
        }
    }
    uris
}

/// The `uri` of every `notifications/resources/updated` among `notes`.
fn updated_uris(notes: &[Value]) -> Vec<&str> {
    notes
        .iter()
        .filter(|n| {
            n.get("method").and_then(Value::as_str) == Some("notifications/resources/updated")
        })
        .filter_map(|n| n.pointer("/params/uri").and_then(Value::as_str))
        .take(MAX_ITEMS)
        .collect()
}

async fn uris(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let uris = observed_uris(&seen);
    let notes = s.client.notifications();
    let updated = updated_uris(&notes);
    // The notifications' URIs (their exchange is not kept: the finding
    // quotes them).
    let mut bad_updated: Vec<String> = Vec::new();
    for uri in &updated {
        if let Some(problem) = uri_problem(uri) {
            let named = format!(
                "`{}` (in `notifications/resources/updated`): {problem}",
                clip(uri, 120)
            );
            if !bad_updated.contains(&named) {
                bad_updated.push(named);
            }
        }
    }
    let Some((_, first)) = uris.first() else {
        if updated.is_empty() {
            return Judgement::skip("not applicable: no resource URI was observed in the run");
        }
        if bad_updated.is_empty() {
            return Judgement::pass(format!(
                "{} resource URI(s) of `notifications/resources/updated` observed, each an RFC \
                 3986 URI with a scheme",
                updated.len()
            ))
            .with(&s.init.exchange);
        }
        return Judgement::fail(format!(
            "resource URIs that are not RFC 3986 URIs: {}",
            some(&bad_updated, MAX_NAMED, "; ")
        ))
        .with(&s.init.exchange);
    };
    let mut bad: Vec<(String, &Seen)> = Vec::new();
    for (uri, at) in &uris {
        if let Some(problem) = uri_problem(uri)
            && !bad
                .iter()
                .any(|(b, _)| b.starts_with(&format!("`{}`", clip(uri, 120))))
        {
            bad.push((format!("`{}`: {problem}", clip(uri, 120)), at));
        }
    }
    if bad.is_empty() && bad_updated.is_empty() {
        let mut distinct: Vec<&str> = uris.iter().map(|(u, _)| u.as_str()).collect();
        distinct.extend(updated.iter().copied());
        distinct.sort_unstable();
        distinct.dedup();
        return Judgement::pass(format!(
            "{} distinct resource URI(s) observed, each an RFC 3986 URI with a scheme",
            distinct.len()
        ))
        .with(&first.exchange);
    }
    let mut named: Vec<String> = bad.iter().map(|(b, _)| b.clone()).collect();
    named.extend(bad_updated);
    let mut j = Judgement::fail(format!(
        "resource URIs that are not RFC 3986 URIs: {}",
        some(&named, MAX_NAMED, "; ")
    ));
    for (_, at) in &bad {
        j = j.with(&at.exchange);
    }
    j
}

async fn templates(s: &Session) -> Judgement {
    let listing = list_pages(s, "resources/templates/list", "resourceTemplates").await;
    if listing.items.is_empty()
        && let Some(first) = listing.replies.first()
        && first.error_code() == Some(-32601)
    {
        return Judgement::warn(
            "`resources/templates/list` got -32601 (method not found): a server that declares \
             `resources` answers it, with an empty list when it has no templates (older \
             servers omit the method)",
        )
        .reply(first);
    }
    let mut bad: Vec<String> = listing.problem.iter().cloned().collect();
    for (i, item) in listing.items.iter().enumerate() {
        let name = label(item, "uriTemplate", i);
        if !item.is_object() {
            bad.push(format!("{name} is a {}, not an object", type_name(item)));
            continue;
        }
        for key in ["uriTemplate", "name"] {
            match item.get(key) {
                Some(Value::String(_)) => {}
                Some(other) => bad.push(format!(
                    "{name} has `{key}` of type {}, not a string",
                    type_name(other)
                )),
                None => bad.push(format!("{name} has no `{key}`")),
            }
        }
        if let Some(problem) = item
            .get("uriTemplate")
            .and_then(Value::as_str)
            .and_then(super::shapes::uri_template_problem)
        {
            bad.push(format!("{name} is not an RFC 6570 URI template: {problem}"));
        }
        super::shapes::strings(item, &["title", "description", "mimeType"], &name, &mut bad);
        super::shapes::icons(item, &name, &mut bad);
        super::shapes::annotations(item, &name, &mut bad);
        super::shapes::meta(item, &name, &mut bad);
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "{} resource template(s), each with a string `uriTemplate` (an RFC 6570 template) \
             and `name`, and well-typed optional members",
            listing.items.len()
        ))
    } else {
        Judgement::fail(some(&bad, MAX_NAMED, "; "))
    };
    listing.evidence(j)
}

/// The string URIs of the first page of `resources/list` (capped).
async fn listed_uris(s: &Session) -> (Vec<String>, Listing) {
    let listing = list_pages(s, "resources/list", "resources").await;
    let uris = listing
        .items
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    (uris, listing)
}

/// Why one item of `contents` is malformed, if it is.
fn contents_problem(item: &Value) -> Option<String> {
    let Some(obj) = item.as_object() else {
        return Some(format!("a content is a {}, not an object", type_name(item)));
    };
    if !obj.get("uri").is_some_and(Value::is_string) {
        return Some("a content has no string `uri`".to_owned());
    }
    if let Some(mime) = obj.get("mimeType").filter(|m| !m.is_string()) {
        return Some(format!(
            "a content has `mimeType` of type {}, not a string",
            type_name(mime)
        ));
    }
    let text = obj.get("text");
    let blob = obj.get("blob");
    match (text, blob) {
        (Some(Value::String(_)), None) | (None, Some(Value::String(_))) => None,
        (Some(_), Some(_)) => Some("a content has both `text` and `blob`".to_owned()),
        (None, None) => Some("a content has neither `text` nor `blob`".to_owned()),
        (Some(v), None) | (None, Some(v)) => Some(format!(
            "a content's `text`/`blob` is a {}, not a string",
            type_name(v)
        )),
    }
}

async fn read(s: &Session) -> Judgement {
    let (uris, listing) = listed_uris(s).await;
    if uris.is_empty() {
        return listing.evidence(Judgement::skip(
            "not applicable: `resources/list` listed no resource with a string `uri`",
        ));
    }
    let mut bad = Vec::new();
    let mut replies = Vec::new();
    // Reads larger than protocheck reads: named, never judged (an MCP Apps
    // bundle of megabytes is a valid result).
    let mut unread = Vec::new();
    // Side by side: each read is independent of the others.
    let reads = uris.iter().take(MAX_FETCHED).map(|uri| async move {
        let reply = s.main.request("resources/read", json!({"uri": uri})).await;
        (uri, reply)
    });
    let read = futures::future::join_all(reads).await;
    let beyond = uris.len().saturating_sub(MAX_FETCHED);
    for (uri, reply) in read {
        let shown = clip(uri, 120);
        if let Some(TransportError::TooLarge { limit }) = &reply.error {
            unread.push((format!("`{shown}` (over {limit} bytes)"), reply));
            continue;
        }
        match reply.result() {
            None => bad.push(format!(
                "reading the listed `{shown}` was answered {}",
                reply.describe()
            )),
            Some(result) => match result.get("contents") {
                Some(Value::Array(items)) => {
                    if let Some(p) = items.iter().find_map(contents_problem) {
                        bad.push(format!("reading `{shown}`: {p}"));
                    }
                }
                _ => bad.push(format!(
                    "reading `{shown}` gave a result without a `contents` array"
                )),
            },
        }
        replies.push(reply);
    }
    let unread_names: Vec<String> = unread.iter().map(|(name, _)| name.clone()).collect();
    if !bad.is_empty() {
        let mut message = some(&bad, MAX_NAMED, "; ");
        if !unread.is_empty() {
            message.push_str(&format!(
                "; not judged, larger than protocheck reads: {}",
                unread_names.join(", ")
            ));
        }
        return replies
            .iter()
            .fold(Judgement::fail(message), Judgement::reply);
    }
    let limit = unread.iter().find_map(|(_, r)| match &r.error {
        Some(TransportError::TooLarge { limit }) => Some(*limit),
        _ => None,
    });
    if let Some(limit) = limit {
        let judged = if replies.is_empty() {
            String::new()
        } else {
            format!(
                "; the other {} read resource(s) are well-formed",
                replies.len()
            )
        };
        let j = Judgement::skip(crate::suite::mcp::client::over_limit_message(
            limit,
            &format!("reading {}{judged}", unread_names.join(", ")),
        ));
        return unread.iter().map(|(_, r)| r).fold(j, Judgement::reply);
    }
    let j = Judgement::pass(format!(
        "{} listed resource(s) read; every content has a string `uri`, exactly one of `text` and \
         `blob`, and a string `mimeType` when present{}",
        replies.len(),
        if beyond > 0 {
            format!(
                " ({beyond} more listed resource(s) not read: protocheck reads the first \
                 {MAX_FETCHED})"
            )
        } else {
            String::new()
        }
    ));
    replies.iter().fold(j, Judgement::reply)
}

/// Every `blob` in the run's answers: read contents and embedded resources.
fn observed_blobs(seen: &[Seen]) -> Vec<(String, &Seen)> {
    let mut blobs = Vec::new();
    for s in seen {
        let Some(result) = result_of(s) else { continue };
        let mut found: Vec<&Value> = Vec::new();
        if s.method == "resources/read"
            && let Some(items) = result.get("contents").and_then(Value::as_array)
        {
            found.extend(items.iter().filter_map(|c| c.get("blob")));
        }
        for block in content_blocks(result) {
            if block.get("type").and_then(Value::as_str) == Some("resource") {
                found.extend(block.pointer("/resource/blob"));
            }
        }
        blobs.extend(
            found
                .into_iter()
                .filter_map(Value::as_str)
                .map(|b| (b.to_owned(), s)),
        );
    }
    blobs
}

async fn blobs(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let blobs = observed_blobs(&seen);
    let Some((_, first)) = blobs.first() else {
        return Judgement::skip("not applicable: no `blob` was observed in the run");
    };
    let bad: Vec<&(String, &Seen)> = blobs
        .iter()
        .filter(|(b, _)| base64_decode(b).is_none())
        .collect();
    if bad.is_empty() {
        return Judgement::pass(format!(
            "{} blob(s) observed, each valid standard base64",
            blobs.len()
        ))
        .with(&first.exchange);
    }
    let named: Vec<String> = bad
        .iter()
        .map(|(b, at)| format!("`{}` (in the answer to `{}`)", clip(b, 60), at.method))
        .collect();
    let mut j = Judgement::fail(format!(
        "blobs that are not standard base64 (padded, no whitespace): {}",
        some(&named, MAX_NAMED, "; ")
    ));
    for (_, at) in bad {
        j = j.with(&at.exchange);
    }
    j
}

async fn not_found(s: &Session) -> Judgement {
    let mut probes = vec![format!("protocheck://missing/{}", random_segment())];
    let (uris, _) = listed_uris(s).await;
    if let Some(first) = uris.first()
        && !first.starts_with("protocheck:")
    {
        let base = first.split(['?', '#']).next().unwrap_or(first);
        probes.push(format!(
            "{}/{}",
            base.trim_end_matches('/'),
            random_segment()
        ));
    }
    let note = " (-32602 is what the 2026-07-28 revision names; 2025-11-25 names -32002)";
    let mut judgements = Vec::new();
    let mut noted = false;
    for uri in probes {
        let reply = s.main.request("resources/read", json!({"uri": uri})).await;
        let what = format!("reading the unknown `{}`", clip(&uri, 120));
        let extra = if reply.error_code() == Some(-32602) && !noted {
            noted = true;
            note
        } else {
            ""
        };
        judgements.push(preferred_code(&reply, -32002, &what, extra));
    }
    worst(judgements)
}

/// One judgement of several: the first that is not a pass (a failure before
/// a warning), else the passes together.
pub(crate) fn worst(judgements: Vec<Judgement>) -> Judgement {
    use super::session::Kind;
    let rank = |j: &Judgement| match j.kind {
        Kind::Fail => 0,
        Kind::Warn => 1,
        Kind::Info => 2,
        Kind::Skip => 3,
        Kind::Pass => 4,
    };
    let best = judgements.iter().map(rank).min().unwrap_or(4);
    let chosen: Vec<&Judgement> = judgements.iter().filter(|j| rank(j) == best).collect();
    let Some(first) = chosen.first() else {
        return Judgement::skip("not verified: nothing was probed");
    };
    let message: Vec<&str> = chosen.iter().map(|j| j.message.as_str()).collect();
    let mut out = Judgement {
        kind: first.kind,
        message: message.join("; "),
        evidence: Vec::new(),
        over_limit: chosen.iter().find_map(|j| j.over_limit),
    };
    for j in &judgements {
        for e in &j.evidence {
            out = out.with(e);
        }
    }
    out
}

async fn subscribe(s: &Session) -> Judgement {
    let declared = s
        .capabilities()
        .pointer("/resources/subscribe")
        .and_then(Value::as_bool)
        == Some(true);
    if !declared {
        return Judgement::skip(
            "not applicable: the `resources` capability does not declare `subscribe: true`",
        );
    }
    let (uris, listing) = listed_uris(s).await;
    let Some(uri) = uris.first() else {
        return listing.evidence(Judgement::skip(
            "not applicable: `resources/list` listed no resource with a string `uri`",
        ));
    };
    // A second session, opened before the subscription and sent a `ping`
    // while it lasts, is where a server that tells every session about one
    // session's subscription shows it: MCP25-LIF-008 judges every update of
    // the run by the session it came in. Sessions are told apart over HTTP
    // by their ids only.
    let bystander = match s.main.session_id() {
        Some(_) => s.initialized_connection().await.ok(),
        None => None,
    };
    let j = subscribe_with(s, uri, bystander.as_ref()).await;
    if let Some(bystander) = bystander {
        bystander.close().await;
    }
    j
}

/// MCP25-RES-008's probe of `uri`, with a `ping` on `bystander` while the
/// subscription lasts.
async fn subscribe_with(s: &Session, uri: &str, bystander: Option<&Connection>) -> Judgement {
    let shown = clip(uri, 120);
    if let Ok(mut subscribed) = s.subscribed.lock() {
        subscribed.push((uri.to_owned(), s.main.session()));
    }
    let sub = s
        .main
        .request("resources/subscribe", json!({"uri": uri}))
        .await;
    match sub.result() {
        Some(r) if is_empty_result(r) => {
            if let Some(bystander) = bystander {
                bystander.request("ping", json!({})).await;
            }
        }
        Some(r) => {
            let unsub = s
                .main
                .request("resources/unsubscribe", json!({"uri": uri}))
                .await;
            return Judgement::fail(format!(
                "`resources/subscribe` of `{shown}` was answered with a result that is not \
                 empty: {}",
                clip(&r.to_string(), 120)
            ))
            .reply(&sub)
            .reply(&unsub);
        }
        None => {
            return Judgement::fail(format!(
                "`resources/subscribe` of the listed `{shown}` was answered {}, though the \
                 server declares `resources.subscribe`",
                sub.describe()
            ))
            .reply(&sub);
        }
    }
    let unsub = s
        .main
        .request("resources/unsubscribe", json!({"uri": uri}))
        .await;
    let j = match unsub.result() {
        Some(r) if is_empty_result(r) => Judgement::pass(format!(
            "`resources/subscribe` and `resources/unsubscribe` of `{shown}` were answered with \
             an empty result"
        )),
        Some(r) => Judgement::fail(format!(
            "`resources/unsubscribe` of `{shown}` was answered with a result that is not empty: \
             {}",
            clip(&r.to_string(), 120)
        )),
        None => Judgement::fail(format!(
            "`resources/unsubscribe` of `{shown}` was answered {}",
            unsub.describe()
        )),
    };
    j.reply(&sub).reply(&unsub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_need_exactly_one_of_text_and_blob() {
        assert_eq!(contents_problem(&json!({"uri": "a:b", "text": "t"})), None);
        assert_eq!(
            contents_problem(&json!({"uri": "a:b", "blob": "AA=="})),
            None
        );
        assert!(contents_problem(&json!({"uri": "a:b", "text": "t", "blob": "AA=="})).is_some());
        assert!(contents_problem(&json!({"uri": "a:b"})).is_some());
        assert!(contents_problem(&json!({"text": "t"})).is_some());
        assert!(contents_problem(&json!({"uri": "a:b", "text": 3})).is_some());
    }

    #[test]
    fn updated_notifications_bring_their_uris() {
        let notes = vec![
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "docs/read me.md"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "file:///docs/readme.md"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"uri": "not a uri", "level": "info", "data": "x"}}),
        ];
        let uris = updated_uris(&notes);
        assert_eq!(uris, ["docs/read me.md", "file:///docs/readme.md"]);
        assert!(uri_problem(uris[0]).is_some());
        assert!(uri_problem(uris[1]).is_none());
    }
}
