//! The public directory of judged MCP servers (#52), fed by the MCP Registry.
//!
//! A sync reads the registry's list ([`registry`]) page by page: the first
//! sync reads it all, later ones only what changed since the newest
//! `updatedAt` the last complete sync saw. Each remote of an entry's latest
//! version becomes a directory entry; one protocheck can judge (no URL
//! template, no header to send) also becomes a target with a watch, which
//! re-checks it on every MCP revision it speaks, a week apart by default,
//! the watches' first slots spread evenly over the interval
//! ([`crate::scheduler::first_slot`]) so the week's runs are not fired in a
//! burst. A registry entry turned
//! `deleted` leaves the directory with its watches; `deprecated` stays,
//! shown as such. A URL that was delisted (by an operator or its owner) is
//! never listed again. An owner leaves by serving a file that names this
//! service ([`optout`]): it is read before a URL is listed and, for every
//! listed origin, at the end of each sync. A person who checks a server may
//! ask to list it too ([`list_submission`]).
//!
//! A sync that fails part-way (the registry unreachable, a page that is not
//! a server list) keeps what it wrote and does not move the high-water mark,
//! so the next sync reads the same changes again; the directory says when
//! the registry was last synced in full.

pub mod optout;
pub mod registry;

use crate::store::{
    DIRECTORY_FROM_REGISTRY, DirectoryEntry, DirectorySync, NewWatch, Store, StoreError,
};
use crate::suite::{McpRevision, RunOptions};
use crate::transport::HttpClient;
use optout::OptOut;
use registry::{Entry, PageError, Status};
use std::collections::HashMap;
use std::time::Duration;
use url::Url;

/// How often a directory server is re-checked by default: a week.
pub const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a sync needs.
#[derive(Debug, Clone)]
pub struct SyncConfig {
    /// The registry's base URL (the official registry by default).
    pub registry: Url,
    /// How often each listed server is re-checked.
    pub watch_interval: Duration,
    /// The User-Agent of the registry requests: the service's public URL
    /// and a contact address, so the registry's operators know who reads.
    pub user_agent: String,
    /// The service's public URL: what an owner's opt-out file names.
    pub public_url: Option<String>,
}

