//! RCP/1 L1 "Retrieval" (spec §14.2), `spec` profile: the catalogue, the
//! order the checks run in, and what they share.
//!
//! §14.2 lists what an L1 server offers: `retrieve` with the modes dense,
//! sparse and hybrid; `filter` and `citations`; consistent scores; `k` and
//! `minScore` honoured. Each item is one or two rules. An item the server does
//! not advertise is skipped with "L1 needs …; not advertised" (it is not a
//! violation, the server just does not reach L1); an advertised item that does
//! not work fails. L1 is certified only when every rule here passes
//! (protocheck decision 9).
//!
//! The probes never assume a corpus: the first `retrieve` asks for anything,
//! and later probes reuse words of a passage the server itself returned, so a
//! lexical (sparse) search is sure to match something.

use super::conversation::{
    Check, Conversation, Init, Sent, code_of, exchange_of, outcome_words, result_of, show,
};
use crate::suite::context::EngineError;
use crate::suite::{Outcome, Rule, SpecLevel};
use serde_json::{Value, json};

mod citations;
mod filter;
mod modes;
mod ranking;

pub use citations::CITATIONS;
pub use filter::{FILTER_RESTRICTS, FILTER_VALIDATED};
pub use modes::{DENSE_MODE, HYBRID_MODE, SPARSE_MODE};
pub use ranking::{K_HONOURED, MIN_SCORE, SCORES_CONSISTENT};

const fn item(
    id: &'static str,
    title: &'static str,
    level: SpecLevel,
    spec_ref: &'static str,
) -> Rule {
    Rule {
        id,
        title,
        level,
        // A level item that does not hold blocks the level, whatever its keyword.
        on_failure: Outcome::Fail,
        spec_ref,
        group: "L1",
        help: crate::suite::Help::NONE,
    }
}

/// The L1 catalogue, by id (also the run order).
pub static RULES: &[Rule] = &[
    DENSE_MODE,
    SPARSE_MODE,
    HYBRID_MODE,
    FILTER_RESTRICTS,
    FILTER_VALIDATED,
    CITATIONS,
    SCORES_CONSISTENT,
    K_HONOURED,
    MIN_SCORE,
];

/// What each rule's item is called when L1 is missing it (decision 9: "L1
/// needs `filter`, spec §14.2; not advertised").
pub(crate) fn item_name(rule_id: &str) -> Option<&'static str> {
    let items: [(&Rule, &'static str); 9] = [
        (&DENSE_MODE, "`retrieve` mode `dense`"),
        (&SPARSE_MODE, "`retrieve` mode `sparse`"),
        (&HYBRID_MODE, "`retrieve` mode `hybrid`"),
        (&FILTER_RESTRICTS, "`filter`"),
        (&FILTER_VALIDATED, "`filter`"),
        (&CITATIONS, "`citations`"),
        (&SCORES_CONSISTENT, "consistent scores"),
        (&K_HONOURED, "`k` honoured"),
        (&MIN_SCORE, "`minScore` honoured"),
    ];
    items
        .into_iter()
        .find(|(rule, _)| rule.id == rule_id)
        .map(|(_, name)| name)
}

/// The query of the first probe: a word any retrieval corpus is likely to
/// match; dense retrieval returns neighbours whatever the words.
const OPENING_QUERY: &str = "retrieval";
/// How many words of a returned passage make the next probes' query.
const QUERY_WORDS: usize = 8;
/// `k` of the probes that are not about `k`.
pub(crate) const PROBE_K: u64 = 5;

/// One successful `retrieve` of the L1 run: what was asked and what came back.
#[derive(Debug, Clone)]
pub(crate) struct Retrieved {
    pub label: String,
    pub params: Value,
    pub result: Value,
    pub exchange: crate::suite::Exchange,
}

