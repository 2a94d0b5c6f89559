//! Log lines on stderr and, when configured, OpenTelemetry export of traces over OTLP: what
//! `a2a serve` installs, for a program that hosts agents itself ([`init`]).
//!
//! Export is on when `--otlp-endpoint` is given or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`
//! / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (unless `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none`). The protocol is `http/protobuf` unless
//! `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL` (or
//! `--otlp-protocol`) says `grpc`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_TRACES_SAMPLER` and the `OTEL_BSP_*` settings apply as usual. Without export no
//! OpenTelemetry layer is installed: the spans of the A2A crates are then disabled at their
//! call sites and cost nothing.

use std::io::IsTerminal as _;

use a2a_telemetry::{ExportConfig, Exporter, Protocol, TraceParent};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogFormat {
    /// Human-readable lines (coloured when stderr is a terminal).
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// `A2A_TRACE` is not a target filter.
    #[error("A2A_TRACE={0:?} is not a target filter")]
    Filter(String),
    /// The OTLP settings are not valid, or the exporter could not start.
    #[error("cannot start trace export")]
    Export(#[from] a2a_telemetry::Error),
    /// A global subscriber is already installed.
    #[error("cannot install the log subscriber")]
    Install(#[source] tracing_subscriber::util::TryInitError),
}

/// Which spans are exported: the A2A crates' and every other `INFO` span (an executor's
/// own), but not those of the HTTP, gRPC and store machinery underneath, which would drown
/// them.
const DEFAULT_EXPORT_FILTER: &str = "info,h2=off,hyper=off,hyper_util=off,tonic=off,tower=off,\
    reqwest=off,sqlx=off,a2a::telemetry=off";

/// OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// Protobuf over HTTP (`http/protobuf`, port 4318).
    HttpProtobuf,
    /// gRPC (port 4317).
    Grpc,
}

/// Where traces go, from the command line (the `OTEL_*` variables fill what it leaves out).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExportSettings {
    /// The collector's base URL (`http://localhost:4318`; for gRPC `http://localhost:4317`).
    pub endpoint: Option<String>,
    /// The wire protocol.
    pub protocol: Option<OtlpProtocol>,
}

/// Keeps the exporter alive; [`shutdown`](Self::shutdown) flushes what is buffered.
#[derive(Debug)]
pub struct Telemetry {
    exporter: Option<Exporter>,
}

impl Telemetry {
    /// Exports the spans still buffered and stops the exporter.
    pub fn shutdown(self) {
        if let Some(exporter) = self.exporter {
            exporter.shutdown();
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The export configuration, when export is wanted.
fn export_config(settings: &ExportSettings) -> Result<Option<ExportConfig>, TelemetryError> {
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
pub fn init(format: LogFormat, settings: &ExportSettings) -> Result<Telemetry, TelemetryError> {
    let log_filter = EnvFilter::try_from_env("A2A_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    // Colours only for a terminal: a log file or a collector gets plain text.
    let log_layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour_wanted());
    let log_layer = match format {
        LogFormat::Text => log_layer.boxed(),
        LogFormat::Json => log_layer.json().boxed(),
    };
    let export_filter = match env("A2A_TRACE") {
        Some(directives) => directives
            .parse::<Targets>()
            .map_err(|_| TelemetryError::Filter(directives))?,
        None => DEFAULT_EXPORT_FILTER
            .parse::<Targets>()
            .map_err(|_| TelemetryError::Filter(DEFAULT_EXPORT_FILTER.to_owned()))?,
    };
    let (export_layer, exporter) = match export_config(settings)? {
        Some(config) => {
            let (layer, exporter) = config.start()?;
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
        .map_err(TelemetryError::Install)?;
    Ok(Telemetry { exporter })
}

/// The span a client command runs in: a child of the trace in `TRACEPARENT` / `TRACESTATE`
/// when the environment carries one (an `exec` agent's program gets them from the host),
/// so calls made by the command continue that trace.
pub fn command_span(command: &'static str) -> tracing::Span {
    let parent =
        env("TRACEPARENT").and_then(|p| TraceParent::parse(&p, env("TRACESTATE").as_deref()));
    a2a_telemetry::span_with_parent(
        parent,
        || tracing::info_span!(target: "a2a::cli", "a2a.cli", otel.name = command),
    )
}

/// Colour codes only on a terminal, and not when `NO_COLOR` is set to anything
/// (<https://no-color.org>).
fn colour_wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
