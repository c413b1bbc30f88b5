//! LIF — lifecycle (basic/lifecycle): the `initialize` result, version
//! negotiation, `notifications/initialized`, and what a server does with a
//! request before `initialize`.

use super::client::{Awaiting, Connection, PROTOCOL_VERSION, Reply, Transport};
use super::rule::{INITIALIZE_ID, Mcp25Rule, spec};
use super::session::{Judgement, Kind, Session};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use futures::FutureExt;
use serde_json::{Value, json};

/// Versions no server supports: the answers show how the server negotiates.
const UNKNOWN_VERSIONS: &[&str] = &["1999-01-01", "protocheck-not-a-version"];

/// The first published revision of MCP: a version offered instead of an
/// unknown one is a revision from this one on.
const FIRST_REVISION: &str = "2024-11-05";

/// The longest a server is watched for requests before
/// `notifications/initialized`.
const EARLY_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);
/// The least it is watched. On stdio a `ping` sent after the `initialize`
/// answer is a barrier (what the server wrote on handling `initialize`
/// comes before its reply), and the watch runs on past that reply; over
/// HTTP a request would come on a GET stream, which no answer to a POST is
/// ordered with. Either way a server may send a request from work of its own
/// started by the handshake (the reference server's fault waits for a GET
/// stream, looking every 50 ms), and nothing in the protocol signals that it
/// will not, so a floor stays.
const EARLY_FLOOR: std::time::Duration = std::time::Duration::from_millis(200);

pub(crate) const INITIALIZE_RESULT: Mcp25Rule = Mcp25Rule::new(
    INITIALIZE_ID,
    "initialize is answered with protocolVersion, capabilities and serverInfo",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#initialization"),
    "LIF",
    |s| initialize_result(s).boxed(),
)
.says(
    "the server answers initialize with its protocol version, its capabilities and its \
     implementation information (serverInfo with a name and a version)",
)
.help(
    "The run opens with an `initialize` request for 2025-11-25 with protocheck's client \
     capabilities and clientInfo (over HTTP a POST with no session; over stdio the first \
     line the child reads); protocheck reads the result's `protocolVersion`, `capabilities` \
     and `serverInfo` with its `name` and `version`.",
    "The server answers `initialize` with an error, with no result, or with a result missing \
     one of the three fields (most often `serverInfo.version`), or over HTTP asks for \
     authorization. Every other rule needs an initialized session, so they are reported as \
     not verified.",
    "Answer `initialize` with a result carrying `protocolVersion`, a `capabilities` object \
     (empty when the server offers nothing) and `serverInfo` with both `name` and `version`; \
     SDKs fill these in from the server's constructor, so set a name and a version there.",
)
.requires(&[]);

pub(crate) const SAME_VERSION: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-002",
    "A request for 2025-11-25 is answered with 2025-11-25",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#version-negotiation"),
    "LIF",
    |s| same_version(s).boxed(),
)
.says("a server that supports the version the client asked for answers with that same version")
.help(
    "protocheck reads the `protocolVersion` the server answered the run's `initialize` for \
     2025-11-25 with. When it names another revision, protocheck looks at the `initialize` \
     requests it sends on new connections for the unknown versions `1999-01-01` and \
     `protocheck-not-a-version`: a server that offers 2025-11-25 there supports it.",
    "The server supports 2025-11-25 (it offers it for an unknown version) yet answered a request \
     for 2025-11-25 with another revision, most often because it always answers its own latest or \
     a hard-coded version instead of the supported one the client asked for.",
    "When the requested `protocolVersion` is one the server supports, answer with exactly that \
     string; fall back to another supported revision only when the requested one is not \
     supported. SDKs do this once 2025-11-25 is in their list of supported versions.",
)
.requires(&[]);

pub(crate) const OTHER_VERSION: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-003",
    "A request for an unknown version is answered with a revision the server supports",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#version-negotiation"),
    "LIF",
    |s| other_version(s).boxed(),
)
.says(
    "a server that does not support the version asked for answers with another version it supports",
)
.help(
    "On two new connections protocheck sends `initialize` asking for `1999-01-01` and for \
     `protocheck-not-a-version`. It checks that the result's `protocolVersion` is a revision of \
     MCP (a date from 2024-11-05 on) other than the one asked for or, for a JSON-RPC error, that \
     its message or data names a supported revision. Each revision offered (other than \
     2025-11-25 when the run's `initialize` got it) is then asked for on a new connection, and \
     must be answered with itself.",
    "The server echoes the requested version back (most often by copying `params.protocolVersion` \
     into the result), answers a value that is no revision, omits `protocolVersion`, or answers \
     with neither a result nor a JSON-RPC error. An error that names no supported revision is a \
     warning.",
    "Check the requested version against the versions the server supports; when it is not one of \
     them, answer with the latest version the server supports (or a JSON-RPC error whose data \
     lists the supported versions), never with the requested string.",
);

