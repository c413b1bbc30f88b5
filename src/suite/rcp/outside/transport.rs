//! Transport MUSTs (spec §5.1 stdio framing, §5.2 HTTP binding and status
//! mapping; protocheck decision 6 for notifications over HTTP).

use super::*;
use crate::suite::rcp::client::{SLOW_PAUSE, SPLIT_PAUSE};

pub const PATH_MATCHES_BODY: Rule = must(
    "RCP-OUT-001",
    "an HTTP path naming another method than the body is rejected with -32600",
    "RCP/1 §5.2",
)
.help(
    "Over HTTP, after the handshake, protocheck posts to `<base>/ping` a request whose body names \
     the method `info`; both are open methods, so only the mismatch can be refused. It expects \
     error -32600. The rule is skipped over stdio.",
    "The server dispatches on the path alone or on the body alone and answers the request \
     (usually with the `ping` or `info` result), or refuses it with another code or a bare HTTP \
     error. It is a MUST outside the levels: the level stands but the run fails.",
    "In the HTTP handler, compare the method in the path with the body's `method` before \
     dispatching, and when they differ answer `{\"code\": -32600}` (InvalidRequest) with status \
     200.",
);
pub const STDIO_FRAMING: Rule = must(
    "RCP-OUT-002",
    "stdio: blank lines and a frame split across writes (inside a character, or slowly) are tolerated",
    "RCP/1 §5.1",
)
.help(
    "Over stdio, protocheck writes three `ping`s, each after two blank lines and in parts: one \
     in two halves 50 ms apart; one whose nonce holds é, 東 and 🙂, in four writes 50 ms apart \
     that each end inside one of those characters; and one in four writes with a 120 ms pause \
     after each of the first three. Each must get exactly one answer echoing its nonce, and \
     nothing else on stdout. The rule is skipped over HTTP.",
    "The server parses each read as a whole message, so the first half fails to parse (an error \
     line, or a crash); it decodes each read as UTF-8 on its own, so a read ending inside a \
     character fails; it takes a pause as the end of a line; or it answers the blank lines with \
     parse errors. Reading fixed-size chunks instead of lines is the usual cause.",
    "Read stdin with a line reader that buffers bytes until `\\n` (such as `BufRead::lines` or \
     `readline`), decode the whole line as UTF-8, skip lines that are empty or whitespace only, and parse each complete line as \
     one message.",
);
pub const HTTP_NOTIFICATION_STATUS: Rule = must(
    "RCP-OUT-003",
    "HTTP: a notification gets 204 or an empty 2xx, not an error status or a body",
    "RCP/1 §5.2, §4.5; protocheck decision 6",
)
.help(
    "Over HTTP, protocheck reads the response to every notification it sent during the run (the \
     four L0 notification probes and the notifications-only batch): each must be 204 or a 2xx \
     with an empty body. A JSON-RPC body counts as an answer and is judged by the L0 notification \
     rules instead.",
    "The server answers notifications with 400, 404 or 405 because its router expects an `id`, \
     with a 500 because the handler returned nothing, or with 200 and a body that is not a \
     JSON-RPC message, such as `OK` or `null`.",
    "When the posted frame has no `id` (or a batch holds only notifications), process it and \
     return 204 No Content, or 200/202 with an empty body; never an error status or a placeholder \
     body.",
);
pub const HTTP_STATUS_200: Rule = must(
    "RCP-OUT-004",
    "HTTP: every JSON-RPC response, errors included, comes with status 200",
    "RCP/1 §5.2 (HTTP status mapping)",
)
.help(
    "Over HTTP, protocheck reads every reply of the run that carries a JSON-RPC `result` or \
     `error`, batch replies (arrays of responses) included, and checks its status is 200; only \
     -32700 and -32600 errors (every member of a batch reply) may come with 400.",
    "The server maps JSON-RPC errors to HTTP statuses, for example -32001 to 401 or 403, -32004 \
     to 404, -32602 to 400 or -32603 to 500, as REST-style frameworks and error middleware often \
     do by default.",
    "Return HTTP 200 for every response that carries a JSON-RPC body, errors included, and keep \
     other statuses for failures that never reached the JSON-RPC layer; use 400 only for a body \
     that is not JSON or not a JSON-RPC request.",
);

/// One way of writing a frame over stdio that a reader must take as one
/// message (spec §5.1).
struct Framing {
    what: &'static str,
    nonce: &'static str,
    /// Byte offsets into the frame where a write ends.
    cuts: fn(&str) -> Vec<usize>,
    pause: std::time::Duration,
}

