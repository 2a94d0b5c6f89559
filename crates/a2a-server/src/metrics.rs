//! Process-wide metrics in the Prometheus text format (`GET /metrics`): requests by agent,
//! binding, method and outcome with their latency, tasks by state, open streams and bus
//! subscribers, store append latency and executor run time.
//!
//! Recording is a few atomic operations and, for labelled series, one read-locked map
//! lookup; nothing is formatted until `/metrics` is read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use a2a_types::TaskState;
use prometheus_client::encoding::{
    EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::exponential_buckets;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use crate::executor::Binding;

/// The media type of the Prometheus text format served at `/metrics`.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A label value shared without copying (an agent's name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SharedName(pub(crate) Arc<str>);

impl EncodeLabelValue for SharedName {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        std::fmt::Write::write_str(encoder, &self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    agent: SharedName,
    binding: &'static str,
    method: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LatencyLabels {
    agent: SharedName,
    binding: &'static str,
    method: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// A histogram that records with two relaxed atomic additions and no lock (the
/// `prometheus-client` one locks a mutex per observation, which every request thread
/// would contend for).
#[derive(Debug, Clone)]
pub(crate) struct AtomicHistogram(Arc<HistogramCells>);

#[derive(Debug)]
struct HistogramCells {
    /// Upper bounds in seconds, ascending; the `+Inf` bucket is implicit.
    bounds: Vec<f64>,
    /// Observations per bucket (not cumulative), `bounds.len() + 1` of them.
    counts: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

impl AtomicHistogram {
    fn exponential(start: f64, factor: f64, n: usize) -> Self {
        let bounds: Vec<f64> = exponential_buckets(start, factor, n as u16).collect();
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Self(Arc::new(HistogramCells {
            bounds,
            counts,
            sum_nanos: AtomicU64::new(0),
        }))
    }

    pub(crate) fn observe(&self, elapsed: Duration) {
        let cells = &*self.0;
        let secs = elapsed.as_secs_f64();
        let bucket = cells.bounds.partition_point(|b| *b < secs);
        cells.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        cells.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
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
            .zip(cells.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = cells.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

type HistogramFamily<L> = Family<L, AtomicHistogram, fn() -> AtomicHistogram>;

fn latency_histogram() -> AtomicHistogram {
    // 50 µs … about 1.6 s.
    AtomicHistogram::exponential(0.000_05, 2.0, 16)
}

fn run_histogram() -> AtomicHistogram {
    // 1 ms … about 4.5 min.
    AtomicHistogram::exponential(0.001, 2.3, 16)
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

/// The request series of one agent, binding and method that end `ok`: looked up once,
/// then updated without a map lookup.
#[derive(Debug, Clone)]
pub(crate) struct RequestSeries {
    ok: Counter,
    latency: AtomicHistogram,
}

/// The operations a handler observes, in the order of [`RequestSeriesCache`] rows.
const METHODS: [&str; 6] = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
];

/// The bindings, in the order of [`RequestSeriesCache`] columns.
const BINDINGS: [Binding; 4] = [
    Binding::InProcess,
    Binding::JsonRpc,
    Binding::HttpJson,
    Binding::Grpc,
];

/// One agent's [`RequestSeries`] for each method and binding, made on first use.
#[derive(Debug)]
pub(crate) struct RequestSeriesCache {
    agent: SharedName,
    cells: [OnceLock<RequestSeries>; METHODS.len() * BINDINGS.len()],
}

impl RequestSeriesCache {
    pub(crate) fn new(agent: SharedName) -> Self {
        Self {
            agent,
            cells: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Records one request.
    pub(crate) fn record(
        &self,
        binding: Binding,
        method: &'static str,
        outcome: Result<(), &'static str>,
        elapsed: Duration,
    ) {
        let metrics = global();
        let m = METHODS.iter().position(|x| *x == method);
        let b = BINDINGS.iter().position(|x| *x == binding);
        let uncached;
        let series = match (m, b) {
            (Some(m), Some(b)) => self.cells[m * BINDINGS.len() + b]
                .get_or_init(|| metrics.request_series(&self.agent, binding, method)),
            _ => {
                uncached = metrics.request_series(&self.agent, binding, method);
                &uncached
            }
        };
        match outcome {
            Ok(()) => metrics.request_ok(series, elapsed),
            Err(reason) => {
                metrics.request_failed(series, &self.agent, binding, method, reason, elapsed);
            }
        }
    }
}

/// The metrics of this process. Get them with [`global`].
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_seconds: HistogramFamily<LatencyLabels>,
    /// By [`state_index`]; only non-terminal states move.
    tasks: Vec<Gauge>,
    /// By [`state_index`].
    transitions: Vec<Counter>,
    streams: Gauge,
    subscribers: Gauge,
    store_append_seconds: AtomicHistogram,
    /// By [`RUN_OUTCOMES`].
    executor_seconds: Vec<AtomicHistogram>,
    refused: Family<ReasonLabels, Counter>,
    push: Family<OutcomeLabels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("a2a");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "A2A requests answered, by agent, binding, method and outcome (ok, or the error reason)",
            requests.clone(),
        );
        let request_seconds: HistogramFamily<LatencyLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "request_duration_seconds",
            "Time to answer an A2A request (streams: until the stream is open)",
            request_seconds.clone(),
        );
        let task_family = Family::<StateLabels, Gauge>::default();
        registry.register(
            "tasks",
            "Tasks whose latest state this process wrote, by non-terminal state (terminal states are counted in a2a_task_transitions_total)",
            task_family.clone(),
        );
        let transition_family = Family::<StateLabels, Counter>::default();
        registry.register(
            "task_transitions",
            "Task state transitions written by this process, by the state entered",
            transition_family.clone(),
        );
        let label = |s: TaskState| StateLabels { state: s.as_str() };
        let tasks = STATES
            .iter()
            .map(|s| match s {
                TaskState::Unspecified => Gauge::default(),
                s if s.is_terminal() => Gauge::default(),
                s => task_family.get_or_create(&label(*s)).clone(),
            })
            .collect();
        let transitions = STATES
            .iter()
            .map(|s| match s {
                TaskState::Unspecified => Counter::default(),
                s => transition_family.get_or_create(&label(*s)).clone(),
            })
            .collect();
        let streams = Gauge::default();
        registry.register(
            "streams_active",
            "Open event streams (SendStreamingMessage, SubscribeToTask)",
            streams.clone(),
        );
        let subscribers = Gauge::default();
        registry.register(
            "bus_subscribers",
            "Live subscriptions to task events",
            subscribers.clone(),
        );
        let store_append_seconds = AtomicHistogram::exponential(0.000_005, 2.0, 18);
        registry.register(
            "store_append_duration_seconds",
            "Time for the task store to commit one append",
            store_append_seconds.clone(),
        );
        let executor_family: HistogramFamily<OutcomeLabels> =
            Family::new_with_constructor(run_histogram);
        registry.register(
            "executor_run_duration_seconds",
            "Time an agent's execute ran, by how it ended (ok, error, panic)",
            executor_family.clone(),
        );
        let executor_seconds = RUN_OUTCOMES
            .iter()
            .map(|outcome| {
                executor_family
                    .get_or_create(&OutcomeLabels { outcome })
                    .clone()
            })
            .collect();
        let refused = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Connections refused or cut by a limit, by reason (max_connections, idle, body_timeout, write_timeout, max_in_flight, streams_per_caller, rate_per_caller, unauthenticated, tls_handshake, accept_failed: no descriptor left)",
            refused.clone(),
        );
        let push = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "push_deliveries",
            "Push notification attempts by outcome: delivered, retried (a failed attempt that will be tried again), rejected (the receiver refused it with a 4xx), gave_up (retries exhausted), refused (the address is not allowed)",
            push.clone(),
        );
        Self {
            refused,
            push,
            registry,
            requests,
            request_seconds,
            tasks,
            transitions,
            streams,
            subscribers,
            store_append_seconds,
            executor_seconds,
        }
    }

    /// The metrics in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> String {
        let mut open_metrics = String::with_capacity(8 * 1024);
        if prometheus_client::encoding::text::encode(&mut open_metrics, &self.registry).is_err() {
            return String::new();
        }
        to_prometheus_text(&open_metrics)
    }

    /// The series a handler records its `ok` requests in (see [`RequestSeries`]).
    pub(crate) fn request_series(
        &self,
        agent: &SharedName,
        binding: Binding,
        method: &'static str,
    ) -> RequestSeries {
        let ok = self
            .requests
            .get_or_create(&RequestLabels {
                agent: agent.clone(),
                binding: binding.as_str(),
                method,
                outcome: "ok",
            })
            .clone();
        let latency = self
            .request_seconds
            .get_or_create(&LatencyLabels {
                agent: agent.clone(),
                binding: binding.as_str(),
                method,
            })
            .clone();
        RequestSeries { ok, latency }
    }

    /// A request that ended `ok`.
    pub(crate) fn request_ok(&self, series: &RequestSeries, elapsed: Duration) {
        series.ok.inc();
        series.latency.observe(elapsed);
    }

    /// A request that failed with `outcome` (an error reason).
    pub(crate) fn request_failed(
        &self,
        series: &RequestSeries,
        agent: &SharedName,
        binding: Binding,
        method: &'static str,
        outcome: &'static str,
        elapsed: Duration,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                agent: agent.clone(),
                binding: binding.as_str(),
                method,
                outcome,
            })
            .inc();
        series.latency.observe(elapsed);
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

    /// A connection or request refused or cut, and why (`max_connections`, `idle`,
    /// `body_timeout`).
    pub(crate) fn push_delivery(&self, outcome: &'static str) {
        self.push.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    pub(crate) fn connection_refused(&self, reason: &'static str) {
        self.refused.get_or_create(&ReasonLabels { reason }).inc();
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
pub(crate) struct GaugeHold(&'static Gauge);

impl Drop for GaugeHold {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The OpenMetrics text the encoder writes, as the Prometheus text format: a counter's
/// `HELP` and `TYPE` name its `_total` samples, and there are no `UNIT` or `EOF` lines.
fn to_prometheus_text(open_metrics: &str) -> String {
    let counters: Vec<&str> = open_metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open_metrics.len() + 16 * counters.len());
    for line in open_metrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(&name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_by_their_samples() {
        let text = to_prometheus_text(
            "# HELP a2a_requests Requests.\n# TYPE a2a_requests counter\na2a_requests_total 3\n# HELP a2a_x X.\n# TYPE a2a_x gauge\n# UNIT a2a_x seconds\na2a_x 1\n# EOF\n",
        );
        assert_eq!(
            text,
            "# HELP a2a_requests_total Requests.\n# TYPE a2a_requests_total counter\na2a_requests_total 3\n# HELP a2a_x X.\n# TYPE a2a_x gauge\na2a_x 1\n"
        );
    }
}
