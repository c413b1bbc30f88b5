//! A stand-in MCP Registry: `GET /v0.1/servers` as the registry's published
//! OpenAPI document gives it (API version 2025-12-01), over a list of
//! entries held in memory that a test may change between syncs.
//!
//! It pages with an opaque `cursor` (the last entry's `name:version`) and
//! `limit` (at most 100), keeps only latest versions with `version=latest`,
//! leaves deleted entries out unless `include_deleted=true` or
//! `updated_since` is given (as the official registry does), and filters on
//! `updated_since` (an RFC 3339 time, compared as the registry writes it,
//! in UTC with a `Z`). Faults let a test see a registry fail mid-sync: a page
//! number answered 500, or answered with a body that is not a server list.
//! `protocheck reference registry --synthetic N` serves N made-up entries
//! for the directory's scale figures.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, RwLock};

/// Registry metadata key of the official registry's own fields (the
/// directory's reader uses the same).
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";
/// The registry's own page maximum.
const MAX_LIMIT: usize = 100;

/// How the stand-in misbehaves, for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RegistryFault {
    #[default]
    None,
    /// The page after `n` pages were served answers HTTP 500.
    FailAfterPages(usize),
    /// The page after `n` pages were served answers 200 with a body that is
    /// not a server list.
    GarbageAfterPages(usize),
    /// The first request of each page answers `status` with `Retry-After:
    /// retry_after`; the page asked for again is served.
    ThrottleEachPage { status: u16, retry_after: String },
}

#[derive(Debug, Default)]
struct Inner {
    /// `ServerResponse` items, kept sorted by `name:version`.
    entries: Vec<Value>,
    fault: RegistryFault,
    /// Pages served since the fault was set.
    pages: usize,
    /// The pages (by cursor) already throttled once.
    throttled: std::collections::HashSet<String>,
}

/// The stand-in's state: its entries and its fault, shared with the test.
#[derive(Debug, Clone, Default)]
pub struct StandInRegistry(Arc<RwLock<Inner>>);

/// One entry as the registry serves it: `server` and the registry's `_meta`.
pub fn entry(name: &str, version: &str, status: &str, updated_at: &str, remotes: Value) -> Value {
    json!({
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": name,
            "description": format!("{name}, a server of the stand-in registry"),
            "version": version,
            "remotes": remotes,
        },
        "_meta": {OFFICIAL_META: {
            "status": status,
            "publishedAt": updated_at,
            "updatedAt": updated_at,
            "isLatest": true,
        }}
    })
}

fn key(item: &Value) -> String {
    let s = &item["server"];
    format!(
        "{}:{}",
        s["name"].as_str().unwrap_or(""),
        s["version"].as_str().unwrap_or("")
    )
}

impl StandInRegistry {
    pub fn new(entries: Vec<Value>) -> Self {
        let registry = Self::default();
        registry.replace(entries);
        registry
    }

    /// Replaces every entry.
    pub fn replace(&self, mut entries: Vec<Value>) {
        entries.sort_by_key(key);
        if let Ok(mut inner) = self.0.write() {
            inner.entries = entries;
        }
    }

    /// Adds or replaces (same `name:version`) one entry. A server published
    /// under a new version makes its other versions no longer the latest.
    pub fn put(&self, item: Value) {
        if let Ok(mut inner) = self.0.write() {
            let k = key(&item);
            inner.entries.retain(|e| key(e) != k);
            let name = item["server"]["name"].clone();
            for e in inner
                .entries
                .iter_mut()
                .filter(|e| e["server"]["name"] == name)
            {
                e["_meta"][OFFICIAL_META]["isLatest"] = Value::Bool(false);
            }
            inner.entries.push(item);
            inner.entries.sort_by_key(key);
        }
    }

    pub fn set_fault(&self, fault: RegistryFault) {
        if let Ok(mut inner) = self.0.write() {
            inner.fault = fault;
            inner.pages = 0;
            inner.throttled.clear();
        }
    }

