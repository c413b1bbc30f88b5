//! The survey: one pass over everything the server advertises, made before the
//! rules so that they judge shared observations and the run-wide rules see every
//! kind of result. It only reads: lists, `resources/read` of listed resources
//! and of resource templates expanded with the values `completion/complete`
//! offers, `prompts/get`, `completion/complete`, a short `subscriptions/listen`, calls
//! of unknown tool and prompt names, and calls of tools protocheck may run
//! (annotated read-only, or allowed by the run), with the MRTR retry when a tool
//! asks for input.
//!
//! [`Survey::take`] sends what needs nothing but the advertised
//! capabilities: the lists, the unknown names, the listen, the SEC rules'
//! provoking requests. What reads the lists' items follows apart, so that
//! over HTTP no rule waits for it that does not read it: the reads
//! ([`Survey::read`], beside the connection rules, see `Session::reads`)
//! and the tool calls, the survey's longest part (a call, then up to
//! [`MAX_ROUNDS`] retries when the tool asks for input), which the survey
//! only chooses ([`Survey::callable`]) and [`call_tools`] makes, beside the
//! rules (see `Session::tool_calls`).

use super::client::{McpClient, Probe, Reply};
use super::wire::code;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Most pages read from one list; a server paginating further is cut here.
const MAX_PAGES: usize = 10;
/// Most items kept from one list.
pub(crate) const MAX_ITEMS: usize = 500;
/// Most listed resources read: the spec bounds no list, and the run's log
/// ([`McpClient::seen`]) must keep room for every other rule's answers.
pub(crate) const MAX_READS: usize = 100;
/// Most resource templates expanded and read (each costs a
/// `completion/complete` per variable, then a read).
pub(crate) const MAX_EXPANDED: usize = 20;
/// Most variables of one template asked for a value.
const MAX_TEMPLATE_VARS: usize = 8;
/// Longest completion value used in an expansion.
const MAX_VALUE_LEN: usize = 512;
/// Most tools called.
const MAX_TOOL_CALLS: usize = 8;
/// MRTR rounds before giving up on a tool.
const MAX_ROUNDS: usize = 3;
/// The longest a `subscriptions/listen` stream is watched for its
/// acknowledgement: the fixed window protocheck used before it derived the
/// window from the run's round-trip times ([`McpClient::adaptive_window`]),
/// so that a slow target loses no time it had.
pub const LISTEN_WINDOW: Duration = Duration::from_millis(1500);
/// How deep placeholder arguments are built into nested objects.
const MAX_ARG_DEPTH: usize = 6;

/// One list method's items, read across pages.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub items: Vec<Value>,
    pub pages: Vec<Reply>,
    /// Why the list could not be read completely.
    pub problem: Option<String>,
}

impl Listing {
    pub fn names(&self, key: &str) -> Vec<String> {
        self.items
            .iter()
            .filter_map(|i| i.get(key).and_then(Value::as_str).map(str::to_owned))
            .collect()
    }

    /// The index of the first page whose result lists an item with `key`
    /// equal to `value`: the evidence for what a rule found in that item.
    pub fn page_with(&self, key: &str, value: &str) -> Option<usize> {
        self.pages.iter().position(|page| {
            page.result()
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|result| result.values())
                .filter_map(Value::as_array)
                .flatten()
                .any(|item| item.get(key).and_then(Value::as_str) == Some(value))
        })
    }
}

/// A tool call the survey made (its MRTR retries are in the client's log).
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub tool: String,
    /// The call with no client capabilities declared.
    pub first: Reply,
}

#[derive(Debug, Clone, Default)]
pub struct Survey {
    pub capabilities: Value,
    pub tools: Listing,
    pub prompts: Listing,
    pub resources: Listing,
    pub templates: Listing,
    pub unknown_tool: Option<Reply>,
    pub unknown_prompt: Option<Reply>,
    /// The listed tools protocheck may call (see [`may_call`]), at most
    /// [`MAX_TOOL_CALLS`]: [`call_tools`] calls them.
    pub callable: Vec<Value>,
    pub listen: Option<Reply>,
    /// What MCP-SEC-003 and MCP-SEC-007 provoke (over HTTP), sent with the
    /// survey's first requests: their answers are in the run's log before
    /// any rule reads it, whichever rule runs when.
    pub provoked: Option<Provoked>,
}

