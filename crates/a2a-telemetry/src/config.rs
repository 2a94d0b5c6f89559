//! Where and how spans are exported, from the standard `OTEL_*` environment variables
//! (and what a command line overrides).

use std::time::Duration;

use crate::sampler::Sampler;

/// What can go wrong setting up export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An OTLP protocol other than `http/protobuf` and `grpc`.
    #[error("OTLP protocol {0:?} is not supported here (use \"http/protobuf\" or \"grpc\")")]
    Protocol(String),
    /// An `OTEL_TRACES_SAMPLER` this crate does not know.
    #[error(
        "OTEL_TRACES_SAMPLER={0:?} is not supported (use always_on, always_off, traceidratio \
         or their parentbased_ forms)"
    )]
    Sampler(String),
    /// The endpoint is not a usable URL.
    #[error("invalid OTLP endpoint {url:?}: {reason}")]
    Endpoint {
        /// The endpoint as given.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A header in `OTEL_EXPORTER_OTLP_HEADERS` that is not `name=value` or not valid HTTP.
    #[error("invalid OTLP header {0:?}")]
    Header(String),
    /// The exporter's thread or runtime could not be started.
    #[error("cannot start the OTLP exporter: {0}")]
    Start(#[source] std::io::Error),
}

/// The OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Protobuf over HTTP (`http/protobuf`, port 4318).
    #[default]
    HttpProtobuf,
    /// gRPC (port 4317).
    Grpc,
}

/// The collector's address.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    /// A base URL the signal's path (`/v1/traces`) goes under, as `OTEL_EXPORTER_OTLP_ENDPOINT`.
    Base(String),
    /// The full URL, as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    Signal(String),
}

/// How spans are exported. Read it with [`from_env`](Self::from_env), adjust, and
/// [`start`](Self::start) the exporter.
#[derive(Debug, Clone)]
pub struct ExportConfig {
    endpoint: Option<Endpoint>,
    /// The wire protocol.
    pub protocol: Protocol,
    /// Headers sent with every export (authentication for a hosted collector).
    pub headers: Vec<(String, String)>,
    /// How long one export may take.
    pub timeout: Duration,
    /// `service.name`; without it `unknown_service`.
    pub service_name: Option<String>,
    /// Other resource attributes.
    pub resource: Vec<(String, String)>,
    /// Which traces are recorded.
    pub sampler: Sampler,
    /// How long finished spans wait before they are sent (unless a batch fills first).
    pub schedule_delay: Duration,
    /// Finished spans kept waiting at most; beyond it spans are dropped (and counted).
    pub max_queue_size: usize,
    /// Spans sent in one export at most.
    pub max_export_batch_size: usize,
}

