//! The scheduler (#28): starts the runs of watched targets when their slots
//! come. A watch lives in the database ([`crate::store::WatchStore`]); this
//! component only ticks: every [`ScheduleConfig::tick`] it asks the store to
//! start the runs of the watches due now, and wakes the workers.
//!
//! Every process that runs workers runs one scheduler (`serve` with its
//! in-process workers, each `protocheck worker`). Any number of them may tick
//! together: the store takes each slot once, in the transaction that starts
//! its run, so several schedulers on one Postgres database start one run per
//! slot, and a restart loses nothing (the next slot is in the row).
//!
//! What a scheduled run may take of a target's host is bounded twice: when it
//! starts (the host's hourly budget, of which the schedule takes at most its
//! share, [`HostBudget`]), and when a worker claims it (the concurrency and the
//! gap of [`crate::store::HostLimits`], like any run, and after every run a
//! person or a CI job submitted).

use crate::metrics::Metrics;
use crate::store::{DueWatches, HostBudget, Store, StoreResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The scheduler's settings.
#[derive(Debug, Clone)]
pub struct ScheduleConfig {
    /// Whether this process ticks at all.
    pub enabled: bool,
    /// The shortest time between two ticks: how late a slot may be taken
    /// when all is well.
    pub tick: Duration,
    /// The longest: a scheduler sleeps until the earliest slot it knows of,
    /// but looks again after this for watches another process made.
    pub refresh: Duration,
    /// Watches one statement takes; a tick goes on while a batch comes back full.
    pub batch: u32,
    /// Attempts of each run it starts (as for a submitted run).
    pub max_attempts: i32,
    /// What the schedule may spend of each host's hourly budget.
    pub budget: HostBudget,
    /// A slot taken later than this after its time counts as late (metric).
    pub late_after: Duration,
    /// Notified when a watch is made or changed in this process (through
    /// [`crate::submit::Queue::watches_changed`]): the scheduler ticks at
    /// once and sleeps until the earliest slot, the new watch's among them.
    /// Without it a new watch waited for the end of a sleep of up to
    /// `refresh`, past its first slot.
    pub wake: Arc<Notify>,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            tick: Duration::from_secs(5),
            refresh: Duration::from_secs(60),
            batch: 100,
            max_attempts: 3,
            budget: HostBudget::default(),
            late_after: Duration::from_secs(60),
            wake: Arc::new(Notify::new()),
        }
    }
}

/// The fractional part of the golden ratio: the step between two watches'
/// places in their interval.
const SPREAD_STEP: f64 = 0.618_033_988_749_894_9;

/// Watches this process has placed ([`first_slot`]).
static SLOTS_MADE: AtomicU64 = AtomicU64::new(0);

/// Where this process's sequence of places starts (drawn once), so that
/// processes do not all begin at the same place.
static SPREAD_START: LazyLock<f64> = LazyLock::new(rand::random::<f64>);

/// The first slot of a watch made at `now_ms` with `interval_ms`, within its
/// first interval. The k-th watch a process makes sits k golden-ratio steps
/// round the interval (counted from the epoch, so the moment a watch is
/// made does not matter) past a random start: whatever their number n, the
/// watches of one interval are then never closer than interval/(√5·n) nor
/// further apart than 2·interval/n (the three-gap theorem), where slots
/// drawn at random bunch. A sync that lists a thousand servers (#52), or a
/// script that makes a thousand watches, spreads their runs evenly over the
/// week instead of firing them in bursts. The store keeps each watch on its
/// own beat afterwards.
pub fn first_slot(now_ms: i64, interval_ms: i64) -> i64 {
    let k = SLOTS_MADE.fetch_add(1, Ordering::Relaxed);
    slot_at(now_ms, interval_ms, spread_phase(*SPREAD_START, k))
}

/// How far into an interval (0 to 1) the k-th place after `start` is.
fn spread_phase(start: f64, k: u64) -> f64 {
    // k beyond 2^53 loses precision, not evenness worth measuring.
    (start + k as f64 * SPREAD_STEP).fract()
}

/// The first moment at or after `now_ms` that lies `phase` of the way into
/// an interval of `interval_ms` counted from the epoch.
fn slot_at(now_ms: i64, interval_ms: i64, phase: f64) -> i64 {
    let interval = interval_ms.max(1);
    // A phase in [0, 1) times the interval: an offset in [0, interval).
    let offset = ((phase * interval as f64) as i64).clamp(0, interval - 1);
    now_ms.saturating_add(offset.saturating_sub(now_ms).rem_euclid(interval))
}

/// One tick at `now_ms`: starts the runs of every watch due, batch by batch.
pub async fn tick(store: &dyn Store, cfg: &ScheduleConfig, now_ms: i64) -> StoreResult<DueWatches> {
    let mut all = DueWatches::default();
    loop {
        let batch = store
            .start_due_watches(now_ms, cfg.batch.max(1), cfg.max_attempts, cfg.budget)
            .await?;
        let taken = batch.lateness_ms.len();
        all.started.extend(batch.started);
        all.skipped.extend(batch.skipped);
        all.over_budget.extend(batch.over_budget);
        all.lateness_ms.extend(batch.lateness_ms);
        all.next_due_at_ms = batch.next_due_at_ms;
        if taken < usize::try_from(cfg.batch.max(1)).unwrap_or(usize::MAX) {
            return Ok(all);
        }
    }
}