/// The framings of RCP-OUT-002, each written after two blank lines: halves
/// cut at an ASCII byte; parts cut inside multi-byte UTF-8 characters (two,
/// three and four bytes long); a line that stalls several times before its
/// newline.
const FRAMINGS: [Framing; 3] = [
    Framing {
        what: "a `ping` after two blank lines, in two writes 50 ms apart",
        nonce: "protocheck-split",
        cuts: |frame| vec![frame.len() / 2],
        pause: SPLIT_PAUSE,
    },
    Framing {
        what: "a `ping` in four writes 50 ms apart, each of the first three ending inside a multi-byte UTF-8 \
               character (é, 東, 🙂)",
        nonce: "protocheck-split-é東🙂",
        cuts: inside_characters,
        pause: SPLIT_PAUSE,
    },
    Framing {
        what: "a `ping` in four writes with a 120 ms pause after each of the first three (a slow partial line)",
        nonce: "protocheck-slow-line",
        cuts: |frame| (1..4).map(|n| frame.len() * n / 4).collect(),
        pause: SLOW_PAUSE,
    },
];

/// One cut inside each multi-byte character of `frame`, one byte before its
/// end, so every read but the last ends on a partial character.
fn inside_characters(frame: &str) -> Vec<usize> {
    frame
        .char_indices()
        .filter(|(_, c)| c.len_utf8() > 1)
        .map(|(at, c)| at + c.len_utf8() - 1)
        .collect()
}

/// Error codes §5.2 lets travel with status 400: the body was not JSON, or not
/// a JSON-RPC request.
const STATUS_400_CODES: [i64; 2] = [-32700, -32600];

