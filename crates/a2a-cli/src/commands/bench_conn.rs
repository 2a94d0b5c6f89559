//! The bench's request path: one persistent HTTP/1 connection per worker, requests encoded
//! and responses decoded with the protocol types, nothing else.
//!
//! The generator shares the machine with the server it measures, so every microsecond it
//! spends is taken from the server. A general-purpose HTTP client (pools, redirects, proxies,
//! URL parsing per call) costs about as much per request as a bare server; this path costs a
//! fraction of it, so the server under test, not the generator, is what saturates.

use a2a_client::ProtocolVersion;
use a2a_client::sse::SseParser;
use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse, method};
use a2a_types::{SendMessageRequest, SendMessageResponse, StreamResponse, v03};
use anyhow::{Context, bail};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderMap, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// Where and how to send.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) uri: Uri,
    pub(crate) version: ProtocolVersion,
    pub(crate) headers: HeaderMap,
    /// HTTP+JSON (`{uri}/message:send`, bare bodies) instead of JSON-RPC at `uri`.
    pub(crate) rest: bool,
}

/// One persistent connection.
pub(crate) struct Conn {
    target: Target,
    sender: SendRequest<Full<Bytes>>,
    next_id: u64,
}

impl Conn {
    pub(crate) async fn open(target: Target) -> anyhow::Result<Self> {
        let host = target.uri.host().context("URL without host")?;
        let port = target.uri.port_u16().unwrap_or(80);
        let tcp = tokio::net::TcpStream::connect((host, port))
            .await
            .with_context(|| format!("connecting to {host}:{port}"))?;
        tcp.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Self {
            target,
            sender,
            next_id: 1,
        })
    }

    fn request(
        &mut self,
        method: &str,
        params: &impl serde::Serialize,
        stream: bool,
    ) -> anyhow::Result<Request<Full<Bytes>>> {
        self.next_id += 1;
        let body = serde_json::to_vec(&JsonRpcRequest::new(self.next_id, method, params))?;
        // Origin-form request target (`/path`), as servers expect from a direct client.
        let path = self
            .target
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        self.post(&path, body, stream)
    }

    /// An HTTP+JSON send: `SendMessageRequest` itself to `{path}/message:send` (or `:stream`).
    fn rest_request(
        &self,
        req: &SendMessageRequest,
        stream: bool,
    ) -> anyhow::Result<Request<Full<Bytes>>> {
        let base = self.target.uri.path().trim_end_matches('/');
        let verb = if stream { "stream" } else { "send" };
        let path = format!("{base}/message:{verb}");
        self.post(&path, serde_json::to_vec(req)?, stream)
    }

    fn post(
        &self,
        path: &str,
        body: Vec<u8>,
        stream: bool,
    ) -> anyhow::Result<Request<Full<Bytes>>> {
        let t = &self.target;
        let mut req = Request::post(path)
            .header(
                HOST,
                t.uri.authority().map(|a| a.as_str()).unwrap_or("localhost"),
            )
            .header(CONTENT_TYPE, "application/json")
            .header(
                ACCEPT,
                if stream {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            )
            .header(a2a_types::VERSION_HEADER, t.version.as_str())
            .body(Full::new(Bytes::from(body)))?;
        req.headers_mut().extend(t.headers.clone());
        Ok(req)
    }

    async fn exchange(
        &mut self,
        req: Request<Full<Bytes>>,
    ) -> anyhow::Result<hyper::Response<hyper::body::Incoming>> {
        self.sender.ready().await?;
        Ok(self.sender.send_request(req).await?)
    }

    /// A blocking send; fails on transport errors, HTTP errors and JSON-RPC errors.
    pub(crate) async fn send(&mut self, req: &SendMessageRequest) -> anyhow::Result<()> {
        if self.target.rest {
            let http_req = self.rest_request(req, false)?;
            let resp = self.exchange(http_req).await?;
            let status = resp.status();
            let body = resp.into_body().collect().await?.to_bytes();
            if !status.is_success() {
                bail!("HTTP {status}: {}", String::from_utf8_lossy(&body));
            }
            serde_json::from_slice::<SendMessageResponse>(&body)?;
            return Ok(());
        }
        let http_req = match self.target.version {
            ProtocolVersion::V03 => self.request(
                method::v03::MESSAGE_SEND,
                &v03::MessageSendParams::from(req),
                false,
            )?,
            _ => self.request(method::SEND_MESSAGE, req, false)?,
        };
        let resp = self.exchange(http_req).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            bail!("HTTP {status}");
        }
        match self.target.version {
            ProtocolVersion::V03 => check(serde_json::from_slice::<
                JsonRpcResponse<v03::SendMessageResult>,
            >(&body)?),
            _ => check(serde_json::from_slice::<
                JsonRpcResponse<SendMessageResponse>,
            >(&body)?),
        }
    }

    /// A streamed send read to its end; returns the number of events.
    pub(crate) async fn stream(&mut self, req: &SendMessageRequest) -> anyhow::Result<u64> {
        let http_req = match self.target.version {
            _ if self.target.rest => self.rest_request(req, true)?,
            ProtocolVersion::V03 => self.request(
                method::v03::MESSAGE_STREAM,
                &v03::MessageSendParams::from(req),
                true,
            )?,
            _ => self.request(method::SEND_STREAMING_MESSAGE, req, true)?,
        };
        let resp = self.exchange(http_req).await?;
        let status = resp.status();
        if !status.is_success() {
            bail!("HTTP {status}");
        }
        let mut body = resp.into_body();
        let mut parser = SseParser::new();
        let mut events = 0;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            for ev in parser.feed(&data) {
                match self.target.version {
                    _ if self.target.rest => {
                        if ev.data.contains("\"error\"") {
                            bail!("stream error: {}", ev.data);
                        }
                        serde_json::from_str::<StreamResponse>(&ev.data)?;
                    }
                    ProtocolVersion::V03 => check(serde_json::from_str::<
                        JsonRpcResponse<v03::StreamEvent>,
                    >(&ev.data)?)?,
                    _ => check(serde_json::from_str::<JsonRpcResponse<StreamResponse>>(
                        &ev.data,
                    )?)?,
                }
                events += 1;
            }
        }
        if events == 0 {
            bail!("empty stream");
        }
        Ok(events)
    }
}

fn check<R>(r: JsonRpcResponse<R>) -> anyhow::Result<()> {
    match (r.error, r.result) {
        (Some(e), _) => bail!("JSON-RPC error {}: {}", e.code, e.message),
        (None, Some(_)) => Ok(()),
        (None, None) => bail!("response without result"),
    }
}