impl SyncConfig {
    /// The sync `args` configure, or why the registry URL is unusable;
    /// `public_url` goes into the User-Agent.
    pub fn from_args(
        args: &crate::config::RegistryArgs,
        public_url: Option<&str>,
    ) -> Result<Self, String> {
        let registry =
            Url::parse(&args.registry).map_err(|e| format!("--registry {}: {e}", args.registry))?;
        if !matches!(registry.scheme(), "http" | "https") {
            return Err(format!("--registry {}: use http or https", args.registry));
        }
        Ok(Self {
            registry,
            watch_interval: Duration::from_secs(args.directory_interval_secs),
            user_agent: args.user_agent(public_url),
            public_url: public_url.map(str::to_owned),
        })
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Pages read.
    pub pages: usize,
    /// Registry entries read.
    pub entries: usize,
    /// Entries of the page that could not be read at all.
    pub skipped: usize,
    /// Remotes listed with a watch (judged).
    pub judged: usize,
    /// Remotes listed without a verdict (templated, needs a header, bad URL).
    pub not_probed: usize,
    /// Remotes left out because their URL was delisted.
    pub delisted: usize,
    /// Entries removed (deleted in the registry, or a remote that is gone).
    pub removed: usize,
    /// Whether it read only the entries updated since the last complete sync.
    pub incremental: bool,
    /// Whether it stopped at [`registry::MAX_PAGES`] with more to read.
    pub stopped_at_page_cap: bool,
}

impl SyncReport {
    /// One line for the operator.
    pub fn summary(&self) -> String {
        format!(
            "{} page(s), {} entr{} ({}), {} judged, {} listed without a verdict, {} delisted, {} removed, {} unreadable{}",
            self.pages,
            self.entries,
            if self.entries == 1 { "y" } else { "ies" },
            if self.incremental {
                "changed since the last sync"
            } else {
                "the whole registry"
            },
            self.judged,
            self.not_probed,
            self.delisted,
            self.removed,
            self.skipped,
            if self.stopped_at_page_cap {
                "; stopped at the page cap, more remain"
            } else {
                ""
            },
        )
    }
}

/// Why a sync stopped.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("{0}")]
    Registry(#[from] PageError),
    #[error("the database: {0}")]
    Store(#[from] StoreError),
    #[error("the opt-out client: {0}")]
    Client(String),
}

/// The owners' opt-out files read during one sync, one per origin.
pub struct OptOuts {
    client: HttpClient,
    public_url: Option<String>,
    user_agent: String,
    seen: HashMap<String, OptOut>,
}

impl OptOuts {
    /// Reads files with `http`'s address policy, naming `cfg`'s service.
    pub fn new(http: &HttpClient, cfg: &SyncConfig) -> Result<Self, SyncError> {
        Ok(Self {
            client: optout::client(http).map_err(SyncError::Client)?,
            public_url: cfg.public_url.clone(),
            user_agent: cfg.user_agent.clone(),
            seen: HashMap::new(),
        })
    }

    /// Reads the opt-out files of the origins of `urls` not read yet,
    /// [`OPTOUT_CONCURRENCY`] at a time.
    pub async fn prefetch(&mut self, urls: Vec<String>) {
        use futures::StreamExt;
        let mut wanted: HashMap<String, String> = HashMap::new();
        for url in urls {
            if let Some(origin) = origin_of(&url)
                && !self.seen.contains_key(&origin)
            {
                wanted.entry(origin).or_insert(url);
            }
        }
        let reads = wanted.into_iter().map(|(origin, url)| {
            let client = self.client.clone();
            let public_url = self.public_url.clone();
            let user_agent = self.user_agent.clone();
            async move {
                let said = optout::check(&client, &url, public_url.as_deref(), &user_agent).await;
                (origin, said)
            }
        });
        let read: Vec<(String, OptOut)> = futures::stream::iter(reads)
            .buffer_unordered(OPTOUT_CONCURRENCY)
            .collect()
            .await;
        self.seen.extend(read);
    }

    /// What the opt-out file of `url`'s origin says (read once per origin).
    pub async fn of(&mut self, url: &str) -> OptOut {
        let Some(origin) = origin_of(url) else {
            return OptOut::Unknown("no origin".into());
        };
        if let Some(known) = self.seen.get(&origin) {
            return known.clone();
        }
        let said = optout::check(
            &self.client,
            url,
            self.public_url.as_deref(),
            &self.user_agent,
        )
        .await;
        if let OptOut::Unknown(why) = &said {
            tracing::debug!(%origin, reason = %why, "opt-out file not read");
        }
        self.seen.insert(origin, said.clone());
        said
    }
}

/// Opt-out files read at once during a sync.
pub const OPTOUT_CONCURRENCY: usize = 16;

fn origin_of(url: &str) -> Option<String> {
    optout::file_url(url).map(|u| u.origin().ascii_serialization())
}

/// The reason recorded when an owner's file takes a URL out.
pub const OWNER_OPTED_OUT: &str = "its owner's opt-out file names this service";

/// Takes `url` out for good as its owner asked: its entry and watch go.
pub async fn delist_for_owner(store: &dyn Store, url: &str) -> Result<(), StoreError> {
    if let Some(gone) = store
        .delist_directory_url(url, OWNER_OPTED_OUT, "owner", crate::now_ms())
        .await?
        && let Some(target) = &gone.target_id
    {
        store.delete_watch(target, "mcp", None).await?;
    }
    Ok(())
}

/// Asks the opt-out file of every listed URL's origin (once per origin) and
/// takes out for good each URL whose file names this service; returns how
/// many left.
pub async fn recheck_optouts(store: &dyn Store, optouts: &mut OptOuts) -> Result<usize, SyncError> {
    let mut left = 0;
    let entries: Vec<_> = store
        .directory_entries()
        .await?
        .into_iter()
        .filter(|e| e.not_probed.is_none())
        .collect();
    optouts
        .prefetch(entries.iter().map(|e| e.url.clone()).collect())
        .await;
    for e in entries {
        if optouts.of(&e.url).await == OptOut::Named {
            delist_for_owner(store, &e.url).await?;
            left += 1;
        }
    }
    Ok(left)
}

/// The run options of a directory watch: every MCP revision the server
/// speaks, no credentials, no writes or tool calls.
pub fn watch_options() -> RunOptions {
    RunOptions {
        mcp_revision: Some(McpRevision::All),
        ..RunOptions::default()
    }
}

/// Reads `cfg.registry` and brings the directory in `store` up to date.
/// `http` is the service's guarded client: a registry on a private address is
/// read only when the service allows private targets.
pub async fn sync(
    store: &dyn Store,
    http: &HttpClient,
    cfg: &SyncConfig,
) -> Result<SyncReport, SyncError> {
    let key = cfg.registry.as_str().to_owned();
    let started = crate::now_ms();
    let previous = store.directory_sync(&key).await?;
    let since = previous.as_ref().and_then(|p| p.high_water.clone());
    let mut report = SyncReport {
        incremental: since.is_some(),
        ..SyncReport::default()
    };
    let mut high_water = since.clone();
    let mut cursor: Option<String> = None;
    let mut optouts = OptOuts::new(http, cfg)?;
    let outcome = loop {
        if report.pages >= registry::MAX_PAGES {
            report.stopped_at_page_cap = true;
            break Ok(());
        }
        let page = match registry::fetch_page(
            http,
            &cfg.registry,
            cursor.as_deref(),
            since.as_deref(),
            &cfg.user_agent,
        )
        .await
        {
            Ok(page) => page,
            Err(e) => break Err(e),
        };
        report.pages += 1;
        report.skipped += page.skipped.len();
        let judged: Vec<String> = page
            .entries
            .iter()
            .flat_map(|e| e.remotes.iter())
            .filter_map(|r| r.target.as_ref().ok().cloned())
            .collect();
        optouts.prefetch(judged).await;
        for entry in &page.entries {
            report.entries += 1;
            if let Some(at) = &entry.updated_at
                && high_water.as_deref().is_none_or(|h| at.as_str() > h)
            {
                high_water = Some(at.clone());
            }
            apply(store, cfg, entry, &mut optouts, &mut report).await?;
        }
        match page.next_cursor {
            // A cursor that does not move would read the same page forever.
            Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
            _ => break Ok(()),
        }
    };
    let now = crate::now_ms();
    let state = match &outcome {
        Ok(()) => DirectorySync {
            registry: key,
            high_water,
            last_success_ms: Some(now),
            last_attempt_ms: started,
            last_error: None,
            listed: i64::try_from(report.entries).unwrap_or(i64::MAX),
            skipped: i64::try_from(report.skipped).unwrap_or(i64::MAX),
        },
        Err(e) => DirectorySync {
            registry: key,
            // The mark stays where the last complete sync left it.
            high_water: since,
            last_success_ms: previous.as_ref().and_then(|p| p.last_success_ms),
            last_attempt_ms: started,
            last_error: Some(e.to_string()),
            listed: previous.as_ref().map_or(0, |p| p.listed),
            skipped: previous.as_ref().map_or(0, |p| p.skipped),
        },
    };
    store.put_directory_sync(&state).await?;
    outcome?;
    // Every listed server's owner may have asked to leave since the last
    // sync, not only those the registry changed.
    report.delisted += recheck_optouts(store, &mut optouts).await?;
    Ok(report)
}

/// Brings the directory in line with one registry entry.
async fn apply(
    store: &dyn Store,
    cfg: &SyncConfig,
    entry: &Entry,
    optouts: &mut OptOuts,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    if !entry.is_latest {
        return Ok(());
    }
    let mut keep = Vec::new();
    if entry.status != Status::Deleted {
        for remote in &entry.remotes {
            let url = remote.target.as_ref().map_or(&remote.url, |t| t).clone();
            if let Some(_reason) = store.directory_delisting(&url).await? {
                report.delisted += 1;
                continue;
            }
            if remote.target.is_ok() && optouts.of(&url).await == OptOut::Named {
                delist_for_owner(store, &url).await?;
                report.delisted += 1;
                continue;
            }
            let now = crate::now_ms();
            let target_id = match &remote.target {
                Ok(canonical) => {
                    let id = crate::target::target_key(canonical);
                    store.upsert_target(&id, canonical, now).await?;
                    let interval_ms = crate::duration_ms(cfg.watch_interval).max(1);
                    store
                        .put_watch(&NewWatch {
                            target_id: id.clone(),
                            suite: "mcp".to_owned(),
                            options: watch_options(),
                            interval_ms,
                            first_due_at_ms: crate::scheduler::first_slot(now, interval_ms),
                            api_key: None,
                            created_at_ms: now,
                            expires_at_ms: None,
                            webhook_url: None,
                            events: Vec::new(),
                        })
                        .await?;
                    report.judged += 1;
                    Some(id)
                }
                Err(_) => {
                    report.not_probed += 1;
                    None
                }
            };
            let listed = DirectoryEntry {
                url: url.clone(),
                source: DIRECTORY_FROM_REGISTRY.to_owned(),
                registry_name: Some(entry.name.clone()),
                title: entry.title.clone(),
                description: Some(entry.description.clone()),
                version: Some(entry.version.clone()),
                status: match entry.status {
                    Status::Deprecated => "deprecated",
                    _ => "active",
                }
                .to_owned(),
                transport: remote.transport.clone(),
                not_probed: remote.target.as_ref().err().map(ToString::to_string),
                target_id,
                registry_updated_at: entry.updated_at.clone(),
                listed_at_ms: now,
                updated_at_ms: now,
                grade: None,
                previous_grade: None,
                last_run_id: None,
                judged_at_ms: None,
                withheld: None,
            };
            if store.put_directory_entry(&listed).await? {
                keep.push(url);
            } else {
                report.delisted += 1;
            }
        }
    }
    for gone in store.remove_directory_entries(&entry.name, &keep).await? {
        report.removed += 1;
        if let Some(target) = &gone.target_id {
            store.delete_watch(target, "mcp", None).await?;
        }
    }
    Ok(())
}

/// What the web layer needs to list a server a person checked and asked to
/// list ("list this server in the public directory").
#[derive(Clone)]
pub struct Listing {
    /// Reads the owner's opt-out file (see [`optout::client`]).
    pub optout_client: HttpClient,
    /// The service's public URL (what an opt-out file names) and the
    /// User-Agent of the directory's requests.
    pub public_url: Option<String>,
    pub user_agent: String,
    /// How often a listed server is re-checked.
    pub watch_interval: Duration,
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listing")
            .field("public_url", &self.public_url)
            .field("watch_interval", &self.watch_interval)
            .finish_non_exhaustive()
    }
}

/// How long a submission waits for the owner's opt-out file: less than the
/// submission's own bound, so the run is answered either way.
pub const SUBMISSION_OPTOUT_TIMEOUT: Duration = Duration::from_secs(5);

/// What became of a request to list a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// It is listed, with a watch that re-checks it.
    Listed,
    /// Its owner's opt-out file names this service: it is out for good.
    OptedOut,
    /// It was delisted before (by an operator or its owner): never again.
    Delisted,
}

