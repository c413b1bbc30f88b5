//! STD — the stdio transport (basic/transports#stdio): one message per
//! line, nothing but messages on stdout, and how the server ends when the
//! client closes stdin (basic/lifecycle#shutdown).

use super::client::{Shutdown, StdoutLines, Transport};
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Session};
use crate::suite::mcp::Keyword;
use crate::suite::{Exchange, Outcome, RequestRecord, ResponseRecord};
use futures::FutureExt;
use std::time::Duration;

/// How long the server has at least to exit after stdin is closed (digest,
/// D18).
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// The grace is also at least this many times what the same child took to
/// start and answer `initialize`: an interpreter's teardown slows with the
/// machine as its start-up does, and a fixed 5 s made the verdict of a
/// Python server depend on the machine's load (amending D18: "a reasonable
/// time" scales with what this child showed of the machine).
const EXIT_GRACE_PER_STARTUP: u32 = 2;
/// The longest grace, whatever the start-up took.
const EXIT_GRACE_CEILING: Duration = Duration::from_secs(30);
/// How long it has after SIGTERM before it is killed.
const TERM_GRACE: Duration = Duration::from_secs(2);

pub(crate) const ONE_LINE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-STD-001",
    "Each message on stdout is one line: no message spans several lines",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports#stdio"),
    "STD",
    |s| one_line(s).boxed(),
)
.says("messages are delimited by newlines and must not contain embedded newlines")
.help(
    "After every other rule, protocheck reviews how each child process it started framed its \
     stdout: a message that parses only once several lines are joined counts as spread over \
     several lines.",
    "The server pretty-prints its JSON, with indentation or newlines inside a message, usually \
     through a JSON encoder configured with an indent or a debugging option left on.",
    "Serialise each message compactly, without indentation, and write it followed by exactly one \
     newline; JSON escapes newlines inside strings, so a compact message never holds a raw \
     newline.",
)
.requires(&[])
.only_on(Transport::Stdio)
.run_wide();

pub(crate) const ONLY_MESSAGES: Mcp25Rule = Mcp25Rule::new(
    "MCP25-STD-002",
    "stdout carries nothing but valid MCP messages (no banners, log lines, blank noise)",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports#stdio"),
    "STD",
    |s| only_messages(s).boxed(),
)
.says("the server must not write anything to its stdout that is not a valid MCP message")
.help(
    "After every other rule, protocheck reviews what each child process it started wrote on \
     stdout: a non-empty line that is no JSON-RPC message (not JSON, or JSON that is no request, \
     notification, response or batch) fails, and empty lines are information. stderr is never \
     judged.",
    "The server prints a start-up banner, log lines or debug output on stdout, most often from \
     `print` or `console.log` calls, or a logging library whose default handler writes to stdout.",
    "Write only MCP messages to stdout; send logs and banners to stderr (configure the logging \
     handler explicitly), or use `notifications/message` for logs the client should see.",
)
.requires(&[])
.only_on(Transport::Stdio)
.run_wide();

pub(crate) const EXITS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-STD-003",
    "After protocheck closes stdin, the server exits on its own",
    Keyword::Should,
    Outcome::Info,
    spec!("/basic/lifecycle#shutdown"),
    "STD",
    |s| exits(s).boxed(),
)
.says(
    "a client ends a stdio session by closing the server's stdin and waiting for it to exit \
     before it sends SIGTERM, then SIGKILL",
)
.help(
    "protocheck starts a new child, sends `initialize` and `notifications/initialized`, then \
     closes its stdin and waits for the child to exit: the longer of 5 s and twice its start-up \
     time, at most 30 s. Then it sends SIGTERM and, 2 s later, SIGKILL.",
    "Reported as information: the server keeps running after its stdin closes, usually because a \
     background thread, timer or open connection keeps the process alive, or the read loop does \
     not treat end of file as the end of the session.",
    "Treat end of file on stdin as the end of the session: stop the read loop, cancel background \
     work such as timers and worker threads, close connections and exit with status 0.",
)
.requires(&[])
.only_on(Transport::Stdio);