    /// Requests of the list since the fault was set (throttled ones too).
    pub fn requests(&self) -> usize {
        self.0.read().map_or(0, |inner| inner.pages)
    }

    /// The router: `GET /v0.1/servers`.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/v0.1/servers", get(list))
            .with_state(self.clone())
    }

    /// `n` synthetic entries, each with one streamable-HTTP remote on
    /// `base` (`{base}/s/{i}/mcp`), every tenth deprecated, every
    /// twenty-fifth templated, every fiftieth needing a header.
    pub fn synthetic(n: usize, base: &str) -> Self {
        let entries = (0..n)
            .map(|i| {
                let remote = if i % 25 == 7 {
                    json!([{"type": "streamable-http", "url": format!("https://{{tenant}}.s{i}.example.com/mcp"),
                            "variables": {"tenant": {"isRequired": true}}}])
                } else if i % 50 == 11 {
                    json!([{"type": "streamable-http", "url": format!("{base}/s/{i}/mcp"),
                            "headers": [{"name": "Authorization", "isRequired": true, "isSecret": true}]}])
                } else {
                    json!([{"type": "streamable-http", "url": format!("{base}/s/{i}/mcp")}])
                };
                let status = if i % 10 == 3 { "deprecated" } else { "active" };
                entry(
                    &format!("io.example.synthetic/server-{i:06}"),
                    "1.0.0",
                    status,
                    "2026-11-01T00:00:00Z",
                    remote,
                )
            })
            .collect();
        Self::new(entries)
    }
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    cursor: Option<String>,
    limit: Option<usize>,
    updated_since: Option<String>,
    version: Option<String>,
    include_deleted: Option<bool>,
}

async fn list(State(registry): State<StandInRegistry>, Query(q): Query<ListQuery>) -> Response {
    let Ok(mut inner) = registry.0.write() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let served = inner.pages;
    inner.pages += 1;
    let fault = inner.fault.clone();
    match fault {
        RegistryFault::FailAfterPages(n) if served >= n => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "registry down").into_response();
        }
        RegistryFault::GarbageAfterPages(n) if served >= n => {
            return (StatusCode::OK, Json(json!({"error": "<not a list>"}))).into_response();
        }
        RegistryFault::ThrottleEachPage {
            status,
            retry_after,
        } => {
            let page = q.cursor.clone().unwrap_or_default();
            if !inner.throttled.contains(&page) {
                let answer = (
                    StatusCode::from_u16(status).unwrap_or(StatusCode::TOO_MANY_REQUESTS),
                    [("retry-after", retry_after)],
                    "slow down",
                )
                    .into_response();
                inner.throttled.insert(page);
                return answer;
            }
        }
        _ => {}
    }
    let limit = q.limit.unwrap_or(30).clamp(1, MAX_LIMIT);
    let include_deleted = q.include_deleted.unwrap_or(false) || q.updated_since.is_some();
    let meta = |e: &Value| e["_meta"][OFFICIAL_META].clone();
    let mut page: Vec<Value> = inner
        .entries
        .iter()
        .filter(|e| q.cursor.as_deref().is_none_or(|c| key(e).as_str() > c))
        .filter(|e| include_deleted || meta(e)["status"] != "deleted")
        .filter(|e| q.version.as_deref() != Some("latest") || meta(e)["isLatest"] != false)
        .filter(|e| {
            q.updated_since
                .as_deref()
                .is_none_or(|since| meta(e)["updatedAt"].as_str().is_some_and(|at| at >= since))
        })
        .take(limit + 1)
        .cloned()
        .collect();
    let more = page.len() > limit;
    page.truncate(limit);
    let next = if more { page.last().map(key) } else { None };
    let count = page.len();
    let mut metadata = json!({"count": count});
    if let Some(next) = next {
        metadata["nextCursor"] = json!(next);
    }
    Json(json!({"servers": page, "metadata": metadata})).into_response()
}

