//! The `reference` profile (protocheck decision 2): the public harness
//! `conformance/check.py`, reproduced so a user can compare (digest §8). Its
//! 30 checks run in its order with its request ids and labels; its skip and
//! "inherit" rules certify the level; its honesty rule and exit semantics
//! make the verdict, quirks Q1–Q3 included:
//!
//! - Q1: check #27 sends `rerank {documents}` and accepts only `results`,
//!   `hits` or `ranking`, not the spec's `{passages}` → `{scores}`;
//! - Q2: a level whose checks are all skipped is inherited, so L2 can stand
//!   on an L1 where nothing applied;
//! - Q3: a missing or invalid `_meta.conformance` counts as honest.
//!
//! The headline is what the harness prints for the same server. Like the
//! harness, this profile never sends back a session token the server issued
//! (the harness sends no header but `Content-Type`), so on a server that
//! requires one its checks after `initialize` meet an uninitialized session
//! and it certifies nothing, as the harness does. Where the harness would
//! raise (a non-2xx status, a body that is not JSON, an answer or a member
//! it reads that is not an object) it stops before printing a level and
//! exits 1; this profile reports that check as failed, the rest as not
//! reached, and the verdict as the harness's stop.
//!
//! protocheck departs from the harness only where it must: it writes only
//! with `allow_writes` and under `protocheck-probe/` ids (decision 7), and it
//! pairs stdio replies by id where the harness reads the next line. Known
//! cases where the reproduction is not exact: a notification answered over
//! HTTP after the harness's 0.5 s timeout (the harness counts it as silent,
//! protocheck as an answer); `capabilities` that is a list or a string (read
//! here as empty; the harness tests membership in it, then raises at its
//! first `caps.get`); a 301–303 redirect (urllib follows it as a GET,
//! protocheck reports the status).
//!
//! After the harness, the `spec` profile runs on a second connection (a new
//! process for stdio) with its findings kept out of this report: that is
//! protocheck's own view (it sends the session token back, decision 5). The
//! comparison finding (RCP-REF-DIFF) states, sentence by sentence, only what
//! this run observed: the two verdicts, and the reasons the run can show.

