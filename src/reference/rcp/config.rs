//! The reference server's configuration: the fault switch of every rule, the
//! correct variants a server may also choose, and how both are parsed from
//! the command line's `--break` and `--variant`.

use super::filter;
use crate::suite::Rule;
use crate::suite::rcp::{harness, l0, l1, l2, outside};
use std::collections::BTreeSet;
use std::time::Duration;

/// The misbehaviour each fault switch turns on, by the rule it breaks.
static FAULTS: &[(&Rule, &str)] = &[
    (
        &l0::INFO_BEFORE_INIT,
        "`info` before `initialize` answers -32001",
    ),
    (
        &l0::PING_NUMERIC_NONCE,
        "`ping` echoes a numeric nonce as a string",
    ),
    (&l0::PING_STRING_NONCE, "`ping` drops a string nonce"),
    (
        &l0::GATED_BEFORE_INIT,
        "gated methods answer before `initialize`",
    ),
    (
        &l0::NOTIFY_GATED,
        "notifications for gated methods get an error reply",
    ),
    (
        &l0::NOTIFY_OPEN,
        "notifications for `info`, `ping`, `initialize`, `shutdown` get an error reply",
    ),
    (
        &l0::NOTIFY_UNKNOWN,
        "notifications for undefined methods get -32004",
    ),
    (
        &l0::CANCEL_UNKNOWN_ID,
        "`notifications/cancel` for an unknown id gets -32015",
    ),
    (
        &l0::VERSION_ZERO_REJECTED,
        "`initialize` accepts protocolVersion 0 and negotiates 1",
    ),
    (
        &l0::FAILED_HANDSHAKE_UNINITIALIZED,
        "a failed `initialize` opens the gated methods",
    ),
    (
        &l0::INITIALIZE_NEGOTIATES,
        "`initialize` negotiates a version above the client's",
    ),
    (
        &l0::RETRIEVAL_CAPABILITY,
        "no capability is advertised (and `retrieve` is refused with -32003)",
    ),
    (&l0::SERVER_IDENTITY, "`server.name` is empty"),
    (&l0::DECLARES_LEVEL, "`_meta.conformance` is missing"),
    (
        &l0::REPEAT_INIT_REJECTED,
        "a repeated `initialize` identical to the handshake succeeds again (one with other params is refused)",
    ),
    (
        &l0::TOLERATES_UNKNOWN,
        "unknown params fields, capability keys and `_meta` keys get -32602",
    ),
    (
        &l0::UNKNOWN_METHOD,
        "undefined methods get -32601 instead of -32004",
    ),
    (
        &l0::UNADVERTISED_METHOD,
        "unadvertised methods get -32004 instead of -32003",
    ),
    (
        &l0::UNSUPPORTED_OPTION,
        "unadvertised option values are served, not refused: retrieve unit, modality and fusion, rerank and transform methods, graph ops, embed/multi encodings and image inputs",
    ),
    (
        &l0::MALFORMED_PARAMS,
        "`retrieve` coerces a string `k`, clamps a negative one and reads a missing `query` as empty; `graph` reads a missing `op` as local",
    ),
    (
        &l0::INFO_AFTER_INIT,
        "`info` after `initialize` also reports `catalog`",
    ),
    (
        &l0::PARSE_ERROR,
        "invalid JSON gets -32600 instead of -32700",
    ),
    (&l0::SHUTDOWN, "`shutdown` gets -32004"),
    (&l0::NUMERIC_ID_ECHO, "numeric ids are echoed as strings"),
    (
        &l0::STRING_ID_ECHO,
        "string ids that look like numbers are echoed as numbers",
    ),
    (&l0::WELL_FORMED, "replies carry \"jsonrpc\": \"1.0\""),
    (
        &l0::PER_SESSION_INIT,
        "one process-wide session, already initialized at start",
    ),
    (
        &l0::STATEFUL_HTTP,
        "stateless: every request is initialized, `initialize` always succeeds",
    ),
    (
        &l0::BATCH,
        "a batch's notifications for methods RCP defines get error replies too",
    ),
    (
        &l0::EMPTY_BATCH,
        "an empty batch is answered with an empty array",
    ),
    (
        &l0::CANCEL_WITH_ID,
        "`notifications/cancel` with an id gets a result",
    ),
    (
        &l1::DENSE_MODE,
        "`retrieve` in mode `dense` fails with -32603",
    ),
    (
        &l1::SPARSE_MODE,
        "`retrieve` in mode `sparse` finds nothing",
    ),
    (
        &l1::HYBRID_MODE,
        "`retrieve` in mode `hybrid` fails with -32010",
    ),
    (
        &l1::FILTER_RESTRICTS,
        "filters are validated but not applied",
    ),
    (
        &l1::FILTER_VALIDATED,
        "a clause on an unadvertised field matches everything instead of -32602",
    ),
    (&l1::CITATIONS, "hits carry neither `citation` nor `trust`"),
    (
        &l1::SCORES_CONSISTENT,
        "hits come back in ascending score order",
    ),
    (
        &l1::K_HONOURED,
        "`retrieve` returns one hit more than `k` when `k` is 3 or less",
    ),
    (&l1::MIN_SCORE, "`minScore` is ignored"),
    (&l2::RERANK, "`rerank` scores relevance upside down"),
    (
        &l2::MULTI_VECTOR,
        "`embed/multi` rows are one number short of the dimension",
    ),
    (
        &l2::SPARSE_EMBED,
        "`embed/sparse` returns one value fewer than indices",
    ),
    (
        &l2::TRANSFORM,
        "`query/transform` with `hyde` returns no `hypothetical`",
    ),
    (&l2::GRAPH, "`graph` op `communities` fails with -32603"),
    (
        &l2::STREAMING_PROGRESS,
        "progress frames report progress above 1.0",
    ),
    (
        &l2::STREAMING_BUFFERED,
        "a request with a progressToken gets an event stream even without `Accept: text/event-stream`",
    ),
    (
        &l2::PAGINATION,
        "following `nextCursor` returns the first page again",
    ),
    (&l2::LOG, "log notifications carry level \"verbose\""),
    (
        &l2::DETERMINISTIC,
        "a `seed` does not fix the scores: each call shifts them",
    ),
    (
        &l2::SNAPSHOTS,
        "an unknown pinned `indexVersion` is served from the current snapshot",
    ),
    (
        &outside::PATH_MATCHES_BODY,
        "the HTTP path is ignored: a body naming another method is served",
    ),
    (
        &outside::STDIO_FRAMING,
        "stdio: each read is taken as a whole message, so a frame split across writes gets -32700",
    ),
    (
        &outside::HTTP_NOTIFICATION_STATUS,
        "HTTP: notifications get status 500 with an empty body",
    ),
    (
        &outside::HTTP_STATUS_200,
        "HTTP: JSON-RPC error responses come with status 400",
    ),
    (
        &outside::RESULT_SHAPES,
        "`retrieve` results carry `usage` as a string",
    ),
    (
        &outside::UNSOLICITED,
        "every `retrieve` also sends `notifications/progress`, with a progressToken or without",
    ),
    (
        &outside::INDEX_ADD,
        "`index/add` returns one id fewer than documents",
    ),
    (
        &outside::INDEX_DELETE,
        "`index/delete` counts absent ids as deleted",
    ),
    // The public harness's checks that no rule above breaks alone.
    (
        &harness::PROTOCOL_VERSION,
        "`initialize` returns protocolVersion 0",
    ),
    (
        &harness::STRING_ID,
        "string ids come back with an `id-` prefix",
    ),
    (
        &harness::HITS_ARRAY,
        "`retrieve` without `mode` returns `results` instead of `hits`",
    ),
    (&harness::ID_AND_SCORE, "hit scores are strings"),
    (&harness::UNIQUE_IDS, "the best hit is listed twice"),
    (
        &harness::MAX_K_CLAMPED,
        "a `k` above maxK is refused with -32602",
    ),
    (
        &harness::FUNNEL,
        "`candidateK` below `k` is accepted (the funnel is not enforced)",
    ),
    (
        &harness::RERANK,
        "`rerank` speaks the harness's shape: `documents` in, `results` out (digest Q1)",
    ),
    (
        &harness::INDEX_UPSERT,
        "re-adding an indexed id is refused with -32602",
    ),
];

