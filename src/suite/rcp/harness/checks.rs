//! The harness's 30 checks, in its order, with its request ids and its
//! conditions (digest §8), read the way its Python reads them.

use super::*;

/// The index probe document. The harness uses `rcp-conf://upsert`; decision 7
/// puts every id protocheck writes under `protocheck-probe/`.
const UPSERT_ID: &str = "protocheck-probe/rcp-conf://upsert";

/// The harness's client identity in `initialize`.
fn harness_client() -> Value {
    json!({"name": "conf", "version": "1"})
}

pub(super) async fn run(
    conv: &mut Conversation<'_>,
    observed: &mut Observed,
) -> Result<(), EngineError> {
    let mut h = Harness { conv, observed };
    h.run().await
}

struct Harness<'r, 'c> {
    conv: &'r mut Conversation<'c>,
    observed: &'r mut Observed,
}

impl Harness<'_, '_> {
    /// `t.raw(...)`: `None` once the server has stopped answering (the harness
    /// itself would have crashed; protocheck skips the rest instead).
    async fn raw(
        &mut self,
        rule: &'static Rule,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Option<Sent>, EngineError> {
        if self.conv.gone().is_some() {
            return Ok(None);
        }
        Ok(Some(self.conv.call(rule, id, method, params).await?))
    }

    /// `check(level, name, cond, detail)`.
    async fn check(
        &mut self,
        rule: &'static Rule,
        sent: &Sent,
        ok: bool,
        why: String,
    ) -> Result<(), EngineError> {
        let mut check = Check::new(rule);
        check.keep(exchange_of(sent).clone());
        let finding = if ok {
            check.finding(Outcome::Pass, rule.title)
        } else {
            check.finding(Outcome::Fail, format!("{} — failed: {why}", rule.title))
        };
        self.conv.emit(finding).await
    }

    /// `skip(level, name, why)`.
    async fn skip(
        &mut self,
        rule: &'static Rule,
        why: impl Into<String>,
    ) -> Result<(), EngineError> {
        self.conv.skip(rule, why).await
    }

    fn gone_reason(&self) -> String {
        self.conv
            .gone()
            .unwrap_or_else(|| "not verified: the server stopped answering".to_owned())
    }

