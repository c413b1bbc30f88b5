//! What every RCP check shares: the one conversation a run holds with the
//! target, a check's clock and evidence, the `initialize` result the later
//! levels read capabilities from, and the small helpers that turn replies into
//! words for a finding.

use super::client::{Failure, RcpClient, Reply};
use crate::suite::context::{EngineError, HistoryLookup, Reporter, Stopwatch};
use crate::suite::{Exchange, Finding, Outcome, Rule};
use crate::transport::TransportError;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::pin::Pin;

/// A query that matches nothing in particular; probes that only judge the
/// shape of an answer use it.
pub(crate) const PROBE_QUERY: &str = "protocheck conformance probe";

pub(crate) type Sent = Result<Reply, Failure>;

/// Where the initialize-result checks read their data from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InitSource {
    Initialize,
    /// The server was already initialized (process-wide) before this run.
    InfoAlreadyInitialized,
    /// The server accepted protocolVersion 0, which initialized this session.
    InfoAfterVersionZero,
}

/// The `initialize` result (or its stand-in read from `info`).
#[derive(Debug, Clone)]
pub(crate) struct Init {
    pub result: Map<String, Value>,
    pub exchange: Exchange,
    pub source: InitSource,
}

impl Init {
    pub fn capabilities(&self) -> Option<&Map<String, Value>> {
        self.result.get("capabilities").and_then(Value::as_object)
    }

    /// `supports(cap)`: the key is present and not null (spec §14). A `false`
    /// (which the schema allows for `citations`) is read as "not offered": a
    /// server that writes `false` does not mean "supported".
    pub fn supports(&self, cap: &str) -> bool {
        self.capability(cap).is_some()
    }

    /// The metadata of an offered capability.
    pub fn capability(&self, cap: &str) -> Option<&Value> {
        self.capabilities()
            .and_then(|c| c.get(cap))
            .filter(|v| !v.is_null() && **v != Value::Bool(false))
    }

    /// String values of the array `capabilities.<cap>.<field>`, if it is one.
    pub fn advertised_list(&self, cap: &str, field: &str) -> Option<Vec<String>> {
        let list = self.capability(cap)?.get(field)?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        )
    }

    /// `capabilities.<cap>.<field>` as a boolean flag (absent is false).
    pub fn flag(&self, cap: &str, field: &str) -> bool {
        self.capability(cap)
            .and_then(|c| c.get(field))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    pub fn read_from(&self) -> &'static str {
        match self.source {
            InitSource::Initialize => "",
            _ => " (read from `info`: this session was already initialized)",
        }
    }
}

/// One rule being checked: its clock and the exchanges that will be its evidence.
pub(crate) struct Check {
    pub rule: &'static Rule,
    watch: Stopwatch,
    pub evidence: Vec<Exchange>,
}

/// Most exchanges one finding carries as evidence.
const MAX_EVIDENCE: usize = 8;

impl Check {
    pub fn new(rule: &'static Rule) -> Self {
        Self {
            rule,
            watch: Stopwatch::start(),
            evidence: Vec::new(),
        }
    }

    pub fn saw(&mut self, sent: &Sent) {
        self.keep(exchange_of(sent).clone());
    }

    /// Keeps an exchange as evidence, up to a bound (a rule may send many).
    pub fn keep(&mut self, exchange: Exchange) {
        if self.evidence.len() < MAX_EVIDENCE {
            self.evidence.push(exchange);
        }
    }

    pub fn finding(self, outcome: Outcome, message: impl Into<String>) -> Finding {
        Finding {
            rule_id: self.rule.id.to_owned(),
            outcome,
            message: message.into(),
            evidence: self.evidence,
            duration_ms: self.watch.ms(),
        }
    }

    /// Pass when `problems` is empty, the rule's failure outcome otherwise.
    pub fn verdict(self, problems: &[String], passed: impl Into<String>, why: &str) -> Finding {
        if problems.is_empty() {
            let message = passed.into();
            self.finding(Outcome::Pass, message)
        } else {
            let outcome = self.rule.on_failure;
            let shown: Vec<&str> = problems
                .iter()
                .take(SHOWN_PROBLEMS)
                .map(String::as_str)
                .collect();
            let more = if problems.len() > SHOWN_PROBLEMS {
                format!(" (and {} more)", problems.len() - SHOWN_PROBLEMS)
            } else {
                String::new()
            };
            self.finding(outcome, format!("{}{more}; {why}", shown.join("; ")))
        }
    }
}

