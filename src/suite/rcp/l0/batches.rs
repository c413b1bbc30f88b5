//! Batch members read one by one (spec §11): "Batching composes with
//! capability gating and cancellation exactly as for singleton requests", so
//! a member of a batch is judged by the rule that judges the same request
//! alone (the gate, the `ping` nonce, the id echo), and the batch's shape
//! (one entry per request, none for a notification, a -32600 entry for a
//! malformed member) by RCP-L0-030.

use super::*;

/// The entries of a batch reply, when it is an array.
pub(super) fn members(sent: &Sent) -> Option<&Vec<Value>> {
    sent.as_ref()
        .ok()
        .and_then(Reply::json)
        .and_then(Value::as_array)
}

/// The entry answering the member sent with `id`, paired loosely (7 and "7"
/// match: the exact echo is RCP-L0-024/025's concern).
pub(super) fn member<'a>(entries: &'a [Value], id: &Value) -> Option<&'a Value> {
    entries
        .iter()
        .find(|m| m.get("id").is_some_and(|got| loose_id(id, got)))
}

/// An entry in words, for a finding.
pub(super) fn entry_words(entry: &Value) -> String {
    match entry.pointer("/error/code").and_then(Value::as_i64) {
        Some(code) => format!("got error {code}"),
        None if entry.get("result").is_some() => {
            let shown = crate::transport::excerpt(entry.to_string().as_bytes(), 160).0;
            format!("got a result ({shown})")
        }
        None => format!(
            "got {}",
            crate::transport::excerpt(entry.to_string().as_bytes(), 160).0
        ),
    }
}

/// The shape problems of a batch reply (RCP-L0-030): `sent` is the batch's
/// members as sent; every member with an `id` needs exactly one entry, a
/// notification none, and `malformed` more entries are -32600 errors (their
/// `id` null, or the id the member carried, which a server that could read
/// it may echo).
pub(super) fn shape_problems(
    what: &str,
    frames: &[Value],
    malformed: usize,
    sent: &Sent,
) -> Vec<String> {
    let Some(entries) = members(sent) else {
        return vec![format!(
            "{what} {}; a batch MUST get back an array with one entry per request",
            outcome_words(sent)
        )];
    };
    let ids: Vec<&Value> = frames
        .iter()
        .filter(|f| f.get("method").is_some_and(Value::is_string))
        .filter_map(|f| f.get("id"))
        .collect();
    let mut problems = Vec::new();
    let unanswered: Vec<String> = ids
        .iter()
        .filter(|id| {
            entries
                .iter()
                .filter(|m| m.get("id").is_some_and(|got| loose_id(id, got)))
                .count()
                != 1
        })
        .map(|id| id.to_string())
        .collect();
    let refused = entries
        .iter()
        .filter(|m| m.pointer("/error/code").and_then(Value::as_i64) == Some(-32600))
        .filter(|m| {
            !ids.iter()
                .any(|id| m.get("id").is_some_and(|g| loose_id(id, g)))
        })
        .count();
    if !unanswered.is_empty() || entries.len() != ids.len() + malformed || refused != malformed {
        let shown: Vec<String> = entries.iter().map(Value::to_string).collect();
        problems.push(format!(
            "{what} was answered with [{}]; it needs exactly one entry per request (ids {}){}{}",
            crate::transport::excerpt(shown.join(", ").as_bytes(), 400).0,
            ids.iter()
                .map(|id| id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if malformed > 0 {
                format!(", one -32600 entry for each of its {malformed} malformed member(s)")
            } else {
                String::new()
            },
            if frames
                .iter()
                .any(|f| f.get("id").is_none() && f.get("method").is_some())
            {
                " and none for its notifications"
            } else {
                ""
            }
        ));
    }
    problems
}

/// RCP-L0-024/025 over a batch reply: each entry paired (loosely) with a
/// member whose id is of the kind judged must carry that id unchanged.
/// Returns how many entries were judged and the problems found.
pub(crate) fn batch_id_problems(reply: &Reply, kind: fn(&Value) -> bool) -> (usize, Vec<String>) {
    let Ok(Value::Array(frames)) = serde_json::from_str::<Value>(&reply.exchange.request.body)
    else {
        return (0, Vec::new());
    };
    let Some(Value::Array(entries)) = reply.json() else {
        return (0, Vec::new());
    };
    let mut judged = 0;
    let mut problems = Vec::new();
    for frame in &frames {
        let Some(id) = frame.get("id").filter(|id| kind(id)) else {
            continue;
        };
        let Some(got) = member(entries, id).and_then(|m| m.get("id")) else {
            continue;
        };
        judged += 1;
        if !same_id(id, got) {
            problems.push(format!(
                "inside a batch, the entry for `{}` with id {id} carried {}",
                frame.get("method").and_then(Value::as_str).unwrap_or("?"),
                show(got)
            ));
        }
    }
    (judged, problems)
}

/// A `ping` reply (alone or a batch entry) judged for its nonce echo
/// (§14.1 rule 1): `Ok` when the result carries the nonce unchanged.
pub(super) fn nonce_echoed(nonce: &Value, result: Option<&Value>) -> Result<(), String> {
    match result {
        Some(result) => match result.get("nonce") {
            Some(got) if same_id(nonce, got) => Ok(()),
            Some(got) => Err(format!("echoed {}", show(got))),
            None => Err("was answered without a `nonce`".to_owned()),
        },
        None => Err("was not answered with a result".to_owned()),
    }
}

impl Conversation<'_> {
    /// RCP-L0-030's batches beside the ones `framing` sends: the batch sent
    /// before `initialize` (judged for its shape here, its members by the
    /// rules of the same requests alone), and after `initialize` a batch
    /// whose malformed members are objects (§11: "A member that is not a
    /// well-formed request yields a `-32600` entry with `id: null`; well-formed
    /// members are still processed"): one without `method`, one whose
    /// `method` is not a string, beside a `ping` and an `info` notification.
    /// Returns the problems and the exchanges, for [`Self::batch`].
    pub(super) async fn batch_members(
        &mut self,
        before: Option<&(Vec<Value>, Sent)>,
    ) -> Result<(Vec<String>, Vec<Exchange>), EngineError> {
        let mut problems = Vec::new();
        let mut evidence = Vec::new();
        if let Some((frames, sent)) = before {
            evidence.push(exchange_of(sent).clone());
            problems.extend(shape_problems(
                "a batch sent before `initialize` (a `retrieve` and two `ping`s)",
                frames,
                0,
                sent,
            ));
        }
        if self.gone().is_none() {
            let id = self.client.next_id();
            let frames = vec![
                json!({"jsonrpc": "2.0", "id": "protocheck-no-method", "params": {}}),
                json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"nonce": 5}}),
                json!({"jsonrpc": "2.0", "method": "info", "params": {}}),
                json!({"jsonrpc": "2.0", "id": "protocheck-method-not-a-string", "method": 5, "params": {}}),
            ];
            let sent = self.client.send_batch("ping", frames.clone()).await;
            let sent = self.sent(&BATCH, sent)?;
            evidence.push(exchange_of(&sent).clone());
            problems.extend(shape_problems(
                "a batch of a `ping`, an `info` notification and two malformed members (an object without \
                 `method`, and one whose `method` is the number 5)",
                &frames,
                2,
                &sent,
            ));
        }
        Ok((problems, evidence))
    }
}
