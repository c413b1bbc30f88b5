//! The MCP 2025-11-25 reference server: the initialize-based lifecycle with
//! optional sessions, over Streamable HTTP (`/mcp`) and stdio, correct by
//! default. Each fault switch (`--break MCP25-…`) breaks one rule of
//! protocheck's `mcp-2025-11-25` suite, so that rule can be shown to fail.
//!
//! What it serves: `initialize` with version negotiation (2025-11-25,
//! 2025-06-18, 2025-03-26), `ping`; four read-only tools listed two per page
//! (`get_forecast` with an output schema and structured content, `divide`
//! whose bad input is a tool error, `count` with progress notifications,
//! `slow` that stops when cancelled); two resources and a template, with
//! subscriptions; a prompt with argument completion; logging. Two modes
//! are off by default: the experimental tasks (`with_tasks`, `--tasks`:
//! the `tasks/…` methods and a tool that runs only as a task, in `tasks`)
//! and authorization over HTTP (`with_auth`: bearer tokens, RFC 9728 and
//! RFC 8414 metadata, in `auth`).
//!
//! `jsonrpc` reads and writes messages; `engine` answers them whatever the
//! transport; `catalog` holds the tools, resources and prompt; `http` is
//! Streamable HTTP (sessions, SSE answers, the GET stream, header checks),
//! with `streams` keeping what a resumption replays; `stdio` is
//! newline-delimited JSON-RPC on stdin/stdout; `faults` names the switches.
//! The modern reference server ([`crate::reference::mcp`]) lends its
//! `serverInfo`, icon and Origin check.

use crate::reference::mcp::McpReferenceArgs;
use std::collections::BTreeSet;
use std::time::Duration;

mod auth;
mod catalog;
mod engine;
mod faults;
mod http;
mod jsonrpc;
pub(crate) mod stdio;
mod streams;
mod tasks;

pub use crate::reference::mcp::auth::{
    SCOPE_READ as MCP25_SCOPE_READ, SCOPE_TOOLS as MCP25_SCOPE_TOOLS,
};
pub use http::{mcp25_router, serve_mcp25_reference};
pub use stdio::serve_mcp25_stdio;

/// The revisions `initialize` accepts, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// The fault ids the 2025-11-25 reference server knows.
pub fn supported_faults_2025() -> &'static [&'static str] {
    faults::ALL
}

/// How the 2025-11-25 reference server behaves: correct, or with rules broken.
#[derive(Debug, Clone)]
pub struct Mcp25ReferenceConfig {
    faults: BTreeSet<String>,
    latency: Duration,
    sessions: bool,
    sse_responses: bool,
    stream_greeting: Duration,
    /// The experimental tasks (`with_tasks`).
    tasks: bool,
    /// The key tokens are signed with, when authorization is required (`with_auth`).
    auth: Option<[u8; 32]>,
    /// Origins compared by prefix (see [`Self::with_origin_prefix_match`]).
    origin_prefix_match: bool,
}

impl Default for Mcp25ReferenceConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl Mcp25ReferenceConfig {
    /// A correct server: sessions on, JSON answers unless SSE is needed.
    pub fn new() -> Self {
        Self {
            faults: BTreeSet::new(),
            latency: Duration::ZERO,
            sessions: true,
            sse_responses: false,
            stream_greeting: Duration::from_millis(100),
            tasks: false,
            auth: None,
            origin_prefix_match: false,
        }
    }

    /// Breaks the rules named (ids such as `MCP25-LIF-002`).
    ///
    /// # Panics
    /// On an id the server does not know (see [`supported_faults_2025`]);
    /// [`Self::try_with_faults`] returns an error instead.
    pub fn with_faults(self, faults: &[&str]) -> Self {
        match self.try_with_faults(faults) {
            Ok(config) => config,
            Err(e) => panic!("{e}"),
        }
    }

    /// Breaks the rules named; refuses an id the server does not know.
    pub fn try_with_faults<S: AsRef<str>>(mut self, faults: &[S]) -> Result<Self, String> {
        for fault in faults {
            let fault = fault.as_ref();
            if !faults::ALL.contains(&fault) {
                return Err(format!(
                    "`{fault}` is not a rule the MCP 2025-11-25 reference server can break; known: {}",
                    faults::ALL.join(", ")
                ));
            }
            self.faults.insert(fault.to_owned());
        }
        Ok(self)
    }

    /// Lets in any `Origin` that starts with `http://localhost`,
    /// `http://127.0.0.1` or `http://[::1]`, and refuses the rest with 403:
    /// the subtler half of MCP25-HTP-018's fault (which checks no Origin at
    /// all), which only a look-alike Origin shows.
    pub fn with_origin_prefix_match(mut self) -> Self {
        self.origin_prefix_match = true;
        self
    }

