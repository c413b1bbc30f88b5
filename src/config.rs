//! Configuration, read from the command line and the environment in one place
//! (clap's `env = …`), with the defaults a fresh clone needs: SQLite in
//! `./protocheck.db`, workers in-process, listening on 127.0.0.1:8080.

use crate::transport::AddressPolicy;
use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

/// The database every command opens.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// `postgres://…` for Postgres, `sqlite:…` for SQLite (created when missing).
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://protocheck.db",
        hide_env_values = true
    )]
    pub database_url: String,
}

/// How workers run.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Concurrent runs per process.
    #[arg(long, env = "PROTOCHECK_WORKERS", default_value_t = 4)]
    pub workers: usize,
    /// Requests one run has in flight to its target at once, 1 to 32: both
    /// MCP suites and RCP/1 over HTTP, and MCP 2025-11-25 over stdio; the
    /// other stdio runs send one at a time. The default is
    /// the engines' `DEFAULT_TARGET_CONCURRENCY` (`config` sits beside `suite`
    /// and names it not; a worker test keeps the two equal).
    #[arg(long, env = "PROTOCHECK_TARGET_CONCURRENCY", default_value_t = 16, value_parser = crate::config::concurrency)]
    pub target_concurrency: usize,
    /// A PEM file of CA certificates to trust for targets, beside the
    /// built-in roots (an internal CA; `reference mcp --tls --ca-out` writes one).
    #[arg(long, env = "PROTOCHECK_CA_CERT", value_name = "PEM")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// The largest answer read from a target, in bytes (an HTTP body, one
    /// server-sent event, one stdio line), 64 KiB to 1 GiB. A larger answer
    /// leaves the rule that asked for it not verified, with the figure.
    #[arg(long, env = "PROTOCHECK_MAX_ANSWER_BYTES", default_value_t = crate::transport::DEFAULT_MAX_ANSWER_BYTES, value_parser = crate::config::answer_bytes)]
    pub max_answer_bytes: usize,
    /// A run's lease; a worker that stops heartbeating loses the run after this.
    #[arg(long, env = "PROTOCHECK_LEASE_SECS", default_value_t = 60)]
    pub lease_secs: u64,
    /// Attempts before a run whose target keeps failing (or whose worker keeps dying) ends as `error`.
    #[arg(long, env = "PROTOCHECK_MAX_ATTEMPTS", default_value_t = 3)]
    pub max_attempts: i32,
    /// Seconds between the fallback looks at the queue, one per process:
    /// submissions, retries, host gaps, the scheduler, the reaper and (on
    /// Postgres, through LISTEN/NOTIFY) other processes' submissions wake a
    /// worker at once, so this only bounds what a lost notification costs.
    #[arg(long, env = "PROTOCHECK_POLL_SECS", default_value_t = 60)]
    pub poll_secs: u64,
    /// On shutdown, seconds in-flight runs get to finish before they are released.
    #[arg(long, env = "PROTOCHECK_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,
    /// Whole-run deadline in seconds.
    #[arg(long, env = "PROTOCHECK_RUN_DEADLINE_SECS", default_value_t = 120)]
    pub run_deadline_secs: u64,
    /// Allow targets on private, loopback and link-local addresses (`1`/`0`,
    /// `true`/`false`, `yes`/`no`, `on`/`off`). Unset: allowed only when the
    /// service listens on loopback alone.
    #[arg(
        long,
        env = "PROTOCHECK_ALLOW_PRIVATE_TARGETS",
        value_name = "BOOL",
        value_parser = boolish(),
        ignore_case = true,
        hide_possible_values = true
    )]
    pub allow_private_targets: Option<bool>,
    /// The key that signs each verdict as it is stored.
    #[command(flatten)]
    pub attest: AttestArgs,
    /// What protocheck sends one target host.
    #[command(flatten)]
    pub host_limits: HostLimitArgs,
    /// The key that seals credentials submitted with a run.
    #[command(flatten)]
    pub credentials: CredentialsArgs,
    /// Milliseconds between two ticks of the scheduler, which starts the runs
    /// of watched targets when they are due (0: this process does not
    /// schedule; another one must).
    #[arg(long, env = "PROTOCHECK_SCHEDULE_TICK_MS", default_value_t = 5000)]
    pub schedule_tick_ms: u64,
    /// The public base URL of report links in webhooks (the same variable as
    /// `serve`'s `--public-url`). Without it, `serve` uses `http://` and its bind
    /// address, and `worker` sends paths.
    #[arg(long, env = "PROTOCHECK_PUBLIC_URL")]
    pub webhook_public_url: Option<String>,
}