/// How long a scheduler sleeps after a tick at `now_ms` that left
/// `next_due_at_ms` as the earliest slot: until that slot, at least
/// [`ScheduleConfig::tick`] and at most [`ScheduleConfig::refresh`]. An idle
/// service (no watch due for an hour) asks its database once a minute, not
/// every few seconds. A watch made meanwhile in this process wakes it (see
/// [`ScheduleConfig::wake`]); one made in another process is seen within
/// `refresh`.
pub fn pause(cfg: &ScheduleConfig, now_ms: i64, next_due_at_ms: Option<i64>) -> Duration {
    let until_due = next_due_at_ms.map_or(cfg.refresh, |due| {
        Duration::from_millis(u64::try_from(due.saturating_sub(now_ms)).unwrap_or(0))
    });
    until_due.clamp(cfg.tick, cfg.refresh.max(cfg.tick))
}

/// Ticks until `shutdown`: the runs it starts wake the workers of this
/// process (the others hear of them as of any queued run).
pub async fn run(
    store: Arc<dyn Store>,
    cfg: ScheduleConfig,
    wake: Arc<Notify>,
    metrics: Metrics,
    shutdown: CancellationToken,
) {
    let late_ms = crate::duration_ms(cfg.late_after);
    let mut pause_for = cfg.tick;
    loop {
        tokio::select! {
            () = tokio::time::sleep(pause_for) => {}
            // A permit stored while a tick ran is taken here: a watch made
            // during a tick is not missed.
            () = cfg.wake.notified() => {}
            () = shutdown.cancelled() => return,
        }
        let now = crate::now_ms();
        match tick(store.as_ref(), &cfg, now).await {
            Ok(done) => {
                pause_for = pause(&cfg, now, done.next_due_at_ms);
                metrics.observe_schedule(&done, late_ms);
                if !done.lateness_ms.is_empty() {
                    tracing::info!(
                        due = done.lateness_ms.len(),
                        started = done.started.len(),
                        run_active = done.skipped.len(),
                        host_budget = done.over_budget.len(),
                        "scheduled slots taken"
                    );
                }
                for _ in &done.started {
                    wake.notify_one();
                }
            }
            Err(e) => {
                pause_for = cfg.tick;
                tracing::warn!(error = %e, "the scheduler's tick failed; the next tick tries again");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps between `slots` round an interval of `interval` ms.
    fn gaps(slots: &[i64], interval: i64) -> Vec<i64> {
        let mut at: Vec<i64> = slots.iter().map(|s| s.rem_euclid(interval)).collect();
        at.sort_unstable();
        let mut gaps: Vec<i64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.push(at[0] + interval - at[at.len() - 1]);
        gaps
    }

    #[test]
    fn first_slots_spread_evenly_over_the_interval_however_many_and_whenever_made() {
        const WEEK_MS: i64 = 7 * 24 * 3600 * 1000;
        let now = 1_765_000_000_000;
        for n in [2_usize, 3, 7, 10, 100, 1_000, 10_000] {
            for start in [0.0, 0.37, 0.999] {
                // Made together (a sync), or spread over hours: the places
                // round the interval are the same.
                for made_every_ms in [0, 3_600_123] {
                    let slots: Vec<i64> = (0..n)
                        .map(|k| {
                            let made = now + made_every_ms * k as i64;
                            let slot = slot_at(made, WEEK_MS, spread_phase(start, k as u64));
                            assert!((made..made + WEEK_MS).contains(&slot), "{n} {k}");
                            slot
                        })
                        .collect();
                    let even = WEEK_MS / n as i64;
                    let gaps = gaps(&slots, WEEK_MS);
                    let (least, most) = (gaps.iter().min(), gaps.iter().max());
                    // interval/(√5·n) at least, 2·interval/n at most; a
                    // millisecond of rounding either way.
                    assert!(
                        least.is_some_and(|g| *g * 2_237 >= even * 1_000 - 2_237),
                        "{n} from {start}: closest {least:?}, even {even}"
                    );
                    assert!(
                        most.is_some_and(|g| *g <= 2 * even + 2),
                        "{n} from {start}: widest {most:?}, even {even}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_first_slot_falls_within_the_first_interval() {
        for interval in [1, 2, 1_000, 3_600_000] {
            for _ in 0..100 {
                let slot = first_slot(5_000, interval);
                assert!(
                    (5_000..5_000 + interval).contains(&slot),
                    "{interval}: {slot}"
                );
            }
        }
        assert_eq!(slot_at(10, 0, 0.5), 10, "an interval of 0 is one of 1 ms");
    }

    #[test]
    fn a_scheduler_sleeps_until_the_next_slot_within_its_bounds() {
        let cfg = ScheduleConfig::default();
        assert_eq!(pause(&cfg, 1_000, None), cfg.refresh, "no watch: a minute");
        assert_eq!(pause(&cfg, 1_000, Some(21_000)), Duration::from_secs(20));
        assert_eq!(pause(&cfg, 1_000, Some(999_999)), cfg.refresh);
        assert_eq!(
            pause(&cfg, 1_000, Some(0)),
            cfg.tick,
            "overdue: the shortest"
        );
    }
}