pub(crate) const LATEST_VERSION: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-004",
    "The revision offered for an unknown version is the latest the server supports",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/lifecycle#version-negotiation"),
    "LIF",
    |s| latest_version(s).boxed(),
)
.says("the version offered instead of an unsupported one should be the latest the server supports")
.help(
    "protocheck reads the revisions the server offered in answer to the `initialize` requests for \
     the unknown versions `1999-01-01` and `protocheck-not-a-version` (see MCP25-LIF-003) and \
     compares each with 2025-11-25, which the run's own `initialize` showed the server accepts.",
    "The server offers an older revision, such as 2024-11-05, for an unknown version although it \
     speaks 2025-11-25: usually a fallback constant left at the first version the server \
     supported, or the first entry of a list ordered oldest first.",
    "Offer the newest revision the server supports when the requested one is unknown: keep the \
     fallback in step with the list of supported versions, or take that list's latest entry.",
)
.requires(&[INITIALIZE_ID, "MCP25-LIF-003"]);

pub(crate) const INITIALIZED_ACCEPTED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-005",
    "notifications/initialized is accepted: no response, and requests are served after it",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#initialization"),
    "LIF",
    |s| initialized_accepted(s).boxed(),
)
.says(
    "after a successful initialize the client sends notifications/initialized; a notification \
     never gets a response",
)
.help(
    "protocheck reads what came back for the run's `notifications/initialized` (the HTTP status \
     and body, or on stdio any line before the reply to a `ping` sent after it), then sends \
     `ping` and, if `ping` gets no result, the first listing the server advertises (`tools/list`, \
     `resources/list` or `prompts/list`).",
    "The server answers the notification with a JSON-RPC response (often an error for an unknown \
     method, or a result from a handler that treats every message as a request), refuses it with \
     an HTTP 4xx or 5xx, or stops serving requests after it.",
    "Handle `notifications/initialized` as a notification: never write a response for it (over \
     HTTP answer 202 Accepted with an empty body) and keep serving requests afterwards. A message \
     without an `id` never gets a response.",
);

pub(crate) const NO_EARLY_REQUESTS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-006",
    "No server request other than ping before notifications/initialized",
    Keyword::ShouldNot,
    Outcome::Warn,
    spec!("/basic/lifecycle#initialization"),
    "LIF",
    |s| no_early_requests(s).boxed(),
)
.says(
    "until it receives notifications/initialized, the server should send no requests other \
     than pings (logging notifications are allowed)",
)
.help(
    "On a new connection protocheck sends `initialize` and waits before sending \
     `notifications/initialized`, collecting every request the server sends meanwhile: on the \
     `initialize` answer's SSE stream and on a GET stream read up to its first message over HTTP, \
     on stdout over stdio up to the reply to a `ping` sent after the `initialize` answer. The \
     wait (or, on stdio, the read past the `ping`'s reply) is a multiple of the run's round trips, \
     0.2 to 1 s.",
    "The server sends `sampling/createMessage`, `roots/list`, `elicitation/create` or another \
     request as soon as `initialize` is answered, usually from start-up code that runs when the \
     session opens rather than when the client says it is ready.",
    "Wait for `notifications/initialized` before sending the client anything but `ping` and \
     logging notifications: move start-up requests into the handler of that notification, or \
     defer them to the client's first request.",
);

pub(crate) const BEFORE_INITIALIZE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-007",
    "A request other than ping before initialize is not processed",
    Keyword::ShouldNot,
    Outcome::Info,
    spec!("/basic/lifecycle#initialization"),
    "LIF",
    |s| before_initialize(s).boxed(),
)
.says(
    "initialization comes first, and clients should send nothing but pings before the \
     initialize response (the sentence binds the client; a server is not required to refuse)",
)
.help(
    "protocheck starts a new child process and writes, before any `initialize`, all at once: \
     `tools/list`, `resources/list`, `resources/templates/list`, `resources/read`, `prompts/list` \
     and `logging/setLevel`; it reads the answer to each by its id, for up to the request \
     timeout, and whether any is a result.",
    "Reported as information only, since the sentence binds the client. A result means the server \
     serves requests without the handshake, which usually means it keeps no lifecycle state; an \
     error or no answer passes.",
    "Nothing needs fixing. To pass, refuse requests other than `ping` until `initialize` has been \
     answered, with a JSON-RPC error, instead of processing them.",
)
.only_on(Transport::Stdio);