use super::certify::{Honesty, Level};
use super::client::{Body, Connections, Notified, RcpClient};
use super::conversation::{Check, Conversation, Sent, exchange_of, outcome_words, show};
use super::{PROFILE_REFERENCE, SPEC_REVISION, SUITE_VERSION};
use crate::suite::context::{Endpoint, EngineError, Reporter, RunContext};
use crate::suite::{
    Finding, LevelReport, Outcome, Rule, SpecLevel, SuiteId, Verdict, VerdictDetail,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

mod checks;
mod differences;

const fn check(
    id: &'static str,
    title: &'static str,
    group: &'static str,
    spec_ref: &'static str,
) -> Rule {
    Rule {
        id,
        title,
        level: SpecLevel::Must,
        on_failure: Outcome::Fail,
        spec_ref,
        group,
        help: crate::suite::Help::NONE,
    }
}

// The labels are the harness's, verbatim (digest §8).
pub const INFO_BEFORE_INIT: Rule = check(
    "RCP-REF-01",
    "info answers before initialize",
    "L0",
    "harness #1; RCP/1 §14.1(1)",
)
.help(
    "Harness check #1, the run's first request: protocheck sends `info` with id 0 and empty \
     params before any `initialize` (over HTTP a POST to `<base>/info` on a fresh connection, \
     with no session), and passes when the result has a `server` member that is not null.",
    "Most often the server gates `info` behind `initialize` and answers -32001, or puts its \
     identity under another key (`serverInfo`, a top-level `name`). A non-2xx status or a body \
     that is not JSON makes the harness stop here: this check fails and every later one is not \
     reached.",
    "Answer `info` at any time, before `initialize` too, with the shape of the `initialize` \
     result: `protocolVersion`, `capabilities` and a `server` object with its `name`. Keep \
     `info`, `ping` and `shutdown` outside the initialization gate.",
);
pub const PING_NONCE: Rule = check(
    "RCP-REF-02",
    "ping answers before initialize and echoes nonce",
    "L0",
    "harness #2; RCP/1 §14.1(1)",
)
.help(
    "Harness check #2: before `initialize`, protocheck sends `ping` with id 100 and params \
     `{nonce: 777}`, and passes when `result.nonce` is the number 777 (777.0 compares equal; \
     the string `777` does not).",
    "Usually the server gates `ping` behind `initialize` (-32001), answers with an empty result \
     or a fixed `pong` instead of echoing, or turns the nonce into a string on the way back. An \
     HTTP error status or a body that is not JSON stops the harness here.",
    "Answer `ping` at any time with a result that echoes the `nonce` param unchanged, same JSON \
     type and value (here `{nonce: 777}`), and keep `ping` outside the initialization gate.",
);
pub const PRE_INIT_REJECTED: Rule = check(
    "RCP-REF-03",
    "pre-initialize call rejected with -32001",
    "L0",
    "harness #3; RCP/1 §14.1(3)",
)
.help(
    "Harness check #3: before `initialize`, protocheck sends `retrieve` with id 1 (query `x`, \
     `k` 1) and passes when the answer is an error with code -32001 (NotInitialized).",
    "Usually the server does not gate at all (a stateless HTTP server answers with hits), \
     checks the capability before the gate (-32003), or was already initialized by an earlier \
     run against the same long-lived process, which the harness counts as a failure too.",
    "Until a successful `initialize`, answer every method except `info`, `ping` and `shutdown` \
     with -32001, before any other check. Over HTTP, run against a freshly started server: the \
     harness expects one initialized state for the whole process.",
);
pub const NOTIFY_GATED: Rule = check(
    "RCP-REF-04",
    "notification (no id) for a gated method is not answered",
    "L0",
    "harness #4; RCP/1 §4.5",
)
.help(
    "Harness check #4: before `initialize`, protocheck sends `retrieve` (query `x`, `k` 1) as a \
     notification, a frame with no `id`. Over HTTP a 204, a body that is not JSON, a non-2xx \
     status or no answer counts as silence; over stdio protocheck waits 0.5 s and any line is \
     an answer.",
    "Most often the server runs its initialization gate before it looks for an `id` and answers \
     the notification with a -32001 error, or its HTTP handler always writes a JSON-RPC body \
     (an error with a null id) with status 200.",
    "Check for a missing `id` first and drop the frame without writing anything: no line over \
     stdio, and over HTTP a 204 No Content (or a 202 with an empty body). A notification is \
     never answered, whatever its method or the session's state.",
);
pub const NOTIFY_OPEN: Rule = check(
    "RCP-REF-05",
    "notification (no id) for an open method is not answered",
    "L0",
    "harness #5; RCP/1 §4.5",
)
.help(
    "Harness check #5: before `initialize`, protocheck sends `info` with empty params as a \
     notification (no `id`) and judges silence as in check #4: over HTTP a 204, a body that is \
     not JSON or an error status; over stdio no line within 0.5 s.",
    "Most often the server handles the open methods (`info`, `ping`) before it looks for an \
     `id`, so it writes the `info` result back, usually with a null id; over HTTP, a handler \
     that always serializes its return value does the same.",
    "Decide on the missing `id` before dispatching: a frame without `id` is a notification and \
     gets no reply at all, even for `info` and `ping`; over HTTP answer it with 204 and no \
     body.",
);
pub const NOTIFY_UNKNOWN: Rule = check(
    "RCP-REF-06",
    "notification (no id) for an unknown method is not answered",
    "L0",
    "harness #6; RCP/1 §4.5",
)
.help(
    "Harness check #6: before `initialize`, protocheck sends the undefined method \
     `does/not/exist` with empty params and no `id`, and judges silence as in check #4: over \
     HTTP a 204, a body that is not JSON or an error status; over stdio no line within 0.5 s.",
    "Usually the server answers the unknown method with an error (-32004, -32601 or -32001) \
     before checking whether the frame is a notification; some JSON-RPC libraries reply to a \
     method-not-found even without an `id`.",
    "Ignore unknown notifications: when a frame has no `id`, drop it without a reply before \
     method lookup or gating, and over HTTP return 204 with an empty body.",
);
pub const NOTIFY_CANCEL: Rule = check(
    "RCP-REF-07",
    "notifications/cancel is not answered",
    "L0",
    "harness #7; RCP/1 §7.14",
)
.help(
    "Harness check #7: before `initialize`, protocheck sends `notifications/cancel` with `{id: \
     12345}`, an id no request ever had, as a notification, and passes on silence as in check \
     #4: over HTTP a 204, a body that is not JSON or an error status; over stdio no line within \
     0.5 s.",
    "Usually the server answers the cancel with an error because the id is unknown or the \
     session is not initialized, or handles `notifications/cancel` like a request and returns a \
     result; over HTTP, a handler that always writes a JSON body.",
    "Treat `notifications/cancel` for an unknown or already-answered id as a no-op and write \
     nothing back, before any gate; over HTTP answer it with 204 and no body.",
);
pub const VERSION_REJECTED: Rule = check(
    "RCP-REF-08",
    "initialize with an unsupported version rejected with -32002",
    "L0",
    "harness #8; RCP/1 §7.1",
)
.help(
    "Harness check #8: protocheck sends `initialize` with id 200, `protocolVersion` 0 and the \
     harness's client identity (no `capabilities`), and passes when the answer is an error with \
     code -32002 (VersionMismatch).",
    "Most often the server accepts version 0 and initializes (negotiating `min(client, server)` \
     without a floor of 1), or rejects the request as invalid params (-32602) because \
     validation runs before negotiation; some also reject the missing `capabilities`.",
    "Negotiate `min(client, server)` and, when there is no common version >= 1 (a client \
     sending 0), answer -32002 VersionMismatch without initializing the session; treat \
     `capabilities` in the params as optional.",
);
pub const FAILED_HANDSHAKE: Rule = check(
    "RCP-REF-09",
    "a failed handshake leaves the session uninitialized",
    "L0",
    "harness #9; RCP/1 §13",
)
.help(
    "Harness check #9, sent only when #8 passed (otherwise it is not reported at all): after \
     the rejected handshake, protocheck sends `retrieve` with id 201 (query `x`, `k` 1) and \
     passes when the answer is an error with code -32001.",
    "Most often the server marks the session initialized when `initialize` arrives rather than \
     when it succeeds, so the failed handshake opened it; a stateless HTTP server, which treats \
     every request as initialized, fails here too.",
    "Set the initialized state only once `initialize` has succeeded: a handshake rejected with \
     -32002 leaves gated methods answering -32001, and a later `initialize` may still succeed.",
);
pub const PROTOCOL_VERSION: Rule = check(
    "RCP-REF-10",
    "initialize returns protocolVersion >= 1",
    "L0",
    "harness #10; RCP/1 §7.1",
)
.help(
    "Harness check #10: protocheck sends `initialize` with id 2, `protocolVersion` 1, the \
     harness's client identity and empty `capabilities`, and passes when \
     `result.protocolVersion` is a number >= 1. Checks #11 to #30 read this result; a version \
     that is not a number makes the harness stop here.",
    "Usually the version is missing or a string such as `1.0`, or `initialize` got an error, \
     most often -32600 because an earlier run left a long-lived server initialized. When this \
     request gets no answer, an HTTP error or no JSON, every later check is not reached.",
    "Answer `initialize` with the negotiated version as a JSON integer (1 for this client) \
     beside `server` and `capabilities`. Restart a long-lived HTTP server before a run: its \
     initialized state outlives the harness's connections.",
);
pub const RETRIEVAL_CAPABILITY: Rule = check(
    "RCP-REF-11",
    "advertises at least one retrieval capability",
    "L0",
    "harness #11; RCP/1 §14.1(2)",
)
.help(
    "Harness check #11 reads `capabilities` in the `initialize` (id 2) result and passes when \
     it has at least one of the keys `embed`, `rerank`, `retrieve` or `graph`, whatever the \
     value. A null `capabilities` makes the harness stop here; a list or a string is read as \
     empty.",
    "Usually the server advertises its features under other names or nests them (for example a \
     `search` key, or everything inside one object), returns an empty `capabilities`, or the \
     `initialize` of check #10 failed, leaving no result to read.",
    "List each supported feature as a top-level key of `initialize.result.capabilities` with \
     its metadata object, for example `retrieve: {maxK, modes}`; a key's presence is what \
     advertises it, so include at least one of the four retrieval keys.",
);
pub const SERVER_IDENTITY: Rule = check(
    "RCP-REF-12",
    "server identity present",
    "L0",
    "harness #12; RCP/1 §7.1",
)
.help(
    "Harness check #12 reads the `initialize` (id 2) result and passes when `server.name` is \
     present and not empty (truthy, as the harness reads it). A `server` member that is not an \
     object makes the harness stop here.",
    "Most often the identity is under another key (`serverInfo`, a top-level `name`), `name` is \
     an empty string, or `initialize` answered an error, so the result read is empty.",
    "Return a `server` object in the `initialize` result with a non-empty string `name` (the \
     server's product name) and a `version`, and the same object in `info`; renaming a \
     `serverInfo` member to `server` is often all it takes.",
);
pub const REPEAT_INIT: Rule = check(
    "RCP-REF-13",
    "repeated initialize after success rejected with -32600",
    "L0",
    "harness #13; RCP/1 §7.1",
)
.help(
    "Harness check #13: after the successful `initialize`, protocheck sends `initialize` again \
     with the string id `reinit` and the same params, and passes when the answer is an error \
     with code -32600 (InvalidRequest). Like every harness request, it goes on a new connection \
     with no session token.",
    "Usually the server accepts a second `initialize` and renegotiates, or answers another code \
     (-32002, -32603). A server that keeps its handshake per connection or per session token \
     sees a new, uninitialized session here, accepts the handshake and fails.",
    "After a successful `initialize`, answer any further `initialize` with -32600. Over HTTP \
     the harness passes only a server that keeps one initialized state for the whole process, \
     since it opens a connection per request and never sends `RCP-Session`.",
);
pub const UNKNOWN_METHOD: Rule = check(
    "RCP-REF-14",
    "unknown method rejected with -32004",
    "L0",
    "harness #14; RCP/1 §14.1(4)",
)
.help(
    "Harness check #14: after `initialize`, protocheck sends the undefined method \
     `does/not/exist` with id 3 and empty params, and passes when the answer is an error with \
     code -32004 (UnknownMethod).",
    "Most often the server answers the JSON-RPC default -32601 (MethodNotFound), which RCP \
     reserves, or -32003. -32001 here usually means the server did not see the session as \
     initialized: the harness opens a new connection per request and sends no session token.",
    "Answer methods RCP does not define with -32004, after the initialization gate; when a \
     JSON-RPC library produces the method-not-found error, map its -32601 to -32004.",
);
pub const UNADVERTISED_METHOD: Rule = check(
    "RCP-REF-15",
    "un-advertised method rejected with -32003",
    "L0",
    "harness #15; RCP/1 §14.1(4)",
)
.help(
    "Harness check #15, run only when `capabilities` has no `index` key (otherwise skipped): \
     protocheck sends `index/add` with id 4 and `{documents: []}`, and passes when the answer \
     is an error with code -32003 (CapabilityMissing).",
    "Usually the server treats a method it does not implement as unknown (-32004 or -32601), \
     validates the params first and rejects the empty `documents` with -32602, or answers \
     -32001 because the new connection carries no initialized session.",
    "Keep a table of the methods RCP defines: for one whose capability the server does not \
     advertise, answer -32003 before validating params, and keep -32004 for names RCP does not \
     define.",
);
pub const STRING_ID: Rule = check(
    "RCP-REF-16",
    "response echoes a string id unchanged",
    "L0",
    "harness #16; RCP/1 §4.7",
)
.help(
    "Harness check #16: protocheck sends `info` with the string id `str-id-1` and empty params, \
     and passes when the reply's `id` is exactly the string `str-id-1`; check #17 judges the \
     same reply. A reply that is not a JSON object makes the harness stop here.",
    "Usually the server converts ids to numbers, replies with a null id (often from an error \
     path that lost the request), or numbers its responses from a counter of its own instead of \
     echoing the request's id.",
    "Copy the request's `id` into the response unchanged, same JSON type and value, on results \
     and errors alike; never parse or normalise it, and keep string ids strings even when they \
     look like numbers.",
);
pub const JSONRPC_VERSION: Rule = check(
    "RCP-REF-17",
    "responses carry jsonrpc=2.0",
    "L0",
    "harness #17; RCP/1 §4",
)
.help(
    "Harness check #17 sends nothing of its own: it reads the reply to check #16 (`info` with \
     id `str-id-1`) and passes when its `jsonrpc` member is exactly the string `2.0`.",
    "Usually the server omits `jsonrpc`, for example when it writes the result object by hand \
     instead of a full response envelope, or sends it as a number or another version string.",
    "Wrap every response, results and errors alike, in the JSON-RPC 2.0 envelope: `jsonrpc` set \
     to the string `2.0`, the request's `id`, and exactly one of `result` or `error`.",
);
pub const HITS_ARRAY: Rule = check(
    "RCP-REF-18",
    "retrieve returns a ranked 'hits' array",
    "L1",
    "harness #18; RCP/1 §7.7",
)
.help(
    "Harness check #18, skipped when `capabilities` has no `retrieve` key (#19 to #25 are then \
     not run): protocheck sends `retrieve` with id 5, query `test` and `k` 3, and passes when \
     `result.hits` is a list. Checks #19 to #22 judge the same reply, only when it is.",
    "Usually the server names the list differently (`results`, `documents`), wraps it in \
     another object, or answers an error: -32001 when it keeps its handshake per connection or \
     per session token, which the harness never carries, or -32010 when its index is not ready.",
    "Answer `retrieve` with `result.hits`, an array of hit objects best first (an empty array \
     when nothing matches), and have the index loaded before the run starts, so that no call \
     answers -32010.",
);
pub const K_CEILING: Rule = check(
    "RCP-REF-19",
    "retrieve honours the k ceiling",
    "L1",
    "harness #19; RCP/1 §7.7",
)
.help(
    "Harness check #19 counts the hits in the reply to check #18 (`retrieve` with `k` 3) and \
     passes when there are at most 3; it runs only when `hits` is a list.",
    "Usually the server ignores `k` and returns its default page size, or applies `k` before a \
     later stage (fusion of several lists, chunk expansion, reranking) adds hits back.",
    "Cut the final, ranked list to `k` hits as the last step, after fusion, reranking and any \
     expansion; `k` is a ceiling on the number of hits returned, whatever the server's default.",
);
pub const ID_AND_SCORE: Rule = check(
    "RCP-REF-20",
    "every hit carries an id and a numeric score",
    "L1",
    "harness #20; RCP/1 §7.7",
)
.help(
    "Harness check #20 reads every hit in the reply to check #18 and passes when each is an \
     object with an `id` member and a `score` that is a JSON number (a string or a boolean does \
     not count); it runs only when `hits` is a list.",
    "Most often the score is missing, null or a string, or is named differently (`relevance`, \
     `distance`, only inside `scores`), or the hit names its id differently (`docId`, \
     `chunkId`).",
    "Give every hit an `id` (string or number) and a numeric `score`, higher meaning more \
     relevant; extra fields such as `scores`, `text` or `meta` may stay beside them.",
);
pub const DESCENDING: Rule = check(
    "RCP-REF-21",
    "hits are ordered by descending score",
    "L1",
    "harness #21; RCP/1 §14.2",
)
.help(
    "Harness check #21 reads the `score` of each hit in the reply to check #18, in order \
     (numbers, with booleans as 0 and 1; other values left out), and passes when no score is \
     higher than the one before it; it runs only when `hits` is a list.",
    "Usually the server returns a distance, where lower is better, in ascending order, or \
     reorders hits (fusion, reranking) without carrying the final score along, so the list is \
     ranked but its scores are not.",
    "Sort hits by descending `score` and make the score follow the ranking: turn a distance \
     into a similarity (for example 1 minus the cosine distance) and report the score of the \
     stage that produced the final order.",
);
pub const UNIQUE_IDS: Rule = check(
    "RCP-REF-22",
    "hit ids are unique within a result",
    "L1",
    "harness #22; RCP/1 §7.7",
)
.help(
    "Harness check #22 reads the `id` of each hit object in the reply to check #18 (a missing \
     id counts as null) and passes when no two are equal as JSON values; it runs only when \
     `hits` is a list.",
    "Usually several chunks of one document carry the document's id, or hybrid fusion \
     concatenates the dense and sparse lists without merging the hits they share.",
    "Merge hits with the same id during fusion (one hit, with the fused score), and give chunks \
     ids of their own, for example the document id with a chunk suffix, keeping the document's \
     id in `chunk.docId`.",
);
pub const MAX_K_CLAMPED: Rule = check(
    "RCP-REF-23",
    "k above maxK is clamped, not rejected",
    "L1",
    "harness #23; RCP/1 §7.7",
)
.help(
    "Harness check #23, run only when `capabilities.retrieve.maxK` is an integer >= 1 \
     (otherwise skipped): protocheck sends `retrieve` with id 6, query `test` and `k` set to \
     `maxK` + 1000, and passes when `result.hits` is a list of at most `maxK` hits.",
    "Most often the server validates `k` against `maxK` and rejects it with -32602, or passes \
     the large `k` through and returns more than `maxK` hits. A `maxK` advertised as a float \
     such as `100.0` makes the check skip.",
    "Clamp silently: run the query with `min(k, maxK)` and answer normally, rejecting only a \
     `k` that is not an integer >= 1. Advertise `maxK` as an integer.",
);
pub const NEGATIVE_K: Rule = check(
    "RCP-REF-24",
    "negative k rejected with -32602",
    "L1",
    "harness #24; RCP/1 §14.1(5)",
)
.help(
    "Harness check #24, run whenever `retrieve` is advertised: protocheck sends `retrieve` with \
     id 7, query `test` and `k` -5, and passes when the answer is an error with code -32602 \
     (InvalidParams).",
    "Usually the server clamps the negative `k` to a default or to 0 and answers hits, or fails \
     inside the backend and answers -32603. A non-2xx HTTP status or a body that is not JSON \
     makes the harness stop here.",
    "Validate `k` before running the query: when it is present and not an integer >= 1, answer \
     -32602 with `data.field` set to `k`. Do the same for `candidateK` and `topN`.",
);
pub const FUNNEL: Rule = check(
    "RCP-REF-25",
    "funnel violation (candidateK < k) rejected with -32602",
    "L1",
    "harness #25; RCP/1 §7.7",
)
.help(
    "Harness check #25, run whenever `retrieve` is advertised: protocheck sends `retrieve` with \
     id 8, query `test`, `k` 10 and `candidateK` 2, and passes when the answer is an error with \
     code -32602.",
    "Most often the server ignores `candidateK` (it has no separate candidate stage) or \
     silently raises it to `k`, and answers hits; a server with a funnel may also clamp the \
     values instead of rejecting them.",
    "Check the funnel `candidateK >= rerank.topN >= k` on every `retrieve` and answer a \
     violation with -32602 and `data.field`, even when the server has no separate candidate \
     stage.",
);
pub const HYBRID: Rule = check(
    "RCP-REF-26",
    "advertised hybrid mode returns hits",
    "L2",
    "harness #26; RCP/1 §7.7",
)
.help(
    "Harness check #26, run only when `capabilities.retrieve.modes` holds `hybrid` (a list with \
     it, or a string containing it; otherwise skipped): protocheck sends `retrieve` with id 9, \
     query `test`, `k` 3 and `mode` `hybrid`, and passes when `result.hits` is a list.",
    "Usually the server advertises `hybrid` without serving it and answers -32005 or -32602, \
     its sparse side is not ready (-32010), or the hybrid path returns its list under another \
     key.",
    "Advertise in `modes` only what `retrieve` serves: for `hybrid`, fuse the dense and sparse \
     lists and return them as `hits` like any other mode, or drop `hybrid` from `modes`.",
);
pub const RERANK: Rule = check(
    "RCP-REF-27",
    "rerank returns a scored ordering",
    "L2",
    "harness #27 (not the spec's shape: digest Q1); RCP/1 §7.6",
)
.help(
    "Harness check #27, run only when `capabilities` has a `rerank` key: protocheck sends \
     `rerank` with id 10, query `test`, two `documents` strings and `topN` 2, and passes when \
     the first non-empty of `result.results` and `result.hits`, else `result.ranking`, is a \
     list. This is the harness's shape, not the spec's.",
    "Usually the server follows the spec: it requires `passages` and answers -32602, or returns \
     `scores` and `order`, which the harness does not read. An empty `results` list with no \
     `ranking` list fails too.",
    "To pass here as well as under the `spec` profile, accept `documents` as an alias of \
     `passages` and return a `results` list (for example `{index, score}` items, best first) \
     beside `scores` and `order`.",
);
pub const INDEX_ADD_IDS: Rule = check(
    "RCP-REF-28",
    "index/add returns positional ids (one per document)",
    "L2",
    "harness #28; RCP/1 §7.10",
)
.help(
    "Harness check #28, run only when `capabilities.index.writable` is `true` and the run \
     allows writes: protocheck sends `index/add` with id 20 and one document, id \
     `protocheck-probe/rcp-conf://upsert` with a short text, and passes when `result.ids` is a \
     list of exactly one id.",
    "Usually the server returns a count or a status instead of `ids`, returns one id per chunk, \
     or rejects the client-chosen id (its slash or colon) with -32602; -32001 means the server \
     did not see the new connection as initialized.",
    "Answer `index/add` with `ids`, one per input document in input order, keeping the id the \
     client gave; report chunk ids separately, in `chunks`, if needed.",
);
pub const INDEX_UPSERT: Rule = check(
    "RCP-REF-29",
    "index/add re-adding an id upserts or rejects with -32016",
    "L2",
    "harness #29; RCP/1 §7.10",
)
.help(
    "Harness check #29: protocheck sends `index/add` with id 21 for the same document id with a \
     new text, and passes when the answer has no `error` member or its error code is -32016 \
     (Conflict).",
    "Most often a duplicate-key violation in the store escapes as -32603 (InternalError), or \
     the duplicate is rejected with -32602 or -32600 instead of -32016; -32001 means the new \
     connection was not seen as initialized.",
    "Re-adding an existing id either replaces the document (an upsert, the common choice) or is \
     rejected with -32016 Conflict; catch the store's duplicate-key error and map it to one of \
     the two.",
);
pub const INDEX_DELETE_IDEMPOTENT: Rule = check(
    "RCP-REF-30",
    "index/delete is idempotent (repeat returns deleted:0)",
    "L2",
    "harness #30; RCP/1 §7.11",
)
.help(
    "Harness check #30: protocheck sends `index/delete` for the probe document's id with id 22, \
     then again with id 23, and passes when the second answer's `result.deleted` equals 0; the \
     first answer is read only for the harness's stop conditions.",
    "Usually the repeat delete answers an error such as -32015 for the absent id, or `deleted` \
     counts the ids requested rather than the documents removed, or is missing or named \
     differently.",
    "Answer `index/delete` with `deleted`, the number of documents actually removed: 0 on a \
     repeat, and never an error for ids that are not there, so that a client can retry a delete \
     safely.",
);
/// Not a harness check: where the `spec` profile would judge differently.
pub const PROFILE_DIFFERENCES: Rule = Rule {
    id: "RCP-REF-DIFF",
    title: "where the `spec` profile judges this server differently",
    level: SpecLevel::May,
    on_failure: Outcome::Info,
    spec_ref: "protocheck decision 2",
    group: "comparison",
    help: crate::suite::Help {
        probe: "After the harness's checks, protocheck runs the `spec` profile on a connection \
                of its own (a new process for stdio) and compares. The finding states both \
                verdicts and, only where this run saw them, why they differ: a session token, \
                the `rerank` shape, L2 without L1, the declaration, an already initialized \
                server, skipped writes.",
        failure: "This finding is information only and never fails a run. Its sentences say \
                  where the harness and protocheck judge the server differently, most often on \
                  the `rerank` shape, a missing `_meta.conformance`, or a session token the \
                  harness never sends back.",
        fix: "Nothing needs fixing for this finding itself. To bring the two verdicts together, \
              fix what each sentence names, following the spec section it cites; the `spec` \
              profile's own findings show the details.",
    },
};

/// The harness's 30 checks, in its order.
pub static RULES: &[Rule] = &[
    INFO_BEFORE_INIT,
    PING_NONCE,
    PRE_INIT_REJECTED,
    NOTIFY_GATED,
    NOTIFY_OPEN,
    NOTIFY_UNKNOWN,
    NOTIFY_CANCEL,
    VERSION_REJECTED,
    FAILED_HANDSHAKE,
    PROTOCOL_VERSION,
    RETRIEVAL_CAPABILITY,
    SERVER_IDENTITY,
    REPEAT_INIT,
    UNKNOWN_METHOD,
    UNADVERTISED_METHOD,
    STRING_ID,
    JSONRPC_VERSION,
    HITS_ARRAY,
    K_CEILING,
    ID_AND_SCORE,
    DESCENDING,
    UNIQUE_IDS,
    MAX_K_CLAMPED,
    NEGATIVE_K,
    FUNNEL,
    HYBRID,
    RERANK,
    INDEX_ADD_IDS,
    INDEX_UPSERT,
    INDEX_DELETE_IDEMPOTENT,
];

/// Every rule of the `reference` profile: the 30 checks and the comparison.
pub fn rules() -> Vec<&'static Rule> {
    RULES
        .iter()
        .chain(std::iter::once(&PROFILE_DIFFERENCES))
        .collect()
}

