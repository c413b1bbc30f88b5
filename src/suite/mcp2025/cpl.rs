//! CPL — completion (server/utilities/completion): `completion/complete`
//! for the arguments of listed prompts and the variables of listed resource
//! templates.

use super::client::Reply;
use super::res::MAX_NAMED;
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Kind, Session};
use super::tol::{quoted, some, walk};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use futures::FutureExt;
use serde_json::{Value, json};
use std::sync::Arc;

/// Most suggestions a completion result may hold.
const MAX_VALUES: usize = 100;
/// Most references protocheck asks completions for.
const MAX_REFERENCES: usize = 3;

pub(crate) const DECLARED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-CPL-001",
    "A server that answers `completion/complete` with a result declares `completions`",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/completion#capabilities"),
    "CPL",
    |s| declared(s).boxed(),
)
.says("servers that support completions declare the `completions` capability")
.help(
    "When the server does not declare `completions`, protocheck sends `completion/complete` for \
     the first listed prompt argument (or resource template variable) with an empty value, and \
     fails if it gets a result. A server that declares `completions` is not judged.",
    "The server answers completions (often through an SDK that registers the handler once a \
     prompt or template has a completer) while its capabilities lack `completions`.",
    "Declare `\"completions\": {}` in the `initialize` capabilities whenever the server answers \
     `completion/complete` with results, or remove the completion handler.",
);

pub(crate) const METHOD_NOT_FOUND: Mcp25Rule = Mcp25Rule::new(
    "MCP25-CPL-002",
    "Without `completions`, `completion/complete` gets -32601",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/utilities/completion#error-handling"),
    "CPL",
    |s| method_not_found(s).boxed(),
)
.says("a server without the completion capability should answer -32601 (Method not found)")
.help(
    "When the server does not declare `completions`, protocheck sends `completion/complete` for \
     the first listed prompt argument or template variable (or for a made-up prompt when none is \
     listed) and expects error -32601; another error or a result is a warning.",
    "The server answers an empty completion result or -32602 instead of -32601, usually because \
     the SDK installs a default completion handler whether or not the capability is declared.",
    "Without the `completions` capability, register no `completion/complete` handler, so that the \
     request gets -32601 (Method not found); or declare the capability if the server answers it.",
);

pub(crate) const RESULT: Mcp25Rule = Mcp25Rule::new(
    "MCP25-CPL-003",
    "A completion result has `completion.values` (strings, at most 100); `total`, `hasMore` typed",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/completion#completion-results"),
    "CPL",
    |s| result(s).boxed(),
)
.says(
    "a completion result holds at most 100 string suggestions in `completion.values`, with \
     `total` a number and `hasMore` a boolean when present (schema `CompleteResult`)",
)
.help(
    "protocheck collects the arguments of the prompts of `prompts/list` and the variables of the \
     templates of `resources/templates/list`, sends `completion/complete` with an empty value for \
     up to three, and checks each result: `completion.values` holds at most 100 strings, and \
     `total` and `hasMore`, when present, are a number and a boolean. Errors are not judged.",
    "The result holds more than 100 values, values as objects (`{value, label}`) or numbers, or \
     `hasMore` as a string, or lacks the `completion` wrapper.",
    "Answer `{\"completion\": {\"values\": [\"…\"], \"total\": n, \"hasMore\": true}}` with at \
     most 100 string values; cut longer lists, and say more exist with `hasMore` and `total`.",
)
.needs_capability("completions");

pub(crate) const UNKNOWN_PROMPT: Mcp25Rule = Mcp25Rule::new(
    "MCP25-CPL-004",
    "A completion request naming an unknown prompt gets -32602",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/utilities/completion#error-handling"),
    "CPL",
    |s| unknown_prompt(s).boxed(),
)
.says("an invalid prompt name should be answered with -32602 (Invalid params)")
.help(
    "protocheck sends `completion/complete` for a made-up prompt (`protocheck_no_such_prompt_` \
     and random hex) with the argument `protocheck`, and, for the first listed prompt argument or \
     template variable, requests without `argument` and without `ref`. Each must get error \
     -32602; another error code or a result is a warning.",
    "The server answers with an empty completion result (the most common, since completers \
     usually return nothing for what they do not know), or with another code such as -32603.",
    "Look the referenced prompt or resource template up first, and answer an unknown one with \
     `{\"code\": -32602, \"message\": \"Unknown prompt: …\"}`.",
)
.needs_capability("completions");

