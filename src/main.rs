//! The `protocheck` command: the service, its workers, and the local checker.

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use protocheck::config::{DatabaseArgs, WebArgs, WorkerArgs};
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::report::{self, Report};
use protocheck::store::{self, Backend};
use protocheck::submit::{HostQuota, Queue};
use protocheck::suite::context::{Endpoint, RunContext};
use protocheck::suite::{self, RunOptions, SuiteChoice};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use protocheck::web::{self, AppState};
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Parser)]
#[command(
    name = "protocheck",
    version,
    about = "Conformance checks for MCP and RCP servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the web UI and API, with workers in-process (the default command).
    Serve {
        #[command(flatten)]
        db: DatabaseArgs,
        #[command(flatten)]
        web: WebArgs,
        #[command(flatten)]
        workers: WorkerArgs,
        #[command(flatten)]
        directory: protocheck::config::DirectorySyncArgs,
    },
    /// Run workers only, sharing the queue of a Postgres database with other processes.
    Worker {
        #[command(flatten)]
        db: DatabaseArgs,
        #[command(flatten)]
        workers: WorkerArgs,
        /// The service's public URL, named in the User-Agent of the runs of
        /// servers the public directory lists.
        #[arg(long, env = "PROTOCHECK_PUBLIC_URL")]
        public_url: Option<String>,
        /// A contact address (an email or a URL), named in the User-Agent
        /// of the runs of servers the public directory lists.
        #[arg(long, env = "PROTOCHECK_DIRECTORY_CONTACT")]
        directory_contact: Option<String>,
    },
    /// Apply the database migrations (or revert them all with --down).
    Migrate {
        #[command(flatten)]
        db: DatabaseArgs,
        /// Revert every migration instead.
        #[arg(long)]
        down: bool,
    },
    /// Manage API keys: create (the token is shown once), list, revoke.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// List every watch (targets re-checked on a schedule), or end any of them.
    #[command(subcommand)]
    Watches(WatchesCommand),
    /// The public directory's registry: `sync` reads the MCP Registry and
    /// lists (and watches) every remote server of it.
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// The public directory of judged MCP servers: list its entries, or take a
    /// URL out of it for good.
    #[command(subcommand)]
    Directory(DirectoryCommand),
    /// Check one server locally, with no database. Exit 0 only when the verdict passes.
    Check(CheckArgs),
    /// Submit a run to a protocheck service; with --wait, follow it and exit by its gate.
    Submit(protocheck::api_client::SubmitArgs),
    /// Verify a signed attestation (offline with a key file). Exit 0 verified, 1 not.
    Verify(protocheck::attest::VerifyArgs),
    /// Print a rule's page (the requirement, how protocheck probes it, what a
    /// failure usually means, how to fix it), or list every rule.
    Rules(RulesArgs),
    /// Start a reference target server (correct by default; --break RULE-ID breaks one rule).
    #[command(subcommand)]
    Reference(ReferenceCommand),
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create a key; prints its token and webhook signing secret, once.
    Create {
        #[command(flatten)]
        db: DatabaseArgs,
        /// A name for the key, unique among keys that are not revoked.
        #[arg(long)]
        name: String,
        /// Submissions allowed: N/s, N/m (or N/min), N/h or N/d.
        #[arg(long, value_parser = parse_rate)]
        rate: protocheck::api_keys::Rate,
        /// Who the key's runs are shown as belonging to (default: the key's name).
        #[arg(long)]
        owner: Option<String>,
        /// How many watches (targets re-checked on a schedule) the key may keep.
        #[arg(long, default_value_t = protocheck::api_keys::DEFAULT_WATCH_QUOTA,
              value_parser = clap::value_parser!(u32).range(0..=i64::from(protocheck::api_keys::MAX_WATCH_QUOTA)))]
        watch_quota: u32,
    },
    /// List keys (never their tokens or secrets).
    List {
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Revoke a key by id or name; its token stops working at once and its
    /// watches end.
    Revoke {
        #[command(flatten)]
        db: DatabaseArgs,
        /// The key's id or name.
        key: String,
    },
}

#[derive(Debug, Subcommand)]
enum RegistryCommand {
    /// Read the registry (all of it the first time, then what changed since
    /// the last complete sync) and bring the directory up to date; the
    /// workers of the database run the checks when they are due.
    Sync {
        #[command(flatten)]
        db: DatabaseArgs,
        #[command(flatten)]
        registry: protocheck::config::RegistryArgs,
        /// The service's public URL, sent in the registry requests' User-Agent.
        #[arg(long, env = "PROTOCHECK_PUBLIC_URL")]
        public_url: Option<String>,
        /// Allow a registry on a private, loopback or link-local address
        /// (`1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`; a registry of your own).
        #[arg(
            long,
            env = "PROTOCHECK_ALLOW_PRIVATE_TARGETS",
            value_name = "BOOL",
            value_parser = protocheck::config::boolish(),
            ignore_case = true,
            hide_possible_values = true
        )]
        allow_private_targets: Option<bool>,
    },
}

