//! RCP/1 L2 "SOTA" (spec §14.3), `spec` profile: the catalogue, the features
//! it groups the rules into, and the run order.
//!
//! §14.3 asks an L2 server to "advertise and implement a selection of"
//! features. Decision 9 reads it as: L1 certified, at least one L2 feature
//! advertised, and every advertised L2 feature passes its checks. A feature
//! that is not advertised is skipped and costs nothing; one that is advertised
//! and broken blocks L2. A feature protocheck could not exercise (logs over
//! HTTP from a server that does not stream, pagination when no query returns
//! two hits) is skipped as "advertised, not exercised", saying what would
//! exercise it: it neither counts for L2 nor blocks it, and the verdict lists
//! it (`not_exercised`).

use super::conversation::{
    Check, Conversation, Init, code_of, exchange_of, loose_id, outcome_words, result_of, same_id,
    show,
};
use super::l1::{L1Facts, hit_essentials};
use super::shape;
use crate::suite::context::EngineError;
use crate::suite::{Outcome, Rule, SpecLevel};
use serde_json::{Value, json};

mod delivery;
mod results;
mod stages;

pub use delivery::{LOG, STREAMING_BUFFERED, STREAMING_PROGRESS};
pub use results::{DETERMINISTIC, PAGINATION, SNAPSHOTS};
pub use stages::{GRAPH, MULTI_VECTOR, RERANK, SPARSE_EMBED, TRANSFORM};

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
        // An advertised feature that does not work blocks L2.
        on_failure: Outcome::Fail,
        spec_ref,
        group: "L2",
        help: crate::suite::Help::NONE,
    }
}

/// The L2 catalogue, by id (also the run order).
pub static RULES: &[Rule] = &[
    RERANK,
    MULTI_VECTOR,
    SPARSE_EMBED,
    TRANSFORM,
    GRAPH,
    STREAMING_PROGRESS,
    STREAMING_BUFFERED,
    PAGINATION,
    LOG,
    DETERMINISTIC,
    SNAPSHOTS,
];

/// One L2 feature of §14.3 and the rules that judge it.
pub(crate) struct Feature {
    /// As the report names it, e.g. "`rerank`".
    pub name: &'static str,
    pub rules: &'static [&'static Rule],
    advertised: fn(&Init) -> bool,
}

impl Feature {
    pub fn is_advertised(&self, init: &Init) -> bool {
        (self.advertised)(init)
    }
}

/// The features of §14.3, in its order.
pub(crate) static FEATURES: &[Feature] = &[
    Feature {
        name: "`rerank`",
        rules: &[&RERANK],
        advertised: |i| i.supports("rerank"),
    },
    Feature {
        name: "`multiVector`",
        rules: &[&MULTI_VECTOR],
        advertised: |i| i.supports("multiVector"),
    },
    Feature {
        name: "`sparseEmbed`",
        rules: &[&SPARSE_EMBED],
        advertised: |i| i.supports("sparseEmbed"),
    },
    Feature {
        name: "`query/transform`",
        rules: &[&TRANSFORM],
        advertised: |i| i.supports("transform"),
    },
    Feature {
        name: "`graph`",
        rules: &[&GRAPH],
        advertised: |i| i.supports("graph"),
    },
    Feature {
        name: "`streaming`",
        rules: &[&STREAMING_PROGRESS, &STREAMING_BUFFERED],
        advertised: |i| i.supports("streaming"),
    },
    Feature {
        name: "`pagination`",
        rules: &[&PAGINATION],
        advertised: |i| i.supports("pagination"),
    },
    Feature {
        name: "`log`",
        rules: &[&LOG],
        advertised: |i| i.supports("log"),
    },
    Feature {
        name: "reproducibility (`retrieve.deterministic` / `snapshots`)",
        rules: &[&DETERMINISTIC, &SNAPSHOTS],
        advertised: |i| i.flag("retrieve", "deterministic") || i.flag("retrieve", "snapshots"),
    },
];

/// Words a probe searches for when the L1 run found none better.
const FALLBACK_QUERY: &str = "retrieval";

