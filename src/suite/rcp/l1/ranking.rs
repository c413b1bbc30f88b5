//! Ranking (spec §14.2, §7.7, §4.6): scores filled consistently (numeric,
//! higher is more relevant, so a result is in descending order), `k` never
//! exceeded and clamped to `maxK`, `minScore` honoured.

use super::*;

pub const SCORES_CONSISTENT: Rule = item(
    "RCP-L1-007",
    "every hit has a numeric score, and hits are in descending score order",
    SpecLevel::Should,
    "RCP/1 §14.2, §4.6 (scores), §7.7",
)
.help(
    "Judged last, over every `retrieve` result of the L1 run that returned hits (the opening \
     query and the mode, filter, `k` and `minScore` probes): every hit's `score` must be a \
     number, and scores must not increase down the list.",
    "Hits are sorted by something other than `score` (document order, a reranker whose score is \
     not returned, fusion rank while `score` holds a sub-score), or scores are sent as strings or \
     null. A distance returned as `score`, where lower is better, also puts the list in ascending \
     order.",
    "Return hits best first, with `score` a number where higher means more relevant: turn a \
     distance into a similarity, and when fusing or reranking put the final score in `score` and \
     sort by it.",
);
pub const K_HONOURED: Rule = item(
    "RCP-L1-008",
    "`retrieve` returns `k` hits (fewer only when the corpus yields fewer), and clamps `k`, `candidateK` and `rerank.topN`",
    SpecLevel::Must,
    "RCP/1 §14.2, §7.7 (stage-count invariant), §3.3, §12",
)
.help(
    "protocheck sends `retrieve` with a large `k` (`maxK` when advertised, at most 100) to learn how many \
     hits N its query yields, then the same query with `k` = 1 and 3, with `k` = 3 and `candidateK` = 3, \
     with a `candidateK` above `maxK` (or the large `k`), with `rerank.topN` when built-in rerank is \
     advertised (above `rerank.maxCandidates` when that is), and with `k` = `maxK` + 1000: each must \
     return exactly min(k, N) hits, a value above a limit clamped, not refused. Every other `retrieve` of \
     the L1 run is held to at most its own `k`.",
    "The server returns a fixed page size, counts documents while returning several chunks each, \
     applies `k` before a stage that drops hits, loses one hit when clamping, or refuses a `k` or \
     `candidateK` above `maxK` (with -32602, for example) instead of clamping it.",
    "Truncate the final list to `k` after every stage (fusion, reranking, expansion) and return `k` hits \
     whenever the corpus has them; clamp `k`, `candidateK` and `rerank.topN` to the advertised `maxK` and \
     `rerank.maxCandidates` rather than refuse them.",
);
pub const MIN_SCORE: Rule = item(
    "RCP-L1-009",
    "`retrieve` honours `minScore`",
    SpecLevel::Should,
    "RCP/1 §14.2, §7.7",
)
.help(
    "From the `retrieve` result of the run with the most hits, protocheck repeats its request \
     twice: with `minScore` above the best score seen, where no hit may come back, and with \
     `minScore` equal to the middle hit's score, where every hit must score at least that and at \
     least one must come back.",
    "The server ignores `minScore`, or compares it with a different number than the `score` it \
     returns (a raw distance, or a score before normalization or fusion), so the floor cuts in \
     the wrong place or not at all.",
    "Apply `minScore` as a floor on the very `score` values returned in the hits, after fusion \
     and reranking, keeping the hits whose score is greater than or equal to it.",
);

/// The largest `k` protocheck asks for to learn how many hits the corpus
/// yields for its query (`retrieve.maxK` when that is smaller).
const LARGE_K: u64 = 100;

/// §15.5: "Servers **MUST** enforce `maxK` / `maxCandidates` / `batchLimit`
/// and **SHOULD** cap … `candidateK`, returning `-32602` or shedding load
/// with `-32011`". Against §7.7's "clamp each value", that is a second
/// careful reading for a `candidateK` (and a `rerank.topN`) above a limit,
/// so either refusal passes there; `k` itself has §12's explicit "not an
/// error at all".
const CAPPED: [i64; 2] = [-32602, -32011];