/// The fault switches: `(rule id, misbehaviour)`.
pub fn faults() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAULTS.iter().map(|(rule, what)| (rule.id, *what))
}

/// How the reference server behaves.
#[derive(Debug, Clone, Default)]
pub struct RcpReferenceConfig {
    /// Rule ids whose fault switch is on.
    pub faults: BTreeSet<String>,
    /// Delay before every reply (slow-run tests, benchmarks).
    pub latency: Duration,
    /// Capabilities left out of the advertised set (and so refused with
    /// -32003): a correct server that offers less, e.g. an L0 server without
    /// `filter`, or an L1 server without any L2 feature. `cap.field` leaves
    /// out one field of a capability, e.g. `retrieve.snapshots`.
    pub withheld: BTreeSet<String>,
    /// The level declared in `_meta.conformance` instead of "L2".
    pub declared: Option<String>,
    /// HTTP: one session for the whole process, starting uninitialized and
    /// staying initialized once a client initializes it, as the Python and C++
    /// reference servers keep it (protocheck decision 3). Correct per spec §5,
    /// but a second run finds it already initialized.
    pub process_wide: bool,
    /// `initialize` never succeeds: it is refused with -32600 as if the
    /// session were already initialized, and every gated method answers
    /// (over HTTP and stdio). A broken server that looks, to one run, like a
    /// process-wide server initialized by an earlier client; it must never be
    /// certified (decision 3 as narrowed on 2026-11-30).
    pub never_initialize: bool,
    /// Correct behaviours the spec allows besides the default ones.
    pub variants: RcpVariants,
}