pub(crate) const RULES: &[Mcp25Rule] = &[DECLARED, METHOD_NOT_FOUND, RESULT, UNKNOWN_PROMPT];

/// What a completion request can name: a reference and one of its arguments.
#[derive(Debug, Clone)]
struct Target {
    reference: Value,
    argument: String,
}

impl Target {
    fn describe(&self) -> String {
        match self.reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => format!(
                "argument {} of prompt {}",
                quoted(&self.argument),
                quoted(self.reference["name"].as_str().unwrap_or_default())
            ),
            _ => format!(
                "variable {} of template {}",
                quoted(&self.argument),
                quoted(self.reference["uri"].as_str().unwrap_or_default())
            ),
        }
    }

    fn params(&self) -> Value {
        json!({"ref": self.reference, "argument": {"name": self.argument, "value": ""}})
    }
}

/// The variable names of an RFC 6570 URI template.
fn template_variables(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let expression = &rest[start + 1..start + len];
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for var in expression.split(',') {
            let name = var.split(':').next().unwrap_or(var).trim_end_matches('*');
            if !name.is_empty() && !out.iter().any(|v| v == name) {
                out.push(name.to_owned());
            }
        }
        rest = &rest[start + len + 1..];
    }
    out
}

/// The prompt arguments and template variables the server lists (each
/// list asked for whether or not its capability is declared).
struct Targets(Vec<Target>);

async fn targets(s: &Session) -> Arc<Targets> {
    s.shared(|| async {
        let mut out = Vec::new();
        let prompts = walk(s, "prompts/list", "prompts").await;
        for prompt in &prompts.items {
            let Some(name) = prompt.get("name").and_then(Value::as_str) else {
                continue;
            };
            let arguments = prompt.get("arguments").and_then(Value::as_array);
            for argument in arguments.into_iter().flatten() {
                if let Some(arg) = argument.get("name").and_then(Value::as_str) {
                    out.push(Target {
                        reference: json!({"type": "ref/prompt", "name": name}),
                        argument: arg.to_owned(),
                    });
                }
            }
        }
        let templates = walk(s, "resources/templates/list", "resourceTemplates").await;
        for template in &templates.items {
            let Some(uri) = template.get("uriTemplate").and_then(Value::as_str) else {
                continue;
            };
            for var in template_variables(uri) {
                out.push(Target {
                    reference: json!({"type": "ref/resource", "uri": uri}),
                    argument: var,
                });
            }
        }
        Targets(out)
    })
    .await
}

/// The probe of CPL-001 and CPL-002: `completion/complete` for the first
/// listed target, or, with none, for a prompt no server defines.
struct Undeclared {
    /// Each request sent, with the target it named (none: a prompt no
    /// server defines, sent when the server lists no target).
    probes: Vec<(Option<Target>, Reply)>,
}

/// Most targets asked for when `completions` is not declared.
const MAX_UNDECLARED: usize = 20;

async fn undeclared_probe(s: &Session) -> Arc<Undeclared> {
    s.shared(|| async {
        let listed: Vec<Option<Target>> = targets(s)
            .await
            .0
            .iter()
            .take(MAX_UNDECLARED)
            .cloned()
            .map(Some)
            .collect();
        let targets = if listed.is_empty() {
            vec![None]
        } else {
            listed
        };
        // Side by side: each request is independent of the others.
        let sends = targets.into_iter().map(|target| async move {
            let params = match &target {
                Some(t) => t.params(),
                None => json!({"ref": {"type": "ref/prompt", "name": unknown_prompt_name()},
                               "argument": {"name": "protocheck", "value": ""}}),
            };
            let reply = s.main.request("completion/complete", params).await;
            (target, reply)
        });
        Undeclared {
            probes: futures::future::join_all(sends).await,
        }
    })
    .await
}

fn unknown_prompt_name() -> String {
    format!("protocheck_no_such_prompt_{:08x}", rand::random::<u32>())
}

fn probe_what(target: Option<&Target>) -> String {
    match target {
        Some(t) => format!("`completion/complete` for the {}", t.describe()),
        None => "`completion/complete` (for a prompt no server defines)".to_owned(),
    }
}