impl Conversation<'_> {
    pub(super) async fn path_matches_body(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &PATH_MATCHES_BODY;
        if !self.client.is_http() {
            return self.skip(rule, HTTP_ONLY).await;
        }
        if let Some(reason) = self.blocked(init) {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let id = self.client.next_id();
        // The body names `info`, the path `ping`: both open methods, so the
        // only reason to refuse is the mismatch itself.
        let sent = self.client.call_at("ping", id, "info", json!({})).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32600) {
            check.finding(
                Outcome::Pass,
                "`POST …/ping` with a body naming `info` was rejected with -32600",
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`POST …/ping` with a body naming `info` {}; the method in the path MUST match the body's, \
                     and a mismatch MUST get -32600 (§5.2)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    /// RCP-OUT-002: one `ping` per framing §5.1's reader must survive, each
    /// judged by its answer alone (the pauses only make the parts arrive in
    /// separate reads; no time decides a finding).
    pub(super) async fn stdio_framing(&mut self) -> Result<(), EngineError> {
        let rule = &STDIO_FRAMING;
        if self.client.is_http() {
            return self.skip(rule, STDIO_ONLY).await;
        }
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut passed = Vec::new();
        for framing in FRAMINGS {
            if let Some(reason) = self.gone() {
                problems.push(format!("{}: not sent, {reason}", framing.what));
                break;
            }
            let id = self.client.next_id();
            let split = self
                .client
                .call_split(
                    id,
                    "ping",
                    json!({"nonce": framing.nonce}),
                    framing.cuts,
                    framing.pause,
                )
                .await;
            match split {
                Ok((reply, strays)) => {
                    check.keep(reply.exchange.clone());
                    let echoed = reply
                        .result()
                        .and_then(|r| r.get("nonce"))
                        .is_some_and(|n| n == framing.nonce);
                    if echoed && strays.is_empty() {
                        passed.push(framing.what);
                        continue;
                    }
                    let strays: Vec<String> = strays
                        .iter()
                        .map(|s| crate::transport::excerpt(s.as_bytes(), 120).0)
                        .collect();
                    problems.push(format!(
                        "{} (nonce {}) was answered with {}{}",
                        framing.what,
                        show(&json!(framing.nonce)),
                        reply.describe(),
                        if strays.is_empty() {
                            String::new()
                        } else {
                            format!(", and the server also wrote: {}", strays.join(" | "))
                        }
                    ));
                }
                Err(failure) => {
                    check.keep(failure.exchange.clone());
                    let words = failure.error.to_string();
                    let _ = self.sent(rule, Err(failure))?;
                    problems.push(format!("{} got no answer ({words})", framing.what));
                }
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "each `ping` was answered once with its nonce echoed: {}",
                passed.join("; ")
            ),
            "a reader MUST ignore blank lines and buffer until the newline, never assume one message per read, and \
             take messages as UTF-8, whatever byte a read ends on (§5.1, §4.6)",
        );
        self.emit(finding).await
    }

    pub(super) async fn http_notification_status(&mut self) -> Result<(), EngineError> {
        let rule = &HTTP_NOTIFICATION_STATUS;
        if !self.client.is_http() {
            return self.skip(rule, HTTP_ONLY).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut judged: usize = 0;
        let mut answered: usize = 0;
        for exchange in self.client.notification_exchanges() {
            let Some(response) = &exchange.response else {
                continue;
            };
            judged += 1;
            let status = response.status.unwrap_or(0);
            let blank = response.body.trim().is_empty();
            if (200..300).contains(&status) && blank {
                continue;
            }
            // A JSON-RPC body is an answer, judged by the L0 notification rules.
            if serde_json::from_str::<Value>(&response.body)
                .is_ok_and(|v| v.is_object() || v.is_array())
            {
                answered += 1;
                continue;
            }
            check.keep(exchange.clone());
            problems.push(format!(
                "{} got HTTP {status}{}",
                exchange.request.line,
                if blank {
                    String::new()
                } else {
                    format!(
                        " with the body {}",
                        show(&json!(
                            crate::transport::excerpt(response.body.as_bytes(), 60).0
                        ))
                    )
                }
            ));
        }
        let finding = if judged == 0 {
            check.finding(Outcome::Skip, "no notification was sent over HTTP")
        } else {
            let silent = judged.saturating_sub(answered + problems.len());
            let pass = if answered == 0 {
                format!("all {judged} notifications sent over HTTP got 204 or an empty 2xx")
            } else {
                format!(
                    "{silent} of the {judged} notifications sent over HTTP got 204 or an empty 2xx; \
                     {answered} were answered with a JSON-RPC body, which the L0 notification rules \
                     judge"
                )
            };
            check.verdict(
                &problems,
                pass,
                "a notification is not answered; over HTTP that is 204 or an empty 200/202, and non-200 statuses \
                 are for transport failures the JSON-RPC layer never saw (§4.5, §5.2; decision 6)",
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn http_status_200(&mut self) -> Result<(), EngineError> {
        let rule = &HTTP_STATUS_200;
        if !self.client.is_http() {
            return self.skip(rule, HTTP_ONLY).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut judged: usize = 0;
        let mut with_400: usize = 0;
        let mut batches: usize = 0;
        for reply in self.client.replies() {
            let Some(status) = reply.status else { continue };
            // A batch's reply is an array of responses (§11): a well-formed
            // JSON-RPC body as much as a single one, so 200 too, unless every
            // member is an error §5.2 lets travel with 400.
            let codes: Vec<Option<i64>> = match reply.json() {
                Some(Value::Object(obj))
                    if obj.contains_key("result") || obj.contains_key("error") =>
                {
                    vec![reply.error_code()]
                }
                Some(Value::Array(members))
                    if !members.is_empty()
                        && members.iter().all(|m| {
                            m.as_object().is_some_and(|o| {
                                o.contains_key("result") || o.contains_key("error")
                            })
                        }) =>
                {
                    batches += 1;
                    members
                        .iter()
                        .map(|m| m.pointer("/error/code").and_then(Value::as_i64))
                        .collect()
                }
                _ => continue,
            };
            judged += 1;
            if status == 200 {
                continue;
            }
            if status == 400
                && codes
                    .iter()
                    .all(|c| c.is_some_and(|c| STATUS_400_CODES.contains(&c)))
            {
                with_400 += 1;
                continue;
            }
            check.keep(reply.exchange.clone());
            problems.push(format!(
                "the reply to `{}`{} ({}) came with HTTP {status}",
                reply.method,
                if reply.batch { " (a batch)" } else { "" },
                reply.describe()
            ));
        }
        let finding = if judged == 0 {
            check.finding(Outcome::Skip, "no JSON-RPC response was received over HTTP")
        } else {
            let pass = if with_400 == 0 {
                format!(
                    "all {judged} JSON-RPC responses ({batches} of them batch replies) came with HTTP 200"
                )
            } else {
                format!(
                    "{} of the {judged} JSON-RPC responses came with HTTP 200, and {with_400} \
                     (-32700 or -32600, for a body that is not a JSON-RPC request) with HTTP 400, \
                     as §5.2 maps them",
                    judged.saturating_sub(with_400 + problems.len())
                )
            };
            check.verdict(
                &problems,
                pass,
                "a well-formed JSON-RPC response, including one carrying an `error`, MUST be returned with HTTP 200 \
                 (§5.2)",
            )
        };
        self.emit(finding).await
    }
}