/// `protocheck reference registry`.
#[derive(Debug, clap::Args)]
pub struct RegistryReferenceArgs {
    /// Port to listen on.
    #[arg(long, default_value_t = 8766)]
    pub port: u16,
    /// Address to bind; keep the loopback default unless you mean to expose it.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Serve this many synthetic entries (the directory's scale figures).
    #[arg(long, default_value_t = 0)]
    pub synthetic: usize,
    /// The base URL of the synthetic entries' remotes.
    #[arg(long, default_value = "http://127.0.0.1:9")]
    pub remote_base: String,
    /// Serve the entries of this JSON file (an array of `ServerResponse`
    /// items, as the registry's `servers` array holds them).
    #[arg(long, value_name = "PATH", conflicts_with = "synthetic")]
    pub entries: Option<std::path::PathBuf>,
}

/// Runs `protocheck reference registry` until interrupted.
pub async fn run(args: RegistryReferenceArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    let registry = match &args.entries {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let items: Vec<Value> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON array of entries", path.display()))?;
            StandInRegistry::new(items)
        }
        None => StandInRegistry::synthetic(args.synthetic, &args.remote_base),
    };
    let listener = tokio::net::TcpListener::bind((args.bind.as_str(), args.port))
        .await
        .with_context(|| format!("binding {}:{}", args.bind, args.port))?;
    let addr = listener.local_addr()?;
    eprintln!("stand-in MCP Registry on http://{addr} (GET /v0.1/servers)");
    axum::serve(listener, registry.router()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn serve(registry: &StandInRegistry) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = registry.router();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    }

    async fn get(url: &str) -> Value {
        reqwest::get(url)
            .await
            .expect("GET")
            .json()
            .await
            .expect("json")
    }

    #[tokio::test]
    async fn pages_follow_the_cursor_and_deleted_entries_show_only_when_asked() {
        let registry = StandInRegistry::synthetic(5, "http://127.0.0.1:9");
        registry.put(entry(
            "io.example.synthetic/gone",
            "1.0.0",
            "deleted",
            "2026-11-02T00:00:00Z",
            json!([]),
        ));
        let base = serve(&registry).await;
        let first = get(&format!("{base}/v0.1/servers?limit=2")).await;
        assert_eq!(first["servers"].as_array().map(Vec::len), Some(2));
        let cursor = first["metadata"]["nextCursor"]
            .as_str()
            .expect("cursor")
            .to_owned();
        let mut names = Vec::new();
        let mut next = Some(cursor);
        while let Some(c) = next {
            let page = get(&format!(
                "{base}/v0.1/servers?limit=2&cursor={}",
                urlencode(&c)
            ))
            .await;
            for s in page["servers"].as_array().expect("servers") {
                names.push(s["server"]["name"].as_str().expect("name").to_owned());
            }
            next = page["metadata"]["nextCursor"].as_str().map(str::to_owned);
        }
        assert_eq!(
            names.len(),
            3,
            "{names:?}: five entries, two on the first page"
        );
        assert!(!names.iter().any(|n| n.ends_with("gone")));
        let since = get(&format!(
            "{base}/v0.1/servers?updated_since=2026-11-01T12:00:00Z"
        ))
        .await;
        let listed: Vec<_> = since["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .map(|s| s["server"]["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(listed, ["io.example.synthetic/gone"]);
    }

    #[tokio::test]
    async fn a_fault_breaks_the_pages_after_the_ones_served() {
        let registry = StandInRegistry::synthetic(3, "http://127.0.0.1:9");
        registry.set_fault(RegistryFault::FailAfterPages(1));
        let base = serve(&registry).await;
        let ok = reqwest::get(format!("{base}/v0.1/servers?limit=1"))
            .await
            .expect("GET");
        assert_eq!(ok.status(), 200);
        let failed = reqwest::get(format!("{base}/v0.1/servers?limit=1"))
            .await
            .expect("GET");
        assert_eq!(failed.status(), 500);
    }

    fn urlencode(s: &str) -> String {
        url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
    }
}