/// Where the harness raised and stopped (see the module comment).
#[derive(Debug)]
pub(crate) struct Stop {
    /// Where, in words: a check's id, or the request after the checks.
    pub at: String,
    /// The check that fails there, when the exception is in its own reading.
    pub rule: Option<&'static Rule>,
    /// The Python exception, in words.
    pub why: String,
    pub exchange: crate::suite::Exchange,
    /// The failing check has been reported.
    pub reported: bool,
}

/// What the harness run saw that the verdict and the comparison need.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// The `initialize` (id 2) result, or `{}` as the harness reads a failure.
    pub init: Map<String, Value>,
    /// What `initialize` (id 2) was answered with, in words.
    pub init_answer: Option<String>,
    /// `initialize` (id 2) has been sent.
    pub init_sent: bool,
    /// `_meta.conformance` as the harness reads it (from `initialize`).
    pub declared: Option<Value>,
    /// `_meta.conformance` in the `info` results (by request id), which the
    /// harness does not read.
    pub info_declared: Vec<(&'static str, Option<Value>)>,
    /// `initialize` returned `_meta.session`, which the harness never sends back.
    pub session_token: bool,
    /// Checks after `initialize` whose answer was -32001 (NotInitialized).
    pub gated_after_init: Vec<&'static str>,
    /// What #27 was answered with, and whether that was -32001.
    pub rerank_answer: Option<(String, bool)>,
    /// #3 got an answer other than -32001 and `initialize` got -32600: the
    /// server was already initialized when the run started.
    pub already_initialized: bool,
    pub writes_allowed: bool,
    /// The target is reached over HTTP (else a stdio command, which the
    /// `spec` profile starts anew for its own view).
    pub http: bool,
    /// The harness would have raised here.
    pub stopped: Option<Stop>,
}