pub(crate) const DECLARED_NOTIFICATIONS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-008",
    "List-changed and resource-updated notifications only for declared capabilities",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#operation"),
    "LIF",
    |s| declared_notifications(s).boxed(),
)
.says("both parties use only capabilities that were successfully negotiated")
.help(
    "After every other rule, protocheck goes through every notification the server sent during \
     the run and compares it with the `initialize` capabilities: a `list_changed` notification of \
     tools, resources or prompts needs `listChanged: true` under that capability, and a \
     `notifications/resources/updated` counts as unsolicited unless it came in the session that \
     MCP25-RES-008 subscribed in and its `uri` is the resource subscribed to or a sub-resource \
     of it (a URI that goes on from it after `/`, `?` or `#`), an update that crosses the \
     unsubscribe included.",
    "The server emits list-changed notifications while its capabilities omit `listChanged` (or \
     set it to false), most often because the SDK sends them whenever a tool, resource or prompt \
     is registered, or it sends resource updates to a client that never subscribed.",
    "Declare `listChanged: true` under `tools`, `resources` or `prompts` when the server sends \
     that list's change notifications, or stop sending them; send \
     `notifications/resources/updated` only to the session that subscribed with \
     `resources/subscribe`, for the resource it subscribed to or a sub-resource of it.",
)
.run_wide();

pub(crate) const NO_CLIENT_FEATURE_REQUESTS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LIF-009",
    "No sampling, elicitation or roots request to a client that declared none of them",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/lifecycle#operation"),
    "LIF",
    |s| no_client_feature_requests(s).boxed(),
)
.says(
    "both parties use only capabilities that were successfully negotiated; protocheck \
     declares no client capability",
)
.help(
    "After every other rule, protocheck goes through every request the server sent it during the \
     run (on response streams, GET streams or stdout). protocheck declares no client capability \
     in `initialize`, so any `sampling/createMessage`, `elicitation/create` or `roots/list` \
     counts.",
    "The server asks the client for sampling, elicitation or roots without checking the client \
     capabilities it received in `initialize`, usually in a tool handler or start-up code that \
     assumes every client supports them.",
    "Read `params.capabilities` of `initialize` and send `sampling/createMessage`, \
     `elicitation/create` or `roots/list` only to a client that declared `sampling`, \
     `elicitation` or `roots`; otherwise do without (for example return a tool error).",
)
.run_wide();

pub(crate) const RULES: &[Mcp25Rule] = &[
    INITIALIZE_RESULT,
    SAME_VERSION,
    OTHER_VERSION,
    LATEST_VERSION,
    INITIALIZED_ACCEPTED,
    NO_EARLY_REQUESTS,
    BEFORE_INITIALIZE,
    DECLARED_NOTIFICATIONS,
    NO_CLIENT_FEATURE_REQUESTS,
];

/// Whether `text` is a revision of MCP: a `YYYY-MM-DD` date from the first
/// published revision on.
fn is_revision(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
        && text >= FIRST_REVISION
}

/// The `ServerCapabilities` members the schema defines: each is an object
/// when present; the named flags inside are booleans when present.
const CAPABILITIES: &[(&str, &[&str])] = &[
    ("experimental", &[]),
    ("logging", &[]),
    ("completions", &[]),
    ("prompts", &["listChanged"]),
    ("resources", &["subscribe", "listChanged"]),
    ("tools", &["listChanged"]),
    ("tasks", &[]),
];

/// What is wrong inside `capabilities`: a capability given as something
/// other than an object (`true`, which protocheck would otherwise read as
/// undeclared), or a flag that is not a boolean.
fn capability_problems(caps: &Value, problems: &mut Vec<String>) {
    for (name, flags) in CAPABILITIES {
        let Some(cap) = caps.get(*name) else {
            continue;
        };
        if !cap.is_object() {
            problems.push(format!(
                "`capabilities.{name}` is {} instead of an object",
                clip(&cap.to_string(), 60)
            ));
            continue;
        }
        for flag in *flags {
            if let Some(value) = cap.get(*flag)
                && !value.is_boolean()
            {
                problems.push(format!(
                    "`capabilities.{name}.{flag}` is {} instead of a boolean",
                    clip(&value.to_string(), 60)
                ));
            }
        }
    }
}

/// What is missing or wrong in an `InitializeResult`.
fn result_problems(result: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !result.is_object() {
        return vec!["the result is not an object".to_owned()];
    }
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        problems.push("`protocolVersion` is missing or not a string".to_owned());
    }
    match result.get("capabilities") {
        Some(caps) if caps.is_object() => capability_problems(caps, &mut problems),
        _ => problems.push("`capabilities` is missing or not an object".to_owned()),
    }
    match result.get("serverInfo") {
        Some(info) if info.is_object() => {
            for field in ["name", "version"] {
                if !info.get(field).is_some_and(Value::is_string) {
                    problems.push(format!("`serverInfo.{field}` is missing or not a string"));
                }
            }
            super::shapes::strings(
                info,
                &["title", "description", "websiteUrl"],
                "`serverInfo`",
                &mut problems,
            );
            super::shapes::icons(info, "`serverInfo`", &mut problems);
        }
        _ => problems.push("`serverInfo` is missing or not an object".to_owned()),
    }
    // Optional; absent is fine and not reported.
    if let Some(instructions) = result.get("instructions")
        && !instructions.is_string()
    {
        problems.push(format!(
            "`instructions` is {} instead of a string",
            clip(&instructions.to_string(), 60)
        ));
    }
    problems
}

