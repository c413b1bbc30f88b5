//! CAC — caching metadata (server/utilities/caching; schema `CacheableResult`).
//!
//! The cacheable results are the five of the changelog (tools/list,
//! prompts/list, resources/list, resources/templates/list, resources/read) and
//! server/discover, whose schema also extends CacheableResult (decision 7 of
//! `mcp-2026-07-28.md` §15); discover gets its own message.

use super::client::{Reply, client_info, clip, some};
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session};
use super::wire;
use crate::suite::{Exchange, Outcome};
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const TTL_PRESENT: McpRule = McpRule::new(
    "MCP-CAC-001",
    "ttlMs present on all five cacheable results",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/caching"),
    "CAC",
    |s| ttl_present(s).boxed(),
)
.says("the cacheable results (tools/list, prompts/list, resources/list, resources/templates/list, resources/read, server/discover) MUST carry ttlMs")
.help(
    "protocheck reads every cacheable result the run received on its valid requests, whichever \
     rule sent them: the `server/discover` answers, every page of `tools/list`, `prompts/list`, \
     `resources/list` and `resources/templates/list`, and `resources/read` of every listed \
     resource (up to 100) and, when `completions` is advertised, of each resource template \
     expanded with the first value `completion/complete` offers for its variables (up to 20 \
     templates); `input_required` results are left out. Each must carry `ttlMs`.",
    "The server leaves `ttlMs` out, most often on `server/discover`, whose result became \
     cacheable late in the 2026-07-28 cycle, or on `resources/read`; an SDK release from before \
     the caching utility omits it everywhere.",
    "Add `ttlMs` to each of these results, `server/discover` included: the number of milliseconds \
     a client may reuse the result, or `0` when it must not be reused.",
)
.run_wide();

pub(crate) const SCOPE_PRESENT: McpRule = McpRule::new(
    "MCP-CAC-002",
    "cacheScope present on all five cacheable results",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/caching"),
    "CAC",
    |s| scope_present(s).boxed(),
)
.says("the cacheable results MUST carry cacheScope")
.help(
    "protocheck reads the same cacheable results as MCP-CAC-001 (every `server/discover` answer, \
     list page and `resources/read` result of the run) and checks that each \
     carries `cacheScope`.",
    "The server sets `ttlMs` but forgets `cacheScope`, or sets both on the list results only and \
     not on `server/discover` or `resources/read`, which come from other handlers.",
    "Add `cacheScope` to every cacheable result, `server/discover` included: `\"public\"` when \
     any caller would get the same content, `\"private\"` when the content depends on who asks.",
)
.run_wide();

pub(crate) const SCOPE_VALUE: McpRule = McpRule::new(
    "MCP-CAC-003",
    "cacheScope is exactly \"public\" or \"private\"",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/caching"),
    "CAC",
    |s| scope_value(s).boxed(),
)
.says("cacheScope MUST be exactly \"public\" or \"private\"")
.help(
    "On the cacheable results of the run that carry `cacheScope` (every `server/discover` \
     answer, list page and read), protocheck checks that the value is exactly the string `public` \
     or `private`, and that all pages of one walk of a list carry the same value. Skipped when \
     none carries it.",
    "The value is capitalised (`Public`), borrowed from HTTP caching (`shared`, `no-store`, \
     `max-age=60`), or a boolean instead of one of the two strings; clients cannot tell whether a \
     shared cache may keep the result.",
    "Send `cacheScope` as exactly `\"public\"` or `\"private\"`, in lower case, and express how \
     long a result may be reused with `ttlMs`, not in the scope; `private` is the safe choice \
     when unsure.",
)
.run_wide();

pub(crate) const TTL_VALUE: McpRule = McpRule::new(
    "MCP-CAC-004",
    "ttlMs is a non-negative number",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/caching"),
    "CAC",
    |s| ttl_value(s).boxed(),
)
.says(
    "ttlMs MUST be an integer number of milliseconds, at least 0 (schema: type integer, minimum 0)",
)
.help(
    "On the cacheable results that carry `ttlMs`, protocheck checks that it is an integer of at \
     least 0; a number with a zero fraction such as `30000.0` counts as an integer. Skipped when \
     none carries it.",
    "`ttlMs` is negative (often `-1` meant as \"never cache\" or \"forever\"), has a fraction, is \
     `null`, or is a string such as `\"60000\"` produced by serialising a duration type.",
    "Send `ttlMs` as a non-negative JSON integer of milliseconds, with `0` for results that must \
     not be reused; convert durations to milliseconds before serialising rather than sending a \
     string.",
)
.run_wide();

