//! The gRPC transport's connection: one HTTP/2 connection (h2), made on first use and again
//! after it ends, under tonic's generated client.
//!
//! Why not tonic's `Channel`: it sends a request through hyper, which sends a body only once
//! the stream has flow-control capacity, and a new stream gets its capacity from the
//! connection's task after that task has written the stream's HEADERS. Every call then left
//! in two TCP segments (HEADERS, then DATA, written in two turns of the connection's task),
//! and the server's kernel answers two small segments with an ACK of its own before the
//! response (delayed ACKs piggyback only on a single segment). Here a call's whole message is
//! handed to h2 with its HEADERS, which h2 may buffer before capacity is granted
//! (`SendStream::send_data`), so both frames leave in the connection's next write. A2A's
//! gRPC calls are unary or server-streaming, so a request's body is always one finite
//! message.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use http::uri::{Authority, Scheme};
use http::{Request, Response, Uri};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tokio::net::TcpStream;
use tonic::Status;

/// HTTP/2 settings: hyper's client defaults, which tonic's channel used. The windows a
/// response streams into before the client grants more; the streams opened before the
/// server's SETTINGS say how many it takes (h2 alone would open any number, and a burst
/// beyond the server's limit would be refused); the largest header block accepted; how much
/// a stream may have buffered to send.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;
const INITIAL_MAX_SEND_STREAMS: usize = 100;
const MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
const MAX_SEND_BUFFER_SIZE: usize = 1024 * 1024;

type SendRequest = h2::client::SendRequest<Bytes>;

/// A made connection: its request handle, whether its task has ended, and the gate its
/// task polls through.
#[derive(Clone)]
struct Connected {
    sender: SendRequest,
    ended: Arc<AtomicBool>,
    /// Held by the connection's task while it polls, and by a call while it hands over its
    /// HEADERS and its message: otherwise the task, woken by the HEADERS on another worker
    /// thread, could write them before the message is there. Never held across an await;
    /// the order is this gate, then h2's own lock, on both sides.
    gate: Arc<Mutex<()>>,
}

type Connecting = Shared<BoxFuture<'static, Result<Connected, Arc<ConnectError>>>>;

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    // The words `dns error` are what `describe_http_error` recognizes, as from hyper.
    #[error("dns error: {0}")]
    Dns(std::io::Error),
    #[error("the server did not agree to HTTP/2 (ALPN h2) over TLS")]
    NoHttp2,
    #[error("HTTP/2 handshake: {0}")]
    Handshake(#[from] h2::Error),
    #[error("connecting timed out")]
    TimedOut,
}

/// Where to connect, and how (over TLS when `tls` is set).
struct Target {
    authority: Authority,
    host: String,
    port: u16,
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls_pki_types::ServerName<'static>,
    )>,
    connect_timeout: Option<Duration>,
}

struct Inner {
    /// Shared with connection attempts (not the whole `Inner`: an attempt is kept in
    /// `current`, and must not keep it alive once every channel is dropped).
    target: Arc<Target>,
    /// The current connection, or the attempt to make it, shared by the calls that wait.
    current: Mutex<Option<Connecting>>,
}

impl Target {
    fn scheme(&self) -> Scheme {
        if self.tls.is_some() {
            Scheme::HTTPS
        } else {
            Scheme::HTTP
        }
    }
}

/// A tonic transport over one lazily made HTTP/2 connection (see the module's doc). The
/// requests it is given carry no header HTTP/2 forbids (h2 refuses to send `Connection`,
/// `Upgrade`, ...): `GrpcV1` leaves them out of the caller's headers once.
#[derive(Clone)]
pub(crate) struct H2Channel {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for H2Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Channel")
            .field("authority", &self.inner.target.authority)
            .finish_non_exhaustive()
    }
}