    async fn run(&mut self) -> Result<(), EngineError> {
        // #1
        if let Some(r) = self
            .raw(&INFO_BEFORE_INIT, json!(0), "info", json!({}))
            .await?
        {
            // `r.get("result", {}).get("server") is not None`
            let ok = result_map(&r).get("server").is_some_and(|s| !s.is_null());
            self.check(&INFO_BEFORE_INIT, &r, ok, detail(&r)).await?;
        } else {
            self.skip(&INFO_BEFORE_INIT, self.gone_reason()).await?;
        }
        // #2
        match self
            .raw(&PING_NONCE, json!(100), "ping", json!({"nonce": 777}))
            .await?
        {
            Some(r) => {
                let ok = result_map(&r)
                    .get("nonce")
                    .filter(|n| n.is_number())
                    .and_then(Value::as_f64)
                    == Some(777.0);
                self.check(&PING_NONCE, &r, ok, detail(&r)).await?;
            }
            None => self.skip(&PING_NONCE, self.gone_reason()).await?,
        }
        // #3
        let pre_init = self
            .raw(
                &PRE_INIT_REJECTED,
                json!(1),
                "retrieve",
                json!({"query": "x", "k": 1}),
            )
            .await?;
        match &pre_init {
            Some(r) => {
                self.check(&PRE_INIT_REJECTED, r, has_code(r, -32001), detail(r))
                    .await?
            }
            None => self.skip(&PRE_INIT_REJECTED, self.gone_reason()).await?,
        }
        // #4–#7
        for (rule, method, params) in [
            (&NOTIFY_GATED, "retrieve", json!({"query": "x", "k": 1})),
            (&NOTIFY_OPEN, "info", json!({})),
            (&NOTIFY_UNKNOWN, "does/not/exist", json!({})),
            (&NOTIFY_CANCEL, "notifications/cancel", json!({"id": 12345})),
        ] {
            if self.conv.gone().is_some() {
                self.skip(rule, self.gone_reason()).await?;
                continue;
            }
            let notified = self.conv.client.notify(method, params).await;
            let silent = harness_silent(&notified);
            let mut check = Check::new(rule);
            check.keep(evidence_of(&notified));
            let finding = if silent {
                check.finding(Outcome::Pass, rule.title)
            } else {
                let what = match &notified {
                    Ok(Notified::Answered(reply)) => reply.describe(),
                    _ => String::new(),
                };
                check.finding(
                    Outcome::Fail,
                    format!("{} — failed: answered with {what}", rule.title),
                )
            };
            self.conv.emit(finding).await?;
        }
        // #8, #9
        let v0 = self
            .raw(
                &VERSION_REJECTED,
                json!(200),
                "initialize",
                json!({"protocolVersion": 0, "client": harness_client()}),
            )
            .await?;
        let rejected = v0.as_ref().is_some_and(|r| has_code(r, -32002));
        match &v0 {
            Some(r) => {
                self.check(&VERSION_REJECTED, r, rejected, detail(r))
                    .await?
            }
            None => self.skip(&VERSION_REJECTED, self.gone_reason()).await?,
        }
        // The harness sends #9 only when #8 passed; otherwise it is not reported
        // at all (and not counted).
        if rejected {
            match self
                .raw(
                    &FAILED_HANDSHAKE,
                    json!(201),
                    "retrieve",
                    json!({"query": "x", "k": 1}),
                )
                .await?
            {
                Some(r) => {
                    self.check(&FAILED_HANDSHAKE, &r, has_code(&r, -32001), detail(&r))
                        .await?
                }
                None => self.skip(&FAILED_HANDSHAKE, self.gone_reason()).await?,
            }
        }
        // #10–#12
        let init = self
            .raw(
                &PROTOCOL_VERSION,
                json!(2),
                "initialize",
                json!({"protocolVersion": 1, "client": harness_client(), "capabilities": {}}),
            )
            .await?;
        let Some(init) = init else {
            for rule in &RULES[9..] {
                self.skip(rule, self.gone_reason()).await?;
            }
            return Ok(());
        };
        let res = result_map(&init);
        self.observed.already_initialized = has_code(&init, -32600)
            && pre_init.as_ref().is_some_and(|r| {
                !has_code(r, -32001) && r.as_ref().is_ok_and(|x| x.json().is_some())
            });
        if let Some(token) = res
            .get("_meta")
            .and_then(|m| m.get("session"))
            .and_then(Value::as_str)
        {
            // Decision 5 (the harness never does this; see the comparison).
            self.observed.session_token = true;
            self.conv.client.set_session(Some(token.to_owned()));
        }
        let version_ok = res
            .get("protocolVersion")
            .filter(|v| v.is_number())
            .and_then(Value::as_f64)
            .is_some_and(|v| v >= 1.0);
        self.check(&PROTOCOL_VERSION, &init, version_ok, detail(&init))
            .await?;
        let caps: Map<String, Value> = res
            .get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let retrieval = ["embed", "rerank", "retrieve", "graph"]
            .iter()
            .any(|k| caps.contains_key(*k));
        self.check(
            &RETRIEVAL_CAPABILITY,
            &init,
            retrieval,
            show(&Value::Object(caps.clone())),
        )
        .await?;
        let named = truthy(res.get("server").and_then(|s| s.get("name")));
        self.check(&SERVER_IDENTITY, &init, named, detail(&init))
            .await?;
        self.observed.declared = res
            .get("_meta")
            .filter(|m| truthy(Some(m)))
            .and_then(|m| m.get("conformance"))
            .filter(|c| !c.is_null())
            .cloned();
        self.observed.init = res;

        // #13
        match self
            .raw(
                &REPEAT_INIT,
                json!("reinit"),
                "initialize",
                json!({"protocolVersion": 1, "client": harness_client(), "capabilities": {}}),
            )
            .await?
        {
            Some(r) => {
                self.check(&REPEAT_INIT, &r, has_code(&r, -32600), detail(&r))
                    .await?
            }
            None => self.skip(&REPEAT_INIT, self.gone_reason()).await?,
        }
        // #14
        match self
            .raw(&UNKNOWN_METHOD, json!(3), "does/not/exist", json!({}))
            .await?
        {
            Some(r) => {
                self.check(&UNKNOWN_METHOD, &r, has_code(&r, -32004), detail(&r))
                    .await?
            }
            None => self.skip(&UNKNOWN_METHOD, self.gone_reason()).await?,
        }
        // #15
        if caps.contains_key("index") {
            self.skip(&UNADVERTISED_METHOD, "server advertises index")
                .await?;
        } else {
            match self
                .raw(
                    &UNADVERTISED_METHOD,
                    json!(4),
                    "index/add",
                    json!({"documents": []}),
                )
                .await?
            {
                Some(r) => {
                    self.check(&UNADVERTISED_METHOD, &r, has_code(&r, -32003), detail(&r))
                        .await?
                }
                None => self.skip(&UNADVERTISED_METHOD, self.gone_reason()).await?,
            }
        }
        // #16, #17: one reply judged twice.
        match self
            .raw(&STRING_ID, json!("str-id-1"), "info", json!({}))
            .await?
        {
            Some(r) => {
                let reply = r
                    .as_ref()
                    .ok()
                    .and_then(|x| x.json())
                    .cloned()
                    .unwrap_or(Value::Null);
                let id_ok = reply.get("id") == Some(&json!("str-id-1"));
                self.check(&STRING_ID, &r, id_ok, show(&reply)).await?;
                let version_ok = reply.get("jsonrpc") == Some(&json!("2.0"));
                self.check(&JSONRPC_VERSION, &r, version_ok, show(&reply))
                    .await?;
            }
            None => {
                self.skip(&STRING_ID, self.gone_reason()).await?;
                self.skip(&JSONRPC_VERSION, self.gone_reason()).await?;
            }
        }
        self.retrieval(&caps).await?;
        self.l2(&caps).await?;
        self.spec_rerank(&caps).await?;
        if self.conv.gone().is_none() {
            let _ = self
                .conv
                .call(&PROFILE_DIFFERENCES, json!(99), "shutdown", json!({}))
                .await?;
        }
        Ok(())
    }