/// Builds the requests [`Provoked`] holds the answers to, in its order, and
/// the made-up token they carry (the SEC rules' own function: the survey
/// sends what they build).
pub(crate) type Provoke = fn(&McpClient) -> ([Probe; 3], String);

/// The requests of the run-wide SEC rules that provoke an answer: sent by
/// the survey so that the rules, judged after every other, do not add round
/// trips at the end of the run. Each answer is judged only by its rule.
#[derive(Debug, Clone)]
pub struct Provoked {
    /// MCP-SEC-003's request, refused for a missing `Mcp-Method`.
    pub echo: Reply,
    /// The made-up token MCP-SEC-007 sent.
    pub fake_token: String,
    /// MCP-SEC-007's two requests carrying it: the refused one, then a
    /// valid `server/discover`.
    pub authorization: [Reply; 2],
}

/// Whether protocheck may run `tool` with placeholder arguments: it is
/// annotated read-only, or the run allows tool calls (DESIGN "no side effects").
pub(crate) fn may_call(tool: &Value, allow_tool_calls: Option<bool>) -> bool {
    allow_tool_calls == Some(true) || read_only(tool)
}

/// Whether `tool` is annotated `readOnlyHint: true`.
pub(crate) fn read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint")
        .and_then(Value::as_bool)
        == Some(true)
}

/// A name no server defines, for probes that must not run anything.
pub fn unknown_name(kind: &str) -> String {
    format!(
        "{}{kind}-{:08x}",
        super::client::UNKNOWN_NAME_PREFIX,
        rand::random::<u32>()
    )
}

impl Survey {
    /// Surveys the server through `client`, from what its answer to
    /// `server/discover` advertises; `allow_tool_calls` is the run's option.
    pub(crate) async fn take(
        client: &McpClient,
        discover: &Reply,
        allow_tool_calls: Option<bool>,
        provoke: Option<Provoke>,
    ) -> Self {
        let mut survey = Self {
            capabilities: discover
                .result()
                .and_then(|r| r.get("capabilities"))
                .cloned()
                .unwrap_or(Value::Null),
            ..Self::default()
        };
        let has = |name: &str| survey.capabilities.get(name).is_some_and(Value::is_object);
        let (tools, prompts, resources) = (has("tools"), has("prompts"), has("resources"));
        let listing = |on: bool, method: &'static str, key: &'static str| async move {
            if on {
                list(client, method, key).await
            } else {
                Listing::default()
            }
        };
        let unknown = |on: bool, method: &'static str, params: Value| async move {
            if on {
                Some(client.send(&client.request(method, params)).await)
            } else {
                None
            }
        };
        // What needs nothing but the advertised capabilities goes side by
        // side (the client's request permits bound the target's load); what
        // reads a list's items follows once the lists are in.
        let (listed_tools, listed_prompts, listed_resources, listed_templates) = (
            listing(tools, "tools/list", "tools"),
            listing(prompts, "prompts/list", "prompts"),
            listing(resources, "resources/list", "resources"),
            listing(resources, "resources/templates/list", "resourceTemplates"),
        );
        let unknown_tool = unknown(
            tools,
            "tools/call",
            json!({"name": unknown_name("tool"), "arguments": {}}),
        );
        let unknown_prompt = unknown(
            prompts,
            "prompts/get",
            json!({"name": unknown_name("prompt")}),
        );
        let provoked = async {
            let ([echo, broken, valid], fake_token) = provoke?(client);
            let (echo, broken, valid) = tokio::join!(
                client.send(&echo),
                client.send(&broken),
                client.send(&valid)
            );
            Some(Provoked {
                echo,
                fake_token,
                authorization: [broken, valid],
            })
        };
        (
            survey.tools,
            survey.prompts,
            survey.resources,
            survey.templates,
            survey.unknown_tool,
            survey.unknown_prompt,
            survey.listen,
            survey.provoked,
        ) = tokio::join!(
            listed_tools,
            listed_prompts,
            listed_resources,
            listed_templates,
            unknown_tool,
            unknown_prompt,
            listen(client, &survey.capabilities),
            provoked,
        );

