//! LOG — logging (server/utilities/logging): log notifications only with
//! the capability, `logging/setLevel` for valid and invalid levels, and the
//! shape of every `notifications/message`.
//!
//! A log notification that answers no request travels on the server's own
//! channel: the `GET` stream over HTTP, stdout on stdio. So where the run
//! saw none, the passive rules watch that channel for a short window while
//! a `ping` goes out, and `logging/setLevel` is sent while it is watched.

use super::client::{Connection, Reply, Transport};
use super::htp::own_session;
use super::res::{MAX_NAMED, is_empty_result, preferred_code, type_name};
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Kind, Session};
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::{clip, some};
use crate::suite::{Exchange, Outcome};
use futures::FutureExt;
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) const DECLARED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LOG-001",
    "No notifications/message without the logging capability",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/logging#capabilities"),
    "LOG",
    |s| declared(s).boxed(),
)
.says("a server that emits log message notifications declares the `logging` capability")
.help(
    "When `logging` is not declared, protocheck looks, after every other rule, for a \
     `notifications/message` sent during the run; if none came, it watches the server's own \
     channel around a `ping` (over HTTP a GET stream, for a multiple of the run's round trips, \
     0.15 to 3 s; on stdio stdout up to the reply to a second `ping` and as long again past it). \
     A server that declares `logging` passes.",
    "The server sends log notifications without declaring `logging`, usually because the SDK \
     forwards log records to the client by default, or a tool handler logs through the session.",
    "Declare `\"logging\": {}` in the `initialize` capabilities if the server sends \
     `notifications/message`, or stop sending them and log to stderr or a file instead.",
)
.run_wide();

pub(crate) const SET_LEVEL: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LOG-002",
    "With logging declared, logging/setLevel with a valid level gets an empty result",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/logging#setting-log-level"),
    "LOG",
    |s| set_level(s).boxed(),
)
.says(
    "the logging capability includes `logging/setLevel`, which the server answers with an \
     empty result",
)
.help(
    "protocheck sends `logging/setLevel` with the level `debug` while watching the server's own \
     channel (the GET stream, or stdout), then with each of the other seven levels one after \
     another (`info` to `alert`, ending with `emergency`), and checks that every one gets an \
     empty result (`{}`, or only `_meta`). Over HTTP, when the server issues session ids, it \
     does so on three sessions of its own, side by side (`debug` then `emergency` on one, the \
     levels in between, three on each, on the two others); on stdio on a child process of its \
     own (each child is a session); otherwise on the run's session once \
     every other rule that sends requests has been judged (the run-wide rules come after it), \
     so that what the server logs while at `debug` is the same on every run.",
    "The server declares `logging` without implementing `logging/setLevel` (-32601), answers it \
     with a result that is not empty, such as `{\"level\": \"debug\"}`, or refuses a level its \
     logging library names otherwise (`warning` for `warn`, `critical` for `fatal`).",
    "Implement `logging/setLevel` for all eight syslog levels: keep the minimum level for the \
     session, answer `{}`, and send only the `notifications/message` at or above that level.",
)
.needs_capability("logging");

pub(crate) const INVALID_LEVEL: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LOG-003",
    "An invalid log level gets error -32602",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/utilities/logging#error-handling"),
    "LOG",
    |s| invalid_level(s).boxed(),
)
.says("an invalid log level is answered with error -32602 (invalid params)")
.help(
    "protocheck sends `logging/setLevel` one after another with the undefined level \
     `protocheck`, with `warn` (an alias, not one of the eight levels), with the number 4 and \
     without `level`, and expects error -32602 to each; another error code, a result or no \
     answer is a warning.",
    "The server accepts any string as a level (an empty result), maps aliases such as `warn` \
     to a level, or answers -32603, usually because the level is not checked against the eight \
     syslog levels.",
    "Check `level` against `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` and \
     `emergency`, and answer any other value with error -32602 (Invalid params).",
)
.needs_capability("logging");