impl Default for ExportConfig {
    /// The OpenTelemetry defaults.
    fn default() -> Self {
        Self {
            endpoint: None,
            protocol: Protocol::HttpProtobuf,
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            service_name: None,
            resource: Vec::new(),
            sampler: Sampler::default(),
            schedule_delay: Duration::from_secs(5),
            max_queue_size: 2048,
            max_export_batch_size: 512,
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn env_ms(name: &str) -> Option<Duration> {
    env(name)?.trim().parse().ok().map(Duration::from_millis)
}

fn env_usize(name: &str) -> Option<usize> {
    env(name)?.trim().parse().ok().filter(|n| *n > 0)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `key=value,key2=value2` (W3C baggage-like, values percent-encoded).
fn pairs(list: &str) -> Result<Vec<(String, String)>, String> {
    list.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').ok_or_else(|| p.to_owned())?;
            let k = k.trim();
            if k.is_empty() {
                return Err(p.to_owned());
            }
            Ok((k.to_owned(), percent_decode(v.trim())))
        })
        .collect()
}

impl ExportConfig {
    /// Whether the environment asks for trace export: an OTLP endpoint is set, and neither
    /// `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` says otherwise.
    pub fn wanted_by_env() -> bool {
        !Self::disabled_by_env()
            && (env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
                || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some())
    }

    /// Whether `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turns export off.
    pub fn disabled_by_env() -> bool {
        env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
    }

    /// Reads `OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,PROTOCOL,HEADERS,TIMEOUT}`,
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]` and
    /// `OTEL_BSP_{SCHEDULE_DELAY,MAX_QUEUE_SIZE,MAX_EXPORT_BATCH_SIZE}`.
    pub fn from_env() -> Result<Self, Error> {
        let mut c = Self::default();
        c.endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .map(Endpoint::Signal)
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(Endpoint::Base));
        let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(p) = protocol {
            c.protocol = match p.trim() {
                "http/protobuf" => Protocol::HttpProtobuf,
                "grpc" => Protocol::Grpc,
                other => return Err(Error::Protocol(other.to_owned())),
            };
        }
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(list) = env(name) {
                for (k, v) in pairs(&list).map_err(Error::Header)? {
                    c.headers.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
                    c.headers.push((k, v));
                }
            }
        }
        if let Some(t) = env_ms("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or_else(|| env_ms("OTEL_EXPORTER_OTLP_TIMEOUT"))
        {
            c.timeout = t;
        }
        if let Some(list) = env("OTEL_RESOURCE_ATTRIBUTES") {
            // Malformed entries are skipped, as the specification asks.
            for p in list.split(',') {
                if let Ok(mut kv) = pairs(p) {
                    c.resource.append(&mut kv);
                }
            }
        }
        if let Some(pos) = c.resource.iter().position(|(k, _)| k == "service.name") {
            c.service_name = Some(c.resource.remove(pos).1);
        }
        if let Some(name) = env("OTEL_SERVICE_NAME") {
            c.service_name = Some(name.trim().to_owned());
        }
        if let Some(name) = env("OTEL_TRACES_SAMPLER") {
            let arg = env("OTEL_TRACES_SAMPLER_ARG");
            c.sampler = Sampler::parse(&name, arg.as_deref()).ok_or(Error::Sampler(name))?;
        }
        if let Some(d) = env_ms("OTEL_BSP_SCHEDULE_DELAY") {
            c.schedule_delay = d;
        }
        if let Some(n) = env_usize("OTEL_BSP_MAX_QUEUE_SIZE") {
            c.max_queue_size = n;
        }
        if let Some(n) = env_usize("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") {
            c.max_export_batch_size = n;
        }
        c.max_export_batch_size = c.max_export_batch_size.min(c.max_queue_size);
        Ok(c)
    }

    /// Sends to this collector: a base URL as `OTEL_EXPORTER_OTLP_ENDPOINT` (for
    /// `http/protobuf`, `/v1/traces` is added unless it is there).
    #[must_use]
    pub fn with_endpoint(mut self, base: impl Into<String>) -> Self {
        self.endpoint = Some(Endpoint::Base(base.into()));
        self
    }

    /// The URL spans are sent to.
    pub fn url(&self) -> String {
        match (self.protocol, &self.endpoint) {
            (Protocol::HttpProtobuf, Some(Endpoint::Base(b))) => {
                let b = b.trim().trim_end_matches('/');
                if b.ends_with("/v1/traces") {
                    b.to_owned()
                } else {
                    format!("{b}/v1/traces")
                }
            }
            (_, Some(Endpoint::Base(u) | Endpoint::Signal(u))) => u.trim().to_owned(),
            (Protocol::HttpProtobuf, None) => "http://localhost:4318/v1/traces".to_owned(),
            (Protocol::Grpc, None) => "http://localhost:4317".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_lists() {
        let c = ExportConfig::default().with_endpoint("http://collector:4318/");
        assert_eq!(c.url(), "http://collector:4318/v1/traces");
        let c = ExportConfig::default().with_endpoint("http://collector:4318/v1/traces");
        assert_eq!(c.url(), "http://collector:4318/v1/traces");
        let mut c = ExportConfig::default().with_endpoint("http://collector:4317");
        c.protocol = Protocol::Grpc;
        assert_eq!(c.url(), "http://collector:4317");
        assert_eq!(
            pairs("api-key=a%20b, x = y").unwrap(),
            vec![("api-key".into(), "a b".into()), ("x".into(), "y".into())]
        );
        assert!(pairs("novalue").is_err());
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%é%41"), "%éA");
    }

    #[test]
    fn a_bad_setting_is_an_error_even_inside_a_runtime() {
        // Started from async code (as the CLI does): a failed start must not panic.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut c = ExportConfig::default().with_endpoint("http://127.0.0.1:4318");
            c.headers = vec![("x-tenant".into(), "a\nb".into())];
            assert!(matches!(c.start(), Err(Error::Header(_))));
            let c = ExportConfig::default().with_endpoint("not a url");
            assert!(matches!(c.start(), Err(Error::Endpoint { .. })));
        });
    }
}