/// The `_meta.conformance` of a result, as the harness reads it:
/// `(res.get("_meta", {}) or {}).get("conformance")`, `None` for null.
fn declaration_in(result: &Map<String, Value>) -> Option<Value> {
    result
        .get("_meta")
        .filter(|m| truthy(Some(m)))
        .and_then(|m| m.get("conformance"))
        .filter(|c| !c.is_null())
        .cloned()
}

/// Why the harness's `t.raw(...)` would raise on `sent`, or on the `.get`
/// calls its check makes on the members named in `reads`.
fn harness_stops(sent: &Sent, reads: &[&str]) -> Option<String> {
    let reply = match sent {
        Err(failure) => {
            return Some(format!(
                "no answer ({}); the harness has no timeout of its own and would wait or raise",
                failure.error
            ));
        }
        Ok(reply) => reply,
    };
    if let Some(status) = reply.status
        && !(200..300).contains(&status)
    {
        return Some(format!(
            "HTTP {status}: `urlopen` raises HTTPError for a status outside 2xx"
        ));
    }
    let value = match &reply.body {
        Body::Empty => return Some("an empty answer: `json.loads` raises".to_owned()),
        Body::NotJson => return Some("an answer that is not JSON: `json.loads` raises".to_owned()),
        Body::TooLarge { limit } => {
            return Some(format!(
                "an answer over protocheck's {limit}-byte limit, which protocheck does not read, so it cannot \
                 tell what the harness would make of it"
            ));
        }
        Body::Json(v) => v,
    };
    let Some(obj) = value.as_object() else {
        return Some(format!(
            "the answer {} is not an object: `r.get` raises AttributeError",
            show(value)
        ));
    };
    reads.iter().find_map(|key| {
        obj.get(*key)
            .filter(|v| !v.is_object())
            .map(|v| format!("`{key}` is {}, not an object: `.get` on it raises", show(v)))
    })
}

