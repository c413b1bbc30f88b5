//! Error codes for what a server cannot do (spec §12, §14.1 rules 4, 5, 7):
//! undefined methods, unadvertised capabilities, unsupported options,
//! malformed params, and tolerance of what it does not know.

use super::*;

pub const TOLERATES_UNKNOWN: Rule = must(
    "RCP-L0-016",
    "unknown fields, capability keys and `_meta` are tolerated",
    "RCP/1 §14.1(7), §4.6",
)
.help(
    "The first `initialize` carries an unknown client capability key (`x-protocheck-probe`) and \
     an unknown `_meta` key; if it fails while the same request without them succeeds, the rule \
     fails. After the handshake protocheck also sends `ping` with an unknown params field, \
     `x-protocheck-unknown-field`, and each read-only capability method the session advertises \
     (`retrieve`, `rerank`, `embed`, `embed/sparse`, `embed/multi`, `query/transform`, `graph`, \
     `memory/recall`) with valid params plus that field and an unknown `_meta` key, under string \
     ids \"018\", \"019\", …; each must be answered with a result object.",
    "The server validates params strictly and rejects extra members, most often with -32602, \
     because its schema or typed model forbids additional properties (`additionalProperties: \
     false`, `deny_unknown_fields`, `extra = \"forbid\"`).",
    "Ignore members you do not know in params, in `capabilities` and in `_meta` instead of \
     rejecting them: let the models accept extra fields, and validate only the fields the spec \
     defines.",
);
pub const UNKNOWN_METHOD: Rule = must(
    "RCP-L0-017",
    "an undefined method is rejected with -32004",
    "RCP/1 §14.1(4), §12",
)
.help(
    "After `initialize`, protocheck sends ten methods RCP does not define, with empty params: \
     `does/not/exist`, `protocheckUndefined` and one inside each namespace of the protocol's own \
     (`retrieve/protocheck-undefined`, `index/list`, …); each must get error -32004 \
     (UnknownMethod), which the spec prefers to -32003 when both could apply.",
    "The server answers with JSON-RPC's generic -32601 (Method not found), which most JSON-RPC \
     libraries produce by default, routes by the part before the `/` and answers -32003 for an \
     undefined method in a known namespace, or, over HTTP, the router answers the unknown path with a 404 \
     and no JSON-RPC body.",
    "Map unknown methods to `{\"code\": -32004}`: override the library's method-not-found \
     handler, or rewrite -32601 before it is sent. Over HTTP, route every `POST <base>/<method>` \
     to the dispatcher so an unknown path gets that JSON-RPC error with status 200.",
);
pub const UNADVERTISED_METHOD: Rule = must(
    "RCP-L0-018",
    "an unadvertised capability method is rejected with -32003",
    "RCP/1 §14.1(4), §12",
)
.help(
    "After `initialize`, protocheck sends every read-only RCP method whose capability is not \
     advertised (`catalog/list`, `query/transform`, `embed/sparse`, `embed/multi`, \
     `memory/recall`, `graph`, `embed`, `rerank`, `retrieve`) with valid params, and \
     `index/add`/`index/delete` with empty lists, which write nothing; each must get error \
     -32003. `feedback` and `memory/build` are never sent.",
    "The server answers -32004 or -32601 for a method it does not implement, because it does not \
     tell a method RCP defines from an unknown one, or it serves the method without advertising \
     its capability.",
    "Keep the list of RCP-defined methods: one whose capability the server does not advertise \
     gets `{\"code\": -32003}` (CapabilityMissing), an undefined one -32004. If the method works, \
     advertise its capability instead.",
);
pub const UNSUPPORTED_OPTION: Rule = must(
    "RCP-L0-019",
    "an unsupported option of an advertised method is rejected with -32005",
    "RCP/1 §14.1(4), §12",
)
.help(
    "For each advertised method with an option whose values are advertised (or set by a spec \
     default: units, modalities, encodings), protocheck sends one request per value outside the \
     set: `retrieve` modes, fusion, units, modalities, image and audio query blocks, \
     `rerank.method`, `rerank.model` and filter operators, `embed` encodings and image and audio \
     inputs, rerank methods, models and image and audio passages, transform methods, graph ops. \
     Each must get -32005.",
    "The server ignores the option and answers normally, falls back to a default, or refuses with \
     -32602 (InvalidParams) instead of -32005. A non-text block sent to a text-only method may \
     get -32602, and so may an operator on a field of a type it does not apply to; those pass.",
    "Check each option against what `initialize` advertises and answer a value outside that set \
     with `{\"code\": -32005}` (OptionUnsupported). Where you leave a list out, the spec's \
     default applies: units `chunk` and `passage`, modality `text`, encoding `json`.",
);
pub const MALFORMED_PARAMS: Rule = must(
    "RCP-L0-020",
    "malformed params are rejected with -32602",
    "RCP/1 §14.1(5), §12",
)
.help(
    "For every advertised read-only method that takes params, protocheck sends one request per \
     required field left out, one per field with a value of the wrong JSON type, one per integer \
     below the schema's minimum, fractional or boolean (`k` = 0, 1.5, true, \"3\", -5), the funnel \
     `candidateK ≥ rerank.topN ≥ k` broken three ways, each field of `fusion`, `rerank`, `mmr` and \
     `recency` mistyped or out of range, malformed Content blocks wherever one may stand, and \
     `params` as an array, a string and null; each must get -32602 (-32600 passes too for a \
     non-object `params`). A wrong type on an optional field may also \
     get -32005, and `seed`, `level`, `tokenBudget` and `sessionId` may be ignored while their \
     feature is not advertised.",
    "The server does not validate params: it answers with a result built from defaults, fails \
     with -32603 (Internal error), or coerces \"3\" into 3. Handlers that read fields with \
     fallbacks, or code in a dynamic language without a schema check, are the usual cause.",
    "Validate params before running the method, against the schema's `*Params` definitions: a \
     missing required field, a wrong JSON type or a negative `k` gets `{\"code\": -32602}` \
     (InvalidParams). A schema validator run on every request is the simplest way.",
);

