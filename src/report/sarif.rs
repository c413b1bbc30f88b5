//! SARIF 2.1.0: one run whose driver lists the rules of every finding, and
//! one result per failing (`error`) or warning (`warning`) finding.
//!
//! A network target has no source file, so a result's location is the
//! target itself: `physicalLocation.artifactLocation.uri` is its URL (a
//! `stdio:` target, which has none, gets a logical location instead). The
//! first exchange of the evidence goes into the result's `webRequest` and
//! `webResponse`, which SARIF defines for exactly this. A failure the gate's
//! baseline expects carries an external, accepted suppression; stale
//! baseline entries and the gate's verdict are notifications of the invocation.

use super::{INFORMATION_URI, Report, ReportFinding, keyword};
use crate::suite::{Exchange, Outcome};
use serde_json::{Map, Value, json};

/// The SARIF version written.
pub const VERSION: &str = "2.1.0";
/// The schema a SARIF 2.1.0 log names.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// Characters of a body copied into `webRequest`/`webResponse`.
const BODY_CHARS: usize = 4096;

fn level_of(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Fail => "error",
        Outcome::Warn => "warning",
        Outcome::Info => "note",
        Outcome::Pass | Outcome::Skip => "none",
    }
}

/// The SARIF log of `report`.
pub fn render(report: &Report) -> Value {
    let mut rule_ids: Vec<&str> = Vec::new();
    let mut rules: Vec<Value> = Vec::new();
    for rf in &report.findings {
        if !rule_ids.contains(&rf.finding.rule_id.as_str()) {
            rule_ids.push(&rf.finding.rule_id);
            rules.push(descriptor(rf));
        }
    }
    let location = location(&report.target.url);
    let gate = report.gate.as_ref();
    let results: Vec<Value> = report
        .findings
        .iter()
        .filter(|rf| matches!(rf.finding.outcome, Outcome::Fail | Outcome::Warn))
        .map(|rf| {
            let f = &rf.finding;
            let index = rule_ids
                .iter()
                .position(|id| *id == f.rule_id)
                .unwrap_or_default();
            let mut result = json!({
                "ruleId": f.rule_id,
                "ruleIndex": index,
                "level": level_of(f.outcome),
                "message": {"text": text_or_placeholder(&f.message)},
                "locations": [location.clone()],
            });
            if let Some(x) = f.evidence.first() {
                add_exchange(&mut result, x);
            }
            if gate.is_some_and(|g| g.expected_failures.contains(&f.rule_id)) {
                result["suppressions"] = json!([{
                    "kind": "external",
                    "status": "accepted",
                    "justification": "listed in the expected-failures baseline",
                }]);
            }
            result
        })
        .collect();

    let mut notifications: Vec<Value> = Vec::new();
    if let Some(e) = &report.error {
        notifications.push(json!({"level": "error", "message": {"text": text_or_placeholder(e)}}));
    }
    let mut config_notes: Vec<Value> = Vec::new();
    if let Some(g) = gate {
        for id in &g.stale {
            config_notes.push(json!({
                "level": "error",
                "message": {"text": format!("{id} is listed in the expected-failures baseline but no longer fails; remove it from the list")},
            }));
        }
    }
    let mut invocation = json!({
        "executionSuccessful": report.error.is_none(),
    });
    if !notifications.is_empty() {
        invocation["toolExecutionNotifications"] = Value::Array(notifications);
    }
    if !config_notes.is_empty() {
        invocation["toolConfigurationNotifications"] = Value::Array(config_notes);
    }
    if let Some(run) = &report.run {
        invocation["startTimeUtc"] = json!(run.started_at.as_deref().unwrap_or(&run.created_at));
        if let Some(end) = &run.finished_at {
            invocation["endTimeUtc"] = json!(end);
        }
    }

    let mut properties = Map::new();
    properties.insert("target".into(), json!(report.target.url));
    if let Some(v) = &report.verdict {
        let mut verdict = json!({"summary": v.summary, "passed": v.passed, "suite": v.suite, "suite_version": v.suite_version, "spec_revision": v.spec_revision});
        // A run that judged several MCP revisions: each one's verdict.
        if !v.revisions().is_empty() {
            verdict["revisions"] = json!(v.revisions());
        }
        properties.insert("verdict".into(), verdict);
    }
    if let Some(run) = &report.run {
        let mut shown = json!({"id": run.id, "status": run.status});
        if let Some(note) = run.credentials_note() {
            shown["credentials"] = json!(note);
        }
        properties.insert("run".into(), shown);
    }
    if let Some(g) = gate {
        properties.insert("gate".into(), json!(g));
    }

    json!({
        "version": VERSION,
        "$schema": SCHEMA_URI,
        "runs": [{
            "tool": {"driver": {
                "name": report.generator.name,
                "version": report.generator.version,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }},
            "invocations": [invocation],
            "results": results,
            "properties": properties,
        }],
    })
}

