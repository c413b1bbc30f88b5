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
)
.help(
    "When `pagination` is advertised, protocheck repeats an earlier `retrieve` that returned n ≥ \
     2 hits with `k` = min(4, n − 1) and follows `nextCursor` for up to 12 pages. No page may \
     exceed `k` or repeat an id, the first page must carry a cursor, cursors must end, and the \
     same request unpaged must return no hit missing from the pages.",
    "The server ignores `cursor` and returns the first page again, hands out a `nextCursor` on \
     every page including empty ones, loses a hit at each page boundary (an off-by-one offset), \
     or never sets `nextCursor` although more hits exist.",
    "Encode the position in an opaque `nextCursor` string, return it only while more hits remain, \
     and on a request with `cursor` return the next `k` hits of the same ranking, starting right \
     after the last one served.",
);
pub const DETERMINISTIC: Rule = item(
    "RCP-L2-010",
    "with `retrieve.deterministic`, the same request and `seed` give identical hits",
    SpecLevel::Must,
    "RCP/1 §14.3, §7.7.1",
)
.help(
    "When `retrieve.deterministic` is true, protocheck sends the same `retrieve` twice, with the \
     run's query, `k` = 5 and `seed` 20260728, and compares the two lists of hit ids and scores, \
     in order; they must be identical. The pair is sent in the default mode, in each advertised \
     mode, with each advertised fusion method, with the built-in rerank (`rerankBuiltin`) and with \
     `mmr` when advertised.",
    "The server advertises determinism but uses approximate search with random entry points, \
     parallel scoring whose floating-point sums vary, or an index that changes between calls, or \
     it accepts `seed` without passing it to what is random.",
    "Pass `seed` to every random component (search, sampling, tie-breaking), break score ties by \
     id, and serve both requests from the same index version; if results cannot be made \
     identical, stop advertising `retrieve.deterministic`.",
);
pub const SNAPSHOTS: Rule = item(
    "RCP-L2-011",
    "with `retrieve.snapshots`, a pinned `indexVersion` is served exactly, and one never issued fails (-32010, -32016 or -32015)",
    SpecLevel::Must,
    "RCP/1 §14.3, §7.7.1",
)
.help(
    "When `retrieve.snapshots` is true, protocheck sends `retrieve` with `k` = 3 and reads the \
     `indexVersion` it served, pins that version in a second request and expects the same \
     `indexVersion` back, then pins \"protocheck-probe/no-such-snapshot\" and expects error \
     -32015, -32010 or -32016.",
    "The result carries no `indexVersion`, the server ignores a pinned version and serves the \
     current index, or it serves an unknown version instead of failing (or refuses it with \
     another code, such as -32602).",
    "Return the snapshot's identifier as `indexVersion` in every result, serve a pinned \
     `indexVersion` from that snapshot exactly, and refuse one never issued with `{\"code\": \
     -32015}` (NotFound).",
);

/// Largest page size of the pagination probe; smaller when no result of the
/// run had more hits than that.
const PAGE_K: u64 = 4;
/// `k` of the probe that looks for enough hits to page through when the run
/// found none.
const BROAD_K: u64 = 10;
/// Most pages followed: enough to reach the end of a small corpus, bounded
/// for a server whose cursors never end.
const MAX_PAGES: usize = 12;
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

/// Whether a result answers a plain request (no filter, threshold or cursor),
/// so a smaller `k` of the same request pages through the same hits.
fn plain(r: &Retrieved) -> bool {
    ["filter", "minScore", "cursor"]
        .iter()
        .all(|k| r.params.get(*k).is_none())
}

/// What one paged pass found.
struct PagedPass {
    problems: Vec<String>,
    summary: String,
    pages: usize,
    ended: bool,
}

impl PagedPass {
    /// The first page ended the cursors: no later page was reached.
    fn single_page(&self) -> bool {
        self.pages == 1 && self.ended
    }
}

/// A `minScore` that keeps at least the two best of `scores` (best first)
/// and drops at least the lowest: the lowest score above the last one, when it
/// is not the best one.
fn floor_of(scores: &[f64]) -> Option<f64> {
    let last = *scores.last()?;
    let at = scores.iter().rposition(|s| *s > last)?;
    (at >= 1).then(|| scores[at])
}

