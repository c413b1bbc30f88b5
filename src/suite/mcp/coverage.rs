//! What each rule's probes cover against what its requirement names (see
//! `suite::coverage`); `docs/coverage.md` is generated from this table.

use crate::suite::Coverage;

/// One entry per rule of the catalogue, in catalogue order.
pub static COVERAGE: &[Coverage] = &[
    Coverage {
        rule: "MCP-DSC-001",
        required: "Every 2026-07-28 server MUST implement `server/discover` (no params besides \
            `_meta`), answerable before or after any other request, with a `DiscoverResult` \
            (`resultType`, `supportedVersions`, `capabilities`, `ttlMs`, `cacheScope`).",
        probed: "The run's second request, after the cold `tools/list`: `server/discover` with \
            `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` and `_meta` (protocol version, empty \
            `clientCapabilities`, `clientInfo`), over HTTP or as a stdio line. Passes on 200 (any \
            line over stdio) with a result holding a `capabilities` object; a legacy `initialize` \
            sent next tells a legacy-only server, which fails with its era named.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DSC-002",
        required: "`DiscoverResult.supportedVersions` MUST list the protocol versions the server \
            supports, as an array of version strings.",
        probed: "Reads `supportedVersions` in the opening `server/discover` result: a non-empty \
            array of strings passes; absent, empty or another type fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DSC-003",
        required: "MAY (best practice): the advertised versions include a revision current clients \
            speak.",
        probed: "Passes when the opening `server/discover`'s `supportedVersions` holds \
            `2026-07-28` or `2025-11-25`.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DSC-004",
        required: "Every key of `capabilities.extensions` MUST follow the `_meta` key rules with a \
            mandatory prefix (dot-separated labels that start with a letter, end with a letter or \
            digit, and hold letters, digits and hyphens; a name of letters, digits, `-`, `_`, `.` \
            with alphanumeric ends) and MUST NOT use a prefix whose second label is \
            `modelcontextprotocol` or `mcp` unless it is MCP's own; reverse-DNS order is a SHOULD; \
            each value is an object.",
        probed: "Every key of `capabilities.extensions` in the opening `server/discover` result is \
            checked for the prefix labels, the name's characters and a reserved second label (any \
            `io.modelcontextprotocol/` id is accepted: it is MCP's own prefix), and its value must \
            be an object; skipped when the server advertises no extension.",
        gap: Some(
            "not observable: reverse-DNS order (the SHOULD) cannot be told from the text: \
            `example.com/` and `com.example/` are both well-formed prefixes, and only their \
            owner knows which names a domain.",
        ),
    },
    Coverage {
        rule: "MCP-DSC-005",
        required: "Servers SHOULD put `_meta[\"io.modelcontextprotocol/serverInfo\"]` (an \
            Implementation with `name` and `version`) in every result, unless configured not to.",
        probed: "Run-wide: every result answering a valid probe of the run (pooled HTTP client, \
            stdio, and the dedicated connections of MCP-HDR-006, MCP-STL-004 and MCP-STL-008: \
            discover, the survey's lists, reads, `prompts/get`, `completion/complete`, tool calls \
            and listen, and the rules' own valid probes) must carry that key with string `name` \
            and `version`.",
        gap: Some(
            "side effects: calls of tools protocheck may not run (not `readOnlyHint: true`, \
            allow_tool_calls unset) are never made, so their results are not seen.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-001",
        required: "`Mcp-Method` is required on every request, of all ten methods \
            (`server/discover`, `tools/list`, `tools/call`, `resources/list`, \
            `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get`, \
            `completion/complete`, `subscriptions/listen`); a request without it MUST be answered \
            HTTP 400 with JSON-RPC -32020. Headers on notification POSTs are undefined.",
        probed: "Drops `Mcp-Method` from each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves); each must be answered 400 with \
            -32020, and the first other answer fails. Methods of capabilities not advertised are \
            not served (MCP-ERR-002 requires 404 for them).",
        gap: None,
    },
    Coverage {
        rule: "MCP-HDR-002",
        required: "`Mcp-Name` is required on `tools/call` (mirroring `params.name`), `prompts/get` \
            (`params.name`) and `resources/read` (`params.uri`); a request without it MUST be \
            answered 400 with -32020.",
        probed: "For each of the three methods whose capability is advertised, one conforming \
            request with `Mcp-Name` removed, addressed to a real name where one is listed (a tool \
            protocheck may call, read-only ones first, with placeholder arguments and mirrored \
            `Mcp-Param-*`; the first listed resource; the first listed prompt with its required \
            arguments), else to an unknown name. 400 with -32020 passes; -32602 to an unknown name \
            makes the rule unverified (skip), never a pass.",
        gap: Some(
            "side effects: with no tool protocheck may run (none `readOnlyHint: true`, \
            allow_tool_calls unset) `tools/call` is probed with an unknown name only, and a \
            server that looks names up before reading headers leaves it not verified, never \
            passed; the same holds for `resources/read` and `prompts/get` when the server lists \
            no resource or prompt.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-003",
        required: "A `Mcp-Name` value that differs from the body's `params.name` or `params.uri` \
            (after Base64 decoding; values are case-sensitive) MUST be answered 400 with -32020, \
            on `tools/call`, `prompts/get` and `resources/read`.",
        probed: "The MCP-HDR-002 targets (listed names where there are any) twice: with \
            `Mcp-Name` set to another made-up name (`protocheck-no-such-b-…`), and with `Mcp-Name` \
            the body's name with the case of its last letter swapped (for a URI only a letter \
            after its authority, since scheme and host compare without case); 400 with -32020 \
            passes, -32602 to an unknown name is unverified.",
        gap: Some(
            "side effects: with no tool protocheck may run (none `readOnlyHint: true`, \
            allow_tool_calls unset) `tools/call` goes to an unknown name, which a server may \
            refuse by lookup before reading the header: the rule is then not verified for it, \
            never passed. The same holds for `resources/read` and `prompts/get` when the server \
            lists no resource or prompt.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-004",
        required: "`MCP-Protocol-Version` is required on every POST; a request without it MUST be \
            answered 400 with -32020, unless the server supports clients older than 2025-06-18 and \
            treats it as 2025-03-26.",
        probed: "Each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves) without `MCP-Protocol-Version` (body `_meta` intact): 400 \
            with -32020 passes; a 2026-07-28 answer (a DiscoverResult, a result with `resultType`) \
            fails. On a dual-era server an `initialize` asking for 2025-03-26 checks the MAY's \
            premise: when it negotiates 2025-03-26 or earlier, answers in legacy terms are the \
            MAY and the rule is skipped with them named; when it negotiates a later revision, \
            they fail.",
        gap: None,
    },
    Coverage {
        rule: "MCP-HDR-005",
        required: "An `MCP-Protocol-Version` header that differs from \
            `_meta[\"io.modelcontextprotocol/protocolVersion\"]` MUST be answered 400 with -32020, \
            on every POST.",
        probed: "Sends each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves) with header `2026-07-28` and `_meta` `1900-01-01`, the \
            reverse, and, when `supportedVersions` lists a second version, header `2026-07-28` \
            with `_meta` naming that second (supported) version, so that only a comparison \
            refuses it. 400 with -32020 passes, and so does 400 with -32022 (the spec does not \
            rank mismatch above unsupported version; the reading is named).",
        gap: None,
    },
    Coverage {
        rule: "MCP-HDR-006",
        required: "Header names MUST be compared case-insensitively (`mcp-method`, `Mcp-Method` \
            and `MCP-METHOD` are one header), for `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version` \
            and `Mcp-Param-{Name}`; header values are case-sensitive.",
        probed: "On dedicated HTTP/1.1 connections (names sent byte for byte), one per spelling: \
            `server/discover`, a request of every advertised named method (`tools/call`, \
            `prompts/get`, `resources/read`: the MCP-HDR-002 targets, listed names where there \
            are) and a call of each tool protocheck may call that has an `x-mcp-header` (every \
            such tool), each with all header names lower-case, as the spec writes them, \
            upper-case and in mixed case (`mCp-MeThOd`, `mCp-NaMe`, `mCp-PaRaM-…`); every \
            spelling must get the lower-case answer's status, error code and result presence. \
            Values, on the pooled client, each must get 400 with -32020: `Mcp-Method: \
            SERVER/DISCOVER` with body `server/discover`; on every named target `Mcp-Method` \
            upper-cased and `Mcp-Name` with one letter's case swapped (for a URI after its \
            authority only: scheme and host compare without case); on every string \
            `x-mcp-header` of those tools `protochecK` against `protocheck`, on every boolean \
            one `TRUE` against `true`; beside each `Mcp-Name` and `Mcp-Param-*` one, the \
            same request with a wholly different value, and when that is accepted too the \
            server compares nothing (MCP-HDR-003/-008 judge it) and the case probe is named as \
            not judged here. -32602 to an unknown name leaves that value probe unverified \
            (skip).",
        gap: Some(
            "side effects: `x-mcp-header` names and values are sent only on tools protocheck may \
            call (read-only, or `allow_tool_calls`), and with none `tools/call` is probed with an \
            unknown name, whose value probes a server may answer by lookup (unverified); not \
            advertised: a server listing no resource or prompt is probed on those methods with \
            an unknown name likewise.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-007",
        required: "Servers MUST decode Base64 sentinel values (`=?base64?` + Base64 of the UTF-8 \
            bytes + `?=`) of `Mcp-Name` and `Mcp-Param-{Name}` before comparing them with the \
            body.",
        probed: "For each advertised named method, the MCP-HDR-002 target with `Mcp-Name` in \
            sentinel form: the listed name encoded though it is plain ASCII, or with no listed \
            name an unknown non-ASCII name (`protocheck-ünknown-…`) that a client must encode. \
            Beside them, on every string `x-mcp-header` of every tool protocheck may call, \
            `tools/call` with a non-ASCII value and that `Mcp-Param-{Name}` in sentinel form. \
            -32020 or no answer fails; anything else passes, an unknown-name pass named as an \
            inference.",
        gap: Some(
            "side effects: `Mcp-Param-{Name}` is probed only on tools protocheck may call \
            (read-only, or `allow_tool_calls`), and with none `tools/call` carries an unknown \
            name, whose pass is an inference (a server may look the name up before the \
            header); not advertised: likewise for `resources/read` and `prompts/get` when no \
            resource or prompt is listed. Integer and boolean values are never encoded by a \
            client (their text is plain ASCII), so none is sent encoded.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-008",
        required: "When a `tools/call` argument at an `x-mcp-header` property has a non-null \
            value, the `Mcp-Param-{Name}` header MUST be sent and the server MUST validate it \
            (missing or different: 400 with -32020); with the value absent or null the server MUST \
            NOT expect it. Applies to string, integer and boolean properties.",
        probed: "Every valid, statically reachable string, integer or boolean `x-mcp-header` of \
            every listed tool protocheck may call, side by side: a call whose header differs \
            from the body (`protocheck-other`/`8`/`false` against `protocheck`/`7`/`true`) and \
            one without the header, each must get 400 with -32020; a call with the argument left \
            out and one with it `null` (no header either time), where 400 with -32020 fails (the \
            server MUST NOT expect the header; the finding says whether the message names it); \
            for an integer, `7.0` against 7, where 400 with -32020 warns (numeric comparison is \
            a SHOULD).",
        gap: Some(
            "side effects: tools protocheck may not call (not `readOnlyHint: true`, \
            `allow_tool_calls` unset) are not probed, as a non-conforming server would run them; \
            the finding names them.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-009",
        required: "Servers MUST reject a recognised `Mcp-Param-{Name}` header containing invalid \
            characters (non-ASCII, control characters: anything a plain header value cannot hold) \
            with 400 and -32020.",
        probed: "Every valid `x-mcp-header` (string, integer, boolean) of every tool protocheck may \
            call: the header as raw UTF-8 (`protocheck-café-x`, for an integer or boolean `7café` \
            or `truecafé`) on the pooled client, and each control character an HTTP/1.1 field \
            can carry (0x01-0x08, 0x0B, 0x0C, 0x0E-0x1F, 0x7F; HTAB is a legal plain value, NUL, \
            CR and LF no field carries) raw on a dedicated HTTP/1.1 connection, a string \
            argument holding the same text as its header. 400 with -32020 passes; 400 with no \
            JSON-RPC body is read as the HTTP layer refusing the field (RFC 9110 §5.5) and \
            passes, named; no answer is noted, never failed; any other answer fails.",
        gap: Some(
            "side effects: tools protocheck may not call (not `readOnlyHint: true`, \
            `allow_tool_calls` unset) are not probed; the finding names them.",
        ),
    },
    Coverage {
        rule: "MCP-HDR-010",
        required: "MAY (best practice): header validation runs before dispatch, so a request whose \
            `Mcp-Method` disagrees with its body is refused (400, -32020) and no handler runs it, \
            whatever the method.",
        probed: "An unknown body method under `Mcp-Method: server/discover`, and each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves), the named ones addressed to the listed tool, resource or prompt of \
            MCP-HDR-002 where there is one, under an `Mcp-Method` naming another served method; \
            each must get 400 with -32020, and -32601 (looked up first) or a result (a handler \
            ran it) fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-STL-001",
        required: "There are no protocol sessions: a server never mints an `Mcp-Session-Id` on any \
            response and never echoes one a client sent.",
        probed: "Each family probe (`Session::family_probes`: `server/discover`, and per advertised \
            capability its list methods, `resources/templates/list` included, and `tools/call`, \
            `resources/read`, `prompts/get` of made-up names; `completion/complete` where \
            `completions` is advertised; a short `subscriptions/listen` where a `listChanged` or \
            `resources.subscribe` is advertised) and a notification POST \
            (`notifications/cancelled` of an unused id) carry a made-up `Mcp-Session-Id`; so do \
            the rule's own requests of each class a server refuses (an unknown method, \
            `server/discover` without `Mcp-Method`, asking for version 1900-01-01, from a foreign \
            `Origin`), each also sent without it; no answer may carry one. Then every answer to a valid probe of the run (pooled client, \
            the rules' dedicated connections, the survey's) is searched for an `Mcp-Session-Id` \
            response header, and on a server that speaks 2026-07-28 alone the answers to GET and \
            DELETE on the endpoint. Answers to the other rules' deliberately invalid probes are \
            judged by those rules alone (§15: a finding judges only what its probe provoked).",
        gap: None,
    },
    Coverage {
        rule: "MCP-STL-002",
        required: "A client-supplied `Mcp-Session-Id` SHOULD be ignored: the server MUST NOT \
            require or validate it, on any request, and answers as if it were absent.",
        probed: "Each family probe (as MCP-STL-001, a short `subscriptions/listen` included where \
            the server advertises something to listen for) sent twice side by side, with a \
            made-up `Mcp-Session-Id` and without; status, error code and result presence must be \
            equal for every method.",
        gap: None,
    },
    Coverage {
        rule: "MCP-STL-003",
        required: "Servers MUST NOT rely on prior requests for version, capabilities or identity: \
            any request, of any method, may come first on a new connection with no handshake.",
        probed: "The run's very first request, `tools/list`, on a new connection (over stdio the \
            child's first line), before any `server/discover`: with `tools` advertised it must \
            return a result with `tools`; without, a result or any 2026-07-28 error passes. Then \
            over HTTP every method family served (`server/discover`, each advertised list method \
            with `resources/templates/list`, `tools/call` of a tool protocheck may run, else of a \
            made-up one, `resources/read` of the first listed resource, `prompts/get` of the first \
            listed prompt, `completion/complete` where advertised) goes first on a new connection \
            of its own and again on it after a `server/discover` and its family's list: status, \
            error code and result presence must be equal. A `subscriptions/listen` (the family \
            probes' filter, where a `listChanged` or `resources.subscribe` is advertised) goes \
            first on a new connection of its own and, since a listen holds its connection open, \
            last on another new connection after the same `server/discover` and list; status, \
            error code and the acknowledgement's presence must be equal.",
        gap: Some(
            "Over stdio only the run's first line is cold: no child is spawned per method \
            family, so a gate on a process's first request of a method other than `tools/list` \
            is not sought there. Over HTTP a gate kept for the whole process rather than the \
            connection opens on the process's first request ever; protocheck does not start an \
            HTTP server, and its cold probes of the other families go after the run's opening \
            requests (discover, the survey's lists), so such a gate is sought only through the \
            run's first `tools/list`, which shows it only on a server no one had called yet.",
        ),
    },
    Coverage {
        rule: "MCP-STL-004",
        required: "Servers MUST NOT rely on prior requests over the same connection for version, \
            capabilities or identity.",
        probed: "For `server/discover` without `clientCapabilities` and every method family of \
            MCP-STL-003's cold probes (lists, a tool call, a read, a prompt get, a completion), a \
            dedicated HTTP/1.1 connection carries the probe; a `server/discover` declaring \
            `elicitation` and `roots` with another `clientInfo`, the list of its family, and the \
            probe again; then a `server/discover` carrying another protocol version (the first \
            `supportedVersions` entry other than 2026-07-28, else 2025-11-25, which a \
            modern-only server refuses) in `MCP-Protocol-Version` and `_meta`, a legacy \
            `initialize` asking for that version (2025-11-25 when it is no legacy revision), and \
            the probe once more; status, error code, result presence and listed names must not \
            change. A `subscriptions/listen` (where something is advertised to listen for) holds \
            its connection open, so it goes first on a new connection, after the first warm-ups \
            on a second and after both rounds on a third; status, error code and the \
            acknowledgement's presence must be equal.",
        gap: Some(
            "Not probed, as the round-4 blind audit showed: a connection whose first request \
            carries the other version (every dedicated connection starts with the valid probe); \
            a list's later page asked on another connection than the one that issued its \
            cursor; what the listen's acknowledgement covers (only its presence is compared); \
            requests after a listen the server ended on that connection (protocheck closes its \
            listens itself).",
        ),
    },
    Coverage {
        rule: "MCP-STL-005",
        required: "A server that supports only 2026-07-28 SHOULD answer HTTP GET on the MCP \
            endpoint with 405 Method Not Allowed.",
        probed: "One GET of the endpoint URL with `Accept: text/event-stream`, read to its first \
            event or for a window derived from the run's round-trip times; 405 passes. Skipped for \
            dual-era servers.",
        gap: None,
    },
    Coverage {
        rule: "MCP-STL-006",
        required: "A server that supports only 2026-07-28 SHOULD answer HTTP DELETE on the MCP \
            endpoint with 405 Method Not Allowed.",
        probed: "One DELETE of the endpoint URL (no session id), watched like the GET; 405 passes. \
            Skipped for dual-era servers.",
        gap: None,
    },
    Coverage {
        rule: "MCP-STL-007",
        required: "A server that supports only 2026-07-28 SHOULD ignore `Last-Event-ID`: streams \
            are not resumable, so a request carrying it is answered as without it.",
        probed: "Each family probe (as MCP-STL-001) with `Last-Event-ID: protocheck-0`: status, \
            error code and result presence must equal those of the same request without it \
            (MCP-STL-002's plain answers). Each request of the run answered with an event stream \
            (the survey's calls of tools protocheck may run, with a progress token, and the \
            `subscriptions/listen` family probe) is sent again, with its own id and token, \
            carrying as `Last-Event-ID` the first event id its first stream carried (else \
            `protocheck-0`): no frame of the answer may carry the first request's id, progress \
            token or subscription id, nor be a response to any other request, and its shape \
            must equal the first's. A GET on the \
            endpoint carrying that id (else `protocheck-0`) must be answered as the plain GET \
            (status, event stream, an event on it). Skipped for dual-era servers.",
        gap: Some(
            "side effects: a server whose only event streams answer calls of tools protocheck \
            may not run (not read-only, allow_tool_calls unset) is asked no stream to resume \
            but the listen.",
        ),
    },
    Coverage {
        rule: "MCP-STL-008",
        required: "`tools/list` (and by the same sentence on their pages `resources/list` and \
            `prompts/list`) MUST return the set available to the requesting client and MUST NOT \
            vary per connection or as a side effect of other requests on the connection.",
        probed: "The survey's `tools/list`, `resources/list`, `resources/templates/list` and \
            `prompts/list` names (those advertised, all pages) against the same list on new \
            dedicated connections A and B of its own (every list's side by side), and on A again \
            after a `server/discover` declaring capabilities, a call of the first tool protocheck \
            may run (else of a made-up one) and, for the resource lists, a `resources/read` of the \
            first listed resource, for the prompt list a `prompts/get` of the first listed \
            prompt; the name sets must be equal. A walk that stops at 10 pages says so in the \
            finding.",
        gap: Some(
            "side effects: tools protocheck may not run (not read-only, without \
            `--allow-tool-calls`) are not called before the second walk, so a list changed by \
            such a call alone passes; of the tools it may run only the first is called there, \
            and a list longer than 10 pages is compared on those pages, as the finding says.",
        ),
    },
    Coverage {
        rule: "MCP-RES-001",
        required: "Every result MUST carry a string `resultType`, on every method (discover, \
            lists, calls, reads, gets, completion, the listen close), even an empty result.",
        probed: "Run-wide: every result answering a valid probe of the run (pooled client, \
            stdio, or a rule's dedicated connection) must hold a string `resultType`: among \
            them every family probe, every list page, the `resources/read` of every listed \
            resource and template expansion, `prompts/get` of the first prompt, and with \
            `completions` advertised `completion/complete` of the first prompt argument and of \
            every variable of every resource template (see MCP-CAC-001).",
        gap: Some(
            "side effects: calls of tools protocheck may not run are never made. Not advertised: \
            methods of capabilities the server does not advertise are not asked \
            (`completion/complete` needs `completions` and a prompt argument or template \
            variable). No bound: the final result of `subscriptions/listen` comes only when \
            the server ends the stream gracefully; no client request provokes it (a client ends \
            a listen by closing the stream, which gets no result) and the spec gives no time \
            by which a server ends one, so protocheck closes the stream after the \
            acknowledgement and never sees that result.",
        ),
    },
    Coverage {
        rule: "MCP-RES-002",
        required: "`resultType` MUST be `complete`, `input_required` (only on `tools/call`, \
            `resources/read`, `prompts/get`), or a value of an extension the server advertises \
            (`task` with `io.modelcontextprotocol/tasks`).",
        probed: "Run-wide over every `resultType` seen on valid probes (as MCP-RES-001): \
            `complete` passes; `input_required` passes on the three methods only; `task` passes \
            only with `io.modelcontextprotocol/tasks` in `capabilities.extensions`; any other \
            value passes, named in the finding as an inference, only when the server advertises \
            an extension protocheck does not know, and fails otherwise.",
        gap: Some(
            "not observable: protocheck cannot know the values another extension defines, so \
            beside an advertised extension it does not know, any value it does not know is \
            taken as that extension's (the finding names the value and the extensions). Side \
            effects: results of tools protocheck may not run (where `input_required` and \
            extension values mostly appear) are never seen.",
        ),
    },
    Coverage {
        rule: "MCP-RES-003",
        required: "On a response stream (and on any transport) the server MUST NOT send \
            independent JSON-RPC requests (a message with `method` and `id`); only notifications \
            related to the request, then the final response.",
        probed: "Run-wide: every SSE answer to a valid probe, and the listen stream up to its \
            acknowledgement, is read frame by frame for messages with `method` and `id`; over \
            stdio, request lines read while an answer was awaited.",
        gap: Some(
            "Such requests come mostly from tools that want input: only tools protocheck may run \
            are called (with empty capabilities, then those -32021 named), so a tool that is not \
            read-only is never exercised; skipped over HTTP when no answer used SSE.",
        ),
    },
    Coverage {
        rule: "MCP-RES-004",
        required: "A notification POST the server accepts MUST be answered 202 Accepted with no \
            body; one it cannot accept gets an HTTP error status.",
        probed: "One `notifications/cancelled` POST (an unused `requestId`) with the request \
            headers (`Mcp-Method: notifications/cancelled`): 202 with an empty, non-SSE body \
            passes; another 2xx or a body fails; a 4xx or 5xx skips (refusal is allowed).",
        gap: Some(
            "One notification only: `notifications/cancelled` is the revision's one client \
            notification and is not used on Streamable HTTP, so a server may refuse it and leave \
            the rule unjudged; a notification POST without the `Mcp-*` headers is not sent.",
        ),
    },
    Coverage {
        rule: "MCP-RES-005",
        required: "A request MUST be answered with `Content-Type: application/json` (one JSON-RPC \
            object) or `text/event-stream`; the final response SHOULD end the SSE stream.",
        probed: "Run-wide: the media type of every answer to a valid probe of the run, on the \
            pooled client and on the rules' dedicated HTTP/1.1 connections (MCP-HDR-006's \
            spellings, MCP-STL-003's cold and warm requests, MCP-STL-008's lists); an HTTP \
            refusal whose body is no JSON-RPC message (401, 403, 404, 405, 429, 5xx) is passed \
            by. Every SSE stream of the pooled client but listen must end after its final \
            response (a warning when it stays open).",
        gap: Some(
            "Answers to deliberately invalid probes (the 400, 403 and 404 answers of the header, \
            version, Origin and unknown-method rules) are judged only by their own rules, which \
            read a refusal's body as JSON whatever its `Content-Type`: a JSON-RPC error sent as \
            `text/html` to a bad header passes them (the check belongs in the shared reading of \
            a refusal). The end of an SSE stream on a dedicated connection is not measured \
            (reading stops at the answer).",
        ),
    },
    Coverage {
        rule: "MCP-RES-006",
        required: "A server opening an SSE response stream SHOULD send `X-Accel-Buffering: no`.",
        probed: "Run-wide: every SSE answer to a valid probe (tool calls carrying a progress \
            token, the listen stream, any method the server streams) must carry \
            `X-Accel-Buffering: no`.",
        gap: Some(
            "side effects: judged only when some answer used SSE; protocheck invites streams \
            with a progress token on the tool calls it may make, so a server that streams only \
            the answers of tools protocheck may not run is skipped.",
        ),
    },
    Coverage {
        rule: "MCP-RES-007",
        required: "`tools/list` SHOULD return the tools in the same order across requests while \
            the set is unchanged.",
        probed: "The survey's `tools/list` (all pages) and two more walks of every page, side by \
            side: the order of the tools present in all three must be equal; skipped with fewer \
            than two tools in all three, or a repeat answered without a `tools` array. A walk \
            that stops at 10 pages says so in the finding.",
        gap: Some(
            "no bound: the spec bounds no list's length; each walk stops at 10 pages (the \
            survey's), and a pass says when it did.",
        ),
    },
    Coverage {
        rule: "MCP-ERR-001",
        required: "A request for an unsupported protocol version MUST be answered HTTP 400 with \
            -32022 whose `data.supported` lists supported versions and `data.requested` echoes the \
            request, on every method.",
        probed: "Sends each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves) with `MCP-Protocol-Version` and `_meta` both \
            `1900-01-01`, and again both `2099-12-31` (a well-formed future version); requires \
            400 (not over stdio), -32022, a non-empty string array `data.supported` and \
            `data.requested` echoing the version sent.",
        gap: None,
    },
    Coverage {
        rule: "MCP-ERR-002",
        required: "A method the server does not implement MUST be answered HTTP 404 with JSON-RPC \
            -32601: an unknown method, one 2026-07-28 removed (`initialize` on a modern-only \
            server, `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`), \
            and one behind a server capability not advertised.",
        probed: "An unknown method outside the protocol's namespaces (`protocheck/…`) and one in each \
            of `server/`, `tools/`, `resources/`, `prompts/`, `completion/` and \
            `subscriptions/`; `initialize` (asking for 2026-07-28), `ping`, `logging/setLevel` and \
            `resources/subscribe`/`unsubscribe` (with `Mcp-Name`); and every method of each \
            capability the server does not advertise (`tools/list`, `tools/call`; \
            `resources/list`, `resources/templates/list`, `resources/read`; `prompts/list`, \
            `prompts/get`; `completion/complete`), each with valid headers and `_meta`: 404 with \
            -32601 passes (-32601 over stdio, where any error to `initialize` is accepted); a \
            result is named (a method still implemented: the DEP rules judge the removed ones).",
        gap: None,
    },
    Coverage {
        rule: "MCP-ERR-003",
        required: "A `resources/read` of a missing resource MUST be answered JSON-RPC -32602 \
            (optionally with `data.uri`), never the retired -32002 and never an empty `contents`.",
        probed: "With `resources` advertised, one `resources/read` of a missing URI in the \
            server's namespace (the first listed URI plus `-protocheck-missing-…`, else \
            `protocheck://missing/…`): -32602 passes; -32002, another answer or an empty \
            `contents` fails; contents for the made-up URI skips.",
        gap: None,
    },
    Coverage {
        rule: "MCP-ERR-004",
        required: "A 2026-07-28 implementation MUST NOT emit -32042 (URL elicitation required, a \
            2025-11-25 code).",
        probed: "Run-wide: the error code of every answer to a valid probe of the run.",
        gap: Some(
            "side effects: -32042 belongs to tool calls that need a URL elicitation: only tools \
            protocheck may run are called, so a tool that is not read-only is never seen \
            answering it.",
        ),
    },
    Coverage {
        rule: "MCP-ERR-005",
        required: "Implementations MUST NOT emit any code in -32020…-32099 other than -32020, \
            -32021 and -32022.",
        probed: "Run-wide: every error code answering a valid probe (-32042 is left to \
            MCP-ERR-004).",
        gap: Some(
            "side effects: only codes the run provoked; calls of tools protocheck may not run are \
            never made. Answers to invalid probes are judged only by the rule that sent them (by \
            design: an answer to a deliberately invalid request is evidence for that rule alone), \
            so the code in the body of a 403 to a foreign Origin, which MAY be anything, is not \
            read.",
        ),
    },
    Coverage {
        rule: "MCP-ERR-006",
        required: "A request missing a required `_meta` field \
            (`io.modelcontextprotocol/protocolVersion`, \
            `io.modelcontextprotocol/clientCapabilities`, or `_meta` itself) MUST be answered HTTP \
            400 with JSON-RPC -32602, on every method.",
        probed: "Sends each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves), each on a new pooled connection, four ways: without the \
            protocol version, without `clientCapabilities`, without `_meta`, and without \
            `params`; requires 400 (not over stdio) with -32602, or -32020 where the header still \
            names a version the body lacks.",
        gap: None,
    },
    Coverage {
        rule: "MCP-ERR-007",
        required: "A request whose processing needs a client capability it did not declare MUST be \
            answered HTTP 400 with -32021 and `data.requiredCapabilities` (a ClientCapabilities \
            object), never with an input request for an undeclared capability; this holds on \
            `tools/call`, `resources/read` and `prompts/get`.",
        probed: "Every request of the run that declared no client capability and may ask for \
            input: the survey's tool calls (tools annotated `readOnlyHint: true`, or any with \
            allow_tool_calls; at most 8, first round), its `resources/read` of listed resources \
            (at most 5) and its `prompts/get` of the first listed prompt: -32021 must come with \
            400 and a non-empty `requiredCapabilities` object; an `input_required` result asking \
            for `elicitation/create`, `sampling/createMessage` or `roots/list` fails.",
        gap: Some(
            "the survey's own bounds: at most 8 tools called, 5 resources read and the first \
            prompt got, so a capability needed only further on is not seen (a cap, not one of \
            the four reasons). Besides, for side effects, tools protocheck may not run (not \
            `readOnlyHint: true`, allow_tool_calls unset) are never called.",
        ),
    },
    Coverage {
        rule: "MCP-ERR-008",
        required: "New implementations SHOULD NOT emit codes in the legacy -32000…-32019 range.",
        probed: "Run-wide: every error code answering a valid probe (-32002 is left to \
            MCP-ERR-003).",
        gap: Some(
            "side effects: only codes the run provoked; calls of tools protocheck may not run are \
            never made. Answers to invalid probes are judged only by the rule that sent them (by \
            design).",
        ),
    },
    Coverage {
        rule: "MCP-CAC-001",
        required: "`ttlMs` MUST be on every complete result of `server/discover`, `tools/list`, \
            `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read`, on \
            every page of a paginated list.",
        probed: "Run-wide: every complete result of the six cacheable methods answering a valid probe \
            of the run, whichever rule sent it (the discover answers, every page of the survey's \
            four lists, the list answers of the family probes and of MCP-RES-007's walks, \
            answers on the rules' dedicated connections), and the survey's `resources/read`, \
            side by side: of every listed resource (the first 100 of the list walk), and of one \
            expansion of each resource template (the first 20): with `completions` advertised \
            each variable is asked `completion/complete` (`ref/resource` with the template, the \
            variable, value `\"\"`, the values chosen so far in `context.arguments`), the \
            template is expanded (RFC 6570) with the first value offered, and the expansion is \
            read unless it is a listed resource. `input_required` results are left out; the \
            finding says how many reads were made and where they stopped.",
        gap: Some(
            "not advertised: without `completions` the server offers no way to learn a \
            template's valid values, so no template is expanded; nor is one whose completion \
            offers no value. No bound: the spec bounds no list: at most 100 listed resources \
            and 20 templates are read (each list walk stops at 10 pages), and one expansion per \
            template (the first value offered for each variable).",
        ),
    },
    Coverage {
        rule: "MCP-CAC-002",
        required: "`cacheScope` MUST be on every complete result of the six cacheable methods of \
            MCP-CAC-001, on every page.",
        probed: "The cacheable results of MCP-CAC-001 (every one of the run) are checked for a \
            `cacheScope` member.",
        gap: Some(
            "not advertised: as MCP-CAC-001, templates are expanded only with `completions` \
            advertised. No bound: as MCP-CAC-001, at most 100 listed resources and one \
            expansion of each of 20 templates are read.",
        ),
    },
    Coverage {
        rule: "MCP-CAC-003",
        required: "`cacheScope` MUST be exactly `public` or `private` (lower case), and all pages \
            of one list MUST carry the same value.",
        probed: "Every `cacheScope` on the cacheable results of MCP-CAC-001 (every one of the run) \
            must be the string `public` or `private`; the pages of each of the survey's list \
            walks must all carry the same value; skipped when none carries one.",
        gap: Some(
            "not advertised: as MCP-CAC-001, templates are expanded only with `completions` \
            advertised. No bound: as MCP-CAC-001, at most 100 listed resources and one \
            expansion of each of 20 templates are read.",
        ),
    },
    Coverage {
        rule: "MCP-CAC-004",
        required: "`ttlMs` MUST be an integer number of milliseconds, at least 0 (schema: integer, \
            minimum 0; `30000.0` counts as integer).",
        probed: "Every `ttlMs` on the cacheable results of MCP-CAC-001 (every one of the run) must be \
            a number with zero fraction and not negative; skipped when none carries one.",
        gap: Some(
            "not advertised: as MCP-CAC-001, templates are expanded only with `completions` \
            advertised. No bound: as MCP-CAC-001, at most 100 listed resources and one \
            expansion of each of 20 templates are read.",
        ),
    },
    Coverage {
        rule: "MCP-CAC-005",
        required: "Results that depend on the requester's authorization or identity should not be \
            `cacheScope: public`, which means identical for every caller across authorization \
            contexts.",
        probed: "Each result marked `public` (discover, the first page of each list, the first \
            five of the survey's reads) is asked three times: as before, with `clientInfo.name` `protocheck-second-caller`, and \
            as before again; a difference that follows the caller (not the control) fails.",
        gap: Some(
            "protocheck holds at most one credential, so it cannot ask from a second authorization \
            context: a result that differs per token yet is marked `public` passes unless a second \
            token were given with the run; later list pages (they need their cursor) are not asked \
            again. No bound: only the first five `resources/read` results are asked again.",
        ),
    },
    Coverage {
        rule: "MCP-SCH-001",
        required: "Each `x-mcp-header` value in a tool's `inputSchema` MUST be a non-empty string \
            of RFC 9110 `tchar` characters (a token).",
        probed: "Every `x-mcp-header` anywhere in the `inputSchema` of every listed tool (the \
            survey's list, at most 10 pages and 500 tools): a non-string, empty or non-token value \
            fails (control characters are left to MCP-SCH-002).",
        gap: None,
    },
    Coverage {
        rule: "MCP-SCH-002",
        required: "An `x-mcp-header` value MUST NOT contain control characters, CR or LF.",
        probed: "Every annotation found as in MCP-SCH-001: any ASCII control character fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SCH-003",
        required: "`x-mcp-header` values MUST be unique within one `inputSchema`, compared \
            case-insensitively.",
        probed: "Per listed tool, the string annotations grouped by lower-cased value; a group of \
            two or more fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SCH-004",
        required: "`x-mcp-header` MUST only annotate properties of type `string`, `integer` or \
            `boolean` (never `number`, `null`, `array` or `object`).",
        probed: "Per annotation, the property's type as JSON Schema 2020-12 reads it (a local \
            `$ref` followed, `enum`/`const` values typed, `[T, \"null\"]` read as T): any other \
            type, or no single type, fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SCH-005",
        required: "An `x-mcp-header` MUST sit on a property reachable from the root through \
            `properties` keys alone (not through `items`, `allOf`/`anyOf`/`oneOf`/`not`, \
            `if`/`then`/`else`, `$ref`, `$defs` or other keywords).",
        probed: "The walk of MCP-SCH-001 records each annotation's path: one reached through any \
            keyword but `properties`, or on the root itself, fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SCH-006",
        required: "Tool `inputSchema` (an object schema with root `type: object`) and \
            `outputSchema` MUST be valid for their declared `$schema` dialect, JSON Schema 2020-12 \
            when none is declared.",
        probed: "For every listed tool: `inputSchema` must be an object with root `\"type\": \
            \"object\"` that passes the `jsonschema` crate's meta-schema validation; \
            `outputSchema` too when present; a dialect the crate does not know is named and not \
            judged.",
        gap: Some(
            "Schemas in a dialect the `jsonschema` crate cannot validate are left unjudged; the \
            `requestedSchema` of elicitation requests a server sends in `input_required` results \
            is not validated.",
        ),
    },
    Coverage {
        rule: "MCP-SCH-007",
        required: "Tool names SHOULD be 1–128 characters of `A-Z a-z 0-9 _ - .`; prompt names and \
            resource URIs, which travel in `Mcp-Name`, should be header-safe ASCII.",
        probed: "Every listed tool name against the tool-name pattern; every listed prompt name \
            and resource URI against the plain header-safe set (visible ASCII, SP, HTAB, no edge \
            whitespace, not shaped like the sentinel).",
        gap: None,
    },
    Coverage {
        rule: "MCP-AUT-001",
        required: "A server that requires authorization MUST answer a request without a valid \
            token (missing, invalid or expired) with 401 and a `WWW-Authenticate: Bearer` \
            challenge, and make its Protected Resource Metadata findable through \
            `resource_metadata` or a well-known URI.",
        probed: "Every family probe of the families the run's survey found (every family when \
            it found none: `server/discover`, `tools/list`, `tools/call`, `resources/list`, \
            `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get`, \
            `completion/complete`, `subscriptions/listen` when the server lists changes; a listen \
            read to its head), side by side, each without the run's token (and without the \
            canary, not logged), and each again with `Authorization: Bearer \
            protocheck-invalid-<random hex>`. A 401 on any method makes the server one that \
            requires authorization (no 401 anywhere skips every AUT rule); every 401 must carry \
            a Bearer challenge, naming `resource_metadata` or with a PRM document at the \
            path-inserted or root well-known URI; every `resource_metadata` named (up to 8 \
            distinct URLs) must serve a JSON object, whatever the well-known URIs serve; on each \
            method refused without a token the invalid token must get 401 with a Bearer \
            challenge, and one without `error=\"invalid_token\"` warns (RFC 6750 §3.1 SHOULD). \
            Methods answered without a token are read as left open and named.",
        gap: Some(
            "An expired token genuinely issued by the server's authorization server is not sent: \
            protocheck cannot mint one, and the made-up token is refused for its signature alone, \
            so a server that checks signatures but not expiry passes.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-002",
        required: "The server MUST serve RFC 9728 Protected Resource Metadata with a `resource` \
            and at least one `authorization_servers` entry.",
        probed: "GETs every distinct `resource_metadata` URL the 401s to the family probes named \
            (up to 8, side by side), and when none serves a document \
            `/.well-known/oauth-protected-resource{path}`, then the root well-known URI; the first \
            200 JSON object must hold a string `resource` (a URL without fragment) and a \
            non-empty array of strings `authorization_servers`, and the other RFC 9728 §2 members \
            present must have its types: `scopes_supported`, `bearer_methods_supported`, \
            `resource_signing_alg_values_supported` (without `none`), \
            `authorization_details_types_supported`, `dpop_signing_alg_values_supported` arrays \
            of strings; `jwks_uri`, `resource_documentation`, `resource_policy_uri`, \
            `resource_tos_uri` URL strings; `resource_name` a string; \
            `tls_client_certificate_bound_access_tokens`, `dpop_bound_access_tokens_required` \
            booleans; `signed_metadata` a JWT whose claims are checked the same way; \
            language-tagged human-readable members \
            (`resource_name#fr`) likewise. A named `resource_metadata` URL that serves nothing \
            fails even when a well-known URI serves the document.",
        gap: Some(
            "not observable: the signature of `signed_metadata` is not verified: RFC 9728 §2.2 \
            leaves the signer's keys to the parties' own trust, which no request shows.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-003",
        required: "The PRM `resource` MUST identify this server by its canonical URI (scheme, \
            host, port, path; no fragment), or a less specific URI of the same origin.",
        probed: "The found PRM's `resource` against the endpoint URL without query and fragment, a \
            trailing slash ignored: equal, or a whole-segment path prefix on the same origin, \
            passes.",
        gap: None,
    },
    Coverage {
        rule: "MCP-AUT-004",
        required: "Each authorization server the PRM lists MUST publish RFC 8414 or OpenID Connect \
            discovery metadata whose `issuer` is identical to the issuer it was found from.",
        probed: "For each of the first 16 `authorization_servers`, side by side, the spec's order \
            (`/.well-known/oauth-authorization-server{path}`, \
            `/.well-known/openid-configuration{path}`, `{path}/.well-known/openid-configuration`, \
            or the two root forms) until a 200 JSON object names exactly that issuer; a document \
            naming another issuer is noted and the later URLs are still tried (a client skips \
            it, RFC 8414 §3.3); it fails only when no URL serves one naming the issuer.",
        gap: Some(
            "no bound: the spec gives no number of authorization servers; protocheck probes the \
            first 16 and the finding says how many more were listed and left.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-005",
        required: "An authorization server SHOULD send `iss` in authorization responses and, when \
            it does, MUST advertise `authorization_response_iss_parameter_supported: true`.",
        probed: "Each authorization server metadata found with a matching issuer must hold \
            `authorization_response_iss_parameter_supported: true`. On a run started by the web \
            form's sign-in, the redirect back is read too: an `iss` other than the issuer, or \
            none where it is advertised, fails the step (RFC 9207 §2.4), on error responses too.",
        gap: Some(
            "Whether `iss` is actually sent in authorization responses is probed only on runs \
            started by a person's sign-in (`web::sign_in`): it needs a user at the server's \
            authorization server; `check` and API runs read the advertisement only.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-006",
        required: "The 401 challenge's `WWW-Authenticate` SHOULD carry a `scope` parameter naming \
            the scopes the request needs.",
        probed: "The Bearer challenge of every 401 to the family probes sent without a token \
            (MCP-AUT-001's requests, every method the server serves) must hold a non-empty \
            `scope`.",
        gap: Some(
            "Not yet tried by a blind audit: no server written without sight of this probe \
            has broken the requirement, so the probe is not yet shown to cover it in full.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-007",
        required: "A token lacking the scope a request needs SHOULD get 403 with \
            `WWW-Authenticate: Bearer error=\"insufficient_scope\"`, the needed `scope` and \
            `resource_metadata`.",
        probed: "With a limited token given with the run (`check --limited-token`): every family \
            probe (MCP-AUT-001's requests) and a `tools/call` of each tool protocheck may call \
            (read-only, placeholder arguments) sent with it, side by side, not logged; and run-wide \
            over the requests that carried the run's bearer token. When a token was accepted on \
            some requests and refused on others with 401 or a challenged 403, each refusal must be \
            403 whose Bearer challenge names `error=\"insufficient_scope\"`, a non-empty `scope` \
            and `resource_metadata`.",
        gap: Some(
            "side effects: a token of too little scope comes only from the server's \
            authorization server (a client registration, which writes there, and a user's \
            sign-in), so without one given with the run (`--limited-token`) only the run's own \
            token is read; with one, tools protocheck may not run (not annotated read-only) are \
            not called, so a scope only they ask for is not met.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-008",
        required: "Servers MUST validate that a token was issued for them (audience, RFC 8707 \
            resource) and reject any other.",
        probed: "The first family probe refused without a token (MCP-AUT-001's requests; not a \
            `subscriptions/listen`), sent with a made-up JWT (`aud` \
            `https://audience.protocheck.invalid/mcp`, the PRM's first issuer, the advertised \
            scopes, a random HS256 signature) instead of the run's token: any non-2xx answer \
            passes.",
        gap: Some(
            "The forged token also fails signature validation, so a pass does not show the \
            audience check: a server that verifies signatures but not `aud` passes. Closing this \
            needs a genuine token for another resource from the same authorization server, which \
            only the operator can supply.",
        ),
    },
    Coverage {
        rule: "MCP-AUT-009",
        required: "Servers SHOULD NOT list `offline_access` in the `WWW-Authenticate` scope or in \
            PRM `scopes_supported`.",
        probed: "Looks for `offline_access` in the `scope` of the Bearer challenge of every 401 \
            to the family probes sent without a token, and in the PRM's `scopes_supported`.",
        gap: None,
    },
    Coverage {
        rule: "MCP-AUT-010",
        required: "Authorization servers MUST support PKCE and list `S256` in \
            `code_challenge_methods_supported` (clients refuse one without it).",
        probed: "Each authorization server metadata found with a matching issuer must list `S256` \
            in `code_challenge_methods_supported`. On a run started by the web form's sign-in, \
            the token request with the code and its S256 verifier must be answered with a \
            Bearer token.",
        gap: None,
    },
    Coverage {
        rule: "MCP-AUT-011",
        required: "Authorization servers SHOULD support Client ID Metadata Documents \
            (`client_id_metadata_document_supported: true`); Dynamic Client Registration alone is \
            deprecated.",
        probed: "Each authorization server metadata found with a matching issuer must hold \
            `client_id_metadata_document_supported: true`; one with only `registration_endpoint` \
            is named as DCR alone.",
        gap: Some(
            "Only the advertisement is read on `check` and API runs; a run started by the web \
            form's sign-in registers by protocheck's own metadata document where it is \
            advertised, so the server's fetching and accepting it shows as the sign-in going \
            on (a refusal at the authorization step stops it). Whether it validates the document \
            strictly (a wrong `client_id`, an unlisted redirect URI) is not probed.",
        ),
    },
    Coverage {
        rule: "MCP-SEC-001",
        required: "Servers MUST validate `Origin` on all incoming connections and answer a \
            present, invalid `Origin` with HTTP 403 Forbidden (whose body MAY be a JSON-RPC \
            error).",
        probed: "Sends each of the family probes (`survey::family_probes`: `server/discover`; with `tools` advertised \
            `tools/list` and `tools/call` of an unknown tool; with `resources` `resources/list`, \
            `resources/templates/list` and `resources/read` of a made-up `protocheck://missing/…` \
            URI; with `prompts` `prompts/list` and `prompts/get` of an unknown prompt; with \
            `completions` `completion/complete` on an unknown prompt; and a short \
            `subscriptions/listen` when a `listChanged` or `resources.subscribe` is advertised: \
            every method the server serves) with `Origin: https://dns-rebinding.protocheck.invalid`; \
            each must get 403 (an authorization refusal, a 401 or a 403 `insufficient_scope` with \
            its Bearer challenge, sets that method aside, named). Beside them a notification POST \
            (`notifications/cancelled`) must get 403, and a GET and a DELETE on the endpoint must \
            not be served (2xx fails; 403 passes; another refusal is accepted and named, since \
            2026-07-28 defines neither). Every refused method is sent again with each look-alike \
            Origin (`null`, a foreign host on the server's own port, loopback names and the \
            target host under `.protocheck.invalid`, `http://attacker-localhost`), each needing \
            403. Another port or scheme of the server's own host is not sent: the spec leaves \
            which origins are valid to the server, and a careful one may allow them.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SEC-002",
        required: "The endpoint is served over HTTPS with a certificate chain that reaches a \
            trusted root, names the host and has not expired.",
        probed: "An `https:` endpoint passes when the run's connections succeeded (rustls checks \
            the chain, host name and validity) and fails when the handshake did; `http:` fails \
            unless the host is loopback, which skips.",
        gap: None,
    },
    Coverage {
        rule: "MCP-SEC-003",
        required: "Error messages should not repeat request headers or credentials.",
        probed: "Every request carries `x-protocheck-canary` with a value unique to the run, the \
            client's `User-Agent` and, with a run token, `Authorization`. Each answer is searched \
            as it is read, before redaction or cut, for the value of every request header the \
            request body does not hold (the canary, `User-Agent`, the credentials of \
            `Authorization`, any other such header), in every response header and every body \
            byte read (each SSE event's data). `Accept`, `Content-Type`, `MCP-Protocol-Version`, \
            `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` are not looked for: their values are \
            common text or the body's own, which an error names when it names what it refuses \
            (a reading accepted). Judged: the rule's own requests ending in errors (a \
            `tools/call` of an unknown tool without `Mcp-Method`, an unknown method, \
            `server/discover` with version `1900-01-01`) and every answer to a valid probe of \
            the run, errors to unknown tools, prompts and resources among them; a finding names \
            the header and where it came back, never the value.",
        gap: Some(
            "no bound: the spec names no set of error paths, so errors that other requests \
            would provoke are not provoked (answers to other rules' invalid probes are judged by \
            those rules alone), and it bounds no answer's size: an answer is read up to \
            protocheck's answer cap (16 MiB by default) and an SSE stream to its 64th event or \
            its final response, and an echo past that is not seen.",
        ),
    },
    Coverage {
        rule: "MCP-SEC-004",
        required: "Every `icons[].src` (on the server's Implementation, tools, prompts, resources \
            and resource templates) MUST be an `https:` or `data:` URI, never `javascript:`, \
            `file:`, `http:` or another scheme, and SHOULD be same-origin with the server.",
        probed: "Run-wide: the icons of `serverInfo` (in `_meta` and at the top level) in every \
            result answering a valid probe of the run and in the opening legacy `initialize` \
            result, and of every tool, prompt, resource and template the survey listed: a `src` \
            of another scheme than `https:` or `data:`, or not a URI, fails; an `https:` icon of \
            another origin than the endpoint (scheme, host in any case, port with defaults) warns \
            (over stdio only the scheme is judged). Each distinct `https:` icon URL is then \
            fetched with a GET without credentials through the run's guarded client (address \
            rules of the run, no redirect followed by the client, status and headers read, body \
            not), and each redirect is followed by hand while it stays `https:` on the icon's \
            origin: a redirect to another scheme fails, to another origin warns.",
        gap: Some(
            "no bound: the spec bounds neither the number of icons nor the length of a redirect \
            chain: protocheck fetches the first 64 distinct icon URLs and follows 5 redirects of \
            each, and a pass names what it did not fetch or follow; the lists are those of the \
            survey's walks (10 pages each). Besides, for side effects, results of tools protocheck \
            may not run (not `readOnlyHint: true`, allow_tool_calls unset) are not seen.",
        ),
    },
    Coverage {
        rule: "MCP-SEC-005",
        required: "Implementations MUST NOT automatically dereference `$ref`s to network URIs; \
            schemas that fail because an external `$ref` cannot be resolved should be rejected.",
        probed: "Every `$ref` and `$dynamicRef` in listed tools' `inputSchema` and `outputSchema`, \
            resolved against the root `$id`: an `http`, `https`, `ftp`, `ws`, `wss` or `//host` \
            target fails.",
        gap: Some(
            "not observable: the requirement binds whoever resolves schemas, and whether the \
            server itself fetches a network `$ref` shows in no answer; the published schemas are \
            judged instead. Besides, a nested `$id` that changes the base URI is ignored.",
        ),
    },
    Coverage {
        rule: "MCP-SEC-006",
        required: "Implementations SHOULD bound schema depth, subschema count and validation time, \
            so a hostile schema cannot exhaust them.",
        probed: "Listed tools' `inputSchema` and `outputSchema`: more than 32 levels of nesting or \
            more than 1000 subschemas warns (protocheck's bounds; the spec gives no number).",
        gap: Some(
            "no bound: the spec names no depth, count or time to test a server's validator \
            against, so protocheck judges the schemas the server publishes by bounds of its own \
            and sends no hostile schema or argument to measure the validator.",
        ),
    },
    Coverage {
        rule: "MCP-SEC-007",
        required: "Servers must not reflect `Authorization` header values into responses.",
        probed: "A made-up `Authorization: Bearer pc-authz-canary-…` on a `tools/call` without \
            `Mcp-Method`, on a valid `server/discover` and on each of the family probes (every \
            method the server serves), side by side; with a run token, every answer to a valid \
            probe of the run too. Each answer is searched as it is read, before redaction, for \
            the token's credentials in every response header (`Set-Cookie` and the other \
            credential headers included) and every body byte read (each SSE event's data); a \
            finding names the header and where it came back, never the value.",
        gap: Some(
            "no bound: the spec bounds no answer's size: an answer is read up to protocheck's \
            answer cap (16 MiB by default, `--max-answer-bytes`) and an SSE stream to its 64th \
            event or its final response, and a reflection past that is not seen.",
        ),
    },
    Coverage {
        rule: "MCP-DEP-001",
        required: "`ping` was removed in 2026-07-28: a modern server answers it as a method it \
            does not implement, not with a result.",
        probed: "`ping` as a 2026-07-28 request (headers and `_meta`), or inside a legacy session \
            on a legacy-only server; a result warns; a refusal by header validation (-32020), \
            which comes before the method is looked up, is not verified; any other answer passes.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DEP-002",
        required: "`logging/setLevel` was removed: the log level travels per request in `_meta` \
            `io.modelcontextprotocol/logLevel`; a modern server does not implement it.",
        probed: "`logging/setLevel` with `level: info`, sent and judged as MCP-DEP-001 sends \
            `ping`: a result warns, -32020 is not verified.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DEP-003",
        required: "`resources/subscribe` and `resources/unsubscribe` were removed in favour of \
            `subscriptions/listen` with `resourceSubscriptions`; a modern server implements \
            neither.",
        probed: "Both, naming the first listed resource URI (else `protocheck://probe`) in \
            `params.uri` and, as 2026-07-28 requests, in `Mcp-Name` as for `resources/read`; or \
            inside a legacy session on a legacy-only server. A result warns; -32020 is not \
            verified.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DEP-004",
        required: "The deprecated 2024-11-05 HTTP+SSE transport (a GET opening an event stream \
            whose first event is `endpoint`) SHOULD NOT be served.",
        probed: "GET with `Accept: text/event-stream` on the endpoint URL and, for each of \
            `sse`, `events` and `messages`, on that name beside the endpoint (resolved against \
            it: `/api/sse` for `/api/mcp`), under it (`/api/mcp/sse`) and at the origin's root \
            (`/sse`), each URL once, side by side; each is watched for its first event, and an \
            `endpoint` first event warns.",
        gap: Some(
            "no bound: the 2024-11-05 transport lets a server mount its SSE stream at any path, \
            so a legacy stream at a path of another name (`/legacy/stream`) is not found.",
        ),
    },
    Coverage {
        rule: "MCP-DEP-005",
        required: "Roots, Sampling and Logging are deprecated: a server should not advertise \
            `logging` (nor `roots` or `sampling`, client capabilities) in its capabilities.",
        probed: "Looks for `logging`, `roots` and `sampling` in the capabilities of the opening \
            `server/discover` result and of the result to the run's opening legacy `initialize` \
            (asking for 2025-11-25; on a dual-era or legacy-only server, what its legacy clients \
            see), whichever of the two carries capabilities; either advertising one fails.",
        gap: Some(
            "Capabilities a server advertises only for some request options are not seen: \
            discover is sent without `_meta` `logLevel` (the round-4 blind audit's \
            `dep005-logging-on-loglevel`).",
        ),
    },
    Coverage {
        rule: "MCP-DEP-006",
        required: "MAY: a dual-era server answers `initialize` with legacy semantics, negotiating \
            a legacy revision (never 2026-07-28); one that lists legacy revisions in \
            `supportedVersions` must then accept it.",
        probed: "The opening legacy `initialize` (protocolVersion `2025-11-25`, no 2026-07-28 \
            headers; over stdio sent to a fresh child when the run's child refused it): a result \
            negotiating a legacy revision passes; one negotiating 2026-07-28 fails; an error fails \
            when discover lists legacy revisions, else skips.",
        gap: None,
    },
    Coverage {
        rule: "MCP-DEP-007",
        required: "A modern-only server SHOULD name the protocol versions it supports in any error \
            it returns to an `initialize` request, on any transport.",
        probed: "The opening legacy `initialize` (no 2026-07-28 headers; over HTTP usually refused \
            by header validation), then an `initialize` sent as a 2026-07-28 request (headers, \
            `_meta`, `protocolVersion` 2026-07-28): each error passes when \
            `error.data.supported` lists versions or its text names a version `server/discover` \
            lists (other than the 2025-11-25 asked for). Skipped for dual-era servers.",
        gap: None,
    },
    Coverage {
        rule: "MCP-REG-001",
        required: "The `server.json` follows the MCP Registry's `server.schema.json`: `name` \
            (pattern, 3–200), `description` (1–100) and `version` (at most 255) required, and the \
            constraints on `title`, `websiteUrl`, `repository`, `packages`, `remotes` and `icons`.",
        probed: "Reads `options.server_json` (the document, or a URL fetched through the run's \
            client; skipped without one) and checks by hand: the required strings and lengths, the \
            `name` pattern, `$schema` and `websiteUrl` as URLs, `repository.url`/`source`, \
            `packages[]` `registryType`, `identifier`, `transport.type` and no `latest` version, \
            `remotes[]` `type` and `url` pattern, `icons[].src` https of at most 255 characters.",
        gap: Some(
            "Not validated against the schema itself: `icons` `mimeType`/`sizes`/`theme`, \
            `packages[].fileSha256` for mcpb, the allowed transport types, \
            `remotes[].headers`/`variables` and `repository` subfields are not checked; validating \
            with the published schema (the `jsonschema` crate is already a dependency) would cover \
            them.",
        ),
    },
    Coverage {
        rule: "MCP-REG-002",
        required: "The name's namespace is verifiable by the registry: `io.github.<user-or-org>/` \
            (GitHub authentication) or a reverse-DNS domain proven by a DNS TXT record or an HTTP \
            well-known file.",
        probed: "From the name alone: an `io.github.` namespace with a valid GitHub login (and a \
            GitHub `repository.url` under the same owner), or a reverse-DNS namespace of valid \
            labels with an alphabetic top-level label, passes.",
        gap: Some(
            "Ownership itself is not checked: no DNS TXT lookup, no HTTP well-known fetch and no \
            GitHub query, so a well-formed namespace the publisher does not own passes.",
        ),
    },
    Coverage {
        rule: "MCP-REG-003",
        required: "`version` is present and valid semantic versioning (no `v` prefix; ranges are \
            refused by the registry; other non-semver is accepted but cannot be ordered).",
        probed: "A strict SemVer 2.0.0 parse of `version`; ranges are named; absent or not a \
            string fails.",
        gap: None,
    },
    Coverage {
        rule: "MCP-REG-004",
        required: "A remote declared in `remotes[].url` is the endpoint being probed.",
        probed: "Every `remotes[].url` against the endpoint URL (scheme, host ignoring case, \
            default port, path ignoring a trailing slash, query); a URL with `{variable}`s is \
            matched as a pattern, each variable standing for any non-empty text without \
            whitespace, or one of its `variables.<name>.choices`, a variable named twice taking \
            one value. A matching remote's `type` is then compared with what the endpoint \
            serves: `streamable-http` needs a JSON-RPC answer to the run's opening \
            `server/discover` or `initialize` POST, `sse` an `endpoint` first event on a GET of \
            the endpoint (MCP-DEP-004's watch). One remote matching in URL and type passes; no \
            remotes skips; a template over 16 variables or 200000 matching steps is left \
            undecided (skip when no other remote matches).",
        gap: Some(
            "Not yet tried by a blind audit: no server written without sight of this probe \
            has broken the requirement, so the probe is not yet shown to cover it in full.",
        ),
    },
];