impl H2Channel {
    /// A channel to `uri` (`http://` or `https://`, with a host), over TLS for `https://`
    /// with `tls` (its ALPN offering `h2`). Connects on first use.
    pub(crate) fn new(
        uri: &Uri,
        tls: Option<Arc<rustls::ClientConfig>>,
        connect_timeout: Option<Duration>,
    ) -> Result<Self, String> {
        let https = uri.scheme() == Some(&Scheme::HTTPS);
        let authority = uri.authority().ok_or("no host")?.clone();
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        // `[::1]` in a URL is the address `::1`.
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let tls = match (https, tls) {
            (true, Some(config)) => {
                let name = rustls_pki_types::ServerName::try_from(host.clone())
                    .map_err(|e| format!("not a TLS server name: {e}"))?;
                Some((tokio_rustls::TlsConnector::from(config), name))
            }
            (true, None) => return Err("an https address needs a TLS configuration".into()),
            (false, _) => None,
        };
        let target = Target {
            authority,
            host,
            port,
            tls,
            connect_timeout,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                target: Arc::new(target),
                current: Mutex::new(None),
            }),
        })
    }

    /// The current connection; a new one if there is none or it ended.
    async fn connection(&self) -> Result<Connected, Status> {
        let attempt = {
            let mut current = self.inner.current.lock().unwrap_or_else(|e| e.into_inner());
            let usable = current.as_ref().is_some_and(|c| match c.peek() {
                Some(Ok(c)) => !c.ended.load(Ordering::Acquire),
                // A failed attempt is not retried by the calls that shared it, only by later ones.
                Some(Err(_)) => false,
                None => true,
            });
            if !usable {
                let target = self.inner.target.clone();
                let connecting: BoxFuture<'static, _> =
                    Box::pin(async move { connect(&target).await.map_err(Arc::new) });
                *current = Some(connecting.shared());
            }
            current.clone().unwrap_or_else(|| unreachable!("set above"))
        };
        attempt.await.map_err(|e| {
            let mut status = Status::unavailable(e.to_string());
            status.set_source(e);
            status
        })
    }

    /// `connected` once it has room for a stream; an error marks it ended.
    async fn ready(connected: Connected) -> Result<(SendRequest, Arc<Mutex<()>>), h2::Error> {
        match connected.sender.ready().await {
            Ok(sender) => Ok((sender, connected.gate)),
            Err(e) => {
                connected.ended.store(true, Ordering::Release);
                Err(e)
            }
        }
    }

    async fn call(self, req: Request<tonic::body::Body>) -> Result<Response<RecvBody>, Status> {
        let (parts, body) = req.into_parts();
        let message = body.collect().await?.to_bytes();
        self.send(parts, message).await
    }

    /// Sends a request of `parts` (its URI a path: the scheme and authority are the
    /// channel's) and the whole `message`, which leave together; the response once its
    /// headers are in.
    pub(crate) async fn send(
        &self,
        mut parts: http::request::Parts,
        message: Bytes,
    ) -> Result<Response<RecvBody>, Status> {
        let mut uri = std::mem::take(&mut parts.uri).into_parts();
        uri.scheme = Some(self.inner.target.scheme());
        uri.authority = Some(self.inner.target.authority.clone());
        parts.uri = Uri::from_parts(uri).map_err(|e| Status::internal(e.to_string()))?;
        let failed = |e| transport(e, tonic::Code::Unknown);
        let (mut sender, gate) = match Self::ready(self.connection().await?).await {
            Ok(ready) => ready,
            // The connection ended before this call could use it (say the server closed it
            // when idle, or sent GOAWAY): nothing was sent, so one new connection is tried.
            Err(_) => Self::ready(self.connection().await?)
                .await
                .map_err(failed)?,
        };
        let response = {
            let _gate = gate.lock().unwrap_or_else(|e| e.into_inner());
            let (response, mut stream) = sender
                .send_request(Request::from_parts(parts, ()), message.is_empty())
                .map_err(failed)?;
            if !message.is_empty() {
                // Buffered by h2 until the stream has capacity: it leaves with the HEADERS.
                stream.send_data(message, true).map_err(failed)?;
            }
            response
        };
        let response = response.await.map_err(failed)?;
        Ok(response.map(|recv| RecvBody {
            recv,
            state: Read::Data,
        }))
    }
}

impl tower_service::Service<Request<tonic::body::Body>> for H2Channel {
    type Response = Response<RecvBody>;
    type Error = Status;
    type Future = BoxFuture<'static, Result<Response<RecvBody>, Status>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Status>> {
        // Always ready: h2 queues the streams beyond what the server takes at once, and
        // opens them as earlier ones end.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<tonic::body::Body>) -> Self::Future {
        Box::pin(self.clone().call(req))
    }
}

