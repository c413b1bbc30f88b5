//! Index writes (spec §7.10, §7.11). They change the target, so they run only
//! when the run allows writes (decision 7; off by default: no side effects on
//! a stranger's server), only with ids under `protocheck-probe/`, and what
//! they add is deleted again.

use super::*;

pub const INDEX_ADD: Rule = must(
    "RCP-OUT-007",
    "`index/add` returns one id per document, in order",
    "RCP/1 §7.10",
)
.help(
    "Only when the run allows writes (off by default) and `index.writable` is true, protocheck \
     sends `index/add` with two documents whose ids start with `protocheck-probe/` (with `chunk` \
     and `contextual` when `index` offers them, and an idempotency key), and expects `ids`, those \
     two ids in order. It replays the request under the same key (the same ids must come back), \
     re-adds the first document with another text (an upsert, or -32016), and deletes the \
     documents again afterwards.",
    "The server returns a count or a job id instead of `ids`, returns one id per chunk rather \
     than one per document, or returns ids that are not strings (numbers, or objects carrying an \
     `id`).",
    "Answer `index/add` with `{\"ids\": […]}`, one string per document in the order the documents \
     were sent: the id the client gave, or the one the server assigned when it gave none.",
);
pub const INDEX_DELETE: Rule = must(
    "RCP-OUT-008",
    "`index/delete` counts what it removed, and a repeat removes nothing",
    "RCP/1 §7.11",
)
.help(
    "After adding two probe documents, protocheck sends `index/delete` with their ids and expects \
     `deleted: 2`, then sends the same ids again and expects `deleted: 0`. Like `index/add`, it \
     runs only when writes are allowed and `index.writable` is true.",
    "The server reports the number of ids requested rather than removed (2 again on the repeat), \
     counts chunks rather than documents, refuses absent ids with an error, or omits `deleted`.",
    "Return `{\"deleted\": n}` with n the number of documents actually removed, each counted once \
     whatever its chunks, and answer a delete of ids that are absent with `deleted: 0`, not an \
     error.",
);

/// The prefix of every id a probe writes (decision 7).
pub(crate) const PROBE_ID_PREFIX: &str = "protocheck-probe/";

/// The skip reason when the run does not allow writes.
pub(crate) const WRITES_OFF: &str = "not run: this probe writes to the target, and the run option `allow_writes` is off (the default)";

