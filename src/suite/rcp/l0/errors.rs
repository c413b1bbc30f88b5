//! Error codes for what a server cannot do (spec §12, §14.1 rules 4, 5, 7):
//! undefined methods, unadvertised capabilities, unsupported options,
//! malformed params, and tolerance of what it does not know.

use super::*;

pub const TOLERATES_UNKNOWN: Rule = must(
    "RCP-L0-016",
    "unknown fields, capability keys and `_meta` are tolerated",
    "RCP/1 §14.1(7), §4.6",
);
pub const UNKNOWN_METHOD: Rule = must(
    "RCP-L0-017",
    "an undefined method is rejected with -32004",
    "RCP/1 §14.1(4), §12",
);
pub const UNADVERTISED_METHOD: Rule = must(
    "RCP-L0-018",
    "an unadvertised capability method is rejected with -32003",
    "RCP/1 §14.1(4), §12",
);
pub const UNSUPPORTED_OPTION: Rule = must(
    "RCP-L0-019",
    "an unsupported option of an advertised method is rejected with -32005",
    "RCP/1 §14.1(4), §12",
);
pub const MALFORMED_PARAMS: Rule = must(
    "RCP-L0-020",
    "malformed params are rejected with -32602",
    "RCP/1 §14.1(5), §12",
);