/// How many problems a failing finding names one by one: enough for every
/// probe of a method family's parameters to be named (RCP-L0-020 sends about
/// ten to a server that takes everything), few enough to stay readable.
const SHOWN_PROBLEMS: usize = 12;

pub(crate) fn exchange_of(sent: &Sent) -> &Exchange {
    match sent {
        Ok(reply) => &reply.exchange,
        Err(failure) => &failure.exchange,
    }
}

/// "was answered with error -32601 (MethodNotFound)" or "got no answer (<error>)".
pub(crate) fn outcome_words(sent: &Sent) -> String {
    match sent {
        Ok(reply) => format!("was answered with {}", reply.describe()),
        Err(failure) => format!("got no answer ({})", failure.error),
    }
}

pub(crate) fn code_of(sent: &Sent) -> Option<i64> {
    sent.as_ref().ok().and_then(Reply::error_code)
}

pub(crate) fn result_of(sent: &Sent) -> Option<&Value> {
    sent.as_ref().ok().and_then(Reply::result)
}

/// A JSON value as a finding shows it, bounded.
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    let kind = match value {
        Value::String(_) => " (a string)",
        Value::Number(_) => " (a number)",
        _ => "",
    };
    if text.len() > 80 {
        let cut = crate::transport::excerpt(text.as_bytes(), 80).0;
        format!("{cut}…{kind}")
    } else {
        format!("{text}{kind}")
    }
}

/// Same JSON type and value; numbers compare by value (7 and 7.0 are one number).
pub(crate) fn same_id(sent: &Value, got: &Value) -> bool {
    match (sent, got) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (a.as_u64(), b.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => a.as_f64().zip(b.as_f64()).is_some_and(|(x, y)| x == y),
            },
        },
        (a, b) => a == b,
    }
}

/// Pairs a reply with its request even when the id's type was changed.
pub(crate) fn loose_id(sent: &Value, got: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    same_id(sent, got) || text(sent) == text(got)
}

pub(crate) fn client_info() -> Value {
    json!({"name": "protocheck", "version": env!("CARGO_PKG_VERSION")})
}

/// The run's one conversation with the target.
pub(crate) struct Conversation<'a> {
    pub client: &'a mut RcpClient,
    pub reporter: &'a mut Reporter,
    /// The rule during which the target stopped answering for good; later checks
    /// that need the target are skipped rather than failed (no cascades).
    pub gone_during: Option<&'static str>,
    /// What earlier runs saw of this target's handshake (decision 3).
    pub history: HistoryLookup,
    /// What RCP-OUT-006's own probe (over HTTP: a `retrieve` asking for an
    /// event stream without a progressToken) got back, for its finding.
    pub tokenless_stream: Option<String>,
    /// What RCP-OUT-006's second session (an `initialize` without the `log`
    /// capability) saw, for its finding.
    pub second_session: Option<SecondSession>,
}

/// RCP-OUT-006's second session: the unsolicited notifications it got,
/// what was sent, and the exchanges that show it.
#[derive(Debug, Clone, Default)]
pub(crate) struct SecondSession {
    pub problems: Vec<String>,
    pub words: String,
    pub evidence: Vec<Exchange>,
}

impl<'a> Conversation<'a> {
    pub fn new(client: &'a mut RcpClient, reporter: &'a mut Reporter) -> Self {
        Self {
            client,
            reporter,
            gone_during: None,
            history: HistoryLookup::default(),
            tokenless_stream: None,
            second_session: None,
        }
    }

    pub async fn emit(&mut self, finding: Finding) -> Result<(), EngineError> {
        self.reporter.emit(finding).await
    }

    pub async fn skip(
        &mut self,
        rule: &'static Rule,
        reason: impl Into<String>,
    ) -> Result<(), EngineError> {
        self.emit(Check::new(rule).finding(Outcome::Skip, reason))
            .await
    }

    /// The skip reason when the target is gone.
    pub fn gone(&self) -> Option<String> {
        self.gone_during
            .map(|id| format!("not verified: the server stopped answering during {id}"))
    }

