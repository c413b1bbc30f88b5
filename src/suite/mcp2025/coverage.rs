//! What each rule's probes cover against what its requirement names (see
//! `suite::coverage`); `docs/coverage.md` is generated from this table.

use crate::suite::Coverage;

/// One entry per rule of the catalogue, in catalogue order.
pub static COVERAGE: &[Coverage] = &[
    Coverage {
        rule: "MCP25-LIF-001",
        required: "`initialize` is answered with a result holding `protocolVersion` (string), \
            `capabilities` (object) and `serverInfo` (an `Implementation`: string `name` and \
            `version` required; `title`, `description`, `websiteUrl`, `icons` optional); \
            `instructions`, if present, is a string.",
        probed: "The run's first `initialize` (protocolVersion `2025-11-25`, empty client \
            capabilities, `clientInfo`; over HTTP without `MCP-Protocol-Version`, with the run's \
            bearer token if any), on either transport. Reads the types of `protocolVersion`, \
            `capabilities`, `serverInfo.name`, `serverInfo.version` and `instructions`; another \
            revision answered ends the suite as info (era gate), HTTP 400/404 with `-32601` or \
            `-32020`…`-32022` as a 2026-07-28-only server. Also typed when present: \
            `serverInfo.title`, `description` and `websiteUrl` (strings) and `icons` (as in \
            RES-002); each capability the schema names (`experimental`, `logging`, \
            `completions`, `prompts`, `resources`, `tools`, `tasks`) an object, and its \
            `listChanged` and `subscribe` booleans.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LIF-002",
        required: "A server that supports the requested revision answers `initialize` with that \
            same revision; protocheck asks for `2025-11-25`.",
        probed: "The LIF-001 exchange. When another revision comes back, the LIF-003 probes \
            (`initialize` asking for `1999-01-01` and `protocheck-not-a-version`, each on a new \
            connection) are read: if either offers `2025-11-25` the rule fails, otherwise it is \
            skipped with the era gate.",
        gap: Some(
            "not observable: support for `2025-11-25` shows only in what the server names; a \
            server that answers another revision and never names `2025-11-25` (for an unknown \
            version) is skipped, not failed, since nothing on the wire reveals support.",
        ),
    },
    Coverage {
        rule: "MCP25-LIF-003",
        required: "When the requested revision is not supported, the server answers with another \
            revision it does support (the lifecycle's error example, a `-32602` naming the \
            supported versions, is accepted as a reading).",
        probed: "`initialize` asking for `1999-01-01` and for `protocheck-not-a-version`, each on \
            a new connection (a new child on stdio). Pass: a `YYYY-MM-DD` revision from \
            `2024-11-05` on, or an error naming a revision. Fail: the string echoed, a \
            non-revision string, no `protocolVersion`; an error naming no revision warns. Each \
            revision offered (but `2025-11-25` when the run's `initialize` got it) is then asked \
            for on another new connection and must be answered with itself: otherwise the server \
            offered a revision it does not support, which fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LIF-004",
        required: "The revision offered instead of an unsupported one is the latest revision the \
            server supports.",
        probed: "The LIF-003 answers: an offer older than `2025-11-25` (which the server accepted \
            in LIF-001) warns; an offer of `2025-11-25` or later passes. Skipped when both probes \
            got errors.",
        gap: Some(
            "no bound: `2025-11-25` is the latest revision negotiated with `initialize`, and no \
            later one exists for protocheck to ask for; a server supporting a revision from \
            after it would offer that, and any offer from `2025-11-25` on passes (LIF-003 checks \
            it is supported).",
        ),
    },
    Coverage {
        rule: "MCP25-LIF-005",
        required: "After a successful `initialize` the client sends `notifications/initialized`; \
            the server sends no JSON-RPC response to it and then serves requests.",
        probed: "The run's own `notifications/initialized` on the main connection: a JSON-RPC \
            response or an HTTP status of 400 or more fails (stdio: any line before a `ping` \
            barrier's reply). Then `ping` must get a result, or, when `ping` is broken, the first \
            advertised of `tools/list`, `resources/list`, `prompts/list`. The 202 itself is judged \
            by HTP-002.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LIF-006",
        required: "Until it receives `notifications/initialized`, the server sends no request \
            other than `ping` (log notifications are allowed), on any channel.",
        probed: "A new connection: `initialize`, then `notifications/initialized` held back for 1 \
            s. Read: requests on the `initialize` answer's SSE stream; on stdio every stdout line \
            of the window; over HTTP a GET stream opened in the window, read up to its first event \
            carrying a message.",
        gap: Some(
            "Over HTTP only the first message on the GET stream is examined, so a request that \
            follows a log notification there is missed. A wider probe would read the GET stream \
            for the whole window.",
        ),
    },
    Coverage {
        rule: "MCP25-LIF-007",
        required: "Initialization comes first: a request other than `ping` sent before \
            `initialize` is not processed (the sentence binds the client; reported as info).",
        probed: "stdio only: a new child whose first lines, before `initialize`, are \
            `tools/list`, `resources/list`, `resources/templates/list`, `resources/read`, \
            `prompts/list` and `logging/setLevel`, written all at once, each answer read by its \
            id (in whatever order they come) for up to the request timeout; a result to any is \
            info, an error or silence passes. Over HTTP the question \
            is HTP-014's (servers with sessions).",
        gap: Some(
            "not observable: over HTTP a server without sessions cannot tell a request before \
            `initialize` from any other, since every POST stands alone there (digest D7); \
            `tools/call` is not sent before `initialize` (side effects: a server that wrongly \
            processes it would run the tool).",
        ),
    },
    Coverage {
        rule: "MCP25-LIF-008",
        required: "The server uses only negotiated capabilities: \
            `notifications/tools/list_changed`, `notifications/resources/list_changed` and \
            `notifications/prompts/list_changed` only with the matching `listChanged: true`, \
            `notifications/resources/updated` only with `resources.subscribe` and a subscription.",
        probed: "Passive, after every probe rule: each notification the run recorded (POST SSE \
            streams, stdout, GET streams while a rule watched one) is checked against the \
            `initialize` capabilities. A `notifications/resources/updated` fails unless it came \
            in the session MCP25-RES-008 subscribed in and its `uri` is the one subscribed to or \
            a sub-resource of it (after `/`, `?` or `#`; briefly: an update crossing the \
            unsubscribe passes too); over HTTP that rule's second session, sent a `ping` while \
            the subscription lasts, shows an update told to every session.",
        gap: Some(
            "No probe provokes these notifications (protocheck cannot change a server's lists or \
            resources), so only spontaneous ones are judged; over HTTP the GET stream is read only \
            during a rule's watch window, so notifications sent there at other times are missed.",
        ),
    },
    Coverage {
        rule: "MCP25-LIF-009",
        required: "The server sends no `sampling/createMessage`, `elicitation/create` or \
            `roots/list` request to a client that declared none of `sampling`, `elicitation`, \
            `roots` (protocheck declares `{}`).",
        probed: "Passive: every request the server sent during the run (stdout, POST SSE streams, \
            GET streams watched through the connection) is matched against the three methods; each \
            request is answered with `-32601` (`ping` with `{}`).",
        gap: Some(
            "Server requests are seen only where protocheck reads: over HTTP the GET stream is \
            open only during a rule's watch window, and the raw streams of HTP-008…011 are not \
            added to the log; no probe can provoke such a request.",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-001",
        required: "Every response (result or error) carries the id of its request, with the same \
            JSON type and value; only the error to an unreadable request may leave it out.",
        probed: "Every answer to a conforming request of the run (up to 600), among them three \
            `ping`s with an integer id, a `pc-N` string id and a numeric string id (`\"7\"`); the \
            echoed id must have the same type and value (`7` equals `7.0`).",
        gap: Some(
            "A response whose id matches no request is not taken as the answer on an SSE stream \
            (nor on stdio when two such strays come): the request times out and the wrong id is \
            never judged here. Keeping the single stray response of an SSE stream, as stdio does, \
            would close it.",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-002",
        required: "Every response has `\"jsonrpc\": \"2.0\"` and exactly one of `result` and \
            `error`; `result` is an object.",
        probed: "Passive over every answer to a conforming request of the run (up to 600), on both \
            transports.",
        gap: Some(
            "A frame with neither `result` nor `error` is not recognised as a response on stdio or \
            on an SSE stream (only a plain JSON body is taken whole), so there the request times \
            out instead of failing this rule; answers to protocheck's deliberately broken frames \
            are left to the rules that sent them (D16).",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-003",
        required: "Every `error` object has an integer `code` and a string `message`.",
        probed: "Passive over every error answering a conforming request of the run (`30000.0` \
            counts as an integer).",
        gap: Some(
            "Errors answering the bent frames of RPC-004, RPC-005, RPC-006 and RPC-008, the HTP \
            rules' raw requests and the AUT rules' `initialize` calls are not in the run's log, so \
            their `error` shape is not judged (D16).",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-004",
        required: "Text that is not valid JSON is refused (error `-32700`; over HTTP a 4xx) and \
            the server keeps serving.",
        probed: "Side by side as POST bodies in the run's session (HTTP), or one after another \
            as lines to an initialized process of the rule's own (stdio; a text that ends the \
            process is followed by a new one), between two `ping`s that must be answered alike: \
            the truncated \
            `{\"jsonrpc\":\"2.0\",\"id\":1,`, a whole `ping` followed by trailing data, an object \
            with single quotes and a bare key, and (HTTP) an empty body. Each: `-32700` or a 4xx \
            passes, stdio silence passes; another code, a 5xx or a stdio process that exits on \
            the text warns; a result, a 2xx without an error or a dropped HTTP connection fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RPC-005",
        required: "A request object that is not a valid JSON-RPC request is refused with `-32600` \
            (Invalid Request); the rule names one without `method` (MCP requests carry a string \
            `method`).",
        probed: "Five invalid request objects (side by side on the main connection over HTTP, \
            one after another as lines to an initialized process of the rule's own on stdio, a new \
            one after an object that ends it), between \
            two `ping`s: no `method` (`{\"jsonrpc\":\"2.0\",\"id\":N}`), `method` a number, \
            `jsonrpc` `\"1.0\"`, no `jsonrpc`, and an `id` that is a boolean (a null `id` is \
            RPC-006's). Each: `-32600` or an HTTP 4xx passes, stdio silence passes, and so does 202 \
            with no body for the object without `method` (it reads as a malformed response too, \
            and HTP-003 accepts 202 for a response) and for the boolean `id` (an object without a \
            usable id may be read as a notification, as RPC-006 accepts); another code or a 5xx \
            warns, and so does a stdio process that exits on the object; a result, no answer over \
            HTTP or a dropped HTTP connection fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RPC-006",
        required: "A request whose `id` is `null` is not processed as a normal request (MCP ids \
            are strings or integers, never null).",
        probed: "`ping` with `\"id\": null` on the main connection: a result fails; an error \
            (`-32600` preferred), an HTTP 4xx or silence passes.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RPC-007",
        required: "A request for a method that does not exist gets error `-32601` (Method not \
            found).",
        probed: "Side by side on the main connection after initialization: \
            `protocheck/unknown-method`, `protocheck_unknown` (no namespace) and \
            `protocheck_unknown` under each namespace of the protocol (`tools/`, `resources/`, \
            `prompts/`, `completion/`, `logging/`, `tasks/`). Each: `-32601` passes; another code, \
            or an HTTP 4xx without it, warns; a result, no answer, a 5xx or a dropped connection \
            fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RPC-008",
        required: "A JSON-RPC batch (array) is not answered as a batch: over HTTP the answer is \
            one JSON object or an HTTP error, and stdout carries no array.",
        probed: "`[ping, ping]` as one POST body or one line (on stdio to an initialized \
            process of the rule's own, replaced for the second `ping` if the array ends it), \
            between two `ping`s that must be answered alike. A JSON array on the wire fails, and \
            so does a 2xx without an error; an HTTP 4xx, one error object or stdio silence passes; \
            a 5xx or a stdio process that exits on the array warns (as in RPC-004 and RPC-005); \
            two separate `ping` results are info.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RPC-009",
        required: "The receiver of a notification, known or unknown, sends no JSON-RPC response to \
            it.",
        probed: "`notifications/protocheck_unknown`, `notifications/cancelled` for a request id \
            never sent and `notifications/progress` for a token the server never gave, on the main \
            connection; any JSON-RPC response (stdio: any line before a `ping` barrier's reply) \
            fails. `notifications/initialized` is judged so by LIF-005, a late cancellation by \
            UTL-002; the HTTP status of each is HTP-002's and HTP-003's.",
        gap: Some(
            "side effects: `notifications/roots/list_changed` is not sent: protocheck declares no \
            `roots`, and the notification would invite a `roots/list` request from the server \
            that LIF-009 forbids; every other notification a client sends is.",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-010",
        required: "A request whose `params._meta` carries a foreign key (`dev.protocheck/probe`) \
            and a `progressToken` is served as it is without them: `_meta` is allowed on every \
            request.",
        probed: "`tools/list` (or `ping` when `tools` is not declared) sent plain and with \
            `_meta`; fails when only the one with `_meta` gets an error. The passive probe's \
            `ping` and read-only `tools/call`s also carry a `progressToken`.",
        gap: Some(
            "The foreign `_meta` key is tried on one method only: `resources/list`, \
            `resources/read`, `prompts/get`, `completion/complete` and `tools/call` with it are \
            not compared, and the two answers are compared as error or not, not in content.",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-011",
        required: "Everything the server sends (HTTP bodies, SSE events, stdout lines) is valid \
            UTF-8.",
        probed: "After the passive probe, every answer read through a connection, whatever frame \
            provoked it: HTTP bodies decoded strictly, SSE events by the SSE reader, stdout lines \
            checked for bytes that had to be replaced.",
        gap: Some(
            "The raw requests of the HTP rules (GETs, resumptions, bent headers), the connection's \
            GET and DELETE, LIF-006's GET stream and the AUT discovery fetches are not added to \
            the log, so their bytes are not judged.",
        ),
    },
    Coverage {
        rule: "MCP25-RPC-012",
        required: "Every `_meta` key the server sends is well formed: an optional prefix of \
            dot-separated labels (letter first, letter or digit last, hyphens inside) closed by \
            `/`, then a name that, unless empty, starts and ends with an alphanumeric and holds \
            only alphanumerics, `-`, `_`, `.`.",
        probed: "Passive, after the passive probe: the keys of every `_meta` object nested in the \
            results of the run's conforming requests, in the `params` of every recorded \
            notification and in the `params` of every recorded request the server sent \
            (`params._meta` included); values are not judged; undefined keys under a \
            `modelcontextprotocol`/`mcp` prefix are info.",
        gap: Some(
            "Not yet tried by a blind audit: no server written without sight of this probe \
            has broken the requirement, so the probe is not yet shown to cover it in full.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-001",
        required: "A POSTed JSON-RPC request is answered with `Content-Type: application/json` \
            (one JSON object) or `text/event-stream`.",
        probed: "Passive over every conforming request of the run sent through a connection (up to \
            600) whose answer had a 2xx status; media type compared case-insensitively, parameters \
            ignored.",
        gap: Some(
            "Answers with a non-2xx status (an HTTP-level refusal that may still carry a JSON-RPC \
            error) are not judged, nor the HTP rules' own raw POSTs.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-002",
        required: "A JSON-RPC notification or response the server accepts gets HTTP 202 Accepted \
            with no body.",
        probed: "Run-wide: the run's `notifications/initialized`; HTP-003's POSTs (side by side \
            in the run's session, `notifications/cancelled` for a request never sent, an unknown \
            notification, `notifications/progress` for a token never given and a JSON-RPC \
            response for an id never used); and every answer protocheck POSTed to a request of \
            the server during the run. 202 with an empty body passes, another 2xx or a body fails; a refusal is left to \
            HTP-003.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-003",
        required: "A notification or response the server cannot accept gets an HTTP error status \
            (e.g. 400), not a 2xx.",
        probed: "Side by side in the run's session: a JSON-RPC response for an id the server \
            never used (`{\"jsonrpc\":\"2.0\",\"id\":\"pc-none-N\",\"result\":{}}`), the unknown \
            `notifications/protocheck_unknown`, `notifications/progress` for a token never given \
            and `notifications/cancelled` for a request never sent. Each: 202 with an empty body \
            (accepted and ignored) or any 4xx/5xx passes; 200, another 2xx or a 202 with a body \
            fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-004",
        required: "Every SSE stream the server opens for a POSTed request starts with an event \
            carrying an `id` and empty `data`.",
        probed: "Two `ping`s with a `progressToken`, POSTed in the run's session as raw requests; \
            the first event of each SSE stream is read.",
        gap: Some(
            "Only `ping` streams are examined: a server that answers `ping` with JSON but streams \
            other methods (`tools/call`, `resources/read`) is skipped, and the streams the run's \
            other requests open are not judged.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-005",
        required: "The SSE stream opened for a POSTed request eventually carries the JSON-RPC \
            response to it.",
        probed: "The HTP-004 `ping` streams, read for the request timeout; a stream closed after \
            an event id without the response is resumed once with GET and `Last-Event-ID` after \
            its `retry` (at most 5 s).",
        gap: Some(
            "Only `ping` streams, which answer at once; long-running requests, where a server is \
            likeliest to close early or lose the response, are not judged.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-006",
        required: "After sending the JSON-RPC response on an SSE stream, the server terminates the \
            stream.",
        probed: "The HTP-004 `ping` streams that carried their response: each must end within \
            0.5–2 s (a multiple of the run's round trips) after it.",
        gap: Some("Only `ping` streams are judged; the streams of other methods are not."),
    },
    Coverage {
        rule: "MCP25-HTP-007",
        required: "A server that closes a POST stream's connection before the response (without \
            ending the stream) sends an SSE `retry` field first.",
        probed: "The HTP-004 `ping` streams whose connection closed before the response and whose \
            resumption then delivered it: warn when no event carried `retry`.",
        gap: Some(
            "Only `ping` streams; a stream closed early whose resumption carries nothing is left \
            to HTP-005, and GET streams are not judged (a close cannot be told from the end of the \
            stream).",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-008",
        required: "A GET on the MCP endpoint is answered with `Content-Type: text/event-stream` or \
            HTTP 405.",
        probed: "A session of the rule's own; GET with `Accept: text/event-stream`, the session \
            id, `MCP-Protocol-Version` and the bearer token, read for 0.5–2 s. 405, or a 2xx event \
            stream, passes.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-009",
        required: "A GET stream opened without `Last-Event-ID` carries no JSON-RPC response (only \
            requests and notifications).",
        probed: "A GET in a session of the rule's own, read for 0.5–2 s with no request in flight; \
            any event holding a JSON-RPC response fails.",
        gap: Some(
            "No request is in flight while the stream is read, which is when a server could \
            misroute a response to it, and the GET streams other rules open (LOG watch windows, \
            LIF-006) are not checked, though the rule list says so. A wider probe would hold the \
            GET stream open while POSTing `ping` and `tools/list` in the same session.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-010",
        required: "SSE event ids, when sent, are globally unique across all streams of the session \
            (of the client, without sessions).",
        probed: "A session of the rule's own: two `ping` POST streams and one GET stream (0.5–2 \
            s); an id seen on two different streams fails.",
        gap: Some(
            "Only these three streams are compared (not the run's other streams, nor resumed \
            ones), and an id repeated within one stream is not counted.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-011",
        required: "A resumption with `Last-Event-ID` never replays messages that belonged to \
            another stream, whether the stream was opened by POST or GET.",
        probed: "A session of the rule's own: two `ping` POST streams A and B, then GET with \
            `Last-Event-ID` set to A's first event id; a message of B (or B's response) on the \
            resumed stream fails; 405 or an empty stream passes.",
        gap: Some(
            "Only the resumption of a finished POST stream is probed; resuming a GET stream is \
            not.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-012",
        required: "An `MCP-Session-Id` the server issues contains only visible ASCII (0x21–0x7E).",
        probed: "Run-wide: the `MCP-Session-Id` header of every `initialize` answer of the run \
            sent through a connection (the run's own, and the sessions HTP-008…011, HTP-013, \
            HTP-015, HTP-017, HTP-018, LIF-006, LOG-002, UTL-002 and the AUT rules open); a \
            header that cannot be read as visible text fails too. (HTP-018's `initialize` with a \
            foreign Origin must be refused, and is judged there.)",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-013",
        required: "A session id is globally unique and cryptographically secure.",
        probed: "Run-wide: the session ids of every `initialize` of the run sent through a \
            connection (as in HTP-012; when the run opened no second session, one more \
            `initialize` on a new connection) are compared: no two may be the same.",
        gap: Some(
            "not observable: whether the ids come from a cryptographically secure generator \
            (unpredictability) cannot be seen in the ids a run gets; uniqueness is probed.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-014",
        required: "A server that requires a session id answers HTTP requests without \
            `MCP-Session-Id` (other than `initialize`) with 400 Bad Request.",
        probed: "Without the session id, side by side: `tools/list` (or `ping` without `tools`) \
            POSTed, a POSTed notification (`notifications/cancelled` for an id never sent), a GET \
            accepting `text/event-stream` and a DELETE. When the POSTed request gets 400, each \
            other form must get 400 too (405 to a GET or DELETE the server offers none of \
            passes); another error status warns; a 2xx to the POSTed request is info (sessions \
            issued but not required).",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-015",
        required: "Once a session is terminated, requests naming its session id get 404 Not Found.",
        probed: "A session of the rule's own, ended with DELETE: on a 2xx, a POSTed `tools/list` \
            (or `ping`), a POSTed notification, a GET and a second DELETE naming the same id, side \
            by side, must each get 404 (405 to the GET passes where the server offers no GET \
            stream); 405 to the first DELETE passes and ends the rule; other statuses skip.",
        gap: Some(
            "not observable: sessions the server ends on its own (expiry, restart) cannot be \
            provoked or told apart from live ones; every request form naming a session ended by \
            DELETE is sent.",
        ),
    },
    Coverage {
        rule: "MCP25-HTP-016",
        required: "A request naming a session id that is not valid (never issued) gets 404, as a \
            terminated session does.",
        probed: "With `MCP-Session-Id: protocheck-unknown-<random>`, side by side: `tools/list` \
            (or `ping`) POSTed, a POSTed notification, a GET and a DELETE. 404 passes, 400 passes \
            with a note (and 405 to a GET or DELETE the server offers none of), anything else \
            warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-017",
        required: "A request with an invalid or unsupported `MCP-Protocol-Version` header gets 400 \
            Bad Request.",
        probed: "`MCP-Protocol-Version: not-a-version` (malformed) and `1999-01-01` \
            (unsupported), each on a POSTed `tools/list` (or `ping`), a POSTed notification and a \
            GET in the run's session, and on a DELETE of a session of the rule's own (so that one \
            wrongly accepted ends nothing the run uses); each must get 400 (405 to a GET or \
            DELETE the server offers none of passes; the body is not judged).",
        gap: None,
    },
    Coverage {
        rule: "MCP25-HTP-018",
        required: "The server validates `Origin` on every incoming connection; a present, invalid \
            `Origin` gets 403 Forbidden.",
        probed: "With `Origin: http://protocheck-invalid-origin.example`, side by side: \
            `initialize` without a session; `tools/list` (or `ping`), a POSTed notification and a \
            GET accepting `text/event-stream` in the run's session; a DELETE of a session of the \
            rule's own. Each must get 403 (405 to a GET or DELETE the server offers none of \
            passes, with a note). When all do, the in-session request again with each look-alike \
            Origin (prefix and suffix tricks). Other ports or schemes of the same host are not \
            sent: which of them are invalid is the server's own list.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-STD-001",
        required: "Messages on stdout are newline-delimited and contain no embedded newlines: each \
            message is one line.",
        probed: "Every stdout line read from every child of the run must parse as a whole JSON \
            value alone; a message that parses only once joined with the following lines fails.",
        gap: Some(
            "Lines are read only while protocheck awaits an answer or listens; what a child writes \
            after its last read (at shutdown) is not examined.",
        ),
    },
    Coverage {
        rule: "MCP25-STD-002",
        required: "The server writes nothing to stdout that is not a valid MCP message (no \
            banners, log lines or blank lines).",
        probed: "Every stdout line read from every child of the run must be a JSON-RPC request, \
            notification or response object (or an array, judged by RPC-008); other lines fail, \
            empty lines are info; stderr is never judged.",
        gap: Some(
            "Lines are judged by their JSON-RPC shape, not against the MCP schema (a well-formed \
            frame with malformed `params` passes here), and what a child writes after its last \
            read is not examined.",
        ),
    },
    Coverage {
        rule: "MCP25-STD-003",
        required: "The client ends a stdio session by closing stdin and waiting for the server to \
            exit before SIGTERM and SIGKILL (the sentence binds the client; reported as info).",
        probed: "A new child: `initialize` and `notifications/initialized`, then stdin closed; \
            a grace of at least 5 s and twice the child's start-up (at most 30 s), SIGTERM, 2 s, \
            SIGKILL. A signal needed is info.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-UTL-001",
        required: "The receiver of `ping` answers promptly with an empty result.",
        probed: "`ping` without `params` and with `params: {}` on the main connection; each must \
            get `{}` (a lone `_meta` tolerated) within 5 s, or eight times the run's slower \
            answers when that is longer (at most the request timeout).",
        gap: None,
    },
    Coverage {
        rule: "MCP25-UTL-002",
        required: "A cancellation for a request that already completed is coped with: no response \
            to it, and the server keeps working (invalid cancellations are ignored).",
        probed: "A new initialized connection: `ping` (id N) answered, then \
            `notifications/cancelled` with `requestId` N, then another `ping`; a response to the \
            notification, or the second `ping` not answered as the first, fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-UTL-003",
        required: "On `notifications/cancelled` for a request in progress, the receiver stops \
            processing it and sends no response for it.",
        probed: "With `tools` declared: up to 3 callable tools (read-only, or any when tool calls \
            are allowed; not `taskSupport: required`), those without required arguments first, \
            called with `arguments: {}` and a `progressToken`; after the second progress \
            notification, `notifications/cancelled` is sent and the answer watched for 3 s; one \
            after more than 1 s warns.",
        gap: Some(
            "Only a `tools/call` that emits progress can be proven in progress; tools needing \
            arguments get `{}` (not the placeholder arguments other calls use), so they are likely \
            refused before running; `resources/read`, `prompts/get` and tools protocheck may not \
            call are not probed.",
        ),
    },
    Coverage {
        rule: "MCP25-UTL-004",
        required: "A progress notification references only a `progressToken` given in an active \
            request (one whose work is still in progress).",
        probed: "Passive, after the passive probe (`ping` and up to 3 read-only `tools/call`s, \
            each with a token): every recorded `notifications/progress` must name a token \
            protocheck sent, with the same JSON type; progress after the answer is UTL-006's.",
        gap: Some(
            "Progress is asked for only by `ping`, read-only tools, RPC-010, HTP-004 and UTL-003 \
            (the TOL-010 calls carry no `progressToken`); over HTTP, progress sent on the GET \
            stream is seen only during watch windows.",
        ),
    },
    Coverage {
        rule: "MCP25-UTL-005",
        required: "For one progress token, the `progress` value increases with each notification.",
        probed: "Passive: per token protocheck sent, the recorded `progress` values (two or more) \
            must strictly increase; a value that is not a number fails. UTL-003 cancels its call \
            after the second progress notification, so a tool that reports progress twice or more \
            always yields a pair, whatever the run's pace.",
        gap: Some(
            "Judged only for tokens that drew two notifications: `ping`, up to 3 read-only tools \
            (stopping at the first that sends two) and UTL-003's calls; the tools TOL-010 calls \
            carry no `progressToken`, so with tool calls allowed most tools are never asked for \
            progress.",
        ),
    },
    Coverage {
        rule: "MCP25-UTL-006",
        required: "Progress notifications for a token stop once the request's operation has \
            completed (after its response).",
        probed: "After each answer to a passive-probe request with a `progressToken`, the rest of \
            its SSE stream (HTTP) or stdout (stdio) is read for 1 s; progress for an answered \
            token recorded after its answer fails.",
        gap: Some(
            "Over HTTP only the request's own SSE stream is read after the answer: progress sent \
            to the GET stream is not seen, and the window is 1 s.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-001",
        required: "A server that supports tools declares the `tools` capability.",
        probed: "`tools/list` walked (every `nextCursor`, at most 20 pages) even when `tools` is \
            not declared: a non-empty `tools` array without the capability fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TOL-002",
        required: "`tools/list` returns a `tools` array; each `Tool` has a string `name`, and \
            optional string `title` and `description`, `icons`, `annotations`, `execution` and \
            `_meta`; `nextCursor` is a string when present.",
        probed: "The run's survey: `tools/list` walked page by page (at most 20 pages, 1000 \
            tools; a walk cut there says so); each page needs a `tools` array, each tool a string \
            `name`; when present, string `title` and `description`, `icons` (as in RES-002), \
            `annotations` an object with a string `title` and boolean `readOnlyHint`, \
            `destructiveHint`, `idempotentHint` and `openWorldHint`, `execution.taskSupport` one \
            of `forbidden`, `optional`, `required`, `_meta` an object; the page a string \
            `nextCursor`.",
        gap: Some(
            "no bound: the spec sets no limit to a list's length; the walk stops at protocheck's \
            bound of 20 pages and 1000 items, and its findings say where it stopped.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-003",
        required: "Every tool's `inputSchema` is a JSON Schema object (never null) with `\"type\": \
            \"object\"` at its root, valid in its declared `$schema` dialect or in JSON Schema \
            2020-12.",
        probed: "Each listed tool's `inputSchema`: an object, root `type` `object`, validated \
            against the meta-schema of the dialect its `$schema` names: draft-04, draft-06, \
            draft-07, 2019-09 or 2020-12 (`http` or `https`, with or without a trailing `#`); \
            2020-12 without `$schema`; a `$schema` that is not a string fails.",
        gap: Some(
            "A schema whose `$schema` names any other dialect (draft-03, a custom meta-schema) \
            is reported as info, not validated: protocheck fetches no meta-schema.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-004",
        required: "A tool's `outputSchema`, when present, is a JSON Schema object with `\"type\": \
            \"object\"` at its root, valid in its dialect.",
        probed: "Each listed tool that has an `outputSchema`: the checks of TOL-003.",
        gap: Some(
            "A schema whose `$schema` names a dialect other than the five of TOL-003 is \
            reported as info, not validated: protocheck fetches no meta-schema.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-005",
        required: "Tool names are unique within a server.",
        probed: "All listed tools of the survey, names compared exactly (case-sensitive).",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TOL-006",
        required: "Tool names are 1–128 characters from ASCII letters, digits, `_`, `-` and `.` \
            (no spaces or other characters).",
        probed: "Each listed tool name: its length in characters and each character.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TOL-007",
        required: "Servers provide stable cursors on every paginated list (`tools/list`, \
            `resources/list`, `resources/templates/list`, `prompts/list`): a cursor the server \
            issued yields a valid page, the same when repeated.",
        probed: "For each of the four lists (advertised or not, the four side by side), every \
            `nextCursor` from the first page on is requested twice, one after the other, and the \
            walk follows the first answer's `nextCursor`; both answers must be pages with the \
            item array holding the same names or URIs.",
        gap: Some(
            "no bound: the walk reads at most 20 pages of a list (the finding names where it \
            stopped).",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-008",
        required: "An invalid cursor on any paginated list gets error `-32602`.",
        probed: "`cursor: \"protocheck-invalid-cursor\"` on each advertised list method \
            (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`): `-32602` \
            passes, another code or a result warns, `-32601` leaves that method unjudged.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TOL-009",
        required: "`tools/call` of a tool that does not exist is a protocol error (a JSON-RPC \
            error; the spec's example uses `-32602`), not a tool result.",
        probed: "`tools/call` of `protocheck_no_such_tool_<random>` with empty arguments: any \
            JSON-RPC error passes (another code than `-32602` with a note); a result, with or \
            without `isError: true`, warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TOL-010",
        required: "A `tools/call` result has a `content` array of well-formed blocks (`text`; \
            `image` and `audio` with base64 `data` and `mimeType`; `resource_link` with `uri` and \
            `name`; `resource` with `uri` and one of `text`/`blob`); `isError` is a boolean and \
            `structuredContent` an object when present.",
        probed: "Each callable tool (read-only, or any when tool calls are allowed; not \
            `taskSupport: required`; at most 10) called once with placeholder arguments built from the required part of its \
            `inputSchema` (optional numbers with a `minimum` at it), within a budget of 3 s of \
            work and one round trip; every block of each result is checked by kind, and `isError` \
            must be a boolean.",
        gap: Some(
            "Tools protocheck may not call, tools that run only as a task, and tools past the \
            tenth, are not called; a call still \
            running at its budget is cancelled and not judged (the finding names it); \
            `structuredContent` being an object is checked only against an `outputSchema` \
            (TOL-012); block `annotations`, `_meta` and MIME-type syntax are not checked; only the \
            results placeholder arguments produce are seen.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-011",
        required: "Arguments that violate a tool's `inputSchema` (a missing required property, a \
            wrong type) are reported as a tool execution error (`isError: true`), not as a \
            protocol error.",
        probed: "The first callable tool (not `taskSupport: required`) with a required property, \
            called with placeholder \
            arguments minus its first required property: `isError: true` passes, a JSON-RPC error \
            warns, a successful result is info.",
        gap: Some(
            "Only a missing required property, on one tool; arguments of the wrong type are not \
            sent, and tools protocheck may not call are not probed.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-012",
        required: "A tool with an `outputSchema` returns `structuredContent` that validates \
            against it in its successful results.",
        probed: "The TOL-010 calls of tools with an `outputSchema`, results with `isError: true` \
            excepted: `structuredContent` must be present and validate (a schema that cannot be \
            compiled is noted).",
        gap: Some(
            "Only the tools protocheck may call (read-only, or any when tool calls are allowed; at \
            most 10), each with one set of placeholder arguments.",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-013",
        required: "A tool result with `structuredContent` also carries the same JSON serialised in \
            a `text` block.",
        probed: "The TOL-010 results that carry `structuredContent`: some `text` block must parse \
            to equal JSON.",
        gap: Some(
            "side effects: only the results of the tools protocheck may call are seen \
            (read-only, or any with tool calls allowed; at most 10, see TOL-010).",
        ),
    },
    Coverage {
        rule: "MCP25-TOL-014",
        required: "A server whose tool results embed resources (`resource` blocks) implements the \
            `resources` capability.",
        probed: "The TOL-010 results holding a `resource` block, against the `initialize` \
            capabilities.",
        gap: Some(
            "side effects: only the results of the tools protocheck may call are seen \
            (read-only, or any with tool calls allowed; at most 10, see TOL-010).",
        ),
    },
    Coverage {
        rule: "MCP25-RES-001",
        required: "A server that supports resources (lists resources or resource templates) \
            declares the `resources` capability.",
        probed: "`resources/list` and `resources/templates/list` (first page of each, side by \
            side) even when `resources` is not declared: a non-empty `resources` or \
            `resourceTemplates` array without the capability fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RES-002",
        required: "`resources/list` returns a `resources` array; each `Resource` has a string \
            `uri` and `name`, `mimeType` a string and `size` a number when present (and optional \
            `title`, `description`, `icons`, `annotations`).",
        probed: "`resources/list` walked (at most 20 pages, 1000 items; a walk cut there says \
            so): the array, string `uri` and `name`, the types of `mimeType` and `size`, string \
            `title` and `description`, `icons` (each with a string `src`, string `mimeType` and \
            `theme`, `sizes` strings), `annotations` (`audience` of `user`/`assistant`, \
            `priority` from 0 to 1, string `lastModified`), `_meta` an object, a string \
            `nextCursor`.",
        gap: Some(
            "no bound: the spec sets no limit to a list's length; the walk stops at protocheck's \
            bound of 20 pages and 1000 items, and its findings say where it stopped.",
        ),
    },
    Coverage {
        rule: "MCP25-RES-003",
        required: "Every resource URI (listed, read, in resource links and embedded resources) is \
            an RFC 3986 URI, custom schemes included.",
        probed: "Passive: the `uri` of `resources/list` items and `resources/read` contents, and \
            of `resource_link` and `resource` blocks in any result of the run (tool results, \
            prompt messages), and the `uri` of every `notifications/resources/updated` the run \
            recorded, parsed strictly (scheme required).",
        gap: Some(
            "Only the URIs the run's reads and calls bring back (3 resources read, 3 prompts got, \
            the tools protocheck may call).",
        ),
    },
    Coverage {
        rule: "MCP25-RES-004",
        required: "`resources/templates/list` returns a `resourceTemplates` array; each template \
            has a string `uriTemplate` (an RFC 6570 URI template) and a string `name`.",
        probed: "`resources/templates/list` walked (at most 20 pages, 1000 items; a walk cut \
            there says so): the array, a string `uriTemplate` parsed as an RFC 6570 template \
            (paired braces, a known operator, variable names and modifiers of its grammar) and a \
            string `name`; when present, string `title`, `description` and `mimeType`, `icons`, \
            `annotations` and `_meta` typed as in RES-002; `-32601` warns.",
        gap: Some(
            "no bound: the spec sets no limit to a list's length; the walk stops at protocheck's \
            bound of 20 pages and 1000 items, and its findings say where it stopped.",
        ),
    },
    Coverage {
        rule: "MCP25-RES-005",
        required: "`resources/read` returns `contents`; each item has a string `uri` and exactly \
            one of a string `text` or a base64 `blob`, with an optional string `mimeType`.",
        probed: "`resources/read` of the first 20 listed URIs, side by side (a finding says how \
            many more were listed): a result with a `contents` array, each item with a string \
            `uri`, exactly one string `text` or `blob`, and a string `mimeType` when present.",
        gap: Some(
            "no bound: a list may hold any number of resources and a template any number of \
            expansions; protocheck reads the first 20 listed resources and no template \
            expansion (a template's variables take values only the server knows).",
        ),
    },
    Coverage {
        rule: "MCP25-RES-006",
        required: "Binary resource data (`blob`) is valid base64.",
        probed: "Passive: every `blob` in `resources/read` results and embedded `resource` blocks \
            of the run, decoded as padded standard base64 without whitespace.",
        gap: Some(
            "no bound: only the blobs the run's answers bring back can be judged, and no list \
            has a bound: 20 resources read, 20 prompts got; tools protocheck may not call are not \
            (side effects).",
        ),
    },
    Coverage {
        rule: "MCP25-RES-007",
        required: "Reading a resource that does not exist gets error `-32002` (Resource not \
            found).",
        probed: "`resources/read` of `protocheck://missing/<random>`, and of the first listed URI \
            with a random path segment appended when its scheme differs; `-32002` passes, another \
            code or a result warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-RES-008",
        required: "With `resources.subscribe: true`, `resources/subscribe` and \
            `resources/unsubscribe` of a resource URI succeed with an empty result.",
        probed: "`resources/subscribe`, then `resources/unsubscribe`, of the first listed URI on \
            the main connection; each must get an empty result (a lone `_meta` tolerated); an \
            error or another result warns. Over HTTP with sessions, a second session opened \
            before the subscription gets a `ping` while it lasts (MCP25-LIF-008 judges what \
            comes there).",
        gap: Some(
            "Only the first listed URI; whether `notifications/resources/updated` then follows is \
            not observed (protocheck cannot change a resource).",
        ),
    },
    Coverage {
        rule: "MCP25-PRM-001",
        required: "A server that supports prompts declares the `prompts` capability.",
        probed: "`prompts/list` (first page) even when `prompts` is not declared: a non-empty \
            `prompts` array without the capability fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-PRM-002",
        required: "`prompts/list` returns a `prompts` array; each `Prompt` has a string `name`; \
            `arguments`, when present, is an array of `{name: string, description?: string, \
            required?: boolean}` (and optional `title`, `description`, `icons`).",
        probed: "`prompts/list` walked (at most 20 pages, 1000 items; a walk cut there says so): \
            the array, a string `name`, string `title` and `description`, `icons` (as in RES-002), \
            `_meta` an object, `arguments` an array of items with a string `name`, string `title` \
            and `description` and a boolean `required`, a string `nextCursor`.",
        gap: Some(
            "no bound: the spec sets no limit to a list's length; the walk stops at protocheck's \
            bound of 20 pages and 1000 items, and its findings say where it stopped.",
        ),
    },
    Coverage {
        rule: "MCP25-PRM-003",
        required: "`prompts/get` returns `messages`; each has `role` `user` or `assistant` and one \
            content block of a defined kind (text, image, audio, resource link, embedded \
            resource).",
        probed: "`prompts/get` of the first 20 listed prompts, side by side, each required \
            argument given the value `protocheck`; each message needs role `user` or `assistant` \
            and one block with its required members, and the result's `description` is a string \
            when present; refused gets are not judged.",
        gap: Some(
            "no bound: a list may hold any number of prompts and an argument any value; \
            protocheck gets the first 20 prompts, each with one argument set (optional \
            arguments left out).",
        ),
    },
    Coverage {
        rule: "MCP25-PRM-004",
        required: "Image and audio content in prompt messages has base64 `data` and a valid MIME \
            type of its kind.",
        probed: "Passive: every `image` and `audio` block of the run's `prompts/get` results: \
            strict base64 `data`, a `mimeType` of the form `image/…` or `audio/…`.",
        gap: Some(
            "no bound: a list may hold any number of prompts, each rendered for any arguments; \
            the blocks judged are those of the first 20 prompts PRM-003 gets, each with one \
            argument set.",
        ),
    },
    Coverage {
        rule: "MCP25-PRM-005",
        required: "Embedded resources in prompt messages include a valid URI, the appropriate MIME \
            type, and text or base64 blob content.",
        probed: "Passive: every `resource` block of the run's `prompts/get` results: a missing \
            string `uri` or content fails, a missing `mimeType` warns (the schema makes it \
            optional); URI syntax and base64 are RES-003's and RES-006's.",
        gap: Some(
            "no bound: a list may hold any number of prompts, each rendered for any arguments; \
            the blocks judged are those of the first 20 prompts PRM-003 gets, each with one \
            argument set.",
        ),
    },
    Coverage {
        rule: "MCP25-PRM-006",
        required: "An invalid (unknown) prompt name gets error `-32602`.",
        probed: "`prompts/get` of `protocheck_no_such_prompt_<random>`: `-32602` passes, another \
            code or a result warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-PRM-007",
        required: "A `prompts/get` missing a required argument gets error `-32602`.",
        probed: "For every listed prompt with a required argument (the first 20; a finding says \
            when there were more), side by side: `prompts/get` with `arguments` left out, with \
            `arguments: {}`, and, with two or more required, with every required argument but \
            the first: each `-32602` passes, another code or a result warns.",
        gap: Some(
            "no bound: the spec sets no limit to the number of prompts; protocheck asks for the \
            first 20 with a required argument and says so when there were more.",
        ),
    },
    Coverage {
        rule: "MCP25-CPL-001",
        required: "A server that supports completions (answers `completion/complete`) declares the \
            `completions` capability.",
        probed: "When `completions` is undeclared: `completion/complete` with `value: \"\"` for \
            each listed prompt argument and resource template variable (the first 20, side by \
            side; both lists read whether declared or not), or, with none listed, for a prompt no \
            server defines; a result to any fails.",
        gap: Some(
            "no bound: the lists may name any number of arguments and variables; protocheck asks \
            for the first 20.",
        ),
    },
    Coverage {
        rule: "MCP25-CPL-002",
        required: "Without the `completions` capability, `completion/complete` gets error \
            `-32601`.",
        probed: "The CPL-001 requests (or, with no target, one for an unknown prompt): each \
            `-32601` passes, another code or a result warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-CPL-003",
        required: "A `completion/complete` result, for either reference kind (`ref/prompt`, \
            `ref/resource`), has `completion.values` (strings, at most 100), `total` a number and \
            `hasMore` a boolean when present.",
        probed: "`completion/complete` with `value: \"\"` for the first 3 targets, prompt \
            arguments first, then template variables; results are checked, errors are not judged.",
        gap: Some(
            "With three or more prompt arguments `ref/resource` is never asked; \
            `context.arguments` and non-empty values are not sent; `total` is only checked to be a \
            number (the digest's non-negative, zero-fraction reading is not applied).",
        ),
    },
    Coverage {
        rule: "MCP25-CPL-004",
        required: "A completion request naming an invalid prompt, or missing required arguments, \
            gets error `-32602`.",
        probed: "Side by side: `completion/complete` with `ref/prompt` named \
            `protocheck_no_such_prompt_<random>`; and, on the first listed prompt argument or \
            template variable, requests without `argument` and without `ref`. Each: `-32602` \
            passes, another code or a result (even with empty `values`) warns. An `argument` \
            without `value` is not sent: a server may read a missing value as empty, a reading a \
            careful author can take.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LOG-001",
        required: "A server that sends `notifications/message` declares the `logging` capability.",
        probed: "When `logging` is undeclared: every log notification recorded in the run; with \
            none yet, the GET stream (HTTP) or stdout (stdio) is watched for 0.15–3 s around a \
            `ping`.",
        gap: Some(
            "Only log notifications that come where protocheck reads; over HTTP the GET stream is \
            read only during watch windows.",
        ),
    },
    Coverage {
        rule: "MCP25-LOG-002",
        required: "With `logging` declared, `logging/setLevel` with any of the eight RFC 5424 \
            levels (`debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, \
            `emergency`) gets an empty result.",
        probed: "`logging/setLevel` to `debug` (while the server's own channel is watched), then \
            to `info`, `notice`, `warning`, `error`, `critical`, `alert` and `emergency`, one \
            after another; each must get an empty result (a lone `_meta` tolerated).",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LOG-003",
        required: "An invalid log level gets error `-32602`.",
        probed: "`logging/setLevel` one after another with `level: \"protocheck\"` (a made-up \
            name), `\"warn\"` (an alias outside the eight), `4` (not a string) and no `level`: \
            each `-32602` passes, another code or a result warns.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-LOG-004",
        required: "Every `notifications/message` has a `level` from the eight syslog levels and a \
            `data` member; `logger` is a string when present.",
        probed: "Passive: every recorded log notification; with none yet, LOG-002's watch of the \
            server's own channel at `debug` stands for a watch of its own, or, where LOG-002 did \
            not run, that channel is watched for 0.15–3 s around a `ping`.",
        gap: Some(
            "Only the log notifications the run sees: LOG-002 sets the level to `emergency` early, \
            which quiets the rest of the run, and over HTTP the GET stream is read only during \
            watch windows.",
        ),
    },
    Coverage {
        rule: "MCP25-AUT-001",
        required: "The server offers at least one discovery route to its RFC 9728 protected \
            resource metadata: `resource_metadata` in the 401 `WWW-Authenticate`, or the \
            well-known URI (path form or root form).",
        probed: "Only when an unauthenticated `initialize` gets 401: its Bearer challenge is \
            parsed; `resource_metadata` is fetched, else \
            `/.well-known/oauth-protected-resource<path>` then the root form (5 s, 64 KiB each); \
            the well-known route alone is info.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-AUT-002",
        required: "The protected resource metadata lists at least one authorization server in \
            `authorization_servers`.",
        probed: "The document AUT-001 found: `authorization_servers` must be an array holding at \
            least one `http` or `https` URL.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-AUT-003",
        required: "The metadata's `resource` matches the MCP endpoint it protects (RFC 9728 §3.3).",
        probed: "The AUT-001 document's `resource` compared with the endpoint URL (fragment \
            dropped), exactly or after normalising scheme and host case and a trailing slash.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-AUT-004",
        required: "Each listed authorization server provides RFC 8414 or OpenID Connect discovery \
            metadata, advertising `code_challenge_methods_supported` with `S256`.",
        probed: "For up to 10 listed issuers (side by side), the well-known URLs in the spec's \
            order (`oauth-authorization-server`, `openid-configuration`, path-inserted then \
            path-appended); the first JSON document found must list `S256`.",
        gap: Some(
            "no bound: the spec sets no limit to the number of authorization servers; protocheck \
            fetches the first 10 and the finding names where it stopped.",
        ),
    },
    Coverage {
        rule: "MCP25-AUT-005",
        required: "The 401 `WWW-Authenticate` challenge carries a `scope` parameter.",
        probed: "The Bearer challenge of the unauthenticated `initialize`'s 401.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-AUT-006",
        required: "Invalid or expired access tokens get HTTP 401, on every request (tokens are \
            validated on each request, within a session too).",
        probed: "`initialize` on a new connection with `Authorization: Bearer \
            protocheck-invalid-<random>` (only when an unauthenticated `initialize` gets 401): 401 \
            passes; another answer fails, or warns on a server with a credential scheme of its own \
            (its 401 has no Bearer challenge and no protected resource metadata is served).",
        gap: Some(
            "Only `initialize` carries the invalid token: a request inside an authorized session \
            with an invalid token is not sent, nor an expired or wrong-audience token (a run \
            cannot mint one). A wider probe would POST `tools/list` with the run's session id and \
            a bad token.",
        ),
    },
    Coverage {
        rule: "MCP25-AUT-007",
        required: "A request whose valid token lacks the needed scope gets 403 with \
            `error=\"insufficient_scope\"` (and `scope`, `resource_metadata`) in \
            `WWW-Authenticate`.",
        probed: "Only with a limited-scope token given with the run: `initialize`, `tools/list`, a \
            `tools/call` of a callable tool (`arguments: {}`) and `resources/list` on a new \
            connection, up to the first 401 or 403 with a challenge; 403 with \
            `error=\"insufficient_scope\"` passes.",
        gap: Some(
            "Skipped without a limited token (the server's authorization server must mint it); the \
            challenge's `scope` and `resource_metadata` parameters are not checked, only `error`.",
        ),
    },
    Coverage {
        rule: "MCP25-AUT-008",
        required: "A valid token sent only in the URI query string is not accepted (tokens travel \
            in the `Authorization` header).",
        probed: "With the run's valid token: `initialize` to `<endpoint>?access_token=<token>` \
            without the header; a 2xx warns.",
        gap: Some(
            "Skipped without a valid token given with the run (the server's authorization server \
            must mint it).",
        ),
    },
    Coverage {
        rule: "MCP25-TSK-001",
        required: "`tasks/get` and `tasks/result` naming a nonexistent or invalid `taskId` are \
            refused with `-32602`.",
        probed: "With `tasks` declared, side by side: `tasks/get` and `tasks/result` each with \
            `taskId: \"protocheck-missing-<random>\"` (nonexistent), `taskId: 42` (not a string) \
            and no `taskId` (invalid); anything but `-32602` fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TSK-002",
        required: "`tasks/cancel` naming a nonexistent task id is refused with `-32602`.",
        probed: "With `tasks.cancel` declared: `tasks/cancel` with a random id; anything but \
            `-32602` fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TSK-003",
        required: "Every task in a response carries a string `taskId`, a `status` (`working`, \
            `input_required`, `completed`, `failed`, `cancelled`), ISO 8601 `createdAt` and \
            `lastUpdatedAt`, and `ttl` (number or null); `tasks/list` returns a `tasks` array.",
        probed: "With `tasks.list` declared: every page of `tasks/list`, following `nextCursor` \
            (at most 20 pages; the finding names where it stopped); each page's `tasks` array and \
            each task's members and formats; an empty list passes.",
        gap: Some(
            "The task in TSK-006's `tasks/get` answer, \
            `tasks/cancel` results and `CreateTaskResult` are not judged, and with no task \
            existing the check is vacuous (protocheck creates none, digest §11).",
        ),
    },
    Coverage {
        rule: "MCP25-TSK-004",
        required: "`tasks/list` with an invalid cursor is refused with `-32602`.",
        probed: "With `tasks.list` declared: `tasks/list` with `cursor: \
            \"protocheck-invalid-cursor\"`; anything but `-32602` fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP25-TSK-005",
        required: "A tool whose `execution.taskSupport` is `\"required\"`, called with a plain \
            (not task-augmented) `tools/call`, is refused with `-32601` (`-32600` also allowed).",
        probed: "With `tasks` and `tools` declared: a plain `tools/call` (`arguments: {}`) of the \
            first such tool protocheck may call; `-32601` or `-32600` passes, anything else fails.",
        gap: Some(
            "Only tools protocheck may call (read-only, or any when tool calls are allowed): a \
            conforming server refuses the call, but a broken one would run the tool.",
        ),
    },
    Coverage {
        rule: "MCP25-TSK-006",
        required: "Results of `tasks/get`, `tasks/list` and `tasks/cancel` carry no \
            `io.modelcontextprotocol/related-task` in their `_meta`.",
        probed: "With `tasks.list` declared: the `tasks/list` result, and a `tasks/get` of its \
            first listed task when there is one.",
        gap: Some(
            "`tasks/cancel` results are not observed (cancelling a real task is destructive), and \
            `tasks/get` only when a task is listed.",
        ),
    },
];