impl Conversation<'_> {
    pub(super) async fn writes(
        &mut self,
        init: Option<&Init>,
        options: Options,
    ) -> Result<(), EngineError> {
        let reason = match (self.blocked(init), init) {
            (Some(reason), _) => Some(reason),
            (None, Some(init)) if !init.supports("index") => {
                Some("`index` is not advertised".to_owned())
            }
            (None, Some(init)) if !init.flag("index", "writable") => {
                Some("`index.writable` is not true, so `index/add` is not offered".to_owned())
            }
            (None, None) => Some(super::super::l0::no_init()),
            _ if !options.allow_writes => Some(WRITES_OFF.to_owned()),
            _ => None,
        };
        if let Some(reason) = reason {
            self.skip(&INDEX_ADD, reason.clone()).await?;
            return self.skip(&INDEX_DELETE, reason).await;
        }
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let ids = [
            format!("{PROBE_ID_PREFIX}{nonce}-1"),
            format!("{PROBE_ID_PREFIX}{nonce}-2"),
        ];
        let flags = init.map_or((false, false), |i| {
            (
                i.capability("index")
                    .and_then(|x| x.get("chunking"))
                    .is_some_and(|v| !v.is_null() && *v != Value::Bool(false)),
                i.capability("index")
                    .and_then(|x| x.get("contextual"))
                    .is_some_and(|v| !v.is_null() && *v != Value::Bool(false)),
            )
        });
        match self.index_add(&ids, &nonce, flags).await? {
            Some(added) => self.index_delete(&ids, added).await,
            None => {
                // Nothing to judge a delete against, but whatever may have
                // been stored is removed all the same (decision 7).
                let _ = self
                    .request(&INDEX_DELETE, "index/delete", json!({"ids": ids}))
                    .await?;
                let reason = format!("not verified: {} failed", INDEX_ADD.id);
                self.skip(&INDEX_DELETE, reason).await
            }
        }
    }

    /// Adds two probe documents (with `chunk`/`contextual` when the server
    /// offers them, and an idempotency key), replays the request under the
    /// same key, then re-adds the first document with another text (an
    /// upsert, or -32016). Returns the ids the server says it stored, `None`
    /// when it answered no `ids` at all.
    async fn index_add(
        &mut self,
        ids: &[String; 2],
        nonce: &str,
        (chunking, contextual): (bool, bool),
    ) -> Result<Option<Vec<String>>, EngineError> {
        let rule = &INDEX_ADD;
        let mut check = Check::new(rule);
        let documents = json!([
            {"id": ids[0], "text": format!("protocheck probe document one {nonce}"), "meta": {"x-protocheck": true}},
            {"id": ids[1], "text": format!("protocheck probe document two {nonce}")},
        ]);
        let mut params = json!({"documents": documents,
            "_meta": {"idempotencyKey": format!("protocheck-probe-{nonce}")}});
        if chunking {
            params["chunk"] = json!(true);
        }
        if contextual {
            params["contextual"] = json!(true);
        }
        let sent = self.request(rule, "index/add", params.clone()).await?;
        check.saw(&sent);
        let ids_of = |sent: &crate::suite::rcp::conversation::Sent| -> Option<Vec<String>> {
            result_of(sent)
                .and_then(|r| r.get("ids"))
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|id| id.as_str().map(str::to_owned)).collect())
        };
        let returned = ids_of(&sent);
        let Some(got) = &returned else {
            let finding = check.finding(
                rule.on_failure,
                format!(
                    "`index/add` of 2 documents {} without an `ids` array of strings (§7.10)",
                    outcome_words(&sent)
                ),
            );
            self.emit(finding).await?;
            return Ok(None);
        };
        let mut problems = Vec::new();
        if got.as_slice() != ids.as_slice() {
            problems.push(format!(
                "`index/add` of 2 documents with the ids {} returned {}; `ids` has one entry per document, in order, \
                 and a document's explicit `id` is the one it is stored under (§7.10)",
                show(&json!(ids)),
                show(&json!(got))
            ));
        }
        // The same request under the same idempotency key: the same answer.
        let replay = self.request(rule, "index/add", params).await?;
        check.saw(&replay);
        match ids_of(&replay) {
            Some(again) if again == *got => {}
            _ => problems.push(format!(
                "the same `index/add` replayed under its `_meta.idempotencyKey` {}, not the ids {} again",
                outcome_words(&replay),
                show(&json!(got))
            )),
        }
        // An explicit id again: an upsert (no duplicate, no failure) or -32016.
        let upsert = json!({"documents": [
            {"id": ids[0], "text": format!("protocheck probe document one, replaced {nonce}")}
        ]});
        let again = self.request(rule, "index/add", upsert).await?;
        check.saw(&again);
        let upserted = match (ids_of(&again), code_of(&again)) {
            (Some(one), _) if one == [ids[0].clone()] => "replaced it (an upsert)",
            (_, Some(-32016)) => "refused it with -32016 (Conflict)",
            _ => {
                problems.push(format!(
                    "re-adding the document {} {}; an explicit `id` that exists is an upsert (`ids` naming it) \
                     or refused with -32016 (§7.10)",
                    show(&json!(ids[0])),
                    outcome_words(&again)
                ));
                ""
            }
        };
        let finding = check.verdict(
            &problems,
            format!(
                "`index/add` of 2 documents{} returned their ids in order, {}, the same request replayed under its \
                 idempotency key returned them again, and re-adding the first {upserted}",
                match (chunking, contextual) {
                    (true, true) => " with `chunk` and `contextual`",
                    (true, false) => " with `chunk`",
                    (false, true) => " with `contextual`",
                    (false, false) => "",
                },
                show(&json!(got))
            ),
            "`index/add` returns one id per document, in input order; an explicit id is an upsert or -32016 (§7.10)",
        );
        self.emit(finding).await?;
        Ok(returned)
    }

    /// Deletes the probe documents (what was sent and what the server named),
    /// then deletes them again.
    async fn index_delete(
        &mut self,
        ids: &[String; 2],
        added: Vec<String>,
    ) -> Result<(), EngineError> {
        let rule = &INDEX_DELETE;
        let mut check = Check::new(rule);
        let mut targets: Vec<String> = ids.to_vec();
        for id in added {
            // Only ids under the probe prefix are ever deleted (decision 7).
            if id.starts_with(PROBE_ID_PREFIX) && !targets.contains(&id) {
                targets.push(id);
            }
        }
        let mut problems = Vec::new();
        let mut counts = Vec::new();
        for attempt in ["first", "repeated"] {
            let sent = self
                .request(rule, "index/delete", json!({"ids": targets}))
                .await?;
            check.saw(&sent);
            let deleted = result_of(&sent)
                .and_then(|r| r.get("deleted"))
                .and_then(Value::as_u64);
            match (attempt, deleted) {
                (_, None) => problems.push(format!(
                    "the {attempt} `index/delete` {} without a `deleted` count",
                    outcome_words(&sent)
                )),
                ("first", Some(n)) if n != 2 => problems.push(format!(
                    "deleting the 2 documents just added reported `deleted: {n}`; it counts what was actually removed"
                )),
                ("repeated", Some(n)) if n != 0 => problems.push(format!(
                    "deleting the same ids again reported `deleted: {n}`; absent ids remove nothing"
                )),
                _ => {}
            }
            counts.extend(deleted);
        }
        let finding = check.verdict(
            &problems,
            format!("`index/delete` reported {} then {}", counts.first().unwrap_or(&0), counts.get(1).unwrap_or(&0)),
            "`deleted` is the count actually removed: 0 on a repeat, never an error for absent ids (§7.11)",
        );
        self.emit(finding).await
    }
}