/// Whether a refusal of `initialize` is how a 2026-07-28 server answers it:
/// HTTP 400 or 404 with -32601 or -32020…-32022 (digest, decision D1).
fn modern_refusal(reply: &Reply) -> bool {
    matches!(reply.status, Some(400 | 404))
        && reply
            .error_code()
            .is_some_and(|c| c == -32601 || (-32022..=-32020).contains(&c))
}

async fn initialize_result(s: &Session) -> Judgement {
    if modern_refusal(&s.init) {
        return Judgement::info(format!(
            "speaks 2026-07-28 only (inferred: `initialize` was answered {}, as a 2026-07-28 \
             server refuses it); run the mcp-2026-07-28 suite",
            s.init.describe()
        ))
        .reply(&s.init);
    }
    let Some(result) = s.init_result() else {
        return Judgement::fail(format!(
            "`initialize` (protocolVersion {PROTOCOL_VERSION}) was answered {}",
            s.init.describe()
        ))
        .reply(&s.init);
    };
    let problems = result_problems(result);
    if !problems.is_empty() {
        return Judgement::fail(format!(
            "the `initialize` result is malformed: {}",
            problems.join("; ")
        ))
        .reply(&s.init);
    }
    match s.negotiated() {
        Some(PROTOCOL_VERSION) => Judgement::pass(format!(
            "`initialize` answered protocolVersion {PROTOCOL_VERSION}, capabilities and serverInfo"
        ))
        .reply(&s.init),
        // The era gate: a server answering with another revision does not
        // speak this one, and no other rule of the suite applies to it.
        other => Judgement::info(format!(
            "speaks {}, not {PROTOCOL_VERSION}",
            clip(other.unwrap_or("?"), 40)
        ))
        .reply(&s.init),
    }
}

async fn same_version(s: &Session) -> Judgement {
    let Some(answered) = s.negotiated() else {
        return Judgement::skip(format!(
            "not verified: `initialize` was answered {}",
            s.init.describe()
        ))
        .reply(&s.init);
    };
    if answered == PROTOCOL_VERSION {
        return Judgement::pass(format!(
            "asked for {PROTOCOL_VERSION}, the server answered {PROTOCOL_VERSION}"
        ))
        .reply(&s.init);
    }
    // A server that does not support 2025-11-25 rightly answers another
    // revision. Whether it supports it shows only where the server names
    // 2025-11-25 itself: as the revision it offers for an unknown one.
    for (asked, reply) in s.unknown_version_probes(UNKNOWN_VERSIONS).await {
        if offered(reply) == Some(PROTOCOL_VERSION) {
            return Judgement::fail(format!(
                "asked for {PROTOCOL_VERSION}, the server answered `{}`, yet it offers \
                 {PROTOCOL_VERSION} when asked for `{asked}`: it supports the revision it was \
                 asked for and did not answer with it",
                clip(answered, 40)
            ))
            .reply(&s.init)
            .reply(reply);
        }
    }
    Judgement::skip(format!(
        "not verified: the server answered `{}` and never named {PROTOCOL_VERSION} as a revision \
         it supports",
        clip(answered, 40)
    ))
    .reply(&s.init)
}

/// The revision an `initialize` result offers.
fn offered(reply: &Reply) -> Option<&str> {
    reply.result()?.get("protocolVersion")?.as_str()
}

/// Whether an error answering `initialize` names a revision (in its
/// message or data): the lifecycle page's error example lists them.
fn names_revisions(error: &Value) -> bool {
    fn walk(value: &Value) -> bool {
        match value {
            Value::String(text) => text
                .split(|c: char| !(c.is_ascii_digit() || c == '-'))
                .any(is_revision),
            Value::Array(items) => items.iter().any(walk),
            Value::Object(map) => map.values().any(walk),
            _ => false,
        }
    }
    walk(error)
}