/// How far above the best score the "nothing passes" `minScore` is set.
const ABOVE_BEST: f64 = 1.0;

fn scores(hits: &[Value]) -> Vec<f64> {
    hits.iter()
        .filter_map(|h| h.get("score").and_then(Value::as_f64))
        .collect()
}

impl L1Run<'_, '_> {
    /// Judged over every `retrieve` result of the L1 run.
    pub(super) async fn scores(&mut self) -> Result<(), EngineError> {
        let rule = &SCORES_CONSISTENT;
        let mut check = Check::new(rule);
        let judged: Vec<&Retrieved> = self
            .facts
            .retrieved
            .iter()
            .filter(|r| !r.hits().is_empty())
            .collect();
        if judged.is_empty() {
            let reason = self.conv.gone().unwrap_or_else(|| {
                "not verified: no `retrieve` of this run returned a hit".to_owned()
            });
            return self.conv.skip(rule, reason).await;
        }
        let mut problems = Vec::new();
        let mut hits_seen = 0;
        for r in &judged {
            hits_seen += r.hits().len();
            let non_numeric: Vec<String> = r
                .hits()
                .iter()
                .filter(|h| !h.get("score").is_some_and(Value::is_number))
                .map(|h| show(h.get("score").unwrap_or(&Value::Null)))
                .collect();
            let s = scores(r.hits());
            let out_of_order = s.windows(2).position(|w| w[0] < w[1]);
            if non_numeric.is_empty() && out_of_order.is_none() {
                continue;
            }
            check.keep(r.exchange.clone());
            if !non_numeric.is_empty() {
                problems.push(format!(
                    "{} returned scores that are not numbers: {}",
                    r.label,
                    non_numeric.join(", ")
                ));
            }
            if let Some(i) = out_of_order {
                problems.push(format!(
                    "{} ranked a hit scored {} above one scored {} (scores in order: {})",
                    r.label,
                    s[i],
                    s[i + 1],
                    show(&json!(s))
                ));
            }
        }
        let finding = check.verdict(
            &problems,
            format!("{hits_seen} hits over {} results carry numeric scores in descending order", judged.len()),
            "`Hit.score` is a number and higher is more relevant, so a ranked result comes best first (§4.6, §7.7, §14.2)",
        );
        self.conv.emit(finding).await
    }

