//! PRM — prompts (server/prompts): the capability, the list, getting a
//! prompt, its image, audio and embedded-resource content, and the errors
//! for an unknown prompt and a missing argument. Getting a prompt is
//! read-only, so protocheck gets listed prompts.

use super::client::{Reply, Seen};
use super::res::{
    MAX_FETCHED, MAX_NAMED, declared, label, list_pages, preferred_code, random_segment, type_name,
};
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Kind, Session};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::{clip, some};
use crate::suite::mcp::wire::base64_decode;
use futures::FutureExt;
use serde_json::{Map, Value, json};

pub(crate) const PROMPTS_DECLARED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-001",
    "A server that lists prompts declares the prompts capability",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/prompts#capabilities"),
    "PRM",
    |s| declared(s, "prompts/list", "prompts", "prompts").boxed(),
)
.says("servers that support prompts declare the `prompts` capability during initialization")
.help(
    "protocheck reads the `initialize` capabilities; when `prompts` is not declared, it sends \
     `prompts/list` anyway and fails if the result lists any prompt.",
    "The server lists prompts although its `capabilities` lack `prompts`, usually because prompts \
     were registered on a low-level server whose capabilities are set by hand.",
    "Declare `\"prompts\": {}` (with `listChanged` if the server sends change notifications) in \
     the `capabilities` of the `initialize` result whenever the server offers prompts.",
);

pub(crate) const LIST_SHAPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-002",
    "prompts/list returns a prompts array; each has a string name and well-formed arguments",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/prompts#listing-prompts"),
    "PRM",
    |s| list_shape(s).boxed(),
)
.says(
    "a listed prompt carries a name and, optionally, arguments, each with a name and an \
     optional boolean `required`",
)
.help(
    "protocheck walks `prompts/list` (following `nextCursor`, at most 20 pages) and checks that \
     each page has a `prompts` array, each prompt a string `name`, and `arguments`, when present, \
     is an array of objects with a string `name` and a boolean `required` when present.",
    "A prompt lacks `name`, its `arguments` is an object (a JSON Schema) rather than an array, or \
     `required` is a string such as `\"true\"`, usually when prompts are described by hand.",
    "List prompts as `{\"prompts\": [{\"name\": …, \"arguments\": [{\"name\": …, \"required\": \
     true}]}]}`: arguments as an array of objects, `required` as a boolean.",
)
.needs_capability("prompts");

pub(crate) const GET: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-003",
    "prompts/get returns messages, each with role user or assistant and one content block",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/prompts#promptmessage"),
    "PRM",
    |s| get(s).boxed(),
)
.says(
    "a fetched prompt is a list of messages, each with a role (`user` or `assistant`) and one \
     content block",
)
.help(
    "protocheck gets up to three listed prompts with `prompts/get`, giving each required argument \
     the value `protocheck`, and checks each result: a `messages` array whose messages have role \
     `user` or `assistant` and one `content` block of a defined kind. Refusals are not judged.",
    "A message has role `system`, its `content` is an array of blocks or a bare string, or a \
     block lacks its `text`, `data` and `mimeType`, or `uri` and `name`, usually when prompts \
     follow a chat API's message format.",
    "Return `{\"messages\": [{\"role\": \"user\", \"content\": {\"type\": \"text\", \"text\": \
     …}}]}`: one content object per message and role `user` or `assistant` (system instructions \
     go in a user message).",
)
.needs_capability("prompts");

pub(crate) const MEDIA: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-004",
    "Image and audio content in prompt messages has base64 data and a matching MIME type",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/prompts#image-content"),
    "PRM",
    |s| media(s).boxed(),
)
.says("image and audio data is base64-encoded and comes with a valid MIME type of its kind")
.help(
    "After every other rule, protocheck reads the messages of every `prompts/get` result of the \
     run and checks each `image` or `audio` block: `data` is standard base64 and `mimeType` a \
     `type/subtype` of its kind (`image/…` or `audio/…`).",
    "The data is a URL or a data URI (`data:image/png;base64,…`) rather than bare base64, or \
     `mimeType` is missing, a bare extension such as `png`, or of the wrong kind.",
    "Put the bare base64 of the bytes in `data`, with no `data:` prefix, and the full MIME type, \
     such as `image/png` or `audio/wav`, in `mimeType`.",
)
.run_wide();