        survey.callable = survey
            .tools
            .items
            .iter()
            .filter(|t| may_call(t, allow_tool_calls))
            .take(MAX_TOOL_CALLS)
            .cloned()
            .collect();
        survey
    }

    /// The survey's reads of what the lists named (see [`Reads`]), side by
    /// side (the client's request permits bound the target's load): every
    /// listed resource (at most [`MAX_READS`]), the expansions of the
    /// templates (at most [`MAX_EXPANDED`], with `completions` advertised),
    /// the first prompt and one completion of its first argument.
    pub(crate) async fn read(&self, client: &McpClient) -> Reads {
        let listed = self.resources.names("uri");
        let mut unread = Vec::new();
        if let Some(problem) = &self.resources.problem {
            unread.push(format!("the `resources/list` walk stopped: {problem}"));
        }
        if listed.len() > MAX_READS {
            unread.push(format!(
                "only the first {MAX_READS} of the {} listed resources were read \
                 (protocheck's cap)",
                listed.len()
            ));
        }
        let reads = listed
            .iter()
            .take(MAX_READS)
            .map(|uri| read_one(client, uri.clone(), None));
        let completions = self
            .capabilities
            .get("completions")
            .is_some_and(Value::is_object);
        let templates: Vec<&str> = self
            .templates
            .items
            .iter()
            .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
            .collect();
        if let Some(problem) = &self.templates.problem {
            unread.push(format!(
                "the `resources/templates/list` walk stopped: {problem}"
            ));
        }
        if !templates.is_empty() && !completions {
            unread.push(format!(
                "{} resource templates were not expanded: the server does not advertise \
                 `completions`, so no valid value of a template variable can be learned",
                templates.len()
            ));
        } else if templates.len() > MAX_EXPANDED {
            unread.push(format!(
                "only the first {MAX_EXPANDED} of the {} resource templates were expanded \
                 (protocheck's cap)",
                templates.len()
            ));
        }
        let read = &listed[..listed.len().min(MAX_READS)];
        let expansions = templates
            .iter()
            .take(if completions { MAX_EXPANDED } else { 0 })
            .map(|t| expand(client, t, read));
        let prompt_get = async {
            let prompt = self.prompts.items.first()?;
            let name = prompt
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = prompt_arguments(prompt);
            let probe =
                client.request("prompts/get", json!({"name": name, "arguments": arguments}));
            Some((name.to_owned(), client.send(&probe).await))
        };
        let completion = async {
            if completions {
                complete(client, self).await
            } else {
                None
            }
        };
        // The answer of `completion/complete` is read in the run's log, by
        // the run-wide rules.
        let (mut reads, expanded, prompt, _) = tokio::join!(
            futures::future::join_all(reads),
            futures::future::join_all(expansions),
            prompt_get,
            completion
        );
        let mut templates_read = 0;
        for outcome in expanded {
            match outcome {
                Expansion::Read(read) => {
                    templates_read += 1;
                    reads.push(*read);
                }
                Expansion::Listed => templates_read += 1,
                Expansion::Unread(why) => unread.push(why),
            }
        }
        Reads {
            reads,
            prompt,
            templates_read,
            unread,
        }
    }
}

/// One `resources/read` of `uri` (`template`: the template it expands).
async fn read_one(client: &McpClient, uri: String, template: Option<String>) -> Read {
    let probe = client.request("resources/read", json!({"uri": uri}));
    let order = probe
        .id()
        .and_then(super::wire::as_integer)
        .unwrap_or(i64::MAX);
    let reply = client.send(&probe).await;
    Read {
        uri,
        template,
        order,
        reply,
    }
}

/// What became of one resource template.
enum Expansion {
    /// Its expansion was read.
    Read(Box<Read>),
    /// It expanded to a listed resource, read as such.
    Listed,
    /// Why it was not read.
    Unread(String),
}