pub(crate) const MESSAGE_SHAPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-LOG-004",
    "Every notifications/message has a syslog level and data; logger is a string when present",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/utilities/logging#log-message-notifications"),
    "LOG",
    |s| message_shape(s).boxed(),
)
.says(
    "a log notification carries one of the eight syslog severities as `level`, the logged \
     `data`, and optionally a string `logger`",
)
.help(
    "After every other rule, protocheck reads every `notifications/message` of the run (if none \
     came, it takes MCP25-LOG-002's watch of the server's own channel at level `debug`, or, \
     where that rule did not run, watches the channel around a `ping`) and checks that `params` \
     holds a `level` among the eight syslog levels, a `data` member, and a string `logger` when \
     present.",
    "The level is a logging library's own name (`warn`, `fatal`, `trace`, `WARNING`), `data` is \
     missing (the text sent as `message`), or `logger` is `null` or a number.",
    "Map the logger's levels onto the eight lower-case syslog names (`warn` becomes `warning`, \
     `fatal` `critical`), send the payload in `data`, and omit `logger` or make it a string.",
)
.run_wide();

pub(crate) const RULES: &[Mcp25Rule] = &[DECLARED, SET_LEVEL, INVALID_LEVEL, MESSAGE_SHAPE];

/// The severities of RFC 5424, as `LoggingLevel` names them.
const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// How long the server's own channel is watched, at least and at most:
/// over HTTP the GET stream, which no answer to a POST is ordered with; on
/// stdio past the reply to a barrier `ping` (which proves that what the
/// server wrote on handling the requests before it has come). A server may
/// log from work of its own, on a timer or after its answers, and nothing in
/// the protocol signals that it will not, so a floor stays.
const WATCH_FLOOR: Duration = Duration::from_millis(150);
const WATCH_CEILING: Duration = Duration::from_secs(3);

/// The log notifications of the run, each with the exchange it came in;
/// when there are none yet, the server's own channel is watched while a
/// `ping` goes out, and that watch is evidence too. Where MCP25-LOG-002
/// watched that channel already, with the level at `debug`, that watch
/// stands for this one: it is the watch most likely to see a log message
/// (the run's session is at `emergency` after it, or at the server's
/// default when LOG-002 had a session of its own), and a second one would
/// add a window to the end of every run that saw no log message
/// (server-everything over HTTP: 1.8 s, the run's last).
async fn observed(s: &Session) -> (Vec<(Value, Exchange)>, Vec<Reply>, String) {
    let notes = s.client.log_messages();
    if !notes.is_empty() {
        return (notes, Vec::new(), String::new());
    }
    if let Some(levels) = s.gathered::<Levels>() {
        let ms = levels.window.as_millis();
        let watched = match s.transport() {
            Transport::Http => format!(
                "; the GET stream was watched for {ms} ms around `logging/setLevel` to `debug` \
                 (MCP25-LOG-002's probe)"
            ),
            Transport::Stdio => format!(
                "; stdout was read after the answer to `logging/setLevel` to `debug` up to the \
                 reply to a `ping` and {ms} ms past it (MCP25-LOG-002's probe)"
            ),
        };
        let evidence = std::iter::once(levels.debug.clone())
            .chain(levels.get.clone())
            .collect();
        return (notes, evidence, watched);
    }
    let window = s.client.window(WATCH_FLOOR, WATCH_CEILING);
    let (ping, get) = s
        .main
        .watch(window, s.main.request("ping", json!({})))
        .await;
    let mut evidence: Vec<_> = get.into_iter().collect();
    evidence.push(ping);
    let watched = match s.transport() {
        Transport::Http => format!(
            "; the GET stream was watched for {} ms around a `ping`",
            window.as_millis()
        ),
        Transport::Stdio => format!(
            "; stdout was read after a `ping`'s answer up to the reply to a second `ping` and {} \
             ms past it",
            window.as_millis()
        ),
    };
    (s.client.log_messages(), evidence, watched)
}

fn quote(note: &Value) -> String {
    clip(&note.to_string(), 160)
}

async fn declared(s: &Session) -> Judgement {
    if s.advertises("logging") {
        return Judgement::pass("the server declares the `logging` capability").reply(&s.init);
    }
    let (notes, evidence, watched) = observed(s).await;
    let j = match notes.first() {
        None => Judgement::pass(format!(
            "the server does not declare `logging` and sent no `notifications/message`{watched}"
        )),
        Some((first, at)) => Judgement::fail(format!(
            "the server sent {} `notifications/message` without declaring the `logging` \
             capability, e.g. {}",
            notes.len(),
            quote(first)
        ))
        .reply(&s.init)
        .with(at),
    };
    evidence.iter().fold(j, Judgement::reply)
}

