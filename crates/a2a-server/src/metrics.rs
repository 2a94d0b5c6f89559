//! Process-wide metrics in the Prometheus text format (`GET /metrics`): requests by agent,
//! binding, method and outcome with their latency, connections refused, push deliveries, and
//! the runtime's (tasks by state, open streams and bus subscribers, store append latency and
//! executor run time: `a2a_runtime::metrics`).
//!
//! Recording is a few atomic operations and, for labelled series, one read-locked map
//! lookup; nothing is formatted until `/metrics` is read.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use a2a_runtime::Binding;
use a2a_runtime::metrics::{AtomicHistogram, HistogramFamily, OutcomeLabels};
use a2a_runtime::metrics::{StripedCounter, StripedGauge};
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

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
struct ReasonLabels {
    reason: &'static str,
}

fn latency_histogram() -> AtomicHistogram {
    // 50 µs … about 1.6 s.
    AtomicHistogram::exponential(0.000_05, 2.0, 16)
}

/// The request series of one agent, binding and method that end `ok`: looked up once,
/// then updated without a map lookup.
#[derive(Debug, Clone)]
pub(crate) struct RequestSeries {
    ok: StripedCounter,
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
const BINDINGS: [Option<Binding>; 4] = [
    None,
    Some(Binding::JsonRpc),
    Some(Binding::HttpJson),
    Some(Binding::Grpc),
];

/// A binding's label: its name, or `in_process` for calls from this process.
fn binding_label(binding: Option<Binding>) -> &'static str {
    binding.map_or("in_process", Binding::as_str)
}

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
        binding: Option<Binding>,
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
    requests: Family<RequestLabels, StripedCounter>,
    request_seconds: HistogramFamily<LatencyLabels>,
    refused: Family<ReasonLabels, StripedCounter>,
    push: Family<OutcomeLabels, StripedCounter>,
    in_flight: StripedGauge,
}

/// One request being handled: counted in `a2a_requests_in_flight` until dropped.
#[derive(Debug)]
pub(crate) struct InFlight(());

impl Drop for InFlight {
    fn drop(&mut self) {
        global().in_flight.dec();
    }
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
        let requests = Family::<RequestLabels, StripedCounter>::default();
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
        a2a_runtime::metrics::global().register(&mut registry);
        let refused = Family::<ReasonLabels, StripedCounter>::default();
        registry.register(
            "connections_refused",
            "Connections refused or cut by a limit, by reason (max_connections, idle, body_timeout, write_timeout, max_in_flight, streams_per_caller, rate_per_caller, unauthenticated, tls_handshake, accept_failed: no descriptor left)",
            refused.clone(),
        );
        let push = Family::<OutcomeLabels, StripedCounter>::default();
        registry.register(
            "push_deliveries",
            "Push notification attempts by outcome: delivered, retried (a failed attempt that will be tried again), rejected (the receiver refused it with a 4xx), gave_up (retries exhausted), refused (the address is not allowed)",
            push.clone(),
        );
        let in_flight = StripedGauge::default();
        registry.register(
            "requests_in_flight",
            "A2A requests being handled now (a stream until it is open)",
            in_flight.clone(),
        );
        Self {
            refused,
            push,
            registry,
            requests,
            request_seconds,
            in_flight,
        }
    }

    /// Counts a request as being handled until the guard is dropped.
    pub(crate) fn request_started(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(())
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
        binding: Option<Binding>,
        method: &'static str,
    ) -> RequestSeries {
        let ok = self
            .requests
            .get_or_create(&RequestLabels {
                agent: agent.clone(),
                binding: binding_label(binding),
                method,
                outcome: "ok",
            })
            .clone();
        let latency = self
            .request_seconds
            .get_or_create(&LatencyLabels {
                agent: agent.clone(),
                binding: binding_label(binding),
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
        binding: Option<Binding>,
        method: &'static str,
        outcome: &'static str,
        elapsed: Duration,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                agent: agent.clone(),
                binding: binding_label(binding),
                method,
                outcome,
            })
            .inc();
        series.latency.observe(elapsed);
    }

    /// A connection or request refused or cut, and why (`max_connections`, `idle`,
    /// `body_timeout`).
    pub(crate) fn push_delivery(&self, outcome: &'static str) {
        self.push.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    pub(crate) fn connection_refused(&self, reason: &'static str) {
        self.refused.get_or_create(&ReasonLabels { reason }).inc();
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
