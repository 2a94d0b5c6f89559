//! The runtime's metrics: tasks by state and their transitions, open streams, bus
//! subscribers, store append latency and executor run time. [`global`] holds them; a server
//! adds them to what it serves at `/metrics` with [`RuntimeMetrics::register`].
//!
//! Recording is a few atomic operations, on cache lines of the recording thread's own
//! ([`Striped`]); nothing is formatted until the metrics are read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use a2a_types::TaskState;
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::exponential_buckets;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

mod striped;

use striped::Line;
pub use striped::{Striped, StripedCounter, StripedGauge};

/// A histogram that records with two relaxed atomic additions and no lock (the
/// `prometheus-client` one locks a mutex per observation, which every request thread
/// would contend for), to cells of the recording thread's own stripe (see [`Striped`]).
#[derive(Debug, Clone)]
pub struct AtomicHistogram(Arc<HistogramCells>);

struct HistogramCells {
    /// Upper bounds in seconds, ascending; the `+Inf` bucket is implicit.
    bounds: Vec<f64>,
    /// Per stripe, `lines` cache lines: observations per bucket (not cumulative,
    /// `bounds.len() + 1` of them), then the sum in nanoseconds.
    cells: Box<[Line]>,
    /// Cache lines per stripe.
    lines: usize,
}

impl std::fmt::Debug for HistogramCells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramCells")
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl HistogramCells {
    /// Cell `i` of `stripe` (buckets first, then the sum).
    fn cell(&self, stripe: usize, i: usize) -> &AtomicU64 {
        &self.cells[stripe * self.lines + i / 8].0[i % 8]
    }

    /// Cell `i` summed over the stripes.
    fn total(&self, i: usize) -> u64 {
        striped::sum((0..self.cells.len() / self.lines).map(|s| self.cell(s, i)))
    }
}

impl AtomicHistogram {
    /// Buckets from `start` seconds, each `factor` times the previous, `n` of them.
    pub fn exponential(start: f64, factor: f64, n: usize) -> Self {
        let bounds: Vec<f64> = exponential_buckets(start, factor, n as u16).collect();
        // The buckets, `+Inf` and the sum.
        let lines = (bounds.len() + 2).div_ceil(8);
        let cells = (0..lines * striped::stripes())
            .map(|_| Line::default())
            .collect();
        Self(Arc::new(HistogramCells {
            bounds,
            cells,
            lines,
        }))
    }

    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let cells = &*self.0;
        let secs = elapsed.as_secs_f64();
        let bucket = cells.bounds.partition_point(|b| *b < secs);
        let stripe = striped::stripe();
        cells.cell(stripe, bucket).fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let sum = cells.bounds.len() + 1;
        cells.cell(stripe, sum).fetch_add(nanos, Ordering::Relaxed);
    }
}

impl TypedMetric for AtomicHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for AtomicHistogram {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> std::fmt::Result {
        let cells = &*self.0;
        let buckets: Vec<(f64, u64)> = cells
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(|(i, bound)| (bound, cells.total(i)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = cells.total(cells.bounds.len() + 1) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// A family of [`AtomicHistogram`]s.
pub type HistogramFamily<L> = Family<L, AtomicHistogram, fn() -> AtomicHistogram>;

fn run_histogram() -> AtomicHistogram {
    // 1 ms … about 4.5 min.
    AtomicHistogram::exponential(0.001, 2.3, 16)
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

/// Labels by how something ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// The outcome.
    pub outcome: &'static str,
}

/// Every task state, in proto order (the index of a state's series below).
const STATES: [TaskState; 9] = [
    TaskState::Unspecified,
    TaskState::Submitted,
    TaskState::Working,
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::InputRequired,
    TaskState::Rejected,
    TaskState::AuthRequired,
];

fn state_index(state: TaskState) -> usize {
    STATES.iter().position(|s| *s == state).unwrap_or(0)
}

/// The executor outcomes' labels, indexed by [`RunOutcome`].
const RUN_OUTCOMES: [&str; 3] = ["ok", "error", "panic"];

/// How an agent's `execute` ended.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RunOutcome {
    Ok = 0,
    Error = 1,
    Panic = 2,
}

/// The runtime's metrics. Get them with [`global`].
pub struct RuntimeMetrics {
    task_family: Family<StateLabels, StripedGauge>,
    transition_family: Family<StateLabels, StripedCounter>,
    executor_family: HistogramFamily<OutcomeLabels>,
    /// By [`state_index`]; only non-terminal states move.
    tasks: Vec<StripedGauge>,
    /// By [`state_index`].
    transitions: Vec<StripedCounter>,
    streams: StripedGauge,
    subscribers: StripedGauge,
    store_append_seconds: AtomicHistogram,
    /// By [`RUN_OUTCOMES`].
    executor_seconds: Vec<AtomicHistogram>,
}

impl std::fmt::Debug for RuntimeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeMetrics").finish_non_exhaustive()
    }
}

/// The process's runtime metrics.
pub fn global() -> &'static RuntimeMetrics {
    static METRICS: OnceLock<RuntimeMetrics> = OnceLock::new();
    METRICS.get_or_init(RuntimeMetrics::new)
}