async fn other_version(s: &Session) -> Judgement {
    let probes = s.unknown_version_probes(UNKNOWN_VERSIONS).await;
    let rank = |k: Kind| match k {
        Kind::Fail => 4,
        Kind::Warn => 3,
        Kind::Info => 2,
        Kind::Skip => 1,
        Kind::Pass => 0,
    };
    let mut worst = Judgement::pass("");
    let mut notes = Vec::new();
    for (asked, reply) in probes {
        let j = judge_other_version(asked, reply);
        notes.push(j.message.clone());
        if rank(j.kind) > rank(worst.kind) {
            worst = j;
        }
    }
    let mut judged = Judgement {
        message: notes.join("; "),
        evidence: Vec::new(),
        ..worst
    };
    for (_, reply) in probes {
        judged = judged.reply(reply);
    }
    if judged.kind != Kind::Pass {
        return judged;
    }
    // An offered revision must be one the server supports: asked for it on
    // a new connection, the server answers with that same revision (the
    // lifecycle's MUST for a supported revision). 2025-11-25 is known
    // supported when the run's `initialize` got it.
    let mut offers: Vec<&str> = probes
        .iter()
        .filter_map(|(_, reply)| offered(reply))
        .filter(|v| is_revision(v))
        .filter(|v| !(*v == PROTOCOL_VERSION && s.negotiated() == Some(PROTOCOL_VERSION)))
        .collect();
    offers.dedup();
    for offer in offers {
        let conn = match s.fresh().await {
            Ok(conn) => conn,
            Err(j) => return j,
        };
        let again = conn.initialize(offer).await;
        conn.close().await;
        let answered = offered(&again);
        if answered == Some(offer) {
            judged.message = format!(
                "{}; asked for the offered {offer} on a new connection, the server answered \
                 with it",
                judged.message
            );
            judged = judged.reply(&again);
            continue;
        }
        if again.unanswered() {
            return Judgement::skip(format!(
                "not verified: `initialize` asking for the offered {offer} got {}",
                again.describe()
            ))
            .reply(&again);
        }
        return Judgement::fail(format!(
            "for an unknown version the server offered {offer}, yet `initialize` asking for \
             {offer} on a new connection was answered {}: the offer is not a revision it \
             supports (a supported revision is answered with itself)",
            match answered {
                Some(v) => format!("with {}", clip(v, 40)),
                None => again.describe(),
            }
        ))
        .reply(&again);
    }
    judged
}

fn judge_other_version(asked: &str, reply: &Reply) -> Judgement {
    if reply.unanswered() {
        return Judgement::skip(format!(
            "not verified: `initialize` asking for `{asked}` got {}",
            reply.describe()
        ));
    }
    if let Some(result) = reply.result() {
        return match result.get("protocolVersion").and_then(Value::as_str) {
            Some(v) if v == asked => Judgement::fail(format!(
                "asked for `{asked}`, which is no revision of MCP, the server echoed it back"
            )),
            Some(v) if is_revision(v) => {
                Judgement::pass(format!("asked for `{asked}`, the server offered {v}"))
            }
            Some(v) => Judgement::fail(format!(
                "asked for `{asked}`, the server answered `{}`, which is not a revision of MCP",
                clip(v, 40)
            )),
            None => Judgement::fail(format!(
                "asked for `{asked}`, the server answered a result without a protocolVersion"
            )),
        };
    }
    // The lifecycle page's error example refuses an unsupported version with
    // a JSON-RPC error listing the supported ones: a server author following
    // it is not faulted.
    if let Some(error) = reply.error_object() {
        if names_revisions(error) {
            return Judgement::pass(format!(
                "asked for `{asked}`, the server refused it {} naming the revisions it supports \
                 (the reading of the lifecycle page's error example; offering a revision is the \
                 other)",
                reply.describe()
            ));
        }
        return Judgement::warn(format!(
            "asked for `{asked}`, the server refused it {} without naming a revision it \
             supports: neither a revision offered nor the lifecycle page's error with the \
             supported versions",
            reply.describe()
        ));
    }
    Judgement::fail(format!(
        "asked for `{asked}`, the server answered {}: neither a revision it supports nor a \
         JSON-RPC error",
        reply.describe()
    ))
}

async fn latest_version(s: &Session) -> Judgement {
    let probes = s.unknown_version_probes(UNKNOWN_VERSIONS).await;
    let offers: Vec<(&str, &str, &Reply)> = probes
        .iter()
        .filter_map(|(asked, reply)| Some((asked.as_str(), offered(reply)?, reply)))
        .collect();
    if offers.is_empty() {
        return Judgement::skip(
            "not applicable: the server refused unknown versions with an error instead of \
             offering a revision",
        );
    }
    // It accepted 2025-11-25 (MCP25-LIF-001): an older offer is not its latest.
    let older: Vec<_> = offers
        .iter()
        .filter(|(_, v, _)| *v < PROTOCOL_VERSION)
        .collect();
    if older.is_empty() {
        let mut j = Judgement::pass(format!(
            "for an unknown version the server offered {}",
            offers.first().map_or("", |o| o.1)
        ));
        for (_, _, reply) in &offers {
            j = j.reply(reply);
        }
        return j;
    }
    let mut j = Judgement::fail(format!(
        "asked for `{}`, the server offered {}, older than {PROTOCOL_VERSION}, which it accepted",
        older[0].0, older[0].1
    ))
    .reply(&s.init);
    for (_, _, reply) in older {
        j = j.reply(reply);
    }
    j
}

