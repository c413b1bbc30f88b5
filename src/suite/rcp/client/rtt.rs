//! The round trips of a run's stdio exchanges, so the waits that can only end
//! by a deadline (silence after a notification, more lines after a stray one)
//! scale with how fast this target actually answers instead of being fixed.

use std::collections::VecDeque;
use std::time::Duration;

/// Most round trips kept: the latest ones, enough for a stable p95 over a run
/// of a few hundred requests without growing with the run.
const MAX_SAMPLES: usize = 256;

/// The measured round trips (request written → a line read), latest last.
#[derive(Debug, Default)]
pub(crate) struct RoundTrips {
    samples: VecDeque<Duration>,
}

impl RoundTrips {
    pub fn record(&mut self, rtt: Duration) {
        if self.samples.len() == MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(rtt);
    }

    /// The `p`-th percentile (0.0 to 1.0, nearest rank), `None` before any sample.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.samples.is_empty() {
            return None;
        }
        let mut sorted: Vec<Duration> = self.samples.iter().copied().collect();
        sorted.sort_unstable();
        let rank = (p.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
        sorted.get(rank.saturating_sub(1)).copied()
    }

    /// `multiplier` × p95, kept between `floor` and `ceiling`; the floor when
    /// nothing was measured yet. The floor wins over a lower ceiling, so a
    /// short request timeout never makes a wait shorter than its floor.
    pub fn window(&self, multiplier: u32, floor: Duration, ceiling: Duration) -> Duration {
        let scaled = self
            .percentile(0.95)
            .map_or(floor, |p95| p95.saturating_mul(multiplier));
        scaled.min(ceiling).max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let mut r = RoundTrips::default();
        assert_eq!(r.percentile(0.95), None);
        for ms in 1..=100 {
            r.record(MS * ms);
        }
        assert_eq!(r.percentile(0.95), Some(MS * 95));
        assert_eq!(r.percentile(1.0), Some(MS * 100));
        assert_eq!(r.percentile(0.0), Some(MS));
    }

    #[test]
    fn windows_scale_with_the_p95_between_floor_and_ceiling() {
        let mut r = RoundTrips::default();
        assert_eq!(
            r.window(4, MS * 10, MS * 300),
            MS * 10,
            "no sample: the floor"
        );
        r.record(MS * 5);
        assert_eq!(r.window(4, MS * 10, MS * 300), MS * 20);
        r.record(MS * 500);
        assert_eq!(r.window(4, MS * 10, MS * 300), MS * 300, "capped");
        assert_eq!(r.window(4, MS * 300, MS * 100), MS * 300, "the floor wins");
    }

    #[test]
    fn only_the_latest_samples_are_kept() {
        let mut r = RoundTrips::default();
        for _ in 0..MAX_SAMPLES {
            r.record(MS * 900);
        }
        for _ in 0..MAX_SAMPLES {
            r.record(MS);
        }
        assert_eq!(r.percentile(1.0), Some(MS));
    }
}