/// Connects to `target` and starts the connection's task.
async fn connect(target: &Target) -> Result<Connected, ConnectError> {
    let handshake = async {
        let addresses: Vec<_> = tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(ConnectError::Dns)?
            .collect();
        // Each address in turn (tokio's), after a lookup of our own that names its failure.
        let tcp = TcpStream::connect(&addresses[..]).await?;
        tcp.set_nodelay(true)?;
        let mut builder = h2::client::Builder::new();
        builder
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_max_send_streams(INITIAL_MAX_SEND_STREAMS)
            .max_header_list_size(MAX_HEADER_LIST_SIZE)
            .max_send_buffer_size(MAX_SEND_BUFFER_SIZE)
            .enable_push(false);
        match &target.tls {
            Some((tls, name)) => {
                let io = tls.connect(name.clone(), tcp).await?;
                if io.get_ref().1.alpn_protocol() != Some(b"h2") {
                    return Err(ConnectError::NoHttp2);
                }
                start(&builder, io).await
            }
            None => start(&builder, tcp).await,
        }
    };
    match target.connect_timeout {
        Some(t) => tokio::time::timeout(t, handshake)
            .await
            .unwrap_or(Err(ConnectError::TimedOut)),
        None => handshake.await,
    }
}

/// Speaks HTTP/2 on `io` and runs the connection's task, which marks the connection ended
/// when it stops.
async fn start<T>(builder: &h2::client::Builder, io: T) -> Result<Connected, ConnectError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, mut conn) = builder.handshake(io).await?;
    let ended = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(Mutex::new(()));
    let (flag, task_gate) = (ended.clone(), gate.clone());
    tokio::spawn(async move {
        let run = std::future::poll_fn(|cx| {
            let _gate = task_gate.lock().unwrap_or_else(|e| e.into_inner());
            Pin::new(&mut conn).poll(cx)
        });
        if let Err(e) = run.await {
            tracing::debug!(error = %e, "gRPC connection ended");
        }
        // The connection (and its socket) closes before the flag says so.
        drop(conn);
        flag.store(true, Ordering::Release);
    });
    Ok(Connected {
        sender,
        ended,
        gate,
    })
}

/// An h2 error as the status tonic's channel gave it: the connection failing or going away
/// is `UNAVAILABLE` (with the io error as its source); a reset says why when it can (a
/// cancel, a refusal, "calm down") and is `reset` otherwise (`UNKNOWN` for a call's answer,
/// `INTERNAL` for a stream's body, which `client_error` reads as a broken stream); an error
/// h2 raised itself (say a header it cannot send) is `INTERNAL`.
fn transport(e: h2::Error, reset: tonic::Code) -> Status {
    let code = if e.is_io() || e.is_go_away() {
        tonic::Code::Unavailable
    } else if e.is_reset() {
        match e.reason() {
            Some(h2::Reason::CANCEL) => tonic::Code::Cancelled,
            Some(h2::Reason::REFUSED_STREAM) => tonic::Code::Unavailable,
            Some(h2::Reason::ENHANCE_YOUR_CALM) => tonic::Code::ResourceExhausted,
            _ => reset,
        }
    } else {
        tonic::Code::Internal
    };
    let mut status = Status::new(code, format!("HTTP/2: {e}"));
    let source: Arc<dyn StdError + Send + Sync> = match e.get_io() {
        // The io error itself, so that what the connection met can be told (refused, reset).
        Some(io) => Arc::new(std::io::Error::new(io.kind(), e.to_string())),
        None => Arc::new(e),
    };
    status.set_source(source);
    status
}

/// Which part of a response the body reads next.
enum Read {
    Data,
    Trailers,
    Done,
}

/// A response's body: its DATA frames (their flow-control capacity given back as they are
/// read), then its trailers.
pub(crate) struct RecvBody {
    recv: h2::RecvStream,
    state: Read,
}

impl Body for RecvBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let me = &mut *self;
        loop {
            match me.state {
                Read::Data => match ready!(me.recv.poll_data(cx)) {
                    Some(Ok(data)) => {
                        // Gives the window back at once: tonic's decoder holds what it buffers.
                        let _ = me.recv.flow_control().release_capacity(data.len());
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                    Some(Err(e)) => {
                        me.state = Read::Done;
                        return Poll::Ready(Some(Err(transport(e, tonic::Code::Internal))));
                    }
                    None => me.state = Read::Trailers,
                },
                Read::Trailers => {
                    let trailers = ready!(me.recv.poll_trailers(cx));
                    me.state = Read::Done;
                    return Poll::Ready(match trailers {
                        Ok(Some(trailers)) => Some(Ok(Frame::trailers(trailers))),
                        Ok(None) => None,
                        Err(e) => Some(Err(transport(e, tonic::Code::Internal))),
                    });
                }
                Read::Done => return Poll::Ready(None),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, Read::Done)
    }
}