async fn initialized_accepted(s: &Session) -> Judgement {
    let Some(note) = &s.initialized else {
        return Judgement::skip("not verified: `initialize` was not answered with a result");
    };
    if note.message.is_some() {
        return Judgement::fail(format!(
            "`notifications/initialized` was answered {}: a notification gets no response",
            note.describe()
        ))
        .reply(note);
    }
    if let Some(status) = note.status
        && status >= 400
    {
        return Judgement::fail(format!(
            "`notifications/initialized` was refused: {}",
            note.describe()
        ))
        .reply(note);
    }
    if note.unanswered()
        && let Some(err) = note.error.as_ref().filter(|e| !is_timeout(e))
    {
        return Judgement::skip(format!(
            "not verified: `notifications/initialized` could not be sent: {err}"
        ))
        .reply(note);
    }
    let how = match note.status {
        Some(status) => format!("HTTP {status}"),
        None => "no line before the reply to a `ping` sent after it".to_owned(),
    };
    let ping = s.main.request("ping", json!({})).await;
    if ping.result().is_some() {
        return Judgement::pass(format!(
            "`notifications/initialized` got no response ({how}) and `ping` was served after it"
        ))
        .reply(note)
        .reply(&ping);
    }
    // A broken `ping` is MCP25-UTL-001's matter: whether the server serves
    // requests is then told by a listing it advertises.
    let Some(method) = LISTINGS
        .iter()
        .find(|(capability, _)| s.advertises(capability))
        .map(|(_, method)| *method)
    else {
        return Judgement::skip(format!(
            "not verified: after `notifications/initialized`, `ping` was answered {}, and the \
             server advertises no listing (tools, resources, prompts) to tell whether it serves \
             requests",
            ping.describe()
        ))
        .reply(note)
        .reply(&ping);
    };
    let listing = s.main.request(method, json!({})).await;
    if listing.result().is_some() {
        return Judgement::pass(format!(
            "`notifications/initialized` got no response ({how}) and `{method}` was served \
             after it (`ping` was answered {}: MCP25-UTL-001 judges that)",
            ping.describe()
        ))
        .reply(note)
        .reply(&listing);
    }
    Judgement::fail(format!(
        "after `notifications/initialized`, `ping` was answered {} and `{method}` {}",
        ping.describe(),
        listing.describe()
    ))
    .reply(note)
    .reply(&ping)
    .reply(&listing)
}

/// The capabilities whose listing tells whether a server serves requests,
/// with the method that lists it.
const LISTINGS: &[(&str, &str)] = &[
    ("tools", "tools/list"),
    ("resources", "resources/list"),
    ("prompts", "prompts/list"),
];

fn is_timeout(err: &crate::transport::TransportError) -> bool {
    matches!(err, crate::transport::TransportError::Timeout(_))
}

/// Judges the answer to a notification: no JSON-RPC response; over HTTP,
/// the status is left to the HTP rules.
pub(crate) fn judge_unanswered(reply: &Reply, what: &str) -> Judgement {
    if reply.message.is_some() {
        return Judgement::fail(format!(
            "{what} was answered {}: a notification gets no response",
            reply.describe()
        ))
        .reply(reply);
    }
    if reply.unanswered()
        && let Some(err) = reply.error.as_ref().filter(|e| !is_timeout(e))
    {
        return Judgement::skip(format!("not verified: {what} could not be sent: {err}"))
            .reply(reply);
    }
    Judgement::pass(format!(
        "{what} got no JSON-RPC response ({})",
        match reply.status {
            Some(status) => format!("HTTP {status}"),
            None => "no line before the reply to a `ping` sent after it".to_owned(),
        }
    ))
    .reply(reply)
}