/// A SARIF message's `text` must say something.
fn text_or_placeholder(s: &str) -> String {
    if s.trim().is_empty() {
        "(no message)".to_owned()
    } else {
        s.to_owned()
    }
}

fn descriptor(rf: &ReportFinding) -> Value {
    let id = &rf.finding.rule_id;
    let mut d = json!({"id": id, "name": id});
    if let Some(rule) = &rf.rule {
        d["shortDescription"] = json!({"text": text_or_placeholder(&rule.title)});
        d["fullDescription"] = json!({
            "text": format!("{} ({}): {}. Spec: {}", id, keyword(rule.level), rule.title, rule.spec_ref),
        });
        d["defaultConfiguration"] = json!({"level": level_of(rule.severity)});
        // The rule's page when a service is known, else the spec's text.
        if let Some(url) = rule
            .page
            .as_deref()
            .or(rule.spec_url.as_deref())
            .filter(|u| is_absolute_uri(u))
        {
            d["helpUri"] = json!(url);
        }
        if let Some(help) = crate::suite::index::rule(id)
            .map(|r| r.help)
            .filter(|h| h.is_written())
        {
            d["help"] = json!({
                "text": format!(
                    "How protocheck probes it: {}\n\nWhat a failure usually means: {}\n\nHow to fix it: {}",
                    help.probe, help.failure, help.fix
                ),
                "markdown": format!(
                    "**How protocheck probes it.** {}\n\n**What a failure usually means.** {}\n\n**How to fix it.** {}",
                    help.probe, help.failure, help.fix
                ),
            });
        }
        d["properties"] = json!({
            "tags": [keyword(rule.level), rule.group],
            "spec_ref": rule.spec_ref,
        });
    }
    d
}

fn is_absolute_uri(s: &str) -> bool {
    url::Url::parse(s).is_ok()
}

/// Where a result is: the target's URL, or a logical location for stdio.
fn location(target: &str) -> Value {
    match url::Url::parse(target) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {
            json!({"physicalLocation": {"artifactLocation": {"uri": u.as_str()}}})
        }
        _ => json!({"logicalLocations": [{"fullyQualifiedName": target, "kind": "resource"}]}),
    }
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(BODY_CHARS) {
        Some((at, _)) => s[..at].to_owned(),
        None => s.to_owned(),
    }
}

/// Headers as SARIF wants them: one string per name (repeats joined).
fn headers(pairs: &[(String, String)]) -> Map<String, Value> {
    let mut map = Map::new();
    for (k, v) in pairs {
        let entry = map
            .entry(k.to_ascii_lowercase())
            .or_insert_with(|| Value::String(String::new()));
        if let Value::String(s) = entry {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(v);
        }
    }
    map
}

fn add_exchange(result: &mut Value, x: &Exchange) {
    let mut request = json!({});
    match x.request.line.split_once(' ') {
        Some((method, target)) if method.chars().all(|c| c.is_ascii_uppercase()) => {
            request["protocol"] = json!("HTTP");
            request["method"] = json!(method);
            request["target"] = json!(target);
        }
        _ => request["target"] = json!(x.request.line),
    }
    if !x.request.headers.is_empty() {
        request["headers"] = Value::Object(headers(&x.request.headers));
    }
    if !x.request.body.is_empty() {
        request["body"] = json!({"text": clip(&x.request.body)});
    }
    result["webRequest"] = request;
    let mut response = json!({});
    match &x.response {
        Some(r) => {
            if let Some(status) = r.status {
                response["statusCode"] = json!(status);
            }
            if !r.headers.is_empty() {
                response["headers"] = Value::Object(headers(&r.headers));
            }
            if !r.body.is_empty() {
                response["body"] = json!({"text": clip(&r.body)});
            }
        }
        None => {
            response["noResponseReceived"] = json!(true);
            if let Some(e) = &x.error {
                response["reasonPhrase"] = json!(clip(e));
            }
        }
    }
    result["webResponse"] = response;
}
