//! Result sets a client can rely on: pages that follow each other (spec §10
//! pagination) and results that can be reproduced (§7.7.1: `seed` with
//! `retrieve.deterministic`, pinned `indexVersion` with `retrieve.snapshots`).

use super::*;
use crate::suite::rcp::l1::Retrieved;

pub const PAGINATION: Rule = item(
    "RCP-L2-008",
    "`retrieve` pages with `nextCursor`, and each page continues without repeating hits",
    SpecLevel::Should,
    "RCP/1 §14.3, §10",
);
pub const DETERMINISTIC: Rule = item(
    "RCP-L2-010",
    "with `retrieve.deterministic`, the same request and `seed` give identical hits",
    SpecLevel::Must,
    "RCP/1 §14.3, §7.7.1",
);
pub const SNAPSHOTS: Rule = item(
    "RCP-L2-011",
    "with `retrieve.snapshots`, a pinned `indexVersion` is served exactly, and an unknown one is -32010",
    SpecLevel::Must,
    "RCP/1 §14.3, §7.7.1",
);

/// Page size of the pagination probe; a result of more hits proves there is
/// more than one page.
const PAGE_K: u64 = 4;
/// Most pages followed: enough to see pages continue, bounded for a server
/// whose cursors never end.
const MAX_PAGES: usize = 6;
const SEED: u64 = 20_260_728;
/// A snapshot id no server has.
const UNKNOWN_SNAPSHOT: &str = "protocheck-probe/no-such-snapshot";

fn ids(hits: &[Value]) -> Vec<Value> {
    hits.iter().filter_map(|h| h.get("id").cloned()).collect()
}

