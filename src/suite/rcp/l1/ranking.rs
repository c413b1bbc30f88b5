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
    "`retrieve` never returns more than `k` hits, and clamps a `k` above `maxK`",
    SpecLevel::Must,
    "RCP/1 §14.2, §7.7 (stage-count invariant)",
)
.help(
    "protocheck sends `retrieve` with `k` = 1 and with `k` = 3 and checks neither returns more \
     hits; every other `retrieve` of the L1 run is held to its own `k`. When `retrieve.maxK` is \
     advertised it also asks for `maxK` + 1000 and expects at most `maxK` hits, not an error.",
    "The server returns a fixed page size, counts documents while returning several chunks each, \
     applies `k` before a stage that adds hits, or refuses a `k` above `maxK` (with -32602, for \
     example) instead of clamping it.",
    "Truncate the final list to `k` after every stage (fusion, reranking, expansion), and when \
     `k` exceeds the advertised `maxK`, serve `maxK` hits rather than an error.",
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

    pub(super) async fn k_honoured(&mut self) -> Result<(), EngineError> {
        let rule = &K_HONOURED;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        for k in [1_u64, 3] {
            let sent = self
                .retrieve(
                    rule,
                    &format!("`retrieve` with k = {k}"),
                    json!({"query": query, "k": k}),
                )
                .await?;
            check.saw(&sent);
            match result_of(&sent).map(hit_essentials) {
                Some(Ok(hits)) if hits.len() as u64 <= k => {}
                Some(Ok(hits)) => problems.push(format!(
                    "`retrieve` with k = {k} returned {} hits",
                    hits.len()
                )),
                Some(Err(problem)) => problems.push(format!("`retrieve` with k = {k}: {problem}")),
                None => problems.push(format!("`retrieve` with k = {k} {}", outcome_words(&sent))),
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
        let max_k = self
            .init
            .capability("retrieve")
            .and_then(|r| r.get("maxK"))
            .and_then(Value::as_u64)
            .filter(|m| *m >= 1);
        let others = self.facts.retrieved.len();
        let mut clamped =
            "; `retrieve.maxK` is not advertised, so clamping was not probed".to_owned();
        if let Some(max_k) = max_k {
            let k = max_k.saturating_add(1000);
            let sent = self
                .conv
                .request(rule, "retrieve", json!({"query": query, "k": k}))
                .await?;
            check.saw(&sent);
            match result_of(&sent).map(hit_essentials) {
                Some(Ok(hits)) if hits.len() as u64 <= max_k => {
                    clamped = format!("; k = {k} above maxK {max_k} was clamped ({} hits)", hits.len());
                }
                Some(Ok(hits)) => problems.push(format!(
                    "`retrieve` with k = {k}, above maxK {max_k}, returned {} hits; it must clamp to maxK",
                    hits.len()
                )),
                Some(Err(problem)) => problems.push(format!("`retrieve` with k = {k}: {problem}")),
                None if code_of(&sent).is_some() => problems.push(format!(
                    "`retrieve` with k = {k}, above the advertised maxK {max_k}, {}; a k above maxK MUST be clamped, \
                     not refused",
                    outcome_words(&sent)
                )),
                None => problems.push(format!("`retrieve` with k = {k} {}", outcome_words(&sent))),
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "`retrieve` with k = 1 and with k = 3, and every `retrieve` result of the L1 run ({others} in \
                 all), returned no more hits than their `k`{clamped}"
            ),
            "a server MUST NOT return more than `k` hits, and MUST clamp `k` to `retrieve.maxK` (§7.7)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn min_score(&mut self) -> Result<(), EngineError> {
        let rule = &MIN_SCORE;
        if let Some(reason) = self.conv.gone() {
            return self.conv.skip(rule, reason).await;
        }
        let Some(base) = self.richest() else {
            return self
                .conv
                .skip(rule, "not verified: no `retrieve` of this run returned a hit to set a threshold from")
                .await;
        };
        let s = scores(base.hits());
        let Some(&middle) = s.get(s.len() / 2) else {
            return self
                .conv
                .skip(rule, "not verified: the hits of this run carry no numeric score to set a threshold from")
                .await;
        };
        let mut check = Check::new(rule);
        check.keep(base.exchange.clone());
        let best = s.iter().copied().fold(f64::MIN, f64::max);
        let mut problems = Vec::new();

        let mut above = base.params.clone();
        above["minScore"] = json!(best.abs() + best + ABOVE_BEST);
        let threshold = above["minScore"].clone();
        let sent = self
            .retrieve(
                rule,
                &format!("`retrieve` with minScore {threshold}"),
                above,
            )
            .await?;
        check.saw(&sent);
        match result_of(&sent).map(hit_essentials) {
            Some(Ok([])) => {}
            Some(Ok(hits)) => problems.push(format!(
                "with minScore {threshold}, above the best score {best} of the same query, {} hits came back",
                hits.len()
            )),
            Some(Err(problem)) => problems.push(format!("with minScore {threshold}: {problem}")),
            None => problems.push(format!("`retrieve` with minScore {threshold} {}", outcome_words(&sent))),
        }

        let mut at = base.params.clone();
        at["minScore"] = json!(middle);
        let sent = self
            .retrieve(rule, &format!("`retrieve` with minScore {middle}"), at)
            .await?;
        check.saw(&sent);
        match result_of(&sent).map(hit_essentials) {
            Some(Ok(hits)) => {
                let below: Vec<f64> = scores(hits).into_iter().filter(|x| *x < middle).collect();
                if !below.is_empty() {
                    problems.push(format!(
                        "with minScore {middle}, hits scored {} came back",
                        show(&json!(below))
                    ));
                }
                if hits.is_empty() {
                    problems.push(format!(
                        "with minScore {middle}, no hit came back, though the same query without it returned hits \
                         scored up to {best}"
                    ));
                }
            }
            Some(Err(problem)) => problems.push(format!("with minScore {middle}: {problem}")),
            None => problems.push(format!(
                "`retrieve` with minScore {middle} {}",
                outcome_words(&sent)
            )),
        }
        let finding = check.verdict(
            &problems,
            format!(
                "minScore {middle} kept only hits scored at least that, and minScore {threshold} (above the best, {best}) \
                 returned none"
            ),
            "`minScore` is a floor in the server's own score scale (§7.7, §14.2)",
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