async fn declared(s: &Session) -> Judgement {
    if s.advertises("completions") {
        return Judgement::skip("not applicable: the server declares `completions`");
    }
    let probe = undeclared_probe(s).await;
    // A result to any request, the one for a prompt no server defines
    // included, shows the server answers completion requests.
    if let Some((target, reply)) = probe.probes.iter().find(|(_, r)| r.result().is_some()) {
        return Judgement::fail(format!(
            "{} was answered with a result, but the server's `initialize` result declares no \
             `completions` capability; declare `\"completions\": {{}}` in `capabilities`",
            probe_what(target.as_ref())
        ))
        .with(&s.init.exchange)
        .reply(reply);
    }
    let j = Judgement::pass(format!(
        "none of {} `completion/complete` request(s) ({}) got a result",
        probe.probes.len(),
        probe
            .probes
            .iter()
            .map(|(t, r)| format!("{}: {}", probe_what(t.as_ref()), r.describe()))
            .take(MAX_NAMED)
            .collect::<Vec<_>>()
            .join("; ")
    ));
    probe.probes.iter().fold(j, |j, (_, r)| j.reply(r))
}

async fn method_not_found(s: &Session) -> Judgement {
    if s.advertises("completions") {
        return Judgement::skip("not applicable: the server declares `completions`");
    }
    let probe = undeclared_probe(s).await;
    let judged = probe
        .probes
        .iter()
        .map(|(target, reply)| {
            let what = probe_what(target.as_ref());
            match reply.error_code() {
                Some(-32601) => Judgement::pass(format!("{what} got -32601")).reply(reply),
                Some(code) => Judgement::fail(format!(
                    "{what} was answered with error {code}, not -32601, although the server \
                     declares no `completions` capability"
                ))
                .reply(reply),
                None if reply.result().is_some() => Judgement::fail(format!(
                    "{what} was answered with a result, not -32601, although the server declares \
                     no `completions` capability"
                ))
                .reply(reply),
                None => Judgement::skip(format!(
                    "not verified: {what} was answered {}",
                    reply.describe()
                ))
                .reply(reply),
            }
        })
        .collect();
    super::session::worst_of(judged)
}

/// What is wrong with a `CompleteResult`, if anything.
fn result_problems(result: &Value) -> Vec<String> {
    let Some(completion) = result.get("completion").and_then(Value::as_object) else {
        return vec!["the result has no `completion` object".into()];
    };
    let mut problems = Vec::new();
    match completion.get("values") {
        Some(Value::Array(values)) => {
            if values.len() > MAX_VALUES {
                problems.push(format!(
                    "`completion.values` holds {} suggestions (at most {MAX_VALUES})",
                    values.len()
                ));
            }
            if let Some(bad) = values.iter().find(|v| !v.is_string()) {
                problems.push(format!(
                    "`completion.values` holds {}, not a string",
                    clip(&bad.to_string(), 40)
                ));
            }
        }
        Some(other) => problems.push(format!(
            "`completion.values` is {}, not an array",
            clip(&other.to_string(), 40)
        )),
        None => problems.push("`completion` has no `values` array".into()),
    }
    if let Some(total) = completion.get("total")
        && !total.is_number()
    {
        problems.push(format!(
            "`completion.total` is {}, not a number",
            clip(&total.to_string(), 40)
        ));
    }
    if let Some(more) = completion.get("hasMore")
        && !more.is_boolean()
    {
        problems.push(format!(
            "`completion.hasMore` is {}, not a boolean",
            clip(&more.to_string(), 40)
        ));
    }
    problems
}

