//! Tracing for A2A agents and clients, in two layers:
//!
//! - **Trace context** (always): W3C `traceparent` / `tracestate` parsed and printed
//!   ([`TraceParent`]), a span continuing a caller's trace ([`span_with_parent`]), the current
//!   span's context to pass on ([`current_trace_context`]), events and attributes added to the
//!   current span ([`add_event`], [`record_current`]). Small: `tracing` and nothing else.
//! - **Export** (feature `export`, with `grpc` for OTLP/gRPC): a lean [`tracing`] layer that
//!   records spans as compact records and exports them over OTLP (protobuf over HTTP, or
//!   gRPC), and own spans a runtime records without the `tracing` registry. Why not the
//!   generic `tracing-opentelemetry` bridge and the OpenTelemetry SDK's batch exporter: on a
//!   server answering tens of thousands of requests a second they cost a third of its
//!   throughput (each span is built as an SDK span, converted to `SpanData`, converted again
//!   to OTLP structures, then encoded). Here a span is a small record in the span's registry
//!   extensions, the sampling decision is made before anything is recorded, and a finished
//!   batch is encoded straight to OTLP protobuf on the exporter's own thread.
//!
//! With the feature `otel`, the trace-context functions also work when an application
//! installs the `tracing-opentelemetry` layer instead of this crate's.
//!
//! ```no_run
//! // With the `export` feature:
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

mod attr;
mod context;
#[cfg(feature = "otel")]
mod otel;
mod trace_parent;

#[cfg(feature = "export")]
mod config;
#[cfg(feature = "export")]
mod encode;
#[cfg(feature = "export")]
mod export;
#[cfg(feature = "export")]
mod layer;
#[cfg(feature = "export")]
mod own;
#[cfg(feature = "export")]
mod queue;
#[cfg(feature = "export")]
mod record;
#[cfg(feature = "export")]
mod sampler;

pub use attr::AttrValue;
pub use context::{
    add_event, current_trace_context, mark_current_error, record_current, span_with_parent,
};
pub use trace_parent::{TRACEPARENT, TRACESTATE, TraceParent};

#[cfg(feature = "export")]
pub use config::{Error, ExportConfig, Protocol};
#[cfg(feature = "export")]
pub use export::Exporter;
#[cfg(feature = "export")]
pub use layer::OtlpLayer;
#[cfg(feature = "export")]
pub use own::{InOwnSpan, OwnSpan, OwnTarget};
#[cfg(feature = "export")]
pub use record::SpanKind;
#[cfg(feature = "export")]
pub use sampler::Sampler;