pub(crate) const PUBLIC_NOT_PERSONAL: McpRule = McpRule::new(
    "MCP-CAC-005",
    "Authenticated or personalised results are not marked cacheScope: public",
    Keyword::May,
    Outcome::Warn,
    spec!("/server/utilities/caching"),
    "CAC",
    |s| public_not_personal(s).boxed(),
)
.says("results that depend on the requester's authorization or identity should be cacheScope private, not public")
.help(
    "For each cacheable result marked `cacheScope: public` (first pages only), protocheck asks \
     again three times: as itself, with `clientInfo` named `protocheck-second-caller`, and as \
     itself again as a control. It warns when the content (without `_meta` and `ttlMs`, lists \
     sorted) follows the caller but not the control.",
    "The result depends on who asks (the client's identity, or a token's user or tenant) yet is \
     marked `public`, usually because one scope was set for every result; a shared cache could \
     then serve one caller's content to another.",
    "Mark results that depend on the caller's identity or authorization `cacheScope: \
     \"private\"`, and keep `\"public\"` for content that is the same for every caller.",
);

pub(crate) const RULES: &[McpRule] = &[
    TTL_PRESENT,
    SCOPE_PRESENT,
    SCOPE_VALUE,
    TTL_VALUE,
    PUBLIC_NOT_PERSONAL,
];

/// One cacheable result seen: what produced it, the params to ask again, and the reply.
struct Cacheable<'a> {
    method: &'static str,
    params: Value,
    reply: &'a Reply,
}

impl Cacheable<'_> {
    fn result(&self) -> Option<&Value> {
        self.reply.result()
    }

    fn label(&self) -> String {
        match self.params.get("uri").and_then(Value::as_str) {
            Some(uri) => format!("`{}` of {}", self.method, clip(uri, 120)),
            None => format!("`{}`", self.method),
        }
    }
}

/// Every complete result of a cacheable method the session holds (the
/// survey's reads awaited).
async fn cacheables(s: &Session) -> Vec<Cacheable<'_>> {
    let mut out = vec![Cacheable {
        method: "server/discover",
        params: json!({}),
        reply: &s.discover,
    }];
    let lists = [
        ("tools/list", &s.survey.tools),
        ("prompts/list", &s.survey.prompts),
        ("resources/list", &s.survey.resources),
        ("resources/templates/list", &s.survey.templates),
    ];
    for (method, listing) in lists {
        out.extend(listing.pages.iter().map(|reply| Cacheable {
            method,
            params: json!({}),
            reply,
        }));
    }
    // Each read is asked three times: the first few stand for the rest.
    out.extend(
        s.reads()
            .await
            .reads
            .iter()
            .take(MAX_ASKED_AGAIN)
            .map(|read| Cacheable {
                method: "resources/read",
                params: json!({"uri": read.uri}),
                reply: &read.reply,
            }),
    );
    // `input_required` results are never cacheable and carry no hints.
    out.retain(|c| {
        c.result()
            .is_some_and(|r| r.get("resultType").and_then(Value::as_str) != Some("input_required"))
    });
    out
}

/// Most `resources/read` results MCP-CAC-005 asks again.
const MAX_ASKED_AGAIN: usize = 5;

/// The methods whose complete results are cacheable (CACHE, and
/// `server/discover` by its schema).
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// One cacheable result the run received.
struct Seen {
    method: String,
    /// The request's id (the run's order).
    order: i64,
    result: Option<Value>,
    exchange: Exchange,
}

/// Every complete result of a cacheable method the run received on its
/// valid probes, whichever rule sent them: the survey's discover, every page
/// of its lists, and every other rule's (MCP-STL-001's family probes,
/// MCP-RES-007's walks, MCP-CAC-005's second asks, …) from the run's log;
/// the survey's reads (every listed resource and template expansion) from
/// the survey itself, so that none is missed when the log is full. Answers
/// to valid probes on the rules' dedicated connections are in the log too.
async fn seen_cacheables(s: &Session) -> Vec<Seen> {
    let reads = s.reads().await;
    let mut seen: Vec<Seen> = s
        .client
        .seen()
        .await
        .into_iter()
        .filter(|r| CACHEABLE.contains(&r.method.as_str()))
        .filter(|r| !reads.reads.iter().any(|read| read.order == r.order))
        .map(|r| Seen {
            method: r.method,
            order: r.order,
            result: r.result,
            exchange: r.exchange,
        })
        .collect();
    seen.extend(reads.reads.iter().map(|read| Seen {
        method: "resources/read".to_owned(),
        order: read.order,
        result: read.reply.result().cloned(),
        exchange: read.reply.exchange.clone(),
    }));
    seen.retain(|r| {
        r.result.as_ref().is_some_and(|result| {
            result.get("resultType").and_then(Value::as_str) != Some("input_required")
        })
    });
    seen.sort_by_key(|r| r.order);
    seen
}

