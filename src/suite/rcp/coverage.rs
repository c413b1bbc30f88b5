//! What each rule's probes cover against what its requirement names (see
//! `suite::coverage`); `docs/coverage.md` is generated from this table.

use crate::suite::Coverage;

/// One entry per rule of the catalogue, in catalogue order.
pub static COVERAGE: &[Coverage] = &[
    Coverage {
        rule: "RCP-L0-001",
        required: "`info` answers at any time, before `initialize` included, with the shape of the \
            `initialize` result (`protocolVersion`, `server`, `capabilities`); before a successful \
            `initialize` it reports the server's default (maximum) capability set (§7.2, §13.2, \
            §14.1(1)).",
        probed: "One `info {}` is the run's first request, before any `initialize`; its result must carry a `server` \
            object, and once the handshake succeeded every capability key `initialize` advertised must be among \
            its `capabilities` (the session's set is part of the default, maximum one; values are not compared, \
            since a session may be narrower). The rest of its shape is judged by RCP-OUT-005, `info` after \
            `initialize` by RCP-L0-021.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-002",
        required: "`ping` answers at any time, before `initialize` included, and echoes any \
            `nonce` with the same JSON type and value (§7.15, §14.1(1)); this rule takes a numeric \
            nonce.",
        probed: "`ping {nonce: 777}` before `initialize`, `ping {nonce: 778}` inside a batch before it, `ping {nonce: \
            4242}` after it alone and `ping {nonce: 4243}` inside a batch after it; each result's `nonce` must be \
            that number.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-003",
        required: "As RCP-L0-002, with a string nonce: echoed with the same type and value, at any \
            time (§7.15, §14.1(1)).",
        probed: "`ping {nonce: \"protocheck-nonce-7\"}` before `initialize`, another inside a batch before it, one \
            after it alone and one inside a batch after it, over HTTP and stdio alike; each result's `nonce` must \
            be that string.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-004",
        required: "Every request before a successful `initialize`, except `info`, `ping` and \
            `shutdown`, gets -32001, whatever the method: every capability method (`retrieve`, \
            `embed`, `rerank`, `graph`, …), writes and undefined methods alike (§13, §14.1(3)).",
        probed: "Before `initialize`: `retrieve {query, k: 1}` alone; every other read-only method RCP defines, \
            advertised or not, with valid params (`rerank`, `embed`, `graph`, `embed/sparse`, `embed/multi`, \
            `query/transform`, `catalog/list`, `memory/recall`); `index/add {documents: []}` and `index/delete \
            {ids: []}`, which write nothing even if served; the undefined `does/not/exist` and \
            `retrieve/protocheck-undefined` (-32004 accepted too: §12 prefers -32004 when both apply); and a \
            `retrieve` inside a batch (§11: gating composes with batching). Every one must get -32001. Skipped on \
            an HTTP server found already initialized or stateless (decisions 3 and 4).",
        gap: Some(
            "side effects: `feedback` and `memory/build` are not sent before `initialize`: a server that does not \
            gate them would record feedback or build a memory (decision 7).",
        ),
    },
    Coverage {
        rule: "RCP-L0-005",
        required: "A notification (no `id`) is never answered, not even with an error, whatever \
            the method and whenever it comes (§4.5, §14.1(6)); this rule takes a gated method.",
        probed: "A `retrieve {query, k: 1}` notification before `initialize` and again on the initialized session. \
            Over stdio no line may come before the reply to a barrier `ping`; over HTTP the answer must carry no \
            JSON-RPC body (its status is RCP-OUT-003's).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-006",
        required: "As RCP-L0-005, for a method open at any time (`info`): no answer to the \
            notification (§4.5, §14.1(6)).",
        probed: "An `info {}` notification before `initialize`, judged as RCP-L0-005; RCP-L0-030's \
            batch carries an `info` notification after `initialize` as well.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-007",
        required: "A notification for a method the server does not understand is ignored without \
            an answer, and any `notifications/*` method it does not recognise is silently ignored \
            (§4.5, §14.1(6)).",
        probed: "Notifications for four undefined methods, `notifications/protocheck-unknown` (the reserved \
            namespace), `x-protocheck/unknown` (a vendor namespace), `embed/protocheck-unknown` (a namespace of the \
            protocol's methods) and `does/not/exist` (outside them), before `initialize` (last, so that a server \
            they stop stops at the same point of every run) and again on the initialized session, each judged as \
            RCP-L0-005; a batch of a `ping` between two of them must get the `ping`'s entry alone; then `ping {}` \
            must still be answered with a result, `info` must report the session's capabilities unchanged, and the \
            first advertised capability method must not be refused as uninitialized. A server that stops \
            answering right after one of them fails.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-008",
        required: "`notifications/cancel` for an unknown or an already-answered `id` is a no-op: \
            no answer, no effect on the session (§7.14, §14.1(6)).",
        probed: "`notifications/cancel {id: 987654321, reason}`, an id protocheck never uses, before `initialize` and \
            after it, and after it a cancel for the id of a `ping` just answered; none may be answered (judged as \
            RCP-L0-005), and a `ping` after them must still get a result.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-009",
        required: "`initialize` with no common version ≥ 1 (`protocolVersion: 0`) gets -32002 \
            (§7.1, §12).",
        probed: "`initialize {protocolVersion: 0, client, capabilities: {}}` before the real \
            handshake; -32002 passes. Skipped on an HTTP server already initialized (decision 3).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-010",
        required: "After an `initialize` that failed with -32002 the session is still \
            uninitialized, and gated calls still get -32001 (§7.1, §13).",
        probed: "When the version-0 `initialize` got -32002 and the first pre-`initialize` \
            `retrieve` got -32001, `retrieve {query, k: 1}` is sent again; -32001 passes.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-011",
        required: "`initialize` succeeds with the negotiated `protocolVersion` = min(client, \
            server), an integer ≥ 1, and a repeated `initialize` is accepted after a failed one \
            (§7.1, §13, §14.1(1)).",
        probed: "The handshake, sent after the version-0 probe, offers `protocolVersion: 1` with \
            the client `log` capability, an unknown capability key and an unknown `_meta` key \
            (again without the unknown keys if refused); the result's `protocolVersion` must be an \
            integer ≥ 1 and not above the 1 offered. On a server already initialized (decision 3) \
            the result is read from `info` and the finding says so.",
        gap: Some(
            "not observable: negotiation down from a higher offer. protocheck speaks version 1 only and offers 1, \
            and min(1, server) is 1 whatever the server does, so a server that echoes the client's version \
            instead of taking the minimum answers the same; offering 2 would show it only by ending, with a \
            correct server that speaks 2, a session in a version protocheck cannot speak (over stdio the run's one \
            process).",
        ),
    },
    Coverage {
        rule: "RCP-L0-012",
        required: "The `initialize` result advertises at least one of `embed`, `rerank`, \
            `retrieve`, `graph` (present and not null) (§14.1(2)).",
        probed: "Reads the `capabilities` of the `initialize` result (of `info` on a server \
            already initialized) for those four keys; a key set to `false` counts as not offered.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-013",
        required: "`server.name` of the `initialize` result is a non-empty string (§7.1, \
            PeerInfo).",
        probed: "Reads `server.name` of the `initialize` result (of `info` on a server already \
            initialized); a blank string fails. `info`'s own `server` is judged by RCP-L0-001 and \
            RCP-OUT-005.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-014",
        required: "The server states its level as `_meta.conformance`, exactly \"L0\", \"L1\" or \
            \"L2\" (case-sensitive), in the `initialize` and `info` results (§14 preamble; \
            decision 1).",
        probed: "Reads `_meta.conformance` of the `initialize` result (of `info` on a server already initialized): \
            one of the three levels; then the `info` before `initialize` (RCP-L0-001's) and the `info` after it \
            (RCP-L0-021's) must state the same level.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-015",
        required: "After a successful `initialize`, a second `initialize` gets -32600 (§7.1, §13).",
        probed: "Right after the handshake, the handshake's `initialize` again with its params \
            unchanged (string id `protocheck-reinit`), then an `initialize {protocolVersion: 1}` \
            with other params (no client capabilities, id `protocheck-reinit-differing`); each \
            must get -32600. Skipped on a stateless HTTP server (decision 4).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-016",
        required: "Unknown object fields, unknown capability keys and unknown `_meta` keys are \
            ignored, never rejected, in any params of any method (§4.4, §4.6, §6.2, §14.1(7)); \
            filter field names are the one exception (§8).",
        probed: "The handshake's `initialize` carries an unknown client capability key \
            (`x-protocheck-probe`) and an unknown `_meta` key (a plain `initialize` tells a \
            refusal from a broken handshake); a `ping` carries an unknown top-level params field; \
            each read-only capability method the session advertises (`retrieve`, `rerank`, \
            `embed`, `embed/sparse`, `embed/multi`, `query/transform`, `graph`, `memory/recall`) \
            gets valid params plus an unknown top-level field and an unknown `_meta` key; `info` \
            and (when advertised) `catalog/list` get an unknown top-level field. Inside nested \
            objects, an unknown key goes into `retrieve`'s `fusion`, `rerank`, `mmr` and \
            `recency`, into a filter leaf and an `and`, an `or` and a `not` node (on an advertised \
            field and operator; never a field name), and into a text Content block wherever one \
            may stand (`retrieve` and `rerank` `query`, `rerank` `passages`, `embed` and \
            `embed/multi` `inputs`, `embed/sparse` `texts`). Every one must succeed; a refused \
            probe goes again without the unknown key and fails only when that succeeds.",
        gap: Some(
            "side effects: the write methods (`index/*`, `feedback`, `memory/build`) get no \
            unknown field unless writes are allowed, and `shutdown` ends the session its answer \
            would be judged in. not observable: a nested object the server refuses with and \
            without the unknown key (an option it does not offer, such as `recency` or `rerank` \
            without built-in rerank) cannot show whether the key is ignored; the finding names \
            each such place.",
        ),
    },
    Coverage {
        rule: "RCP-L0-017",
        required: "A method RCP does not define gets -32004, preferred over -32003 (§7, §12, \
            §14.1(4)).",
        probed: "After `initialize`, ten undefined methods with empty params, side by side: `does/not/exist`, \
            `protocheckUndefined`, and one in each namespace of the protocol's own (`retrieve/…`, `rerank/…`, \
            `embed/…`, `index/list`, `memory/…`, `graph/…`, `catalog/…`, `query/…`); each must get -32004, \
            not -32003 (§12 \"MUST prefer -32004 when both apply\").",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-018",
        required: "Every method RCP defines whose capability is not advertised gets -32003: \
            `embed`, `embed/sparse`, `embed/multi`, `rerank`, `retrieve`, `query/transform`, \
            `graph`, `catalog/list`, `memory/build`, `memory/recall`, `feedback`, `index/add` \
            (also without `index.writable: true`) and `index/delete` (§7, §12, §14.1(4)).",
        probed: "Every read-only method whose capability is not advertised (`catalog/list`, `query/transform`, \
            `embed/sparse`, `embed/multi`, `memory/recall`, `graph`, `embed`, `rerank`, `retrieve`) gets its own \
            request with valid params, side by side; so do `index/add {documents: []}` (when `index` is not \
            advertised or not `writable: true`) and `index/delete {ids: []}` (when `index` is not advertised), \
            which write nothing even on a server that serves them. Each must get -32003.",
        gap: Some(
            "side effects: `feedback` and `memory/build` are never sent (decision 7): on a server that serves them \
            unadvertised they would record feedback or build a memory.",
        ),
    },
    Coverage {
        rule: "RCP-L0-019",
        required: "An advertised method called with an option value outside the advertised set (or \
            the spec's default set where the list is absent) gets -32005 under the default \
            `strict: true`: `retrieve` `mode`, `fusion.method`, `unit`, `modality`, \
            `rerank.method`, `filter` operators and non-text Content blocks; `embed` and \
            `embed/multi` `encoding` and modalities; `rerank` `method`; `query/transform` \
            `method`; `graph` `op` (§4.8, §7.3.1, §7.7, §8, §12, §14.1(4)).",
        probed: "Every value of the spec's enumeration outside each set is sent once with \
            otherwise valid params, expecting -32005: `retrieve` `mode` (`retrieve.modes`), \
            `fusion.method` in mode `hybrid` (`retrieve.fusion`), `unit` (`retrieve.units`, \
            default chunk/passage), `modality` (`retrieve.modalities`, default text), an image and \
            an audio block as the `query` (same set), `rerank.method` (`rerank.methods`), \
            `rerank.model` outside `rerank.models` (with built-in rerank) and a clause per operator \
            outside `filter.operators` (-32602 accepted too when no advertised field's type fits \
            it); `embed` `encoding` (default json) and an image and an audio block (default text; \
            -32602 accepted too for a block); `embed/multi` `f32-base64` (unless \
            `embed.encodings` lists it) and an image and an audio block; `rerank` `method`, \
            `model` outside `rerank.models`, and an image and an audio block as a passage and as \
            the query (`rerank.modalities`, default text); `query/transform` `method`; `graph` \
            `op`.",
        gap: Some(
            "not advertised: the lists the spec gives no default for (`retrieve.modes`, \
            `retrieve.fusion`, `rerank.methods`, `rerank.models`, `transform.methods`, \
            `graph.ops`, `filter.operators`) are probed only when advertised, and no capability \
            field names the values `retrieve` `rewrite` accepts, so no value is known to be \
            outside the server's set. side effects: `memory/build` `scope` outside \
            `memory.scopes` and `index/add` `chunk`/`contextual` without \
            `index.chunking`/`contextual` are writes, not sent unless writes are allowed.",
        ),
    },
    Coverage {
        rule: "RCP-L0-020",
        required: "Malformed params get -32602 instead of a crash, on every method: a missing \
            required field, a wrong JSON type, a value out of range (`k` and the other counts \
            non-integer or below 1), a funnel violation (`candidateK` < `k`); only fields the spec \
            lets a server that does not offer the feature ignore (`seed`, `level`, `tokenBudget`, \
            `sessionId`) may get a result (§3.3, §12, §14.1(5)).",
        probed: "For every advertised read-only method (`retrieve`, `rerank`, `embed`, \
            `embed/sparse`, `embed/multi`, `query/transform`, `graph`, `memory/recall`), from \
            valid params built from the advertisement: each required field left out; each \
            top-level field of protocheck's schema table given a value of the wrong JSON type (the \
            legacy `texts` alone; `fusion` as a fusion method's name, `mmr` as a number, \
            `recency` as a string, `rerank` as `true`); each integer field (`k`, `candidateK`, \
            `level`, `tokenBudget`, `seed`, `topN`, `n`, `hops`) below the schema's minimum (`k: \
            0`), fractional (1.5), boolean (`true`) and a string (\"3\"), and `k: -5`; the funnel \
            broken three ways (`candidateK` < `k`, `rerank.topN` < `k`, `candidateK` < \
            `rerank.topN`); inside `fusion` (`method`, `rrfK`, `alpha` above 1 and a string, \
            `weights`), `rerank` (`method`, `model`, `topN` a string, fractional, boolean, 0), \
            `mmr` (`lambda` above 1, below 0, a string) and `recency` (`halfLifeDays`, `field`) a \
            wrong type or a value out of the schema's range; each array field (`passages`, \
            `inputs`, `texts`, `seedIds`) holding a number; six malformed Content blocks (text \
            without `text`, no `type`, `text` a number, image without `mimeType`, `data` and `uri` \
            both, `type` outside the enumeration) wherever a block may stand; and `params` as an \
            array, a string and null. -32602 passes; -32600 too for a non-object `params`; \
            -32005 too for an optional field and for a non-text block outside the advertised \
            modalities (-32015 too for `cursor`); and a result for an exempt field (`seed`, \
            `level`, `tokenBudget`, `sessionId`, `graph` `level`) whose feature is not \
            advertised.",
        gap: Some(
            "side effects: the write methods (`index/add`, `index/delete`, `feedback`, \
            `memory/build`) are left out: a server that does not validate could act on a \
            malformed write (decision 7).",
        ),
    },
    Coverage {
        rule: "RCP-L0-021",
        required: "After a successful `initialize`, `info` reports the same capability set, fixed \
            for the session: no key added, dropped or changed (§7.2, §13.2).",
        probed: "One `info {}` after `initialize`; its `capabilities` are compared key by key and \
            value by value with those `initialize` returned.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-022",
        required: "A frame that is not valid JSON gets -32700 with `id: null`; over HTTP, status \
            400 (with or without that body) or 200 with it (§4, §5.2, §12).",
        probed: "Two frames near the end of the run: a `ping` frame cut off mid-object, and a line \
            that is not JSON at all; each must get -32700 with `id: null` (HTTP 200 or 400), or \
            HTTP 400 without a JSON-RPC body.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-023",
        required: "`shutdown {}` answers `{}` at any time, before `initialize` included, and the \
            server begins no request received after that answer (§7.12, §13, §13.1).",
        probed: "One `shutdown {}` at the end of the conversation, after `initialize`; a result \
            object passes.",
        gap: Some(
            "not probed: `shutdown` before `initialize` (it would end the run's one session: a \
            stdio server exits), and that a request sent after the `shutdown` answer is not \
            processed (a `ping` after it, expecting no reply, would probe that).",
        ),
    },
    Coverage {
        rule: "RCP-L0-024",
        required: "Every reply echoes a numeric request `id` unchanged, same JSON type and value, \
            integers up to 2^53 − 1 included (§4.6, §4.7, §14.1(5)).",
        probed: "Judged at the end over every reply to a numeric id, batch entries included (paired with their \
            member by id, then compared exactly): every request protocheck sends alone carries an increasing \
            integer id, on every method of the run, and one `ping` carries 9007199254740991.",
        gap: Some(
            "side effects: the write methods (`index/*`, `feedback`, `memory/build`) are sent only with writes \
            allowed, or as the empty `index/*` of RCP-L0-004 and RCP-L0-018, which a correct server refuses.",
        ),
    },
    Coverage {
        rule: "RCP-L0-025",
        required: "Every reply echoes a string request `id` unchanged, same JSON type and value \
            (§4.7, §14.1(5)).",
        probed: "Judged at the end over every reply to a string id, batch entries included: `info` with \
            \"017\" and \"protocheck-id-info\", `ping` with \"0100\" and \"protocheck-id-ping\", each advertised \
            read-only capability method with a numeric-looking id (\"018\", \"019\", …, RCP-L0-016's probe) and a \
            plain one (\"protocheck-id-retrieve\", …), the two repeat `initialize`s, and the string ids of the \
            batches (RCP-L0-030, RCP-L0-002/003).",
        gap: Some(
            "side effects: the write methods (`index/*`, `feedback`, `memory/build`) get no string id unless \
            writes are allowed.",
        ),
    },
    Coverage {
        rule: "RCP-L0-026",
        required: "Every reply is well-formed JSON-RPC 2.0: `jsonrpc: \"2.0\"`, the id, and \
            exactly one of `result` (an object) or `error` (integer `code`, string `message`) (§4, \
            §14.1(5)).",
        probed: "Judged at the end over every framed reply of the run, the later levels' replies \
            included, a batch's members one by one.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-027",
        required: "A fact (decision 3): whether an HTTP server's initialized state is per session \
            or one flag for the whole process, which decides whether the pre-`initialize` checks \
            can be verified (§5.2).",
        probed: "Inferred over HTTP from the pre-`initialize` `retrieve` (answered other than \
            -32001) and two `initialize`s refused with -32600 on a connection that carried none \
            before; skipped over stdio.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-028",
        required: "A fact (decision 4): whether an HTTP server keeps session state, or treats \
            every request as initialized and accepts `initialize` more than once, as a stateless \
            server may (§5.2).",
        probed: "Inferred over HTTP from the pre-`initialize` `retrieve` being answered and the \
            repeat `initialize` succeeding; skipped over stdio.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-030",
        required: "A batch gets an array with one reply per request, in any order, and none for \
            its notifications; a batch of only notifications gets no output; a malformed member \
            gets a -32600 entry with `id: null` while the others are processed (§11).",
        probed: "After `initialize`: a batch of `ping {nonce: 1}`, an `info` notification and `ping {nonce: 2}` must \
            get exactly two entries, one per id (paired loosely), both results; a batch of `ping {nonce: 3}` and \
            the malformed member `1` must get the `ping`'s result and one -32600 entry with `id: null`; a batch of \
            a `ping`, an `info` notification and two malformed objects (no `method`; a `method` that is a number) \
            must get the `ping`'s entry and two -32600 entries (`id` null, or the member's own); a batch of an \
            `info` and a `ping` notification must get no answer. Before `initialize`, a batch of a `retrieve` and \
            two `ping`s must get one entry each: the `retrieve`'s is judged by RCP-L0-004 (-32001, gating \
            composes with batching), the nonces by RCP-L0-002/003; unknown notifications inside a batch by \
            RCP-L0-007; the ids' exact echo by RCP-L0-024/025.",
        gap: Some(
            "a member whose `jsonrpc` is not \"2.0\" is not sent: the SDK-based panel servers \
            serve one, and whether RCP's \"well-formed request\" covers the version field is a \
            reading still to settle.",
        ),
    },
    Coverage {
        rule: "RCP-L0-031",
        required: "An empty batch `[]` gets a single, non-array -32600 with `id: null`; over HTTP, \
            status 400 alone also passes (§5.2, §11).",
        probed: "Sends `[]` after `initialize`; judged as required.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-032",
        required: "`notifications/cancel` sent as a request (with an id) is refused with an error; \
            the spec body names no code and Appendix E calls it malformed, suggesting -32600 \
            (§7.14, §12; a SHOULD here).",
        probed: "`notifications/cancel {id: 987654321}` with a request id after `initialize`; any \
            JSON-RPC error passes, a result or no answer warns.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L1-001",
        required: "`retrieve.modes` lists `dense`, and `retrieve` in mode `dense` returns ranked \
            hits, each with an `id` and a numeric `score`, with every option L1 asks for (`filter`, \
            `k`, `minScore`) honoured in that mode (§7.7, §14.2).",
        probed: "When `dense` is listed: one `retrieve {query, k: 5, mode: \"dense\"}`, the query \
            being up to eight words of a passage the opening `retrieve {query: \"retrieval\", k: 5, \
            includeText: true}` returned; the hits must carry an `id` and a numeric `score`, and may \
            not be empty when the query came from a passage. Its order is judged by RCP-L1-007; its \
            request is repeated with every filter probe of RCP-L1-004 and both `minScore` probes of \
            RCP-L1-009 (each mode's own), and `k` is held on every result by RCP-L1-008.",
        gap: Some(
            "not observable: a query known to match needs words of a passage the server returned; \
            when no hit of the opening `retrieve` (which asks for `includeText: true`) carried text, \
            the query falls back to \"retrieval\", and an empty answer to it cannot be told from a \
            corpus that holds nothing near it.",
        ),
    },
    Coverage {
        rule: "RCP-L1-002",
        required: "`retrieve.modes` lists `sparse`, and `retrieve` in mode `sparse` returns ranked \
            hits, each with an `id` and a numeric `score`, with every option L1 asks for (`filter`, \
            `k`, `minScore`) honoured in that mode (§7.7, §14.2).",
        probed: "When `sparse` is listed: one `retrieve {query, k: 5, mode: \"sparse\"}`, the query \
            being up to eight words of a passage the opening `retrieve {query: \"retrieval\", k: 5, \
            includeText: true}` returned; the hits must carry an `id` and a numeric `score`, and may \
            not be empty when the query came from a passage. Its order is judged by RCP-L1-007; its \
            request is repeated with every filter probe of RCP-L1-004 and both `minScore` probes of \
            RCP-L1-009 (each mode's own), and `k` is held on every result by RCP-L1-008.",
        gap: Some(
            "not observable: a query known to match needs words of a passage the server returned; \
            when no hit of the opening `retrieve` (which asks for `includeText: true`) carried text, \
            the query falls back to \"retrieval\", and an empty answer to it cannot be told from a \
            corpus that holds nothing near it.",
        ),
    },
    Coverage {
        rule: "RCP-L1-003",
        required: "`retrieve.modes` lists `hybrid`, and `retrieve` in mode `hybrid` returns ranked \
            hits, each with an `id` and a numeric `score`, with every option L1 asks for (`filter`, \
            `k`, `minScore`) honoured in that mode (§7.7, §14.2).",
        probed: "When `hybrid` is listed: one `retrieve {query, k: 5, mode: \"hybrid\"}`, the query \
            being up to eight words of a passage the opening `retrieve {query: \"retrieval\", k: 5, \
            includeText: true}` returned; the hits must carry an `id` and a numeric `score`, and may \
            not be empty when the query came from a passage. Its order is judged by RCP-L1-007; its \
            request is repeated with every filter probe of RCP-L1-004 and both `minScore` probes of \
            RCP-L1-009 (each mode's own), and `k` is held on every result by RCP-L1-008.",
        gap: Some(
            "not observable: a query known to match needs words of a passage the server returned; \
            when no hit of the opening `retrieve` (which asks for `includeText: true`) carried text, \
            the query falls back to \"retrieval\", and an empty answer to it cannot be told from a \
            corpus that holds nothing near it.",
        ),
    },
    Coverage {
        rule: "RCP-L1-004",
        required: "`filter` is advertised with `fields`, and a filter on advertised fields \
            restricts the hits to those its clauses match, in every advertised mode, for every \
            advertised operator (`eq`, `ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`, `contains`, \
            `exists`; all ten when `operators` is absent) on every advertised field type it \
            applies to, `in`/`nin` with any number of values, and the combinators `and`, `or`, \
            `not` nested arbitrarily (§8, §14.2).",
        probed: "In each advertised mode, the mode's own result is repeated: per advertised \
            operator and field type (and `exists` true and false), with a clause on a value a \
            returned hit showed in `meta` (ranges at the hit's value: `gte`/`lte` keep it, \
            `gt`/`lt` drop it); then, from two hits that showed different values `v1`, `v2` of one \
            field, with `not P(v1)`, `or[and[P(v1), not P(v2)], and[P(v2), P(v1)]]` (3 deep), \
            `and[or[P(v1), P(v2)], not and[P(v2), not P(v1)]]` (4 deep), `P(v1)` under single-child \
            `and`/`or` and a double `not` (8 deep), and `in`/`nin` `[v2, v1]`. Every hit of the \
            unfiltered result whose `meta` decides the filter must be kept when it matches, and no \
            returned hit may show a value the filter rejects. Without `meta` on any hit, a filter \
            no document can satisfy is sent in every mode (hits returned fail the rule), and the \
            rule is \"not verified\", which withholds L1.",
        gap: Some(
            "not observable: an operator or field type gets a probe only when some hit showed a \
            `meta` value it applies to (hits carry `meta` at the server's choice; the pass message \
            names the operators left unchecked, and with no `meta` at all the rule is not \
            verified); `not`, nested trees and several-valued sets need two hits of one result \
            showing different values of one field, and an `eq` or `in` among the advertised \
            operators (not advertised otherwise); and, for the depth of nesting, no bound: §8 sets \
            none, so trees deeper than 8 are not tried.",
        ),
    },
    Coverage {
        rule: "RCP-L1-005",
        required: "A filter naming an unadvertised field (anywhere in the tree), a value whose JSON \
            type does not fit the field's type (with any operator, the elements of `in`/`nin` \
            included), an operator the field's type does not allow, or an empty `and`/`or` gets \
            -32602 with `error.data.field` (§8, §12, §15.4); an operator outside \
            `filter.operators` is RCP-L0-019's.",
        probed: "`retrieve`s with: a clause on `x-protocheck-unadvertised-field` alone, inside \
            `and`, `or` and `not`, and three combinators deep; `{and: []}`, `{or: []}`, an empty \
            `or` inside an `and` and an empty `and` inside a `not`; for one field of each declared \
            type, every advertised operator the type takes with a value of the wrong JSON type (a \
            number for `keyword`/`text`, a string for `int`/`float`, a string for `bool`, a boolean \
            for `date`; for `in`/`nin` a valid value and a wrong one); every advertised ordered \
            comparison on each `keyword`/`text`/`bool` field type, and `contains` on a field of \
            each other type whose shown values were scalars. Each must get -32602 with \
            `error.data.field`.",
        gap: Some(
            "not advertised: value types and operator-for-type checks need `filter.fields` to \
            declare types (a plain list of names declares none); `contains` on a non-`text` type is \
            sent only when a hit showed that the field is not array-valued (not observable \
            otherwise); a `geo` field has no value shape in §8 to get wrong.",
        ),
    },
    Coverage {
        rule: "RCP-L1-006",
        required: "`citations` is advertised as a top-level capability, and hits carry a \
            `citation` (`source`, `uri`, `title`, `start`, `end`, `page`) or a `trust` (`level`, \
            `score`, `injectionSuspected`, `sanitized`) of the schema's shape (§6, §7.7, §14.2).",
        probed: "Every hit of the L1 run's results before it (the opening `retrieve`, the mode \
            probes, the filter probes) must carry a `citation` or a `trust`, each checked against \
            its shape; `citations` found inside `retrieve` instead is named in the skip.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L1-007",
        required: "`Hit.score` is a number on every hit, monotonic within a response with higher \
            more relevant, so a result comes best first (§4.6, §7.7, §14.2).",
        probed: "Judged last over every non-empty `retrieve` result of the L1 run, in every mode \
            and with every option it sent (opening, the three modes, every filter probe of each \
            mode, `k`, `minScore` in each mode): every `score` must be a number, and the scores \
            must not increase.",
        gap: Some(
            "not observable: whether a higher score means a more relevant hit, beyond the order: \
            relevance is judged against a corpus protocheck does not know, so a server that ranks \
            its worst hit first under descending scores passes.",
        ),
    },
    Coverage {
        rule: "RCP-L1-008",
        required: "`retrieve` honours `k` as the final result count: never more than `k` hits, \
            and fewer only when the corpus or `minScore` yields fewer; it clamps `k` (and \
            `candidateK`, `rerank.topN`) to `retrieve.maxK` / `rerank.maxCandidates` instead of \
            refusing, serving min(k, maxK) hits when the corpus has them, and keeps the funnel \
            `candidateK ≥ rerank.topN ≥ k` (§3.3, §7.7, §12, §14.2).",
        probed: "`retrieve` with a large `k` (`maxK` when advertised, at most 100) first, to \
            learn how many hits N the query yields; then the same query with `k: 1` and `k: 3`, \
            `k: 3` with `candidateK: 3` (the funnel's equality), `k: 3` with a `candidateK` above \
            `maxK` (the large `k` without `maxK`), with built-in rerank `rerank.topN` above \
            `rerank.maxCandidates` (at the funnel's equality when that is not advertised), and \
            `k` = `maxK` + 1000: each must return exactly min(k, N) hits, a `k` above `maxK` \
            clamped, not refused (a `candidateK`/`topN` above a limit may be refused, §15.5). \
            Every other L1 result is held to at most its own `k`; a funnel violation is \
            RCP-L0-020's. A clamp is probed where its limit is advertised: without `maxK`, \
            `rerank.maxCandidates` or built-in rerank there is nothing to clamp to.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L1-009",
        required: "`retrieve` honours `minScore` as a floor in the server's own scale, in every \
            mode: no hit below it, and none at all when it is above every score (§7.7, §14.2).",
        probed: "In each advertised mode, the request of that mode's result with the most hits is \
            repeated with `minScore` above its best score (no hit may come back) and at its median \
            score (hits must come back, none scored below).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-001",
        required: "With `rerank` advertised: `rerank {query, passages, method?, topN?}` returns \
            `scores` aligned with `passages`, higher more relevant, and `order` (when present) a \
            best-first permutation, for every method in `rerank.methods` (`cross-encoder`, \
            `colbert`, `llm`); `topN` truncates (§7.6, §14.3).",
        probed: "`rerank` with a query taken from a returned passage and three string passages, \
            that passage between two unrelated ones: once with no `method`, once per value \
            `rerank.methods` lists, once as text Content blocks, and once with `topN: 1`; `scores` must be three numbers with the \
            middle one highest, and `order`, when present, a best-first permutation (with `topN: \
            1`, exactly `[1]`).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-002",
        required: "With `multiVector` advertised: `embed/multi {inputs, kind?, encoding?}` returns \
            one matrix per input, every row of the advertised `dimension`; with \
            `multiVector.modalities` listing `image`, image Content blocks are accepted (one patch \
            matrix per page); `f32-base64` when advertised (§7.3.1, §7.5, §14.3).",
        probed: "`embed/multi` with two text inputs, once with `kind: \"document\"` and once with \
            `kind: \"query\"`, and, when `multiVector.modalities` lists `image`, one image Content \
            block (a 1×1 PNG); each answer must hold one non-empty matrix per input, every row an \
            array of numbers as long as the stated (else the advertised) dimension, and a stated \
            dimension must equal the advertised one. When `multiVector.encodings` lists `f32-base64`, two inputs in it: each matrix \
            base64 of whole rows of `dimension` f32s (one blob, or one per row).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-003",
        required: "With `sparseEmbed` advertised: `embed/sparse {texts, kind?}` returns one \
            `{indices, values}` per text, paired one to one, indices within \
            `sparseEmbed.vocabulary` when stated (§7.4, §14.3).",
        probed: "`embed/sparse` with two texts, once with `kind: \"document\"` and once with `kind: \
            \"query\"`; two vectors must come back each time, each non-empty, with as many distinct \
            non-negative integer `indices` (below the advertised vocabulary) as numeric `values`.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-004",
        required: "With `transform` advertised: `query/transform {query, method, n?}` answers each \
            method in `transform.methods` with non-empty `queries`, with `hypothetical` for \
            `hyde`, several queries (at most `n`) for `multi-query` and `decompose` (§7.8, §14.3).",
        probed: "One `query/transform` per advertised method RCP defines, with a query from a \
            returned passage (`n: 3` for `multi-query` and `decompose`): `queries` must be non-empty \
            strings, at most 3 for `multi-query` and `decompose`, and `hyde` must return a non-empty \
            `hypothetical`. A method outside the list is RCP-L0-019's.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-005",
        required: "With `graph` advertised: `graph {op, query?, k?, seedIds?, hops?, level?}` \
            answers each op in `graph.ops` with that op's result: `local` → `hits`; `global` → \
            `summary`, `communities`; `drift` → `hits`, `followups`; `communities` → \
            `communities`; `neighbors` → `nodes`, `edges` (§7.9, §14.3).",
        probed: "One `graph` per advertised op RCP defines: `communities` without a query, \
            `neighbors` seeded with a string hit id the run returned (else with the query), the \
            others with the query and `k: 3`; then `neighbors` and `local` again with `hops: 2`, \
            `communities` and `global` again with `level: 0`. Each answer must carry the op's \
            members, `hits` with ids and numeric scores. Entries are shape-checked by RCP-OUT-005; \
            an op outside the list is RCP-L0-019's.",
        gap: Some(
            "not observable: `neighbors` is seeded only when the run returned a hit id as a string \
            (the schema types `seedIds` as strings); otherwise it gets the query.",
        ),
    },
    Coverage {
        rule: "RCP-L2-006",
        required: "With `streaming` advertised and `_meta.progressToken` (a string or an integer) \
            on a request, over HTTP with `Accept: text/event-stream`: zero or more \
            `notifications/progress` (`progressToken` echoed verbatim, `progress` 0–1, `stage`, \
            `message`, `partial.hits`), then exactly one final response, then nothing (§5.2, §9, \
            §14.3).",
        probed: "Two `retrieve {query, k: 3}` with the progress tokens \"protocheck-progress-1\" \
            and 7, then one valid request of every other advertised method (`rerank`, `embed`, \
            `embed/sparse`, `embed/multi`, `query/transform`, `graph`) with a string token, over \
            HTTP accepting an event stream: every frame before the final one must be a JSON-RPC \
            notification, each progress frame must echo the token with its JSON type and keep \
            `progress` within 0–1, its `stage`, `message` and `partial` must have §9's shape, and \
            one final frame with the request's id (and, for `retrieve`, hits) must end the \
            stream.",
        gap: Some(
            "not observable: progress frames are judged only when the server sends some (§5.2 allows \
            zero); the write methods (`index/*`, `feedback`, `memory/build`), not sent by default, \
            carry no token.",
        ),
    },
    Coverage {
        rule: "RCP-L2-007",
        required: "A request without `Accept: text/event-stream` gets one buffered JSON response, \
            even from a server advertising `streaming` and even with a progressToken (§5.2).",
        probed: "Over HTTP, one `retrieve {query, k: 2}` with `_meta.progressToken` and no SSE \
            `Accept`; the response must not be `text/event-stream` and must carry a result. \
            Skipped over stdio, where the rule does not apply.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-008",
        required: "With `pagination` advertised, list results (`retrieve`, `graph` `communities`) \
            carry `nextCursor` while more remain; the request repeated with `cursor` returns the \
            next page of the same request (its filter and options, such as `mode` and `minScore`, \
            honoured on every page) without repeating or losing hits, and a missing or empty \
            `nextCursor` ends it (§10, §14.3).",
        probed: "An earlier plain `retrieve` with n ≥ 2 hits (else one with `k: 10`) is repeated \
            with `k` = min(4, n − 1) and `nextCursor` followed for up to 12 pages: no page above \
            `k`, no id repeated, the first page not empty and carrying a cursor, the cursors ending; \
            then the request unpaged (k = hits paged + k, capped at `maxK`) must hold no hit the \
            pages lost, and the pages must follow its ranking (ties in either order). The same \
            paging is repeated with the run's filtered request that returned the most hits, and in \
            each advertised mode with a `minScore` that keeps at least two hits and drops the \
            lowest: every page must honour the request (no hit below `minScore`, the pages within \
            the filtered and moded unpaged result, in its order). With `graph` `communities` advertised: `graph {op: communities}` unpaged, then \
            with `k: 1`, its `nextCursor` followed (no community twice, cursors ending); one \
            community of several without a cursor fails.",
        gap: Some(
            "not observable: fewer than two hits anywhere (or communities not bounded by `k`) leaves \
            nothing to page, \"advertised, not exercised\" (the corpus must cooperate).",
        ),
    },
    Coverage {
        rule: "RCP-L2-009",
        required: "With `log` advertised, a client that opted in (the `log` capability, \
            `_meta.logLevel`) may get `notifications/log` in-band (stdout, or the SSE stream over \
            HTTP) shaped `{level, message, logger?, data?}`, `level` one of debug, info, notice, \
            warning, error and within `log.levels`; the server should honour the minimum \
            `logLevel` (§17.1, §14.3).",
        probed: "The handshake advertises the client `log` capability; one `retrieve` with \
            `_meta.logLevel: \"debug\"` (over HTTP accepting an event stream, repeated with a \
            progressToken if answered buffered); every `notifications/log` before its reply must \
            have the schema shape and a level within `log.levels`. When logs came, the same request \
            with `_meta.logLevel: \"error\"` must bring no log of a lower level. No log at all is \
            \"advertised, not exercised\".",
        gap: Some(
            "not observable: a server that never logs is skipped, not judged: §17.1 lets it stay \
            silent (\"MAY emit\"), so no answer shows whether it would log.",
        ),
    },
    Coverage {
        rule: "RCP-L2-010",
        required: "With `retrieve.deterministic`, identical `(query, params, seed, indexVersion)` \
            give identical results, whatever the params (mode, fusion, rerank, `mmr`) (§7.7.1, \
            §14.3).",
        probed: "The same `retrieve {query, k: 5, seed: 20260728}` twice, in the default mode, in \
            each advertised mode, with each advertised fusion method (in hybrid mode when offered), \
            with the built-in `rerank: {}` when `rerankBuiltin`, and with `mmr: {lambda: 0.5}` when \
            `retrieve.mmr` is offered; ids, order and scores must be identical in each pair.",
        gap: Some(
            "not advertised: `rerank` with a method or model, and `mmr`, go only to a server whose \
            `retrieve` capability offers them (`rerankBuiltin`, `mmr`).",
        ),
    },
    Coverage {
        rule: "RCP-L2-011",
        required: "With `retrieve.snapshots`, results echo the served `indexVersion`, and a pinned \
            one is served exactly or fails (-32010 per §7.7.1, -32016 per §12), never served from \
            another snapshot (§7.7.1, §12, §14.3).",
        probed: "A `retrieve` must echo an `indexVersion`; the same query pinned to it must echo \
            the same one; one pinned to `protocheck-probe/no-such-snapshot` must fail with -32015, \
            -32010 or -32016.",
        gap: Some(
            "a snapshot the server really retired cannot be produced by a probe (the server must \
            cooperate), so only one it never issued is tried; that a pinned result comes from the \
            pinned snapshot is read only from its echoed `indexVersion`.",
        ),
    },
    Coverage {
        rule: "RCP-OUT-001",
        required: "Over HTTP the method in the path `POST <base>/<method>` matches the body's \
            `method`; a mismatch gets -32600 (§5.2).",
        probed: "After `initialize`, `POST …/ping` with a body naming `info` (both open methods, \
            so only the mismatch can be refused); -32600 passes. Skipped over stdio.",
        gap: None,
    },
    Coverage {
        rule: "RCP-OUT-002",
        required: "Over stdio the server tolerates blank lines between messages and buffers until \
            the newline, never assuming one message per read (§5.1).",
        probed: "Three `ping`s, each after two blank lines: one in two writes 50 ms apart (cut at \
            an ASCII byte), one whose nonce holds é, 東 and 🙂 in four writes 50 ms apart, each of \
            the first three ending inside one of those characters, and one in four writes with a \
            120 ms pause after each of the first three (a slow partial line); each must get exactly \
            one reply echoing its nonce, and no stray line. A line that is not JSON at all is \
            RCP-L0-022's. Skipped over HTTP.",
        gap: None,
    },
    Coverage {
        rule: "RCP-OUT-003",
        required: "Over HTTP a notification gets no JSON-RPC answer: 204, or 200/202 with an empty \
            body, never an error status (§4.5, §5.2; decision 6).",
        probed: "Judged over every notification the run sent over HTTP (RCP-L0-005 to 008, the \
            notification-only batch of RCP-L0-030): a 2xx status with an empty body passes; a \
            JSON-RPC body is left to those rules. Skipped over stdio.",
        gap: None,
    },
    Coverage {
        rule: "RCP-OUT-004",
        required: "Over HTTP every well-formed JSON-RPC response, errors included, comes with \
            status 200; 400 only when the body was not JSON or not a JSON-RPC request (§5.2).",
        probed: "Judged over every HTTP reply whose body is a JSON-RPC object with `result` or \
            `error`, or a batch reply (an array of them): status 200 passes, and 400 when the reply \
            (every member of a batch reply) is -32700 or -32600. Skipped over stdio.",
        gap: None,
    },
    Coverage {
        rule: "RCP-OUT-005",
        required: "Every result has the shape the normative schema gives its method: \
            `initialize`/`info`, `ping`, `shutdown`, `embed`, `embed/sparse`, `embed/multi`, \
            `rerank`, `retrieve` (every `Hit` field), `query/transform`, `graph`, `index/add`, \
            `index/delete`, `catalog/list`, `feedback`, `memory/build`, `memory/recall` (§7, \
            §14.4; decision 1).",
        probed: "Judged at the end over every result the run received, the members of batch \
            replies included (paired with their request by id), each against protocheck's shape \
            table for its method (`shape::result_problems`). Before the end, when advertised, a \
            valid `embed {inputs, kind: \"query\"}`, `embed {texts}` (the legacy synonym, which \
            must be accepted), `embed {inputs, encoding: \"f32-base64\"}` when `embed.encodings` \
            lists it (the result must echo the encoding and each blob decode to 4 × `dimension` \
            bytes), `catalog/list {}` and `memory/recall {query}`.",
        gap: Some(
            "side effects: `feedback` and `memory/build` record state on the target and are never \
            sent, and `index/add`/`index/delete` only with `allow_writes` (decision 7), so their \
            results are judged only then.",
        ),
    },
    Coverage {
        rule: "RCP-OUT-006",
        required: "The server sends no notification the client did not opt into: progress only for \
            a request carrying `_meta.progressToken`, logs only to a client that advertised `log` \
            or sent `_meta.logLevel` (§7.1, §9, §17.1).",
        probed: "Every notification the server sent during the run (stdout lines, SSE frames) is \
            matched with the request being answered: progress during a request without a token \
            fails, and so does a log before the client opted in; over HTTP one `retrieve` asks for \
            an event stream with neither handle. Then a second session (over HTTP a new connection \
            without the session's token, over stdio a second process) whose `initialize` leaves \
            `log` out sends one `retrieve` without `_meta.logLevel` (over HTTP asking for an event \
            stream): any `notifications/log` there fails.",
        gap: Some(
            "not observable: a server whose initialized state is one for the whole process refuses \
            the second session's `initialize` (-32600), so over HTTP only its first session, which \
            opted into logs, can show them.",
        ),
    },
    Coverage {
        rule: "RCP-OUT-007",
        required: "With `index.writable`, `index/add {documents}` returns `ids`, one per document \
            in input order; a document with an explicit `id` is an upsert (re-adding replaces it, \
            no duplicate, no failure) or the duplicate is refused with -32016; `chunks` with \
            server-side chunking (§7.10).",
        probed: "Only with the run option `allow_writes`: one `index/add` of two documents with \
            ids under `protocheck-probe/` (one with `meta`), with `chunk` and `contextual` when \
            `index` offers them and a `_meta.idempotencyKey`; `ids` must be those two ids, in order. \
            The request replayed under the same key must return them again, and the first document \
            re-added with another text must be upserted (`ids` naming it) or refused with -32016; \
            RCP-OUT-008's first delete then counts 2, so a duplicate shows. What was added is \
            deleted again (RCP-OUT-008).",
        gap: Some(
            "side effects: writes run only with `allow_writes` (decision 7: no side effects on a \
            target by default), so by default nothing of this rule is probed.",
        ),
    },
    Coverage {
        rule: "RCP-OUT-008",
        required: "`index/delete {ids}` returns `deleted`, the count actually removed; deleting \
            absent or already-deleted ids is never an error and counts 0 (§7.11).",
        probed: "Only with `allow_writes`, after RCP-OUT-007: the probe ids (with any id under the \
            probe prefix the server named) are deleted twice; the first answer must report 2, the \
            repeat 0.",
        gap: Some(
            "side effects: writes run only with `allow_writes` (decision 7: no side effects on a \
            target by default), so by default nothing of this rule is probed.",
        ),
    },
    Coverage {
        rule: "RCP-CERT-001",
        required: "A valid declared `_meta.conformance` is not above the level the run certifies; \
            an overclaim fails certification (§14, §14.5; decisions 8 and 9).",
        probed: "The declaration RCP-L0-014 read from `initialize` is compared with the level \
            certified from every L0, L1 and L2 finding of the run; skipped when the handshake was \
            never observed (decision 3).",
        gap: None,
    },
];