    /// Classifies a send: a failure before anything ever came back ends the run
    /// (the target is unreachable, not non-conformant); a failure showing the
    /// target has gone is remembered so later checks skip instead of cascading.
    pub fn sent(&mut self, rule: &'static Rule, sent: Sent) -> Result<Sent, EngineError> {
        if let Err(failure) = &sent {
            if !self.client.has_answered() {
                return Err(EngineError::from_transport(failure.error.clone()));
            }
            let gone =
                self.client.is_closed() || matches!(failure.error, TransportError::Connect(_));
            if gone && self.gone_during.is_none() {
                self.gone_during = Some(rule.id);
            }
        }
        Ok(sent)
    }

    pub async fn call(
        &mut self,
        rule: &'static Rule,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Sent, EngineError> {
        let sent = self.client.call(id, method, params).await;
        self.sent(rule, sent)
    }

    pub async fn request(
        &mut self,
        rule: &'static Rule,
        method: &str,
        params: Value,
    ) -> Result<Sent, EngineError> {
        let id = self.client.next_id();
        self.call(rule, id, method, params).await
    }

    /// Sends requests of one rule that do not depend on one another (a
    /// method and params each) and returns what each got, in the order
    /// given: side by side where the transport allows it (see
    /// [`RcpClient::call_all`]), one after another otherwise. It stops at the
    /// first failure that shows the target gone: going one after another,
    /// no later request is sent; side by side, the later answers are not
    /// kept, as if they had not been sent.
    pub async fn request_all(
        &mut self,
        rule: &'static Rule,
        requests: Vec<(&str, Value)>,
    ) -> Result<Vec<Sent>, EngineError> {
        let requests = requests
            .into_iter()
            .map(|(method, params)| (rule, method, params))
            .collect();
        self.request_each(requests).await
    }

    /// [`request_all`](Self::request_all) with the ids given (an id, a
    /// method and params each), for probes that choose the id's class.
    pub async fn call_all(
        &mut self,
        rule: &'static Rule,
        calls: Vec<(Value, String, Value)>,
    ) -> Result<Vec<Sent>, EngineError> {
        let mut out = Vec::with_capacity(calls.len());
        if self.gone().is_some() {
            return Ok(out);
        }
        for sent in self.client.call_all(calls).await {
            out.push(self.sent(rule, sent)?);
            if self.gone().is_some() {
                break;
            }
        }
        Ok(out)
    }