/// What the survey read of the resources, and where it stopped, for a
/// finding.
async fn reads_note(s: &Session) -> String {
    let reads = s.reads().await;
    let listed = reads.reads.iter().filter(|r| r.template.is_none()).count();
    let mut note = format!(
        "`resources/read` of {listed} listed resources and {} resource templates expanded",
        reads.templates_read
    );
    if !reads.unread.is_empty() {
        note.push_str(&format!("; not read: {}", some(&reads.unread, 3, "; ")));
    }
    note
}

/// Fails naming every cacheable result of the run for which `problem` says
/// something.
async fn judge(
    s: &Session,
    field: &str,
    problem: impl Fn(Option<&Value>) -> Option<String>,
    advice: &str,
) -> Judgement {
    let all = seen_cacheables(s).await;
    if all.is_empty() {
        return Judgement::skip("no cacheable result was received to judge");
    }
    let reads = s.reads().await;
    let bad: Vec<(String, &Seen)> = all
        .iter()
        .filter_map(|c| {
            let p = problem(c.result.as_ref().and_then(|r| r.get(field)))?;
            let text = if c.method == "server/discover" {
                // The sixth cacheable result, added late in the 2026-07-28 cycle.
                format!("DiscoverResult {p} (server/discover is cacheable too: its schema requires ttlMs and cacheScope)")
            } else if let Some(read) = reads.reads.iter().find(|r| r.order == c.order) {
                let via = read.template.as_ref().map_or_else(String::new, |t| {
                    format!(" (an expansion of the template `{}`)", clip(t, 120))
                });
                format!(
                    "`resources/read` of `{}`{via} (request {}) {p}",
                    clip(&read.uri, 120),
                    c.order
                )
            } else {
                format!("`{}` (request {}) {p}", c.method, c.order)
            };
            Some((text, c))
        })
        .collect();
    if bad.is_empty() {
        let mut methods: Vec<&str> = all.iter().map(|c| c.method.as_str()).collect();
        methods.sort_unstable();
        methods.dedup();
        return Judgement::pass(format!(
            "`{field}` is right on all {} cacheable results of the run ({}), {}",
            all.len(),
            methods.join(", "),
            reads_note(s).await
        ));
    }
    let mut texts: Vec<String> = bad.iter().map(|(t, _)| t.clone()).collect();
    texts.dedup();
    let mut j = Judgement::fail(format!("{}; {advice}", some(&texts, 5, "; ")));
    for (_, seen) in bad.iter().take(2) {
        j = j.with(&seen.exchange);
    }
    j
}

async fn ttl_present(s: &Session) -> Judgement {
    judge(
        s,
        "ttlMs",
        |v| v.is_none().then(|| "has no `ttlMs`".to_owned()),
        "every cacheable result MUST carry ttlMs (milliseconds the client may reuse it; 0 = stale at once)",
    )
    .await
}

async fn scope_present(s: &Session) -> Judgement {
    judge(
        s,
        "cacheScope",
        |v| v.is_none().then(|| "has no `cacheScope`".to_owned()),
        "every cacheable result MUST carry cacheScope (\"public\" or \"private\")",
    )
    .await
}

async fn scope_value(s: &Session) -> Judgement {
    if seen_cacheables(s).await.iter().all(|c| {
        c.result
            .as_ref()
            .and_then(|r| r.get("cacheScope"))
            .is_none()
    }) {
        return Judgement::skip(
            "no cacheable result carries cacheScope, so there is no value to judge",
        );
    }
    // CACHE: "all pages of one list MUST carry the same value": the survey
    // read every page of each list in one walk.
    let lists = [
        ("tools/list", &s.survey.tools),
        ("prompts/list", &s.survey.prompts),
        ("resources/list", &s.survey.resources),
        ("resources/templates/list", &s.survey.templates),
    ];
    for (method, listing) in lists {
        let scopes: Vec<(Option<&Value>, &Reply)> = listing
            .pages
            .iter()
            .filter_map(|page| Some((page.result()?.get("cacheScope"), page)))
            .collect();
        if let Some(((first, first_page), (other, other_page))) = scopes
            .first()
            .and_then(|f| scopes.iter().find(|o| o.0 != f.0).map(|o| (f, o)))
        {
            let show = |v: &Option<&Value>| {
                v.map_or_else(|| "none".to_owned(), |v| clip(&v.to_string(), 40))
            };
            let at = scopes.iter().position(|o| o.0 != *first).unwrap_or(0) + 1;
            return Judgement::fail(format!(
                "the pages of one `{method}` walk carry different `cacheScope` values: {} on \
                 page 1, {} on page {at}; all pages of one list MUST carry the same value",
                show(first),
                show(other)
            ))
            .reply(first_page)
            .reply(other_page);
        }
    }
    judge(
        s,
        "cacheScope",
        |v| match v {
            None => None,
            Some(Value::String(x)) if x == "public" || x == "private" => None,
            Some(other) => Some(format!(
                "has `cacheScope: {}`",
                clip(&other.to_string(), 40)
            )),
        },
        "cacheScope MUST be exactly \"public\" or \"private\" (lower case)",
    )
    .await
}