impl WorkerArgs {
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_secs.max(1))
    }

    /// The address policy: explicit setting first, else private targets only for a
    /// service nobody else can reach (`listen` on loopback).
    pub fn address_policy(&self, listen: Option<SocketAddr>) -> AddressPolicy {
        let allow = self
            .allow_private_targets
            .unwrap_or_else(|| listen.is_some_and(|addr| addr.ip().is_loopback()));
        if allow {
            AddressPolicy::AllowPrivate
        } else {
            AddressPolicy::PublicOnly
        }
    }
}

/// What protocheck sends one target host, whoever submits: protocheck must not
/// be usable to flood a third party. The host is the target URL's host without
/// its port. 0 turns a limit off. `serve` checks the hourly and `force` limits
/// when a run is submitted (429 with `Retry-After` beyond them); every worker
/// applies the concurrency and the gap when it claims a run.
#[derive(Debug, Clone, Args)]
pub struct HostLimitArgs {
    /// Runs of one host running at once, across all workers.
    #[arg(long, env = "PROTOCHECK_HOST_CONCURRENCY", default_value_t = 1)]
    pub host_concurrency: u32,
    /// Seconds between the end of a run on a host and the start of the next there.
    #[arg(long, env = "PROTOCHECK_HOST_GAP_SECS", default_value_t = 10)]
    pub host_gap_secs: u64,
    /// New runs of one host per rolling hour.
    #[arg(long, env = "PROTOCHECK_HOST_RUNS_PER_HOUR", default_value_t = 20)]
    pub host_runs_per_hour: u32,
    /// A submission with `force` (or a `max_age_s` below the default) starts
    /// a new run of one server (its URL without the query string) at most
    /// once per this many seconds; a plain submission is never held by it.
    #[arg(long, env = "PROTOCHECK_FORCE_EVERY_SECS", default_value_t = 300)]
    pub force_every_secs: u64,
}

/// The web service.
#[derive(Debug, Clone, Args)]
pub struct WebArgs {
    #[arg(long, env = "PROTOCHECK_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Run submissions allowed per client address per minute.
    #[arg(long, env = "PROTOCHECK_SUBMIT_PER_MINUTE", default_value_t = 30)]
    pub submit_per_minute: u32,
    /// The public base URL used in absolute links such as badge snippets
    /// (defaults to `http://` and the `Host` a request came with).
    #[arg(long, env = "PROTOCHECK_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How long clients and proxies may cache a badge (`Cache-Control: max-age`).
    #[arg(long, env = "PROTOCHECK_BADGE_MAX_AGE_SECS", default_value_t = 300)]
    pub badge_max_age_secs: u64,
    /// Seconds after which a badge's verdict is drawn grey and "stale", and
    /// after which a target no run could reach shows "unreachable since".
    #[arg(long, env = "PROTOCHECK_BADGE_STALE_SECS", default_value_t = 604_800)]
    pub badge_stale_secs: u64,
    /// The shortest interval a watch may ask for, in seconds
    /// (`POST /api/v1/targets/{id}/watch`).
    #[arg(
        long,
        env = "PROTOCHECK_WATCH_MIN_INTERVAL_SECS",
        default_value_t = 3600
    )]
    pub watch_min_interval_secs: u64,
    /// Seconds between two runs of a target whose badge was served in the
    /// last 30 days.
    #[arg(
        long,
        env = "PROTOCHECK_BADGE_WATCH_INTERVAL_SECS",
        default_value_t = 86_400
    )]
    pub badge_watch_interval_secs: u64,
    #[command(flatten)]
    pub limits: ConnectionArgs,
}

