//! The three retrieval modes L1 asks for (spec §14.2, §7.7): each advertised
//! in `retrieve.modes` and answering with ranked hits.

use super::*;

pub const DENSE_MODE: Rule = item(
    "RCP-L1-001",
    "`retrieve` offers mode `dense` and it returns ranked hits",
    SpecLevel::Should,
    "RCP/1 §14.2, §7.7",
)
.help(
    "When `retrieve.modes` lists `dense`, protocheck sends `retrieve` with `mode: \"dense\"`, `k` \
     = 5 and a query made of words from a passage the server returned to its opening `retrieve` \
     (\"retrieval\" when none came). The result needs `hits`, each with an `id` and a numeric \
     `score`, and at least one hit when the query came from a passage.",
    "The mode is advertised but the index behind it is missing or empty, the request fails with \
     an error, or the hits come back under another name or without numeric scores. When `dense` \
     is not in `retrieve.modes` the rule is skipped, and L1 is not reached.",
    "Advertise only modes that work: build the dense index over the corpus and answer with \
     `{\"hits\": [{\"id\": …, \"score\": …}, …]}`, best first. An L1 server offers all three \
     modes, so list `dense` in `retrieve.modes` once it works.",
);
pub const SPARSE_MODE: Rule = item(
    "RCP-L1-002",
    "`retrieve` offers mode `sparse` and it returns ranked hits",
    SpecLevel::Should,
    "RCP/1 §14.2, §7.7",
)
.help(
    "When `retrieve.modes` lists `sparse`, protocheck sends `retrieve` with `mode: \"sparse\"`, \
     `k` = 5 and a query made of up to eight words of a passage the server returned earlier, so a \
     lexical search must match. The result needs hits with an `id` and a numeric `score`, and at \
     least one of them.",
    "The sparse (BM25 or learned sparse) index is not built or not loaded, the analyzer drops the \
     query's words, the mode ends in an error, or the hits lack numeric scores. When `sparse` is \
     not advertised the rule is skipped, and L1 is not reached.",
    "Build the sparse index over the same passages the dense mode serves, answer `mode: \
     \"sparse\"` with ranked `hits` carrying numeric scores, and list `sparse` in \
     `retrieve.modes` once it returns them.",
);
pub const HYBRID_MODE: Rule = item(
    "RCP-L1-003",
    "`retrieve` offers mode `hybrid` and it returns ranked hits",
    SpecLevel::Should,
    "RCP/1 §14.2, §7.7",
)
.help(
    "When `retrieve.modes` lists `hybrid`, protocheck sends `retrieve` with `mode: \"hybrid\"`, \
     `k` = 5 and words of a passage the server returned earlier. The result needs hits with an \
     `id` and a numeric `score`, and at least one hit when the query came from a passage.",
    "Hybrid retrieval fails when one side is missing (no sparse or no dense index), when the \
     fusion step raises an error, or when fused scores come back as strings or null. When \
     `hybrid` is not advertised the rule is skipped, and L1 is not reached.",
    "Run both dense and sparse retrieval, fuse the two rankings (for example with reciprocal rank \
     fusion), return the fused list as `hits` with numeric scores, and list `hybrid` in \
     `retrieve.modes`.",
);

impl L1Run<'_, '_> {
    /// The three modes, in rule order. The advertised ones are probed with
    /// one `retrieve` each; the probes need none of one another's answers,
    /// so they go side by side where the session allows it
    /// ([`Conversation::request_each`]), and are judged in rule order as if
    /// they had gone one after another.
    pub(super) async fn modes(&mut self) -> Result<(), EngineError> {
        let advertised = self.init.advertised_list("retrieve", "modes");
        let is_advertised = |mode: &str| {
            advertised
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == mode))
        };
        let all = [
            (&DENSE_MODE, "dense"),
            (&SPARSE_MODE, "sparse"),
            (&HYBRID_MODE, "hybrid"),
        ];
        let query = self.query();
        let mut gone = self.conv.gone();
        let mut checks = Vec::new();
        let mut requests = Vec::new();
        for (rule, mode) in all.iter().filter(|(_, mode)| is_advertised(mode)) {
            checks.push(Check::new(rule));
            let params = json!({"query": query, "k": PROBE_K, "mode": mode});
            requests.push((*rule, format!("`retrieve` in mode `{mode}`"), params));
        }
        let mut answers = if gone.is_none() {
            self.retrieve_each(requests).await?
        } else {
            Vec::new()
        }
        .into_iter()
        .zip(checks);
        for (rule, mode) in all {
            if let Some(reason) = &gone {
                self.conv.skip(rule, reason.clone()).await?;
                continue;
            }
            if !is_advertised(mode) {
                let listed = match &advertised {
                    Some(m) => format!("`retrieve.modes` is {}", show(&json!(m))),
                    None => "`retrieve` advertises no `modes` list".to_owned(),
                };
                let reason = not_advertised(
                    &format!("`retrieve` mode `{mode}`"),
                    &format!("{listed}; not advertised"),
                );
                self.conv.skip(rule, reason).await?;
                continue;
            }
            match answers.next() {
                Some((sent, check)) => self.mode(check, rule, mode, &query, &sent).await?,
                // Not sent: the target was gone.
                None => {
                    let reason = self.conv.gone().unwrap_or_default();
                    self.conv.skip(rule, reason).await?;
                }
            }
            // The answer that showed the target gone is the last one kept.
            if answers.len() == 0 {
                gone = self.conv.gone();
            }
        }
        Ok(())
    }

    /// What the probe of `mode` got.
    async fn mode(
        &mut self,
        mut check: Check,
        rule: &'static Rule,
        mode: &str,
        query: &str,
        sent: &Sent,
    ) -> Result<(), EngineError> {
        check.saw(sent);
        let finding = match result_of(sent) {
            None => check.finding(
                rule.on_failure,
                format!(
                    "`retrieve` with mode \"{mode}\", which `retrieve.modes` advertises, {}; an advertised mode \
                     must work (§7.7, §14.2)",
                    outcome_words(sent)
                ),
            ),
            Some(result) => match hit_essentials(result) {
                Err(problem) => check.finding(
                    rule.on_failure,
                    format!("`retrieve` with mode \"{mode}\" answered, but {problem} (§7.7)"),
                ),
                // The query is made of words of a passage the server returned,
                // so even a lexical search must find something.
                Ok([]) if self.facts.query.is_some() => check.finding(
                    rule.on_failure,
                    format!(
                        "`retrieve` with mode \"{mode}\" returned no hits for \"{query}\", words taken from a passage \
                         this server returned; an advertised mode must retrieve (§7.7, §14.2)"
                    ),
                ),
                Ok(hits) => check.finding(
                    Outcome::Pass,
                    format!("`retrieve` with mode \"{mode}\" returned {} ranked hits", hits.len()),
                ),
            },
        };
        self.conv.emit(finding).await
    }
}