/// Why a `logging/setLevel` answer is not an empty result, if it is not.
fn set_level_problem(reply: &Reply, level: &str) -> Option<String> {
    match reply.result() {
        Some(r) if is_empty_result(r) => None,
        Some(r) => Some(format!(
            "`logging/setLevel` to `{level}` was answered with a result that is not empty: {}",
            clip(&r.to_string(), 120)
        )),
        None => Some(format!(
            "`logging/setLevel` to `{level}` was answered {}",
            reply.describe()
        )),
    }
}

/// MCP25-LOG-002's probe: `logging/setLevel` to `debug` while the server's
/// own channel is watched, then to each level above it, one after another,
/// up to `emergency`.
struct Levels {
    debug: Reply,
    /// How long the server's own channel was watched at `debug`.
    window: Duration,
    /// The watch of the server's own channel, when there is one to watch.
    get: Option<Reply>,
    /// `info` to `alert`, in that order.
    middle: Vec<(&'static str, Reply)>,
    /// Where the levels went.
    sent: Sent,
    emergency: Reply,
}

/// Where MCP25-LOG-002's levels went.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sent {
    /// On three sessions of the rule's own, side by side.
    Three,
    /// On a child process of the rule's own (stdio), one after another.
    OwnChild,
    /// On the run's session, one after another, after the other rules.
    Main,
}

/// Sends MCP25-LOG-002's probe. Over HTTP, when the server issues session
/// ids, on sessions of its own, and on stdio on a child of its own (each
/// child is a session): the level is the session's, so what the server
/// logs while at `debug` is what that session's requests provoke, not the
/// run's other requests. Otherwise on the run's session, once every
/// other rule that sends requests (and what goes out beside them) is done: the
/// tool rules' calls, which a server logging each call at `info` once a
/// level is set would log, or not, as they happened to fall inside the
/// window (MCP25-LOG-004, which judges every log notification of the run,
/// passed on one run and skipped on the next on the panel's
/// spec25-stateless), are all answered before the window opens, whatever
/// order the run's requests were served in. The run-wide rules start only
/// once this one is judged.
async fn levels(s: &Session) -> Levels {
    // On stdio a child of its own; with session ids, sessions of its own,
    // opened side by side: one for `debug` and `emergency`, two for the
    // levels in between (below).
    let (own, others) = if s.transport() == Transport::Stdio {
        // One child: its start-up is the cost of a session on stdio.
        (own_session(s).await.ok().map(|(conn, _)| conn), None)
    } else if s.main.session_id().is_some() {
        let (a, b, c) = tokio::join!(own_session(s), own_session(s), own_session(s));
        let others = match (b, c) {
            (Ok((b, _)), Ok((c, _))) => Some((b, c)),
            (b, c) => {
                for conn in [b, c].into_iter().flatten() {
                    conn.0.close().await;
                }
                None
            }
        };
        (a.ok().map(|(conn, _)| conn), others)
    } else {
        (None, None)
    };
    if own.is_none() {
        // What goes out beside the rules (the passive probe and
        // MCP25-RPC-001's pings, which are no rules) is awaited too.
        if s.probes_early() {
            tokio::join!(s.passive_probe(), super::rpc::id_pings(s));
        }
        s.before_debug.zero().await;
    }
    let conn = own.as_ref().unwrap_or(&s.main);
    // `debug` is sent while the server's own channel is watched, so that
    // the log notifications it enables are seen (MCP25-LOG-004 judges
    // them); `emergency` then quiets the rest of the run.
    let window = s.client.window(WATCH_FLOOR, WATCH_CEILING);
    let ends = conn.watch(
        window,
        conn.request("logging/setLevel", json!({"level": "debug"})),
    );
    let emergency = || conn.request("logging/setLevel", json!({"level": "emergency"}));
    // The levels in between go, half each, on the two other sessions when
    // there are, side by side with the first's: a level is its session's,
    // so none changes what another's requests log.
    let middle = &LEVELS[1..LEVELS.len() - 1];
    let (debug, get, middle, emergency, sent) = match (&own, &others) {
        (Some(_), Some((b, c))) => {
            let (low, high) = middle.split_at(middle.len() / 2);
            let (((debug, get), emergency), low, high) = tokio::join!(
                async { (ends.await, emergency().await) },
                in_order(b, low),
                in_order(c, high)
            );
            (debug, get, [low, high].concat(), emergency, Sent::Three)
        }
        _ => {
            let (debug, get) = ends.await;
            let middle = in_order(conn, middle).await;
            let sent = if own.is_some() {
                Sent::OwnChild
            } else {
                Sent::Main
            };
            (debug, get, middle, emergency().await, sent)
        }
    };
    let others = others.map(|(b, c)| [b, c]).into_iter().flatten();
    for conn in own.into_iter().chain(others) {
        conn.close().await;
    }
    Levels {
        debug,
        window,
        get,
        middle,
        sent,
        emergency,
    }
}