/// Limits on client connections, so idle and slow clients cannot hold the
/// service's file descriptors (see docs/src/running/connection-limits.md).
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Seconds a client has to send a request's head: from connecting, or from
    /// the head's first byte on a kept-alive connection. Then the connection is closed.
    #[arg(long, env = "PROTOCHECK_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a connection may stay open with no request in flight.
    #[arg(long, env = "PROTOCHECK_IDLE_TIMEOUT_SECS", default_value_t = 60)]
    pub idle_timeout_secs: u64,
    /// Seconds a connection's writes may wait on a client that stopped
    /// reading (a response, a progress stream, pipelined answers) before the
    /// connection is closed.
    #[arg(long, env = "PROTOCHECK_WRITE_TIMEOUT_SECS", default_value_t = 30)]
    pub write_timeout_secs: u64,
    /// Seconds a request body may pause before the request is answered 408.
    #[arg(long, env = "PROTOCHECK_BODY_TIMEOUT_SECS", default_value_t = 10)]
    pub body_timeout_secs: u64,
    /// Open connections, all clients together. Default: what the file limit
    /// leaves after a reserve for the database and the workers; a larger value
    /// is lowered to that.
    #[arg(long, env = "PROTOCHECK_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Open connections of one client address (one /64 for IPv6); at most half
    /// of the total.
    #[arg(
        long,
        env = "PROTOCHECK_MAX_CONNECTIONS_PER_CLIENT",
        default_value_t = 64
    )]
    pub max_connections_per_client: usize,
    /// Progress streams (`/api/v1/runs/{id}/events`) one client address may
    /// follow at once; more are answered 429.
    #[arg(long, env = "PROTOCHECK_MAX_STREAMS_PER_CLIENT", default_value_t = 16)]
    pub max_streams_per_client: usize,
}

impl ConnectionArgs {
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_secs.max(1))
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs.max(1))
    }

    pub fn write_timeout(&self) -> Duration {
        Duration::from_secs(self.write_timeout_secs.max(1))
    }

    pub fn body_timeout(&self) -> Duration {
        Duration::from_secs(self.body_timeout_secs.max(1))
    }
}

/// The attestation signing key (see [`crate::attest::keys::load_signing_key`]).
#[derive(Debug, Clone, Default, Args)]
pub struct AttestArgs {
    /// Ed25519 private key: PKCS#8 PEM or 64 hex digits of the seed. Prefer the
    /// environment variable: a flag shows in the process list.
    #[arg(
        long = "signing-key",
        env = "PROTOCHECK_SIGNING_KEY",
        hide_env_values = true,
        value_name = "PEM|HEX"
    )]
    pub signing_key: Option<Secret>,
    /// The key file, created (mode 0600) with a new key when missing. Default:
    /// beside the SQLite database, or ./protocheck-signing-key.pem with Postgres.
    #[arg(long, env = "PROTOCHECK_SIGNING_KEY_FILE")]
    pub signing_key_file: Option<std::path::PathBuf>,
}

/// The key that seals bearer tokens submitted through the API until their
/// run ends (see [`crate::credentials`]). `serve` seals with it and every
/// `worker` opens with it, so all of them need the same keys. Unset: the
/// service refuses credentials.
#[derive(Debug, Clone, Default, Args)]
pub struct CredentialsArgs {
    /// One or more keys of 64 hex digits (`openssl rand -hex 32`), separated by
    /// whitespace or commas: the first seals, all open. To rotate, put a new key
    /// first and drop the old one once the runs queued before have ended.
    #[arg(
        long = "credentials-key",
        env = "PROTOCHECK_CREDENTIALS_KEY",
        hide_env_values = true,
        value_name = "HEX[,HEX…]"
    )]
    pub credentials_key: Option<Secret>,
    /// A file (mode 0600) holding the keys as `--credentials-key` takes them.
    #[arg(long, env = "PROTOCHECK_CREDENTIALS_KEY_FILE")]
    pub credentials_key_file: Option<std::path::PathBuf>,
}

