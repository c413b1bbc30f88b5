//! MUSTs of RCP/1 that §14 does not name in any level (protocheck decision
//! 10): the HTTP path/body match, stdio framing tolerance, silence on
//! notifications over HTTP, the HTTP status of JSON-RPC replies, the schema
//! shape of every result, notifications nobody asked for, and the index
//! writes. They are checked and reported as "spec violations outside the
//! levels": a violation never lowers the certified level, but the verdict
//! counts it.

use super::conversation::{
    Check, Conversation, Init, PROBE_QUERY, code_of, outcome_words, result_of, show,
};
use crate::suite::context::EngineError;
use crate::suite::{Outcome, Rule, SpecLevel};
use serde_json::{Value, json};

mod content;
mod transport;
mod writes;

pub use content::{RESULT_SHAPES, UNSOLICITED};
pub use transport::{HTTP_NOTIFICATION_STATUS, HTTP_STATUS_200, PATH_MATCHES_BODY, STDIO_FRAMING};
pub(crate) use writes::WRITES_OFF;
pub use writes::{INDEX_ADD, INDEX_DELETE};

const fn must(id: &'static str, title: &'static str, spec_ref: &'static str) -> Rule {
    Rule {
        id,
        title,
        level: SpecLevel::Must,
        on_failure: Outcome::Fail,
        spec_ref,
        group: "outside",
        help: crate::suite::Help::NONE,
    }
}

/// The catalogue of MUSTs outside the levels, by id.
pub static RULES: &[Rule] = &[
    PATH_MATCHES_BODY,
    STDIO_FRAMING,
    HTTP_NOTIFICATION_STATUS,
    HTTP_STATUS_200,
    RESULT_SHAPES,
    UNSOLICITED,
    INDEX_ADD,
    INDEX_DELETE,
];

/// The run options the rules here depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// Probes that write to the target may run (decision 7; off by default).
    pub allow_writes: bool,
}

/// The skip reason of a rule that applies to one transport only.
const HTTP_ONLY: &str = "applies to HTTP targets only (spec §5.2)";
const STDIO_ONLY: &str = "applies to stdio targets only (spec §5.1)";

/// Runs the probes that need the session, before the conversation ends.
pub(crate) async fn probe(
    conv: &mut Conversation<'_>,
    init: Option<&Init>,
    options: Options,
) -> Result<(), EngineError> {
    // These three need none of one another's answers: side by side where
    // the session allows it. The writes go alone, after them.
    conv.side_by_side(&init, &Probe::ALL, |conv, init, probe| {
        Box::pin(async move {
            match probe {
                Probe::PathMatchesBody => conv.path_matches_body(*init).await,
                Probe::StreamWithoutToken => conv.stream_without_token(*init).await,
                Probe::StdioFraming => conv.stdio_framing().await,
            }
        })
    })
    .await?;
    conv.result_requests(init).await?;
    conv.second_session(init).await?;
    conv.writes(init, options).await
}

/// The probes of [`probe`] that go side by side, in the order their
/// findings are emitted.
#[derive(Debug, Clone, Copy)]
enum Probe {
    PathMatchesBody,
    StreamWithoutToken,
    StdioFraming,
}

impl Probe {
    const ALL: [Self; 3] = [
        Self::PathMatchesBody,
        Self::StreamWithoutToken,
        Self::StdioFraming,
    ];
}

/// Judges, over the whole conversation, the rules that read every exchange;
/// runs after `shutdown`.
pub(crate) async fn judge(conv: &mut Conversation<'_>) -> Result<(), EngineError> {
    conv.http_notification_status().await?;
    conv.http_status_200().await?;
    conv.result_shapes().await?;
    conv.unsolicited().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_in_order() {
        for (n, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("RCP-OUT-{:03}", n + 1));
            assert_eq!(rule.group, "outside");
        }
    }
}
