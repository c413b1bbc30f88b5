//! The RCP/1 reference server, over HTTP (`POST /rcp/{method}`, with SSE
//! streaming) and stdio: a small built-in corpus served by a real retrieval
//! engine (hashed character-trigram dense vectors, BM25, reciprocal rank
//! fusion, a rerank stage), with filters, citations, pagination, snapshots,
//! progress and logs, `index/add` and `index/delete`. Each rule has a fault
//! switch that breaks exactly that rule, so the suite can prove every rule can
//! fail (`protocheck reference rcp --break RCP-L0-004`).
//!
//! HTTP sessions: `initialize` issues a fresh token in `result._meta.session`,
//! sent back in the `RCP-Session` header. A request without a known token is in
//! an uninitialized session, so the pre-initialize checks work on every run
//! against a long-lived server (the Python and C++ reference servers keep one
//! process-wide flag instead, which protocheck decision 3 works around).

use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

mod config;
mod corpus;
mod engine;
mod filter;
mod http;
mod methods;
mod protocol;
mod stdio;

pub use config::{RcpReferenceConfig, RcpVariants, VARIANTS, faults};
pub use http::rcp_router;
pub use stdio::serve_rcp_stdio;

/// Largest request body or stdio line the reference server reads.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Command-line arguments of `protocheck reference rcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct RcpReferenceArgs {
    /// TCP port to listen on (HTTP).
    #[arg(long, default_value_t = 8766)]
    pub port: u16,
    /// Address to listen on (HTTP).
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Speak NDJSON on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Break one rule on purpose (repeatable), e.g. `--break RCP-L0-004`.
    #[arg(long = "break", value_name = "RULE-ID")]
    pub breaks: Vec<String>,
    /// Delay every reply by this many milliseconds.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Leave a capability out of the advertised set (repeatable), e.g.
    /// `--without filter` for a correct server that does not reach L1.
    #[arg(long = "without", value_name = "CAPABILITY")]
    pub without: Vec<String>,
    /// Declare this level in `_meta.conformance` instead of L2.
    #[arg(long, value_name = "LEVEL")]
    pub declare: Option<String>,
    /// HTTP: keep one initialized flag for the whole process, as the Python
    /// and C++ reference servers do (a second run finds it initialized).
    #[arg(long)]
    pub process_wide: bool,
    /// Never let `initialize` succeed (-32600, as if already initialized)
    /// while answering every gated method: a server that must not certify.
    #[arg(long)]
    pub never_initialize: bool,
    /// Behave in another way the spec also allows (repeatable), e.g.
    /// `--variant no-progress` or `--variant filter-operators=gt,gte,lt,lte`.
    #[arg(long = "variant", value_name = "VARIANT")]
    pub variants: Vec<String>,
}