/// Runs the L2 checks on the initialized session; returns the features the
/// server advertises.
pub(crate) async fn run(
    conv: &mut Conversation<'_>,
    init: Option<&Init>,
    facts: &L1Facts,
) -> Result<Vec<&'static Feature>, EngineError> {
    let init = match (conv.blocked(init), init) {
        (None, Some(init)) => init,
        (reason, _) => {
            let reason = reason.unwrap_or_else(super::l0::no_init);
            for rule in RULES {
                conv.skip(rule, reason.clone()).await?;
            }
            return Ok(Vec::new());
        }
    };
    let advertised: Vec<&'static Feature> =
        FEATURES.iter().filter(|f| f.is_advertised(init)).collect();
    // Each feature's probes need only the L1 run's facts, none of another
    // feature's answers: side by side where the session allows it. None
    // writes to the target (the writes of `outside` come after).
    conv.side_by_side(&(init, facts), &Probe::ALL, |conv, (init, facts), probe| {
        Box::pin(async move {
            let mut run = L2Run { conv, init, facts };
            run.probe(probe).await
        })
    })
    .await?;
    Ok(advertised)
}

/// The probes of L2, one per feature (two for streaming), in the order
/// their findings are emitted.
#[derive(Debug, Clone, Copy)]
enum Probe {
    Rerank,
    MultiVector,
    SparseEmbed,
    Transform,
    Graph,
    StreamingProgress,
    StreamingBuffered,
    Pagination,
    Log,
    Deterministic,
    Snapshots,
}

impl Probe {
    const ALL: [Self; 11] = [
        Self::Rerank,
        Self::MultiVector,
        Self::SparseEmbed,
        Self::Transform,
        Self::Graph,
        Self::StreamingProgress,
        Self::StreamingBuffered,
        Self::Pagination,
        Self::Log,
        Self::Deterministic,
        Self::Snapshots,
    ];
}

struct L2Run<'r, 'c> {
    conv: &'r mut Conversation<'c>,
    init: &'r Init,
    facts: &'r L1Facts,
}

impl L2Run<'_, '_> {
    async fn probe(&mut self, probe: Probe) -> Result<(), EngineError> {
        match probe {
            Probe::Rerank => self.rerank().await,
            Probe::MultiVector => self.multi_vector().await,
            Probe::SparseEmbed => self.sparse_embed().await,
            Probe::Transform => self.transform().await,
            Probe::Graph => self.graph().await,
            Probe::StreamingProgress => self.streaming_progress().await,
            Probe::StreamingBuffered => self.streaming_buffered().await,
            Probe::Pagination => self.pagination().await,
            Probe::Log => self.log().await,
            Probe::Deterministic => self.deterministic().await,
            Probe::Snapshots => self.snapshots().await,
        }
    }

    /// The query probes use: words of a passage the server returned.
    fn query(&self) -> String {
        self.facts
            .query
            .clone()
            .unwrap_or_else(|| FALLBACK_QUERY.to_owned())
    }

    /// A passage text the server returned, if any.
    fn passage(&self) -> Option<String> {
        self.facts
            .retrieved
            .iter()
            .flat_map(|r| r.hits())
            .find_map(|h| {
                h.get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.trim().is_empty())
                    .map(str::to_owned)
            })
    }

    /// Skips `rule` when the target is gone or `cap` is not advertised.
    async fn gate(&mut self, rule: &'static Rule, cap: &str) -> Result<bool, EngineError> {
        if let Some(reason) = self.conv.gone() {
            self.conv.skip(rule, reason).await?;
            return Ok(false);
        }
        if !self.init.supports(cap) {
            let reason = format!("`{cap}` is not advertised (an optional L2 feature, spec §14.3)");
            self.conv.skip(rule, reason).await?;
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_in_order_and_each_belongs_to_one_feature() {
        for (n, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("RCP-L2-{:03}", n + 1));
            assert_eq!(rule.group, "L2");
            let owners = FEATURES
                .iter()
                .filter(|f| f.rules.iter().any(|r| r.id == rule.id))
                .count();
            assert_eq!(owners, 1, "{}", rule.id);
        }
    }
}