#[derive(Debug, Subcommand)]
enum DirectoryCommand {
    /// List the directory's entries.
    List {
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Take a URL out of the directory for good: its watch ends and no later
    /// sync lists it again.
    Delist {
        #[command(flatten)]
        db: DatabaseArgs,
        /// The URL as the directory lists it.
        url: String,
        /// Why, as the operator's record says.
        #[arg(long)]
        reason: String,
    },
}

#[derive(Debug, Subcommand)]
enum WatchesCommand {
    /// List the watches, with the key that keeps each (none: a served badge).
    List {
        #[command(flatten)]
        db: DatabaseArgs,
        /// Only the watches of this target (its 24-hex-digit key).
        #[arg(long)]
        target: Option<String>,
    },
    /// End a watch by its id, whichever key (or badge) keeps it.
    Remove {
        #[command(flatten)]
        db: DatabaseArgs,
        /// The watch's id, as `watches list` shows it.
        id: String,
    },
}

fn parse_rate(s: &str) -> Result<protocheck::api_keys::Rate, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
enum ReferenceCommand {
    /// The RCP/1 reference server.
    Rcp(protocheck::reference::rcp::RcpReferenceArgs),
    /// The MCP reference server: 2026-07-28 (stateless, Streamable HTTP or
    /// `--stdio`), or 2025-11-25 with `--revision 2025-11-25` (HTTP with
    /// sessions, or `--stdio`).
    Mcp(protocheck::reference::mcp::McpReferenceArgs),
    /// A stand-in MCP Registry serving `GET /v0.1/servers` (synthetic
    /// entries or a file of them), for the directory's tests and figures.
    Registry(protocheck::reference::registry::RegistryReferenceArgs),
}

#[derive(Debug, clap::Args)]
struct RulesArgs {
    /// A rule's id, e.g. MCP-HDR-001; without one, every rule is listed.
    id: Option<String>,
    /// Print JSON, as `GET /api/v1/rules[/{id}]` serves it.
    #[arg(long)]
    json: bool,
}

fn parse_public_url(s: &str) -> Result<String, String> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            Ok(s.trim_end_matches('/').to_owned())
        }
        _ => Err(format!("`{s}` is not an http(s) URL")),
    }
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The server's URL (for RCP, the base such as http://host:port/rcp).
    #[arg(required_unless_present = "stdio", conflicts_with = "stdio")]
    url: Option<String>,
    /// Spawn this command and speak to it over stdio instead of HTTP.
    #[arg(long, value_name = "CMD")]
    stdio: Option<String>,
    /// Which suite to run.
    #[arg(long, value_enum, default_value = "auto")]
    suite: SuiteArg,
    /// Which MCP revision to judge: `newest` (the newest the server speaks),
    /// `2026-07-28`, `2025-11-25`, or `all` (each one the server speaks, with
    /// a verdict per revision).
    #[arg(long, value_name = "REVISION", default_value = "newest", value_parser = protocheck::api_client::parse_mcp_revision)]
    mcp_revision: protocheck::suite::McpRevision,
    /// Report format: `text` (findings as they arrive, then the verdict),
    /// `json` (the report document, schema at /api/v1/schema/report.json),
    /// `junit` (JUnit XML) or `sarif` (SARIF 2.1.0).
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<report::Format>,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Gate (RCP): the certified level must be at least this one.
    #[arg(long, value_enum, value_name = "LEVEL")]
    min_level: Option<report::gate::Level>,
    /// Gate (MCP): the grade must be at least this one.
    #[arg(long, value_enum, value_name = "GRADE")]
    min_grade: Option<report::gate::Grade>,
    /// Baseline of known failures: a YAML or JSON list of rule ids. Listed
    /// failures do not fail the gate, new ones do, and listed rules that pass
    /// now fail it as stale.
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<std::path::PathBuf>,
    /// Write the report to FILE instead of stdout (stdout then gets the text summary).
    #[arg(long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Also write step outputs to $GITHUB_OUTPUT and a job summary to
    /// $GITHUB_STEP_SUMMARY (in a GitHub Actions step; the protocheck action
    /// passes it).
    #[arg(long)]
    github: bool,
    /// Per-request timeout in milliseconds.
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// The largest answer read from the target, in bytes (an HTTP body, one
    /// server-sent event, one stdio line). A larger answer leaves the rule
    /// that asked for it not verified, with the figure.
    #[arg(long, env = "PROTOCHECK_MAX_ANSWER_BYTES", value_name = "BYTES", default_value_t = protocheck::transport::DEFAULT_MAX_ANSWER_BYTES, value_parser = protocheck::config::answer_bytes)]
    max_answer_bytes: usize,
    /// Requests in flight to the target at once, 1 to 32: both MCP suites and
    /// RCP/1 over HTTP, and MCP 2025-11-25 over stdio; the other stdio runs
    /// send one at a time.
    #[arg(long, env = "PROTOCHECK_TARGET_CONCURRENCY", default_value_t = protocheck::suite::context::DEFAULT_TARGET_CONCURRENCY, value_parser = protocheck::config::concurrency)]
    concurrency: usize,
    /// RCP profile: `spec` (the spec and its schema) or `reference` (the public harness's 30 checks).
    #[arg(long, value_parser = ["spec", "reference"])]
    profile: Option<String>,
    /// Allow probes that write to the target (RCP `index/*` with reserved ids, cleaned up).
    #[arg(long)]
    allow_writes: bool,
    /// Allow MCP tool calls with real arguments.
    #[arg(long)]
    allow_tool_calls: bool,
    /// The protocheck service whose rule pages (`/rules/{id}`) the report
    /// links each finding to. Without it, the text report names
    /// `protocheck rules ID`, which prints the same page offline.
    #[arg(long, env = "PROTOCHECK_PUBLIC_URL", value_name = "URL", value_parser = parse_public_url)]
    public_url: Option<String>,
    /// A PEM file of CA certificates to trust for the target beside the
    /// built-in roots (an internal CA; `reference mcp --tls --ca-out` writes one).
    #[arg(long, env = "PROTOCHECK_CA_CERT", value_name = "PEM")]
    ca_cert: Option<std::path::PathBuf>,
    /// Refuse private, loopback and link-local targets, as a public service does.
    #[arg(long)]
    public_only: bool,
    /// A bearer token for MCP servers that require authorization. Give one whose
    /// scope reaches every method the server serves: a probe refused with 403
    /// `insufficient_scope` judges nothing, so the rules it was sent for are left
    /// unjudged (the verdict names them). Used for this run only; never printed.
    /// Prefer the environment variable over the flag.
    #[arg(long, env = "PROTOCHECK_BEARER_TOKEN", hide_env_values = true)]
    bearer_token: Option<String>,
    /// A second token for the same MCP server, with less scope than
    /// --bearer-token: MCP25-AUT-007 and MCP-AUT-007 check that a request
    /// needing more scope is refused with 403 `insufficient_scope`. Without it
    /// MCP25-AUT-007 is skipped, and MCP-AUT-007 reads --bearer-token's
    /// refusals only.
    #[arg(long, env = "PROTOCHECK_LIMITED_TOKEN", hide_env_values = true)]
    limited_token: Option<String>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SuiteArg {
    Auto,
    Mcp,
    Rcp,
}