/// Runs the reference server until ctrl-c (HTTP) or EOF / `shutdown` (stdio).
pub async fn run_rcp_reference(args: RcpReferenceArgs) -> anyhow::Result<()> {
    let mut config = RcpReferenceConfig::new(args.breaks).map_err(anyhow::Error::msg)?;
    config.latency = Duration::from_millis(args.latency_ms);
    config.withheld = args.without.into_iter().collect();
    config.declared = args.declare;
    config.process_wide = args.process_wide;
    config.never_initialize = args.never_initialize;
    config.variants = RcpVariants::parse(&args.variants).map_err(anyhow::Error::msg)?;
    if args.stdio {
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        serve_rcp_stdio(config, stdin, tokio::io::stdout()).await?;
        return Ok(());
    }
    let addr = SocketAddr::new(args.bind, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let broken: Vec<&str> = config.faults.iter().map(String::as_str).collect();
    tracing::info!(
        "RCP reference server at http://{local}/rcp{}",
        if broken.is_empty() {
            String::new()
        } else {
            format!(" (broken: {})", broken.join(", "))
        }
    );
    axum::serve(listener, rcp_router(config))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
/// The initialized state of one session.
#[derive(Debug, Clone, Copy, Default)]
struct Session {
    initialized: bool,
    /// Gated methods answer although not initialized (the fault of RCP-L0-010).
    gates_open: bool,
    /// The lowest log severity the client opted into at `initialize` (§17.1).
    log: Option<usize>,
    /// The client's `initialize` advertised the `log` capability.
    log_capability: bool,
    /// A digest of the params of the `initialize` that succeeded: the fault
    /// of RCP-L0-015 answers an identical repeat as if it were idempotent.
    handshake: Option<u64>,
}

impl Session {
    fn initialized() -> Self {
        Self {
            initialized: true,
            ..Self::default()
        }
    }
}

/// Per-frame facts the transport knows, and what the frame produced besides
/// its reply.
#[derive(Debug, Default)]
struct FrameCtx {
    /// The method named by the HTTP path (spec §5: it must equal the body's).
    path_method: Option<String>,
    /// The token a successful `initialize` hands out (HTTP, tokenless request).
    new_token: Option<String>,
    /// Set once `shutdown` has been answered.
    shutdown: bool,
    /// The frame is a batch member: the single-notification faults stay off so
    /// that only the batch fault breaks the batch rule.
    in_batch: bool,
    /// Notifications can reach the client: stdio, or an HTTP request that asked
    /// for an event stream (spec §5.2).
    may_notify: bool,
    /// Progress and log notifications to send before the reply.
    frames: Vec<Value>,
}

#[cfg(test)]
mod tests {
    use super::protocol::Server;
    use super::*;

    use serde_json::json;

    fn call(config: &RcpReferenceConfig, session: &mut Session, frame: Value) -> Option<Value> {
        let server = Server::new(config.clone());
        protocol::handle_body(&server, session, &frame, &mut FrameCtx::default())
    }

    #[test]
    fn every_rule_has_a_fault_and_unknown_ids_are_refused() {
        // Every rule but the derived honesty verdict can be broken on purpose.
        for rule in crate::suite::rcp::rules() {
            if rule.id == crate::suite::rcp::DECLARATION_HONEST.id {
                continue;
            }
            assert!(
                RcpReferenceConfig::new([rule.id]).is_ok(),
                "{} has no fault switch",
                rule.id
            );
        }
        let err = RcpReferenceConfig::new(["RCP-L9-999"]).unwrap_err();
        assert!(err.contains("RCP-L0-001"), "{err}");
    }

    #[test]
    fn retrieve_ranks_real_hits_and_honours_k() {
        let config = RcpReferenceConfig::default();
        let mut session = Session::initialized();
        let reply = call(
            &config,
            &mut session,
            json!({"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "dense sparse retrieval", "k": 2}}),
        )
        .unwrap();
        let hits = reply["result"]["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 2);
        assert!(hits[0]["score"].as_f64().unwrap() >= hits[1]["score"].as_f64().unwrap());
        assert_ne!(hits[0]["id"], hits[1]["id"]);
    }

    #[test]
    fn batches_and_gating_follow_the_spec() {
        let config = RcpReferenceConfig::default();
        let mut session = Session::default();
        let reply = call(&config, &mut session, json!([])).unwrap();
        assert_eq!(reply["error"]["code"], -32600);
        let reply = call(
            &config,
            &mut session,
            json!([
                {"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "x", "k": 1}},
                {"jsonrpc": "2.0", "method": "retrieve", "params": {"query": "x", "k": 1}},
                {"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {"nonce": 5}}
            ]),
        )
        .unwrap();
        let replies = reply.as_array().unwrap();
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[0]["error"]["code"], -32001);
        assert_eq!(replies[1]["result"]["nonce"], 5);
        assert!(
            call(
                &config,
                &mut session,
                json!([{"jsonrpc": "2.0", "method": "info"}])
            )
            .is_none()
        );
    }

    fn ask(
        server: &Server,
        session: &mut Session,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        let mut ctx = FrameCtx {
            may_notify: true,
            ..FrameCtx::default()
        };
        let frame = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let reply = protocol::handle_body(server, session, &frame, &mut ctx).expect("a reply");
        (reply, ctx.frames)
    }

    #[test]
    fn pages_follow_each_other_without_overlap_and_end() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let params = json!({"query": "retrieval passages", "k": 3, "mode": "dense"});
        let (first, _) = ask(&server, &mut session, "retrieve", params.clone());
        let mut seen: Vec<Value> = first["result"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].clone())
            .collect();
        let mut cursor = first["result"]["nextCursor"].clone();
        let mut pages = 1;
        while let Some(c) = cursor.as_str() {
            let mut next = params.clone();
            next["cursor"] = json!(c);
            let (page, _) = ask(&server, &mut session, "retrieve", next);
            for h in page["result"]["hits"].as_array().expect("hits") {
                assert!(!seen.contains(&h["id"]), "{h} repeated");
                seen.push(h["id"].clone());
            }
            cursor = page["result"]["nextCursor"].clone();
            pages += 1;
            assert!(pages < 20);
        }
        assert_eq!(
            seen.len(),
            corpus::CORPUS.len(),
            "dense mode ranks every passage"
        );
        let mut other = params.clone();
        other["query"] = json!("something else");
        other["cursor"] = first["result"]["nextCursor"].clone();
        let (refused, _) = ask(&server, &mut session, "retrieve", other);
        assert_eq!(refused["error"]["code"], -32015);
    }

    #[test]
    fn progress_and_logs_only_when_asked() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let (_, frames) = ask(
            &server,
            &mut session,
            "retrieve",
            json!({"query": "rerank", "k": 2}),
        );
        assert!(frames.is_empty(), "{frames:?}");
        let (reply, frames) = ask(
            &server,
            &mut session,
            "retrieve",
            json!({"query": "rerank", "k": 2, "rerank": {"topN": 5}, "_meta": {"progressToken": "t", "logLevel": "debug"}}),
        );
        assert!(reply["result"]["hits"].is_array());
        let progress: Vec<&Value> = frames
            .iter()
            .filter(|f| f["method"] == "notifications/progress")
            .collect();
        assert!(progress.len() >= 3);
        assert!(progress.iter().all(|f| f["params"]["progressToken"] == "t"));
        assert!(frames.iter().any(|f| f["method"] == "notifications/log"));
    }

    #[test]
    fn rerank_scores_align_with_passages() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let (reply, _) = ask(
            &server,
            &mut session,
            "rerank",
            json!({"query": "sparse retrieval bm25", "passages": ["zebra", "BM25 sparse retrieval scores terms", "dense"]}),
        );
        let scores = reply["result"]["scores"].as_array().expect("scores");
        assert_eq!(scores.len(), 3);
        assert_eq!(reply["result"]["order"][0], 1);
        let (reply, _) = ask(
            &server,
            &mut session,
            "rerank",
            json!({"query": "q", "documents": ["a"]}),
        );
        assert_eq!(
            reply["error"]["code"], -32602,
            "the spec names `passages`, not `documents`"
        );
    }
}