impl Listed {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listed => "listed",
            Self::OptedOut => "opted-out",
            Self::Delisted => "delisted",
        }
    }
}

/// Lists the server at `canonical_url` (target `target_id`) as a
/// submission: asks its owner's opt-out file first, then lists it with a
/// watch like a registry entry's. A registry entry of the same URL keeps
/// its registry details.
pub async fn list_submission(
    store: &dyn Store,
    listing: &Listing,
    target_id: &str,
    canonical_url: &str,
) -> Result<Listed, StoreError> {
    if store.directory_delisting(canonical_url).await?.is_some() {
        return Ok(Listed::Delisted);
    }
    let said = tokio::time::timeout(
        SUBMISSION_OPTOUT_TIMEOUT,
        optout::check(
            &listing.optout_client,
            canonical_url,
            listing.public_url.as_deref(),
            &listing.user_agent,
        ),
    )
    .await
    .unwrap_or_else(|_| OptOut::Unknown("timed out".into()));
    if said == OptOut::Named {
        delist_for_owner(store, canonical_url).await?;
        return Ok(Listed::OptedOut);
    }
    if store.directory_entry(canonical_url).await?.is_some() {
        return Ok(Listed::Listed);
    }
    let now = crate::now_ms();
    let interval_ms = crate::duration_ms(listing.watch_interval).max(1);
    store
        .put_watch(&NewWatch {
            target_id: target_id.to_owned(),
            suite: "mcp".to_owned(),
            options: watch_options(),
            interval_ms,
            first_due_at_ms: crate::scheduler::first_slot(now, interval_ms),
            api_key: None,
            created_at_ms: now,
            expires_at_ms: None,
            webhook_url: None,
            events: Vec::new(),
        })
        .await?;
    let listed = store
        .put_directory_entry(&DirectoryEntry {
            url: canonical_url.to_owned(),
            source: crate::store::DIRECTORY_FROM_SUBMISSION.to_owned(),
            registry_name: None,
            title: None,
            description: None,
            version: None,
            status: "active".to_owned(),
            transport: "streamable-http".to_owned(),
            not_probed: None,
            target_id: Some(target_id.to_owned()),
            registry_updated_at: None,
            listed_at_ms: now,
            updated_at_ms: now,
            grade: None,
            previous_grade: None,
            last_run_id: None,
            judged_at_ms: None,
            withheld: None,
        })
        .await?;
    Ok(if listed {
        Listed::Listed
    } else {
        Listed::Delisted
    })
}
