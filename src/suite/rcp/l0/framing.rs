//! JSON-RPC 2.0 framing (spec §4, §11, §14.1 rule 5): parse errors, batches,
//! id echo and well-formed replies, the last three judged over every reply of
//! the run.

use super::*;

pub const PARSE_ERROR: Rule = must(
    "RCP-L0-022",
    "an unparseable frame gets -32700 with id null",
    "RCP/1 §4, §12, §5 (HTTP 400)",
)
.help(
    "Near the end of the run, protocheck sends a frame cut off mid-object, `{\"jsonrpc\": \
     \"2.0\", \"method\": \"ping\", \"params\": {\"nonce\": `, with nothing after it, then a \
     line that is not JSON at all. It expects error -32700 with `id: null` for each; over HTTP, status 400 with or without a JSON-RPC body, or 200 \
     with the -32700 body, passes too.",
    "The server answers -32600 or -32603 instead of -32700, puts a guessed `id` in the error, \
     closes stdout or crashes on the bad line, or, over HTTP, returns a 500 or a framework's \
     error page.",
    "Parse each frame inside an error handler and, when JSON parsing fails, reply `{\"jsonrpc\": \
     \"2.0\", \"id\": null, \"error\": {\"code\": -32700, \"message\": \"Parse error\"}}`, then \
     keep reading; over HTTP send it with status 400 or 200.",
);
pub const NUMERIC_ID_ECHO: Rule = must(
    "RCP-L0-024",
    "numeric request ids are echoed with the same type and value",
    "RCP/1 §14.1(5), §4.2",
)
.help(
    "At the end of the run protocheck reads every reply to a request sent with a numeric id \
     (batches aside), including a `ping` sent with id 9007199254740991 (2^53 − 1), and checks \
     that each reply's `id` has the same JSON type and value.",
    "The server narrows ids to 32-bit integers, which mangles 9007199254740991, turns numeric ids \
     into strings, or replies with `id: null` or no `id` when a handler fails.",
    "Keep the request's `id` as the JSON value it arrived as and copy it into the response \
     untouched, on errors too; if you must type it, use a string-or-number union with 64-bit \
     integers.",
);
pub const STRING_ID_ECHO: Rule = must(
    "RCP-L0-025",
    "string request ids are echoed with the same type and value",
    "RCP/1 §14.1(5), §4.2",
)
.help(
    "At the end of the run protocheck reads every reply to a request sent with a string id \
     (batches aside), including an `info` sent with id \"017\", each advertised read-only \
     capability method sent with ids \"018\", \"019\", … (RCP-L0-016's probe), and the repeated \
     `initialize`s with ids \"protocheck-reinit\" and \"protocheck-reinit-differing\", and checks \
     that each reply's `id` is the same string.",
    "The server converts ids to numbers (\"017\" becomes 17), assumes every id is an integer and \
     cannot parse a string one, or replies with `id: null` when it refuses a request.",
    "Treat `id` as an opaque JSON value: keep it as received and echo it verbatim in the result \
     or error response, never parsing or re-encoding it; a string-or-number type keeps both kinds \
     intact.",
);
pub const WELL_FORMED: Rule = must(
    "RCP-L0-026",
    "every reply is well-formed JSON-RPC 2.0",
    "RCP/1 §14.1(5), §4",
)
.help(
    "At the end of the run protocheck reads every reply it received (each member of a batch reply \
     on its own) and checks it is a JSON object with `\"jsonrpc\": \"2.0\"`, exactly one of \
     `result` (an object) or `error` (integer `code`, string `message`), and an `id` (null \
     allowed on errors only).",
    "The server omits `jsonrpc`, sends both `result` and `error` (often `\"error\": null` on \
     success), returns a bare value such as `true` or an array as `result`, or an error without \
     `message`. Over HTTP, a 2xx reply whose body is not JSON fails too.",
    "Build every response in one place, as `{\"jsonrpc\": \"2.0\", \"id\": …, \"result\": {…}}` \
     or `{\"jsonrpc\": \"2.0\", \"id\": …, \"error\": {\"code\": …, \"message\": …}}`, leaving \
     the other member out rather than null, and wrap a non-object result in an object.",
);
pub const BATCH: Rule = must(
    "RCP-L0-030",
    "a batch gets one reply per request and none for its notifications",
    "RCP/1 §11; protocheck decision 10",
)
.help(
    "protocheck sends a batch of three frames, `ping` with one id, an `info` notification and \
     `ping` with another id, and expects an array of exactly two replies, one per id, both \
     results. It then sends two batches of a `ping` and a malformed member \
     (the number 1; an object without `method`), each of which must get the `ping`'s result and \
     one -32600 entry with `id: null` (or the object's id), and a batch of two \
     notifications only (`info` and `ping`), which must produce no output; over HTTP a batch is \
     posted to its first member's path.",
    "The server does not support batches (it answers -32600 or handles only the first frame), \
     answers the notification inside the batch, drops a malformed member silently or fails the \
     whole batch for it, or returns an empty array `[]` or `null` for the notifications-only \
     batch instead of nothing.",
    "When a frame is an array, handle each member, collect the responses to the members that have \
     an `id` and a -32600 entry with `id: null` for each member that is not a request object, and \
     return them as one array; when there are none, write nothing at all (over HTTP \
     204 or an empty 200/202).",
);
pub const EMPTY_BATCH: Rule = must(
    "RCP-L0-031",
    "an empty batch gets a single -32600 with id null",
    "RCP/1 §11, §12",
)
.help(
    "protocheck sends an empty batch, `[]`, and expects a single error object, not an array, with \
     code -32600 and `id: null`; over HTTP, status 400 without a JSON-RPC body passes too.",
    "The server returns an empty array `[]`, returns nothing as it would for a batch of \
     notifications, wraps the error in an array, or answers -32700 or -32602 instead of -32600.",
    "Before processing a batch, check it has members; for `[]` reply with one object, \
     `{\"jsonrpc\": \"2.0\", \"id\": null, \"error\": {\"code\": -32600, \"message\": \"Invalid \
     Request\"}}`.",
);

