//! The exporter: finished spans wait in a bounded queue; a thread of its own takes them in
//! batches, encodes each batch to OTLP protobuf and sends it (HTTP or gRPC).

use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::Duration;

#[cfg(feature = "grpc")]
use bytes::{Buf as _, BufMut as _};

use crate::attr::AttrValue;
use crate::config::{Error, ExportConfig, Protocol};
use crate::encode::{Preamble, encode_request};
use crate::layer::OtlpLayer;
use crate::queue::Queue;

/// Sends encoded batches.
#[derive(Debug)]
enum Transport {
    Http {
        client: reqwest::Client,
        url: String,
        headers: http::HeaderMap,
    },
    #[cfg(feature = "grpc")]
    Grpc {
        channel: tonic::transport::Channel,
        metadata: tonic::metadata::MetadataMap,
    },
}

#[cfg(feature = "grpc")]
const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

impl Transport {
    fn new(config: &ExportConfig) -> Result<Self, Error> {
        let url = config.url();
        let bad = |reason: String| Error::Endpoint {
            url: url.clone(),
            reason,
        };
        match config.protocol {
            Protocol::HttpProtobuf => {
                let mut headers = http::HeaderMap::new();
                for (k, v) in &config.headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| Error::Header(k.clone()))?;
                    let value =
                        http::HeaderValue::from_str(v).map_err(|_| Error::Header(k.clone()))?;
                    headers.append(name, value);
                }
                headers.insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/x-protobuf"),
                );
                reqwest::Url::parse(&url).map_err(|e| bad(e.to_string()))?;
                let client = reqwest::Client::builder()
                    .timeout(config.timeout)
                    .tcp_nodelay(true)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                Ok(Self::Http {
                    client,
                    url,
                    headers,
                })
            }
            #[cfg(not(feature = "grpc"))]
            Protocol::Grpc => Err(Error::Protocol(
                "grpc (this build has no gRPC exporter: enable the `grpc` feature)".to_owned(),
            )),
            #[cfg(feature = "grpc")]
            Protocol::Grpc => {
                let mut metadata = tonic::metadata::MetadataMap::new();
                for (k, v) in &config.headers {
                    let name = tonic::metadata::AsciiMetadataKey::from_bytes(
                        k.to_ascii_lowercase().as_bytes(),
                    )
                    .map_err(|_| Error::Header(k.clone()))?;
                    let value = v.parse().map_err(|_| Error::Header(k.clone()))?;
                    metadata.append(name, value);
                }
                let mut endpoint = tonic::transport::Endpoint::from_shared(url.clone())
                    .map_err(|e| bad(e.to_string()))?
                    .timeout(config.timeout)
                    .tcp_nodelay(true);
                if url.starts_with("https:") {
                    let tls = tonic::transport::ClientTlsConfig::new().with_webpki_roots();
                    endpoint = endpoint.tls_config(tls).map_err(|e| bad(e.to_string()))?;
                }
                Ok(Self::Grpc {
                    channel: endpoint.connect_lazy(),
                    metadata,
                })
            }
        }
    }

    async fn send(&self, body: bytes::Bytes) -> Result<(), String> {
        match self {
            Self::Http {
                client,
                url,
                headers,
            } => {
                let res = client
                    .post(url)
                    .headers(headers.clone())
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let status = res.status();
                // Read the answer whole so that the connection can be used again.
                let _ = res.bytes().await;
                if status.is_success() {
                    Ok(())
                } else {
                    Err(format!("the collector answered {status}"))
                }
            }
            #[cfg(feature = "grpc")]
            Self::Grpc { channel, metadata } => {
                let mut grpc = tonic::client::Grpc::new(channel.clone());
                grpc.ready().await.map_err(|e| e.to_string())?;
                let mut req = tonic::Request::new(body);
                *req.metadata_mut() = metadata.clone();
                let path = http::uri::PathAndQuery::from_static(EXPORT_PATH);
                grpc.unary(req, path, RawCodec)
                    .await
                    .map(|_| ())
                    .map_err(|s| format!("{}: {}", s.code(), s.message()))
            }
        }
    }
}

#[cfg(feature = "grpc")]
/// A gRPC codec for a request already encoded, whose response is not needed.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

#[cfg(feature = "grpc")]
#[derive(Debug)]
struct RawEncoder;

#[cfg(feature = "grpc")]
#[derive(Debug)]
struct Discard;

#[cfg(feature = "grpc")]
impl tonic::codec::Codec for RawCodec {
    type Encode = bytes::Bytes;
    type Decode = ();
    type Encoder = RawEncoder;
    type Decoder = Discard;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> Discard {
        Discard
    }
}