/// Expands `template` with the first value `completion/complete` offers for
/// each of its variables (asked one after the other, each with the values
/// chosen so far as `context.arguments`) and reads the expansion, unless it
/// is one of the `listed` resources (read as such).
async fn expand(client: &McpClient, template: &str, listed: &[String]) -> Expansion {
    let shown = super::client::clip(template, 120);
    let names = template_variables(template);
    if names.is_empty() {
        return Expansion::Unread(format!("the template `{shown}` has no variable to expand"));
    }
    let mut chosen = Map::new();
    for name in names.iter().take(MAX_TEMPLATE_VARS) {
        let mut params = json!({
            "ref": {"type": "ref/resource", "uri": template},
            "argument": {"name": name, "value": ""}
        });
        if !chosen.is_empty() {
            params["context"] = json!({"arguments": chosen.clone()});
        }
        let reply = client
            .send(&client.request("completion/complete", params))
            .await;
        let value = reply
            .result()
            .and_then(|r| r.pointer("/completion/values"))
            .and_then(Value::as_array)
            .and_then(|values| values.iter().find_map(Value::as_str))
            .filter(|v| v.len() <= MAX_VALUE_LEN);
        let Some(value) = value else {
            return Expansion::Unread(format!(
                "the template `{shown}` was not expanded: `completion/complete` of its \
                 variable `{}` offered no value ({})",
                super::client::clip(name, 60),
                reply.describe()
            ));
        };
        chosen.insert(name.clone(), json!(value));
    }
    if names.len() > MAX_TEMPLATE_VARS {
        return Expansion::Unread(format!(
            "the template `{shown}` has more than {MAX_TEMPLATE_VARS} variables (protocheck's \
             cap) and was not expanded"
        ));
    }
    let uri = expand_template(template, &chosen);
    if listed.contains(&uri) {
        return Expansion::Listed;
    }
    Expansion::Read(Box::new(
        read_one(client, uri, Some(template.to_owned())).await,
    ))
}

/// The variable names of an RFC 6570 URI template, in order, each once.
pub(crate) fn template_variables(template: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, specs) in expressions(template) {
        for (name, _, _) in specs {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// A variable of an expression: its name, its prefix length (`:n`), and
/// whether it is exploded (`*`).
type VarSpec = (String, Option<usize>, bool);

/// The expressions of a template: each operator (or `None`) and variables.
fn expressions(template: &str) -> Vec<(Option<char>, Vec<VarSpec>)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let body = &rest[start + 1..start + len];
        rest = &rest[start + len + 1..];
        let op = body.chars().next().filter(|c| "+#./;?&".contains(*c));
        let list = if op.is_some() { &body[1..] } else { body };
        let specs = list
            .split(',')
            .filter_map(|spec| {
                let spec = spec.trim();
                let (spec, explode) = match spec.strip_suffix('*') {
                    Some(s) => (s, true),
                    None => (spec, false),
                };
                let (name, prefix) = match spec.split_once(':') {
                    Some((n, p)) => (n, p.parse().ok()),
                    None => (spec, None),
                };
                (!name.is_empty()).then(|| (name.to_owned(), prefix, explode))
            })
            .collect();
        out.push((op, specs));
    }
    out
}

/// Expands an RFC 6570 template with string `values` (undefined variables
/// are left out, as the RFC says).
pub(crate) fn expand_template(template: &str, values: &Map<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = template;
    let all = expressions(template);
    let mut all = all.into_iter();
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + len + 1..];
        let Some((op, specs)) = all.next() else {
            break;
        };
        let (first, sep, named, reserved) = match op {
            None => ("", ",", false, false),
            Some('+') => ("", ",", false, true),
            Some('#') => ("#", ",", false, true),
            Some('.') => (".", ".", false, false),
            Some('/') => ("/", "/", false, false),
            Some(';') => (";", ";", true, false),
            Some('?') => ("?", "&", true, false),
            _ => ("&", "&", true, false),
        };
        let mut parts = Vec::new();
        for (name, prefix, _) in specs {
            let Some(value) = values.get(&name).and_then(Value::as_str) else {
                continue;
            };
            let value: String = match prefix {
                Some(n) => value.chars().take(n).collect(),
                None => value.to_owned(),
            };
            let encoded = encode(&value, reserved);
            parts.push(match (named, op) {
                (true, Some(';')) if encoded.is_empty() => name,
                (true, _) => format!("{name}={encoded}"),
                (false, _) => encoded,
            });
        }
        if !parts.is_empty() {
            out.push_str(first);
            out.push_str(&parts.join(sep));
        }
    }
    out.push_str(rest);
    out
}

