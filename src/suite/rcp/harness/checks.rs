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
    /// `t.raw(...)`, then the `.get` calls the check makes on the answer:
    /// `None` when the harness has stopped (here or earlier). `reads` names
    /// the members the check reads with `.get` (`result`, `error`), which
    /// raise in Python when they are not objects.
    ///
    /// The harness catches no exception around `t.raw` (digest §8): a
    /// non-2xx status (`urlopen` raises `HTTPError`), a body that is not JSON
    /// (`json.loads` raises), an answer that is not an object, or no answer
    /// at all ends it with a traceback, before it prints any level, and
    /// Python exits 1. protocheck reports that check as failed, the rest as
    /// not reached, and the verdict as the harness's stop.
    async fn raw(
        &mut self,
        rule: &'static Rule,
        id: Value,
        method: &str,
        params: Value,
        reads: &[&str],
    ) -> Result<Option<Sent>, EngineError> {
        if self.observed.stopped.is_some() {
            return Ok(None);
        }
        let sent = self.conv.call(rule, id, method, params).await?;
        if let Some(why) = harness_stops(&sent, reads) {
            self.observed.stopped = Some(Stop {
                at: rule.id.to_owned(),
                rule: Some(rule),
                why,
                exchange: exchange_of(&sent).clone(),
                reported: false,
            });
            return Ok(None);
        }
        Ok(Some(sent))
    }

    /// A check the harness did not complete: the one it stopped at fails,
    /// every later one is not reached.
    async fn unreached(&mut self, rule: &'static Rule) -> Result<(), EngineError> {
        let Some(stop) = self.observed.stopped.as_mut() else {
            return self.skip(rule, "not reached").await;
        };
        if stop.rule.is_some_and(|r| r.id == rule.id) && !stop.reported {
            stop.reported = true;
            let mut check = Check::new(rule);
            check.keep(stop.exchange.clone());
            let finding = check.finding(
                Outcome::Fail,
                format!(
                    "{} — the harness stops here: {}; it prints no certified level and exits 1",
                    rule.title, stop.why
                ),
            );
            return self.conv.emit(finding).await;
        }
        let why = format!(
            "not reached: the harness stopped at {} ({})",
            stop.at, stop.why
        );
        self.skip(rule, why).await
    }

    /// `check(level, name, cond, detail)`.
    async fn check(
        &mut self,
        rule: &'static Rule,
        sent: &Sent,
        ok: bool,
        why: String,
    ) -> Result<(), EngineError> {
        if self.observed.init_sent
            && has_code(sent, -32001)
            && !self.observed.gated_after_init.contains(&rule.id)
        {
            self.observed.gated_after_init.push(rule.id);
        }
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

    async fn run(&mut self) -> Result<(), EngineError> {
        // #1
        if let Some(r) = self
            .raw(&INFO_BEFORE_INIT, json!(0), "info", json!({}), &["result"])
            .await?
        {
            // `r.get("result", {}).get("server") is not None`
            let ok = result_map(&r).get("server").is_some_and(|s| !s.is_null());
            self.observed
                .info_declared
                .push(("0", declaration_in(&result_map(&r))));
            self.check(&INFO_BEFORE_INIT, &r, ok, detail(&r)).await?;
        } else {
            self.unreached(&INFO_BEFORE_INIT).await?;
        }
        // #2
        match self
            .raw(
                &PING_NONCE,
                json!(100),
                "ping",
                json!({"nonce": 777}),
                &["result"],
            )
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
            None => self.unreached(&PING_NONCE).await?,
        }
        // #3
        let pre_init = self
            .raw(
                &PRE_INIT_REJECTED,
                json!(1),
                "retrieve",
                json!({"query": "x", "k": 1}),
                &["error"],
            )
            .await?;
        match &pre_init {
            Some(r) => {
                self.check(&PRE_INIT_REJECTED, r, has_code(r, -32001), detail(r))
                    .await?
            }
            None => self.unreached(&PRE_INIT_REJECTED).await?,
        }
        // #4–#7
        for (rule, method, params) in [
            (&NOTIFY_GATED, "retrieve", json!({"query": "x", "k": 1})),
            (&NOTIFY_OPEN, "info", json!({})),
            (&NOTIFY_UNKNOWN, "does/not/exist", json!({})),
            (&NOTIFY_CANCEL, "notifications/cancel", json!({"id": 12345})),
        ] {
            if self.observed.stopped.is_some() {
                self.unreached(rule).await?;
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
                &["error"],
            )
            .await?;
        let rejected = v0.as_ref().is_some_and(|r| has_code(r, -32002));
        match &v0 {
            Some(r) => {
                self.check(&VERSION_REJECTED, r, rejected, detail(r))
                    .await?
            }
            None => self.unreached(&VERSION_REJECTED).await?,
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
                    &["error"],
                )
                .await?
            {
                Some(r) => {
                    self.check(&FAILED_HANDSHAKE, &r, has_code(&r, -32001), detail(&r))
                        .await?
                }
                None => self.unreached(&FAILED_HANDSHAKE).await?,
            }
        }
        // #10–#12
        let init = self
            .raw(
                &PROTOCOL_VERSION,
                json!(2),
                "initialize",
                json!({"protocolVersion": 1, "client": harness_client(), "capabilities": {}}),
                &["result"],
            )
            .await?;
        let Some(init) = init else {
            for rule in &RULES[9..] {
                self.unreached(rule).await?;
            }
            return Ok(());
        };
        self.observed.init_sent = true;
        self.observed.init_answer = Some(answer_words(&init));
        let res = result_map(&init);
        self.observed.already_initialized = has_code(&init, -32600)
            && pre_init.as_ref().is_some_and(|r| {
                !has_code(r, -32001) && r.as_ref().is_ok_and(|x| x.json().is_some())
            });
        // Decision 5 is protocheck's, not the harness's: the harness sends no
        // header but `Content-Type` and never sends a token back, so this
        // profile does not either (its later requests run outside the session
        // the token names, as the harness's do). The comparison says so, and
        // the `spec` profile's view sends the token back.
        self.observed.session_token = res
            .get("_meta")
            .and_then(|m| m.get("session"))
            .is_some_and(|t| !t.is_null());
        // `res.get("protocolVersion", 0) >= 1` raises TypeError on a value
        // that is neither a number nor a boolean.
        let version = res.get("protocolVersion");
        if let Some(v) = version.filter(|v| !v.is_number() && !v.is_boolean()) {
            return self
                .stop_after(
                    &init,
                    &PROTOCOL_VERSION,
                    true,
                    format!(
                        "`protocolVersion` is {}: comparing it with 1 raises TypeError",
                        show(v)
                    ),
                )
                .await;
        }
        let version_ok = version
            .and_then(|v| v.as_f64().or_else(|| v.as_bool().map(f64::from)))
            .is_some_and(|v| v >= 1.0);
        self.check(&PROTOCOL_VERSION, &init, version_ok, detail(&init))
            .await?;
        // `caps = res.get("capabilities", {})`; `k in caps` raises TypeError
        // on null. A non-object list or string is read as an empty object
        // here (the harness would test membership in it, then raise at its
        // first `caps.get`).
        if res.get("capabilities").is_some_and(Value::is_null) {
            return self
                .stop_after(
                    &init,
                    &RETRIEVAL_CAPABILITY,
                    true,
                    "`capabilities` is null: `k in caps` raises TypeError".to_owned(),
                )
                .await;
        }
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
        // `res.get("server", {}).get("name")` raises on a `server` that is
        // not an object.
        if let Some(server) = res.get("server").filter(|s| !s.is_object()) {
            return self
                .stop_after(
                    &init,
                    &SERVER_IDENTITY,
                    true,
                    format!(
                        "`server` is {}: `.get(\"name\")` on it raises",
                        show(server)
                    ),
                )
                .await;
        }
        let named = truthy(res.get("server").and_then(|s| s.get("name")));
        self.check(&SERVER_IDENTITY, &init, named, detail(&init))
            .await?;
        // `(res.get("_meta", {}) or {}).get("conformance")`: a truthy `_meta`
        // that is not an object raises.
        if let Some(meta) = res
            .get("_meta")
            .filter(|m| truthy(Some(m)) && !m.is_object())
        {
            return self
                .stop_after(
                    &init,
                    &REPEAT_INIT,
                    false,
                    format!(
                        "`_meta` is {}: reading `conformance` from it raises",
                        show(meta)
                    ),
                )
                .await;
        }
        self.observed.declared = declaration_in(&res);
        self.observed.init = res;

        // #13
        match self
            .raw(
                &REPEAT_INIT,
                json!("reinit"),
                "initialize",
                json!({"protocolVersion": 1, "client": harness_client(), "capabilities": {}}),
                &["error"],
            )
            .await?
        {
            Some(r) => {
                self.check(&REPEAT_INIT, &r, has_code(&r, -32600), detail(&r))
                    .await?
            }
            None => self.unreached(&REPEAT_INIT).await?,
        }
        // #14
        match self
            .raw(
                &UNKNOWN_METHOD,
                json!(3),
                "does/not/exist",
                json!({}),
                &["error"],
            )
            .await?
        {
            Some(r) => {
                self.check(&UNKNOWN_METHOD, &r, has_code(&r, -32004), detail(&r))
                    .await?
            }
            None => self.unreached(&UNKNOWN_METHOD).await?,
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
                    &["error"],
                )
                .await?
            {
                Some(r) => {
                    self.check(&UNADVERTISED_METHOD, &r, has_code(&r, -32003), detail(&r))
                        .await?
                }
                None => self.unreached(&UNADVERTISED_METHOD).await?,
            }
        }
        // #16, #17: one reply judged twice.
        match self
            .raw(&STRING_ID, json!("str-id-1"), "info", json!({}), &[])
            .await?
        {
            Some(r) => {
                let reply = r
                    .as_ref()
                    .ok()
                    .and_then(|x| x.json())
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(result) = reply.get("result").and_then(Value::as_object) {
                    self.observed
                        .info_declared
                        .push(("\"str-id-1\"", declaration_in(result)));
                }
                let id_ok = reply.get("id") == Some(&json!("str-id-1"));
                self.check(&STRING_ID, &r, id_ok, show(&reply)).await?;
                let version_ok = reply.get("jsonrpc") == Some(&json!("2.0"));
                self.check(&JSONRPC_VERSION, &r, version_ok, show(&reply))
                    .await?;
            }
            None => {
                self.unreached(&STRING_ID).await?;
                self.unreached(&JSONRPC_VERSION).await?;
            }
        }
        self.retrieval(&caps).await?;
        self.l2(&caps).await?;
        // `t.raw(shutdown)`: its answer is parsed but not read, so only a
        // missing answer, a non-2xx status or a body that is not JSON stops
        // the harness here, before its summary.
        if self.observed.stopped.is_none() {
            let sent = self
                .conv
                .call(&PROFILE_DIFFERENCES, json!(99), "shutdown", json!({}))
                .await?;
            if let Some(why) = harness_stops(&sent, &[]) {
                self.observed.stopped = Some(Stop {
                    at: "`shutdown` (id 99), after every check".to_owned(),
                    rule: None,
                    why,
                    exchange: exchange_of(&sent).clone(),
                    reported: true,
                });
            }
        }
        Ok(())
    }

    /// The harness raises while reading the answer `sent` got, at `rule`
    /// (which fails when `fails`, or is the first check not reached): every
    /// check from `rule` on is reported so.
    async fn stop_after(
        &mut self,
        sent: &Sent,
        rule: &'static Rule,
        fails: bool,
        why: String,
    ) -> Result<(), EngineError> {
        self.observed.stopped = Some(Stop {
            at: rule.id.to_owned(),
            rule: fails.then_some(rule),
            why,
            exchange: exchange_of(sent).clone(),
            reported: false,
        });
        let from = RULES.iter().position(|r| r.id == rule.id).unwrap_or(0);
        for rule in &RULES[from..] {
            self.unreached(rule).await?;
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
                &["result"],
            )
            .await?
        else {
            return self.unreached(&HITS_ARRAY).await;
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
                    &["result"],
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
                None => self.unreached(&MAX_K_CLAMPED).await?,
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
            match self
                .raw(rule, json!(id), "retrieve", params, &["error"])
                .await?
            {
                Some(r) => {
                    self.check(rule, &r, has_code(&r, -32602), detail(&r))
                        .await?
                }
                None => self.unreached(rule).await?,
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
                    &["result"],
                )
                .await?
            {
                Some(r) => {
                    let ok = result_map(&r).get("hits").is_some_and(Value::is_array);
                    self.check(&HYBRID, &r, ok, detail(&r)).await?;
                }
                None => self.unreached(&HYBRID).await?,
            }
        } else {
            self.skip(&HYBRID, "hybrid not advertised").await?;
        }
        if caps.contains_key("rerank") {
            let params = json!({"query": "test", "documents": ["a b c", "d e f"], "topN": 2});
            match self
                .raw(&RERANK, json!(10), "rerank", params, &["result"])
                .await?
            {
                Some(r) => {
                    self.observed.rerank_answer = Some((answer_words(&r), has_code(&r, -32001)));
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
                None => self.unreached(&RERANK).await?,
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
                &["result"],
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
            None => self.unreached(&INDEX_ADD_IDS).await?,
        }
        let doc = json!({"id": UPSERT_ID, "text": "conformance upsert probe document two updated"});
        match self
            .raw(
                &INDEX_UPSERT,
                json!(21),
                "index/add",
                json!({"documents": [doc]}),
                &["error"],
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
            None => self.unreached(&INDEX_UPSERT).await?,
        }
        let first = self
            .raw(
                &INDEX_DELETE_IDEMPOTENT,
                json!(22),
                "index/delete",
                json!({"ids": [UPSERT_ID]}),
                &[],
            )
            .await?;
        let second = match first {
            Some(_) => {
                self.raw(
                    &INDEX_DELETE_IDEMPOTENT,
                    json!(23),
                    "index/delete",
                    json!({"ids": [UPSERT_ID]}),
                    &["result"],
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
            None => self.unreached(&INDEX_DELETE_IDEMPOTENT).await?,
        }
        Ok(())
    }
}