impl Conversation<'_> {
    /// Unknown fields: the first `initialize` (judged there) and a `ping` with an
    /// unknown top-level params field.
    pub(super) async fn tolerance(&mut self, init: Option<Tolerance>) -> Result<(), EngineError> {
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

    pub(super) async fn unknown_method(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &UNKNOWN_METHOD;
        if let Some(reason) = self.blocked(init) {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.request(rule, UNKNOWN_METHOD_NAME, json!({})).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32004) {
            check.finding(
                Outcome::Pass,
                format!("`{UNKNOWN_METHOD_NAME}` was rejected with -32004"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{UNKNOWN_METHOD_NAME}`, a method RCP does not define, {} after `initialize`; the spec requires \
                     error -32004 (UnknownMethod), not -32601 (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn unadvertised_method(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &UNADVERTISED_METHOD;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        // Read-only methods only: a probe never writes to the target (decision 7),
        // even one that should be refused.
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
        ];
        let Some((method, cap, params)) = candidates
            .into_iter()
            .find(|(_, cap, _)| !init.supports(cap))
        else {
            return self
                .skip(
                    rule,
                    "every read-only RCP method is advertised, so none could be probed without writing to the target",
                )
                .await;
        };
        let mut check = Check::new(rule);
        let sent = self.request(rule, method, params).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32003) {
            check.finding(
                Outcome::Pass,
                format!("`{method}` (capability `{cap}` not advertised) was rejected with -32003"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{method}` is defined by RCP but its capability `{cap}` is not advertised, and it {}; \
                     the spec requires error -32003 (CapabilityMissing) (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn unsupported_option(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &UNSUPPORTED_OPTION;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let Some((method, params, what)) = option_probe(init) else {
            return self
                .skip(
                    rule,
                    "no advertised method lists its options (retrieve.modes or units, embed.encodings, \
                     rerank.methods) with one left out, so no unsupported option could be chosen",
                )
                .await;
        };
        let mut check = Check::new(rule);
        let sent = self.request(rule, method, params).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32005) {
            check.finding(
                Outcome::Pass,
                format!("`{method}` with {what} was rejected with -32005"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{method}` with {what} {}; the spec requires error -32005 (OptionUnsupported) for an \
                     unadvertised option value unless the request sets `strict:false` (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn malformed_params(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &MALFORMED_PARAMS;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let probes: Vec<(&str, Value, &str)> = if init.supports("retrieve") {
            vec![
                ("retrieve", json!({"query": PROBE_QUERY, "k": -5}), "k = -5"),
                (
                    "retrieve",
                    json!({"query": PROBE_QUERY, "k": "3"}),
                    "k = \"3\" (a string)",
                ),
            ]
        } else if init.supports("embed") {
            vec![
                (
                    "embed",
                    json!({"inputs": PROBE_QUERY}),
                    "`inputs` as a string instead of an array",
                ),
                ("embed", json!({"kind": "query"}), "no `inputs` at all"),
            ]
        } else if init.supports("rerank") {
            vec![
                (
                    "rerank",
                    json!({"query": PROBE_QUERY, "passages": "a"}),
                    "`passages` as a string",
                ),
                (
                    "rerank",
                    json!({"query": PROBE_QUERY}),
                    "no `passages` at all",
                ),
            ]
        } else if init.supports("graph") {
            vec![
                (
                    "graph",
                    json!({"op": 5, "query": PROBE_QUERY}),
                    "`op` = 5 (a number)",
                ),
                ("graph", json!({"query": PROBE_QUERY}), "no `op` at all"),
            ]
        } else {
            return self
                .skip(
                    rule,
                    format!(
                        "not verified: {} failed (no retrieval method to probe)",
                        RETRIEVAL_CAPABILITY.id
                    ),
                )
                .await;
        };
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut done = Vec::new();
        for (method, params, what) in probes {
            let sent = self.request(rule, method, params).await?;
            check.saw(&sent);
            if code_of(&sent) == Some(-32602) {
                done.push(format!("`{method}` with {what}"));
            } else {
                problems.push(format!("`{method}` with {what} {}", outcome_words(&sent)));
            }
        }
        let finding = if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("{} were rejected with -32602", done.join(" and ")),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "{}; the spec requires error -32602 (InvalidParams) for malformed params, e.g. a `k` that is not \
                     an integer ≥ 1 (§14.1 rule 5, §12)",
                    problems.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }
}

/// Picks an option value the server does not advertise for a method it does:
/// `(method, params, words for the finding)`.
fn option_probe(init: &Init) -> Option<(&'static str, Value, String)> {
    let missing = |all: &[&'static str], advertised: &[String]| {
        all.iter()
            .copied()
            .find(|v| !advertised.iter().any(|a| a == v))
    };
    if init.supports("retrieve") {
        if let Some(modes) = init.advertised_list("retrieve", "modes")
            && let Some(mode) = missing(&["dense", "sparse", "hybrid"], &modes)
        {
            return Some((
                "retrieve",
                json!({"query": PROBE_QUERY, "k": 1, "mode": mode}),
                format!(
                    "mode \"{mode}\", which `retrieve.modes` ({}) does not list,",
                    show(&json!(modes))
                ),
            ));
        }
        if let Some(units) = init.advertised_list("retrieve", "units") {
            let all = [
                "chunk",
                "passage",
                "document",
                "node",
                "triplet",
                "path",
                "subgraph",
                "community",
                "tree-node",
                "page",
            ];
            if let Some(unit) = missing(&all, &units) {
                return Some((
                    "retrieve",
                    json!({"query": PROBE_QUERY, "k": 1, "unit": unit}),
                    format!(
                        "unit \"{unit}\", which `retrieve.units` ({}) does not list,",
                        show(&json!(units))
                    ),
                ));
            }
        }
    }
    if init.supports("embed")
        && let Some(encodings) = init.advertised_list("embed", "encodings")
        && let Some(encoding) = missing(&["json", "f32-base64"], &encodings)
    {
        return Some((
            "embed",
            json!({"inputs": [PROBE_QUERY], "encoding": encoding}),
            format!(
                "encoding \"{encoding}\", which `embed.encodings` ({}) does not list,",
                show(&json!(encodings))
            ),
        ));
    }
    if init.supports("rerank")
        && let Some(methods) = init.advertised_list("rerank", "methods")
        && let Some(method) = missing(&["cross-encoder", "colbert", "llm"], &methods)
    {
        return Some((
            "rerank",
            json!({"query": PROBE_QUERY, "passages": ["a", "b"], "method": method}),
            format!(
                "method \"{method}\", which `rerank.methods` ({}) does not list,",
                show(&json!(methods))
            ),
        ));
    }
    None
}
