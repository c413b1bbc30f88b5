//! Drawn badges, kept in memory by target and suite until a run changes them.

use super::render::{self, Badge};
use super::{PENDING_MAX_AGE, SHARED_QUEUE_TTL, describe, is_target_key};
use crate::events::RunEvents;
use crate::store::SuiteRuns;
use crate::suite::SuiteId;
use crate::web::AppState;
use crate::web::error::ApiResult;
use axum::body::Bytes;
use axum::http::HeaderValue;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// Targets whose badges are kept in memory; past this the cache starts afresh
/// rather than grow without bound.
const MAX_CACHED_TARGETS: usize = 10_000;

/// A badge drawn in both formats, with its validators.
pub struct Drawn {
    pub badge: Badge,
    pub(super) svg: Bytes,
    pub(super) json: Bytes,
    pub(super) svg_etag: HeaderValue,
    pub(super) json_etag: HeaderValue,
    pub(super) cache_control: HeaderValue,
    /// Whether it is the badge of a stored target (not of an unknown key).
    pub of_target: bool,
    generation: u64,
    drawn_at: Instant,
}

impl Drawn {
    /// The SVG as served.
    pub fn svg(&self) -> &[u8] {
        &self.svg
    }

    fn new(badge: Badge, max_age: Duration, generation: u64, of_target: bool) -> Self {
        let svg = Bytes::from(render::svg(&badge));
        let json = Bytes::from(render::shields_json(&badge, max_age.as_secs()));
        Self {
            svg_etag: etag(&svg),
            json_etag: etag(&json),
            cache_control: HeaderValue::from_str(&format!("max-age={}", max_age.as_secs()))
                .unwrap_or(HeaderValue::from_static("no-cache")),
            badge,
            svg,
            json,
            of_target,
            generation,
            drawn_at: Instant::now(),
        }
    }
}

/// A strong validator: the body's digest, so equal bodies share it and any
/// change, however small, changes it.
fn etag(body: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(body);
    HeaderValue::from_str(&format!("\"{}\"", hex::encode(&digest[..16])))
        .unwrap_or(HeaderValue::from_static("\"\""))
}

/// Drawn badges by target key, one slot per suite.
#[derive(Default)]
pub struct BadgeCache {
    entries: RwLock<HashMap<String, [Option<Arc<Drawn>>; 2]>>,
    /// Bumped by every run event of this process; older entries are stale.
    generation: Arc<AtomicU64>,
    watching: OnceLock<()>,
}

fn slot(suite: SuiteId) -> usize {
    match suite {
        SuiteId::Mcp => 0,
        SuiteId::Rcp => 1,
    }
}

impl BadgeCache {
    /// Starts following `events` (once, from the first badge request, which runs
    /// inside the runtime). Any event may change what a badge shows.
    fn watch(&self, events: &RunEvents) {
        self.watching.get_or_init(|| {
            let mut rx = events.subscribe();
            let generation = self.generation.clone();
            tokio::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match rx.recv().await {
                        // A lagging receiver missed events: stale, to be safe.
                        Ok(_) | Err(RecvError::Lagged(_)) => {
                            generation.fetch_add(1, Ordering::Release);
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            });
        });
    }

    fn get(&self, key: &str, suite: SuiteId, generation: u64) -> Option<Arc<Drawn>> {
        let entries = self.entries.read().ok()?;
        let drawn = entries.get(key)?[slot(suite)].as_ref()?;
        (drawn.generation == generation && drawn.drawn_at.elapsed() < SHARED_QUEUE_TTL)
            .then(|| drawn.clone())
    }

    fn put(&self, key: &str, suite: SuiteId, drawn: Arc<Drawn>) {
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        if entries.len() >= MAX_CACHED_TARGETS && !entries.contains_key(key) {
            entries.clear();
        }
        entries.entry(key.to_owned()).or_default()[slot(suite)] = Some(drawn);
    }
}

/// The badge of `target_key` and `suite`, from the cache or drawn now.
pub async fn draw(state: &AppState, target_key: &str, suite: SuiteId) -> ApiResult<Arc<Drawn>> {
    let cache = &state.badge_cache;
    cache.watch(&state.events);
    // Read before the store: an event during the reads below makes this entry stale.
    let generation = cache.generation.load(Ordering::Acquire);
    if let Some(hit) = cache.get(target_key, suite, generation) {
        return Ok(hit);
    }
    let target = if is_target_key(target_key) {
        state.store.get_target(target_key).await?
    } else {
        None
    };
    let runs = match &target {
        Some(t) => {
            state
                .store
                .latest_runs_for_suite(&t.id, suite.as_str())
                .await?
        }
        None => SuiteRuns::default(),
    };
    let max_age = if runs.finished.is_none() && runs.active.is_some() {
        state.badges.max_age.min(PENDING_MAX_AGE)
    } else {
        state.badges.max_age
    };
    let drawn = Arc::new(Drawn::new(
        describe(suite, target.as_ref(), &runs, state.badges.age_now()),
        max_age,
        generation,
        target.is_some(),
    ));
    // Kept only when nothing is about to change it: while a run is active its end
    // must show at once, and the event that announces it may lag the store. An
    // unknown key is not kept either, so made-up keys cannot fill the cache.
    if target.is_some() && runs.active.is_none() {
        cache.put(target_key, suite, drawn.clone());
    }
    Ok(drawn)
}