/// Behaviours a correct server may also choose (each still certifies L2):
/// they prove protocheck accepts every reading of the spec, not only the
/// default server's. Named on the command line with `--variant`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RcpVariants {
    /// `no-progress`: event streams carry the final response only (§5.2:
    /// "zero or more `notifications/progress` frames").
    pub no_progress: bool,
    /// `buffered-streams`: a request that accepts an event stream still gets
    /// one buffered JSON response (§5.2: the server "MAY respond with
    /// `text/event-stream`").
    pub buffered_streams: bool,
    /// `log-needs-capability`: logs go only to a client whose `initialize`
    /// advertised the `log` capability; `_meta.logLevel` alone opts into
    /// nothing (§17.1: servers "SHOULD emit logs only when the client
    /// advertised the `log` capability").
    pub log_needs_capability: bool,
    /// `snapshot-conflict`: an unavailable pinned `indexVersion` fails with
    /// -32016, as §12's table says, instead of §7.7.1's -32010.
    pub snapshot_conflict: bool,
    /// `snapshot-not-found`: a pinned `indexVersion` it does not keep fails
    /// with -32015 (§12 NotFound: "A referenced entity does not exist").
    pub snapshot_not_found: bool,
    /// `empty-last-page`: every non-empty page carries a `nextCursor`, so the
    /// last one leads to an empty page (§10 only says a missing `nextCursor`
    /// means no more results).
    pub empty_last_page: bool,
    /// `filter-operators=a,b,…`: only these filter operators are advertised;
    /// any other is refused with -32005 (§8).
    pub filter_operators: Option<Vec<String>>,
    /// `no-hit-meta`: hits carry no `meta` (it is optional, §7.7).
    pub no_hit_meta: bool,
    /// `reject-empty-set`: `in`/`nin` with an empty list are refused with
    /// -32602, as the SDKs' filter validator does (§8 does not define them).
    pub reject_empty_set: bool,
    /// `max-k=N`: `retrieve.maxK` is N instead of 50.
    pub max_k: Option<u64>,
}