    /// Delays every answer (HTTP response, stdout line) by `latency`.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Whether `initialize` over HTTP issues an `Mcp-Session-Id` (default on).
    /// Without sessions the server is stateless: it enforces no order.
    pub fn with_sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }

    /// Answer every HTTP request with an SSE stream, not only those that
    /// need one (a progress token, the `slow` tool).
    pub fn with_sse_responses(mut self, sse: bool) -> Self {
        self.sse_responses = sse;
        self
    }

    /// How long after a GET stream opens the server sends a message on it.
    pub fn with_stream_greeting(mut self, after: Duration) -> Self {
        self.stream_greeting = after;
        self
    }

    /// Declares the experimental `tasks` capability and serves the
    /// `tasks/…` methods and the tool `report`, which runs only as a task.
    pub fn with_tasks(mut self, tasks: bool) -> Self {
        self.tasks = tasks;
        self
    }

    /// Requires bearer tokens over HTTP (basic/authorization): 401 with a
    /// challenge for a request without a good one, RFC 9728 metadata at the
    /// well-known URIs, RFC 8414 metadata of a built-in authorization
    /// server. Tokens come from [`Self::mint_token`].
    pub fn with_auth(mut self) -> Self {
        self.auth = Some(rand::random());
        self
    }

    /// A token this server accepts when `audience` is its endpoint
    /// (`http://host:port/mcp`), with the space-separated `scope`
    /// (`mcp:read`, `mcp:tools` for `tools/call`); `None` without
    /// [`Self::with_auth`].
    pub fn mint_token(&self, audience: &str, scope: &str, lifetime: Duration) -> Option<String> {
        let key = self.auth.as_ref()?;
        Some(crate::reference::mcp::auth::mint(
            key, audience, scope, lifetime,
        ))
    }

    pub fn faults(&self) -> &BTreeSet<String> {
        &self.faults
    }

    fn breaks(&self, fault: &str) -> bool {
        self.faults.contains(fault)
    }
}

/// The revision this server plays (`--revision`).
pub const REVISION: &str = "2025-11-25";

/// The options of `protocheck reference mcp --revision 2025-11-25`.
#[derive(Debug, Clone)]
pub struct Mcp25Args {
    pub bind: String,
    pub port: u16,
    pub stdio: bool,
    pub faults: Vec<String>,
    pub latency_ms: u64,
    pub sessions: bool,
    pub sse: bool,
    pub tasks: bool,
    pub auth: bool,
}

impl TryFrom<McpReferenceArgs> for Mcp25Args {
    type Error = anyhow::Error;

    /// Refuses the options only the 2026-07-28 server has.
    fn try_from(args: McpReferenceArgs) -> anyhow::Result<Self> {
        if args.tls {
            anyhow::bail!("--tls is an option of the 2026-07-28 reference server only");
        }
        if args.auth && args.stdio {
            anyhow::bail!("--auth applies to HTTP only; stdio carries no authorization");
        }
        Ok(Self {
            bind: args.bind,
            port: args.port,
            stdio: args.stdio,
            faults: args.faults,
            latency_ms: args.latency_ms,
            sessions: !args.no_sessions,
            sse: args.sse,
            tasks: args.tasks,
            auth: args.auth,
        })
    }
}

/// Runs the 2025-11-25 reference server until ctrl-c (HTTP) or the end of
/// stdin (stdio). Logs go to stderr only.
pub async fn run_mcp25_reference(args: Mcp25Args) -> anyhow::Result<()> {
    let mut config = Mcp25ReferenceConfig::new()
        .try_with_faults(&args.faults)
        .map_err(anyhow::Error::msg)?
        .with_latency(Duration::from_millis(args.latency_ms))
        .with_sessions(args.sessions)
        .with_sse_responses(args.sse)
        .with_tasks(args.tasks);
    if args.auth {
        config = config.with_auth();
    }
    let broken = if config.faults.is_empty() {
        "correct".to_owned()
    } else {
        format!(
            "breaking {}",
            config.faults.iter().cloned().collect::<Vec<_>>().join(", ")
        )
    };
    if args.stdio {
        eprintln!("MCP 2025-11-25 reference server ({broken}) on stdio");
        serve_mcp25_stdio(config, tokio::io::stdin(), tokio::io::stdout()).await?;
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind((args.bind.as_str(), args.port))
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", args.bind, args.port))?;
    let local = listener.local_addr()?;
    eprintln!("MCP 2025-11-25 reference server ({broken}) on http://{local}/mcp");
    // Test tokens for this process only: the key dies with it.
    let audience = format!("http://{local}/mcp");
    let hour = Duration::from_secs(3600);
    let full = config.mint_token(
        &audience,
        &format!("{MCP25_SCOPE_READ} {MCP25_SCOPE_TOOLS}"),
        hour,
    );
    let low = config.mint_token(&audience, MCP25_SCOPE_READ, hour);
    if let (Some(full), Some(low)) = (full, low) {
        eprintln!("bearer token (all scopes, 1 h):  {full}");
        eprintln!("bearer token ({MCP25_SCOPE_READ} only, 1 h): {low}");
    }
    tokio::select! {
        served = serve_mcp25_reference(listener, config) => served?,
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_faults_are_refused() {
        assert!(
            Mcp25ReferenceConfig::new()
                .try_with_faults(&["MCP25-LIF-999"])
                .is_err()
        );
        let known = supported_faults_2025()[0];
        let config = Mcp25ReferenceConfig::new().with_faults(&[known]);
        assert!(config.breaks(known));
    }
}