/// A configuration value that must not be logged: `Debug` hides it, and its
/// memory is wiped when dropped.
#[derive(Clone, Default)]
pub struct Secret(zeroize::Zeroizing<String>);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(zeroize::Zeroizing::new(s))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A private key that others can read is no longer private: refuse it, as ssh does.
#[cfg(unix)]
pub fn refuse_shared_key_file(path: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .with_context(|| format!("reading the permissions of {}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        anyhow::bail!(
            "the key file {} has mode {:o}; it must be readable by its owner only (chmod 600)",
            path.display(),
            mode & 0o777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn refuse_shared_key_file(_path: &std::path::Path) -> anyhow::Result<()> {
    Ok(())
}

/// The words every boolean setting takes, flag or environment variable, in
/// any case: an operator writes `1`, `true`, `yes` or `on` as the habit of
/// their tooling has it (compose files, systemd units, Helm values), and none
/// of them should stop the service at start-up.
pub const BOOL_WORDS: [&str; 8] = ["1", "0", "true", "false", "yes", "no", "on", "off"];

/// Parses one of [`BOOL_WORDS`]; anything else is refused with the list.
pub fn boolish() -> impl clap::builder::TypedValueParser<Value = bool> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(BOOL_WORDS).map(|word| {
        matches!(
            word.to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// What the help of every command with an on/off flag adds.
pub const BOOL_HELP: &str = "An on/off flag also takes a value after `=`: `--json=no`. Every \
    flag and environment variable that is on or off takes 1/0, true/false, yes/no or on/off.";

/// Makes every on/off flag of `cmd` and of its subcommands take a value as
/// well: `--json` alone still turns it on, and `--json=no` (or `=0`, `=off`,
/// `=false`) leaves it off, so that a script can pass a setting it computed.
/// The value must follow `=`, so `--json URL` keeps reading `URL` as the
/// argument it is.
pub fn boolish_flags(cmd: clap::Command) -> clap::Command {
    use clap::ArgAction;
    let has_flag = cmd
        .get_arguments()
        .any(|a| matches!(a.get_action(), ArgAction::SetTrue));
    let cmd = cmd.mut_args(|arg| {
        if !matches!(arg.get_action(), ArgAction::SetTrue) {
            return arg;
        }
        arg.action(ArgAction::Set)
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true")
            .default_value("false")
            .value_parser(boolish())
            .ignore_case(true)
            .value_name("BOOL")
            .hide_possible_values(true)
            .hide_default_value(true)
    });
    let cmd = if has_flag && cmd.get_after_help().is_none() {
        cmd.after_help(BOOL_HELP)
    } else {
        cmd
    };
    cmd.mut_subcommands(boolish_flags)
}

/// A target concurrency: 1 to 32 requests in flight.
/// The bounds of `--max-answer-bytes`: below 64 KiB ordinary results would be
/// cut; above 1 GiB one answer could take the process's memory.
const ANSWER_BYTES: std::ops::RangeInclusive<usize> = 64 * 1024..=1024 * 1024 * 1024;

/// Parses `--max-answer-bytes`: a number of bytes within [`ANSWER_BYTES`].
pub fn answer_bytes(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if ANSWER_BYTES.contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not a number of bytes from {} to {}",
            ANSWER_BYTES.start(),
            ANSWER_BYTES.end()
        )),
    }
}

pub fn concurrency(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=32).contains(&n) => Ok(n),
        _ => Err(format!("`{s}` is not a number of requests from 1 to 32")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Debug, Parser)]
    struct Flags {
        #[arg(long)]
        json: bool,
        #[arg(long, env = "PROTOCHECK_TEST_BOOLISH", value_parser = boolish(), ignore_case = true)]
        allow: Option<bool>,
        url: Option<String>,
    }

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        let mut matches = boolish_flags(Flags::command()).try_get_matches_from(args)?;
        Flags::from_arg_matches_mut(&mut matches)
    }

    #[test]
    fn flags_and_variables_take_every_spelling_of_on_and_off() {
        boolish_flags(Flags::command()).debug_assert();
        let bare = parse(&["t", "--json", "http://x"]).expect("a bare flag");
        assert!(bare.json);
        assert_eq!(
            bare.url.as_deref(),
            Some("http://x"),
            "`--json URL` keeps its URL"
        );
        assert!(!parse(&["t"]).expect("no flag").json);
        for (word, on) in [
            ("1", true),
            ("0", false),
            ("true", true),
            ("FALSE", false),
            ("yes", true),
            ("No", false),
            ("on", true),
            ("off", false),
        ] {
            let flag = parse(&["t", &format!("--json={word}")]).expect(word);
            assert_eq!(flag.json, on, "--json={word}");
            let value = parse(&["t", "--allow", word]).expect(word);
            assert_eq!(value.allow, Some(on), "--allow {word}");
        }
        let refused = parse(&["t", "--allow", "maybe"]).expect_err("not a boolean");
        assert_eq!(refused.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(refused.to_string().contains("yes"), "{refused}");
        let help = boolish_flags(Flags::command()).render_help().to_string();
        assert!(help.contains("1/0, true/false, yes/no or on/off"), "{help}");
    }
}

/// The official MCP Registry, the directory's default `--registry`.
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";

/// Where the public directory reads the MCP Registry, and how it judges what
/// it lists (`protocheck registry sync`, and `serve` with
/// `--registry-sync-secs`).
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// The registry's base URL (its list is `GET {URL}/v0.1/servers`).
    #[arg(
        long = "registry",
        env = "PROTOCHECK_REGISTRY_URL",
        default_value = OFFICIAL_REGISTRY
    )]
    pub registry: String,
    /// Seconds between two checks of a listed server (default: a week). Each
    /// server's slot is placed within it so that the checks are spread evenly.
    #[arg(long, env = "PROTOCHECK_DIRECTORY_INTERVAL_SECS", default_value_t = 7 * 24 * 3600,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub directory_interval_secs: u64,
    /// A contact address (an email or a URL), sent in the User-Agent of the
    /// registry requests so its operators know who reads and how to reach them.
    #[arg(long, env = "PROTOCHECK_DIRECTORY_CONTACT")]
    pub directory_contact: Option<String>,
}

