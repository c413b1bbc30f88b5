//! Prometheus metrics. Counters the store already knows (queue depth, runs by
//! status) are read from it at scrape time, so every process reports the shared
//! queue; durations are recorded where they happen.

use crate::suite::SuiteChoice;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabel {
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RunLabels {
    pub suite: String,
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SkipLabel {
    pub reason: String,
}

/// The methods RFC 9110 defines, and PATCH (RFC 5789): the only ones
/// labelled by name.
const KNOWN_METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// The label of a request's method: its name when it is one of
/// [`KNOWN_METHODS`], else `OTHER`. A client may send any token as a method,
/// and a label per token would grow `/metrics` without bound.
pub fn method_label(method: &str) -> &'static str {
    KNOWN_METHODS
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("OTHER")
}

/// The route label of a request no route matched: one for every such path.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// What the scheduler of this process did (see `scheduler`): slots that came
/// due, runs started, slots skipped and why, slots taken late.
struct ScheduleMetrics {
    due: Counter,
    started: Counter,
    skipped: Family<SkipLabel, Counter>,
    late: Counter,
    lateness: Histogram,
}

/// The process's metrics, shared by the web layer and the workers.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    registry: Registry,
    queue_depth: Gauge,
    runs: Family<StatusLabel, Gauge>,
    run_duration: Family<RunLabels, Histogram>,
    request_latency: Family<RequestLabels, Histogram>,
    /// 1 when the last scrape read the store's counts, 0 when it could not.
    store_up: Gauge,
    schedule: ScheduleMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("protocheck");
        let queue_depth = Gauge::default();
        registry.register(
            "queue_depth",
            "Runs waiting in the queue",
            queue_depth.clone(),
        );
        let runs = Family::<StatusLabel, Gauge>::default();
        registry.register("runs", "Runs stored, by status", runs.clone());
        let run_duration = Family::<RunLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0])
        });
        registry.register(
            "run_duration_seconds",
            "Time from claim to verdict, per attempt",
            run_duration.clone(),
        );
        let request_latency = Family::<RequestLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
            ])
        });
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency of the protocheck API",
            request_latency.clone(),
        );
        let store_up = Gauge::default();
        registry.register(
            "store_up",
            "1 when the last scrape read the run counts from the database, 0 when it did not answer in time (the run gauges then keep their last values)",
            store_up.clone(),
        );
        let schedule = ScheduleMetrics {
            due: Counter::default(),
            started: Counter::default(),
            skipped: Family::default(),
            late: Counter::default(),
            lateness: Histogram::new([0.1, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0]),
        };
        registry.register(
            "schedule_slots_due",
            "Slots of watched targets this process's scheduler took when they came due",
            schedule.due.clone(),
        );
        registry.register(
            "schedule_runs_started",
            "Runs the scheduler started for watched targets",
            schedule.started.clone(),
        );
        registry.register(
            "schedule_slots_skipped",
            "Slots that started no run: the previous run was still active (run_active), or the host had spent its hourly budget or the schedule's share of it (host_budget)",
            schedule.skipped.clone(),
        );
        registry.register(
            "schedule_slots_late",
            "Slots taken more than the late limit after their time",
            schedule.late.clone(),
        );
        registry.register(
            "schedule_lateness_seconds",
            "How long after its time each slot was taken",
            schedule.lateness.clone(),
        );
        Self(Arc::new(Inner {
            schedule,
            store_up,
            registry,
            queue_depth,
            runs,
            run_duration,
            request_latency,
        }))
    }

    pub fn observe_run(&self, suite: SuiteChoice, status: &str, seconds: f64) {
        self.0
            .run_duration
            .get_or_create(&RunLabels {
                suite: suite.as_str().to_owned(),
                status: status.to_owned(),
            })
            .observe(seconds);
    }

    /// Records one answer of the API. `route` is the matched route's
    /// template (or one label for every unmatched path), never the raw path;
    /// `method` is labelled by name only when HTTP defines it (see
    /// [`method_label`]): every label comes from a known set, so however
    /// many made-up methods and paths clients send, `/metrics` stays small.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.0
            .request_latency
            .get_or_create(&RequestLabels {
                method: method_label(method).to_owned(),
                route: route.to_owned(),
                status,
            })
            .observe(seconds);
    }

    /// Counts one tick of the scheduler; `late_ms`: how late a slot may be
    /// taken before it counts as late.
    pub fn observe_schedule(&self, tick: &crate::store::DueWatches, late_ms: i64) {
        let m = &self.0.schedule;
        m.due
            .inc_by(u64::try_from(tick.lateness_ms.len()).unwrap_or(0));
        m.started
            .inc_by(u64::try_from(tick.started.len()).unwrap_or(0));
        for (reason, n) in [
            ("run_active", tick.skipped.len()),
            ("host_budget", tick.over_budget.len()),
        ] {
            if n > 0 {
                m.skipped
                    .get_or_create(&SkipLabel {
                        reason: reason.to_owned(),
                    })
                    .inc_by(u64::try_from(n).unwrap_or(0));
            }
        }
        for &late in &tick.lateness_ms {
            m.lateness.observe(late as f64 / 1000.0);
            if late > late_ms {
                m.late.inc();
            }
        }
    }

    /// Sets the gauges read from the store (`None`: it did not answer; the
    /// gauges keep their last values and `store_up` says 0), then encodes
    /// everything as Prometheus text.
    pub fn render(&self, by_status: Option<&[(crate::store::RunStatus, i64)]>) -> String {
        self.0.store_up.set(i64::from(by_status.is_some()));
        for status in crate::store::RunStatus::ALL {
            let Some(by_status) = by_status else { break };
            let n = by_status
                .iter()
                .find(|(s, _)| *s == status)
                .map_or(0, |(_, n)| *n);
            self.0
                .runs
                .get_or_create(&StatusLabel {
                    status: status.as_str().to_owned(),
                })
                .set(n);
            if status == crate::store::RunStatus::Queued {
                self.0.queue_depth.set(n);
            }
        }
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.0.registry).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_labelled_from_a_known_set() {
        assert_eq!(method_label("GET"), "GET");
        assert_eq!(method_label("PATCH"), "PATCH");
        for made_up in ["get", "FOO", "X-1234", "", "PROPFIND"] {
            assert_eq!(method_label(made_up), "OTHER", "{made_up}");
        }
        let metrics = Metrics::new();
        for n in 0..500 {
            metrics.observe_request(&format!("M{n}"), UNMATCHED_ROUTE, 404, 0.001);
        }
        let text = metrics.render(None);
        assert!(text.contains("method=\"OTHER\""), "{text}");
        assert!(!text.contains("method=\"M1"), "{text}");
    }
}