/// The malformed batch members of RCP-L0-030, in the order sent. A member
/// whose `jsonrpc` is not "2.0" is not among them: the panel's servers, on the
/// published SDK, serve it, and the RCP text names no check of the version.
const MALFORMED_MEMBERS: [&str; 2] = ["the number 1", "an object without `method`"];

/// The unparseable frames of RCP-L0-022: JSON cut off mid-object, with no id
/// the server could recover, and a line that is not JSON at all.
const UNPARSEABLE: [(&str, &str); 2] = [
    (
        "a `ping` frame cut off mid-object",
        r#"{"jsonrpc": "2.0", "method": "ping", "params": {"nonce": "#,
    ),
    (
        "a line that is not JSON at all",
        "protocheck: this line is not JSON",
    ),
];

impl Conversation<'_> {
    pub(super) async fn parse_error(&mut self) -> Result<(), EngineError> {
        let rule = &PARSE_ERROR;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let mut answered = Vec::new();
        let mut problems = Vec::new();
        for (what, body) in UNPARSEABLE {
            if let Some(reason) = self.gone() {
                problems.push(format!("{what} was not sent: {reason}"));
                break;
            }
            let sent = self.client.send_raw("ping", body).await;
            let sent = self.sent(rule, sent)?;
            check.saw(&sent);
            let verdict = match &sent {
                Err(_) => Err(outcome_words(&sent)),
                Ok(reply) => judge_parse_error(reply),
            };
            match verdict {
                Ok(how) => answered.push(format!("{what} was answered with {how}")),
                Err(got) => problems.push(format!("{what} {got}")),
            }
            // No answer at all fails the rule already; the next frame would
            // only wait as long again.
            if sent.is_err() {
                break;
            }
        }
        let finding = check.verdict(
            &problems,
            answered.join("; "),
            "a frame that is not valid JSON gets error -32700 (ParseError) with `id: null` (over HTTP, status 400 \
             or 200) (§4, §12, §5)",
        );
        self.emit(finding).await
    }

    /// A batch of two pings around a notification, then a batch of notifications only.
    /// `earlier` holds the problems the other batches of RCP-L0-030 found
    /// (see `batches`), with their exchanges.
    pub(super) async fn batch(
        &mut self,
        earlier: Vec<String>,
        evidence: Vec<Exchange>,
    ) -> Result<(), EngineError> {
        let rule = &BATCH;
        if let Some(reason) = self.gone().filter(|_| earlier.is_empty()) {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        for exchange in evidence {
            check.keep(exchange);
        }
        let mut problems = earlier;
        if self.gone().is_some() {
            return self
                .emit(check.finding(rule.on_failure, format!("{} (§11)", problems.join("; "))))
                .await;
        }
        let (first, second) = (self.client.next_id(), self.client.next_id());
        let frames = vec![
            json!({"jsonrpc": "2.0", "id": first, "method": "ping", "params": {"nonce": 1}}),
            json!({"jsonrpc": "2.0", "method": "info", "params": {}}),
            json!({"jsonrpc": "2.0", "id": second, "method": "ping", "params": {"nonce": 2}}),
        ];
        let sent = self.client.send_batch("ping", frames).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        match sent.as_ref().ok().and_then(Reply::json) {
            Some(Value::Array(members)) => {
                let ids: Vec<&Value> = members.iter().filter_map(|m| m.get("id")).collect();
                // Matched loosely (7 and "7" pair up): exact echo is RCP-L0-024/025's
                // concern, this rule's is one reply per request.
                let answered = |id: &Value| ids.iter().filter(|got| loose_id(id, got)).count();
                if members.len() != 2 || answered(&first) != 1 || answered(&second) != 1 {
                    let shown: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
                    problems.push(format!(
                        "a batch of two requests (ids {first} and {second}) and one notification was answered \
                         with {} entries (ids: [{}]); it needs exactly one reply per request and none for the \
                         notification",
                        members.len(),
                        shown.join(", ")
                    ));
                }
                let failed: Vec<String> =
                    members.iter().filter(|m| m.get("result").is_none()).map(Value::to_string).collect();
                if !failed.is_empty() {
                    problems.push(format!(
                        "the batched `ping`s were not both answered with results: {}",
                        crate::transport::excerpt(failed.join(", ").as_bytes(), 300).0
                    ));
                }
            }
            _ => problems.push(format!(
                "a batch of two requests and one notification {}; a batch MUST get back an array with one reply \
                 per request",
                outcome_words(&sent)
            )),
        }
        if self.gone().is_none() {
            self.batch_with_malformed_member(&mut check, &mut problems)
                .await?;
        }
        if self.gone().is_none() {
            let only_notifications = json!([
                {"jsonrpc": "2.0", "method": "info", "params": {}},
                {"jsonrpc": "2.0", "method": "ping", "params": {}},
            ]);
            match self
                .client
                .send_unanswered("info", only_notifications.to_string())
                .await
            {
                Ok(Notified::Silent(exchange, _)) => check.evidence.push(exchange),
                Ok(Notified::Answered(reply)) => {
                    problems.push(format!(
                        "a batch of notifications only was answered with {}; it MUST produce no output at all",
                        reply.describe()
                    ));
                    check.evidence.push(reply.exchange);
                }
                Err(failure) => {
                    problems.push(format!(
                        "a batch of notifications only got no HTTP answer ({})",
                        failure.error
                    ));
                    check.evidence.push(failure.exchange.clone());
                    let _ = self.sent(rule, Err(failure))?;
                }
            }
        }
        let finding = if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                "a batch got one reply per request and none for its notification; a batch of notifications got none",
            )
        } else {
            check.finding(rule.on_failure, format!("{} (§11)", problems.join("; ")))
        };
        self.emit(finding).await
    }

    /// §11: "A malformed member produces a `-32600` entry with `id:null`; the
    /// other members are still processed." One batch per kind of malformed
    /// member, each beside a `ping`: a member that is not a request object at
    /// all (the number 1), and an object without `method`. The latter carries
    /// an id, which the entry may echo instead of `null` (JSON-RPC 2.0 lets a
    /// server echo an id it could read).
    async fn batch_with_malformed_member(
        &mut self,
        check: &mut Check,
        problems: &mut Vec<String>,
    ) -> Result<(), EngineError> {
        let rule = &BATCH;
        for (n, what) in MALFORMED_MEMBERS.iter().enumerate() {
            if self.gone().is_some() {
                break;
            }
            let id = self.client.next_id();
            let member_id = self.client.next_id();
            let malformed = match n {
                0 => json!(1),
                _ => json!({"jsonrpc": "2.0", "id": member_id, "params": {}}),
            };
            let nonce = 3 + n as u64;
            let frames = vec![
                json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"nonce": nonce}}),
                malformed.clone(),
            ];
            let member = if n == 0 {
                String::new()
            } else {
                format!(" {malformed}")
            };
            let sent = self.client.send_batch("ping", frames).await;
            let sent = self.sent(rule, sent)?;
            check.saw(&sent);
            let Some(Value::Array(members)) = sent.as_ref().ok().and_then(Reply::json) else {
                problems.push(format!(
                    "a batch of a `ping` (id {id}) and a malformed member ({what}){member} {}; it needs an \
                     array with the `ping`'s result and a -32600 entry for the malformed member",
                    outcome_words(&sent)
                ));
                continue;
            };
            let pinged = members
                .iter()
                .filter(|m| m.get("id").is_some_and(|got| loose_id(&id, got)))
                .filter(|m| m.get("result").is_some())
                .count();
            let refused = members
                .iter()
                .filter(|m| {
                    m.get("id")
                        .is_some_and(|got| got.is_null() || (n > 0 && loose_id(&member_id, got)))
                        && m.pointer("/error/code").and_then(Value::as_i64) == Some(-32600)
                })
                .count();
            if members.len() != 2 || pinged != 1 || refused != 1 {
                let shown: Vec<String> = members.iter().map(Value::to_string).collect();
                problems.push(format!(
                    "a batch of a `ping` (id {id}, nonce {nonce}) and a malformed member ({what}){member} was \
                     answered with [{}]; it needs exactly the `ping`'s result and one -32600 \
                     entry (`id: null`{}) for the malformed member, the other members still processed",
                    crate::transport::excerpt(shown.join(", ").as_bytes(), 300).0,
                    if n > 0 { ", or its id" } else { "" }
                ));
            }
        }
        Ok(())
    }

    pub(super) async fn empty_batch(&mut self) -> Result<(), EngineError> {
        let rule = &EMPTY_BATCH;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.client.send_batch("ping", Vec::new()).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        let verdict = match &sent {
            Err(_) => Err(outcome_words(&sent)),
            Ok(reply) => judge_empty_batch(reply),
        };
        let finding = match verdict {
            Ok(how) => check.finding(Outcome::Pass, format!("an empty batch was answered with {how}")),
            Err(what) => check.finding(
                rule.on_failure,
                format!(
                    "an empty batch `[]` {what}; the spec requires a single, non-array error -32600 \
                     (InvalidRequest) with `id: null` (§11)"
                ),
            ),
        };
        self.emit(finding).await
    }

    /// Every reply to a request whose id has this type must echo it (§4.2).
    pub(super) async fn id_echo(
        &mut self,
        rule: &'static Rule,
        kind: fn(&Value) -> bool,
        label: &str,
    ) -> Result<(), EngineError> {
        let mut check = Check::new(rule);
        let mut judged = 0;
        let mut problems = Vec::new();
        for reply in self.client.replies() {
            // A batch's entries are paired with its members by id (loosely,
            // as RCP-L0-030 pairs them), then judged for the exact echo.
            if reply.batch && reply.framed {
                let (n, found) = super::batches::batch_id_problems(reply, kind);
                judged += n;
                if !found.is_empty() && problems.len() < 5 {
                    check.evidence.push(reply.exchange.clone());
                }
                problems.extend(found);
                continue;
            }
            let Some(sent) = reply
                .request_id
                .as_ref()
                .filter(|id| kind(id) && !reply.batch)
            else {
                continue;
            };
            let Some(obj) = reply
                .json()
                .and_then(Value::as_object)
                .filter(|_| reply.framed)
            else {
                continue;
            };
            judged += 1;
            let problem = match obj.get("id") {
                Some(got) if same_id(sent, got) => continue,
                Some(got) => {
                    format!(
                        "the reply to `{}` with id {sent} carried {}",
                        reply.method,
                        show(got)
                    )
                }
                None => format!("the reply to `{}` with id {sent} had no `id`", reply.method),
            };
            if problems.len() < 5 {
                check.evidence.push(reply.exchange.clone());
            }
            problems.push(problem);
        }
        let finding = if judged == 0 {
            check.finding(
                Outcome::Skip,
                format!("no JSON reply to a request with a {label} id was received"),
            )
        } else if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("all {judged} replies to {label} ids echoed them unchanged"),
            )
        } else {
            let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
            check.finding(
                rule.on_failure,
                format!(
                    "{} of {judged} replies to {label} ids did not echo the id unchanged: {}; the server MUST echo \
                     `id` with the same JSON type and value (§14.1 rule 5, §4.2)",
                    problems.len(),
                    shown.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn well_formed(&mut self) -> Result<(), EngineError> {
        let rule = &WELL_FORMED;
        let mut check = Check::new(rule);
        let mut judged = 0;
        let mut problems = Vec::new();
        for reply in self.client.replies().iter().filter(|r| r.framed) {
            let Some(value) = reply.json() else {
                judged += 1;
                if problems.len() < 5 {
                    check.evidence.push(reply.exchange.clone());
                }
                problems.push(format!("the reply to `{}` is not JSON", reply.method));
                continue;
            };
            // A batch's reply is an array of replies, judged one by one (§11).
            let frames = match value {
                Value::Array(members) if reply.batch => members.iter().collect(),
                single => vec![single],
            };
            judged += frames.len();
            let found: Vec<String> = frames.into_iter().flat_map(frame_problems).collect();
            if found.is_empty() {
                continue;
            }
            if problems.len() < 5 {
                check.evidence.push(reply.exchange.clone());
            }
            let id = reply
                .request_id
                .as_ref()
                .map(|id| format!(" with id {id}"))
                .unwrap_or_default();
            problems.push(format!(
                "the reply to `{}`{id} {}",
                reply.method,
                found.join(", ")
            ));
        }
        let finding = if judged == 0 {
            check.finding(Outcome::Skip, "no reply was received")
        } else if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("all {judged} replies are well-formed JSON-RPC 2.0"),
            )
        } else {
            let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
            check.finding(
                rule.on_failure,
                format!(
                    "{} of {judged} replies are not well-formed JSON-RPC 2.0: {}; every reply MUST carry \
                     \"jsonrpc\": \"2.0\", the id, and exactly one of `result` (an object) or `error` \
                     (integer `code`, string `message`) (§14.1 rule 5, §4)",
                    problems.len(),
                    shown.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }
}

/// Over HTTP, spec §5 maps "body is not JSON" to status 400, and -32700 with a null
/// id is the JSON-RPC answer (§12). The two are read together: 400 with or without
/// a JSON-RPC body, or 200 with the -32700 body, all pass; a JSON-RPC body with
/// another code or a non-null id fails whatever the status.
fn judge_parse_error(reply: &Reply) -> Result<String, String> {
    let rpc_error = reply
        .json()
        .and_then(Value::as_object)
        .filter(|o| o.get("error").is_some_and(|e| e.get("code").is_some()));
    match (reply.status, rpc_error) {
        (status, Some(obj)) if status.is_none() || status == Some(200) || status == Some(400) => {
            let code = obj
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            match (code, obj.get("id")) {
                (Some(-32700), Some(Value::Null)) => Ok(format!(
                    "error -32700 and id null{}",
                    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
                )),
                (Some(-32700), Some(id)) => Err(format!(
                    "was answered with -32700 but with id {}; the id must be null when the frame could not be parsed",
                    show(id)
                )),
                (Some(-32700), None) => Err(
                    "was answered with -32700 but without an `id` member (it must be null)"
                        .to_owned(),
                ),
                _ => Err(format!("was answered with {}", reply.describe())),
            }
        }
        (Some(400), None) => Ok("HTTP 400 (spec §5: the body is not JSON)".to_owned()),
        _ => Err(format!("was answered with {}", reply.describe())),
    }
}

/// Read like the parse error: spec §5 maps "not a JSON-RPC request" to HTTP 400,
/// so 400 alone passes; a JSON-RPC body must be the single -32600 with id null.
fn judge_empty_batch(reply: &Reply) -> Result<String, String> {
    let status = reply.status;
    match reply.json() {
        Some(Value::Object(obj))
            if status.is_none() || status == Some(200) || status == Some(400) =>
        {
            let code = obj
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            match (code, obj.get("id")) {
                (Some(-32600), Some(Value::Null)) => Ok("error -32600 and id null".to_owned()),
                (Some(-32600), _) => {
                    Err("was answered with -32600 but without `id: null`".to_owned())
                }
                _ => Err(format!("was answered with {}", reply.describe())),
            }
        }
        Some(Value::Array(members)) => Err(format!(
            "was answered with an array of {} entries instead of a single error object",
            members.len()
        )),
        None if status == Some(400) => Ok("HTTP 400 (spec §5: not a JSON-RPC request)".to_owned()),
        _ => Err(format!("was answered with {}", reply.describe())),
    }
}

/// What makes a reply not well-formed JSON-RPC 2.0 (§4; schema `JsonRpcSuccess`
/// and `JsonRpcError`), in words.
fn frame_problems(value: &Value) -> Vec<String> {
    let Some(obj) = value.as_object() else {
        return vec!["is not a JSON object".to_owned()];
    };
    let mut problems = Vec::new();
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => problems.push(format!("has \"jsonrpc\": {}", show(other))),
        None => problems.push("has no `jsonrpc` member".to_owned()),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => problems.push("has both `result` and `error`".to_owned()),
        (None, None) => problems.push("has neither `result` nor `error`".to_owned()),
        (Some(result), None) => {
            if !result.is_object() {
                problems.push(format!(
                    "has a `result` that is not an object ({})",
                    show(result)
                ));
            }
            if !obj
                .get("id")
                .is_some_and(|id| id.is_string() || id.is_number())
            {
                problems.push("is a success without a string or number `id`".to_owned());
            }
        }
        (None, Some(error)) => {
            match error.get("code") {
                Some(code) if code.is_i64() => {}
                Some(code) => problems.push(format!(
                    "has an `error.code` that is not an integer ({})",
                    show(code)
                )),
                None => problems.push("has an `error` without `code`".to_owned()),
            }
            if !error.get("message").is_some_and(Value::is_string) {
                problems.push("has an `error` without a string `message`".to_owned());
            }
            if !obj
                .get("id")
                .is_some_and(|id| id.is_string() || id.is_number() || id.is_null())
            {
                problems.push("is an error without an `id` (null is allowed)".to_owned());
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: Option<u16>, body: &str) -> Reply {
        let body = match serde_json::from_str(body) {
            Ok(v) => crate::suite::rcp::client::Body::Json(v),
            Err(_) if body.is_empty() => crate::suite::rcp::client::Body::Empty,
            Err(_) => crate::suite::rcp::client::Body::NotJson,
        };
        Reply {
            method: "ping".into(),
            request_id: None,
            exchange: Exchange {
                request: crate::suite::RequestRecord {
                    line: "stdin".into(),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: None,
                error: None,
            },
            status,
            body,
            framed: true,
            batch: false,
            connection_note: None,
        }
    }

    #[test]
    fn parse_errors_accept_the_status_mapping_and_the_json_rpc_answer() {
        let rpc = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(Some(400), rpc)).is_ok());
        assert!(judge_parse_error(&reply(Some(200), rpc)).is_ok());
        assert!(judge_parse_error(&reply(None, rpc)).is_ok());
        assert!(judge_parse_error(&reply(Some(400), "")).is_ok());
        assert!(judge_parse_error(&reply(Some(400), "<html>bad</html>")).is_ok());
        let wrong = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(Some(400), wrong)).is_err());
        let with_id = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(None, with_id)).is_err());
        assert!(judge_parse_error(&reply(Some(500), rpc)).is_err());
        assert!(judge_parse_error(&reply(Some(200), "")).is_err());
    }

    #[test]
    fn frame_problems_name_what_is_wrong() {
        assert!(frame_problems(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_empty());
        assert!(
            frame_problems(
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "m"}})
            )
            .is_empty()
        );
        let both = frame_problems(&json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}));
        assert_eq!(both, ["has both `result` and `error`"]);
        let bad = frame_problems(&json!({"id": null, "result": 5}));
        assert_eq!(bad.len(), 3, "{bad:?}");
        let code = frame_problems(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1.5, "message": 3}}),
        );
        assert_eq!(code.len(), 2, "{code:?}");
    }
}