    /// §7.7 (stage-count invariant): "The three result-size knobs form a
    /// funnel and **MUST** satisfy `candidateK ≥ rerank.topN ≥ k` … A server
    /// **MUST** clamp each value to `retrieve.maxK` / `rerank.maxCandidates`
    /// … it **MUST NOT** return more than `k` hits (fewer is allowed when the
    /// corpus or `minScore` yields fewer)"; §12: "A value that is well-formed
    /// but larger than an advertised limit (`k > maxK`) is not an error at
    /// all: the server **MUST** clamp it"; §14.2: "honour `k`/`minScore`".
    ///
    /// So `k` is the result count, not only a ceiling: fewer hits only when
    /// the corpus (or `minScore`, never sent here) yields fewer. protocheck
    /// first asks for a large `k` (`maxK` when advertised, at most
    /// [`LARGE_K`]) to learn how many hits the corpus yields for its query,
    /// N; every other probe of the same query is then held to exactly
    /// min(k, N), so a correct server with a small corpus cannot fail. The
    /// probes: `k` 1 and 3; `k` 3 with `candidateK` = 3 (the funnel's
    /// equality) and with a `candidateK` above `maxK` (clamped) or, without
    /// `maxK`, the large `k`; with built-in rerank (`retrieve.rerankBuiltin`)
    /// `rerank.topN` at the funnel's equality or above
    /// `rerank.maxCandidates`; and `k` = `maxK` + 1000, which must come back
    /// clamped, with exactly min(`maxK`, N) hits. For `k`, §4.7's SHOULD
    /// ("reject requests that exceed them with `-32602`") yields to §12's
    /// "not an error at all", so a refusal fails; for `candidateK` and
    /// `rerank.topN` above a limit §15.5 also allows one (see [`CAPPED`]).
    pub(super) async fn k_honoured(&mut self) -> Result<(), EngineError> {
        let rule = &K_HONOURED;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        let max_k = self
            .init
            .capability("retrieve")
            .and_then(|r| r.get("maxK"))
            .and_then(Value::as_u64)
            .filter(|m| *m >= 1);
        let big = max_k.map_or(LARGE_K, |m| m.min(LARGE_K));
        let sent = self
            .retrieve(
                rule,
                &format!("`retrieve` with k = {big}"),
                json!({"query": query, "k": big}),
            )
            .await?;
        check.saw(&sent);
        let n = match result_of(&sent).map(hit_essentials) {
            Some(Ok(hits)) if hits.len() as u64 <= big => hits.len() as u64,
            Some(Ok(hits)) => {
                problems.push(format!(
                    "`retrieve` with k = {big} returned {} hits",
                    hits.len()
                ));
                big
            }
            Some(Err(problem)) => {
                problems.push(format!("`retrieve` with k = {big}: {problem}"));
                0
            }
            None => {
                problems.push(format!(
                    "`retrieve` with k = {big} {}",
                    outcome_words(&sent)
                ));
                0
            }
        };
        if n == 0 && problems.is_empty() {
            return self
                .conv
                .skip(
                    rule,
                    format!(
                        "not verified: `retrieve` of \"{query}\" with k = {big} returned no hit, so whether a `k` is \
                         honoured cannot be seen; a query that finds passages is needed"
                    ),
                )
                .await;
        }
        // What a request of the same query with `k` must return: exactly
        // min(k, N), unless N is the large `k` itself (the corpus may hold
        // more) and `k` is above it, where only a range is known.
        let expected = |k: u64| -> (u64, u64) {
            if k <= n || n < big || max_k == Some(big) {
                (k.min(n), k.min(n))
            } else {
                (n, k.min(max_k.unwrap_or(k)))
            }
        };
        // A label, the params, `k`, what a refusal breaks, and whether §15.5's
        // reading lets the server refuse it instead.
        let mut probes: Vec<(String, Value, u64, &str, bool)> = Vec::new();
        for k in [1_u64, 3] {
            probes.push((
                format!("`retrieve` with k = {k}"),
                json!({"query": query, "k": k}),
                k,
                "",
                false,
            ));
        }
        probes.push((
            "`retrieve` with k = 3 and candidateK = 3".to_owned(),
            json!({"query": query, "k": 3, "candidateK": 3}),
            3,
            "",
            false,
        ));
        let candidates = max_k.map_or(big, |m| m.saturating_add(1000));
        probes.push((
            format!("`retrieve` with k = 3 and candidateK = {candidates}"),
            json!({"query": query, "k": 3, "candidateK": candidates}),
            3,
            "",
            true,
        ));
        let rerank = self.init.flag("retrieve", "rerankBuiltin");
        let max_candidates = self
            .init
            .capability("rerank")
            .and_then(|r| r.get("maxCandidates"))
            .and_then(Value::as_u64)
            .filter(|m| *m >= 1);
        if rerank {
            let mut object = json!({});
            if let Some(m) = self
                .init
                .advertised_list("rerank", "methods")
                .and_then(|l| l.into_iter().next())
            {
                object["method"] = json!(m);
            }
            let (top_n, cand) = match max_candidates {
                Some(mc) => {
                    let over = mc.max(max_k.unwrap_or(0)).saturating_add(1000);
                    (over, over)
                }
                None => (3, 3),
            };
            object["topN"] = json!(top_n);
            probes.push((
                format!("`retrieve` with k = 3, candidateK = {cand} and rerank.topN = {top_n}"),
                json!({"query": query, "k": 3, "candidateK": cand, "rerank": object}),
                3,
                "",
                max_candidates.is_some(),
            ));
        }
        if let Some(max_k) = max_k {
            let k = max_k.saturating_add(1000);
            probes.push((
                format!("`retrieve` with k = {k}, above maxK {max_k}"),
                json!({"query": query, "k": k}),
                k,
                "; a k above maxK MUST be clamped, not refused (§12: \"not an error at all\")",
                false,
            ));
        }
        let answers = self
            .retrieve_all(
                rule,
                probes
                    .iter()
                    .map(|(label, params, ..)| (label.clone(), params.clone()))
                    .collect(),
            )
            .await?;
        let mut exact = Vec::new();
        for ((label, _, k, refused, refusable), sent) in probes.iter().zip(&answers) {
            check.saw(sent);
            let (lo, hi) = expected(*k);
            if *refusable && code_of(sent).is_some_and(|c| CAPPED.contains(&c)) {
                exact.push(format!(
                    "{label}: {} (§15.5 lets a server cap `candidateK` with -32602 or -32011)",
                    outcome_words(sent)
                ));
                continue;
            }
            match result_of(sent).map(hit_essentials) {
                Some(Ok(hits)) if (lo..=hi).contains(&(hits.len() as u64)) => {
                    exact.push(format!("{label}: {}", hits.len()));
                }
                Some(Ok(hits)) => {
                    let want = if lo == hi {
                        format!("exactly {lo}")
                    } else {
                        format!("between {lo} and {hi}")
                    };
                    problems.push(format!(
                        "{label} returned {} hits where {want} were due: the same query with k = {big} returned {n}, \
                         so the corpus yields them, and no `minScore` or filter was sent",
                        hits.len()
                    ));
                }
                Some(Err(problem)) => problems.push(format!("{label}: {problem}")),
                None => problems.push(format!("{label} {}{refused}", outcome_words(sent))),
            }
        }
        // Every other result of the run is held to its own `k` too.
        for r in &self.facts.retrieved {
            if let Some(k) = r.k()
                && r.hits().len() as u64 > k
                && !r.label.contains("k = ")
            {
                problems.push(format!(
                    "{} asked for k = {k} and got {} hits",
                    r.label,
                    r.hits().len()
                ));
            }
        }
        let others = self.facts.retrieved.len();
        let unprobed = match (max_k, rerank, max_candidates) {
            (None, _, _) => "; `retrieve.maxK` is not advertised, so no clamp was probed",
            (Some(_), true, None) => {
                "; `rerank.maxCandidates` is not advertised, so `rerank.topN` was probed at the funnel's equality"
            }
            (Some(_), false, _) => {
                "; built-in rerank is not advertised, so `rerank.topN` was not sent"
            }
            _ => "",
        };
        let finding = check.verdict(
            &problems,
            format!(
                "`retrieve` of \"{query}\" with k = {big} returned {n} hits, and with the same query every probe \
                 returned min(k, {n}) hits ({}); no result of the run ({others} in all) had more hits than its \
                 `k`{unprobed}",
                exact.join(", ")
            ),
            "`k` is the final result count: a server MUST NOT return more than `k` hits, and fewer only when the \
             corpus or `minScore` yields fewer; it MUST clamp `k`, `candidateK` and `rerank.topN` to `retrieve.maxK` / \
             `rerank.maxCandidates` rather than refuse them (§7.7, §12, §14.2)",
        );
        self.conv.emit(finding).await
    }

