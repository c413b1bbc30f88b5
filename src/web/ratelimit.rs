//! Rate limits on submissions: per client address for anonymous clients, per API
//! key (with the key's own quota) for clients that send one. Reads are never limited.
//!
//! Each decision comes with the limiter's state, sent as `RateLimit-Limit`,
//! `RateLimit-Remaining`, `RateLimit-Reset` and `RateLimit-Policy` headers
//! (draft-ietf-httpapi-ratelimit-headers). The limiters are token buckets (GCRA):
//! `Reset` is the number of seconds until the bucket is full again, that is until
//! `Remaining` equals `Limit`.

use crate::api_keys::Rate;
use crate::store::ApiKey;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::{StateInformationMiddleware, StateSnapshot};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, NotUntil, Quota};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// Above this many tracked addresses, idle entries are dropped.
const RETAIN_ABOVE: usize = 10_000;

type AddrLimiter = DefaultKeyedRateLimiter<IpAddr, StateInformationMiddleware>;
type KeyLimiter = DefaultDirectRateLimiter<StateInformationMiddleware>;
type Instant = <DefaultClock as Clock>::Instant;
/// Each key's bucket, with the rate it was made for.
type KeyBuckets = HashMap<Uuid, (Rate, Arc<KeyLimiter>)>;

/// The state of the limiter that judged one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateState {
    /// Requests allowed in a window.
    pub limit: u32,
    /// Requests still allowed now.
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset_s: u64,
    /// The window of the policy, in seconds.
    pub window_s: u64,
    /// Set when the request was refused: seconds until one is allowed.
    pub retry_after_s: Option<u64>,
}

impl RateState {
    /// `RateLimit-*` headers (and `Retry-After` on a refusal).
    pub fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        let pairs = [
            ("ratelimit-limit", self.limit.to_string()),
            ("ratelimit-remaining", self.remaining.to_string()),
            ("ratelimit-reset", self.reset_s.to_string()),
            (
                "ratelimit-policy",
                format!("{};w={}", self.limit, self.window_s),
            ),
        ];
        for (name, value) in pairs {
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.insert(HeaderName::from_static(name), v);
            }
        }
        if let Some(secs) = self.retry_after_s {
            h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        h
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

fn quota_for(rate: Rate) -> Quota {
    let count = NonZeroU32::new(rate.count.max(1)).unwrap_or(NonZeroU32::MIN);
    let period = Duration::from_secs(rate.period_s.max(1));
    // `count` per `period`: one replenished every period/count, with a burst of
    // `count`. The interval is never zero (count ≤ 10^6, period ≥ 1 s).
    Quota::with_period(period / count.get())
        .unwrap_or_else(|| Quota::per_second(count))
        .allow_burst(count)
}

fn allowed(snapshot: &StateSnapshot, window_s: u64) -> RateState {
    let quota = snapshot.quota();
    let limit = quota.burst_size().get();
    let remaining = snapshot.remaining_burst_capacity();
    let reset = quota
        .replenish_interval()
        .saturating_mul(limit.saturating_sub(remaining));
    RateState {
        limit,
        remaining,
        reset_s: ceil_secs(reset),
        window_s,
        retry_after_s: None,
    }
}

fn refused(not_until: &NotUntil<Instant>, now: Instant, window_s: u64) -> RateState {
    let quota = not_until.quota();
    let limit = quota.burst_size().get();
    let wait = not_until.wait_time_from(now);
    // After `wait` one request is allowed; the rest of the bucket refills after it.
    let full = wait.saturating_add(
        quota
            .replenish_interval()
            .saturating_mul(limit.saturating_sub(1)),
    );
    RateState {
        limit,
        remaining: 0,
        reset_s: ceil_secs(full),
        window_s,
        retry_after_s: Some(ceil_secs(wait).max(1)),
    }
}

fn key_limiter(rate: Rate) -> Arc<KeyLimiter> {
    Arc::new(
        governor::RateLimiter::direct(quota_for(rate))
            .with_middleware::<StateInformationMiddleware>(),
    )
}

#[derive(Clone)]
pub struct SubmitLimiter {
    by_addr: Arc<AddrLimiter>,
    /// One bucket per API key, each with the key's quota; as many as there are keys in use.
    by_key: Arc<Mutex<KeyBuckets>>,
    clock: DefaultClock,
}

impl SubmitLimiter {
    pub fn per_minute(n: u32) -> Self {
        let quota = quota_for(Rate {
            count: n.max(1),
            period_s: 60,
        });
        Self {
            by_addr: Arc::new(
                DefaultKeyedRateLimiter::keyed(quota)
                    .with_middleware::<StateInformationMiddleware>(),
            ),
            by_key: Arc::new(Mutex::new(HashMap::new())),
            clock: DefaultClock::default(),
        }
    }

    /// The per-address decision for an anonymous client, with the limiter's state.
    pub fn check_addr(&self, addr: IpAddr) -> Result<RateState, RateState> {
        if self.by_addr.len() > RETAIN_ABOVE {
            self.by_addr.retain_recent();
        }
        match self.by_addr.check_key(&client_key(addr)) {
            Ok(snapshot) => Ok(allowed(&snapshot, 60)),
            Err(not_until) => Err(refused(&not_until, self.clock.now(), 60)),
        }
    }

    /// The decision for a client with an API key: the key's quota, whatever its address.
    pub fn check_key(&self, key: &ApiKey) -> Result<RateState, RateState> {
        let rate = Rate::of(key);
        let limiter = {
            let mut keys = self
                .by_key
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let entry = keys
                .entry(key.id)
                .or_insert_with(|| (rate, key_limiter(rate)));
            // A key's rate is fixed at creation; this only guards against a stale entry.
            if entry.0 != rate {
                *entry = (rate, key_limiter(rate));
            }
            entry.1.clone()
        };
        match limiter.check() {
            Ok(snapshot) => Ok(allowed(&snapshot, rate.period_s)),
            Err(not_until) => Err(refused(&not_until, self.clock.now(), rate.period_s)),
        }
    }
}

/// One IPv6 host usually owns a whole /64, so the limit applies per /64.
pub(crate) fn client_key(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

/// The submitter a run is counted for in a host's hourly share
/// (`submit::Submission::submitter`): its API key, else the client's address
/// as [`client_key`] counts it.
pub fn submitter_of(api_key: Option<uuid::Uuid>, client: std::net::IpAddr) -> String {
    match api_key {
        Some(k) => format!("k:{}", k.simple()),
        None => format!("a:{}", client_key(client)),
    }
}