/// The first position where a page holds a hit the unpaged ranking `hits`
/// places on another page (pages of `page_lens` hits, in order), unless its
/// score ties with the page's first or last place there. The unpaged hits are
/// ranked by score; the order within a result is RCP-L1-007's to judge.
fn order_break(paged: &[Value], page_lens: &[usize], hits: &[Value]) -> Option<usize> {
    // By score, best first: how the server displays one result's hits is
    // RCP-L1-007's concern, which page a hit belongs on is this rule's.
    let mut hits = hits.to_vec();
    let key = |h: &Value| h.get("score").and_then(Value::as_f64).unwrap_or(f64::MIN);
    hits.sort_by(|a, b| key(b).total_cmp(&key(a)));
    let hits = hits.as_slice();
    let score = |j: usize| {
        hits.get(j)
            .and_then(|h| h.get("score"))
            .and_then(Value::as_f64)
    };
    let mut start = 0;
    for len in page_lens {
        let end = start + len;
        for (i, id) in paged.iter().enumerate().take(end).skip(start) {
            let Some(j) = hits.iter().position(|h| h.get("id") == Some(id)) else {
                continue;
            };
            let tied =
                score(j).is_some() && (score(j) == score(start) || score(j) == score(end - 1));
            if !(start..end).contains(&j) && !tied && start < hits.len() {
                return Some(i);
            }
        }
        start = end;
    }
    None
}

fn ranking_entry(hits: &[Value], at: usize) -> Value {
    hits.get(at)
        .map(|h| json!({"id": h.get("id"), "score": h.get("score")}))
        .unwrap_or(Value::Null)
}

impl L2Run<'_, '_> {
    /// The plain result of the L1 run with the most hits, if it has two or
    /// more (so a page of fewer hits leaves a second page).
    fn several_hits(&self) -> Option<Retrieved> {
        self.facts
            .retrieved
            .iter()
            .filter(|r| plain(r) && r.hits().len() >= 2)
            .max_by_key(|r| r.hits().len().min(PAGE_K as usize + 1))
            .cloned()
    }