    /// #18–#25. Without `retrieve`, #18 is skipped and #19–#25 are not run
    /// (nor counted), as in the harness.
    async fn retrieval(&mut self, caps: &Map<String, Value>) -> Result<(), EngineError> {
        if !caps.contains_key("retrieve") {
            return self
                .skip(&HITS_ARRAY, "server does not advertise retrieve")
                .await;
        }
        let Some(r) = self
            .raw(
                &HITS_ARRAY,
                json!(5),
                "retrieve",
                json!({"query": "test", "k": 3}),
            )
            .await?
        else {
            return self.skip(&HITS_ARRAY, self.gone_reason()).await;
        };
        let hits = result_map(&r).get("hits").cloned();
        let list = hits.as_ref().and_then(Value::as_array);
        self.check(&HITS_ARRAY, &r, list.is_some(), detail(&r))
            .await?;
        // #19–#22 only when `hits` is a list.
        if let Some(hits) = list {
            self.check(
                &K_CEILING,
                &r,
                hits.len() <= 3,
                format!("asked k=3, got {}", hits.len()),
            )
            .await?;
            let numeric = |h: &Value| h.get("score").is_some_and(Value::is_number);
            let all_ok = hits
                .iter()
                .all(|h| h.is_object() && h.get("id").is_some() && numeric(h));
            self.check(&ID_AND_SCORE, &r, all_ok, show(&json!(hits)))
                .await?;
            // Python's `isinstance(x, (int, float))` also takes booleans here.
            let scores: Vec<f64> = hits
                .iter()
                .filter_map(|h| h.get("score"))
                .filter_map(|s| s.as_f64().or_else(|| s.as_bool().map(f64::from)))
                .collect();
            let descending = scores.windows(2).all(|w| w[0] >= w[1]);
            self.check(&DESCENDING, &r, descending, show(&json!(scores)))
                .await?;
            let ids: Vec<Value> = hits
                .iter()
                .filter(|h| h.is_object())
                .map(|h| h.get("id").cloned().unwrap_or(Value::Null))
                .collect();
            let unique = ids.iter().enumerate().all(|(i, a)| !ids[..i].contains(a));
            self.check(&UNIQUE_IDS, &r, unique, show(&json!(ids)))
                .await?;
        }
        // #23: `isinstance(max_k, int)` (a boolean counts, a float does not).
        let max_k = caps
            .get("retrieve")
            .and_then(|r| r.get("maxK"))
            .and_then(|m| m.as_i64().or_else(|| m.as_bool().map(i64::from)))
            .filter(|m| *m >= 1);
        match max_k {
            Some(max_k) => match self
                .raw(
                    &MAX_K_CLAMPED,
                    json!(6),
                    "retrieve",
                    json!({"query": "test", "k": max_k.saturating_add(1000)}),
                )
                .await?
            {
                Some(r) => {
                    let over = result_map(&r)
                        .get("hits")
                        .and_then(Value::as_array)
                        .map(Vec::len);
                    let ok = over.is_some_and(|n| n as i64 <= max_k);
                    self.check(&MAX_K_CLAMPED, &r, ok, detail(&r)).await?;
                }
                None => self.skip(&MAX_K_CLAMPED, self.gone_reason()).await?,
            },
            None => self.skip(&MAX_K_CLAMPED, "no maxK advertised").await?,
        }
        for (rule, id, params) in [
            (&NEGATIVE_K, 7, json!({"query": "test", "k": -5})),
            (
                &FUNNEL,
                8,
                json!({"query": "test", "k": 10, "candidateK": 2}),
            ),
        ] {
            match self.raw(rule, json!(id), "retrieve", params).await? {
                Some(r) => {
                    self.check(rule, &r, has_code(&r, -32602), detail(&r))
                        .await?
                }
                None => self.skip(rule, self.gone_reason()).await?,
            }
        }
        Ok(())
    }