    /// RCP-L1-009, in every mode the run asked for: from the result of the
    /// mode with the most hits, its request is repeated with `minScore`
    /// above its best score (no hit may come back) and at its middle score
    /// (hits must come back, none scored below). The requests go side by
    /// side where the session allows it.
    pub(super) async fn min_score(&mut self) -> Result<(), EngineError> {
        let rule = &MIN_SCORE;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        // Per mode, the result with the most hits that carry numeric scores.
        let bases: Vec<(Retrieved, f64, f64)> = self
            .by_mode(|r| !scores(r.hits()).is_empty())
            .into_iter()
            .filter_map(|(_, members)| {
                let base = members
                    .iter()
                    .filter_map(|i| self.facts.retrieved.get(*i))
                    .max_by_key(|r| r.hits().len())?
                    .clone();
                let s = scores(base.hits());
                let middle = *s.get(s.len() / 2)?;
                let best = s.iter().copied().fold(f64::MIN, f64::max);
                Some((base, best, middle))
            })
            .collect();
        if bases.is_empty() {
            return self
                .conv
                .skip(
                    rule,
                    "not verified: no `retrieve` of this run returned a hit with a numeric score to set a threshold from",
                )
                .await;
        }
        let mut check = Check::new(rule);
        let mut requests = Vec::new();
        for (base, best, middle) in &bases {
            check.keep(base.exchange.clone());
            let in_mode = mode_words(mode_of(&base.params));
            let mut above = base.params.clone();
            above["minScore"] = json!(best.abs() + best + ABOVE_BEST);
            let threshold = above["minScore"].clone();
            requests.push((
                format!("`retrieve` in {in_mode} with minScore {threshold}"),
                above,
            ));
            let mut at = base.params.clone();
            at["minScore"] = json!(middle);
            requests.push((
                format!("`retrieve` in {in_mode} with minScore {middle}"),
                at,
            ));
        }
        let answers = self.retrieve_all(rule, requests.clone()).await?;
        let mut problems = Vec::new();
        let mut passed = Vec::new();
        for (((base, best, middle), pair), sent) in
            bases.iter().zip(requests.chunks(2)).zip(answers.chunks(2))
        {
            let in_mode = mode_words(mode_of(&base.params));
            let threshold = pair[0].1["minScore"].clone();
            let Some(above) = sent.first() else { continue };
            check.saw(above);
            match result_of(above).map(hit_essentials) {
                Some(Ok([])) => {}
                Some(Ok(hits)) => problems.push(format!(
                    "in {in_mode}, with minScore {threshold}, above the best score {best} of the same query, {} hits \
                     came back",
                    hits.len()
                )),
                Some(Err(problem)) => {
                    problems.push(format!("in {in_mode}, with minScore {threshold}: {problem}"));
                }
                None => problems.push(format!(
                    "`retrieve` in {in_mode} with minScore {threshold} {}",
                    outcome_words(above)
                )),
            }
            let Some(at) = sent.get(1) else { continue };
            check.saw(at);
            match result_of(at).map(hit_essentials) {
                Some(Ok(hits)) => {
                    let below: Vec<f64> = scores(hits).into_iter().filter(|x| x < middle).collect();
                    if !below.is_empty() {
                        problems.push(format!(
                            "in {in_mode}, with minScore {middle}, hits scored {} came back",
                            show(&json!(below))
                        ));
                    }
                    if hits.is_empty() {
                        problems.push(format!(
                            "in {in_mode}, with minScore {middle}, no hit came back, though the same query without \
                             it returned hits scored up to {best}"
                        ));
                    }
                }
                Some(Err(problem)) => {
                    problems.push(format!("in {in_mode}, with minScore {middle}: {problem}"));
                }
                None => problems.push(format!(
                    "`retrieve` in {in_mode} with minScore {middle} {}",
                    outcome_words(at)
                )),
            }
            passed.push(format!(
                "in {in_mode}, minScore {middle} kept only hits scored at least that, and minScore {threshold} \
                 (above the best, {best}) returned none"
            ));
        }
        let finding = check.verdict(
            &problems,
            passed.join("; "),
            "`minScore` is a floor in the server's own score scale, in every mode (§7.7, §14.2)",
        );
        self.conv.emit(finding).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_read_in_order() {
        let hits = vec![
            json!({"score": 2}),
            json!({"score": 1.5}),
            json!({"score": "x"}),
        ];
        assert_eq!(scores(&hits), vec![2.0, 1.5]);
    }
}