/// What a comparison of two results looks at: ids, order and scores.
fn ranking(result: &Value) -> Vec<(Value, Value)> {
    result
        .get("hits")
        .and_then(Value::as_array)
        .map(|hits| {
            hits.iter()
                .map(|h| {
                    (
                        h.get("id").cloned().unwrap_or(Value::Null),
                        h.get("score").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

impl L2Run<'_, '_> {
    /// A result of the L1 run with more hits than one page holds.
    fn several_hits(&self) -> Option<&Retrieved> {
        self.facts.retrieved.iter().find(|r| {
            r.hits().len() as u64 > PAGE_K
                && r.params.get("filter").is_none()
                && r.params.get("minScore").is_none()
        })
    }

    pub(super) async fn pagination(&mut self) -> Result<(), EngineError> {
        let rule = &PAGINATION;
        if !self.gate(rule, "pagination").await? {
            return Ok(());
        }
        let Some(base) = self.several_hits().cloned() else {
            return self
                .conv
                .skip(
                    rule,
                    format!("not verified: no `retrieve` of this run returned more than {PAGE_K} hits, so no second page is known to exist"),
                )
                .await;
        };
        let mut check = Check::new(rule);
        check.keep(base.exchange.clone());
        let mut params = base.params.clone();
        params["k"] = json!(PAGE_K);
        let mut problems = Vec::new();
        let mut seen: Vec<Value> = Vec::new();
        let mut pages = 0;
        let mut cursor: Option<String> = None;
        while pages < MAX_PAGES {
            let mut page_params = params.clone();
            if let Some(c) = &cursor {
                page_params["cursor"] = json!(c);
            }
            let sent = self.conv.request(rule, "retrieve", page_params).await?;
            check.saw(&sent);
            pages += 1;
            let Some(result) = result_of(&sent) else {
                problems.push(format!("page {pages} {}", outcome_words(&sent)));
                break;
            };
            let hits = match hit_essentials(result) {
                Ok(hits) => hits,
                Err(problem) => {
                    problems.push(format!("page {pages}: {problem}"));
                    break;
                }
            };
            if hits.len() as u64 > PAGE_K {
                problems.push(format!(
                    "page {pages} has {} hits for k = {PAGE_K}",
                    hits.len()
                ));
            }
            if pages > 1 && hits.is_empty() {
                problems.push(format!(
                    "page {pages}, reached with a `nextCursor`, is empty"
                ));
            }
            let repeated: Vec<Value> = ids(hits)
                .into_iter()
                .filter(|id| seen.contains(id))
                .collect();
            if !repeated.is_empty() {
                problems.push(format!(
                    "page {pages} repeats hits of earlier pages: {}",
                    show(&json!(repeated))
                ));
                break;
            }
            seen.extend(ids(hits));
            match result.get("nextCursor") {
                None | Some(Value::Null) => break,
                Some(Value::String(c)) if c.is_empty() => break,
                Some(Value::String(c)) => cursor = Some(c.clone()),
                Some(other) => {
                    problems.push(format!(
                        "`nextCursor` is {}, not an opaque string",
                        show(other)
                    ));
                    break;
                }
            }
        }
        if pages == 1 && problems.is_empty() {
            problems.push(format!(
                "with k = {PAGE_K} the first page carried no `nextCursor`, though the same request with k = {} \
                 returned {} hits",
                base.k().unwrap_or_default(),
                base.hits().len()
            ));
        }
        let finding = check.verdict(
            &problems,
            format!("{pages} pages of k = {PAGE_K} followed by `nextCursor`, {} distinct hits, none repeated", seen.len()),
            "with `pagination` advertised, a result with more hits than `k` carries `nextCursor`, and repeating the \
             request with `cursor` returns the next page (§10)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn deterministic(&mut self) -> Result<(), EngineError> {
        let rule = &DETERMINISTIC;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        if !self.init.flag("retrieve", "deterministic") {
            return self
                .conv
                .skip(rule, "`retrieve.deterministic` is not advertised (optional L2 reproducibility, spec §14.3)")
                .await;
        }
        let mut check = Check::new(rule);
        let params = json!({"query": self.query(), "k": 5, "seed": SEED});
        let mut rankings = Vec::new();
        let mut problems = Vec::new();
        for _ in 0..2 {
            let sent = self.conv.request(rule, "retrieve", params.clone()).await?;
            check.saw(&sent);
            match result_of(&sent) {
                Some(result) => rankings.push(ranking(result)),
                None => problems.push(format!(
                    "`retrieve` with seed {SEED} {}",
                    outcome_words(&sent)
                )),
            }
        }
        if let [a, b] = rankings.as_slice()
            && a != b
        {
            problems.push(format!(
                "the same request with seed {SEED} gave two different rankings: {} then {}",
                show(&json!(a)),
                show(&json!(b))
            ));
        }
        let finding = check.verdict(
            &problems,
            format!("two identical requests with seed {SEED} returned identical hits and scores"),
            "a server that honours `seed` MUST return identical results for identical (query, params, seed, \
             indexVersion) (§7.7.1)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn snapshots(&mut self) -> Result<(), EngineError> {
        let rule = &SNAPSHOTS;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        if !self.init.flag("retrieve", "snapshots") {
            return self
                .conv
                .skip(rule, "`retrieve.snapshots` is not advertised (optional L2 reproducibility, spec §14.3)")
                .await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        let sent = self
            .conv
            .request(rule, "retrieve", json!({"query": query, "k": 3}))
            .await?;
        check.saw(&sent);
        let served = result_of(&sent)
            .and_then(|r| r.get("indexVersion"))
            .cloned();
        match served.as_ref().and_then(Value::as_str) {
            None => problems.push(format!(
                "`retrieve` {} without an `indexVersion` string; a server with snapshots echoes the snapshot served",
                outcome_words(&sent)
            )),
            Some(version) => {
                let pinned = json!({"query": query, "k": 3, "indexVersion": version});
                let sent = self.conv.request(rule, "retrieve", pinned).await?;
                check.saw(&sent);
                match result_of(&sent) {
                    None => problems.push(format!(
                        "`retrieve` pinned to the snapshot it had just served ({version}) {}",
                        outcome_words(&sent)
                    )),
                    Some(result) if result.get("indexVersion").and_then(Value::as_str) != Some(version) => {
                        problems.push(format!(
                            "`retrieve` pinned to {version} served {}",
                            show(result.get("indexVersion").unwrap_or(&Value::Null))
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
        let unknown = json!({"query": query, "k": 3, "indexVersion": UNKNOWN_SNAPSHOT});
        let sent = self.conv.request(rule, "retrieve", unknown).await?;
        check.saw(&sent);
        if code_of(&sent) != Some(-32010) {
            problems.push(format!(
                "`retrieve` pinned to the unknown snapshot \"{UNKNOWN_SNAPSHOT}\" {}; it must fail with -32010, never \
                 silently serve another snapshot",
                outcome_words(&sent)
            ));
        }
        let finding = check.verdict(
            &problems,
            format!(
                "the served snapshot {} could be pinned, and an unknown one got -32010",
                served.as_ref().map(show).unwrap_or_default()
            ),
            "a pinned `indexVersion` is served exactly or fails with -32010 (§7.7.1)",
        );
        self.conv.emit(finding).await
    }
}