impl Observed {
    pub fn caps(&self) -> Map<String, Value> {
        self.init
            .get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }
}

/// Python truthiness of a JSON value, as the harness's `bool(...)` and `or`
/// read it.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// `error.code == code` as Python compares numbers (-32001 == -32001.0).
fn has_code(sent: &Sent, code: i64) -> bool {
    sent.as_ref()
        .ok()
        .and_then(|r| r.json())
        .and_then(|v| v.get("error"))
        .and_then(|e| e.get("code"))
        .and_then(Value::as_f64)
        .is_some_and(|c| c == code as f64)
}

/// `r.get("result", {})` as the harness reads it: the result object, or empty.
fn result_map(sent: &Sent) -> Map<String, Value> {
    sent.as_ref()
        .ok()
        .and_then(|r| r.json())
        .and_then(|v| v.get("result"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The harness's certification (digest §8): levels in order; a level with at
/// least one applicable check, all passed, is certified; a failure stops; a
/// level whose checks are all skipped is inherited (Q2).
pub fn certify(findings: &[Finding]) -> Level {
    let mut best = Level::None;
    for (group, level) in [("L0", Level::L0), ("L1", Level::L1), ("L2", Level::L2)] {
        let outcomes: Vec<Outcome> = findings
            .iter()
            .filter(|f| RULES.iter().any(|r| r.id == f.rule_id && r.group == group))
            .map(|f| f.outcome)
            .filter(|o| *o != Outcome::Skip)
            .collect();
        if outcomes.contains(&Outcome::Fail) {
            break;
        }
        if !outcomes.is_empty() {
            best = level;
        }
    }
    best
}

/// The harness's honesty rule (Q3): only a valid declaration can be dishonest.
pub fn harness_honest(declared: Option<&Value>, certified: Level) -> bool {
    match declared.and_then(Value::as_str).and_then(Level::declared) {
        Some(d) => certified != Level::None && d <= certified,
        None => true,
    }
}

/// protocheck's own view: the `spec` profile's verdict and findings, from a
/// run on a second connection right after the harness.
pub(crate) struct SpecView {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

impl SpecView {
    pub fn level(&self) -> &str {
        match &self.verdict.detail {
            VerdictDetail::Rcp {
                certified_level, ..
            } => certified_level,
            _ => "none",
        }
    }

    pub fn outcome(&self, rule: &Rule) -> Option<Outcome> {
        self.findings
            .iter()
            .rev()
            .find(|f| f.rule_id == rule.id)
            .map(|f| f.outcome)
    }
}

/// Runs the `spec` profile with its findings kept out of the report.
async fn spec_view(endpoint: &Endpoint, ctx: &RunContext) -> Result<SpecView, String> {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let mut reporter = Reporter::new(tx);
    let verdict = super::run_spec(endpoint, ctx, &mut reporter).await;
    let findings = reporter.findings().to_vec();
    drop(reporter);
    let _ = drain.await;
    match verdict {
        Ok(verdict) => Ok(SpecView { verdict, findings }),
        Err(e) => Err(crate::transport::excerpt(e.to_string().as_bytes(), 200).0),
    }
}

/// Runs the `reference` profile: the harness, then the `spec` profile's
/// view for the comparison.
pub(crate) async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    let mut observed = Observed {
        writes_allowed: ctx.options.writes_allowed(),
        http: matches!(endpoint, Endpoint::Http(_)),
        ..Observed::default()
    };
    // The harness's `urllib` opens a connection per request and closes it.
    let mut client = RcpClient::connect_with(endpoint, ctx, Connections::PerRequest).await?;
    let harness = {
        let mut conv = Conversation::new(&mut client, reporter);
        checks::run(&mut conv, &mut observed).await
    };
    let spoke = client.spoke_jsonrpc();
    client.close().await;
    harness?;
    let spec = spec_view(endpoint, ctx).await;

    let findings = reporter.findings().to_vec();
    // Python exits 1 on an uncaught exception, before the summary lines: no
    // level is printed. The verdict records it as none.
    let certified = if observed.stopped.is_some() {
        Level::None
    } else {
        certify(&findings)
    };
    let declared = observed.declared.clone();
    let honest = observed.stopped.is_none() && harness_honest(declared.as_ref(), certified);
    let declared_text = declared.as_ref().map(|d| match d {
        Value::String(s) => crate::transport::excerpt(s.as_bytes(), 32).0,
        other => crate::transport::excerpt(other.to_string().as_bytes(), 32).0,
    });
    let differences = differences::list(&findings, &observed, certified, honest, &spec);
    let mut diff = Check::new(&PROFILE_DIFFERENCES);
    if let Some(stop) = &observed.stopped {
        diff.keep(stop.exchange.clone());
    }
    reporter
        .emit(diff.finding(Outcome::Info, differences.join(" ")))
        .await?;

    let findings = reporter.findings();
    let counts = reporter.counts();
    let honesty = if observed.stopped.is_some() {
        Honesty::judge(declared_text.as_deref(), certified)
    } else if honest {
        match Honesty::judge(declared_text.as_deref(), certified) {
            // The harness's rule, not the spec profile's, decides.
            Honesty::Overclaimed => Honesty::Consistent,
            other => other,
        }
    } else {
        Honesty::Overclaimed
    };
    let summary = match &observed.stopped {
        // The harness prints neither a level nor a declaration verdict.
        Some(stop) => format!("harness stops at {}: {}", stop.at, stop.why),
        // The harness's own words for no level: "NONE (L0 MUSTs failed)".
        None if certified == Level::None => {
            super::certify::summary(certified, declared_text.as_deref(), honesty, 0).replacen(
                "none",
                "NONE (L0 MUSTs failed)",
                1,
            )
        }
        None => super::certify::summary(certified, declared_text.as_deref(), honesty, 0),
    };
    let mut levels = BTreeMap::new();
    for group in ["L0", "L1", "L2"] {
        let c = crate::suite::Counts::of(
            findings
                .iter()
                .filter(|f| RULES.iter().any(|r| r.id == f.rule_id && r.group == group)),
        );
        levels.insert(group.to_owned(), c);
    }
    Ok(Verdict {
        suite: SuiteId::Rcp,
        suite_version: SUITE_VERSION.to_owned(),
        spec_revision: SPEC_REVISION.to_owned(),
        // The harness's exit code: 0 only with no failed check and an honest
        // declaration (and no exception).
        passed: counts.fail == 0 && honest,
        summary,
        counts,
        detail: VerdictDetail::Rcp {
            profile: PROFILE_REFERENCE.to_owned(),
            certified_level: certified.as_str().to_owned(),
            declared_level: declared_text,
            // The harness counts a missing or invalid declaration as honest
            // (Q3) and `passed` follows it; the field claims only what was
            // compared, as in the `spec` profile.
            honest: honesty.compared(),
            protocol_observed: spoke
                || spec
                    .as_ref()
                    .is_ok_and(|s| s.verdict.detail.protocol_observed()),
            report: Box::new(LevelReport {
                honesty: honesty.as_str().to_owned(),
                missing_for_next: missing_for_next(findings, certified),
                violations_outside_levels: 0,
                levels,
                profile_differences: differences,
                not_exercised: Vec::new(),
            }),
        },
    })
}

/// What the harness's next level lacks: its failed checks, or that none of
/// its checks applied.
fn missing_for_next(findings: &[Finding], certified: Level) -> Vec<String> {
    let next = match certified {
        Level::None => "L0",
        Level::L0 => "L1",
        Level::L1 => "L2",
        Level::L2 => return Vec::new(),
    };
    let failed: Vec<String> = RULES
        .iter()
        .filter(|r| {
            findings
                .iter()
                .any(|f| f.rule_id == r.id && f.outcome == Outcome::Fail)
        })
        .filter(|r| r.group == next || certified == Level::None)
        .map(|r| {
            format!(
                "the harness's {} needs {} \"{}\"; it failed",
                r.group, r.id, r.title
            )
        })
        .collect();
    if !failed.is_empty() {
        return failed;
    }
    // A failure at a higher level stops certification too.
    let later: Vec<String> = RULES
        .iter()
        .filter(|r| {
            findings
                .iter()
                .any(|f| f.rule_id == r.id && f.outcome == Outcome::Fail)
        })
        .map(|r| {
            format!(
                "the harness's {} needs {} \"{}\"; it failed",
                r.group, r.id, r.title
            )
        })
        .collect();
    if !later.is_empty() {
        return later;
    }
    vec![format!(
        "the harness certifies {next} only when one of its {next} checks applies; all were skipped"
    )]
}

/// A finding whose message quotes the harness's detail (`str(r)[:200]`).
fn detail(sent: &Sent) -> String {
    match sent {
        Ok(reply) => match reply.json() {
            Some(v) => show(v),
            None => reply.describe(),
        },
        Err(_) => outcome_words(sent),
    }
}

/// What a request was answered with, in words: "error -32600 (InvalidRequest)".
fn answer_words(sent: &Sent) -> String {
    match sent {
        Ok(reply) => reply.describe(),
        Err(failure) => format!("no answer ({})", failure.error),
    }
}

/// Silence as the harness reads it (digest §8): over HTTP, 204, an empty body,
/// or any failure (non-2xx statuses raise in `urlopen`); over stdio, no line.
fn harness_silent(notified: &Result<Notified, super::client::Failure>) -> bool {
    match notified {
        Ok(Notified::Silent(..)) | Err(_) => true,
        Ok(Notified::Answered(reply)) => match reply.status {
            // stdio: any line is an answer.
            None => false,
            Some(s) => !((200..300).contains(&s) && s != 204),
        },
    }
}

fn evidence_of(notified: &Result<Notified, super::client::Failure>) -> crate::suite::Exchange {
    match notified {
        Ok(Notified::Silent(e, _)) => e.clone(),
        Ok(Notified::Answered(r)) => r.exchange.clone(),
        Err(f) => f.exchange.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &Rule, outcome: Outcome) -> Finding {
        Finding {
            rule_id: rule.id.to_owned(),
            outcome,
            message: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    #[test]
    fn thirty_checks_in_order() {
        assert_eq!(RULES.len(), 30);
        for (n, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("RCP-REF-{:02}", n + 1));
        }
    }

    #[test]
    fn certification_inherits_skipped_levels_and_stops_at_a_failure() {
        let l0: Vec<Finding> = RULES
            .iter()
            .filter(|r| r.group == "L0")
            .map(|r| finding(r, Outcome::Pass))
            .collect();
        let mut all = l0.clone();
        all.push(finding(&HITS_ARRAY, Outcome::Skip));
        all.push(finding(&RERANK, Outcome::Pass));
        // Q2: nothing applied at L1, so L2 stands on L0.
        assert_eq!(certify(&all), Level::L2);
        let mut failed = l0.clone();
        failed.push(finding(&K_CEILING, Outcome::Fail));
        failed.push(finding(&RERANK, Outcome::Pass));
        assert_eq!(certify(&failed), Level::L0);
        let mut none = l0;
        none[0].outcome = Outcome::Fail;
        assert_eq!(certify(&none), Level::None);
    }

    #[test]
    fn honesty_follows_the_harness() {
        assert!(harness_honest(None, Level::L0));
        assert!(
            harness_honest(Some(&json!("L3")), Level::None),
            "Q3: an invalid level is honest"
        );
        assert!(harness_honest(Some(&json!("l2")), Level::L0));
        assert!(!harness_honest(Some(&json!("L2")), Level::L1));
        assert!(!harness_honest(Some(&json!("L0")), Level::None));
        assert!(harness_honest(Some(&json!("L1")), Level::L2));
    }

    #[test]
    fn truthiness_is_pythons() {
        assert!(!truthy(Some(&json!(""))));
        assert!(!truthy(Some(&json!([]))));
        assert!(!truthy(Some(&json!(0))));
        assert!(truthy(Some(&json!("n"))));
        assert!(truthy(Some(&json!(5))));
        assert!(!truthy(None));
    }
}