pub(crate) const EMBEDDED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-005",
    "Embedded resources in prompt messages carry a URI, a MIME type and text or blob",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/prompts#embedded-resources"),
    "PRM",
    |s| embedded(s).boxed(),
)
.says("an embedded resource includes its URI, its MIME type and its content (text or blob)")
.help(
    "After every other rule, protocheck reads every embedded `resource` block in the messages of \
     the run's `prompts/get` results and checks its `resource`: a string `uri`, a string `text` \
     or `blob`, and a string `mimeType` (a missing `mimeType` is only a warning).",
    "The embedded resource lacks `uri`, its content or its `mimeType`, usually when the block is \
     built by hand rather than from what `resources/read` returns.",
    "Embed resources as `{\"type\": \"resource\", \"resource\": {\"uri\": …, \"mimeType\": …, \
     \"text\": …}}` (or `blob`), as `resources/read` would return them.",
)
.run_wide();

pub(crate) const UNKNOWN: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-006",
    "An unknown prompt name gets error -32602",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/prompts#error-handling"),
    "PRM",
    |s| unknown(s).boxed(),
)
.says("an invalid prompt name is answered with error -32602 (invalid params)")
.help(
    "protocheck sends `prompts/get` for a made-up prompt name (`protocheck_no_such_prompt_` and \
     random hex) with empty arguments and expects error -32602; any other answer is a warning.",
    "The server answers -32601, -32603 or another code, or a result that is empty or holds an \
     error text, usually because the prompt lookup raises a generic exception.",
    "Look the prompt up before rendering it, and answer `prompts/get` of a prompt the server does \
     not have with `{\"code\": -32602, \"message\": \"Unknown prompt: …\"}`.",
)
.needs_capability("prompts");

pub(crate) const MISSING_ARGUMENT: Mcp25Rule = Mcp25Rule::new(
    "MCP25-PRM-007",
    "A missing required argument gets error -32602",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/prompts#error-handling"),
    "PRM",
    |s| missing_argument(s).boxed(),
)
.says("a missing required argument is answered with error -32602 (invalid params)")
.help(
    "For every listed prompt with a required argument (the first 20), protocheck sends \
     `prompts/get` without `arguments`, with `arguments: {}`, and, when two or more are required, \
     with every required argument but the first; each must get error -32602, and any other \
     answer is a warning.",
    "The server renders the prompt with the argument empty or undefined (a result), checks only \
     that `arguments` is present rather than each required key, or answers -32603 because its \
     template engine failed on the missing value.",
    "Check the required arguments before rendering, and answer a missing one with `{\"code\": \
     -32602, \"message\": \"Missing required argument: …\"}` naming it.",
)
.needs_capability("prompts");

pub(crate) const RULES: &[Mcp25Rule] = &[
    PROMPTS_DECLARED,
    LIST_SHAPE,
    GET,
    MEDIA,
    EMBEDDED,
    UNKNOWN,
    MISSING_ARGUMENT,
];

/// The value protocheck gives every required argument.
const ARGUMENT_VALUE: &str = "protocheck";

async fn list_shape(s: &Session) -> Judgement {
    let listing = list_pages(s, "prompts/list", "prompts").await;
    let mut bad: Vec<String> = listing.problem.iter().cloned().collect();
    for (i, item) in listing.items.iter().enumerate() {
        let name = label(item, "name", i);
        let Some(obj) = item.as_object() else {
            bad.push(format!("{name} is a {}, not an object", type_name(item)));
            continue;
        };
        match obj.get("name") {
            Some(Value::String(_)) => {}
            Some(other) => bad.push(format!(
                "{name} has `name` of type {}, not a string",
                type_name(other)
            )),
            None => bad.push(format!("{name} has no `name`")),
        }
        match obj.get("arguments") {
            None => {}
            Some(Value::Array(args)) => {
                for (j, arg) in args.iter().enumerate() {
                    let arg_name = label(arg, "name", j);
                    if !arg.get("name").is_some_and(Value::is_string) {
                        bad.push(format!(
                            "prompt {name}: argument {arg_name} has no string `name`"
                        ));
                    }
                    if let Some(r) = arg.get("required").filter(|r| !r.is_boolean()) {
                        bad.push(format!(
                            "prompt {name}: argument {arg_name} has `required` of type {}, not \
                             a boolean",
                            type_name(r)
                        ));
                    }
                    super::shapes::strings(
                        arg,
                        &["title", "description"],
                        &format!("prompt {name}: argument {arg_name}"),
                        &mut bad,
                    );
                }
            }
            Some(other) => bad.push(format!(
                "{name} has `arguments` of type {}, not an array",
                type_name(other)
            )),
        }
        super::shapes::strings(item, &["title", "description"], &name, &mut bad);
        super::shapes::icons(item, &name, &mut bad);
        super::shapes::meta(item, &name, &mut bad);
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "{} prompt(s) over {} page(s), each with a string `name` and well-formed arguments",
            listing.items.len(),
            listing.replies.len()
        ))
    } else {
        Judgement::fail(some(&bad, MAX_NAMED, "; "))
    };
    listing.evidence(j)
}