async fn result(s: &Session) -> Judgement {
    let targets = targets(s).await;
    if targets.0.is_empty() {
        return Judgement::skip(
            "not applicable: the server lists no prompt argument or resource template variable \
             to ask completions for",
        );
    }
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    let mut evidence = Vec::new();
    let mut judged = 0;
    let mut seen = Vec::new();
    for target in targets.0.iter().take(MAX_REFERENCES) {
        let reply = s.main.request("completion/complete", target.params()).await;
        // An error is no `CompleteResult` to judge: a server may have nothing
        // to complete for an argument, and the row judges results only.
        let Some(result) = reply.result() else {
            unjudged.push(format!(
                "the {} was answered {}",
                target.describe(),
                reply.describe()
            ));
            continue;
        };
        judged += 1;
        seen.push(reply.clone());
        let found = result_problems(result);
        if !found.is_empty() {
            problems.push(format!(
                "for the {}: {}",
                target.describe(),
                found.join(", ")
            ));
            evidence.push(reply);
        }
    }
    if judged == 0 {
        return Judgement::skip(format!(
            "not verified: no completion request was answered with a result ({})",
            some(&unjudged)
        ));
    }
    if !problems.is_empty() {
        return evidence
            .iter()
            .fold(Judgement::fail(some(&problems)), Judgement::reply);
    }
    let note = if unjudged.is_empty() {
        String::new()
    } else {
        format!(" (not judged: {})", some(&unjudged))
    };
    seen.iter().fold(
        Judgement::pass(format!(
            "{judged} completion result(s) hold at most {MAX_VALUES} string values, with \
             `total` and `hasMore` typed{note}"
        )),
        Judgement::reply,
    )
}

/// How one `completion/complete` CPL-004 sent was answered: -32602
/// passes; another code or a result fails (the rule's outcome, a warning);
/// no JSON-RPC answer is not verified.
fn judge_invalid(reply: &Reply, what: &str) -> Judgement {
    match reply.error_code() {
        Some(-32602) => Judgement::pass(format!("{what} got -32602")).reply(reply),
        Some(code) => Judgement::fail(format!("{what} was answered with error {code}, not -32602"))
            .reply(reply),
        None if reply.result().is_some() => {
            let empty = reply
                .result()
                .and_then(|r| r.pointer("/completion/values"))
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty);
            let shape = if empty {
                "a result with no suggestions"
            } else {
                "a result"
            };
            Judgement::fail(format!(
                "{what} was answered with {shape}, not error -32602 (invalid params)"
            ))
            .reply(reply)
        }
        None => Judgement::skip(format!(
            "not verified: {what} was answered {}",
            reply.describe()
        ))
        .reply(reply),
    }
}

async fn unknown_prompt(s: &Session) -> Judgement {
    let name = unknown_prompt_name();
    let mut probes = vec![(
        json!({"ref": {"type": "ref/prompt", "name": name},
               "argument": {"name": "protocheck", "value": ""}}),
        format!("`completion/complete` for the unknown prompt `{name}`"),
    )];
    // Requests missing what `CompleteRequest` requires, on a reference the
    // server lists (a prompt argument first), so that only the missing
    // member is wrong.
    let listed = targets(s).await;
    if let Some(target) = listed.0.first() {
        let on = target.describe();
        probes.push((
            json!({"ref": target.reference}),
            format!("`completion/complete` for {on} without `argument`"),
        ));
        probes.push((
            json!({"argument": {"name": target.argument, "value": ""}}),
            format!(
                "`completion/complete` without `ref` (argument {})",
                quoted(&target.argument)
            ),
        ));
    }
    let sends = probes.iter().map(|(params, what)| async move {
        let reply = s.main.request("completion/complete", params.clone()).await;
        judge_invalid(&reply, what)
    });
    let judged = futures::future::join_all(sends).await;
    let sent = judged.len();
    let mut j = super::session::worst_of(judged);
    if j.kind == Kind::Pass && sent == 1 {
        j.message = format!(
            "{}; the server lists no prompt argument or template variable, so no request \
             missing a required member could name a reference it knows",
            j.message
        );
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables_are_read_from_every_expression() {
        assert_eq!(template_variables("ref://docs/{name}"), vec!["name"]);
        assert_eq!(
            template_variables("x://{+base}/{id,rev:3}{?q*}"),
            vec!["base", "id", "rev", "q"]
        );
        assert!(template_variables("x://plain/{unclosed").is_empty());
    }

    #[test]
    fn completion_results_are_judged_by_shape() {
        assert!(
            result_problems(
                &json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}})
            )
            .is_empty()
        );
        let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        assert!(!result_problems(&json!({"completion": {"values": many}})).is_empty());
        assert!(!result_problems(&json!({"completion": {"values": [1]}})).is_empty());
        assert!(
            !result_problems(&json!({"completion": {"values": [], "hasMore": "no"}})).is_empty()
        );
        assert!(!result_problems(&json!({})).is_empty());
    }
}