/// Percent-encodes all but the unreserved characters (and, with
/// `reserved`, the reserved ones and existing percent-escapes).
fn encode(value: &str, reserved: bool) -> String {
    let mut out = String::new();
    for byte in value.bytes() {
        let c = byte as char;
        let keep = c.is_ascii_alphanumeric()
            || "-._~".contains(c)
            || (reserved && ":/?#[]@!$&'()*+,;=%".contains(c));
        if keep {
            out.push(c);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One conforming request for each method the server serves: the family
/// probes. `server/discover`; with `tools` advertised `tools/list` and
/// `tools/call` of an unknown tool (it runs nothing, whatever the server does
/// with it); with `resources` `resources/list`, `resources/templates/list` and
/// `resources/read` of a made-up URI; with `prompts` `prompts/list` and
/// `prompts/get` of an unknown prompt; with `completions`
/// `completion/complete` on an unknown prompt's argument; and a short
/// `subscriptions/listen` when the server advertises something to listen for
/// (a `listChanged`, or `resources.subscribe` with a listed resource). The
/// header, version, `_meta` and Origin rules probe each of them, so one
/// change here widens every rule about "every request" (§15 amendment:
/// requirements are probed on every method family). Send each with
/// [`send_family`], which reads a listen as a listen.
pub(crate) fn family_probes(client: &McpClient, survey: &Survey) -> Vec<Probe> {
    let caps = &survey.capabilities;
    let has = |name: &str| caps.get(name).is_some_and(Value::is_object);
    let c = client;
    let mut probes = vec![c.request("server/discover", json!({}))];
    if has("tools") {
        probes.push(c.request("tools/list", json!({})));
        probes.push(c.request(
            "tools/call",
            json!({"name": unknown_name("tool"), "arguments": {}}),
        ));
    }
    if has("resources") {
        probes.push(c.request("resources/list", json!({})));
        probes.push(c.request("resources/templates/list", json!({})));
        probes.push(c.request(
            "resources/read",
            json!({"uri": format!("protocheck://missing/{}", unknown_name("resource"))}),
        ));
    }
    if has("prompts") {
        probes.push(c.request("prompts/list", json!({})));
        probes.push(c.request("prompts/get", json!({"name": unknown_name("prompt")})));
    }
    if has("completions") {
        probes.push(c.request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": unknown_name("prompt")},
                "argument": {"name": "protocheck", "value": ""}
            }),
        ));
    }
    if let Some(filter) = listen_filter(caps, &survey.resources) {
        probes.push(c.request("subscriptions/listen", json!({"notifications": filter})));
    }
    probes
}

/// Sends a family probe ([`family_probes`]): a `subscriptions/listen` is
/// read as a listen (until its first message or a short window, then
/// closed), every other request whole.
pub(crate) async fn send_family(client: &McpClient, probe: &Probe) -> Reply {
    if probe.method == "subscriptions/listen" {
        client.listen(probe, LISTEN_WINDOW).await
    } else {
        client.send(probe).await
    }
}