async fn no_early_requests(s: &Session) -> Judgement {
    let conn = match s.fresh().await {
        Ok(conn) => conn,
        Err(j) => return j,
    };
    let init = conn.initialize(PROTOCOL_VERSION).await;
    if init.result().is_none() {
        conn.close().await;
        return Judgement::skip(format!(
            "not verified: `initialize` on a new connection was answered {}",
            init.describe()
        ))
        .reply(&init);
    }
    let mut requests: Vec<Value> = init.server_requests.clone();
    let mut evidence = vec![init.exchange.clone()];
    let window = s.client.window(EARLY_FLOOR, EARLY_WINDOW);
    let watched = match s.transport() {
        Transport::Stdio => {
            let (frames, answered) = conn.listen_past_barrier(window).await;
            requests.extend(frames.into_iter().filter(|f| f.get("id").is_some()));
            if answered {
                format!(
                    "on stdout up to the reply to a `ping` sent after the initialize response and \
                     {} ms past it",
                    window.as_millis()
                )
            } else {
                format!(
                    "on stdout in the {} ms a `ping` sent after the initialize response went \
                     unanswered",
                    s.client.timeout().as_millis()
                )
            }
        }
        Transport::Http => {
            let get = conn.get_stream_message(window).await;
            if let Some(frame) = &get.message
                && frame.get("method").is_some()
                && frame.get("id").is_some()
            {
                requests.push(frame.clone());
                evidence.push(get.exchange.clone());
            }
            if get.sse {
                format!(
                    "on a GET stream read up to its first message, {} ms at most",
                    window.as_millis()
                )
            } else {
                format!("a GET for a stream was answered {}", get.describe())
            }
        }
    };
    conn.initialized().await;
    conn.close().await;
    let early: Vec<String> = requests
        .iter()
        .filter_map(|r| r.get("method").and_then(Value::as_str))
        .filter(|m| *m != "ping")
        .map(|m| format!("`{}`", clip(m, 60)))
        .collect();
    let mut j = if early.is_empty() {
        Judgement::pass(format!(
            "no request other than ping came between the initialize response and \
             `notifications/initialized` (on the initialize answer, and {watched})"
        ))
    } else {
        Judgement::fail(format!(
            "before `notifications/initialized` the server sent {}",
            early.join(", ")
        ))
    };
    for exchange in &evidence {
        j = j.with(exchange);
    }
    j
}

