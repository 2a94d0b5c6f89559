//! Process-wide metrics in the Prometheus text format (`GET /metrics`): requests by agent,
//! binding, method and outcome with their latency, tasks by state, open streams and bus
//! subscribers, store append latency and executor run time.
//!
//! Recording is a few atomic operations and, for labelled series, one read-locked map
//! lookup; nothing is formatted until `/metrics` is read.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use a2a_types::TaskState;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
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
struct OutcomeLabels {
    outcome: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 50 µs … about 1.6 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

fn run_histogram() -> Histogram {
    // 1 ms … about 4.5 min.
    Histogram::new(exponential_buckets(0.001, 2.3, 16))
}

/// The metrics of this process. Get them with [`global`].
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_seconds: HistogramFamily<LatencyLabels>,
    tasks: Family<StateLabels, Gauge>,
    transitions: Family<StateLabels, Counter>,
    streams: Gauge,
    subscribers: Gauge,
    store_append_seconds: Histogram,
    executor_seconds: HistogramFamily<OutcomeLabels>,
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
        let tasks = Family::<StateLabels, Gauge>::default();
        registry.register(
            "tasks",
            "Tasks whose latest state this process wrote, by state (terminal states are counted in a2a_task_transitions_total)",
            tasks.clone(),
        );
        let transitions = Family::<StateLabels, Counter>::default();
        registry.register(
            "task_transitions",
            "Task state transitions written by this process, by the state entered",
            transitions.clone(),
        );
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
        let store_append_seconds = Histogram::new(exponential_buckets(0.000_005, 2.0, 18));
        registry.register(
            "store_append_duration_seconds",
            "Time for the task store to commit one append",
            store_append_seconds.clone(),
        );
        let executor_seconds: HistogramFamily<OutcomeLabels> =
            Family::new_with_constructor(run_histogram);
        registry.register(
            "executor_run_duration_seconds",
            "Time an agent's execute ran, by how it ended (ok, error, panic)",
            executor_seconds.clone(),
        );
        Self {
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

    pub(crate) fn request(
        &self,
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
        self.request_seconds
            .get_or_create(&LatencyLabels {
                agent: agent.clone(),
                binding: binding.as_str(),
                method,
            })
            .observe(elapsed.as_secs_f64());
    }

    /// A task entered `to` (from `from`, `None` for a new task).
    pub(crate) fn transition(&self, from: Option<TaskState>, to: TaskState) {
        if let Some(from) = from.filter(|s| !s.is_terminal()) {
            self.tasks
                .get_or_create(&StateLabels {
                    state: from.as_str(),
                })
                .dec();
        }
        let to_label = StateLabels { state: to.as_str() };
        if !to.is_terminal() {
            self.tasks.get_or_create(&to_label).inc();
        }
        self.transitions.get_or_create(&to_label).inc();
    }

    pub(crate) fn stream_opened(&self) -> GaugeHold {
        self.streams.inc();
        GaugeHold(self.streams.clone())
    }

    pub(crate) fn subscriber(&self) -> GaugeHold {
        self.subscribers.inc();
        GaugeHold(self.subscribers.clone())
    }

    pub(crate) fn store_append(&self, elapsed: Duration) {
        self.store_append_seconds.observe(elapsed.as_secs_f64());
    }

    pub(crate) fn executor_run(&self, outcome: &'static str, elapsed: Duration) {
        self.executor_seconds
            .get_or_create(&OutcomeLabels { outcome })
            .observe(elapsed.as_secs_f64());
    }
}

/// Holds one unit of a gauge until dropped.
#[derive(Debug)]
pub(crate) struct GaugeHold(Gauge);

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