impl Retrieved {
    pub fn hits(&self) -> &[Value] {
        self.result
            .get("hits")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn k(&self) -> Option<u64> {
        self.params.get("k").and_then(Value::as_u64)
    }
}

/// What the L1 run learned that L2 reuses.
#[derive(Debug, Clone, Default)]
pub(crate) struct L1Facts {
    /// A query known to find passages on this server.
    pub query: Option<String>,
    /// Every successful `retrieve` result of the run.
    pub retrieved: Vec<Retrieved>,
}

/// The essentials of a `retrieve` result (spec §7.7): a `hits` array whose
/// hits carry an `id` and a numeric `score`. The full shape is judged outside
/// the levels (RCP-OUT-005).
pub(crate) fn hit_essentials(result: &Value) -> Result<&[Value], String> {
    let Some(hits) = result.get("hits").and_then(Value::as_array) else {
        return Err(format!(
            "the result has no `hits` array ({})",
            show(result.get("hits").unwrap_or(&Value::Null))
        ));
    };
    for (i, hit) in hits.iter().enumerate() {
        let id_ok = hit
            .get("id")
            .is_some_and(|id| id.is_string() || id.is_number());
        let score_ok = hit.get("score").is_some_and(Value::is_number);
        if !id_ok || !score_ok {
            return Err(format!(
                "hit {i} lacks a string or number `id` and a numeric `score`: {}",
                show(hit)
            ));
        }
    }
    Ok(hits)
}

/// The text a hit carries: `text`, or its text Content blocks.
fn hit_text(hit: &Value) -> Option<String> {
    if let Some(t) = hit.get("text").and_then(Value::as_str) {
        return Some(t.to_owned());
    }
    let blocks = hit.get("content")?.as_array()?;
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// The reason every L1 rule is skipped, if they all are.
fn blocked(conv: &Conversation<'_>, init: Option<&Init>) -> Option<String> {
    if let Some(reason) = conv.blocked(init) {
        return Some(reason);
    }
    let init = init?;
    (!init.supports("retrieve"))
        .then(|| "L1 needs `retrieve` (spec §14.2); `retrieve` is not advertised".to_owned())
}

/// Runs the L1 checks on the initialized session.
pub(crate) async fn run(
    conv: &mut Conversation<'_>,
    init: Option<&Init>,
) -> Result<L1Facts, EngineError> {
    let mut facts = L1Facts::default();
    let init = match (blocked(conv, init), init) {
        (None, Some(init)) => init,
        (reason, _) => {
            let reason = reason.unwrap_or_else(super::l0::no_init);
            for rule in RULES {
                conv.skip(rule, reason.clone()).await?;
            }
            return Ok(facts);
        }
    };
    let mut run = L1Run {
        conv,
        init,
        facts: &mut facts,
    };
    run.opening().await?;
    run.modes().await?;
    run.filter().await?;
    run.validated_filter().await?;
    run.citations().await?;
    run.k_honoured().await?;
    run.min_score().await?;
    // Judged last, over every result of the run.
    run.scores().await?;
    Ok(facts)
}

struct L1Run<'r, 'c> {
    conv: &'r mut Conversation<'c>,
    init: &'r Init,
    facts: &'r mut L1Facts,
}

impl L1Run<'_, '_> {
    /// Sends a `retrieve`, keeping a successful result for the rules judged
    /// over every result.
    async fn retrieve(
        &mut self,
        rule: &'static Rule,
        label: &str,
        params: Value,
    ) -> Result<Sent, EngineError> {
        let sent = self.conv.request(rule, "retrieve", params.clone()).await?;
        self.keep(label.to_owned(), params, &sent);
        Ok(sent)
    }

    /// Keeps a successful `retrieve` result for the rules judged over every
    /// result.
    fn keep(&mut self, label: String, params: Value, sent: &Sent) {
        if let Some(result) = result_of(sent)
            && hit_essentials(result).is_ok()
        {
            self.facts.retrieved.push(Retrieved {
                label,
                params,
                result: result.clone(),
                exchange: exchange_of(sent).clone(),
            });
        }
    }

    /// [`retrieve`](Self::retrieve) for requests that do not depend on one
    /// another (a label and params each), side by side where the session
    /// allows it (see [`Conversation::request_all`]); the results are kept in
    /// the order given.
    async fn retrieve_all(
        &mut self,
        rule: &'static Rule,
        requests: Vec<(String, Value)>,
    ) -> Result<Vec<Sent>, EngineError> {
        let requests = requests
            .into_iter()
            .map(|(label, params)| (rule, label, params))
            .collect();
        self.retrieve_each(requests).await
    }

    /// [`retrieve_all`](Self::retrieve_all) for requests of several rules (a
    /// rule, a label and params each).
    async fn retrieve_each(
        &mut self,
        requests: Vec<(&'static Rule, String, Value)>,
    ) -> Result<Vec<Sent>, EngineError> {
        let sent = self
            .conv
            .request_each(
                requests
                    .iter()
                    .map(|(rule, _, params)| (*rule, "retrieve", params.clone()))
                    .collect(),
            )
            .await?;
        for ((_, label, params), sent) in requests.into_iter().zip(&sent) {
            self.keep(label, params, sent);
        }
        Ok(sent)
    }

    /// The first probe: anything at all, in the default mode. Its best passage
    /// gives the words later probes search for.
    async fn opening(&mut self) -> Result<(), EngineError> {
        // `includeText` (§7.7) asks for the passage text later probes take
        // their query words from.
        let params = json!({"query": OPENING_QUERY, "k": PROBE_K, "includeText": true});
        let sent = self
            .retrieve(&SCORES_CONSISTENT, "the opening `retrieve`", params)
            .await?;
        let text = result_of(&sent)
            .and_then(|r| r.get("hits"))
            .and_then(Value::as_array)
            .and_then(|hits| hits.iter().find_map(hit_text));
        self.facts.query = text.map(|t| {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() > 2)
                .take(QUERY_WORDS)
                .collect::<Vec<_>>()
                .join(" ")
        });
        if self.facts.query.as_deref().is_some_and(str::is_empty) {
            self.facts.query = None;
        }
        Ok(())
    }

    /// The query later probes use.
    fn query(&self) -> String {
        self.facts
            .query
            .clone()
            .unwrap_or_else(|| OPENING_QUERY.to_owned())
    }

    /// The results of the run that `keep` accepts, grouped by the mode their
    /// request named, in the order the modes were first asked for: §14.2's
    /// options (`filter`, `minScore`) hold in every mode, so the probes of
    /// each are repeated per mode. Results of the server's default mode (no
    /// `mode` sent) form a group only when no request named a mode.
    fn by_mode(&self, keep: impl Fn(&Retrieved) -> bool) -> Vec<(Option<String>, Vec<usize>)> {
        let mut groups: Vec<(Option<String>, Vec<usize>)> = Vec::new();
        for (i, r) in self.facts.retrieved.iter().enumerate() {
            if !keep(r) {
                continue;
            }
            let mode = mode_of(&r.params).map(str::to_owned);
            match groups.iter_mut().find(|(m, _)| *m == mode) {
                Some((_, members)) => members.push(i),
                None => groups.push((mode, vec![i])),
            }
        }
        if groups.iter().any(|(m, _)| m.is_some()) {
            groups.retain(|(m, _)| m.is_some());
        }
        groups
    }
}

/// The mode a `retrieve` request named; `None` for the server's default.
pub(crate) fn mode_of(params: &Value) -> Option<&str> {
    params.get("mode").and_then(Value::as_str)
}

/// "mode `dense`", or "the default mode" for a request that named none.
fn mode_words(mode: Option<&str>) -> String {
    mode.map_or_else(|| "the default mode".to_owned(), |m| format!("mode `{m}`"))
}

/// "L1 needs `<what>` (spec §14.2); `<what>` is not advertised".
fn not_advertised(what: &str, detail: &str) -> String {
    format!("L1 needs {what} (spec §14.2); {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_in_order_and_each_names_its_item() {
        for (n, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("RCP-L1-{:03}", n + 1));
            assert_eq!(rule.group, "L1");
            assert!(item_name(rule.id).is_some(), "{}", rule.id);
        }
    }

    #[test]
    fn essentials_need_hits_with_ids_and_numeric_scores() {
        assert!(hit_essentials(&json!({"hits": [{"id": 1, "score": 0.5}]})).is_ok());
        assert!(hit_essentials(&json!({"hits": [{"id": "a", "score": "0.5"}]})).is_err());
        assert!(hit_essentials(&json!({"results": []})).is_err());
        assert_eq!(
            hit_text(&json!({"content": [{"type": "text", "text": "a"}, {"type": "image"}]})),
            Some("a".to_owned())
        );
    }
}