/// The variant names `--variant` takes, with what each changes.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "no-progress",
        "event streams carry no progress frame, only the final response",
    ),
    (
        "buffered-streams",
        "requests accepting an event stream get one buffered JSON response",
    ),
    (
        "log-needs-capability",
        "logs only for a client that advertised the `log` capability",
    ),
    (
        "snapshot-conflict",
        "an unavailable pinned `indexVersion` fails with -32016 (not -32010)",
    ),
    (
        "snapshot-not-found",
        "a pinned `indexVersion` it does not keep fails with -32015 (NotFound)",
    ),
    (
        "empty-last-page",
        "the last page carries a `nextCursor` that leads to an empty page",
    ),
    (
        "filter-operators=OPS",
        "only these comma-separated filter operators are advertised",
    ),
    ("no-hit-meta", "hits carry no `meta`"),
    (
        "reject-empty-set",
        "`in`/`nin` with an empty list are refused with -32602",
    ),
    ("max-k=N", "`retrieve.maxK` is N"),
];

impl RcpVariants {
    /// Parses `--variant` values; an unknown one is refused with the list.
    pub fn parse<I, S>(names: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut v = Self::default();
        for name in names {
            let name = name.as_ref();
            let (key, value) = match name.split_once('=') {
                Some((k, val)) => (k, Some(val)),
                None => (name, None),
            };
            match (key, value) {
                ("no-progress", None) => v.no_progress = true,
                ("buffered-streams", None) => v.buffered_streams = true,
                ("log-needs-capability", None) => v.log_needs_capability = true,
                ("snapshot-conflict", None) => v.snapshot_conflict = true,
                ("snapshot-not-found", None) => v.snapshot_not_found = true,
                ("empty-last-page", None) => v.empty_last_page = true,
                ("no-hit-meta", None) => v.no_hit_meta = true,
                ("reject-empty-set", None) => v.reject_empty_set = true,
                ("filter-operators", Some(ops)) => {
                    let ops: Vec<String> = ops.split(',').map(|o| o.trim().to_owned()).collect();
                    if let Some(bad) = ops
                        .iter()
                        .find(|o| !filter::OPERATORS.contains(&o.as_str()))
                    {
                        return Err(format!(
                            "`{bad}` is not a filter operator; operators: {}",
                            filter::OPERATORS.join(", ")
                        ));
                    }
                    v.filter_operators = Some(ops);
                }
                ("max-k", Some(n)) => match n.parse::<u64>() {
                    Ok(n) if n >= 1 => v.max_k = Some(n),
                    _ => return Err(format!("`max-k` takes an integer ≥ 1, not `{n}`")),
                },
                _ => {
                    let valid: Vec<&str> = VARIANTS.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "`{name}` is not a reference-server variant; variants: {}",
                        valid.join(", ")
                    ));
                }
            }
        }
        Ok(v)
    }
}

impl RcpReferenceConfig {
    /// A configuration with these faults on; an id that is not an RCP rule with a
    /// fault switch is refused with the list of valid ones.
    pub fn new<I, S>(faults: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut set = BTreeSet::new();
        for id in faults {
            let id = id.into();
            if !FAULTS.iter().any(|(rule, _)| rule.id == id) {
                let valid: Vec<&str> = FAULTS.iter().map(|(rule, _)| rule.id).collect();
                return Err(format!(
                    "`{id}` is not an RCP rule with a fault switch; valid ids: {}",
                    valid.join(", ")
                ));
            }
            set.insert(id);
        }
        Ok(Self {
            faults: set,
            ..Self::default()
        })
    }

    pub(super) fn has(&self, rule: &Rule) -> bool {
        self.faults.contains(rule.id)
    }

    /// The session is initialized before any client says `initialize`: the
    /// fault of RCP-L0-027, or a server whose `initialize` never succeeds.
    pub(super) fn initialized_at_start(&self) -> bool {
        self.never_initialize || self.has(&l0::PER_SESSION_INIT)
    }

    /// Whether `capability` is offered (not withheld).
    pub(super) fn offers(&self, capability: &str) -> bool {
        !self.withheld.contains(capability)
    }
}