/// The `subscriptions/listen` filter asking for every list change the
/// server advertises, or else (with `resources.subscribe`) for updates of
/// the first listed resource; `None` when there is nothing to listen for.
fn listen_filter(caps: &Value, resources: &Listing) -> Option<Value> {
    let changed = |name: &str| caps.pointer(&format!("/{name}/listChanged")) == Some(&json!(true));
    let mut filter = Map::new();
    for (cap, key) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if changed(cap) {
            filter.insert(key.into(), json!(true));
        }
    }
    if filter.is_empty()
        && caps.pointer("/resources/subscribe") == Some(&json!(true))
        && let Some(uri) = resources.names("uri").into_iter().next()
    {
        filter.insert("resourceSubscriptions".into(), json!([uri]));
    }
    (!filter.is_empty()).then_some(Value::Object(filter))
}

/// What the survey reads of the items its lists named: `resources/read` of
/// listed resources and of the templates' expansions, `prompts/get` of the
/// first prompt, `completion/complete` of the first prompt argument and of
/// every template variable. Plain reads that declare nothing, made once per
/// run by the first to ask (see `Session::reads`).
#[derive(Debug, Clone, Default)]
pub struct Reads {
    /// Each resource read: the listed ones, then the templates' expansions.
    pub reads: Vec<Read>,
    /// The first listed prompt's `prompts/get`, with its name.
    pub prompt: Option<(String, Reply)>,
    /// How many templates were expanded (read, or found listed).
    pub templates_read: usize,
    /// What was not read, and why, in words for a finding.
    pub unread: Vec<String>,
}

/// One `resources/read` the survey made.
#[derive(Debug, Clone)]
pub struct Read {
    pub uri: String,
    /// The template this URI expands, when it is no listed resource.
    pub template: Option<String>,
    /// The request's id: its place in the run's log.
    pub order: i64,
    pub reply: Reply,
}

/// Calls each of `callable` (the survey's [`Survey::callable`]) with
/// placeholder arguments, side by side: tools may be slow, and the client's
/// request permits bound the target's load.
pub(crate) async fn call_tools(client: &McpClient, callable: &[Value]) -> Vec<ToolCall> {
    futures::future::join_all(callable.iter().map(|tool| call_tool(client, tool))).await
}

/// Reads every page of a list method.
async fn list(client: &McpClient, method: &str, key: &str) -> Listing {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = client.send(&client.request(method, params)).await;
        let page = reply.result().cloned();
        listing.pages.push(reply);
        let Some(page) = page else {
            listing.problem = Some(format!("`{method}` did not return a result"));
            return listing;
        };
        let Some(items) = page.get(key).and_then(Value::as_array) else {
            listing.problem = Some(format!("`{method}` result has no `{key}` array"));
            return listing;
        };
        for item in items {
            if listing.items.len() < MAX_ITEMS {
                listing.items.push(item.clone());
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
            _ => return listing,
        }
    }
    listing.problem = Some(format!(
        "`{method}` has more than {MAX_PAGES} pages; only those were read"
    ));
    listing
}

/// `arguments` for `prompts/get`: each required argument set to a placeholder.
pub(crate) fn prompt_arguments(prompt: &Value) -> Value {
    let mut args = Map::new();
    for arg in prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if arg.get("required").and_then(Value::as_bool) == Some(true)
            && let Some(name) = arg.get("name").and_then(Value::as_str)
        {
            args.insert(name.to_owned(), json!("protocheck"));
        }
    }
    Value::Object(args)
}

/// One `completion/complete` on the first prompt argument (the template
/// variables are asked by [`expand`]).
async fn complete(client: &McpClient, survey: &Survey) -> Option<Reply> {
    let (reference, argument) = survey.prompts.items.iter().find_map(|p| {
        let name = p.get("name")?.as_str()?;
        let arg = p
            .get("arguments")?
            .as_array()?
            .first()?
            .get("name")?
            .as_str()?;
        Some((json!({"type": "ref/prompt", "name": name}), arg.to_owned()))
    })?;
    let probe = client.request(
        "completion/complete",
        json!({"ref": reference, "argument": {"name": argument, "value": ""}}),
    );
    Some(client.send(&probe).await)
}

/// Placeholder arguments satisfying the required part of an input schema.
pub fn placeholder_arguments(schema: &Value) -> Value {
    placeholder(schema, 0)
}

