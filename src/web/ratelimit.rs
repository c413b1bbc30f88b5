//! Per-client-address rate limit on submissions. Reads are never limited.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::Arc;

/// Above this many tracked addresses, idle entries are dropped.
const RETAIN_ABOVE: usize = 10_000;

#[derive(Clone)]
pub struct SubmitLimiter {
    limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    clock: DefaultClock,
}

impl SubmitLimiter {
    pub fn per_minute(n: u32) -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(n.max(1)).unwrap_or(NonZeroU32::MIN));
        Self {
            limiter: Arc::new(DefaultKeyedRateLimiter::keyed(quota)),
            clock: DefaultClock::default(),
        }
    }

    /// `Ok` when `addr` may submit now, else the seconds until it may.
    pub fn check(&self, addr: IpAddr) -> Result<(), u64> {
        if self.limiter.len() > RETAIN_ABOVE {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&client_key(addr))
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(self.clock.now());
                wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
            })
    }
}

/// One IPv6 host usually owns a whole /64, so the limit applies per /64.
fn client_key(addr: IpAddr) -> IpAddr {
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
