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
        probed: "One `info {}` is the run's first request, before any `initialize`; a result \
            carrying a `server` object passes. The rest of its shape is judged by RCP-OUT-005, \
            `info` after `initialize` by RCP-L0-021.",
        gap: Some(
            "not probed: that the pre-`initialize` set is the default (maximum) one; its \
            `capabilities` are never compared with the session's (a wider check would require \
            every key `initialize` advertises to be in it).",
        ),
    },
    Coverage {
        rule: "RCP-L0-002",
        required: "`ping` answers at any time, before `initialize` included, and echoes any \
            `nonce` with the same JSON type and value (§7.15, §14.1(1)); this rule takes a numeric \
            nonce.",
        probed: "`ping {nonce: 777}` before `initialize`; the result's `nonce` must be the number \
            777.",
        gap: Some(
            "after `initialize` no numeric nonce echo is compared: the batched `ping`s of \
            RCP-L0-030 carry nonces 1 and 2, but only their being answered with results is read.",
        ),
    },
    Coverage {
        rule: "RCP-L0-003",
        required: "As RCP-L0-002, with a string nonce: echoed with the same type and value, at any \
            time (§7.15, §14.1(1)).",
        probed: "`ping {nonce: \"protocheck-nonce-7\"}` before `initialize`; the result's `nonce` \
            must be that string.",
        gap: Some(
            "after `initialize` a string nonce is compared only over stdio, by RCP-OUT-002's split \
            `ping`; over HTTP no `ping` after `initialize` has its string nonce read.",
        ),
    },
    Coverage {
        rule: "RCP-L0-004",
        required: "Every request before a successful `initialize`, except `info`, `ping` and \
            `shutdown`, gets -32001, whatever the method: every capability method (`retrieve`, \
            `embed`, `rerank`, `graph`, …), writes and undefined methods alike (§13, §14.1(3)).",
        probed: "`retrieve {query, k: 1}` before `initialize`, whether `retrieve` is offered or \
            not, and each of `rerank {query, passages}`, `embed {inputs}` and `graph {op, query}` \
            that the pre-initialize `info` advertises, with valid params; every one must get \
            -32001. Skipped on an HTTP server found already initialized or stateless (decisions \
            3 and 4).",
        gap: Some(
            "not probed before `initialize`: the methods protocheck sends only with writes \
            allowed (`index/*`), the rarer read methods (`embed/multi`, `sparse/embed`, \
            `query/transform`, `catalog/list`, `memory/*`), and undefined methods, for which \
            -32004 is an answer a careful server may give first.",
        ),
    },
    Coverage {
        rule: "RCP-L0-005",
        required: "A notification (no `id`) is never answered, not even with an error, whatever \
            the method and whenever it comes (§4.5, §14.1(6)); this rule takes a gated method.",
        probed: "A `retrieve {query, k: 1}` notification before `initialize`. Over stdio no line \
            may come before the reply to a barrier `ping`; over HTTP the answer must carry no \
            JSON-RPC body (its status is RCP-OUT-003's).",
        gap: Some(
            "not probed: a gated-method notification after `initialize`, when a server that \
            dispatches id-less frames would run `retrieve` and may answer it; the run's only \
            notification after `initialize` is the `info` inside RCP-L0-030's batch.",
        ),
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
        probed: "Notifications for three undefined methods, `notifications/protocheck-unknown` \
            (the reserved namespace), `embed/protocheck-unknown` (a namespace of the protocol's \
            methods) and `does/not/exist` (outside them), before `initialize` and again on the \
            initialized session, each judged as RCP-L0-005; then a `ping {}` that must still be \
            answered with a result.",
        gap: Some(
            "not probed: a vendor-namespace notification (`x-<vendor>/…`), unknown notifications \
            inside a batch, and whether the session's state (beyond answering `ping`) is untouched \
            by them.",
        ),
    },
    Coverage {
        rule: "RCP-L0-008",
        required: "`notifications/cancel` for an unknown or an already-answered `id` is a no-op: \
            no answer, no effect on the session (§7.14, §14.1(6)).",
        probed: "`notifications/cancel {id: 987654321, reason}` before `initialize`, an id \
            protocheck never uses; no answer passes, judged as RCP-L0-005.",
        gap: Some(
            "not probed: a cancel for an id already answered, and any cancel after `initialize`; a \
            wider probe would cancel the id of the request just answered, then check that nothing \
            comes back and the next request still works.",
        ),
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
            "not probed: negotiation down from a higher offer. protocheck offers only 1, the one \
            version it speaks, and min(1, server) is 1 whatever the server does, so a server that \
            echoes the client's version instead of taking the minimum passes; offering 2 and \
            requiring 1 back would catch it, at the price of a handshake protocheck must abandon \
            with a server that really speaks 2.",
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
        probed: "Reads `_meta.conformance` of the `initialize` result (of `info` on a server \
            already initialized).",
        gap: Some(
            "not probed: the declaration in `info` once `initialize` carried one; the `info` \
            replies of RCP-L0-001 and RCP-L0-021 are at hand, but their `_meta.conformance` is \
            neither read nor compared with `initialize`'s.",
        ),
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
            gets valid params plus an unknown top-level field and an unknown `_meta` key. Every \
            one must succeed.",
        gap: Some(
            "not probed: unknown fields inside nested objects (`fusion`, `rerank`, Content \
            blocks), and on the write methods (`index/*`, `feedback`, `memory/build`), which a \
            probe does not send unless writes are allowed (side effects).",
        ),
    },
    Coverage {
        rule: "RCP-L0-017",
        required: "A method RCP does not define gets -32004, preferred over -32003 (§7, §12, \
            §14.1(4)).",
        probed: "`does/not/exist {}` after `initialize`; -32004 passes.",
        gap: None,
    },
    Coverage {
        rule: "RCP-L0-018",
        required: "Every method RCP defines whose capability is not advertised gets -32003: \
            `embed`, `embed/sparse`, `embed/multi`, `rerank`, `retrieve`, `query/transform`, \
            `graph`, `catalog/list`, `memory/build`, `memory/recall`, `feedback`, `index/add` \
            (also without `index.writable: true`) and `index/delete` (§7, §12, §14.1(4)).",
        probed: "The first read-only method whose capability is not advertised, in the order \
            `catalog/list`, `query/transform`, `embed/sparse`, `embed/multi`, `memory/recall`, \
            `graph`, `embed`, `rerank`, `retrieve`, is sent once with valid params; -32003 passes. \
            Skipped when all nine are advertised.",
        gap: Some(
            "only one unadvertised method is sent, so a server that gates it and dispatches the \
            others passes; each unadvertised read-only method could get its own request. The write \
            methods (`index/add`, `index/delete`, `feedback`, `memory/build`) are never sent \
            (decision 7), though `index/add {documents: []}` (what the public harness sends) \
            writes nothing, also for `index` advertised without `writable: true`.",
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
            default chunk/passage), `modality` (`retrieve.modalities`, default text), \
            `rerank.method` (`rerank.methods`) and a clause per operator outside \
            `filter.operators` (-32602 accepted too when no advertised field's type fits it); \
            `embed` `encoding` (default json) and an image block (default text; -32602 accepted \
            too); `embed/multi` `f32-base64` (unless `embed.encodings` lists it) and an image \
            block; `rerank` `method`; `query/transform` `method`; `graph` `op`.",
        gap: Some(
            "Lists the spec gives no default for (`retrieve.modes`, `retrieve.fusion`, \
            `rerank.methods`, `transform.methods`, `graph.ops`, `filter.operators`) are probed \
            only when advertised, since nothing else names the server's set. Not probed: \
            `retrieve` `rewrite` (no list names its values), `rerank.model` outside \
            `rerank.models`, a non-text Content block as the `retrieve` `query` or a `rerank` \
            passage on a text-only server (only the `modality` field is tried), `audio` blocks \
            (only `image`), `memory/build` `scope` outside `memory.scopes` and `index/add` \
            `chunk`/`contextual` without `index.chunking`/`contextual` (writes, decision 7), and \
            the `strict: false` fallback (a MAY).",
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
            valid params built from the advertisement: each required field left out, each \
            top-level field of protocheck's schema table given a value of the wrong JSON type (the \
            legacy `texts` alone), and `retrieve` with `k: -5`. -32602 passes; for an optional \
            field -32005 too (-32015 too for `cursor`), and a result for an exempt field whose \
            feature is not advertised.",
        gap: Some(
            "not probed: out-of-range values other than `k: -5` (`k: 0`, `k: 1.5`, `k: true`, \
            `topN`, `candidateK`, `n`, `hops` below 1, `candidateK` < `k`), fields nested in \
            objects (`fusion.method`, `rerank.topN`, `mmr.lambda`, `recency.halfLifeDays`, Content \
            blocks), and `params` that are not an object. The write methods (`index/add`, \
            `index/delete`, `feedback`, `memory/build`) are left out: a server that does not \
            validate could act on a malformed write (decision 7).",
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
        probed: "A `ping` frame cut off mid-object, sent after the level probes; -32700 with `id: \
            null` (HTTP 200 or 400), or HTTP 400 without a JSON-RPC body, passes.",
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
        probed: "Judged at the end over every non-batch reply to a numeric id: every request \
            protocheck sends carries an increasing integer id, and one `ping` carries \
            9007199254740991.",
        gap: Some(
            "batch members are paired loosely by RCP-L0-030 (7 and \"7\" match) and not judged \
            here, so a server that turns numeric ids into strings only inside batch replies \
            passes.",
        ),
    },
    Coverage {
        rule: "RCP-L0-025",
        required: "Every reply echoes a string request `id` unchanged, same JSON type and value \
            (§4.7, §14.1(5)).",
        probed: "Judged at the end over every non-batch reply to a string id: `info` with the \
            numeric-looking id \"017\", each advertised read-only capability method (`retrieve`, \
            `rerank`, `embed`, …) with the numeric-looking ids \"018\", \"019\", … (RCP-L0-016's \
            probe, answered with results), and the two repeat `initialize`s with \
            `protocheck-reinit` and `protocheck-reinit-differing` (answered with errors).",
        gap: Some(
            "batch members are paired loosely (see RCP-L0-024); the write methods get no string \
            id unless writes are allowed (side effects).",
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
        probed: "A batch of `ping {nonce: 1}`, an `info` notification and `ping {nonce: 2}` must \
            get exactly two entries, one per id (paired loosely), both results; a batch of `ping \
            {nonce: 3}` and the malformed member `1` must get exactly the `ping`'s result and one \
            -32600 entry with `id: null`; then a batch of an `info` and a `ping` notification must \
            get no answer.",
        gap: Some(
            "not probed: malformed members that are objects (without `method`, with a wrong \
            `jsonrpc`), capability gating inside a batch, and the batched `ping`s' nonces (only \
            their being results is read).",
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
            hits, each with an `id` and a numeric `score` (§7.7, §14.2).",
        probed: "When `dense` is listed: one `retrieve {query, k: 5, mode: \"dense\"}`, the query \
            being up to eight words of a passage the opening `retrieve {query: \"retrieval\", k: \
            5}` returned; the hits must carry an `id` and a numeric `score`, and may not be empty \
            when the query came from a passage. Their order is judged by RCP-L1-007.",
        gap: Some(
            "when no hit of the opening `retrieve` carried text (no `text`, no text Content \
            block), the query falls back to \"retrieval\" and an empty result passes; asking the \
            opening `retrieve` for `includeText: true` would make that case rarer.",
        ),
    },
    Coverage {
        rule: "RCP-L1-002",
        required: "`retrieve.modes` lists `sparse`, and `retrieve` in mode `sparse` returns ranked \
            hits, each with an `id` and a numeric `score` (§7.7, §14.2).",
        probed: "When `sparse` is listed: one `retrieve {query, k: 5, mode: \"sparse\"}`, the \
            query being up to eight words of a passage the opening `retrieve {query: \
            \"retrieval\", k: 5}` returned; the hits must carry an `id` and a numeric `score`, and \
            may not be empty when the query came from a passage. Their order is judged by \
            RCP-L1-007.",
        gap: Some(
            "when no hit of the opening `retrieve` carried text (no `text`, no text Content \
            block), the query falls back to \"retrieval\" and an empty result passes; asking the \
            opening `retrieve` for `includeText: true` would make that case rarer.",
        ),
    },
    Coverage {
        rule: "RCP-L1-003",
        required: "`retrieve.modes` lists `hybrid`, and `retrieve` in mode `hybrid` returns ranked \
            hits, each with an `id` and a numeric `score` (§7.7, §14.2).",
        probed: "When `hybrid` is listed: one `retrieve {query, k: 5, mode: \"hybrid\"}`, the \
            query being up to eight words of a passage the opening `retrieve {query: \
            \"retrieval\", k: 5}` returned; the hits must carry an `id` and a numeric `score`, and \
            may not be empty when the query came from a passage. Their order is judged by \
            RCP-L1-007.",
        gap: Some(
            "when no hit of the opening `retrieve` carried text (no `text`, no text Content \
            block), the query falls back to \"retrieval\" and an empty result passes; asking the \
            opening `retrieve` for `includeText: true` would make that case rarer.",
        ),
    },
    Coverage {
        rule: "RCP-L1-004",
        required: "`filter` is advertised with `fields`, and a filter on advertised fields \
            restricts the hits to those its clauses match, for every advertised operator (`eq`, \
            `ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`, `contains`, `exists`; all ten when \
            `operators` is absent) and the combinators `and`, `or`, `not` (§8, §14.2).",
        probed: "For each advertised operator (and `exists` true and false), one `retrieve` \
            repeating an earlier plain request with a clause on a value a returned hit showed in \
            `meta`: `eq`, `in`, `gte`, `lte`, `contains`, `exists: true` must keep that hit, `ne`, \
            `nin`, `gt`, `lt`, `exists: false` must drop it, and no hit returned may show a value \
            the clause rejects. When no probe could show a hit removed, an `and` of advertised \
            operators no document can satisfy must return no hits.",
        gap: Some(
            "an operator gets a probe only when some hit showed a `meta` value of a field it \
            applies to (the server must return metadata; the pass message names the operators left \
            unchecked), on one field per operator; `or` and `not` are never sent, and `and` only \
            in the unsatisfiable filter.",
        ),
    },
    Coverage {
        rule: "RCP-L1-005",
        required: "A filter naming an unadvertised field, a value whose JSON type does not fit the \
            field's type, an operator the field's type does not allow, or an empty `and`/`or` gets \
            -32602 with `error.data.field` (§8, §12, §15.4); an operator outside \
            `filter.operators` is RCP-L0-019's.",
        probed: "Two `retrieve`s: a clause on `x-protocheck-unadvertised-field` with the first \
            advertised operator and a value of its shape, and `filter: {and: []}`; each must get \
            -32602.",
        gap: Some(
            "not probed: an empty `or`, an unadvertised field nested under `or`/`not`, a value of \
            the wrong type for a typed field (a string for an `int` field), an operator the \
            field's type excludes (`gt` on a `keyword` field), and `error.data.field`.",
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
        probed: "Judged last over every non-empty `retrieve` result of the L1 run (opening, modes, \
            filters, `k`, `minScore`): every `score` must be a number, and the scores must not \
            increase.",
        gap: Some(
            "whether a higher score means a more relevant hit is not judged, only the order: with \
            no known corpus, a server that ranks its worst hit first under descending scores \
            passes. Requiring the passage the query words came from near the top of the `sparse` \
            result would be a partial check.",
        ),
    },
    Coverage {
        rule: "RCP-L1-008",
        required: "`retrieve` never returns more than `k` hits, clamps `k` (and `candidateK`, \
            `rerank.topN`) to `retrieve.maxK` / `rerank.maxCandidates` instead of refusing, and \
            keeps the funnel `candidateK ≥ rerank.topN ≥ k` (§3.3, §7.7, §12, §14.2).",
        probed: "`retrieve` with `k: 1` and `k: 3`; every other L1 result is held to its own `k`; \
            when `retrieve.maxK` is advertised, `k` = maxK + 1000 must be answered with at most \
            maxK hits, not refused.",
        gap: Some(
            "not probed: `candidateK` and `rerank.topN` are never sent, so neither their clamping \
            to `maxK`/`rerank.maxCandidates` nor a funnel violation (`candidateK` < `k`, which the \
            public harness sends) is tried; without an advertised `maxK` the clamp has no bound to \
            check.",
        ),
    },
    Coverage {
        rule: "RCP-L1-009",
        required: "`retrieve` honours `minScore` as a floor in the server's own scale: no hit \
            below it, and none at all when it is above every score (§7.7, §14.2).",
        probed: "The request of the L1 result with the most hits is repeated with `minScore` above \
            its best score (no hit may come back) and at its median score (hits must come back, \
            none scored below).",
        gap: None,
    },
    Coverage {
        rule: "RCP-L2-001",
        required: "With `rerank` advertised: `rerank {query, passages, method?, topN?}` returns \
            `scores` aligned with `passages`, higher more relevant, and `order` (when present) a \
            best-first permutation, for every method in `rerank.methods` (`cross-encoder`, \
            `colbert`, `llm`); `topN` truncates (§7.6, §14.3).",
        probed: "One `rerank` with a query taken from a returned passage and three string \
            passages, that passage between two unrelated ones, with no `method` and no `topN`; \
            `scores` must be three numbers with the middle one highest, and `order`, when present, \
            a best-first permutation.",
        gap: Some(
            "not probed: each advertised `rerank.methods` value (only the server's default method \
            runs, so a broken `colbert` passes), `topN`, and Content-block passages on a server \
            advertising non-text modalities.",
        ),
    },
    Coverage {
        rule: "RCP-L2-002",
        required: "With `multiVector` advertised: `embed/multi {inputs, kind?, encoding?}` returns \
            one matrix per input, every row of the advertised `dimension`; with \
            `multiVector.modalities` listing `image`, image Content blocks are accepted (one patch \
            matrix per page); `f32-base64` when advertised (§7.3.1, §7.5, §14.3).",
        probed: "One `embed/multi` with two text inputs and `kind: \"document\"`; two non-empty \
            matrices must come back, every row an array of numbers as long as the stated (else the \
            advertised) dimension, and a stated dimension must equal the advertised one.",
        gap: Some(
            "not probed: image inputs when `multiVector.modalities` lists `image` (the \
            visual-document case §14.3 names), `kind: \"query\"`, and the `f32-base64` encoding \
            when advertised.",
        ),
    },
    Coverage {
        rule: "RCP-L2-003",
        required: "With `sparseEmbed` advertised: `embed/sparse {texts, kind?}` returns one \
            `{indices, values}` per text, paired one to one, indices within \
            `sparseEmbed.vocabulary` when stated (§7.4, §14.3).",
        probed: "One `embed/sparse` with two texts and `kind: \"document\"`; two vectors must come \
            back, each non-empty, with as many distinct non-negative integer `indices` (below the \
            advertised vocabulary) as numeric `values`.",
        gap: Some("not probed: `kind: \"query\"`."),
    },
    Coverage {
        rule: "RCP-L2-004",
        required: "With `transform` advertised: `query/transform {query, method, n?}` answers each \
            method in `transform.methods` with non-empty `queries`, with `hypothetical` for \
            `hyde`, several queries (at most `n`) for `multi-query` and `decompose` (§7.8, §14.3).",
        probed: "One `query/transform` per advertised method RCP defines, with a query from a \
            returned passage (`n: 3` for `multi-query`): `queries` must be non-empty strings, at \
            most 3 for `multi-query`, and `hyde` must return a non-empty `hypothetical`. A method \
            outside the list is RCP-L0-019's.",
        gap: Some("`n` is sent only with `multi-query`, so `decompose` is not held to it."),
    },
    Coverage {
        rule: "RCP-L2-005",
        required: "With `graph` advertised: `graph {op, query?, k?, seedIds?, hops?, level?}` \
            answers each op in `graph.ops` with that op's result: `local` → `hits`; `global` → \
            `summary`, `communities`; `drift` → `hits`, `followups`; `communities` → \
            `communities`; `neighbors` → `nodes`, `edges` (§7.9, §14.3).",
        probed: "One `graph` per advertised op RCP defines: `communities` without a query, \
            `neighbors` seeded with a string hit id the run returned (else with the query), the \
            others with the query and `k: 3`; the op's members must be present, `hits` with ids \
            and numeric scores. Entries are shape-checked by RCP-OUT-005; an op outside the list \
            is RCP-L0-019's.",
        gap: Some(
            "not probed: `hops` and `level`; `neighbors` falls back to a query when no hit had a \
            string id.",
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
            and 7 (over HTTP accepting an event stream): every frame before the final one must be \
            a JSON-RPC notification, each progress frame must echo the token with its JSON type \
            and keep `progress` within 0–1, its `stage`, `message` and `partial` must have §9's \
            shape, and one final frame with the request's id and hits must end the stream.",
        gap: Some(
            "progress frames are judged only when the server sends some (zero is allowed); only \
            `retrieve` is streamed.",
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
            next page without repeating or losing hits, and a missing or empty `nextCursor` ends \
            it (§10, §14.3).",
        probed: "An earlier plain `retrieve` with n ≥ 2 hits (else one with `k: 10`) is repeated \
            with `k` = min(4, n − 1) and `nextCursor` followed for up to 12 pages: no page above \
            `k`, no id repeated, the first page not empty and carrying a cursor, the cursors \
            ending; then the request unpaged (k = hits paged + k, capped at `maxK`) must hold no \
            hit the pages lost.",
        gap: Some(
            "`graph` `communities` pages are not probed; fewer than two hits anywhere leaves the \
            rule \"advertised, not exercised\" (the corpus must cooperate).",
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
            have the schema shape and a level within `log.levels`. No log at all is \"advertised, \
            not exercised\".",
        gap: Some(
            "not probed: the minimum level (a request with `_meta.logLevel: \"error\"` must bring \
            no `debug` or `info` log); a server that never logs is skipped, not judged, which \
            §17.1's MAY allows.",
        ),
    },
    Coverage {
        rule: "RCP-L2-010",
        required: "With `retrieve.deterministic`, identical `(query, params, seed, indexVersion)` \
            give identical results, whatever the params (mode, fusion, rerank, `mmr`) (§7.7.1, \
            §14.3).",
        probed: "The same `retrieve {query, k: 5, seed: 20260728}` twice, in the default mode; \
            ids, order and scores must be identical.",
        gap: Some(
            "only the default mode with no `rerank`, `fusion` or `mmr`, while the stochastic steps \
            (ANN exploration, MMR tie-breaks, LLM rerank sampling) live in those; the same pair \
            per advertised mode and with `rerank`/`mmr` would widen it.",
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
        probed: "A `ping {nonce: \"protocheck-split\"}` sent after two blank lines, in two writes \
            50 ms apart; exactly one reply echoing the nonce, and no stray line, passes. Skipped \
            over HTTP.",
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
            `error`: status 200 passes, and 400 with -32700 or -32600. Skipped over stdio.",
        gap: Some("batch replies (a JSON array body) are not judged."),
    },
    Coverage {
        rule: "RCP-OUT-005",
        required: "Every result has the shape the normative schema gives its method: \
            `initialize`/`info`, `ping`, `shutdown`, `embed`, `embed/sparse`, `embed/multi`, \
            `rerank`, `retrieve` (every `Hit` field), `query/transform`, `graph`, `index/add`, \
            `index/delete`, `catalog/list`, `feedback`, `memory/build`, `memory/recall` (§7, \
            §14.4; decision 1).",
        probed: "Judged at the end over every non-batch result the run received, each against \
            protocheck's shape table for its method (`shape::result_problems`).",
        gap: Some(
            "a method's results are judged only when a probe gets one: no valid `embed`, \
            `catalog/list` or `memory/recall` request is ever sent (they go out only malformed, or \
            when not advertised), so their results, `embed`'s legacy `texts` synonym (a MUST, \
            §7.3) and its `f32-base64` echo and blob length go unjudged; `feedback` and \
            `memory/build` are never sent, `index/*` only with `allow_writes`; batch members are \
            not judged.",
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
            an event stream with neither handle.",
        gap: Some(
            "protocheck's own `initialize` advertises the client `log` capability (for \
            RCP-L2-009), so only logs sent before it can count as unsolicited: a server that logs \
            to clients that never opted in passes. A second session whose `initialize` leaves \
            `log` out would test it.",
        ),
    },
    Coverage {
        rule: "RCP-OUT-007",
        required: "With `index.writable`, `index/add {documents}` returns `ids`, one per document \
            in input order; a document with an explicit `id` is an upsert (re-adding replaces it, \
            no duplicate, no failure) or the duplicate is refused with -32016; `chunks` with \
            server-side chunking (§7.10).",
        probed: "Only with the run option `allow_writes`: one `index/add` of two documents with \
            ids under `protocheck-probe/` (one with `meta`); `ids` must be an array of two \
            strings. What was added is deleted again (RCP-OUT-008).",
        gap: Some(
            "writes run only with `allow_writes` (decision 7: no side effects on a target by \
            default). Even then the returned ids are not compared with the ids sent, so the order \
            is not verified, and re-adding an id (upsert or -32016), `_meta.idempotencyKey`, \
            `chunk` and `contextual` are not probed.",
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
            "writes run only with `allow_writes` (decision 7: no side effects on a target by \
            default).",
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