fn placeholder(schema: &Value, depth: usize) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    let minimum = schema.get("minimum").and_then(Value::as_f64);
    match ty {
        "object" if depth < MAX_ARG_DEPTH => {
            let mut out = Map::new();
            let required = schema.get("required").and_then(Value::as_array);
            for name in required.into_iter().flatten().filter_map(Value::as_str) {
                let sub = schema
                    .pointer(&format!(
                        "/properties/{}",
                        name.replace('~', "~0").replace('/', "~1")
                    ))
                    .cloned()
                    .unwrap_or(Value::Null);
                out.insert(name.to_owned(), placeholder(&sub, depth + 1));
            }
            // An optional number with a lower bound is given that bound: left
            // out, it takes the tool's default, which may ask for more work
            // (a wait of seconds, a page of hundreds); at its minimum it asks
            // for the least work the tool accepts.
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, sub) in properties.into_iter().flatten() {
                if !out.contains_key(name) && bounded_number(sub) {
                    out.insert(name.clone(), placeholder(sub, depth + 1));
                }
            }
            Value::Object(out)
        }
        "object" => json!({}),
        "integer" => json!(minimum.map_or(1, |m| m.ceil() as i64)),
        "number" => json!(minimum.unwrap_or(1.0)),
        "boolean" => json!(false),
        "array" => json!([]),
        "null" => Value::Null,
        _ => {
            let min_len = schema
                .get("minLength")
                .and_then(super::wire::as_integer)
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0);
            let text = "protocheck".to_owned();
            json!(if (text.len() as u64) < min_len {
                "p".repeat(usize::try_from(min_len).unwrap_or(10).min(256))
            } else {
                text
            })
        }
    }
}

/// Whether `schema` is a plain number or integer with a `minimum`.
fn bounded_number(schema: &Value) -> bool {
    matches!(
        schema.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    ) && schema.get("minimum").is_some_and(Value::is_number)
        && schema.get("enum").is_none()
        && schema.get("const").is_none()
}

/// The MRTR answer protocheck gives to one input request (mrtr page): accept a
/// form with placeholders, decline what it cannot honestly provide.
fn input_response(request: &Value) -> Value {
    match request.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => {
            let schema = request
                .pointer("/params/requestedSchema")
                .cloned()
                .unwrap_or(Value::Null);
            if schema.is_null() {
                json!({"action": "decline"})
            } else {
                json!({"action": "accept", "content": placeholder_arguments(&schema)})
            }
        }
        Some("roots/list") => json!({"roots": []}),
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "protocheck"},
            "model": "protocheck",
            "stopReason": "endTurn"
        }),
        _ => json!({"action": "decline"}),
    }
}

/// Calls a tool protocheck may run, first with no capabilities; follows a
/// -32021 by declaring what it asked for, and an `input_required` result with
/// the MRTR retry.
async fn call_tool(client: &McpClient, tool: &Value) -> ToolCall {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    let arguments = placeholder_arguments(&schema);
    // A progress token invites an SSE answer with progress notifications, so the
    // stream rules (RES-003, RES-005, RES-006) have streams to judge.
    let base = |caps: &Value| -> Probe {
        let probe = client.request("tools/call", json!({"name": name, "arguments": arguments}));
        let token = json!(format!(
            "protocheck-{}",
            probe.id().cloned().unwrap_or_default()
        ));
        probe
            .with_meta("progressToken", token)
            .with_capabilities(caps.clone())
            .with_param_headers(&schema)
    };
    let first = client.send(&base(&json!({}))).await;
    let mut capabilities = json!({});
    let mut last = first.clone();
    for _ in 0..MAX_ROUNDS {
        let mut probe = base(&capabilities);
        if last.error_code() == Some(code::MISSING_CLIENT_CAPABILITY) {
            match last
                .error()
                .and_then(|e| e.pointer("/data/requiredCapabilities"))
            {
                Some(Value::Object(required)) => capabilities = Value::Object(required.clone()),
                _ => break,
            }
            probe = base(&capabilities);
        } else if let Some(result) = last
            .result()
            .filter(|r| r.get("resultType").and_then(Value::as_str) == Some("input_required"))
        {
            let requests = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let responses: Map<String, Value> = requests
                .iter()
                .map(|(k, r)| (k.clone(), input_response(r)))
                .collect();
            probe = probe.with_params_field("inputResponses", Value::Object(responses));
            if let Some(state) = result.get("requestState") {
                probe = probe.with_params_field("requestState", state.clone());
            }
        } else {
            break;
        }
        // The rounds are logged by the client for the run-wide rules.
        last = client.send(&probe).await;
    }
    ToolCall { tool: name, first }
}

