//! Tracing for A2A agents and clients: a lean [`tracing`] layer that records spans as compact
//! records and exports them over OTLP (protobuf over HTTP, or gRPC), and W3C trace context
//! (`traceparent` / `tracestate`) in and out.
//!
//! Why not the generic `tracing-opentelemetry` bridge and the OpenTelemetry SDK's batch
//! exporter: on a server answering tens of thousands of requests a second they cost a third
//! of its throughput (each span is built as an SDK span, converted to `SpanData`, converted
//! again to OTLP structures, then encoded). Here a span is a small record in the span's
//! registry extensions, the sampling decision is made before anything is recorded, and a
//! finished batch is encoded straight to OTLP protobuf on the exporter's own thread.
//!
//! The functions that read or set trace context ([`span_with_parent`],
//! [`current_trace_context`], [`add_event`]) also work when an application installs the
//! `tracing-opentelemetry` layer instead of this one.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! # fn main() -> Result<(), a2a_telemetry::Error> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_* ...
//! let config = a2a_telemetry::ExportConfig::from_env()?;
//! let (layer, exporter) = config.start()?;
//! tracing_subscriber::registry().with(layer).init();
//! // ... serve ...
//! exporter.shutdown(); // flushes what is buffered
//! # Ok(())
//! # }
//! ```

mod config;
mod context;
mod encode;
mod export;
mod layer;
mod own;
mod record;
mod sampler;

pub use config::{Error, ExportConfig, Protocol};
pub use context::{
    TraceParent, add_event, current_trace_context, mark_current_error, record_current,
    span_with_parent,
};
pub use export::Exporter;
pub use layer::OtlpLayer;
pub use own::{InOwnSpan, OwnSpan, OwnTarget};
pub use record::{AttrValue, SpanKind};
pub use sampler::Sampler;

/// The W3C `traceparent` header.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C `tracestate` header.
pub const TRACESTATE: &str = "tracestate";
