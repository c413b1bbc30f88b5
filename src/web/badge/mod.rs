//! Badges: `GET /badge/{target}/{suite}.svg` and `.json` (the shields.io endpoint
//! schema), the same by URL (`GET /badge.svg?url=…&suite=…`), the link behind a
//! badge (`/targets/{target}/{suite}/latest`) and ready-to-paste snippets.
//!
//! A badge never starts a run and never lies: it shows the newest finished run of
//! its target and suite (`pending` while the only runs are queued or running,
//! `error` when the newest one errored, a grey `unknown` for a target protocheck
//! has never seen), with the day of its verdict, grey and `stale` once that is
//! older than the stale limit; runs that could not reach the target keep the
//! verdict before them until that limit, then the badge says `unreachable
//! since` (see [`shown`]). It links to the report of the run it shows, which
//! carries the signed attestation.
//!
//! Badges are drawn once and kept in memory, keyed by target and suite, so a badge
//! on a busy README costs a map lookup. A cached badge is dropped when a run in
//! this process changes (the [`RunEvents`](crate::events::RunEvents) bus), and
//! re-read after [`SHARED_QUEUE_TTL`] at the latest for runs finished by
//! workers elsewhere.
//!
//! `describe` decides what a badge says, `cache` draws and keeps badges,
//! `render` and `widths` turn one into SVG or shields.io JSON, `serve` answers
//! the badge routes and `snippets` the snippets to paste.

mod cache;
mod describe;
mod render;
mod serve;
mod snippets;
mod widths;

pub use cache::{BadgeCache, Drawn, draw};
pub use describe::{Age, Shown, describe, shown, verdict_color};
pub use render::{Badge, Color, svg_width};
// Globs, so the OpenAPI operations `utoipa` generates beside each handler
// (`__path_…`) are reachable where the router registers them.
pub use serve::*;
pub(crate) use snippets::public_base;
pub use snippets::*;

use crate::suite::SuiteId;
use std::time::Duration;
use uuid::Uuid;

/// Workers in other processes (Postgres) finish runs without telling this one:
/// a cached badge is re-read from the store after this long at most.
pub const SHARED_QUEUE_TTL: Duration = Duration::from_secs(5);
/// `max-age` of a `pending` badge, which will change as soon as the run ends.
pub const PENDING_MAX_AGE: Duration = Duration::from_secs(30);
/// Where a badge links for a run: its HTML report.
pub fn report_path(run: Uuid) -> String {
    format!("/runs/{run}")
}

/// The stable link behind a badge: redirects to the report of the run it shows.
pub fn latest_path(target_key: &str, suite: SuiteId) -> String {
    format!("/targets/{target_key}/{}/latest", suite.as_str())
}

/// Badge settings of the web layer.
#[derive(Debug, Clone)]
pub struct BadgeSettings {
    /// `Cache-Control: max-age` of a badge.
    pub max_age: Duration,
    /// Base of the absolute URLs in snippets; `None`: the request's `Host`.
    pub public_url: Option<String>,
    /// A verdict older than this is drawn grey and "stale"; a target no run
    /// has reached for longer than this is "unreachable since".
    pub stale_after: Duration,
}

/// The default of [`BadgeSettings::stale_after`]: a week.
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

impl Default for BadgeSettings {
    fn default() -> Self {
        Self {
            max_age: Duration::from_secs(300),
            public_url: None,
            stale_after: DEFAULT_STALE_AFTER,
        }
    }
}

impl BadgeSettings {
    /// The age a badge drawn now is judged at.
    pub fn age_now(&self) -> Age {
        Age {
            now_ms: crate::now_ms(),
            stale_after: self.stale_after,
        }
    }
}

/// A target key is 24 lower-case hex digits; anything else names no target.
fn is_target_key(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_keys_are_24_hex_digits() {
        assert!(is_target_key("00112233445566778899aabb"));
        assert!(!is_target_key("00112233445566778899AABB"));
        assert!(!is_target_key("<script>"));
        assert!(!is_target_key(""));
    }
}