    /// RCP-L2-008. The request of a result with `n` ≥ 2 hits is repeated with
    /// `k` = min(4, n − 1), so a second page exists, and `nextCursor` is
    /// followed to its end. When the run has no such result, one broad
    /// `retrieve` (k = 10) looks for one; when even that finds fewer than two
    /// hits, `pagination` is "advertised, not exercised".
    ///
    /// Decision (amendment 11): a page reached through `nextCursor` may be
    /// empty. §10 says only that "A missing/empty `nextCursor` means no more
    /// results"; it never promises that a present one leads to a non-empty
    /// page. What is judged: no hit repeats across pages, no page exceeds `k`,
    /// and the cursors end (an empty page that hands out yet another cursor,
    /// or a cursor handed out twice, never ends).
    pub(super) async fn pagination(&mut self) -> Result<(), EngineError> {
        let rule = &PAGINATION;
        if !self.gate(rule, "pagination").await? {
            return Ok(());
        }
        let mut check = Check::new(rule);
        let base = match self.several_hits() {
            Some(base) => base,
            None => {
                let params = json!({"query": self.query(), "k": BROAD_K});
                let sent = self.conv.request(rule, "retrieve", params.clone()).await?;
                check.saw(&sent);
                match result_of(&sent).map(|r| (r, hit_essentials(r))) {
                    Some((result, Ok(hits))) if hits.len() >= 2 => Retrieved {
                        label: "a broad `retrieve`".to_owned(),
                        params,
                        result: result.clone(),
                        exchange: exchange_of(&sent).clone(),
                    },
                    _ => {
                        let finding = check.finding(
                            Outcome::Skip,
                            format!(
                                "advertised, not exercised: no `retrieve` of this run, nor a broad one with k = \
                                 {BROAD_K} ({}), returned two or more hits, so no second page is known to exist; a \
                                 corpus with at least two passages matching the query would exercise it",
                                outcome_words(&sent)
                            ),
                        );
                        return self.conv.emit(finding).await;
                    }
                }
            }
        };
        check.keep(base.exchange.clone());
        let page_k = (base.hits().len() as u64 - 1).clamp(1, PAGE_K);
        let mut params = base.params.clone();
        params["k"] = json!(page_k);
        let plain = self.page_through(&mut check, params, page_k, None).await?;
        let mut problems = plain.problems.clone();
        if plain.single_page() && problems.is_empty() {
            problems.push(format!(
                "with k = {page_k} the first page carried no `nextCursor`, though the same request with k = {} \
                 returned {} hits",
                base.k().unwrap_or_default(),
                base.hits().len()
            ));
        }
        // §10: "the client repeats the request with `cursor`": a later page is
        // the same request's result, so every option it carries holds on
        // every page. The request is paged again with a filter the run used,
        // and in each advertised mode with a `minScore` that cuts the ranking.
        let mut options = Vec::new();
        let mut unexercised = Vec::new();
        match self.filtered_base() {
            Some(filtered) => {
                let k = (filtered.hits().len() as u64 - 1).clamp(1, PAGE_K);
                let mut params = filtered.params.clone();
                params["k"] = json!(k);
                let label = format!("with the filter {}", show(&params["filter"]));
                let pass = self.page_through(&mut check, params, k, None).await?;
                options.push((label, pass));
            }
            None if self.init.supports("filter") => unexercised.push(
                "no filtered `retrieve` of the run returned two or more hits, so no filtered request was paged"
                    .to_owned(),
            ),
            None => {}
        }
        for mode in self
            .init
            .advertised_list("retrieve", "modes")
            .unwrap_or_default()
        {
            let probe = json!({"query": self.query(), "k": BROAD_K, "mode": mode});
            let sent = self.conv.request(rule, "retrieve", probe).await?;
            check.saw(&sent);
            let scores: Vec<f64> = match result_of(&sent).map(hit_essentials) {
                Some(Ok(hits)) => hits
                    .iter()
                    .filter_map(|h| h.get("score").and_then(Value::as_f64))
                    .collect(),
                _ => {
                    unexercised.push(format!(
                        "`retrieve` in mode `{mode}` with k = {BROAD_K} {}",
                        outcome_words(&sent)
                    ));
                    continue;
                }
            };
            // A floor that keeps at least two hits and drops the lowest.
            let floor = floor_of(&scores);
            let kept = floor.map_or(scores.len(), |f| scores.iter().filter(|s| **s >= f).count());
            if kept < 2 {
                unexercised.push(format!(
                    "`retrieve` in mode `{mode}` with k = {BROAD_K} returned {} hits, too few to page",
                    scores.len()
                ));
                continue;
            }
            let k = (kept as u64 - 1).clamp(1, PAGE_K);
            let mut params = json!({"query": self.query(), "k": k, "mode": mode});
            let label = match floor {
                Some(f) => {
                    params["minScore"] = json!(f);
                    format!("in mode `{mode}` with minScore {f}")
                }
                None => format!("in mode `{mode}`"),
            };
            let pass = self.page_through(&mut check, params, k, floor).await?;
            options.push((label, pass));
        }
        // §10 names `graph` `communities` among the list results.
        let communities = if self.init.supports("graph")
            && self
                .init
                .advertised_list("graph", "ops")
                .is_some_and(|ops| ops.iter().any(|o| o == "communities"))
        {
            let (found, words) = self.community_pages(&mut check).await?;
            problems.extend(
                found
                    .into_iter()
                    .map(|p| format!("`graph` `communities`: {p}")),
            );
            format!("; `graph` `communities`: {words}")
        } else {
            String::new()
        };
        for (label, pass) in &options {
            problems.extend(pass.problems.iter().map(|p| format!("paged {label}: {p}")));
            if pass.single_page() && pass.problems.is_empty() {
                unexercised.push(format!(
                    "paged {label}, the first page carried no `nextCursor` (the pages after it were not reached)"
                ));
            }
        }
        let mut summary = plain.summary;
        for (label, pass) in &options {
            summary.push_str(&format!("; paged {label}: {}", pass.summary));
        }
        summary.push_str(&communities);
        if !unexercised.is_empty() {
            summary.push_str(&format!("; not exercised: {}", unexercised.join("; ")));
        }
        let finding = check.verdict(
            &problems,
            summary,
            "with `pagination` advertised, a result with more hits than `k` carries `nextCursor`, repeating the \
             request with `cursor` returns the next page of the same request (its filter and options included) \
             without repeating or losing hits, and the cursors end (§10)",
        );
        self.conv.emit(finding).await
    }

