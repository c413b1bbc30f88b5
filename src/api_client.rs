//! The client side of the REST API, for `protocheck submit`: submit a run to a
//! running protocheck, follow its progress, fetch its report.
//!
//! The server is the user's choice, so private and loopback addresses are
//! allowed, but its answers are still read within bounds (time and size): a
//! misconfigured proxy in front of it must not hang a CI job or fill its memory.
//!
//! Progress comes from the run's server-sent events; when the stream cannot be
//! opened or breaks off (a proxy that buffers or cuts event streams), the client
//! falls back to polling the run. A `429` is waited out as its `Retry-After`
//! says, within the overall deadline. Every submission carries one
//! `Idempotency-Key` for the whole invocation, so a retried POST after a lost
//! answer never queues a second run.

use crate::report::{Format, Gate, Report, gate};
use crate::suite::{McpRevision, SuiteId};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{AddressPolicy, HttpClient, HttpRequest, HttpResponse, Limits};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tokio::time::Instant;
use url::Url;
use uuid::Uuid;

/// Largest answer read from the server: a report with evidence of every rule.
const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;
/// Pauses between polls when the event stream is not available: the first
/// is short (most runs take well under a second), then doubling to the longest.
const POLL_FIRST: Duration = Duration::from_millis(200);
const POLL_LONGEST: Duration = Duration::from_secs(2);
/// Transient failures (connection refused, 5xx) retried before giving up.
const TRANSIENT_RETRIES: u32 = 4;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server URL or an argument is wrong.
    #[error("{0}")]
    Usage(String),
    /// The server could not be reached or answered something unusable.
    #[error("{0}")]
    Server(String),
    /// The server refused the submission (4xx); the message is its problem detail.
    #[error("the server refused the submission ({status}): {detail}")]
    Refused { status: u16, detail: String },
    /// The deadline passed before the run finished.
    #[error("{0}")]
    Timeout(String),
}

/// What to submit: the body of `POST /api/v1/runs`.
#[derive(Debug, Clone)]
pub struct SubmitRequest {
    pub url: String,
    pub suite: String,
    /// The run's `options` object (may be empty).
    pub options: serde_json::Map<String, Value>,
    pub force: bool,
    pub max_age_s: Option<u64>,
    /// Tokens for a protected server (`credentials`); `Debug` hides them.
    pub credentials: Option<crate::credentials::Credentials>,
}

impl SubmitRequest {
    fn body(&self) -> Value {
        let mut body = serde_json::json!({"url": self.url, "suite": self.suite});
        if !self.options.is_empty() {
            body["options"] = Value::Object(self.options.clone());
        }
        if self.force {
            body["force"] = Value::Bool(true);
        }
        if let Some(age) = self.max_age_s {
            body["max_age_s"] = age.into();
        }
        if let Some(c) = &self.credentials {
            let mut credentials = serde_json::json!({"bearer_token": c.bearer_token.expose()});
            if let Some(limited) = &c.limited_token {
                credentials["limited_token"] = Value::String(limited.expose().to_owned());
            }
            body["credentials"] = credentials;
        }
        body
    }
}

/// The server's answer to a submission.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub id: Uuid,
    /// `queued`, `deduplicated`, `fresh` or `idempotent`: why this run was returned.
    pub reason: String,
    /// The run as the API shows it.
    pub run: Value,
}

/// Progress while waiting, for the caller to show.
#[derive(Debug, Clone)]
pub enum Progress {
    /// A finding arrived over the event stream.
    Finding(Value),
    /// The run started over (a retried attempt); findings so far are void.
    Restart,
    /// The event stream is unavailable; the client polls instead.
    Polling(String),
    /// The run's status, seen while polling.
    Status(String),
}

/// A client of one protocheck server.
pub struct Client {
    http: HttpClient,
    base: Url,
    api_key: Option<String>,
    idempotency_key: String,
}