/// The requests MCP25-LIF-007 writes to a new process before `initialize`,
/// one of each family that reads (a `tools/call` could act: side effects).
const PRE_INIT_REQUESTS: [(&str, &str); 6] = [
    ("tools/list", "{}"),
    ("resources/list", "{}"),
    ("resources/templates/list", "{}"),
    (
        "resources/read",
        r#"{"uri":"protocheck://before-initialize"}"#,
    ),
    ("prompts/list", "{}"),
    ("logging/setLevel", r#"{"level":"emergency"}"#),
];

async fn before_initialize(s: &Session) -> Judgement {
    let conn: Connection = match s.fresh().await {
        Ok(conn) => conn,
        Err(j) => return j,
    };
    // All six at once on the new process, each answer read by its id for
    // up to the request timeout: a server that serves its requests side by
    // side may answer them in any order, so an answer is paired with its
    // request by id, never by when it came. A server that leaves them
    // unanswered costs the run one timeout, spent beside the other rules.
    let sends = PRE_INIT_REQUESTS.iter().map(|(method, params)| {
        let id = json!(s.client.next_id());
        let frame =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let conn = &conn;
        async move {
            (
                *method,
                conn.send_frame(method, frame, Awaiting::Id(id)).await,
            )
        }
    });
    let answered: Vec<(&str, Reply)> = futures::future::join_all(sends).await;
    conn.close().await;
    let processed: Vec<&(&str, Reply)> = answered
        .iter()
        .filter(|(_, reply)| reply.result().is_some())
        .collect();
    if !processed.is_empty() {
        let names: Vec<String> = processed.iter().map(|(m, _)| format!("`{m}`")).collect();
        let j = Judgement::fail(format!(
            "{} written to a new process before initialize {} answered with a result: the \
             server processed {} without the handshake",
            names.join(", "),
            if names.len() == 1 { "was" } else { "were" },
            if names.len() == 1 { "it" } else { "them" },
        ));
        return processed.iter().fold(j, |j, (_, r)| j.reply(r));
    }
    if let Some((method, reply)) = answered.iter().find(|(_, reply)| {
        reply.unanswered() && reply.error.as_ref().is_some_and(|e| !is_timeout(e))
    }) {
        let err = reply
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Judgement::skip(format!(
            "not verified: `{method}` before initialize could not be sent: {err}"
        ))
        .reply(reply);
    }
    let how: Vec<String> = answered
        .iter()
        .map(|(method, reply)| {
            format!(
                "`{method}`: {}",
                if reply.message.is_some() {
                    reply.describe()
                } else {
                    format!("no answer within {} s", s.client.timeout().as_secs_f64())
                }
            )
        })
        .collect();
    let j = Judgement::pass(format!(
        "no request before initialize was processed ({})",
        how.join("; ")
    ));
    answered.iter().fold(j, |j, (_, r)| j.reply(r))
}

async fn declared_notifications(s: &Session) -> Judgement {
    let caps = s.capabilities();
    let declared = |cap: &str, flag: &str| {
        caps.get(cap)
            .and_then(|c| c.get(flag))
            .and_then(Value::as_bool)
            == Some(true)
    };
    let mut undeclared = Vec::new();
    let subscribed = s
        .subscribed
        .lock()
        .map(|list| list.clone())
        .unwrap_or_default();
    let notes = s.client.notifications_by_session();
    for (note, session) in &notes {
        let Some(method) = note.get("method").and_then(Value::as_str) else {
            continue;
        };
        let needed = match method {
            "notifications/tools/list_changed" => Some(("tools", "listChanged")),
            "notifications/resources/list_changed" => Some(("resources", "listChanged")),
            "notifications/prompts/list_changed" => Some(("prompts", "listChanged")),
            _ => None,
        };
        if let Some((cap, flag)) = needed
            && !declared(cap, flag)
        {
            undeclared.push(format!("`{method}` without `{cap}.{flag}: true`"));
        }
        // protocheck subscribes to one resource at most (MCP25-RES-008),
        // and unsubscribes at once: an update about it, or about a
        // sub-resource of it, in the session that subscribed is solicited,
        // even one that crossed the unsubscribe; any other is not.
        if method == "notifications/resources/updated" {
            let uri = note.pointer("/params/uri").and_then(Value::as_str);
            let solicited = |(subscribed, by): &(String, _)| {
                by == session && uri.is_some_and(|uri| within(uri, subscribed))
            };
            if !subscribed.iter().any(solicited) {
                undeclared.push(match uri {
                    Some(uri) if subscribed.iter().any(|(s, _)| within(uri, s)) => format!(
                        "`{method}` for `{}` in a session that did not subscribe to it (another \
                         session did)",
                        clip(uri, 80)
                    ),
                    Some(uri) => format!(
                        "`{method}` for `{}`, to which protocheck did not subscribe",
                        clip(uri, 80)
                    ),
                    None => format!("`{method}` with no `uri`, and no subscription to match it"),
                });
            }
        }
    }
    if undeclared.is_empty() {
        // The capabilities judged against are the evidence.
        return Judgement::pass(format!(
            "none of the {} notifications of the run used an undeclared capability",
            notes.len()
        ))
        .reply(&s.init);
    }
    undeclared.dedup();
    Judgement::fail(format!(
        "the server sent {}",
        crate::suite::mcp::client::some(&undeclared, 4, "; ")
    ))
    .reply(&s.init)
}

/// Whether an update about `uri` is about the resource `subscribed`: the
/// resource itself, or a sub-resource of it (schema,
/// `ResourceUpdatedNotification.params.uri`: "This might be a sub-resource
/// of the one that the client actually subscribed to"). A sub-resource's
/// URI goes on from the subscribed one at a boundary (`/`, `?`, `#`, or
/// right after a subscribed URI that ends with `/`): `file:///a/b` is
/// under `file:///a`, `file:///ab` is not.
fn within(uri: &str, subscribed: &str) -> bool {
    !subscribed.is_empty()
        && uri.strip_prefix(subscribed).is_some_and(|rest| {
            rest.is_empty() || subscribed.ends_with('/') || rest.starts_with(['/', '?', '#'])
        })
}

/// The requests a server sends only to a client that declared the
/// capability, and that capability.
const CLIENT_FEATURES: &[(&str, &str)] = &[
    ("sampling/createMessage", "sampling"),
    ("elicitation/create", "elicitation"),
    ("roots/list", "roots"),
];

async fn no_client_feature_requests(s: &Session) -> Judgement {
    let requests = s.client.server_requests();
    let mut bad: Vec<String> = Vec::new();
    let mut evidence = Vec::new();
    for (request, exchange) in &requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        if let Some((_, capability)) = CLIENT_FEATURES.iter().find(|(m, _)| *m == method) {
            bad.push(format!("`{method}` (capability `{capability}`)"));
            evidence.push(exchange);
        }
    }
    if bad.is_empty() {
        return Judgement::pass(format!(
            "the server sent {} request{} of its own, none for a client capability protocheck \
             did not declare",
            requests.len(),
            if requests.len() == 1 { "" } else { "s" }
        ))
        .reply(&s.init);
    }
    bad.dedup();
    let mut j = Judgement::fail(format!(
        "protocheck declared no client capability, yet the server sent {}",
        crate::suite::mcp::client::some(&bad, 4, ", ")
    ));
    for exchange in evidence {
        j = j.with(exchange);
    }
    j
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn an_update_is_about_the_subscribed_resource_or_one_under_it() {
        for (uri, subscribed, expected) in [
            ("file:///a", "file:///a", true),
            ("file:///a/b.txt", "file:///a", true),
            ("file:///a?page=2", "file:///a", true),
            ("file:///a#part", "file:///a", true),
            ("test://dir/x", "test://dir/", true),
            ("file:///ab", "file:///a", false),
            ("file:///b", "file:///a", false),
            ("file:///a", "file:///a/b", false),
            ("anything", "", false),
        ] {
            assert_eq!(
                within(uri, subscribed),
                expected,
                "{uri} under {subscribed}"
            );
        }
    }
}
