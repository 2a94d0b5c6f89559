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

use a2a_telemetry::{ExportConfig, Exporter, Protocol, TraceParent};
use anyhow::Context as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::LogFormat;

/// Which spans are exported: the A2A crates' and every other `INFO` span (an executor's
/// own), but not those of the HTTP, gRPC and store machinery underneath, which would drown
/// them.
const DEFAULT_EXPORT_FILTER: &str = "info,h2=off,hyper=off,hyper_util=off,tonic=off,tower=off,\
    reqwest=off,sqlx=off,a2a::telemetry=off";

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
    exporter: Option<Exporter>,
}

impl Telemetry {
    /// Exports the spans still buffered and stops the exporter.
    pub(crate) fn shutdown(self) {
        if let Some(exporter) = self.exporter {
            exporter.shutdown();
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The export configuration, when export is wanted.
fn export_config(settings: &ExportSettings) -> anyhow::Result<Option<ExportConfig>> {
    if ExportConfig::disabled_by_env()
        || (settings.endpoint.is_none() && !ExportConfig::wanted_by_env())
    {
        return Ok(None);
    }
    let mut config = ExportConfig::from_env()?;
    if let Some(endpoint) = &settings.endpoint {
        config = config.with_endpoint(endpoint.clone());
    }
    if let Some(p) = settings.protocol {
        config.protocol = match p {
            OtlpProtocol::HttpProtobuf => Protocol::HttpProtobuf,
            OtlpProtocol::Grpc => Protocol::Grpc,
        };
    }
    if config.service_name.is_none() {
        config.service_name = Some("a2a".to_owned());
    }
    Ok(Some(config))
}

/// Installs the log subscriber (filtered by `A2A_LOG`, else `RUST_LOG`, else `warn`) and,
/// when configured, the OTLP exporter (on a thread of its own).
pub(crate) fn init(format: LogFormat, settings: &ExportSettings) -> anyhow::Result<Telemetry> {
    let log_filter = EnvFilter::try_from_env("A2A_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let log_layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log_layer = match format {
        LogFormat::Text => log_layer.boxed(),
        LogFormat::Json => log_layer.json().boxed(),
    };
    let export_filter = match env("A2A_TRACE") {
        Some(directives) => directives
            .parse::<Targets>()
            .with_context(|| format!("A2A_TRACE={directives:?} is not a target filter"))?,
        None => DEFAULT_EXPORT_FILTER
            .parse::<Targets>()
            .context("the default export filter")?,
    };
    let (export_layer, exporter) = match export_config(settings)? {
        Some(config) => {
            let (layer, exporter) = config.start().context("cannot start trace export")?;
            // The runtime's own request and task spans follow the same filter.
            let wants = export_filter.clone();
            exporter
                .record_own_spans(move |target| wants.would_enable(target, &tracing::Level::INFO));
            (Some(layer.with_filter(export_filter)), Some(exporter))
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(log_layer.with_filter(log_filter))
        .with(export_layer)
        .try_init()
        .context("cannot install the log subscriber")?;
    Ok(Telemetry { exporter })
}

/// The span a client command runs in: a child of the trace in `TRACEPARENT` / `TRACESTATE`
/// when the environment carries one (an `exec` agent's program gets them from the host),
/// so calls made by the command continue that trace.
pub(crate) fn command_span(command: &'static str) -> tracing::Span {
    let parent =
        env("TRACEPARENT").and_then(|p| TraceParent::parse(&p, env("TRACESTATE").as_deref()));
    a2a_telemetry::span_with_parent(
        parent,
        || tracing::info_span!(target: "a2a::cli", "a2a.cli", otel.name = command),
    )
}