impl Client {
    /// `server` is the service's base URL (`https://protocheck.example`).
    pub fn new(server: &str, api_key: Option<String>) -> Result<Self, ClientError> {
        let mut base = Url::parse(server)
            .map_err(|e| ClientError::Usage(format!("--server `{server}` is not a URL: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err(ClientError::Usage(format!(
                "--server `{server}` must be an http(s) URL with a host"
            )));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(ClientError::Usage(
                "--server must not carry credentials; pass an API key with --api-key or PROTOCHECK_API_KEY".into(),
            ));
        }
        // Relative joins must keep a path prefix (`https://host/protocheck/`).
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        if let Some(key) = &api_key
            && (key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(ClientError::Usage(
                "the API key must be visible ASCII without spaces".into(),
            ));
        }
        let limits = Limits {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_body_bytes: MAX_ANSWER_BYTES,
            sse_max_frame_bytes: MAX_ANSWER_BYTES,
            // The reader is re-opened as often as needed; each stream is capped.
            sse_max_duration: Duration::from_secs(300),
            sse_max_events: 100_000,
            ..Limits::default()
        };
        let http = HttpClient::new(AddressPolicy::AllowPrivate, limits)
            .map_err(|e| ClientError::Usage(e.to_string()))?;
        Ok(Self {
            http,
            base,
            api_key,
            idempotency_key: Uuid::new_v4().to_string(),
        })
    }

    fn url(&self, path: &str) -> Result<Url, ClientError> {
        self.base
            .join(path.trim_start_matches('/'))
            .map_err(|e| ClientError::Usage(format!("cannot build a URL for {path}: {e}")))
    }

    fn authorize(&self, req: HttpRequest) -> HttpRequest {
        let req = req.header("accept", "application/json");
        match &self.api_key {
            Some(key) => req.header("authorization", format!("Bearer {key}")),
            None => req,
        }
    }

    /// Sends `make()` until it gets an answer that is not a 429 or a transient
    /// failure, waiting as the server asks, never past `deadline`.
    async fn send_patiently(
        &self,
        what: &str,
        deadline: Instant,
        make: impl Fn() -> Result<HttpRequest, ClientError>,
    ) -> Result<HttpResponse, ClientError> {
        let mut transient = 0u32;
        loop {
            let req = self.authorize(make()?);
            let wait = match self.http.send(&req).await {
                Ok(resp) if resp.status == 429 => {
                    let secs = resp
                        .header("retry-after")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(5);
                    tracing::info!(retry_after_s = secs, "{what}: rate limited; waiting");
                    eprintln!("{what}: rate limited by the server; retrying in {secs}s");
                    Duration::from_secs(secs.max(1))
                }
                Ok(resp) if resp.status >= 500 && transient < TRANSIENT_RETRIES => {
                    transient += 1;
                    eprintln!("{what}: the server answered {}; retrying", resp.status);
                    backoff(transient)
                }
                Ok(resp) => return Ok(resp),
                Err(e) if transient < TRANSIENT_RETRIES => {
                    transient += 1;
                    eprintln!("{what}: {e}; retrying");
                    backoff(transient)
                }
                Err(e) => {
                    return Err(ClientError::Server(format!(
                        "{what}: the server {} could not be reached: {e}",
                        self.base
                    )));
                }
            };
            if Instant::now() + wait > deadline {
                return Err(ClientError::Timeout(format!(
                    "{what}: gave up; the server asks to wait {}s, past the deadline",
                    wait.as_secs()
                )));
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// `POST /api/v1/runs`.
    pub async fn submit(
        &self,
        request: &SubmitRequest,
        deadline: Instant,
    ) -> Result<Submitted, ClientError> {
        let body = request.body();
        let resp = self
            .send_patiently("submit", deadline, || {
                Ok(HttpRequest::post_json(self.url("api/v1/runs")?, &body)
                    .header("idempotency-key", self.idempotency_key.clone()))
            })
            .await?;
        let doc = answer_json(&resp, "submit")?;
        let id = doc
            .get("id")
            .and_then(Value::as_str)
            .and_then(|s| Uuid::parse_str(s).ok())
            .ok_or_else(|| ClientError::Server("submit: the answer has no run id".into()))?;
        let reason = doc
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("queued")
            .to_owned();
        Ok(Submitted {
            id,
            reason,
            run: doc,
        })
    }

    /// `GET /api/v1/runs/{id}`.
    pub async fn run(&self, id: Uuid, deadline: Instant) -> Result<Value, ClientError> {
        let path = format!("api/v1/runs/{id}");
        let resp = self
            .send_patiently("read the run", deadline, || {
                Ok(HttpRequest::get(self.url(&path)?))
            })
            .await?;
        answer_json(&resp, "read the run")
    }

    /// `GET /api/v1/runs/{id}/report.json`: the run's JSON report.
    pub async fn report(&self, id: Uuid, deadline: Instant) -> Result<Value, ClientError> {
        let path = format!("api/v1/runs/{id}/report.json");
        let resp = self
            .send_patiently("read the report", deadline, || {
                Ok(HttpRequest::get(self.url(&path)?))
            })
            .await?;
        answer_json(&resp, "read the report")
    }

    /// Waits until run `id` is finished and returns it as the API shows it.
    /// Follows the event stream unless `poll_only`, else (or when the stream is
    /// unavailable) polls.
    pub async fn wait(
        &self,
        id: Uuid,
        deadline: Instant,
        poll_only: bool,
        mut progress: impl FnMut(Progress),
    ) -> Result<Value, ClientError> {
        if !poll_only {
            match self.follow_events(id, deadline, &mut progress).await {
                Ok(Some(run)) => return Ok(run),
                Ok(None) => progress(Progress::Polling(
                    "the event stream ended before the verdict".into(),
                )),
                Err(why) => progress(Progress::Polling(why)),
            }
        }
        let mut last_status = String::new();
        let mut pause = POLL_FIRST;
        loop {
            let run = self.run(id, deadline).await?;
            let status = run
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if !matches!(status.as_str(), "queued" | "running") {
                return Ok(run);
            }
            if status != last_status {
                progress(Progress::Status(status.clone()));
                last_status = status.clone();
            }
            if Instant::now() + pause > deadline {
                return Err(ClientError::Timeout(format!(
                    "run {id} is still {status}; stopped waiting (see {})",
                    self.page(id)
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_LONGEST);
        }
    }

    /// The run's HTML report page.
    pub fn page(&self, id: Uuid) -> String {
        self.url(&format!("runs/{id}"))
            .map_or_else(|_| format!("/runs/{id}"), |u| u.to_string())
    }

    /// Reads the event stream to the verdict. `Ok(None)`: the stream ended
    /// early; `Err`: it could not be used. Both mean "poll instead".
    async fn follow_events(
        &self,
        id: Uuid,
        deadline: Instant,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<Value>, String> {
        let url = self
            .url(&format!("api/v1/runs/{id}/events"))
            .map_err(|e| e.to_string())?;
        let req = self
            .authorize(HttpRequest::get(url))
            .header("accept", "text/event-stream");
        let resp = self
            .http
            .send_streaming(&req)
            .await
            .map_err(|e| format!("the event stream could not be opened: {e}"))?;
        if resp.status != 200 || !is_event_stream(&resp.headers) {
            return Err(format!(
                "the event stream answered {} without an event stream",
                resp.status
            ));
        }
        let mut reader = SseReader::new(resp, self.http.limits());
        loop {
            let next = tokio::time::timeout_at(deadline, reader.next_event()).await;
            let event = match next {
                Err(_) => return Err("the deadline passed while following events".into()),
                Ok(Err(e)) => return Err(format!("the event stream broke: {e}")),
                Ok(Ok(None)) => return Ok(None),
                Ok(Ok(Some(ev))) => ev,
            };
            match event.event.as_deref() {
                Some("finding") => {
                    if let Ok(v) = serde_json::from_str::<Value>(&event.data) {
                        progress(Progress::Finding(v));
                    }
                }
                Some("restart") => progress(Progress::Restart),
                Some("verdict") => {
                    return serde_json::from_str(&event.data)
                        .map(Some)
                        .map_err(|e| format!("the verdict event is not JSON: {e}"));
                }
                Some("error") => return Err(format!("the server reported: {}", event.data)),
                _ => {}
            }
        }
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(500u64 << attempt.min(5))
}

/// The answer as JSON, or the server's problem detail as an error.
fn answer_json(resp: &HttpResponse, what: &str) -> Result<Value, ClientError> {
    let doc = resp.json();
    if (200..300).contains(&resp.status) {
        return doc.ok_or_else(|| ClientError::Server(format!("{what}: the answer is not JSON")));
    }
    let detail = doc
        .as_ref()
        .and_then(|d| d.get("detail").or_else(|| d.get("title")))
        .and_then(Value::as_str)
        .map_or_else(
            || format!("HTTP {}", resp.status),
            |s| s.chars().take(500).collect(),
        );
    if (400..500).contains(&resp.status) {
        Err(ClientError::Refused {
            status: resp.status,
            detail,
        })
    } else {
        Err(ClientError::Server(format!("{what}: {detail}")))
    }
}

/// `protocheck submit`.
#[derive(Debug, Clone, clap::Args)]
pub struct SubmitArgs {
    /// The server to check (for RCP, the base such as https://host/rcp).
    pub url: String,
    /// The protocheck service to submit to.
    #[arg(long, env = "PROTOCHECK_SERVER")]
    pub server: String,
    /// An API key (raises the rate limit, marks the run with the key's owner,
    /// signs webhooks). Prefer the environment variable over the flag.
    #[arg(long, env = "PROTOCHECK_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Which suite to run.
    #[arg(long, default_value = "auto", value_parser = ["auto", "mcp", "rcp"])]
    pub suite: String,
    /// RCP profile: `spec` or `reference`.
    #[arg(long, value_parser = ["spec", "reference"])]
    pub profile: Option<String>,
    /// Allow probes that write to the target.
    #[arg(long)]
    pub allow_writes: bool,
    /// Allow MCP tool calls with real arguments.
    #[arg(long)]
    pub allow_tool_calls: bool,
    /// Which MCP revision to judge: `newest` (the newest the server speaks),
    /// `2026-07-28`, `2025-11-25`, or `all` (each one the server speaks, with
    /// a verdict per revision).
    #[arg(long, value_name = "REVISION", default_value = "newest", value_parser = parse_mcp_revision)]
    pub mcp_revision: McpRevision,
    /// Run again even when a recent verdict exists.
    #[arg(long)]
    pub force: bool,
    /// Reuse a finished run at most this old (seconds) instead of queueing one.
    #[arg(long)]
    pub max_age_s: Option<u64>,
    /// Announce the finished run to this URL, signed with the API key's
    /// webhook secret (needs --api-key).
    #[arg(long, value_name = "URL", requires = "api_key")]
    pub webhook_url: Option<String>,
    /// A file holding a bearer token for a protected MCP server (one trailing
    /// newline is ignored): the service holds it encrypted for this run only
    /// and wipes it when the run ends. Needs --api-key.
    #[arg(long, value_name = "PATH", requires = "api_key")]
    pub bearer_token_file: Option<PathBuf>,
    /// A file holding a second token with less scope than the bearer token
    /// (MCP25-AUT-007). Needs --bearer-token-file.
    #[arg(long, value_name = "PATH", requires = "bearer_token_file")]
    pub limited_token_file: Option<PathBuf>,
    /// Wait for the verdict, print the report and exit by the gate.
    #[arg(long)]
    pub wait: bool,
    /// Give up waiting after this long (`10m`, `90s`); exit 2.
    #[arg(long, default_value = "15m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Poll the run instead of following its event stream (for proxies that
    /// buffer server-sent events).
    #[arg(long)]
    pub poll: bool,
    /// Do not print findings on stderr while waiting.
    #[arg(long, short)]
    pub quiet: bool,
    /// Report format (with --wait): `text`, `json` (the report document),
    /// `junit` (JUnit XML) or `sarif` (SARIF 2.1.0).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of stdout (stdout then gets the text summary).
    #[arg(long, value_name = "FILE", requires = "wait")]
    pub output: Option<PathBuf>,
    /// Also write step outputs to $GITHUB_OUTPUT and a job summary to
    /// $GITHUB_STEP_SUMMARY, with links to the run and the badge (in a GitHub
    /// Actions step; the protocheck action passes it).
    #[arg(long, requires = "wait")]
    pub github: bool,
    /// Gate (RCP): the certified level must be at least this one.
    #[arg(long, value_enum, value_name = "LEVEL", requires = "wait")]
    pub min_level: Option<gate::Level>,
    /// Gate (MCP): the grade must be at least this one.
    #[arg(long, value_enum, value_name = "GRADE", requires = "wait")]
    pub min_grade: Option<gate::Grade>,
    /// Baseline of known failures: a YAML or JSON list of rule ids (see `check`).
    #[arg(long, value_name = "FILE", requires = "wait")]
    pub expected_failures: Option<PathBuf>,
}

impl SubmitArgs {
    /// The tokens the flags name, read from their files.
    fn credentials(&self) -> Result<Option<crate::credentials::Credentials>, String> {
        let Some(bearer) = &self.bearer_token_file else {
            return Ok(None);
        };
        let limited = match &self.limited_token_file {
            Some(path) => Some(read_token_file(path, "--limited-token-file")?),
            None => None,
        };
        Ok(Some(crate::credentials::Credentials {
            bearer_token: read_token_file(bearer, "--bearer-token-file")?,
            limited_token: limited,
        }))
    }

    fn request(&self) -> SubmitRequest {
        let mut options = serde_json::Map::new();
        if let Some(p) = &self.profile {
            options.insert("profile".into(), Value::String(p.clone()));
        }
        if self.allow_writes {
            options.insert("allow_writes".into(), Value::Bool(true));
        }
        if self.allow_tool_calls {
            options.insert("allow_tool_calls".into(), Value::Bool(true));
        }
        if let Some(url) = &self.webhook_url {
            options.insert("webhook_url".into(), Value::String(url.clone()));
        }
        // `newest` is the service's default: left out, a run's options (and
        // its dedup key) are those of a run that never named a revision.
        if self.mcp_revision != McpRevision::Newest {
            options.insert(
                "mcp_revision".into(),
                Value::String(self.mcp_revision.as_str().to_owned()),
            );
        }
        SubmitRequest {
            url: self.url.clone(),
            suite: self.suite.clone(),
            options,
            force: self.force,
            max_age_s: self.max_age_s,
            credentials: None,
        }
    }
}

/// `--mcp-revision`: one of [`McpRevision::CHOICES`], by name.
pub fn parse_mcp_revision(s: &str) -> Result<McpRevision, String> {
    McpRevision::parse(s).ok_or_else(|| {
        let known: Vec<String> = McpRevision::CHOICES
            .iter()
            .map(|r| format!("`{}`", r.as_str()))
            .collect();
        format!("`{s}` is not one of {}", known.join(", "))
    })
}

/// A token from a file: its text without one trailing newline (`\n` or
/// `\r\n`, as editors and `echo` leave). The messages name the file, never
/// its content.
fn read_token_file(
    path: &std::path::Path,
    flag: &str,
) -> Result<crate::suite::BearerToken, String> {
    let text = zeroize::Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| format!("{flag} {}: cannot read the token file: {e}", path.display()))?,
    );
    let token = text
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(&text);
    if token.is_empty() {
        return Err(format!(
            "{flag} {}: the token file is empty",
            path.display()
        ));
    }
    if token.len() > crate::suite::MAX_BEARER_TOKEN_BYTES
        || !token.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(format!(
            "{flag} {}: the token must be 1 to {} visible ASCII characters on one line",
            path.display(),
            crate::suite::MAX_BEARER_TOKEN_BYTES
        ));
    }
    Ok(crate::suite::BearerToken::new(token))
}

/// Exit status of `submit`: the same contract as `check`.
pub const EXIT_PASS: u8 = 0;
pub const EXIT_FAIL: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// Runs `protocheck submit`; the exit status follows the contract in the book
/// (docs/src/using/ci.md, "Exit codes").
pub async fn submit_command(args: SubmitArgs) -> ExitCode {
    let deadline = Instant::now() + args.timeout;
    // Every flag is checked before the run is queued: a typo costs no run.
    let gate = match gate_of(&args) {
        Ok(g) => g,
        Err(e) => return usage(e),
    };
    let mut request = args.request();
    request.credentials = match args.credentials() {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let client = match Client::new(&args.server, args.api_key.clone()) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let submitted = match client.submit(&request, deadline).await {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let page = client.page(submitted.id);
    eprintln!("run {} ({}): {page}", submitted.id, submitted.reason);
    if !args.wait {
        println!("{}", submitted.id);
        return ExitCode::from(EXIT_PASS);
    }
    let quiet = args.quiet;
    let waited = client
        .wait(submitted.id, deadline, args.poll, |p| {
            if !quiet {
                show_progress(&p);
            }
        })
        .await;
    if let Err(e) = waited {
        return usage(e);
    }
    let report = match client.report(submitted.id, deadline).await {
        Ok(doc) => doc,
        Err(e) => return usage(e),
    };
    let mut report: Report = match serde_json::from_value(report) {
        Ok(r) => r,
        Err(e) => {
            return usage(format!(
                "the server's report could not be read ({e}); is it a protocheck of another version?"
            ));
        }
    };
    finish(&mut report, &gate, &args)
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// The gate the flags ask for, checked against the requested suite.
fn gate_of(args: &SubmitArgs) -> Result<Gate, String> {
    let expected_failures = match &args.expected_failures {
        None => None,
        Some(path) => Some(gate::load_expected_failures(path)?),
    };
    let gate = Gate {
        min_level: args.min_level,
        min_grade: args.min_grade,
        expected_failures,
    };
    let requested = SuiteId::parse(&args.suite);
    gate.applies_to_suite(requested)?;
    Ok(gate)
}

fn show_progress(p: &Progress) {
    match p {
        Progress::Finding(f) => match serde_json::from_value(f.clone()) {
            Ok(finding) => eprintln!("{}", crate::report::text::finding_line(&finding)),
            Err(_) => eprintln!("(a finding protocheck could not read)"),
        },
        Progress::Restart => eprintln!("the run was retried; its findings start over"),
        Progress::Polling(why) => eprintln!("{why}; polling the run instead"),
        Progress::Status(s) => eprintln!("run is {s}"),
    }
}

/// The finished run's report on stdout (or in `--output`), the exit status
/// from its gate: a run without a verdict (`error`) is not a failed verdict.
fn finish(report: &mut Report, gate: &Gate, args: &SubmitArgs) -> ExitCode {
    let misapplied = report
        .verdict
        .as_ref()
        .and_then(|v| gate.applies_to(v).err());
    if *gate != Gate::default() && misapplied.is_none() {
        report.apply_gate(gate);
    }
    let rendered = report.render(args.format);
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &rendered) {
                return usage(format!("cannot write {}: {e}", path.display()));
            }
            print!("{}", crate::report::text::summary(report));
        }
        None => print!("{rendered}"),
    }
    if args.github {
        let target = crate::target::CanonicalUrl::parse(&report.target.url)
            .ok()
            .map(|u| u.key());
        let links = crate::report::github::Links::of(report, &args.server, target.as_deref());
        if let Err(e) = crate::report::github::write(report, args.output.as_deref(), &links) {
            return usage(e);
        }
    }
    if let Some(e) = misapplied {
        return usage(e);
    }
    match report.passed() {
        Some(true) => ExitCode::from(EXIT_PASS),
        Some(false) => ExitCode::from(EXIT_FAIL),
        None => {
            let why = report.error.as_deref().unwrap_or("the run has no verdict");
            let status = report.run.as_ref().map_or("unknown", |r| r.status.as_str());
            usage(format!("the run ended as {status}: {why}"))
        }
    }
}