    /// `graph {op: "communities"}` unpaged, then with `k: 1`: when that page
    /// carries `nextCursor`, it is followed to its end (no community twice,
    /// the cursors ending); when it holds one community of several and no
    /// cursor, more remain and none is offered. Returns the problems and
    /// what was seen.
    async fn community_pages(
        &mut self,
        check: &mut Check,
    ) -> Result<(Vec<String>, String), EngineError> {
        let rule = &PAGINATION;
        let community_ids = |sent: &crate::suite::rcp::conversation::Sent| {
            result_of(sent)
                .and_then(|r| r.get("communities"))
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .map(|x| x.get("id").cloned().unwrap_or(Value::Null))
                        .collect::<Vec<_>>()
                })
        };
        let sent = self
            .conv
            .request(rule, "graph", json!({"op": "communities"}))
            .await?;
        check.saw(&sent);
        let Some(all) = community_ids(&sent) else {
            return Ok((
                Vec::new(),
                format!(
                    "not exercised, the unpaged request {}",
                    outcome_words(&sent)
                ),
            ));
        };
        let mut problems = Vec::new();
        let mut seen: Vec<Value> = Vec::new();
        let mut cursors: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut params = json!({"op": "communities", "k": 1});
            if let Some(c) = &cursor {
                params["cursor"] = json!(c);
            }
            let sent = self.conv.request(rule, "graph", params).await?;
            check.saw(&sent);
            pages += 1;
            let Some(page) = community_ids(&sent) else {
                problems.push(format!("page {pages} {}", outcome_words(&sent)));
                break;
            };
            if pages == 1 && page.len() > 1 {
                return Ok((
                    problems,
                    format!(
                        "`k: 1` returned {} communities, so `k` does not bound them and no page was cut (not judged)",
                        page.len()
                    ),
                ));
            }
            if let Some(again) = page.iter().find(|id| seen.contains(id)) {
                problems.push(format!(
                    "page {pages} repeats the community {}",
                    show(again)
                ));
                break;
            }
            seen.extend(page.iter().cloned());
            match result_of(&sent).and_then(|r| r.get("nextCursor")) {
                Some(Value::String(c)) if !c.is_empty() => {
                    if cursors.contains(c) || page.is_empty() || pages >= MAX_PAGES {
                        problems.push(format!("the cursors do not end (page {pages})"));
                        break;
                    }
                    cursors.push(c.clone());
                    cursor = Some(c.clone());
                }
                _ => break,
            }
        }
        if problems.is_empty() && pages == 1 && all.len() > seen.len() {
            problems.push(format!(
                "`k: 1` returned {} community without `nextCursor`, though the unpaged request returned {}: more \
                 remain and no cursor was offered (§10)",
                seen.len(),
                all.len()
            ));
        }
        Ok((
            problems,
            format!(
                "{pages} page(s) of `k: 1`, {} distinct communities, against {} unpaged",
                seen.len(),
                all.len()
            ),
        ))
    }

    /// The filtered result of the run with the most hits, if it has two or
    /// more.
    fn filtered_base(&self) -> Option<Retrieved> {
        self.facts
            .retrieved
            .iter()
            .filter(|r| r.params.get("filter").is_some() && r.params.get("cursor").is_none())
            .filter(|r| r.hits().len() >= 2)
            .max_by_key(|r| r.hits().len().min(PAGE_K as usize + 1))
            .cloned()
    }

    /// Pages through `params` (whose `k` is `page_k`) by `nextCursor`, then
    /// compares the pages with the same request unpaged. With `floor` (the
    /// request's `minScore`), every paged hit must score at least that.
    async fn page_through(
        &mut self,
        check: &mut Check,
        params: Value,
        page_k: u64,
        floor: Option<f64>,
    ) -> Result<PagedPass, EngineError> {
        let rule = &PAGINATION;
        let mut problems = Vec::new();
        let mut seen: Vec<Value> = Vec::new();
        let mut page_lens: Vec<usize> = Vec::new();
        let mut floor_ignored = false;
        let mut floor_problems: Vec<String> = Vec::new();
        let mut cursors: Vec<String> = Vec::new();
        let mut pages = 0;
        let mut empty_pages = 0;
        let mut cursor: Option<String> = None;
        let mut ended = false;
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
            if hits.len() as u64 > page_k {
                problems.push(format!(
                    "page {pages} has {} hits for k = {page_k}",
                    hits.len()
                ));
            }
            if pages == 1 && hits.is_empty() {
                problems.push(format!(
                    "the first page is empty, though the same request with a larger k returned hits (k = {page_k})"
                ));
            }
            if hits.is_empty() {
                empty_pages += 1;
            }
            if let Some(floor) = floor {
                let below: Vec<Value> = hits
                    .iter()
                    .filter(|h| {
                        h.get("score")
                            .and_then(Value::as_f64)
                            .is_some_and(|s| s < floor)
                    })
                    .map(|h| json!({"id": h.get("id"), "score": h.get("score")}))
                    .collect();
                // A floor the first page ignores too is RCP-L1-009's fault;
                // this rule judges that later pages keep what the first kept.
                if pages == 1 && !below.is_empty() {
                    floor_ignored = true;
                }
                if !below.is_empty() && !floor_ignored {
                    floor_problems.push(format!(
                        "page {pages} holds hits scored below the request's minScore {floor}: {}",
                        show(&json!(below))
                    ));
                }
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
            page_lens.push(hits.len());
            match result.get("nextCursor") {
                None | Some(Value::Null) => {
                    ended = true;
                    break;
                }
                Some(Value::String(c)) if c.is_empty() => {
                    ended = true;
                    break;
                }
                Some(Value::String(c)) if cursors.contains(c) => {
                    problems.push(format!(
                        "page {pages} hands out a `nextCursor` already handed out, so the cursors never end"
                    ));
                    break;
                }
                Some(Value::String(_)) if hits.is_empty() => {
                    problems.push(format!(
                        "page {pages} is empty yet hands out another `nextCursor`, so the cursors need not end"
                    ));
                    break;
                }
                Some(Value::String(c)) => {
                    cursors.push(c.clone());
                    cursor = Some(c.clone());
                }
                Some(other) => {
                    problems.push(format!(
                        "`nextCursor` is {}, not an opaque string",
                        show(other)
                    ));
                    break;
                }
            }
        }
        // The pages against the unpaged result (issue #26: a server that
        // loses a hit at each page boundary repeats nothing, yet is wrong).
        // §10: the client "repeats the request with `cursor`", so the pages
        // together are the result of the request, page after page. One
        // request with k = (hits paged + k) gets the unpaged ranking, capped
        // at an advertised `maxK` (§7.7 clamps to it). Every hit it returns
        // must be among the pages (only those within the pages' length when
        // the cursors did not end); when it returned fewer than its k, it is
        // the whole result, and every paged hit must be in it too. Ids are
        // compared as sets, and the order of the pages against the unpaged
        // ranking only where their scores differ: where scores tie, their
        // order between two calls is not judged.
        let compared = if problems.is_empty() && !(pages == 1 && ended) {
            let max_k = self
                .init
                .capability("retrieve")
                .and_then(|r| r.get("maxK"))
                .and_then(Value::as_u64);
            let full_k = (seen.len() as u64 + page_k)
                .min(max_k.unwrap_or(u64::MAX))
                .max(1);
            let mut full_params = params.clone();
            full_params["k"] = json!(full_k);
            let sent = self.conv.request(rule, "retrieve", full_params).await?;
            check.saw(&sent);
            match result_of(&sent).map(hit_essentials) {
                Some(Ok(hits)) => {
                    // The same request unpaged ignores the floor too: that is
                    // RCP-L1-009's fault, not the pages'.
                    if let Some(f) = floor
                        && hits.iter().any(|h| {
                            h.get("score")
                                .and_then(Value::as_f64)
                                .is_some_and(|x| x < f)
                        })
                    {
                        floor_ignored = true;
                    }
                    let unpaged = ids(hits);
                    let complete = (unpaged.len() as u64) < full_k;
                    let judged = if ended {
                        unpaged.len()
                    } else {
                        unpaged.len().min(seen.len())
                    };
                    let lost: Vec<Value> = unpaged[..judged]
                        .iter()
                        .filter(|id| !seen.contains(id))
                        .cloned()
                        .collect();
                    if !lost.is_empty() {
                        problems.push(format!(
                            "the unpaged request (k = {full_k}) returned {} hits, and {} of them never came on a page: \
                             {}",
                            unpaged.len(),
                            lost.len(),
                            show(&json!(lost))
                        ));
                    }
                    let extra: Vec<Value> = if complete && ended {
                        seen.iter()
                            .filter(|id| !unpaged.contains(id))
                            .cloned()
                            .collect()
                    } else {
                        Vec::new()
                    };
                    if !extra.is_empty() {
                        problems.push(format!(
                            "the pages carried hits the whole unpaged result (k = {full_k}, {} hits) does not have: {}",
                            unpaged.len(),
                            show(&json!(extra))
                        ));
                    }
                    if lost.is_empty()
                        && extra.is_empty()
                        && let Some(at) = order_break(&seen, &page_lens, hits)
                    {
                        problems.push(format!(
                            "hit {} of the pages is {}, which the unpaged ranking (k = {full_k}) places on another \
                             page (it has {} there): the pages do not continue the same ranking",
                            at + 1,
                            show(&seen[at]),
                            show(&ranking_entry(hits, at))
                        ));
                    }
                    if complete && ended {
                        format!(
                            "; together they hold exactly the {} hits of the same request unpaged (k = {full_k}, the \
                             whole result), compared as sets of ids, page by page",
                            unpaged.len()
                        )
                    } else {
                        format!(
                            "; the same request unpaged (k = {full_k}{}) returned {} hits, each of them {}on a page \
                             (compared as sets of ids, page by page; whether more hits exist beyond them was \
                             not judged)",
                            if max_k == Some(full_k) {
                                ", the advertised maxK"
                            } else {
                                ""
                            },
                            unpaged.len(),
                            if ended {
                                ""
                            } else {
                                "within the pages' length "
                            }
                        )
                    }
                }
                Some(Err(problem)) => {
                    problems.push(format!("the unpaged request (k = {full_k}): {problem}"));
                    String::new()
                }
                None => {
                    problems.push(format!(
                        "the unpaged request (k = {full_k}) {}",
                        outcome_words(&sent)
                    ));
                    String::new()
                }
            }
        } else {
            String::new()
        };
        if !floor_ignored {
            problems.extend(floor_problems);
        }
        let end = if ended {
            let empty = if empty_pages > 0 {
                " (the last page was empty, which §10 allows)"
            } else {
                ""
            };
            format!("the cursors ended after {pages} pages{empty}")
        } else {
            format!(
                "the cursors had not ended after {pages} pages, where protocheck stops following them"
            )
        };
        let floor_words = match floor {
            Some(f) if floor_ignored => format!(
                ", minScore {f} not judged (the first page or the unpaged result held hits below it too, \
                 RCP-L1-009's concern)"
            ),
            Some(f) => format!(", every hit scored at least {f}"),
            None => String::new(),
        };
        Ok(PagedPass {
            summary: format!(
                "{pages} pages of k = {page_k} followed by `nextCursor`, {} distinct hits, none repeated{floor_words}; \
                 {end}{compared}",
                seen.len()
            ),
            problems,
            pages,
            ended,
        })
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
        let mut problems = Vec::new();
        let mut labels = Vec::new();
        // A request that fails is the rule of its option's concern (an
        // advertised mode that errs is RCP-L1-001's): this rule compares
        // results, so the pair is left unjudged and the finding says so.
        let mut unjudged = Vec::new();
        for (label, params) in self.deterministic_variants() {
            let mut rankings = Vec::new();
            for _ in 0..2 {
                let sent = self.conv.request(rule, "retrieve", params.clone()).await?;
                check.saw(&sent);
                match result_of(&sent) {
                    Some(result) => rankings.push(ranking(result)),
                    None => {
                        unjudged.push(format!("`retrieve` {label} {}", outcome_words(&sent)));
                        break;
                    }
                }
            }
            if let [a, b] = rankings.as_slice() {
                if a != b {
                    problems.push(format!(
                        "the same request {label} with seed {SEED} gave two different rankings: {} then {}",
                        show(&json!(a)),
                        show(&json!(b))
                    ));
                }
                labels.push(label);
            }
        }
        if labels.is_empty() {
            let finding = check.finding(
                Outcome::Skip,
                format!(
                    "not verified: no request with seed {SEED} was answered with a result ({}), so no two results \
                     could be compared",
                    unjudged.join("; ")
                ),
            );
            return self.conv.emit(finding).await;
        }
        if !unjudged.is_empty() {
            labels.push(format!("not judged: {}", unjudged.join("; ")));
        }
        let finding = check.verdict(
            &problems,
            format!(
                "two identical requests with seed {SEED} returned identical hits and scores, {}",
                labels.join(", ")
            ),
            "a server that honours `seed` MUST return identical results for identical (query, params, seed, \
             indexVersion), whatever the params (§7.7.1)",
        );
        self.conv.emit(finding).await
    }

    /// The requests the determinism probe repeats: the default one, one per
    /// advertised mode and fusion method, and one with the built-in rerank
    /// and one with `mmr` when advertised, where the stochastic steps live.
    fn deterministic_variants(&self) -> Vec<(String, Value)> {
        let base = json!({"query": self.query(), "k": 5, "seed": SEED});
        let with = |key: &str, value: Value| {
            let mut params = base.clone();
            params[key] = value;
            params
        };
        let mut variants = vec![("in the default mode".to_owned(), base.clone())];
        let modes = self
            .init
            .advertised_list("retrieve", "modes")
            .unwrap_or_default();
        for mode in &modes {
            variants.push((format!("in mode `{mode}`"), with("mode", json!(mode))));
        }
        for method in self
            .init
            .advertised_list("retrieve", "fusion")
            .unwrap_or_default()
        {
            let mut params = with("fusion", json!({"method": method}));
            if modes.iter().any(|m| m == "hybrid") {
                params["mode"] = json!("hybrid");
            }
            variants.push((format!("with `fusion.method: \"{method}\"`"), params));
        }
        let offered = |field: &str| {
            self.init
                .capability("retrieve")
                .and_then(|r| r.get(field))
                .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
        };
        if offered("rerankBuiltin") {
            variants.push((
                "with the built-in `rerank: {}`".to_owned(),
                with("rerank", json!({})),
            ));
        }
        if offered("mmr") {
            variants.push((
                "with `mmr: {lambda: 0.5}`".to_owned(),
                with("mmr", json!({"lambda": 0.5})),
            ));
        }
        variants
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
        // Decision (amendment 11): the spec contradicts itself on a snapshot
        // that is gone. §7.7.1: the server "MUST either serve that snapshot or
        // fail with `-32010` (`BackendUnavailable`) if it has been
        // garbage-collected"; §12's table: `-32016` `Conflict` covers "a pinned
        // `indexVersion` no longer available". Both readings are accepted.
        // Decision (issue #26): the probe cannot retire a snapshot, so it pins
        // one the server never issued. For that, §12's `-32015` `NotFound` ("A
        // referenced entity does not exist") is the plain reading, and a server
        // cannot tell an invented version from a collected one, so the other
        // two stay accepted. The finding says which code the server used.
        let unknown = json!({"query": query, "k": 3, "indexVersion": UNKNOWN_SNAPSHOT});
        let sent = self.conv.request(rule, "retrieve", unknown).await?;
        check.saw(&sent);
        let code = code_of(&sent).filter(|c| [-32010, -32016, -32015].contains(c));
        if code.is_none() {
            problems.push(format!(
                "`retrieve` pinned to \"{UNKNOWN_SNAPSHOT}\", a snapshot it never issued, {}; it must fail (-32015 \
                 NotFound per §12, or, read as a snapshot gone, -32010 per §7.7.1 or -32016 per §12's table), never \
                 silently serve another snapshot",
                outcome_words(&sent)
            ));
        }
        let used = match code {
            Some(-32015) => {
                "-32015 (NotFound, §12: \"A referenced entity does not exist\")".to_owned()
            }
            Some(-32016) => "-32016 (Conflict, §12's table: a pinned `indexVersion` \"no longer available\"; \
                             §7.7.1 says -32010 for that case, and the spec contradicts itself, so either passes)"
                .to_owned(),
            _ => "-32010 (BackendUnavailable, §7.7.1: a snapshot garbage-collected; §12's table says -32016 for \
                  that case, and the spec contradicts itself, so either passes)"
                .to_owned(),
        };
        let finding = check.verdict(
            &problems,
            format!(
                "the served snapshot {} could be pinned, and \"{UNKNOWN_SNAPSHOT}\", a snapshot it never issued, got \
                 {used}; a snapshot the server really retired was not probed (protocheck cannot retire one)",
                served.as_ref().map(show).unwrap_or_default()
            ),
            "a pinned `indexVersion` is served exactly, or fails (-32015 for one never issued, §12; -32010 per \
             §7.7.1 or -32016 per §12 for one gone), never served from another snapshot",
        );
        self.conv.emit(finding).await
    }
}