impl Conversation<'_> {
    /// Unknown fields: the first `initialize` (judged there) and a `ping` with an
    /// unknown top-level params field.
    pub(super) async fn tolerance(
        &mut self,
        init: Option<Tolerance>,
        session: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &TOLERATES_UNKNOWN;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self
            .request(
                rule,
                "ping",
                json!({"x-protocheck-unknown-field": {"nested": [1, "two"]}}),
            )
            .await?;
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        // §4.6 and §4.7 hold for every method: each read-only capability
        // method the session advertises gets valid params with an unknown
        // field and an unknown `_meta` key, under a string id that looks
        // like a number (its echo is judged with every reply, RCP-L0-025).
        let calls: Vec<(Value, String, Value)> = session
            .filter(|_| self.blocked(session).is_none())
            .map(|init| {
                super::params::METHODS
                    .iter()
                    .filter(|m| init.supports(m.capability))
                    .enumerate()
                    .map(|(n, m)| {
                        let mut params = super::params::base(m.name, init);
                        params.insert(
                            "x-protocheck-unknown-field".into(),
                            json!({"nested": [1, "two"]}),
                        );
                        params.insert("_meta".into(), json!({"x-protocheck-unknown": true}));
                        (
                            json!(format!("0{}", 18 + n)),
                            m.name.to_owned(),
                            Value::Object(params),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let methods: Vec<String> = calls.iter().map(|(_, m, _)| m.clone()).collect();
        let answers = self.call_all(rule, calls).await?;
        for sent in &answers {
            check.saw(sent);
        }
        // A refused method goes again without the unknown keys: when that is
        // refused too, the method fails for another reason (its own rule's),
        // not for the unknown keys.
        let mut tolerated = Vec::new();
        let mut refused = Vec::new();
        let mut refused_anyway = Vec::new();
        for (method, sent) in methods.iter().zip(&answers) {
            if result_of(sent).is_some_and(Value::is_object) {
                tolerated.push(format!("`{method}`"));
                continue;
            }
            if self.gone().is_some() {
                break;
            }
            let plain = session
                .map(|init| Value::Object(super::params::base(method, init)))
                .unwrap_or_default();
            let again = self.request(rule, method, plain).await?;
            check.saw(&again);
            if result_of(&again).is_some_and(Value::is_object) {
                refused.push(format!(
                    "`{method}` {} while the same request without them succeeded",
                    outcome_words(sent)
                ));
            } else {
                refused_anyway.push(format!("`{method}`"));
            }
        }
        // Unknown keys inside nested objects (option objects, Content
        // blocks, filter nodes): see `params::nested_unknown`.
        if let Some(init) = session.filter(|_| self.blocked(session).is_none()) {
            let (nested_problems, nested_notes) =
                self.nested_tolerance(rule, init, &mut check).await?;
            problems.extend(nested_problems);
            notes.extend(nested_notes);
        }
        if !tolerated.is_empty() {
            notes.push(format!(
                "{} with an unknown params field and an unknown `_meta` key succeeded",
                tolerated.join(", ")
            ));
        }
        if !refused_anyway.is_empty() {
            notes.push(format!(
                "{} refused valid params with or without the unknown keys, so the keys were not what it \
                 refused (its own rules judge it)",
                refused_anyway.join(", ")
            ));
        }
        if !refused.is_empty() {
            problems.push(format!(
                "with valid params plus an unknown field (`x-protocheck-unknown-field`) and an unknown `_meta` \
                 key, {}; unknown fields MUST be ignored on every method (§14.1 rule 7, §4.6)",
                refused.join("; ")
            ));
        }
        if let Some(init) = init {
            check.evidence.extend(init.evidence);
            if init.ok {
                notes.push(init.message)
            } else {
                problems.push(init.message)
            }
        }
        check.saw(&sent);
        if result_of(&sent).is_some_and(Value::is_object) {
            notes.push("`ping` with an unknown params field succeeded".to_owned());
        } else {
            problems.push(format!(
                "`ping` with an unknown params field (`x-protocheck-unknown-field`) {}; unknown fields MUST be \
                 ignored (§14.1 rule 7, §4.6)",
                outcome_words(&sent)
            ));
        }
        let finding = if problems.is_empty() {
            check.finding(Outcome::Pass, notes.join("; "))
        } else {
            check.finding(rule.on_failure, problems.join("; "))
        };
        self.emit(finding).await
    }

    /// RCP-L0-017: methods RCP does not define, outside its namespaces and
    /// inside each of them (§12: -32004 "the method is not defined by RCP *at
    /// all*", and a server "MUST prefer `-32004` when both apply", so an
    /// undefined `retrieve/…` is not an unadvertised capability), each with
    /// empty params; every one must get -32004.
    pub(super) async fn unknown_method(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &UNKNOWN_METHOD;
        if let Some(reason) = self.blocked(init) {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let requests: Vec<(&str, Value)> =
            UNDEFINED_METHODS.iter().map(|m| (*m, json!({}))).collect();
        let answers = self.request_all(rule, requests).await?;
        let mut problems = Vec::new();
        for (method, sent) in UNDEFINED_METHODS.iter().zip(&answers) {
            if code_of(sent) != Some(-32004) {
                check.saw(sent);
                problems.push(format!("`{method}` {}", outcome_words(sent)));
            }
        }
        if let Some(first) = answers.first() {
            check.saw(first);
        }
        let names = UNDEFINED_METHODS[..answers.len()]
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let finding = check.verdict(
            &problems,
            format!("each undefined method was rejected with -32004: {names}"),
            "a method RCP does not define MUST get error -32004 (UnknownMethod), not -32601, and -32004 is \
             preferred over -32003 for an undefined method inside a namespace of the protocol's own (§12, §14.1 \
             rule 4)",
        );
        self.emit(finding).await
    }

    /// RCP-L0-018: every method RCP defines whose capability the session
    /// does not advertise gets its own request, with valid params. Of the
    /// write methods, `index/add` with no documents and `index/delete` with
    /// no ids are sent: they write nothing even on a server that serves
    /// them (§7.10: `index/delete` "never an error for absent ids", and an
    /// add of nothing adds nothing); `index/add` goes when `index` is not
    /// advertised or not `writable: true` ("needs writable"). `feedback` and
    /// `memory/build` are never sent (decision 7: they would write).
    pub(super) async fn unadvertised_method(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &UNADVERTISED_METHOD;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let writable = init.flag("index", "writable");
        let candidates = [
            ("catalog/list", "catalog", json!({})),
            (
                "query/transform",
                "transform",
                json!({"query": PROBE_QUERY, "method": "rewrite"}),
            ),
            (
                "embed/sparse",
                "sparseEmbed",
                json!({"texts": [PROBE_QUERY]}),
            ),
            (
                "embed/multi",
                "multiVector",
                json!({"inputs": [PROBE_QUERY]}),
            ),
            ("memory/recall", "memory", json!({"query": PROBE_QUERY})),
            (
                "graph",
                "graph",
                json!({"op": "local", "query": PROBE_QUERY}),
            ),
            ("embed", "embed", json!({"inputs": [PROBE_QUERY]})),
            (
                "rerank",
                "rerank",
                json!({"query": PROBE_QUERY, "passages": ["a"]}),
            ),
            (
                "retrieve",
                "retrieve",
                json!({"query": PROBE_QUERY, "k": 1}),
            ),
            ("index/add", "index", json!({"documents": []})),
            ("index/delete", "index", json!({"ids": []})),
        ];
        let probed: Vec<(&str, String, Value)> = candidates
            .into_iter()
            .filter_map(|(method, cap, params)| {
                if method == "index/add" && init.supports(cap) && !writable {
                    return Some((method, "`index.writable: true`".to_owned(), params));
                }
                (!init.supports(cap)).then(|| (method, format!("`{cap}`"), params))
            })
            .collect();
        if probed.is_empty() {
            return self
                .skip(
                    rule,
                    "every method RCP defines that protocheck may send without writing is advertised, so none \
                     could be probed",
                )
                .await;
        }
        let mut check = Check::new(rule);
        let requests = probed
            .iter()
            .map(|(method, _, params)| (*method, params.clone()))
            .collect();
        let answers = self.request_all(rule, requests).await?;
        let mut problems = Vec::new();
        let mut refused = Vec::new();
        for ((method, cap, _), sent) in probed.iter().zip(&answers) {
            if code_of(sent) == Some(-32003) {
                refused.push(format!("`{method}` ({cap} not advertised)"));
            } else {
                check.saw(sent);
                problems.push(format!(
                    "`{method}` is defined by RCP but {cap} is not advertised, and it {}",
                    outcome_words(sent)
                ));
            }
        }
        if let Some(first) = answers.first() {
            check.saw(first);
        }
        let finding = check.verdict(
            &problems,
            format!("each was rejected with -32003: {}", refused.join(", ")),
            "a method RCP defines whose capability is not advertised MUST get error -32003 (CapabilityMissing) \
             (§12, §14.1 rule 4)",
        );
        self.emit(finding).await
    }

    /// Every option of every advertised method whose values are an
    /// advertised set, or a set the spec fixes when the list is absent, is
    /// probed with a value outside that set (see [`option_probes`]).
    pub(super) async fn unsupported_option(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &UNSUPPORTED_OPTION;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let probes = option_probes(init);
        if probes.is_empty() {
            return self
                .skip(
                    rule,
                    "no advertised method has an option whose advertised or default set leaves a value out \
                     (retrieve mode, fusion, unit, modality, rerank.method, filter operator; embed encoding and \
                     modality; embed/multi encoding and modality; rerank method; query/transform method; graph \
                     op), so none could be probed",
                )
                .await;
        }
        let mut check = Check::new(rule);
        // Failures grouped by method and option, so that every value shows
        // in the finding: "`retrieve` with unit outside …: \"document\"
        // answered with a result, \"node\" …".
        let mut failed: Vec<(String, Vec<String>)> = Vec::new();
        let mut done = Vec::new();
        let requests = probes
            .iter()
            .map(|p| (p.method, p.params.clone()))
            .collect();
        let answers = self.request_all(rule, requests).await?;
        for (probe, sent) in probes.into_iter().zip(answers) {
            check.saw(&sent);
            match code_of(&sent) {
                Some(code) if probe.accepted.contains(&code) => {
                    done.push(format!("`{}` {} ({code})", probe.method, probe.short));
                }
                _ => {
                    let key = format!("`{}` with {}:", probe.method, probe.what);
                    let entry = format!("{} {}", probe.value, outcome_words(&sent));
                    match failed.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, values)) => values.push(entry),
                        None => failed.push((key, vec![entry])),
                    }
                }
            }
        }
        let problems: Vec<String> = failed
            .into_iter()
            .map(|(key, values)| format!("{key} {}", values.join(", ")))
            .collect();
        let finding = check.verdict(
            &problems,
            format!(
                "{} unadvertised option value{} refused: {}",
                done.len(),
                if done.len() == 1 { " was" } else { "s were" },
                done.join(", ")
            ),
            "the spec requires error -32005 (OptionUnsupported) for an option value outside the advertised set, \
             or outside the spec's default when the list is absent, unless the request sets `strict:false` \
             (§14.1 rule 4, §12, §7.7)",
        );
        self.emit(finding).await
    }

    /// Every required field left out and every field given the wrong JSON
    /// type, for every read-only method the server advertises (the table in
    /// `params`, written from the schema). §12: -32602 is for "a missing
    /// required field, a wrong JSON type, a value out of range"; §14.1 rule 5:
    /// "validate params and return `-32602` on malformed input instead of
    /// crashing". §12 also makes the choice normative: -32602 is for a request
    /// "malformed *independently of capabilities*", so a wrong type on an
    /// option the server does not offer is still -32602, not -32005. The only
    /// exceptions are fields the spec lets a server ignore when it does not
    /// offer the feature (`seed` §7.7.1, `level` and `tokenBudget` §7.7.2,
    /// `sessionId` §7.7.3; see `params::Hint`): there a result is accepted as
    /// well, and the finding names each such field, exempt or (advertised)
    /// read.
    ///
    /// Politeness: at most one request per required field and one per field
    /// (62 when every read-only method is advertised), all of them requests
    /// a conformant server refuses without doing any work; side by side, up
    /// to the run's concurrency, where the session allows it
    /// ([`Conversation::request_all`]).
    pub(super) async fn malformed_params(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &MALFORMED_PARAMS;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let probes = params::probes(init);
        if probes.is_empty() {
            return self
                .skip(
                    rule,
                    format!(
                        "not verified: {} failed (no read-only retrieval method to probe)",
                        RETRIEVAL_CAPABILITY.id
                    ),
                )
                .await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut passed = 0usize;
        let mut with_32602 = 0usize;
        let mut ignored = Vec::new();
        let mut first_seen = Vec::new();
        let mut methods: Vec<&str> = Vec::new();
        let mut exempt = Vec::new();
        let mut read = Vec::new();
        let requests = probes
            .iter()
            .map(|p| (p.method, p.params.clone()))
            .collect();
        let answers = self.request_all(rule, requests).await?;
        for (probe, sent) in probes.into_iter().zip(answers) {
            if let Some(e) = &probe.exemption {
                let (list, entry) = match &e.read_because {
                    None => (&mut exempt, format!("{} ({})", e.field, e.why)),
                    Some(ad) => (&mut read, format!("{} ({ad} advertised)", e.field)),
                };
                // A field probed with several values is named once.
                if !list.contains(&entry) {
                    list.push(entry);
                }
            }
            if !methods.contains(&probe.method) {
                methods.push(probe.method);
            }
            let code = code_of(&sent);
            if code == Some(-32602) {
                passed += 1;
                with_32602 += 1;
                if first_seen.len() < 2 {
                    first_seen.push(exchange_of(&sent).clone());
                }
            } else if let (Some(why), Some(_)) = (probe.ignorable, result_of(&sent)) {
                passed += 1;
                ignored.push(format!(
                    "`{}` with {} was ignored ({why})",
                    probe.method, probe.what
                ));
            } else if let Some((_, why)) = probe
                .also
                .filter(|(codes, _)| code.is_some_and(|c| codes.contains(&c)))
            {
                passed += 1;
                ignored.push(format!(
                    "`{}` {} {} ({why})",
                    probe.method,
                    probe.what,
                    outcome_words(&sent)
                ));
            } else {
                check.saw(&sent);
                problems.push(format!(
                    "`{}` {} {}",
                    probe.method,
                    probe.what,
                    outcome_words(&sent)
                ));
            }
        }
        if problems.is_empty() {
            for exchange in first_seen {
                check.keep(exchange);
            }
        }
        let note = if ignored.is_empty() {
            String::new()
        } else {
            format!("; {}", ignored.join("; "))
        };
        // Which fields a result was accepted for, and why; said on pass and
        // on failure, so the exemptions are never a surprise.
        let mut exemptions = String::new();
        if !exempt.is_empty() {
            exemptions.push_str(&format!(
                "; exempt (a result also accepted, the feature not advertised): {}",
                exempt.join(", ")
            ));
        }
        if !read.is_empty() {
            exemptions.push_str(&format!(
                "; not exempt, the feature being advertised: {}",
                read.join(", ")
            ));
        }
        let why = format!(
            "the spec requires error -32602 (InvalidParams) for a missing required field, a wrong JSON type or a \
             value out of range (§14.1 rule 5, §12), on every field but those it lets a server ignore when the \
             feature is not advertised{exemptions}"
        );
        let finding = check.verdict(
            &problems,
            format!(
                "all {passed} malformed requests to {} ({}) were answered as the spec allows, {with_32602} with \
                 -32602{note}{exemptions}",
                methods.join(", "),
                params::CLASSES
            ),
            &why,
        );
        self.emit(finding).await
    }
}

/// Methods RCP/1 does not define (RCP-L0-017): outside every namespace of
/// the protocol, and inside each namespace its methods use (`retrieve`,
/// `rerank`, `embed`, `index`, `memory`, `graph`, `catalog`, `query`),
/// none of them a write under any reading.
const UNDEFINED_METHODS: [&str; 10] = [
    UNKNOWN_METHOD_NAME,
    "protocheckUndefined",
    "retrieve/protocheck-undefined",
    "rerank/protocheck-undefined",
    "embed/protocheck-undefined",
    "index/list",
    "memory/protocheck-undefined",
    "graph/protocheck-undefined",
    "catalog/protocheck-undefined",
    "query/protocheck-undefined",
];

/// One probe of RCP-L0-019: a value outside an option's advertised set.
struct OptionProbe {
    method: &'static str,
    params: Value,
    /// The option and the set its value is outside of, for a failure:
    /// failures of one option are reported together.
    what: String,
    /// The value, quoted.
    value: String,
    /// The value alone, for a pass.
    short: String,
    /// The codes that pass.
    accepted: &'static [i64],
}

/// -32005 only (§12: "a requested option value … is not in the advertised set").
const OPTION_UNSUPPORTED: &[i64] = &[-32005];
/// A non-text Content block sent to a text-only method: §4.8 says servers
/// "MUST reject a block whose `type`/`mimeType` is outside the modalities they
/// advertised with `-32005`", and also that "a text-only server MAY accept only
/// the string form", which reads as a block being malformed input (-32602).
/// Both readings are accepted.
const BLOCK_REFUSED: &[i64] = &[-32005, -32602];
/// An operator outside `filter.operators` on a field whose type it does not
/// apply to (§8's value typing): unsupported (-32005) or mistyped (-32602).
const OPERATOR_REFUSED: &[i64] = &[-32005, -32602];

/// A one-pixel PNG, as base64: the smallest real image block.
const PNG_PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

/// A model name no server lists in `rerank.models`.
const UNLISTED_MODEL: &str = "protocheck-unlisted-model";

/// The values an option may take (the schema's enum), in spec order.
const MODES: &[&str] = &["dense", "sparse", "hybrid"];
const FUSIONS: &[&str] = &["rrf", "weighted", "convex"];
const ENCODINGS: &[&str] = &["json", "f32-base64"];
const RERANK_METHODS: &[&str] = &["cross-encoder", "colbert", "llm"];
const TRANSFORM_METHODS: &[&str] = &["rewrite", "hyde", "multi-query", "decompose", "step-back"];
/// The graph ops RCP/1 defines (§6, §7.9), in the order RCP-L2-005 reads them.
pub(crate) const GRAPH_OPS: &[&str] = &["local", "global", "drift", "communities", "neighbors"];

/// The set an option is judged against: the advertised list, or the spec's
/// default when the list is absent (`None` when the spec gives none). Returns
/// the set and how to name it in a finding.
fn option_set(
    init: &Init,
    cap: &str,
    field: &str,
    default: Option<(&[&str], &str)>,
) -> Option<(Vec<String>, String)> {
    match init.advertised_list(cap, field) {
        Some(list) => {
            let shown = show(&json!(list));
            Some((list, format!("`{cap}.{field}` ({shown})")))
        }
        None => default.map(|(values, why)| {
            (
                values.iter().map(|v| (*v).to_owned()).collect(),
                format!("the spec's default when `{cap}.{field}` is absent ({why})"),
            )
        }),
    }
}

/// Every value of `all` outside `set`, in spec order (issue #26: every
/// value, not a sample).
fn outside(all: &[&'static str], set: &[String]) -> Vec<&'static str> {
    all.iter()
        .copied()
        .filter(|v| !set.iter().any(|s| s == v))
        .collect()
}

/// The §8 filter operators, in the spec's table order.
const FILTER_OPERATORS: &[&str] = &[
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists",
];

/// A field and value for a clause with operator `op` that is well-formed
/// but for the operator (§8's value typing: ordered comparisons on
/// `int`/`float`/`date`, `contains` on `text` or an array, `in`/`nin` an
/// array, `exists` a boolean). `fields` is `filter.fields` as advertised
/// (a name list, or a name → type map). The flag says whether the field's
/// type fits the operator; when no advertised field fits, a server may also
/// refuse the clause as mistyped (-32602).
fn operator_clause(op: &str, fields: &[(String, Option<String>)]) -> Option<(Value, bool)> {
    let fits = |ty: Option<&str>| match op {
        "gt" | "gte" | "lt" | "lte" => matches!(ty, Some("int" | "float" | "date")),
        "contains" => matches!(ty, Some("text")),
        _ => true,
    };
    let (field, ty, fit) = fields
        .iter()
        .find(|(_, ty)| fits(ty.as_deref()))
        .map(|(f, ty)| (f, ty.as_deref(), true))
        .or_else(|| fields.first().map(|(f, ty)| (f, ty.as_deref(), false)))?;
    let scalar = match ty {
        Some("int") => json!(2000),
        Some("float") => json!(0.5),
        Some("date") => json!("2020-01-01"),
        Some("bool") => json!(true),
        _ => json!("protocheck-probe-value"),
    };
    let value = match op {
        "in" | "nin" => json!([scalar]),
        "exists" => json!(true),
        _ => scalar,
    };
    Some((json!({"field": field, "op": op, "value": value}), fit))
}

/// `filter.fields` as advertised: a list of names or a name → type map.
fn filter_fields(init: &Init) -> Vec<(String, Option<String>)> {
    match init.capability("filter").and_then(|f| f.get("fields")) {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(|n| (n.to_owned(), None))
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(n, t)| (n.clone(), t.as_str().map(str::to_owned)))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every option value probe for the methods `init` advertises.
///
/// §14.1 rule 4: an L0 server MUST reject "unsupported advertised-method
/// options with `-32005`"; §12: -32005 is for "a requested option value (a
/// `mode`, `rerank.method`, `filter` operator) … not in the advertised set".
/// Where a list is absent the spec's default is the advertised set:
/// - §6.1 `units`: "absent means `chunk`/`passage` only";
/// - §4.8 modalities: "the default, when unadvertised, is `["text"]`";
/// - §7.3.1 encodings: `"json"` is "Always supported; it is the default", and
///   "Requesting an unadvertised encoding is `-32005`"; "The same `encoding`
///   field applies to `embed/multi`", so `embed/multi` is probed only when no
///   `embed.encodings` lists `f32-base64` (a list that does leaves open
///   whether it covers `embed/multi` too).
///
/// Lists the spec gives no default for (`retrieve.modes`, `retrieve.fusion`,
/// `rerank.methods`, `transform.methods`, `graph.ops`, `filter.operators`)
/// are probed only when advertised. Every value outside each set is probed
/// (issue #26), not the first one.
///
/// Decisions (issue #26): §12 names "a `mode`, `rerank.method`, `filter`
/// operator" as -32005 cases, so `retrieve`'s `rerank.method` is judged
/// against `rerank.methods` (the only list of rerank methods the spec has;
/// a server without built-in rerank refuses any, which is -32005 too), and
/// each operator outside `filter.operators` (§8: "MUST reject an operator
/// outside its advertised `filter.operators` with `-32005`") on an
/// advertised field whose type the operator applies to; when no advertised
/// field fits, -32602 (a mistyped clause, §8's table) is accepted as well.
/// Not probed: `rewrite` inside `retrieve` (no list names its values for
/// `retrieve`). Judging an op outside `graph.ops` and a method outside
/// `transform.methods` is this rule's alone, so RCP-L2-004/005 and this rule
/// cannot disagree on one probe.
fn option_probes(init: &Init) -> Vec<OptionProbe> {
    let mut probes = Vec::new();
    let mut add = |method: &'static str,
                   params: Value,
                   option: &str,
                   value: &str,
                   set: &str,
                   accepted: &'static [i64]| {
        probes.push(OptionProbe {
            method,
            params,
            what: format!("{option} outside {set}"),
            value: format!("\"{value}\""),
            short: format!("{option} \"{value}\""),
            accepted,
        });
    };
    let image = json!({"type": "image", "mimeType": "image/png", "data": PNG_PIXEL});
    let audio = json!({"type": "audio", "mimeType": "audio/wav", "data": PNG_PIXEL});
    // §4.8: "Servers MUST reject a block whose `type`/`mimeType` is outside
    // the modalities they advertised with `-32005`": each non-text block.
    let blocks = [("image", image), ("audio", audio)];
    if init.supports("retrieve") {
        let base = |extra: Value| {
            let mut p = json!({"query": PROBE_QUERY, "k": 1});
            if let (Some(p), Some(extra)) = (p.as_object_mut(), extra.as_object()) {
                p.extend(extra.clone());
            }
            p
        };
        if let Some((set, named)) = option_set(init, "retrieve", "modes", None) {
            for v in outside(MODES, &set) {
                let params = base(json!({"mode": v}));
                add("retrieve", params, "mode", v, &named, OPTION_UNSUPPORTED);
            }
        }
        // Fusion applies "when `mode:\"hybrid\"`" (§6.1): probed with an
        // advertised hybrid mode so the mode itself is not what is refused.
        let hybrid = init
            .advertised_list("retrieve", "modes")
            .is_some_and(|m| m.iter().any(|x| x == "hybrid"));
        if hybrid && let Some((set, named)) = option_set(init, "retrieve", "fusion", None) {
            for v in outside(FUSIONS, &set) {
                let params = base(json!({"mode": "hybrid", "fusion": {"method": v}}));
                add(
                    "retrieve",
                    params,
                    "fusion.method",
                    v,
                    &named,
                    OPTION_UNSUPPORTED,
                );
            }
        }
        let units = Some((&["chunk", "passage"][..], "chunk and passage, §6.1"));
        if let Some((set, named)) = option_set(init, "retrieve", "units", units) {
            for v in outside(crate::suite::rcp::shape::UNITS, &set) {
                let params = base(json!({"unit": v}));
                add("retrieve", params, "unit", v, &named, OPTION_UNSUPPORTED);
            }
        }
        let text = Some((&["text"][..], "text, §4.8"));
        if let Some((set, named)) = option_set(init, "retrieve", "modalities", text) {
            for (kind, block) in blocks.iter().filter(|(k, _)| !set.iter().any(|s| s == k)) {
                let params = base(json!({"query": block}));
                add(
                    "retrieve",
                    params,
                    "query block",
                    kind,
                    &named,
                    BLOCK_REFUSED,
                );
            }
        }
        // `rerank.model` outside `rerank.models` (§6: `rerank: { methods,
        // maxCandidates?, models?:[str] }`), probed when the list is there.
        if init.flag("retrieve", "rerankBuiltin")
            && let Some((_, named)) = option_set(init, "rerank", "models", None)
        {
            let params = base(json!({"rerank": {"model": UNLISTED_MODEL}}));
            add(
                "retrieve",
                params,
                "rerank.model",
                UNLISTED_MODEL,
                &named,
                OPTION_UNSUPPORTED,
            );
        }
        if let Some((set, named)) = option_set(init, "retrieve", "modalities", text) {
            for v in outside(crate::suite::rcp::shape::MODALITIES, &set) {
                let params = base(json!({"modality": v}));
                add(
                    "retrieve",
                    params,
                    "modality",
                    v,
                    &named,
                    OPTION_UNSUPPORTED,
                );
            }
        }
        // §12: -32005 for "a requested option value (a `mode`,
        // `rerank.method`, …)" not in the advertised set.
        if let Some((set, named)) = option_set(init, "rerank", "methods", None) {
            for v in outside(RERANK_METHODS, &set) {
                let params = base(json!({"rerank": {"method": v}}));
                add(
                    "retrieve",
                    params,
                    "rerank.method",
                    v,
                    &named,
                    OPTION_UNSUPPORTED,
                );
            }
        }
        // §8: "MUST reject an operator outside its advertised
        // `filter.operators` with `-32005`".
        let fields = filter_fields(init);
        if init.supports("filter")
            && let Some((set, named)) = option_set(init, "filter", "operators", None)
        {
            for v in outside(FILTER_OPERATORS, &set) {
                let Some((clause, fit)) = operator_clause(v, &fields) else {
                    break;
                };
                let (accepted, named) = if fit {
                    (OPTION_UNSUPPORTED, named.clone())
                } else {
                    (
                        OPERATOR_REFUSED,
                        format!(
                            "{named}, on a field of a type §8 does not apply it to (no advertised field fits), so \
                             -32602 passes too"
                        ),
                    )
                };
                let params = base(json!({"filter": clause}));
                add("retrieve", params, "filter operator", v, &named, accepted);
            }
        }
    }
    let json_only = Some((&["json"][..], "json, §7.3.1"));
    let text_only = Some((&["text"][..], "text, §4.8"));
    if init.supports("rerank") {
        if let Some((set, named)) = option_set(init, "rerank", "modalities", text_only) {
            for (kind, block) in blocks.iter().filter(|(k, _)| !set.iter().any(|s| s == k)) {
                let params = json!({"query": PROBE_QUERY, "passages": ["a", block]});
                add(
                    "rerank",
                    params,
                    "passage block",
                    kind,
                    &named,
                    BLOCK_REFUSED,
                );
                let params = json!({"query": block, "passages": ["a", "b"]});
                add("rerank", params, "query block", kind, &named, BLOCK_REFUSED);
            }
        }
        if let Some((_, named)) = option_set(init, "rerank", "models", None) {
            let params =
                json!({"query": PROBE_QUERY, "passages": ["a", "b"], "model": UNLISTED_MODEL});
            add(
                "rerank",
                params,
                "model",
                UNLISTED_MODEL,
                &named,
                OPTION_UNSUPPORTED,
            );
        }
    }
    if init.supports("embed") {
        if let Some((set, named)) = option_set(init, "embed", "encodings", json_only) {
            for v in outside(ENCODINGS, &set) {
                let params = json!({"inputs": [PROBE_QUERY], "encoding": v});
                add("embed", params, "encoding", v, &named, OPTION_UNSUPPORTED);
            }
        }
        if let Some((set, named)) = option_set(init, "embed", "modalities", text_only) {
            for (kind, block) in blocks.iter().filter(|(k, _)| !set.iter().any(|s| s == k)) {
                let params = json!({"inputs": [block]});
                add("embed", params, "input type", kind, &named, BLOCK_REFUSED);
            }
        }
    }
    if init.supports("multiVector") {
        let binary_listed = init
            .advertised_list("embed", "encodings")
            .is_some_and(|e| e.iter().any(|x| x == "f32-base64"));
        if !binary_listed {
            let named = "the spec's default `json` encoding (no `embed.encodings` lists `f32-base64`, §7.3.1)";
            let params = json!({"inputs": [PROBE_QUERY], "encoding": "f32-base64"});
            add(
                "embed/multi",
                params,
                "encoding",
                "f32-base64",
                named,
                OPTION_UNSUPPORTED,
            );
        }
        if let Some((set, named)) = option_set(init, "multiVector", "modalities", text_only) {
            for (kind, block) in blocks.iter().filter(|(k, _)| !set.iter().any(|s| s == k)) {
                let params = json!({"inputs": [block]});
                add(
                    "embed/multi",
                    params,
                    "input type",
                    kind,
                    &named,
                    BLOCK_REFUSED,
                );
            }
        }
    }
    if init.supports("rerank")
        && let Some((set, named)) = option_set(init, "rerank", "methods", None)
    {
        for v in outside(RERANK_METHODS, &set) {
            let params = json!({"query": PROBE_QUERY, "passages": ["a", "b"], "method": v});
            add("rerank", params, "method", v, &named, OPTION_UNSUPPORTED);
        }
    }
    if init.supports("transform")
        && let Some((set, named)) = option_set(init, "transform", "methods", None)
    {
        for v in outside(TRANSFORM_METHODS, &set) {
            let params = json!({"query": PROBE_QUERY, "method": v});
            add(
                "query/transform",
                params,
                "method",
                v,
                &named,
                OPTION_UNSUPPORTED,
            );
        }
    }
    // §7.9: "`op` **MUST** be in `graph.ops`".
    if init.supports("graph")
        && let Some((set, named)) = option_set(init, "graph", "ops", None)
    {
        for v in outside(GRAPH_OPS, &set) {
            let params = json!({"op": v, "query": PROBE_QUERY});
            add("graph", params, "op", v, &named, OPTION_UNSUPPORTED);
        }
    }
    probes
}
