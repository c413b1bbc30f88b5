//! The round-trip times of one run's exchanges, and the waits derived from
//! them. A check that watches a target for something that may never come (an
//! event on an open stream, the end of a stream) waits for the path's
//! latency and a multiple of how long the target takes on top of it (see
//! [`RttRecord::window`]), between a floor and a ceiling,
//! instead of a fixed time: a fast target is not held for seconds, and a slow
//! one still gets all the time it needs up to the ceiling.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Most samples kept: a run makes a few hundred exchanges; past this the
/// oldest are dropped, so the record stays small whatever the run does.
const MAX_SAMPLES: usize = 1024;

/// The percentile a window is derived from: high enough that a target's
/// slower answers set the pace, and not the maximum, so that one outlier (a
/// slow tool call) does not stretch every window to the ceiling.
const WINDOW_PERCENTILE: f64 = 95.0;

/// The round-trip times recorded so far in a run. Cheap to clone; clones
/// share the record.
#[derive(Debug, Clone, Default)]
pub(crate) struct RttRecord {
    samples: Arc<Mutex<VecDeque<Duration>>>,
}

impl RttRecord {
    /// Records one exchange's round-trip time.
    pub(crate) fn record(&self, rtt: Duration) {
        // A poisoned lock only means another thread panicked mid-push; the
        // samples are still plain durations.
        let mut samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        if samples.len() >= MAX_SAMPLES {
            samples.pop_front();
        }
        samples.push_back(rtt);
    }

    /// The `p`-th percentile (0–100, nearest rank) of the samples, or `None`
    /// before the first one.
    pub(crate) fn percentile(&self, p: f64) -> Option<Duration> {
        let mut sorted: Vec<Duration> = self
            .samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_unstable();
        let rank = (p.clamp(0.0, 100.0) / 100.0 * sorted.len() as f64).ceil() as usize;
        sorted.get(rank.saturating_sub(1)).copied()
    }

    /// How long to watch for something: twice the fastest round trip of the
    /// run, plus `multiplier` times what the slower answers (the 95th
    /// percentile) take beyond it; at least `floor` and at most `ceiling`
    /// (which wins when the two cross). With no sample yet it is `ceiling`:
    /// nothing is known of the target, so the wait is the longest allowed.
    ///
    /// A network's latency is paid once per trip, however loaded the target
    /// is: what a target sends on an answer, or a leg after it, comes about
    /// one fastest round trip later, give or take the time the target takes
    /// over. So the latency is counted twice and only the target's share is
    /// multiplied: on loopback, where the fastest round trip is a fraction
    /// of a millisecond, the window is the multiple of the 95th percentile
    /// it always was; 100 ms away it is not eight times 100 ms.
    pub(crate) fn window(&self, multiplier: u32, floor: Duration, ceiling: Duration) -> Duration {
        match (self.percentile(0.0), self.percentile(WINDOW_PERCENTILE)) {
            (Some(fastest), Some(p95)) => (fastest.saturating_mul(2)
                + p95.saturating_sub(fastest).saturating_mul(multiplier))
            .max(floor)
            .min(ceiling),
            _ => ceiling,
        }
    }
    /// `multiplier` times the 95th percentile, or `None` before the first
    /// sample: for a wait that bounds it by rules of its own.
    pub(crate) fn scaled(&self, multiplier: u32) -> Option<Duration> {
        self.percentile(WINDOW_PERCENTILE)
            .map(|p95| p95.saturating_mul(multiplier))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let rtt = RttRecord::default();
        assert_eq!(rtt.percentile(95.0), None);
        for n in 1..=20 {
            rtt.record(ms(n));
        }
        assert_eq!(rtt.percentile(95.0), Some(ms(19)));
        assert_eq!(rtt.percentile(100.0), Some(ms(20)));
        assert_eq!(rtt.percentile(50.0), Some(ms(10)));
        assert_eq!(rtt.percentile(0.0), Some(ms(1)));
    }

    #[test]
    fn a_window_is_a_multiple_of_the_p95_between_floor_and_ceiling() {
        let rtt = RttRecord::default();
        assert_eq!(rtt.window(4, ms(100), ms(2000)), ms(2000), "no sample yet");
        rtt.record(ms(10));
        assert_eq!(rtt.window(4, ms(100), ms(2000)), ms(100), "floor");
        rtt.record(ms(50));
        // Twice the fastest (10 ms), and four times the 40 ms the slower
        // answers take beyond it.
        assert_eq!(rtt.window(4, ms(100), ms(2000)), ms(180));
        rtt.record(ms(900));
        assert_eq!(rtt.window(4, ms(100), ms(2000)), ms(2000), "ceiling");
        assert_eq!(rtt.window(4, ms(500), ms(300)), ms(300), "ceiling wins");
    }

    #[test]
    fn latency_counts_twice_and_only_the_targets_share_is_multiplied() {
        let far = RttRecord::default();
        for n in [100, 102, 105, 110, 104] {
            far.record(ms(n));
        }
        // 2 × 100 + 8 × 10, not 8 × 110.
        assert_eq!(far.window(8, ms(150), ms(3000)), ms(280));
        let near = RttRecord::default();
        for n in [0, 2, 5, 10, 4] {
            near.record(ms(n));
        }
        assert_eq!(
            near.window(8, ms(50), ms(3000)),
            ms(80),
            "8 × the p95 on loopback"
        );
    }

    #[test]
    fn clones_share_the_record_and_old_samples_go() {
        let rtt = RttRecord::default();
        let other = rtt.clone();
        other.record(ms(7));
        assert_eq!(rtt.percentile(100.0), Some(ms(7)));
        for _ in 0..MAX_SAMPLES {
            rtt.record(ms(1));
        }
        assert_eq!(rtt.percentile(100.0), Some(ms(1)));
    }
}