/// A short `subscriptions/listen` asking for every list change the server
/// advertises, read until the acknowledgement and then closed.
async fn listen(client: &McpClient, caps: &Value) -> Option<Reply> {
    let filter = listen_filter(caps, &Listing::default())?;
    let probe = client.request("subscriptions/listen", json!({"notifications": filter}));
    Some(client.listen(&probe, LISTEN_WINDOW).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of a list whose result is `result`.
    fn page(result: Value) -> Reply {
        let mut reply = Reply::empty("prompts/list");
        reply.transport_error = None;
        reply.status = Some(200);
        reply.message = Some(json!({"jsonrpc": "2.0", "id": 1, "result": result}));
        reply
    }

    #[test]
    fn templates_expand_as_rfc_6570_says() {
        let values = json!({"a": "x y", "b": "p/q", "c": "hello"});
        let values = values.as_object().cloned().unwrap_or_default();
        let cases = [
            ("file:///{a}", "file:///x%20y"),
            ("file:///{+b}", "file:///p/q"),
            ("file:///{b}", "file:///p%2Fq"),
            ("ref://x{/a,b}", "ref://x/x%20y/p%2Fq"),
            ("ref://x{?a,c,missing}", "ref://x?a=x%20y&c=hello"),
            ("ref://x{;c}{&c}", "ref://x;c=hello&c=hello"),
            ("ref://x/{c:3}{.c}{#b}", "ref://x/hel.hello#p/q"),
            ("ref://x/{missing}/y", "ref://x//y"),
            ("ref://x/{c*}", "ref://x/hello"),
        ];
        for (template, expanded) in cases {
            assert_eq!(expand_template(template, &values), expanded, "{template}");
        }
        assert_eq!(
            template_variables("ref://{a}/{+b}{?a,c:2,d*}"),
            vec!["a", "b", "c", "d"]
        );
        assert!(template_variables("ref://plain").is_empty());
        // An unclosed brace ends the template's expressions.
        assert_eq!(template_variables("ref://{a}/{b"), vec!["a"]);
    }

    #[test]
    fn an_item_is_found_on_the_page_that_lists_it() {
        let listing = Listing {
            items: Vec::new(),
            pages: vec![
                page(json!({"prompts": [{"name": "a"}], "nextCursor": "2"})),
                page(json!({"prompts": [{"name": "b c"}, {"name": "d"}]})),
            ],
            problem: None,
        };
        assert_eq!(listing.page_with("name", "a"), Some(0));
        assert_eq!(listing.page_with("name", "b c"), Some(1));
        assert_eq!(listing.page_with("name", "nowhere"), None);
        assert_eq!(listing.page_with("uri", "a"), None);
    }

    #[test]
    fn placeholders_fill_what_is_required_and_bounded_numbers_at_their_minimum() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 12},
                "ms": {"type": "integer", "minimum": 0, "maximum": 10000},
                "ratio": {"type": "number", "minimum": 0.5},
                "count": {"type": "integer"},
                "mode": {"type": "integer", "minimum": 1, "enum": [3, 4]},
                "note": {"type": "string"}
            },
            "required": ["name"]
        });
        assert_eq!(
            placeholder_arguments(&schema),
            json!({"name": "pppppppppppp", "ms": 0, "ratio": 0.5}),
            "optional numbers without a minimum, enums and strings are left to their defaults"
        );
        let required = json!({
            "type": "object",
            "properties": {"to": {"type": "integer", "minimum": 1}},
            "required": ["to"]
        });
        assert_eq!(placeholder_arguments(&required), json!({"to": 1}));
    }
}