async fn ttl_value(s: &Session) -> Judgement {
    if seen_cacheables(s)
        .await
        .iter()
        .all(|c| c.result.as_ref().and_then(|r| r.get("ttlMs")).is_none())
    {
        return Judgement::skip("no cacheable result carries ttlMs, so there is no value to judge");
    }
    // The schema makes ttlMs `{"type": "integer", "minimum": 0}`; a fraction is
    // refused too. In JSON Schema 2020-12 an integer is any number with a zero
    // fractional part, so `30000.0` is an integer (§15 amendment "JSON Schema
    // semantics for numbers").
    judge(
        s,
        "ttlMs",
        |v| match v {
            None => None,
            Some(n) if super::wire::as_integer(n).is_some_and(|i| i >= 0) => None,
            Some(other) => Some(format!("has `ttlMs: {}`", clip(&other.to_string(), 40))),
        },
        "ttlMs MUST be a non-negative integer number of milliseconds",
    )
    .await
}

/// A result as compared across callers: `_meta` and `ttlMs` dropped, list items
/// sorted (their order is RES-007's concern, not this rule's).
fn canonical(result: &Value) -> Value {
    let mut out = result.clone();
    if let Some(obj) = out.as_object_mut() {
        obj.remove("_meta");
        obj.remove("ttlMs");
        for key in ["tools", "prompts", "resources", "resourceTemplates"] {
            if let Some(Value::Array(items)) = obj.get_mut(key) {
                items.sort_by_key(|i| i.to_string());
            }
        }
    }
    out
}

async fn public_not_personal(s: &Session) -> Judgement {
    let mut public: Vec<(String, &'static str, Value)> = cacheables(s)
        .await
        .into_iter()
        .filter(|c| c.result().and_then(|r| r.get("cacheScope")) == Some(&json!("public")))
        .map(|c| (c.label(), c.method, c.params.clone()))
        .collect();
    // Later pages of a list would need their cursor; only the first is asked again.
    public.dedup_by(|a, b| a.0 == b.0);
    if public.is_empty() {
        return Judgement::skip("no result is marked cacheScope: public");
    }
    // protocheck sends no credentials, so "personalised" is judged by asking as
    // two different clients, back to back, with the first asking once more as a
    // control: only a difference that follows the caller counts.
    let mut other_info = client_info();
    other_info["name"] = json!("protocheck-second-caller");
    // Each result is asked its three times back to back; the results are
    // independent of one another (see `Session::each`).
    let asked: Vec<_> = public
        .iter()
        .map(|(label, method, params)| {
            let other_info = &other_info;
            async move {
                let first = s
                    .client
                    .send(&s.client.request(method, params.clone()))
                    .await;
                let probe = s
                    .client
                    .request(method, params.clone())
                    .with_meta(wire::META_CLIENT_INFO, other_info.clone());
                let other = s.client.send(&probe).await;
                let control = s
                    .client
                    .send(&s.client.request(method, params.clone()))
                    .await;
                (label, first, other, control)
            }
        })
        .collect();
    let mut judged = 0;
    for (label, first, other, control) in s.each(asked).await {
        let (Some(a), Some(b), Some(c)) = (first.result(), other.result(), control.result()) else {
            continue;
        };
        if canonical(a) != canonical(c) {
            // The content changes between identical requests: not judged here.
            continue;
        }
        judged += 1;
        if canonical(a) != canonical(b) {
            return Judgement::fail(format!(
                "{label} is marked cacheScope: public but its content follows the caller (it \
                 changed for clientInfo \"protocheck-second-caller\" and not for a repeat of \
                 the first request); a shared cache would serve one caller's result to \
                 another: mark per-caller results \"private\""
            ))
            .reply(&first)
            .reply(&other);
        }
    }
    if judged == 0 {
        return Judgement::skip(
            "every public result changed between identical requests, so none could be judged",
        );
    }
    Judgement::pass(format!(
        "{judged} public results were the same for a second caller"
    ))
}