#[cfg(feature = "grpc")]
impl tonic::codec::Encoder for RawEncoder {
    type Item = bytes::Bytes;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: bytes::Bytes,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

#[cfg(feature = "grpc")]
impl tonic::codec::Decoder for Discard {
    type Item = ();
    type Error = tonic::Status;

    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<()>, tonic::Status> {
        let n = src.remaining();
        src.advance(n);
        Ok(Some(()))
    }
}

/// The running exporter. [`shutdown`](Self::shutdown) sends what is queued and stops it.
#[derive(Debug)]
pub struct Exporter {
    queue: Arc<Queue>,
    sampler: crate::sampler::Sampler,
    finished: mpsc::Receiver<()>,
    timeout: Duration,
}

impl Exporter {
    pub(crate) fn start(config: &ExportConfig, queue: Arc<Queue>) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Start)?;
        // The gRPC channel must be made inside a runtime. On failure the runtime is shut
        // down in the background: dropping it inside the caller's runtime would panic.
        let transport = {
            let _guard = runtime.enter();
            Transport::new(config)
        };
        let transport = match transport {
            Ok(t) => t,
            Err(e) => {
                runtime.shutdown_background();
                return Err(e);
            }
        };
        let mut resource: Vec<(&str, AttrValue)> = vec![
            (
                "service.name",
                AttrValue::Str(
                    config
                        .service_name
                        .clone()
                        .unwrap_or_else(|| "unknown_service".to_owned()),
                ),
            ),
            ("telemetry.sdk.language", AttrValue::Static("rust")),
            ("telemetry.sdk.name", AttrValue::Static("a2a-telemetry")),
            (
                "telemetry.sdk.version",
                AttrValue::Static(env!("CARGO_PKG_VERSION")),
            ),
        ];
        resource.extend(
            config
                .resource
                .iter()
                .map(|(k, v)| (k.as_str(), AttrValue::Str(v.clone()))),
        );
        let preamble = Preamble::new(&resource, "a2a", env!("CARGO_PKG_VERSION"));
        let (done, finished) = mpsc::channel();
        let delay = config.schedule_delay;
        let q = queue.clone();
        std::thread::Builder::new()
            .name("a2a-otlp-export".to_owned())
            .spawn(move || {
                runtime.block_on(run(&q, &transport, &preamble, delay));
                let _ = done.send(());
            })
            .map_err(Error::Start)?;
        Ok(Self {
            queue,
            sampler: config.sampler,
            finished,
            timeout: config.timeout,
        })
    }

    /// Lets runtimes record their own spans ([`OwnSpan`](crate::OwnSpan)) of the targets
    /// `wants` accepts into this exporter (use the same rule as the layer's filter). Only the
    /// first exporter of a process can: `false` when another already does.
    pub fn record_own_spans(
        &self,
        wants: impl Fn(&'static str) -> bool + Send + Sync + 'static,
    ) -> bool {
        crate::own::INSTALLED
            .set(crate::own::Installed {
                queue: self.queue.clone(),
                sampler: self.sampler,
                wants: Box::new(wants),
            })
            .is_ok()
    }

    /// Spans dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }

    /// Sends the spans still queued and stops the exporter, waiting at most a little longer
    /// than one export's timeout (a slow collector can leave spans unsent; spans closed
    /// after this are not sent).
    pub fn shutdown(self) {
        self.queue.stopping.store(true, Ordering::Release);
        self.queue.wake.notify_one();
        let _ = self
            .finished
            .recv_timeout(self.timeout + Duration::from_secs(1));
    }
}

async fn run(queue: &Queue, transport: &Transport, preamble: &Preamble, delay: Duration) {
    let mut batch = Vec::with_capacity(queue.batch);
    let mut scratch = Vec::new();
    let mut failures = 0u64;
    let mut dropped_told = 0u64;
    loop {
        tokio::select! {
            () = queue.wake.notified() => {}
            () = tokio::time::sleep(delay) => {}
        }
        let stopping = queue.stopping.load(Ordering::Acquire);
        loop {
            queue.take(&mut batch);
            if batch.is_empty() {
                break;
            }
            let full = batch.len() >= queue.batch;
            let body = encode_request(preamble, &batch, &mut scratch);
            batch.clear();
            match transport.send(body).await {
                Ok(()) => {
                    if failures > 0 {
                        tracing::warn!(target: "a2a::telemetry", failures, "trace export works again");
                    }
                    failures = 0;
                }
                Err(error) => {
                    failures += 1;
                    if failures == 1 || failures.is_multiple_of(100) {
                        tracing::warn!(target: "a2a::telemetry", failures, %error, "trace export failed; spans lost");
                    }
                }
            }
            if !full {
                break;
            }
        }
        let dropped = queue.dropped.load(Ordering::Relaxed);
        if dropped > dropped_told {
            tracing::warn!(
                target: "a2a::telemetry",
                dropped,
                "trace export queue full; spans dropped (raise OTEL_BSP_MAX_QUEUE_SIZE)"
            );
            dropped_told = dropped;
        }
        if stopping {
            return;
        }
    }
}

impl ExportConfig {
    /// Starts the exporter (its own thread) and returns the layer that feeds it. Install the
    /// layer with a filter: it records every span it is given.
    pub fn start(mut self) -> Result<(OtlpLayer, Exporter), Error> {
        // A zero delay would make the exporter spin, a zero timeout fail every export.
        self.schedule_delay = self.schedule_delay.max(Duration::from_millis(1));
        if self.timeout.is_zero() {
            self.timeout = ExportConfig::default().timeout;
        }
        let queue = Arc::new(Queue::new(self.max_queue_size, self.max_export_batch_size));
        let exporter = Exporter::start(&self, queue.clone())?;
        Ok((OtlpLayer::new(self.sampler, queue), exporter))
    }
}