impl RuntimeMetrics {
    fn new() -> Self {
        let task_family = Family::<StateLabels, StripedGauge>::default();
        let transition_family = Family::<StateLabels, StripedCounter>::default();
        let label = |s: TaskState| StateLabels { state: s.as_str() };
        let tasks = STATES
            .iter()
            .map(|s| match s {
                TaskState::Unspecified => StripedGauge::default(),
                s if s.is_terminal() => StripedGauge::default(),
                s => task_family.get_or_create(&label(*s)).clone(),
            })
            .collect();
        let transitions = STATES
            .iter()
            .map(|s| match s {
                TaskState::Unspecified => StripedCounter::default(),
                s => transition_family.get_or_create(&label(*s)).clone(),
            })
            .collect();
        let executor_family: HistogramFamily<OutcomeLabels> =
            Family::new_with_constructor(run_histogram);
        let executor_seconds = RUN_OUTCOMES
            .iter()
            .map(|outcome| {
                executor_family
                    .get_or_create(&OutcomeLabels { outcome })
                    .clone()
            })
            .collect();
        Self {
            task_family,
            transition_family,
            executor_family,
            tasks,
            transitions,
            streams: StripedGauge::default(),
            subscribers: StripedGauge::default(),
            store_append_seconds: AtomicHistogram::exponential(0.000_005, 2.0, 18),
            executor_seconds,
        }
    }

    /// Adds these metrics to `registry` (the same series: both see every update).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "tasks",
            "Tasks whose latest state this process wrote, by non-terminal state (terminal states are counted in a2a_task_transitions_total)",
            self.task_family.clone(),
        );
        registry.register(
            "task_transitions",
            "Task state transitions written by this process, by the state entered",
            self.transition_family.clone(),
        );
        registry.register(
            "streams_active",
            "Open event streams (SendStreamingMessage, SubscribeToTask)",
            self.streams.clone(),
        );
        registry.register(
            "bus_subscribers",
            "Live subscriptions to task events",
            self.subscribers.clone(),
        );
        registry.register(
            "store_append_duration_seconds",
            "Time for the task store to commit one append",
            self.store_append_seconds.clone(),
        );
        registry.register(
            "executor_run_duration_seconds",
            "Time an agent's execute ran, by how it ended (ok, error, panic)",
            self.executor_family.clone(),
        );
    }

    /// A task entered `to` (from `from`, `None` for a new task).
    pub(crate) fn transition(&self, from: Option<TaskState>, to: TaskState) {
        if let Some(from) = from.filter(|s| !s.is_terminal()) {
            self.tasks[state_index(from)].dec();
        }
        if !to.is_terminal() {
            self.tasks[state_index(to)].inc();
        }
        self.transitions[state_index(to)].inc();
    }

    pub(crate) fn stream_opened(&'static self) -> GaugeHold {
        self.streams.inc();
        GaugeHold(&self.streams)
    }

    pub(crate) fn subscriber(&'static self) -> GaugeHold {
        self.subscribers.inc();
        GaugeHold(&self.subscribers)
    }

    pub(crate) fn store_append(&self, elapsed: Duration) {
        self.store_append_seconds.observe(elapsed);
    }

    /// An agent's `execute` ran for `elapsed` and ended as `RUN_OUTCOMES[outcome]`.
    pub(crate) fn executor_run(&self, outcome: RunOutcome, elapsed: Duration) {
        self.executor_seconds[outcome as usize].observe(elapsed);
    }
}

/// Holds one unit of a gauge until dropped.
#[derive(Debug)]
pub(crate) struct GaugeHold(&'static StripedGauge);

impl Drop for GaugeHold {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_sums_the_observations_of_every_thread() {
        // 1 ms, 2 ms, 4 ms; 20 buckets make three cache lines per stripe.
        for n in [3, 20] {
            let histogram = AtomicHistogram::exponential(0.001, 2.0, n);
            let threads = striped::stripes() * 2 + 1;
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        histogram.observe(Duration::from_micros(500));
                        histogram.observe(Duration::from_micros(1500));
                        histogram.observe(Duration::from_secs(3600));
                    });
                }
            });
            let mut registry = Registry::default();
            registry.register("h", "h", histogram.clone());
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
            let t = threads;
            assert!(text.contains(&format!("h_count {}\n", 3 * t)), "{text}");
            let sum: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("h_sum "))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no h_sum in {text}"));
            let expected = t as f64 * (0.0005 + 0.0015 + 3600.0);
            assert!(
                (sum - expected).abs() < 1e-6,
                "h_sum {sum}, expected {expected}"
            );
            assert!(
                text.contains(&format!("h_bucket{{le=\"0.001\"}} {t}\n")),
                "{text}"
            );
            assert!(
                text.contains(&format!("h_bucket{{le=\"0.002\"}} {}\n", 2 * t)),
                "{text}"
            );
            assert!(
                text.contains(&format!("h_bucket{{le=\"+Inf\"}} {}\n", 3 * t)),
                "{text}"
            );
        }
    }
}