    /// #26–#30.
    async fn l2(&mut self, caps: &Map<String, Value>) -> Result<(), EngineError> {
        // `rr.get("modes")`: membership in a list, or a substring of a string.
        let hybrid = match caps.get("retrieve").and_then(|r| r.get("modes")) {
            Some(Value::Array(modes)) => modes.contains(&json!("hybrid")),
            Some(Value::String(modes)) => modes.contains("hybrid"),
            _ => false,
        };
        if hybrid {
            match self
                .raw(
                    &HYBRID,
                    json!(9),
                    "retrieve",
                    json!({"query": "test", "k": 3, "mode": "hybrid"}),
                )
                .await?
            {
                Some(r) => {
                    let ok = result_map(&r).get("hits").is_some_and(Value::is_array);
                    self.check(&HYBRID, &r, ok, detail(&r)).await?;
                }
                None => self.skip(&HYBRID, self.gone_reason()).await?,
            }
        } else {
            self.skip(&HYBRID, "hybrid not advertised").await?;
        }
        if caps.contains_key("rerank") {
            let params = json!({"query": "test", "documents": ["a b c", "d e f"], "topN": 2});
            match self.raw(&RERANK, json!(10), "rerank", params).await? {
                Some(r) => {
                    // `res.get("results") or res.get("hits") or res.get("ranking")`
                    let res = result_map(&r);
                    let picked = ["results", "hits"]
                        .iter()
                        .map(|k| res.get(*k))
                        .find(|v| truthy(*v))
                        .unwrap_or_else(|| res.get("ranking"));
                    let ok = picked.is_some_and(Value::is_array);
                    self.check(&RERANK, &r, ok, detail(&r)).await?;
                }
                None => self.skip(&RERANK, self.gone_reason()).await?,
            }
        } else {
            self.skip(&RERANK, "rerank not advertised").await?;
        }
        let writable = caps
            .get("index")
            .and_then(|i| i.get("writable"))
            .is_some_and(|w| *w == Value::Bool(true));
        let index_rules = [&INDEX_ADD_IDS, &INDEX_UPSERT, &INDEX_DELETE_IDEMPOTENT];
        if !writable {
            for rule in index_rules {
                self.skip(rule, "index not writable").await?;
            }
            return Ok(());
        }
        if !self.observed.writes_allowed {
            for rule in index_rules {
                self.skip(rule, crate::suite::rcp::outside::WRITES_OFF)
                    .await?;
            }
            return Ok(());
        }
        let doc = json!({"id": UPSERT_ID, "text": "conformance upsert probe document one"});
        match self
            .raw(
                &INDEX_ADD_IDS,
                json!(20),
                "index/add",
                json!({"documents": [doc]}),
            )
            .await?
        {
            Some(r) => {
                let ok = result_map(&r)
                    .get("ids")
                    .and_then(Value::as_array)
                    .is_some_and(|i| i.len() == 1);
                self.check(&INDEX_ADD_IDS, &r, ok, detail(&r)).await?;
            }
            None => self.skip(&INDEX_ADD_IDS, self.gone_reason()).await?,
        }
        let doc = json!({"id": UPSERT_ID, "text": "conformance upsert probe document two updated"});
        match self
            .raw(
                &INDEX_UPSERT,
                json!(21),
                "index/add",
                json!({"documents": [doc]}),
            )
            .await?
        {
            Some(r) => {
                let error = r
                    .as_ref()
                    .ok()
                    .and_then(|x| x.json())
                    .and_then(|v| v.get("error"))
                    .is_some();
                let ok = !error || has_code(&r, -32016);
                self.check(&INDEX_UPSERT, &r, ok, detail(&r)).await?;
            }
            None => self.skip(&INDEX_UPSERT, self.gone_reason()).await?,
        }
        let first = self
            .raw(
                &INDEX_DELETE_IDEMPOTENT,
                json!(22),
                "index/delete",
                json!({"ids": [UPSERT_ID]}),
            )
            .await?;
        let second = match first {
            Some(_) => {
                self.raw(
                    &INDEX_DELETE_IDEMPOTENT,
                    json!(23),
                    "index/delete",
                    json!({"ids": [UPSERT_ID]}),
                )
                .await?
            }
            None => None,
        };
        match second {
            Some(r2) => {
                // `r2.get("result", {}).get("deleted") == 0` (Python: 0.0 and False equal 0 too).
                let deleted = result_map(&r2).get("deleted").cloned();
                let ok = deleted
                    .as_ref()
                    .and_then(|d| d.as_f64().or_else(|| d.as_bool().map(f64::from)))
                    == Some(0.0);
                self.check(&INDEX_DELETE_IDEMPOTENT, &r2, ok, detail(&r2))
                    .await?;
            }
            None => {
                self.skip(&INDEX_DELETE_IDEMPOTENT, self.gone_reason())
                    .await?
            }
        }
        Ok(())
    }

    /// Not a harness check: one `rerank` in the spec's shape, so the
    /// comparison can say whether #27's verdict is the harness's quirk (Q1).
    async fn spec_rerank(&mut self, caps: &Map<String, Value>) -> Result<(), EngineError> {
        if !caps.contains_key("rerank") || self.conv.gone().is_some() {
            return Ok(());
        }
        let params = json!({"query": "test", "passages": ["a b c", "d e f"]});
        let sent = self
            .conv
            .call(
                &PROFILE_DIFFERENCES,
                json!("protocheck-spec-rerank"),
                "rerank",
                params,
            )
            .await?;
        let scores_ok = result_map(&sent)
            .get("scores")
            .and_then(Value::as_array)
            .is_some_and(|s| s.len() == 2 && s.iter().all(Value::is_number));
        self.observed.spec_rerank = Some((scores_ok, detail(&sent)));
        Ok(())
    }
}