    /// [`request_all`](Self::request_all) for requests of several rules (a
    /// rule, a method and params each): a failure that shows the target
    /// gone is the rule's whose request it was.
    pub async fn request_each(
        &mut self,
        requests: Vec<(&'static Rule, &str, Value)>,
    ) -> Result<Vec<Sent>, EngineError> {
        let mut out = Vec::with_capacity(requests.len());
        if !self.client.side_by_side() {
            for (rule, method, params) in requests {
                if self.gone().is_some() {
                    break;
                }
                out.push(self.request(rule, method, params).await?);
            }
            return Ok(out);
        }
        if self.gone().is_some() {
            return Ok(out);
        }
        let rules: Vec<&'static Rule> = requests.iter().map(|(rule, ..)| *rule).collect();
        let calls = requests
            .into_iter()
            .map(|(_, method, params)| (self.client.next_id(), method.to_owned(), params))
            .collect();
        for (rule, sent) in rules.into_iter().zip(self.client.call_all(calls).await) {
            out.push(self.sent(rule, sent)?);
            if self.gone().is_some() {
                break;
            }
        }
        Ok(out)
    }
}

/// The request ids set aside for each lane of [`Conversation::side_by_side`]:
/// a lane numbers its requests from the run's counter at the time, plus this
/// many times its place, so that ids stay unique in the session and are the
/// same on every run.
const LANE_IDS: u64 = 10_000;

/// A step of a conversation run by [`Conversation::side_by_side`].
pub(crate) type Step<'c> = Pin<Box<dyn Future<Output = Result<(), EngineError>> + Send + 'c>>;

/// One lane of [`Conversation::side_by_side`]: a client and a reporter of its
/// own, and what its conversation learnt.
struct Lane {
    client: RcpClient,
    reporter: Reporter,
    gone_during: Option<&'static str>,
    tokenless_stream: Option<String>,
    result: Result<(), EngineError>,
}

impl Conversation<'_> {
    /// Runs `steps` (each `run(conversation, context, step)`) as if one after
    /// another, in the order given: their findings are emitted in that
    /// order, what they sent and saw joins the run's in that order, and once
    /// one finds the target gone the later ones are skipped with the reason.
    /// Where the transport allows it ([`RcpClient::side_by_side`]: over HTTP,
    /// when no request depends on the connection it goes on) they go side by
    /// side, each on a connection of its own, at most the run's concurrency
    /// of requests in flight in all; so they must need none of one another's
    /// answers. The `Step` a step returns borrows the conversation and the
    /// context for as long as it runs.
    pub async fn side_by_side<C: Sync + ?Sized, S: Copy + Send>(
        &mut self,
        context: &C,
        steps: &[S],
        run: for<'c, 'a> fn(&'c mut Conversation<'a>, &'c C, S) -> Step<'c>,
    ) -> Result<(), EngineError> {
        self.lanes(context, steps, run, false).await
    }

    /// [`side_by_side`](Self::side_by_side) before `initialize`, where any
    /// connection serves: every connection is uninitialized alike then,
    /// whatever the server's session model, so the steps go side by side
    /// over HTTP unless the `reference` profile reads as the harness does.
    pub async fn side_by_side_before_initialize<C: Sync + ?Sized, S: Copy + Send>(
        &mut self,
        context: &C,
        steps: &[S],
        run: for<'c, 'a> fn(&'c mut Conversation<'a>, &'c C, S) -> Step<'c>,
    ) -> Result<(), EngineError> {
        self.lanes(context, steps, run, true).await
    }

    async fn lanes<C: Sync + ?Sized, S: Copy + Send>(
        &mut self,
        context: &C,
        steps: &[S],
        run: for<'c, 'a> fn(&'c mut Conversation<'a>, &'c C, S) -> Step<'c>,
        any_connection: bool,
    ) -> Result<(), EngineError> {
        let history = self.history.clone();
        let side_by_side =
            steps.len() > 1 && self.gone().is_none() && self.client.side_by_side_on(any_connection);
        let clients: Option<Vec<RcpClient>> = if side_by_side {
            steps
                .iter()
                .map(|_| {
                    let base = self.client.reserve_ids(LANE_IDS);
                    self.client.lane_client(base, any_connection)
                })
                .collect()
        } else {
            None
        };
        let Some(clients) = clients else {
            for step in steps {
                run(self, context, *step).await?;
            }
            return Ok(());
        };
        let lanes =
            futures::future::join_all(clients.into_iter().zip(steps).map(|(mut client, step)| {
                let history = history.clone();
                async move {
                    let mut reporter = Reporter::collecting();
                    let mut conv = Conversation::new(&mut client, &mut reporter);
                    conv.history = history;
                    let result = run(&mut conv, context, *step).await;
                    let (gone_during, tokenless_stream) = (conv.gone_during, conv.tokenless_stream);
                    Lane {
                        client,
                        reporter,
                        gone_during,
                        tokenless_stream,
                        result,
                    }
                }
            }))
            .await;
        // A lane whose request got no answer in time may have met a server
        // that serves one connection at a time: nothing of the lanes is
        // kept, and the steps go again, one after another, on the run's
        // connection (see `RcpClient::crowd`).
        if lanes.iter().any(|lane| lane.client.timed_out()) {
            drop(lanes);
            self.client.crowd();
            for step in steps {
                run(self, context, *step).await?;
            }
            return Ok(());
        }
        for lane in lanes {
            self.client.absorb(lane.client);
            let findings = lane.reporter.into_findings();
            match self.gone() {
                // Gone during an earlier step: one after another, this one
                // would have skipped its rules.
                Some(reason) => {
                    for finding in findings {
                        let skipped = Finding {
                            outcome: Outcome::Skip,
                            message: reason.clone(),
                            evidence: Vec::new(),
                            duration_ms: 0,
                            ..finding
                        };
                        self.emit(skipped).await?;
                    }
                }
                None => {
                    for finding in findings {
                        self.emit(finding).await?;
                    }
                }
            }
            lane.result?;
            if self.gone_during.is_none() {
                self.gone_during = lane.gone_during;
            }
            if lane.tokenless_stream.is_some() {
                self.tokenless_stream = lane.tokenless_stream;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_compare_by_type_and_value() {
        assert!(same_id(&json!(7), &json!(7)));
        assert!(same_id(&json!(7), &json!(7.0)));
        assert!(same_id(
            &json!(9_007_199_254_740_991_u64),
            &json!(9_007_199_254_740_991_u64)
        ));
        assert!(!same_id(&json!(7), &json!("7")));
        assert!(!same_id(&json!("017"), &json!(17)));
        assert!(same_id(&json!("017"), &json!("017")));
    }
}