/// `logging/setLevel` to each of `levels` on `conn`, one after another, not
/// side by side, so that the level the session holds at each moment, and
/// what the server logs, is the same on every run. The requirement names
/// all eight levels, and a server whose list lacks one (`warn` for
/// `warning`) is caught only by sending it.
async fn in_order(conn: &Connection, levels: &[&'static str]) -> Vec<(&'static str, Reply)> {
    let mut sent = Vec::new();
    for level in levels {
        let reply = conn
            .request("logging/setLevel", json!({"level": level}))
            .await;
        sent.push((*level, reply));
    }
    sent
}

async fn set_level(s: &Session) -> Judgement {
    // Kept for the run-wide rules, whose watch it stands for (see
    // [`observed`]).
    let levels = s.shared(|| levels(s)).await;
    let Levels {
        debug,
        get,
        middle,
        sent: how,
        emergency,
        ..
    } = &*levels;
    let sent: Vec<(&str, &Reply)> = std::iter::once(("debug", debug))
        .chain(middle.iter().map(|(level, reply)| (*level, reply)))
        .chain(std::iter::once(("emergency", emergency)))
        .collect();
    let bad: Vec<(String, &Reply)> = sent
        .iter()
        .filter_map(|(level, reply)| set_level_problem(reply, level).map(|p| (p, *reply)))
        .collect();
    let j = if bad.is_empty() {
        let how = match how {
            Sent::Three => {
                "on three sessions of protocheck's own, side by side (`debug` then `emergency`; \
                 `info`, `notice`, `warning`; `error`, `critical`, `alert`)"
            }
            Sent::OwnChild => "one after another, on a child process of protocheck's own",
            Sent::Main => "one after another",
        };
        Judgement::pass(format!(
            "`logging/setLevel` to each of the eight levels, {how}, got empty results"
        ))
        .reply(debug)
        .reply(emergency)
    } else {
        let named: Vec<String> = bad.iter().map(|(p, _)| p.clone()).collect();
        let j = Judgement::fail(format!(
            "{} of the eight levels did not get an empty result: {}",
            bad.len(),
            some(&named, MAX_NAMED, "; ")
        ));
        bad.iter().fold(j, |j, (_, reply)| j.reply(reply))
    };
    match get {
        Some(get) => j.reply(get),
        None => j,
    }
}

/// The invalid levels MCP25-LOG-003 sends, one of each kind: a made-up
/// name, a common alias of a syslog level that the enumeration does not
/// hold, a number, and no `level` at all.
fn invalid_levels() -> [(Value, &'static str); 4] {
    [
        (
            json!({"level": "protocheck"}),
            "`logging/setLevel` to the undefined level `protocheck`",
        ),
        (
            json!({"level": "warn"}),
            "`logging/setLevel` to `warn` (an alias the eight levels do not hold; `warning` is)",
        ),
        (
            json!({"level": 4}),
            "`logging/setLevel` with the number 4 as `level`",
        ),
        (json!({}), "`logging/setLevel` without `level`"),
    ]
}

async fn invalid_level(s: &Session) -> Judgement {
    // One after another: a level a server wrongly accepted is its session's
    // from then on, the same on every run.
    let mut judged = Vec::new();
    for (params, what) in invalid_levels() {
        let reply = s.main.request("logging/setLevel", params).await;
        judged.push(preferred_code(&reply, -32602, what, ""));
    }
    let mut j = super::session::worst_of(judged);
    if j.kind == Kind::Pass {
        j.message = "`logging/setLevel` to `protocheck`, to `warn`, to the number 4 and without \
                     `level` each got error -32602"
            .to_owned();
    }
    j
}

/// Why a log notification is malformed, if it is.
fn message_problem(note: &Value) -> Option<String> {
    let Some(params) = note.get("params").and_then(Value::as_object) else {
        return Some("it has no `params` object".to_owned());
    };
    match params.get("level") {
        Some(Value::String(l)) if LEVELS.contains(&l.as_str()) => {}
        Some(Value::String(l)) => {
            return Some(format!(
                "its level `{}` is none of {}",
                clip(l, 40),
                LEVELS.join(", ")
            ));
        }
        Some(other) => {
            return Some(format!(
                "its `level` is a {}, not a string",
                type_name(other)
            ));
        }
        None => return Some("it has no `level`".to_owned()),
    }
    if !params.contains_key("data") {
        return Some("it has no `data`".to_owned());
    }
    match params.get("logger") {
        Some(l) if !l.is_string() => {
            Some(format!("its `logger` is a {}, not a string", type_name(l)))
        }
        _ => None,
    }
}

async fn message_shape(s: &Session) -> Judgement {
    let (notes, evidence, watched) = observed(s).await;
    if notes.is_empty() {
        let j = Judgement::skip(format!(
            "not applicable: the server sent no `notifications/message`{watched}"
        ));
        return evidence.iter().fold(j, Judgement::reply);
    }
    let bad: Vec<(String, &Exchange)> = notes
        .iter()
        .filter_map(|(n, at)| message_problem(n).map(|p| (format!("{p}: {}", quote(n)), at)))
        .collect();
    let j = if bad.is_empty() {
        let j = Judgement::pass(format!(
            "{} log notification(s), each with a defined `level` and `data`{watched}",
            notes.len()
        ));
        notes.iter().take(2).fold(j, |j, (_, at)| j.with(at))
    } else {
        let named: Vec<String> = bad.iter().map(|(b, _)| b.clone()).collect();
        let j = Judgement::fail(format!(
            "{} of {} log notification(s) are malformed: {}",
            bad.len(),
            notes.len(),
            some(&named, MAX_NAMED, "; ")
        ));
        bad.iter().take(2).fold(j, |j, (_, at)| j.with(at))
    };
    evidence.iter().fold(j, Judgement::reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::mcp2025::session::{Kind, unanswered as reply};

    #[tokio::test]
    async fn the_run_wide_rules_take_the_watch_at_debug_for_their_own() {
        // Over HTTP to a port nothing listens on: a watch of its own would
        // be a `ping` that gets no answer, and evidence of it.
        let s = Session::offline(json!({"logging": {}})).await;
        s.shared(|| async {
            Levels {
                debug: reply("setLevel debug"),
                window: Duration::from_millis(420),
                get: Some(reply("GET")),
                middle: Vec::new(),
                sent: Sent::Main,
                emergency: reply("setLevel emergency"),
            }
        })
        .await;
        let j = message_shape(&s).await;
        assert_eq!(j.kind, Kind::Skip, "{}", j.message);
        assert!(
            j.message.contains(
                "the GET stream was watched for 420 ms around `logging/setLevel` to `debug` \
                 (MCP25-LOG-002's probe)"
            ),
            "{}",
            j.message
        );
        let sent: Vec<&str> = j.evidence.iter().map(|e| e.request.body.as_str()).collect();
        assert_eq!(sent, ["setLevel debug", "GET"]);
    }

    #[test]
    fn log_messages_need_a_level_and_data() {
        let ok = json!({"method": "notifications/message",
            "params": {"level": "info", "logger": "db", "data": {"x": 1}}});
        assert_eq!(message_problem(&ok), None);
        let null_data = json!({"params": {"level": "debug", "data": null}});
        assert_eq!(message_problem(&null_data), None);
        for bad in [
            json!({"params": {"level": "verbose", "data": "x"}}),
            json!({"params": {"level": "info"}}),
            json!({"params": {"data": "x"}}),
            json!({"params": {"level": "info", "data": "x", "logger": 3}}),
            json!({}),
        ] {
            assert!(message_problem(&bad).is_some(), "{bad}");
        }
    }
}