impl RegistryArgs {
    /// The User-Agent of the registry requests: protocheck's name and
    /// version, with the service's public URL and the contact when set.
    pub fn user_agent(&self, public_url: Option<&str>) -> String {
        directory_user_agent(public_url, self.directory_contact.as_deref())
    }
}

/// The User-Agent of the directory's requests (the registry's pages, the
/// owners' opt-out files, the runs of listed servers): protocheck's name and
/// version, the service's public URL and the operator's contact when set.
/// Never a token.
pub fn directory_user_agent(public_url: Option<&str>, contact: Option<&str>) -> String {
    let about: Vec<&str> = public_url
        .into_iter()
        .chain(contact)
        .map(|s| s.trim())
        .filter(|s| !s.is_empty() && !s.chars().any(char::is_control))
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    if about.is_empty() {
        format!("protocheck/{version} (public directory)")
    } else {
        format!(
            "protocheck/{version} (public directory; {})",
            about.join("; ")
        )
    }
}

/// The scheduled registry sync of `serve` (off unless set).
#[derive(Debug, Clone, Args)]
pub struct DirectorySyncArgs {
    /// Seconds between two syncs of the MCP Registry into the public
    /// directory; 0 (the default) syncs nothing. The first sync starts with
    /// the service.
    #[arg(long, env = "PROTOCHECK_REGISTRY_SYNC_SECS", default_value_t = 0)]
    pub registry_sync_secs: u64,
    #[command(flatten)]
    pub registry: RegistryArgs,
}