impl From<SuiteArg> for SuiteChoice {
    fn from(s: SuiteArg) -> Self {
        match s {
            SuiteArg::Auto => Self::Auto,
            SuiteArg::Mcp => Self::Mcp,
            SuiteArg::Rcp => Self::Rcp,
        }
    }
}

/// Exit status for usage errors and targets that could not be reached, as
/// opposed to a verdict that failed (1).
const EXIT_USAGE: u8 = 2;

/// Parses the command line with every on/off flag taking a value too (see
/// [`protocheck::config::boolish_flags`]).
fn parse_cli<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = protocheck::config::boolish_flags(Cli::command());
    let mut matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

fn main() -> ExitCode {
    // No command is `serve`, parsed as such so that its environment is read.
    let parsed = parse_cli(std::env::args_os()).and_then(|cli| match cli.command {
        None => parse_cli(["protocheck", "serve"]),
        Some(_) => Ok(cli),
    });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let quiet = matches!(
        cli.command,
        Some(
            Command::Check(_)
                | Command::Verify(_)
                | Command::Submit(_)
                | Command::Keys(_)
                | Command::Watches(_)
                | Command::Registry(_)
                | Command::Directory(_)
                | Command::Rules(_)
        )
    );
    init_tracing(quiet);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            None => Err(anyhow::anyhow!("no command")),
            Some(Command::Serve {
                db,
                web,
                workers,
                directory,
            }) => serve(db, web, workers, directory)
                .await
                .map(|()| ExitCode::SUCCESS),
            Some(Command::Worker {
                db,
                workers,
                public_url,
                directory_contact,
            }) => {
                let agent = protocheck::config::directory_user_agent(
                    public_url.as_deref(),
                    directory_contact.as_deref(),
                );
                worker(db, workers, agent).await.map(|()| ExitCode::SUCCESS)
            }
            Some(Command::Migrate { db, down }) => {
                migrate(db, down).await.map(|()| ExitCode::SUCCESS)
            }
            Some(Command::Keys(command)) => keys(command).await,
            Some(Command::Watches(command)) => watches(command).await,
            Some(Command::Registry(command)) => registry(command).await,
            Some(Command::Directory(command)) => directory(command).await,
            Some(Command::Check(args)) => check(args).await,
            Some(Command::Rules(args)) => Ok(rules(&args)),
            Some(Command::Verify(args)) => protocheck::attest::verify_command(args).await,
            Some(Command::Submit(args)) => Ok(protocheck::api_client::submit_command(args).await),
            Some(Command::Reference(ReferenceCommand::Registry(args))) => {
                protocheck::reference::registry::run(args)
                    .await
                    .map(|()| ExitCode::SUCCESS)
            }
            Some(Command::Reference(ReferenceCommand::Rcp(args))) => {
                protocheck::reference::rcp::run_rcp_reference(args)
                    .await
                    .map(|()| ExitCode::SUCCESS)
            }
            Some(Command::Reference(ReferenceCommand::Mcp(args)))
                if args.revision == protocheck::reference::mcp2025::REVISION =>
            {
                match protocheck::reference::mcp2025::Mcp25Args::try_from(args) {
                    Ok(args) => protocheck::reference::mcp2025::run_mcp25_reference(args)
                        .await
                        .map(|()| ExitCode::SUCCESS),
                    Err(e) => Err(e),
                }
            }
            Some(Command::Reference(ReferenceCommand::Mcp(args))) => {
                protocheck::reference::mcp::run_mcp_reference(args)
                    .await
                    .map(|()| ExitCode::SUCCESS)
            }
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn init_tracing(quiet: bool) {
    let default = if quiet {
        "warn"
    } else {
        "protocheck=info,tower_http=warn"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal: a log file, journald or a
    // container's log collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
}

async fn open_store(db: &DatabaseArgs) -> anyhow::Result<Arc<dyn store::Store>> {
    let store = store::connect(&db.database_url)
        .await
        .context("opening the database")?;
    store.migrate().await.context("applying migrations")?;
    Ok(store)
}

async fn serve(
    db: DatabaseArgs,
    web_args: WebArgs,
    workers: WorkerArgs,
    directory: protocheck::config::DirectorySyncArgs,
) -> anyhow::Result<()> {
    let limits = connection_limits(&web_args, workers.workers);
    // A registry URL that cannot be used is a usage error before anything starts.
    let directory_sync = if directory.registry_sync_secs > 0 {
        Some(
            protocheck::directory::SyncConfig::from_args(
                &directory.registry,
                web_args.public_url.as_deref(),
            )
            .map_err(anyhow::Error::msg)?,
        )
    } else {
        None
    };
    let store = open_store(&db).await?;
    let wake = Arc::new(Notify::new());
    let events = RunEvents::new();
    let metrics = Metrics::new();
    let keyring = protocheck::credentials::load_keyring(&workers.credentials)?.map(Arc::new);
    let policy = workers.address_policy(Some(web_args.bind));
    let schedule_wake = Arc::new(Notify::new());
    let queue = Queue::new(store.clone(), wake.clone(), workers.max_attempts)
        .with_schedule_wake(schedule_wake.clone())
        .with_host_quota(HostQuota::from_args(&workers.host_limits))
        .with_keyring(keyring.clone())
        .with_address_policy(policy);
    let attestor =
        protocheck::attest::start(&workers.attest, &db.database_url, store.as_ref()).await?;
    let pool = if workers.workers > 0 {
        let deps = WorkerDeps {
            store: store.clone(),
            wake,
            events: events.clone(),
            metrics: metrics.clone(),
        };
        let mut cfg = WorkerConfig::from_args(&workers, policy);
        cfg.extra_roots = ca_roots(workers.ca_cert.as_deref())?;
        cfg.schedule.wake = schedule_wake;
        cfg.attestor = Some(attestor.clone());
        cfg.keyring = keyring;
        cfg.directory_user_agent = Some(
            directory
                .registry
                .user_agent(web_args.public_url.as_deref()),
        );
        cfg.webhooks
            .public_url
            .get_or_insert_with(|| format!("http://{}", web_args.bind));
        Some(WorkerPool::start(deps, cfg)?)
    } else {
        None
    };
    let options = web::WebOptions {
        submit_per_minute: web_args.submit_per_minute,
        badges: web::badge::BadgeSettings {
            max_age: Duration::from_secs(web_args.badge_max_age_secs),
            stale_after: Duration::from_secs(web_args.badge_stale_secs.max(1)),
            public_url: web_args.public_url.clone(),
        },
        attestor: Some(attestor),
        max_streams_per_client: web_args.limits.max_streams_per_client,
        body_timeout: web_args.limits.body_timeout(),
        sign_in_policy: Some(policy),
        sign_in_roots: ca_roots(workers.ca_cert.as_deref())?,
        watch: web::watch::WatchSettings {
            min_interval: Duration::from_secs(web_args.watch_min_interval_secs.max(1)),
            badge_interval: Duration::from_secs(web_args.badge_watch_interval_secs.max(1)),
            ..web::watch::WatchSettings::default()
        },
        host_limits: WorkerConfig::from_args(&workers, policy).host_limits,
        // A service that syncs the registry keeps a directory, and offers
        // the people who check a server to list it.
        directory: match &directory_sync {
            Some(cfg) => Some(protocheck::directory::Listing {
                optout_client: protocheck::directory::optout::client(&registry_client(policy)?)
                    .map_err(anyhow::Error::msg)?,
                public_url: cfg.public_url.clone(),
                user_agent: cfg.user_agent.clone(),
                watch_interval: cfg.watch_interval,
            }),
            None => None,
        },
    };
    let state = AppState::with_options(queue, events, metrics, options);
    let listener = tokio::net::TcpListener::bind(web_args.bind)
        .await
        .with_context(|| format!("binding {}", web_args.bind))?;
    tracing::info!(
        addr = %web_args.bind,
        workers = workers.workers,
        private_targets = matches!(policy, AddressPolicy::AllowPrivate),
        "protocheck serving"
    );
    let stop = CancellationToken::new();
    tokio::spawn(shutdown_signal(stop.clone()));
    if let Some(cfg) = directory_sync {
        let http = registry_client(policy)?;
        let every = Duration::from_secs(directory.registry_sync_secs);
        let store = store.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            loop {
                match protocheck::directory::sync(store.as_ref(), &http, &cfg).await {
                    Ok(r) => {
                        tracing::info!(registry = %cfg.registry, "directory synced: {}", r.summary())
                    }
                    Err(e) => {
                        tracing::warn!(registry = %cfg.registry, error = %e, "directory sync stopped; the directory keeps what it had")
                    }
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
        });
    }
    let server = web::serve::serve(listener, web::app(state), limits, stop.clone());
    let drain = async {
        if let Some(pool) = pool {
            stop.cancelled().await;
            pool.shutdown().await;
        }
    };
    // Progress streams of runs that were released can outlive the grace period; cut them.
    let hard_stop = async {
        stop.cancelled().await;
        tokio::time::sleep(Duration::from_secs(workers.shutdown_grace_secs + 5)).await;
    };
    tokio::select! {
        (served, ()) = async { tokio::join!(server, drain) } => served?,
        () = hard_stop => tracing::warn!("connections still open after the grace period; exiting"),
    }
    tracing::info!("protocheck stopped");
    Ok(())
}

/// The connection limits of `serve`, within the file limit (raised to the
/// hard limit first where the system allows it).
fn connection_limits(web_args: &WebArgs, workers: usize) -> web::serve::ConnLimits {
    let args = &web_args.limits;
    let budget = web::serve::raise_file_limit()
        .map(|limit| web::serve::FileBudget::for_workers(limit, workers));
    let max_connections = match budget {
        Some(b) => b.max_connections(args.max_connections),
        None => args.max_connections.unwrap_or(1024),
    };
    if let Some(wanted) = args.max_connections.filter(|&w| w > max_connections) {
        tracing::warn!(
            wanted,
            max_connections,
            "the connection limit is lowered to what the file limit allows"
        );
    }
    // One address never holds more than half of the service, so a single
    // client cannot lock everyone else out.
    let max_per_client = args
        .max_connections_per_client
        .clamp(1, (max_connections / 2).max(1));
    tracing::info!(
        file_limit = budget.map(|b| b.file_limit),
        max_connections,
        max_per_client,
        header_timeout_s = args.header_timeout().as_secs(),
        idle_timeout_s = args.idle_timeout().as_secs(),
        write_timeout_s = args.write_timeout().as_secs(),
        "connection limits"
    );
    web::serve::ConnLimits {
        header_timeout: args.header_timeout(),
        idle_timeout: args.idle_timeout(),
        write_timeout: args.write_timeout(),
        max_connections,
        max_per_client,
    }
}

async fn worker(
    db: DatabaseArgs,
    workers: WorkerArgs,
    directory_user_agent: String,
) -> anyhow::Result<()> {
    let store = open_store(&db).await?;
    if store.backend() == Backend::Sqlite {
        tracing::warn!(
            "`worker` on SQLite only shares the queue with processes on this machine; use Postgres to scale out"
        );
    }
    let deps = WorkerDeps {
        store,
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let policy = workers.address_policy(None);
    let mut cfg = WorkerConfig::from_args(&workers, policy);
    cfg.extra_roots = ca_roots(workers.ca_cert.as_deref())?;
    cfg.attestor = Some(
        protocheck::attest::start(&workers.attest, &db.database_url, deps.store.as_ref()).await?,
    );
    cfg.keyring = protocheck::credentials::load_keyring(&workers.credentials)?.map(Arc::new);
    cfg.directory_user_agent = Some(directory_user_agent);
    let pool = WorkerPool::start(deps, cfg)?;
    tracing::info!(workers = workers.workers, "protocheck workers running");
    let stop = CancellationToken::new();
    shutdown_signal(stop.clone()).await;
    pool.shutdown().await;
    Ok(())
}

async fn migrate(db: DatabaseArgs, down: bool) -> anyhow::Result<()> {
    let store = store::connect(&db.database_url)
        .await
        .context("opening the database")?;
    if down {
        store
            .migrate_down_all()
            .await
            .context("reverting migrations")?;
        println!("reverted every migration");
    } else {
        store.migrate().await.context("applying migrations")?;
        println!("migrations applied");
    }
    Ok(())
}

/// `protocheck keys …`.
async fn keys(command: KeysCommand) -> anyhow::Result<ExitCode> {
    use protocheck::api_keys::{KeyError, Rate, create_key_with_quota};
    match command {
        KeysCommand::Create {
            db,
            name,
            rate,
            owner,
            watch_quota,
        } => {
            let store = open_store(&db).await?;
            match create_key_with_quota(
                store.as_ref(),
                &name,
                owner.as_deref(),
                rate,
                watch_quota,
                protocheck::now_ms(),
            )
            .await
            {
                Ok(created) => {
                    println!(
                        "created API key `{}` ({})",
                        created.key.name, created.key.id
                    );
                    println!("owner: {}", created.key.display_owner());
                    println!("rate: {rate}");
                    println!("watch quota: {}", created.key.watch_quota);
                    println!();
                    println!("token: {}", created.token);
                    println!("webhook signing secret: {}", created.webhook_secret);
                    println!();
                    println!(
                        "The token and the secret are shown this once: protocheck keeps only a hash of the token. Store them now."
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(
                    e
                    @ (KeyError::InvalidName(_) | KeyError::InvalidOwner | KeyError::NameTaken(_)),
                ) => {
                    eprintln!("error: {e}");
                    Ok(ExitCode::from(EXIT_USAGE))
                }
                Err(e) => Err(e).context("creating the key"),
            }
        }
        KeysCommand::List { db } => {
            let store = open_store(&db).await?;
            let keys = store.api_keys().await.context("listing keys")?;
            if keys.is_empty() {
                println!("no API keys");
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{:<36}  {:<20}  {:<20}  {:<10}  {:<11}  {:<24}  {:<24}  STATUS",
                "ID", "NAME", "OWNER", "RATE", "WATCHES", "CREATED", "LAST USED"
            );
            for k in keys {
                // What the key keeps of its watch quota.
                let kept = store
                    .count_key_watches(k.id)
                    .await
                    .context("counting watches")?;
                let status = match k.revoked_at_ms {
                    Some(at) => format!("revoked {}", protocheck::rfc3339(at)),
                    None => "active".to_owned(),
                };
                println!(
                    "{:<36}  {:<20}  {:<20}  {:<10}  {:<11}  {:<24}  {:<24}  {status}",
                    k.id,
                    k.name,
                    k.display_owner(),
                    Rate::of(&k).to_string(),
                    format!("{kept}/{}", k.watch_quota),
                    protocheck::rfc3339(k.created_at_ms),
                    k.last_used_at_ms
                        .map_or_else(|| "never".to_owned(), protocheck::rfc3339),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        KeysCommand::Revoke { db, key } => {
            let store = open_store(&db).await?;
            match store
                .revoke_api_key(&key, protocheck::now_ms())
                .await
                .context("revoking the key")?
            {
                Some(k) => {
                    println!("revoked API key `{}` ({})", k.name, k.id);
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    eprintln!("error: no active API key has the id or name `{key}`");
                    Ok(ExitCode::from(EXIT_USAGE))
                }
            }
        }
    }
}

/// `protocheck watches …`: what an operator sees of every watch, and ends.
/// The guarded client of registry requests: a page is read up to
/// [`protocheck::directory::registry::MAX_PAGE_BYTES`].
fn registry_client(policy: AddressPolicy) -> anyhow::Result<HttpClient> {
    HttpClient::new(
        policy,
        Limits {
            max_body_bytes: protocheck::directory::registry::MAX_PAGE_BYTES,
            ..Limits::default()
        },
    )
    .context("building the HTTP client")
}

async fn registry(command: RegistryCommand) -> anyhow::Result<ExitCode> {
    let RegistryCommand::Sync {
        db,
        registry,
        public_url,
        allow_private_targets,
    } = command;
    let cfg = match protocheck::directory::SyncConfig::from_args(&registry, public_url.as_deref()) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let policy = if allow_private_targets == Some(true) {
        AddressPolicy::AllowPrivate
    } else {
        AddressPolicy::PublicOnly
    };
    let store = open_store(&db).await?;
    let http = registry_client(policy)?;
    match protocheck::directory::sync(store.as_ref(), &http, &cfg).await {
        Ok(r) => {
            println!("synced {}: {}", cfg.registry, r.summary());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!(
                "error: the sync of {} stopped: {e}; the directory keeps what it had",
                cfg.registry
            );
            Ok(ExitCode::from(1))
        }
    }
}

async fn directory(command: DirectoryCommand) -> anyhow::Result<ExitCode> {
    match command {
        DirectoryCommand::List { db } => {
            let store = open_store(&db).await?;
            let entries = store
                .directory_entries()
                .await
                .context("listing the directory")?;
            if entries.is_empty() {
                println!("the directory is empty");
                return Ok(ExitCode::SUCCESS);
            }
            for e in entries {
                println!(
                    "{}  {}  {}  {}  {}",
                    e.registry_name.as_deref().unwrap_or("-"),
                    e.status,
                    e.transport,
                    e.url,
                    e.not_probed.as_deref().unwrap_or("judged"),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        DirectoryCommand::Delist { db, url, reason } => {
            if reason.trim().is_empty() {
                eprintln!("error: --reason must say why");
                return Ok(ExitCode::from(EXIT_USAGE));
            }
            let store = open_store(&db).await?;
            // The directory lists judged URLs in their canonical form, and a
            // URL it cannot judge (a template) as the registry wrote it.
            let url = match protocheck::target::CanonicalUrl::parse(url.trim()) {
                Ok(c) => c.as_str().to_owned(),
                Err(why) => {
                    let raw = url.trim().to_owned();
                    let listed = store
                        .directory_entry(&raw)
                        .await
                        .context("reading the directory")?;
                    if listed.is_none() {
                        eprintln!(
                            "error: {raw:?} is not an http(s) URL ({why}) and the directory lists no such entry"
                        );
                        return Ok(ExitCode::from(EXIT_USAGE));
                    }
                    raw
                }
            };
            let removed = store
                .delist_directory_url(&url, reason.trim(), "operator", protocheck::now_ms())
                .await
                .context("delisting")?;
            if let Some(target) = removed.as_ref().and_then(|e| e.target_id.as_deref()) {
                store
                    .delete_watch(target, "mcp", None)
                    .await
                    .context("ending its watch")?;
            }
            match removed {
                Some(_) => {
                    println!("delisted {url}: it left the directory and no sync lists it again")
                }
                None => println!("{url} was not listed; no sync will list it"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn watches(command: WatchesCommand) -> anyhow::Result<ExitCode> {
    match command {
        WatchesCommand::List { db, target } => {
            let store = open_store(&db).await?;
            let watches = store
                .list_watches(target.as_deref())
                .await
                .context("listing watches")?;
            if watches.is_empty() {
                println!("no watches");
                return Ok(ExitCode::SUCCESS);
            }
            let keys: std::collections::HashMap<_, _> = store
                .api_keys()
                .await
                .context("listing keys")?
                .into_iter()
                .map(|k| (k.id, k.name))
                .collect();
            println!(
                "{:<36}  {:<24}  {:<5}  {:<20}  {:<10}  {:<24}  WEBHOOK",
                "ID", "TARGET", "SUITE", "KEPT BY", "EVERY (S)", "NEXT RUN"
            );
            for w in watches {
                let kept_by = match (w.api_key, w.expires_at_ms) {
                    (Some(k), _) => keys
                        .get(&k)
                        .map_or_else(|| k.to_string(), |name| format!("key {name}")),
                    (None, Some(_)) => "badge".to_owned(),
                    (None, None) => "-".to_owned(),
                };
                println!(
                    "{:<36}  {:<24}  {:<5}  {:<20}  {:<10}  {:<24}  {}",
                    w.id,
                    w.target_id,
                    w.suite,
                    kept_by,
                    w.interval_ms / 1000,
                    protocheck::rfc3339(w.next_due_at_ms),
                    w.webhook_url
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), protocheck::webhook::display_url),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        WatchesCommand::Remove { db, id } => {
            let Ok(watch) = uuid::Uuid::parse_str(&id) else {
                eprintln!("error: `{id}` is not a watch id (a UUID, as `watches list` shows)");
                return Ok(ExitCode::from(EXIT_USAGE));
            };
            let store = open_store(&db).await?;
            if store
                .delete_watch_by_id(watch)
                .await
                .context("removing the watch")?
            {
                println!("removed watch {watch}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no watch has the id `{watch}`");
                Ok(ExitCode::from(EXIT_USAGE))
            }
        }
    }
}

/// Waits for ctrl-c or SIGTERM, then cancels `stop`.
async fn shutdown_signal(stop: CancellationToken) {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
        () = stop.cancelled() => return,
    }
    tracing::info!("shutdown requested: no new runs; in-flight runs get the grace period");
    stop.cancel();
}

async fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let endpoint = match (&args.url, &args.stdio) {
        (_, Some(cmd)) => Endpoint::Stdio(cmd.clone()),
        (Some(url), None) => match protocheck::target::CanonicalUrl::parse(url) {
            Ok(u) => Endpoint::Http(u.url().clone()),
            Err(e) => return usage(e.to_string()),
        },
        (None, None) => unreachable!("clap requires a URL or --stdio"),
    };
    let format = if args.json {
        report::Format::Json
    } else {
        args.format.unwrap_or(report::Format::Text)
    };
    let expected_failures = match &args.expected_failures {
        None => None,
        Some(path) => match report::gate::load_expected_failures(path) {
            Ok(ids) => Some(ids),
            Err(e) => return usage(e),
        },
    };
    let gate = report::Gate {
        min_level: args.min_level,
        min_grade: args.min_grade,
        expected_failures,
    };
    // Refuse a flag that cannot apply before spending a run on it.
    let requested = SuiteChoice::from(args.suite).protocol();
    if let Err(e) = gate.applies_to_suite(requested) {
        return usage(e);
    }
    let gated = gate != report::Gate::default();
    let options = RunOptions {
        request_timeout_ms: args.timeout_ms,
        bearer_token: args.bearer_token.map(protocheck::suite::BearerToken::new),
        limited_token: args.limited_token.map(protocheck::suite::BearerToken::new),
        profile: args.profile.clone(),
        allow_writes: args.allow_writes.then_some(true),
        allow_tool_calls: args.allow_tool_calls.then_some(true),
        mcp_revision: (args.mcp_revision != protocheck::suite::McpRevision::Newest)
            .then_some(args.mcp_revision),
        ..RunOptions::default()
    };
    if let Err(e) = options.validate() {
        return usage(e);
    }
    // `check` runs on the user's own machine: private targets are theirs to test.
    let policy = if args.public_only {
        AddressPolicy::PublicOnly
    } else {
        AddressPolicy::AllowPrivate
    };
    let roots = match ca_roots(args.ca_cert.as_deref()) {
        Ok(roots) => roots,
        Err(e) => return usage(e),
    };
    let limits = Limits::default().with_max_answer_bytes(args.max_answer_bytes);
    let http = HttpClient::with_extra_roots(policy, limits, roots)?;
    let mut ctx = RunContext::new(http, options);
    ctx.target_concurrency = args.concurrency;
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    // Text on stdout shows findings as they arrive; every other output waits for the report.
    let stream = format == report::Format::Text && args.output.is_none();
    let printer = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(f) = rx.recv().await {
            if stream {
                println!("{}", report::text::finding_line(&f));
            }
            all.push(f);
        }
        all
    });
    let verdict = suite::runner::run_suite(args.suite.into(), &endpoint, &ctx, tx).await;
    let findings = printer.await.unwrap_or_default();
    let target = endpoint.to_string();
    let error = verdict.as_ref().err().map(ToString::to_string);
    let mut doc = Report::from_check(
        &target,
        verdict
            .as_ref()
            .map_err(|_| error.as_deref().unwrap_or_default()),
        &findings,
    );
    if let Some(base) = &args.public_url {
        doc.link_rules(base);
    }
    let misapplied = match &doc.verdict {
        Some(v) => gate.applies_to(v).err(),
        None => None,
    };
    if gated && misapplied.is_none() {
        doc.apply_gate(&gate);
    }
    let rendered = doc.render(format);
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &rendered) {
                return usage(format!("cannot write {}: {e}", path.display()));
            }
            print!("{}", report::text::summary(&doc));
        }
        None if stream => print!("{}", report::text::summary(&doc)),
        None => print!("{rendered}"),
    }
    if args.github {
        let links = report::github::Links::default();
        if let Err(e) = report::github::write(&doc, args.output.as_deref(), &links) {
            return usage(e);
        }
    }
    if let Some(e) = error {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if let Some(e) = misapplied {
        return usage(e);
    }
    Ok(ExitCode::from(u8::from(doc.passed() != Some(true))))
}

/// Prints `message` as a usage error: exit 2.
/// The CA certificates of `--ca-cert` / `PROTOCHECK_CA_CERT`, if given.
fn ca_roots(path: Option<&std::path::Path>) -> anyhow::Result<Vec<Vec<u8>>> {
    match path {
        None => Ok(Vec::new()),
        Some(path) => protocheck::transport::read_pem_roots(path).map_err(anyhow::Error::msg),
    }
}

/// `protocheck rules [ID] [--json]`: a rule's page, or every rule, offline.
fn rules(args: &RulesArgs) -> ExitCode {
    use protocheck::web::rules::RuleDoc;
    match &args.id {
        Some(id) => match RuleDoc::find(id) {
            Some(doc) if args.json => {
                println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Some(doc) => {
                print!("{}", doc.text());
                ExitCode::SUCCESS
            }
            None => {
                let shown: String = id.chars().take(64).collect();
                eprintln!(
                    "error: no rule has the id `{shown}`; `protocheck rules` lists every rule"
                );
                ExitCode::from(EXIT_USAGE)
            }
        },
        None => {
            let all = RuleDoc::all();
            if args.json {
                let list = protocheck::web::rules::RuleList {
                    count: all.len(),
                    rules: all,
                };
                println!(
                    "{}",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                );
            } else {
                for doc in &all {
                    println!(
                        "{:<14}  {:<10}  {:<24}  {}",
                        doc.id,
                        doc.keyword,
                        doc.catalogue_name(),
                        doc.title
                    );
                }
            }
            ExitCode::SUCCESS
        }
    }
}

fn usage(message: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("error: {message}");
    Ok(ExitCode::from(EXIT_USAGE))
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every subcommand's arguments are consistent (ids, flags and env variables
    /// shared by flattened groups), which clap otherwise checks only when the
    /// subcommand is first parsed at run time.
    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
        protocheck::config::boolish_flags(Cli::command()).debug_assert();
    }

    /// Every on/off flag of every command takes a value after `=`, and a
    /// bare flag still turns it on.
    #[test]
    fn every_on_off_flag_takes_a_value() {
        let check = |args: &[&str]| match super::parse_cli(args).expect("parses").command {
            Some(super::Command::Check(c)) => (c.json, c.allow_writes, c.url),
            other => panic!("{other:?}"),
        };
        let (json, writes, url) = check(&["protocheck", "check", "--json", "http://h/"]);
        assert!(json && !writes);
        assert_eq!(url.as_deref(), Some("http://h/"));
        let (json, writes, _) = check(&[
            "protocheck",
            "check",
            "--json=no",
            "--allow-writes=on",
            "http://h/",
        ]);
        assert!(!json && writes);
        assert!(super::parse_cli(["protocheck", "migrate", "--down=maybe"]).is_err());
    }
}
