//! The public directory of judged MCP servers (#52), fed by the MCP Registry.
//!
//! A sync reads the registry's list ([`registry`]) page by page: the first
//! sync reads it all, later ones only what changed since the newest
//! `updatedAt` the last complete sync saw. Each remote of an entry's latest
//! version becomes a directory entry; one protocheck can judge (no URL
//! template, no header to send) also becomes a target with a watch, which
//! re-checks it on every MCP revision it speaks, a week apart by default,
//! each watch's slot drawn at random within the interval so the week's runs
//! are spread out rather than fired together. A registry entry turned
//! `deleted` leaves the directory with its watches; `deprecated` stays,
//! shown as such. A URL that was delisted (by an operator or its owner) is
//! never listed again.
//!
//! A sync that fails part-way (the registry unreachable, a page that is not
//! a server list) keeps what it wrote and does not move the high-water mark,
//! so the next sync reads the same changes again; the directory says when
//! the registry was last synced in full.

pub mod registry;

use crate::store::{
    DIRECTORY_FROM_REGISTRY, DirectoryEntry, DirectorySync, NewWatch, Store, StoreError,
};
use crate::suite::{McpRevision, RunOptions};
use crate::transport::HttpClient;
use registry::{Entry, PageError, Status};
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
        for entry in &page.entries {
            report.entries += 1;
            if let Some(at) = &entry.updated_at
                && high_water.as_deref().is_none_or(|h| at.as_str() > h)
            {
                high_water = Some(at.clone());
            }
            apply(store, cfg, entry, &mut report).await?;
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
    Ok(report)
}

/// Brings the directory in line with one registry entry.
async fn apply(
    store: &dyn Store,
    cfg: &SyncConfig,
    entry: &Entry,
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
