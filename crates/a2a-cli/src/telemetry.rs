//! Log lines on stderr and, when configured, OpenTelemetry export of traces over OTLP.
//!
//! Export is on when `--otlp-endpoint` is given or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`
//! / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (unless `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none`). The protocol is `http/protobuf` unless
//! `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL` (or
//! `--otlp-protocol`) says `grpc`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_TRACES_SAMPLER` and the `OTEL_BSP_*` settings apply as usual. Without export no
//! OpenTelemetry layer is installed: the spans of the A2A crates are then disabled at their
//! call sites and cost nothing.

use anyhow::Context as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::LogFormat;

/// Which spans are exported: the A2A crates' and every other `INFO` span (an executor's
/// own), but not those of the HTTP, gRPC and exporter machinery underneath, which would
/// drown them (and the exporter's would trace itself).
const DEFAULT_EXPORT_FILTER: &str = "info,h2=off,hyper=off,hyper_util=off,tonic=off,tower=off,\
    reqwest=off,opentelemetry=off,opentelemetry_sdk=off,opentelemetry_otlp=off,sqlx=off";

/// OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OtlpProtocol {
    /// Protobuf over HTTP (`http/protobuf`, port 4318).
    #[value(name = "http/protobuf", alias = "http")]
    HttpProtobuf,
    /// gRPC (port 4317).
    Grpc,
}

/// Where traces go, from the command line (the `OTEL_*` variables fill what it leaves out).
#[derive(Debug, Clone, Default)]
pub(crate) struct ExportSettings {
    /// The collector's base URL (`http://localhost:4318`; for gRPC `http://localhost:4317`).
    pub(crate) endpoint: Option<String>,
    pub(crate) protocol: Option<OtlpProtocol>,
}

/// Keeps the exporter alive; [`shutdown`](Self::shutdown) flushes what is buffered.
#[derive(Debug)]
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still buffered and stops the exporter.
    pub(crate) fn shutdown(self) {
        if let Some(provider) = self.provider
            && let Err(e) = provider.shutdown()
        {
            eprintln!("a2a: could not flush traces: {e}");
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn export_wanted(settings: &ExportSettings) -> bool {
    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
    {
        return false;
    }
    settings.endpoint.is_some()
        || env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
}

fn protocol(settings: &ExportSettings) -> anyhow::Result<OtlpProtocol> {
    if let Some(p) = settings.protocol {
        return Ok(p);
    }
    let named =
        env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"));
    match named.as_deref() {
        None | Some("http/protobuf") => Ok(OtlpProtocol::HttpProtobuf),
        Some("grpc") => Ok(OtlpProtocol::Grpc),
        Some(other) => anyhow::bail!(
            "OTLP protocol {other:?} is not supported here (use \"http/protobuf\" or \"grpc\")"
        ),
    }
}

fn exporter(settings: &ExportSettings) -> anyhow::Result<opentelemetry_otlp::SpanExporter> {
    let builder = opentelemetry_otlp::SpanExporter::builder();
    let exporter = match protocol(settings)? {
        OtlpProtocol::HttpProtobuf => {
            let mut b = builder.with_http();
            if let Some(base) = &settings.endpoint {
                // Like OTEL_EXPORTER_OTLP_ENDPOINT: a base URL the signal's path goes under.
                let base = base.trim_end_matches('/');
                let url = if base.ends_with("/v1/traces") {
                    base.to_owned()
                } else {
                    format!("{base}/v1/traces")
                };
                b = b.with_endpoint(url);
            }
            b.build()
        }
        OtlpProtocol::Grpc => {
            let mut b = builder.with_tonic();
            if let Some(endpoint) = &settings.endpoint {
                b = b.with_endpoint(endpoint.clone());
            }
            b.build()
        }
    };
    exporter.context("cannot set up the OTLP trace exporter")
}

fn resource() -> Resource {
    let builder = Resource::builder();
    if env("OTEL_SERVICE_NAME").is_some() {
        builder.build()
    } else {
        builder.with_service_name("a2a").build()
    }
}

/// Installs the log subscriber (filtered by `A2A_LOG`, else `RUST_LOG`, else `warn`) and,
/// when configured, the OTLP exporter. Call it inside the Tokio runtime: the gRPC exporter
/// runs on it.
pub(crate) fn init(format: LogFormat, settings: &ExportSettings) -> anyhow::Result<Telemetry> {
    let log_filter = EnvFilter::try_from_env("A2A_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let log_layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log_layer = match format {
        LogFormat::Text => log_layer.boxed(),
        LogFormat::Json => log_layer.json().boxed(),
    };
    let provider = if export_wanted(settings) {
        let exporter = exporter(settings)?;
        Some(
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource())
                .build(),
        )
    } else {
        None
    };
    let export_filter = match env("A2A_TRACE") {
        Some(directives) => directives
            .parse::<Targets>()
            .with_context(|| format!("A2A_TRACE={directives:?} is not a target filter"))?,
        None => DEFAULT_EXPORT_FILTER
            .parse::<Targets>()
            .context("the default export filter")?,
    };
    let export_layer = provider.as_ref().map(|p| {
        // Only what a trace backend shows: no source locations, thread ids, targets or
        // busy/idle timings (each a clock read per poll), and no OpenTelemetry context made
        // current on every enter (the client reads a span's context directly).
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("a2a"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
            .with_filter(export_filter)
    });
    tracing_subscriber::registry()
        .with(log_layer.with_filter(log_filter))
        .with(export_layer)
        .try_init()
        .context("cannot install the log subscriber")?;
    Ok(Telemetry { provider })
}

/// The span a client command runs in: a child of the trace in `TRACEPARENT` / `TRACESTATE`
/// when the environment carries one (an `exec` agent's program gets them from the host),
/// so calls made by the command continue that trace.
pub(crate) fn command_span(command: &'static str) -> tracing::Span {
    use opentelemetry::propagation::TextMapPropagator as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let span = tracing::info_span!(target: "a2a::cli", "a2a.cli", otel.name = command);
    if span.is_disabled() {
        return span;
    }
    if let Some(parent) = env("TRACEPARENT") {
        let mut carrier = std::collections::HashMap::new();
        carrier.insert("traceparent".to_owned(), parent);
        if let Some(state) = env("TRACESTATE") {
            carrier.insert("tracestate".to_owned(), state);
        }
        let cx = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
        let _ = span.set_parent(cx);
    }
    span
}