pub(crate) const RULES: &[Mcp25Rule] = &[ONE_LINE, ONLY_MESSAGES, EXITS];

/// How every child of the run framed its stdout: those already closed, and
/// the run's own connection.
async fn all_lines(s: &Session) -> StdoutLines {
    let mut lines = s.client.stdout_lines();
    if let Some(main) = s.main.stdout_lines().await {
        lines.absorb(main);
    }
    lines
}

/// Evidence of what the server wrote on stdout: the lines quoted.
fn stdout_evidence(what: &str, lines: &[String]) -> Exchange {
    Exchange {
        request: RequestRecord {
            line: format!("stdout ({what})"),
            headers: Vec::new(),
            body: String::new(),
        },
        response: Some(ResponseRecord {
            status: None,
            headers: Vec::new(),
            body: lines.join("\n"),
            truncated: false,
            elapsed_ms: 0,
        }),
        error: None,
    }
}

async fn one_line(s: &Session) -> Judgement {
    let lines = all_lines(s).await;
    if lines.split_count == 0 {
        return Judgement::pass(format!(
            "each of the {} lines the server wrote on stdout held at most one whole message",
            lines.read
        ))
        .reply(&s.init);
    }
    let shown: Vec<String> = lines
        .split
        .iter()
        .map(|(n, first)| format!("{n} lines starting `{first}`"))
        .collect();
    let firsts: Vec<String> = lines.split.iter().map(|(_, first)| first.clone()).collect();
    Judgement::fail(format!(
        "{} message(s) on stdout only parsed once several lines were joined (pretty-printed \
         JSON?); write each message on a single line: {}",
        lines.split_count,
        shown.join("; ")
    ))
    .with(&stdout_evidence(
        "first lines of messages spread over several lines",
        &firsts,
    ))
}

async fn only_messages(s: &Session) -> Judgement {
    let lines = all_lines(s).await;
    if lines.stray_count > 0 {
        let shown: Vec<String> = lines.stray.iter().map(|l| format!("`{l}`")).collect();
        return Judgement::fail(format!(
            "{} line(s) on stdout were no JSON-RPC message (a message spread over several lines \
             is MCP25-STD-001's, not counted here); log to stderr instead: {}",
            lines.stray_count,
            shown.join(", ")
        ))
        .with(&stdout_evidence(
            "lines that are no JSON-RPC message",
            &lines.stray,
        ));
    }
    if lines.blank > 0 {
        return Judgement::info(format!(
            "the server wrote {} empty line(s) on stdout besides {} message lines; they carry no \
             message, though a newline-delimited reader skips them",
            lines.blank, lines.read
        ))
        .reply(&s.init);
    }
    Judgement::pass(format!(
        "all {} lines on stdout were JSON-RPC messages (stderr is never judged)",
        lines.read
    ))
    .reply(&s.init)
}

async fn exits(s: &Session) -> Judgement {
    let conn = match s.fresh().await {
        Ok(conn) => conn,
        Err(j) => return j,
    };
    let started = std::time::Instant::now();
    let init = conn.initialize(super::client::PROTOCOL_VERSION).await;
    let grace = EXIT_GRACE
        .max(started.elapsed() * EXIT_GRACE_PER_STARTUP)
        .min(EXIT_GRACE_CEILING);
    if init.result().is_some() {
        conn.initialized().await;
    }
    let j = match conn.shut_down(grace, TERM_GRACE).await {
        None => Judgement::skip("not applicable: no child process to shut down"),
        Some(Shutdown::Exited { after, status }) => Judgement::pass(format!(
            "after an initialized session, the server exited {} ms after its stdin was closed \
             ({status})",
            after.as_millis()
        )),
        Some(Shutdown::Terminated { status }) => Judgement::info(format!(
            "the server was still running {} s after its stdin was closed, and exited on \
             SIGTERM ({status}); a client has to signal it to end the session",
            grace.as_secs()
        )),
        Some(Shutdown::Killed) => Judgement::info(format!(
            "the server was still running {} s after its stdin was closed and {} s after \
             SIGTERM; it had to be killed",
            grace.as_secs(),
            TERM_GRACE.as_secs()
        )),
    };
    j.reply(&init)
}