/// The names of a listed prompt's required arguments.
fn required_arguments(prompt: &Value) -> Vec<String> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .filter(|a| a.get("required") == Some(&Value::Bool(true)))
                .filter_map(|a| a.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Why a content block is not one of the defined kinds, if it is not.
/// Base64 and MIME types of media are MCP25-PRM-004's, the inside of an
/// embedded resource MCP25-PRM-005's.
fn block_problem(block: &Value) -> Option<String> {
    let Some(obj) = block.as_object() else {
        return Some(format!(
            "`content` is a {}, not an object",
            type_name(block)
        ));
    };
    let needs = |keys: &[&str]| {
        keys.iter()
            .find(|k| !obj.get(**k).is_some_and(Value::is_string))
            .map(|k| format!("a `{}` block has no string `{k}`", kind_of(block)))
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => needs(&["text"]),
        Some("image") | Some("audio") => needs(&["data", "mimeType"]),
        Some("resource_link") => needs(&["uri", "name"]),
        Some("resource") if obj.get("resource").is_some_and(Value::is_object) => None,
        Some("resource") => Some("a `resource` block has no `resource` object".to_owned()),
        Some(other) => Some(format!(
            "`content` has type `{}`, not text, image, audio, resource_link or resource",
            clip(other, 40)
        )),
        None => Some("`content` has no string `type`".to_owned()),
    }
}

fn kind_of(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("?")
}

/// Why a `GetPromptResult` is malformed, if it is.
fn messages_problem(result: &Value) -> Option<String> {
    let Some(messages) = result.get("messages").and_then(Value::as_array) else {
        return Some("the result has no `messages` array".to_owned());
    };
    messages.iter().enumerate().find_map(|(i, m)| {
        let at = i + 1;
        match m.get("role").and_then(Value::as_str) {
            Some("user") | Some("assistant") => {}
            Some(other) => {
                return Some(format!(
                    "message {at} has role `{}`, not `user` or `assistant`",
                    clip(other, 40)
                ));
            }
            None => return Some(format!("message {at} has no string `role`")),
        }
        match m.get("content") {
            None => Some(format!("message {at} has no `content`")),
            Some(Value::Array(_)) => Some(format!(
                "message {at} has an array of content blocks, not one block"
            )),
            Some(block) => block_problem(block).map(|p| format!("message {at}: {p}")),
        }
    })
}

async fn get(s: &Session) -> Judgement {
    let listing = list_pages(s, "prompts/list", "prompts").await;
    let prompts: Vec<&Value> = listing
        .items
        .iter()
        .filter(|p| p.get("name").is_some_and(Value::is_string))
        .take(MAX_FETCHED)
        .collect();
    if prompts.is_empty() {
        return listing.evidence(Judgement::skip(
            "not applicable: `prompts/list` listed no prompt with a string `name`",
        ));
    }
    let mut bad = Vec::new();
    let mut refused = Vec::new();
    let mut replies: Vec<Reply> = Vec::new();
    // Side by side: each `prompts/get` is independent of the others.
    let gets = prompts.into_iter().map(|prompt| async move {
        let name = prompt.get("name").and_then(Value::as_str).unwrap_or("");
        let arguments: Map<String, Value> = required_arguments(prompt)
            .into_iter()
            .map(|a| (a, json!(ARGUMENT_VALUE)))
            .collect();
        let reply = s
            .main
            .request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await;
        (name, reply)
    });
    for (name, reply) in futures::future::join_all(gets).await {
        let shown = clip(name, 80);
        match reply.result() {
            Some(result) => {
                if let Some(p) = messages_problem(result) {
                    bad.push(format!("prompt `{shown}`: {p}"));
                }
                if let Some(d) = result.get("description").filter(|d| !d.is_string()) {
                    bad.push(format!(
                        "prompt `{shown}`: the result's `description` is a {}, not a string",
                        type_name(d)
                    ));
                }
            }
            None => refused.push(format!("`{shown}` was answered {}", reply.describe())),
        }
        replies.push(reply);
    }
    let got = replies.len() - refused.len();
    let j = if !bad.is_empty() {
        Judgement::fail(some(&bad, MAX_NAMED, "; "))
    } else if got == 0 {
        Judgement::skip(format!(
            "not verified: no `prompts/get` returned a result (required arguments were given \
             \"{ARGUMENT_VALUE}\", which a prompt may rightly refuse): {}",
            some(&refused, MAX_NAMED, "; ")
        ))
    } else {
        let also = if refused.is_empty() {
            String::new()
        } else {
            format!(
                " ({} refused, not judged: {})",
                refused.len(),
                some(&refused, MAX_NAMED, "; ")
            )
        };
        Judgement::pass(format!(
            "{got} prompt(s) fetched; every message has role `user` or `assistant` and one \
             content block{also}"
        ))
    };
    replies.iter().fold(j, Judgement::reply)
}

/// Every content block of the run's `prompts/get` results, with the answer.
fn prompt_blocks(seen: &[Seen]) -> Vec<(&Value, &Seen)> {
    seen.iter()
        .filter(|s| s.method == "prompts/get")
        .filter_map(|s| {
            let obj = s.message.as_ref()?.as_object()?;
            if obj.contains_key("error") {
                return None;
            }
            Some((obj.get("result")?, s))
        })
        .flat_map(|(result, s)| {
            result
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(move |m| m.get("content").map(|c| (c, s)))
        })
        .collect()
}

/// Whether `mime` is a `type/subtype` MIME type (parameters allowed) of the
/// top-level type `kind`.
fn mime_of_kind(mime: &str, kind: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or("").trim();
    let Some((top, sub)) = essence.split_once('/') else {
        return false;
    };
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    top.eq_ignore_ascii_case(kind) && token(sub)
}

async fn media(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let blocks: Vec<(&Value, &Seen)> = prompt_blocks(&seen)
        .into_iter()
        .filter(|(b, _)| matches!(kind_of(b), "image" | "audio"))
        .collect();
    let Some((_, first)) = blocks.first() else {
        return Judgement::skip(
            "not applicable: no image or audio block was observed in a prompt message",
        );
    };
    let mut bad: Vec<(String, &Seen)> = Vec::new();
    for (block, at) in &blocks {
        let kind = kind_of(block);
        let data = block.get("data").and_then(Value::as_str);
        if data.is_none_or(|d| base64_decode(d).is_none()) {
            bad.push((
                format!("an `{kind}` block's `data` is not standard base64"),
                at,
            ));
        }
        match block.get("mimeType").and_then(Value::as_str) {
            Some(m) if mime_of_kind(m, kind) => {}
            Some(m) => bad.push((
                format!(
                    "an `{kind}` block has `mimeType` `{}`, not a MIME type `{kind}/…`",
                    clip(m, 60)
                ),
                at,
            )),
            None => bad.push((format!("an `{kind}` block has no string `mimeType`"), at)),
        }
    }
    if bad.is_empty() {
        return Judgement::pass(format!(
            "{} image/audio block(s) in prompt messages, each with base64 `data` and a MIME \
             type of its kind",
            blocks.len()
        ))
        .with(&first.exchange);
    }
    let named: Vec<String> = bad.iter().map(|(b, _)| b.clone()).collect();
    let mut j = Judgement::fail(some(&named, MAX_NAMED, "; "));
    for (_, at) in &bad {
        j = j.with(&at.exchange);
    }
    j
}

async fn embedded(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let blocks: Vec<(&Value, &Seen)> = prompt_blocks(&seen)
        .into_iter()
        .filter(|(b, _)| kind_of(b) == "resource")
        .collect();
    let Some((_, first)) = blocks.first() else {
        return Judgement::skip(
            "not applicable: no embedded resource was observed in a prompt message",
        );
    };
    let mut failing: Vec<(String, &Seen)> = Vec::new();
    let mut warning: Vec<(String, &Seen)> = Vec::new();
    for (block, at) in &blocks {
        let resource = block.get("resource").unwrap_or(&Value::Null);
        let uri = resource.get("uri").and_then(Value::as_str);
        let shown = uri.map_or("(no uri)".to_owned(), |u| format!("`{}`", clip(u, 80)));
        if uri.is_none() {
            failing.push(("an embedded resource has no string `uri`".to_owned(), at));
        }
        let text = resource.get("text").is_some_and(Value::is_string);
        let blob = resource.get("blob").is_some_and(Value::is_string);
        if !text && !blob {
            failing.push((
                format!("the embedded resource {shown} has neither a string `text` nor `blob`"),
                at,
            ));
        }
        if !resource.get("mimeType").is_some_and(Value::is_string) {
            warning.push((
                format!("the embedded resource {shown} has no string `mimeType`"),
                at,
            ));
        }
    }
    let (j, bad) = if !failing.is_empty() {
        let named: Vec<String> = failing.iter().map(|(b, _)| b.clone()).collect();
        (Judgement::fail(some(&named, MAX_NAMED, "; ")), failing)
    } else if !warning.is_empty() {
        let named: Vec<String> = warning.iter().map(|(b, _)| b.clone()).collect();
        (
            Judgement::warn(format!(
                "{} (the prompts page requires a MIME type, but the schema makes `mimeType` \
                 optional, so this is a warning)",
                some(&named, MAX_NAMED, "; ")
            )),
            warning,
        )
    } else {
        return Judgement::pass(format!(
            "{} embedded resource(s) in prompt messages, each with a `uri`, a `mimeType` and \
             text or blob",
            blocks.len()
        ))
        .with(&first.exchange);
    };
    bad.iter().fold(j, |j, (_, at)| j.with(&at.exchange))
}

async fn unknown(s: &Session) -> Judgement {
    let name = format!("protocheck_no_such_prompt_{}", random_segment());
    let reply = s
        .main
        .request("prompts/get", json!({"name": name, "arguments": {}}))
        .await;
    preferred_code(
        &reply,
        -32602,
        &format!("`prompts/get` of the unknown prompt `{name}`"),
        "",
    )
}

/// Most prompts PRM-007 asks for without their required arguments.
const MAX_MISSING_PROBES: usize = 20;

async fn missing_argument(s: &Session) -> Judgement {
    let listing = list_pages(s, "prompts/list", "prompts").await;
    let found: Vec<(String, Vec<String>)> = listing
        .items
        .iter()
        .filter_map(|p| {
            let name = p.get("name").and_then(Value::as_str)?;
            let required = required_arguments(p);
            (!required.is_empty()).then(|| (name.to_owned(), required))
        })
        .collect();
    if found.is_empty() {
        return listing.evidence(Judgement::skip(
            "not applicable: no listed prompt declares a required argument",
        ));
    }
    let prompts = found.len();
    // Each prompt with a required argument, in every form that lacks one:
    // `arguments` left out, `arguments: {}`, and (with two or more required)
    // every required argument but the first, side by side.
    let mut probes = Vec::new();
    for (name, required) in found.iter().take(MAX_MISSING_PROBES) {
        let shown = clip(name, 80);
        let first = format!("`{}`", required[0]);
        let all = some(
            &required
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>(),
            MAX_NAMED,
            ", ",
        );
        probes.push((
            json!({"name": name}),
            format!("`prompts/get` of `{shown}` without `arguments` (it requires {all})"),
        ));
        probes.push((
            json!({"name": name, "arguments": {}}),
            format!("`prompts/get` of `{shown}` with `arguments: {{}}` (it requires {all})"),
        ));
        if required.len() > 1 {
            let given: serde_json::Map<String, Value> = required[1..]
                .iter()
                .map(|a| (a.clone(), json!("protocheck")))
                .collect();
            probes.push((
                json!({"name": name, "arguments": given}),
                format!("`prompts/get` of `{shown}` with every required argument but {first}"),
            ));
        }
    }
    let sends = probes.iter().map(|(params, what)| async move {
        let reply = s.main.request("prompts/get", params.clone()).await;
        preferred_code(&reply, -32602, what, "")
    });
    let judged = futures::future::join_all(sends).await;
    let sent = judged.len();
    let mut j = super::session::worst_of(judged);
    if j.kind == Kind::Pass {
        j.message = format!(
            "each of {sent} `prompts/get` requests lacking a required argument ({prompts} \
             prompt(s){}) got error -32602",
            if prompts > MAX_MISSING_PROBES {
                format!("; protocheck asks for the first {MAX_MISSING_PROBES} of them")
            } else {
                String::new()
            }
        );
    }
    listing.evidence(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_judged_on_role_and_one_block() {
        let ok = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "image", "data": "x", "mimeType": "y"}},
            {"role": "user", "content": {"type": "resource", "resource": {}}}
        ]});
        assert_eq!(messages_problem(&ok), None);
        let system = json!({"messages": [{"role": "system",
            "content": {"type": "text", "text": "hi"}}]});
        assert!(messages_problem(&system).is_some());
        let many = json!({"messages": [{"role": "user", "content": []}]});
        assert!(messages_problem(&many).is_some());
        assert!(messages_problem(&json!({})).is_some());
        let link = json!({"messages": [{"role": "user",
            "content": {"type": "resource_link", "uri": "a:b"}}]});
        assert!(messages_problem(&link).is_some());
    }

    #[test]
    fn mime_types_match_their_kind() {
        assert!(mime_of_kind("image/png", "image"));
        assert!(mime_of_kind("audio/wav; rate=8000", "audio"));
        assert!(!mime_of_kind("text/plain", "image"));
        assert!(!mime_of_kind("image", "image"));
        assert!(!mime_of_kind("image/", "image"));
    }
}
