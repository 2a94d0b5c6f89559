//! The accept loop: every connection gets deadlines on each phase, the number of open
//! connections is bounded, and running out of file descriptors slows accepting down instead
//! of stalling or spinning.
//!
//! - A connection must send its first byte within [`ConnectionLimits::header_read_timeout`],
//!   and each HTTP/1.1 request head (the first, and each next one on a kept-alive
//!   connection) must arrive whole within it: idle and half-sent heads are closed. The
//!   first 24 bytes (enough to tell HTTP/1.1 from the HTTP/2 connection preface, which has
//!   no deadline of its own in version detection) must also arrive within it, over TLS too.
//! - A request body must arrive within [`ConnectionLimits::body_read_timeout`] (a trickle
//!   is cut with 408).
//! - HTTP/2 connections are pinged every [`ConnectionLimits::http2_keep_alive_interval`];
//!   a peer that does not answer is dropped. Long SSE and gRPC streams are not cut by any of
//!   these.
//! - A write that cannot make progress for [`ConnectionLimits::write_timeout`] (the peer
//!   stopped reading: its receive window and our send buffer are full) closes the
//!   connection, so a stalled SSE reader does not hold the stream and its memory. The clock
//!   runs only while a write is blocked: a quiet stream is never cut by it.
//! - Beyond [`ConnectionLimits::max_connections`], a new connection is answered at once with
//!   `503 Service Unavailable` and `Retry-After`, and closed; beyond
//!   [`ConnectionLimits::max_in_flight`] requests being handled, a new request is answered
//!   the same way (its connection stays open).
//! - Each request carries its connection's [`PeerAddr`] (per-caller bounds key on it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::limits::PeerAddr;

/// Deadlines and bounds of the connections a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Time to send the first byte, and each whole HTTP/1.1 request head (default 10 s).
    pub header_read_timeout: Duration,
    /// Time to send a request body (default 30 s).
    pub body_read_timeout: Duration,
    /// Time a blocked write may wait for the peer to read (default 30 s).
    pub write_timeout: Duration,
    /// HTTP/2 keep-alive ping interval; an unanswered ping closes the connection after as
    /// long again (default 20 s).
    pub http2_keep_alive_interval: Duration,
    /// Most connections open at once (default: the open-file limit less a reserve of 64 for
    /// the store, the log and the like; see [`ConnectionLimits::for_open_file_limit`]).
    pub max_connections: usize,
    /// Largest request head (request line and headers; HTTP/2 header list) accepted: beyond
    /// it HTTP/1.1 answers `431` and HTTP/2 refuses the stream (default 64 KiB, at least 8 KiB).
    pub max_header_bytes: usize,
    /// Most requests handled at once, over all connections (`None`: no bound). A request
    /// counts until its response starts: a blocking `SendMessage` for the whole task, a
    /// stream until its first event.
    pub max_in_flight: Option<usize>,
}

/// Descriptors kept for everything but connections.
const FD_RESERVE: usize = 64;

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            http2_keep_alive_interval: Duration::from_secs(20),
            max_connections: Self::for_open_file_limit(open_file_limit()),
            max_in_flight: None,
            max_header_bytes: 64 * 1024,
        }
    }
}

impl ConnectionLimits {
    /// The connection bound for a process that may open `limit` files: `limit` less a
    /// reserve of 64, at least 16.
    pub fn for_open_file_limit(limit: u64) -> usize {
        usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .saturating_sub(FD_RESERVE)
            .max(16)
    }
}

/// The process's soft open-file limit (1024 when it cannot be read).
pub fn open_file_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map(|(soft, _)| soft)
        .unwrap_or(1024)
}

/// Raises the soft open-file limit to the hard limit; returns `(before, after)`, or the
/// error that stopped it.
pub fn raise_open_file_limit() -> std::io::Result<(u64, u64)> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(std::io::Error::from)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).map_err(std::io::Error::from)?;
    }
    Ok((soft, hard.max(soft)))
}

/// Counts and rate-limits a repeated warning.
#[derive(Debug, Default)]
struct Throttled(AtomicU64);

impl Throttled {
    /// Whether to log the `n`-th occurrence: the first, then every 1000th.
    fn should_log(&self) -> (bool, u64) {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        (n == 1 || n.is_multiple_of(1000), n)
    }
}

/// TLS for a server: its certificate chain and private key, from PEM files.
#[derive(Clone)]
pub struct Tls(tokio_rustls::TlsAcceptor);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// Reads the certificate chain from `cert` and the private key (PKCS#8, PKCS#1 or SEC1)
    /// from `key`, both PEM; offers HTTP/2 and HTTP/1.1 by ALPN.
    pub fn from_pem_files(
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> Result<Self, std::io::Error> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let bad = |what: &std::path::Path, e: &dyn std::fmt::Display| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", what.display()),
            )
        };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| bad(cert, &e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(cert, &e))?;
        if chain.is_empty() {
            return Err(bad(cert, &"no certificate in the file"));
        }
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(cert, &e))?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| bad(key, &e))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
    }
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves; then stops
/// accepting and lets open connections finish for up to `drain`. With `tls`, every
/// connection is TLS (its handshake within the head timeout).
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    drain: Duration,
    limits: ConnectionLimits,
    tls: Option<Tls>,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.http2_keep_alive_interval))
        .keep_alive_timeout(limits.http2_keep_alive_interval)
        .max_header_list_size(u32::try_from(limits.max_header_bytes.max(8192)).unwrap_or(u32::MAX));
    let builder = Arc::new(builder);
    let app = match limits.max_in_flight {
        Some(n) => app.layer(axum::middleware::from_fn_with_state(
            Arc::new(Semaphore::new(n)),
            limit_in_flight,
        )),
        None => app,
    };
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let graceful = GracefulShutdown::new();
    let refused = Throttled::default();
    let accept_failures = Throttled::default();
    let mut backoff = Duration::from_millis(10);
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(conn) => {
                    backoff = Duration::from_millis(10);
                    conn
                }
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of descriptors (EMFILE / ENFILE) or memory: wait for connections
                    // to close rather than spin; the pending ones stay in the backlog.
                    crate::metrics::global().connection_refused("accept_failed");
                    let (log, n) = accept_failures.should_log();
                    if log {
                        tracing::warn!(error = %e, failures = n, retry_in = ?backoff,
                            "cannot accept connections; backing off");
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            let (log, n) = refused.should_log();
            if log {
                tracing::warn!(
                    limit = limits.max_connections,
                    refused = n,
                    "connection limit reached; answering 503"
                );
            }
            crate::metrics::global().connection_refused("max_connections");
            // Refusals are answered a few at a time, each within a short budget; beyond
            // that a connection is closed unanswered (the limit protects descriptors).
            if let Ok(slot) = refusing.clone().try_acquire_owned() {
                let (tls, builder) = (tls.clone(), builder.clone());
                let budget = limits.header_read_timeout.min(REFUSAL_BUDGET);
                tokio::spawn(async move {
                    let _slot = slot;
                    let _ = tokio::time::timeout(budget, refuse(tcp, tls, &builder)).await;
                });
            }
            continue;
        };
        let secure = tls.is_some();
        let service = TowerToHyperService::new(app.clone().map_request(
            move |mut req: axum::http::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(PeerAddr(peer));
                if secure {
                    // Cards name the scheme clients used; over TLS it is https, whatever a
                    // client claims.
                    req.headers_mut().insert(
                        "x-forwarded-proto",
                        axum::http::HeaderValue::from_static("https"),
                    );
                }
                req
            },
        ));
        let tls = tls.clone();
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let first_byte = limits.header_read_timeout;
        let write_timeout = limits.write_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            // Version detection (HTTP/1.1 or HTTP/2) waits for bytes with no deadline of its
            // own: a connection that sends nothing is closed here.
            let mut first = [0u8; 1];
            match tokio::time::timeout(first_byte, tcp.peek(&mut first)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => return,
                Err(_) => {
                    crate::metrics::global().connection_refused("idle");
                    return;
                }
            }
            let started = tokio::time::Instant::now();
            let result = match tls {
                None => {
                    let io = Deadlines::new(tcp)
                        .write_within(write_timeout)
                        .preface_by(started + first_byte);
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
                    watcher.watch(conn.into_owned()).await
                }
                Some(tls) => {
                    // Writes are timed under TLS (its records are what waits); the preface is
                    // read above it.
                    let io = Deadlines::new(tcp).write_within(write_timeout);
                    let handshake = tokio::time::timeout(first_byte, tls.0.accept(io)).await;
                    let Ok(Ok(stream)) = handshake else {
                        crate::metrics::global().connection_refused("tls_handshake");
                        return;
                    };
                    // The application bytes get their own clock: the handshake took some.
                    let stream =
                        Deadlines::new(stream).preface_by(tokio::time::Instant::now() + first_byte);
                    let conn =
                        builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    watcher.watch(conn.into_owned()).await
                }
            };
            if let Err(e) = result {
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(drain) => {
            tracing::warn!("connections still open after the drain period; stopping anyway");
        }
    }
    Ok(())
}

/// Answers `503` with `Retry-After` when `in_flight` has no permit left.
async fn limit_in_flight(
    axum::extract::State(in_flight): axum::extract::State<Arc<Semaphore>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let Ok(_permit) = in_flight.try_acquire() else {
        crate::metrics::global().connection_refused("max_in_flight");
        let body = r#"{"error":{"code":503,"status":"UNAVAILABLE","message":"too many requests in progress; retry shortly"}}"#;
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [
                (axum::http::header::RETRY_AFTER, "1"),
                (axum::http::header::CONTENT_TYPE, "application/json"),
            ],
            body,
        )
            .into_response();
    };
    next.run(request).await
}

/// Errors of one connection that the accept loop just skips.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Connections over the limit answered at once; more are closed unanswered.
const REFUSALS_AT_ONCE: usize = 64;

/// Longest a refusal may take (TLS handshake, request head, answer).
const REFUSAL_BUDGET: Duration = Duration::from_secs(2);

/// Answers every request of a connection over the limit in the protocol its client speaks
/// (HTTP/1.1 or HTTP/2, over TLS when the server is), then closes it: `503` with
/// `Retry-After` (gRPC requests: status `UNAVAILABLE`), so a client sees a refusal it
/// understands, not a stray HTTP/1.1 answer written before its TLS handshake or preface.
async fn refuse(tcp: TcpStream, tls: Option<Tls>, builder: &auto::Builder<TokioExecutor>) {
    let service = hyper::service::service_fn(|req: axum::http::Request<hyper::body::Incoming>| {
        let grpc = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/grpc"));
        async move { Ok::<_, std::convert::Infallible>(refusal(grpc)) }
    });
    match tls {
        None => {
            let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
        }
        Some(tls) => {
            if let Ok(stream) = tls.0.accept(tcp).await {
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        }
    }
}

/// The answer to a request on a connection over the limit.
fn refusal(grpc: bool) -> axum::http::Response<axum::body::Body> {
    const WHY: &str = "too many connections; retry shortly";
    let mut resp = if grpc {
        // A gRPC "trailers-only" answer: the status in the headers.
        let mut resp = axum::http::Response::new(axum::body::Body::empty());
        let headers = resp.headers_mut();
        headers.insert(
            "content-type",
            axum::http::HeaderValue::from_static("application/grpc"),
        );
        headers.insert("grpc-status", axum::http::HeaderValue::from_static("14"));
        headers.insert(
            "grpc-message",
            axum::http::HeaderValue::from_static("too%20many%20connections;%20retry%20shortly"),
        );
        resp
    } else {
        let body =
            format!(r#"{{"error":{{"code":503,"status":"UNAVAILABLE","message":"{WHY}"}}}}"#);
        let mut resp = axum::http::Response::new(axum::body::Body::from(body));
        *resp.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
        resp.headers_mut().insert(
            "content-type",
            axum::http::HeaderValue::from_static("application/json"),
        );
        resp
    };
    resp.headers_mut()
        .insert("retry-after", axum::http::HeaderValue::from_static("1"));
    // HTTP/1.1: close after this answer (HTTP/2 connections end with the refusal's budget).
    resp.headers_mut()
        .insert("connection", axum::http::HeaderValue::from_static("close"));
    resp
}

/// A request body that must arrive whole by a deadline (a body trickled in byte by byte is
/// cut). No timer is armed for a body already received when it is first read.
#[derive(Debug)]
pub(crate) struct DeadlineBody {
    body: axum::body::Body,
    deadline: tokio::time::Instant,
    timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl DeadlineBody {
    pub(crate) fn new(body: axum::body::Body, within: Duration) -> Self {
        Self {
            body,
            deadline: tokio::time::Instant::now() + within,
            timer: None,
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use std::future::Future;
        use std::task::Poll;
        let this = &mut *self;
        if let Poll::Ready(frame) = std::pin::Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                crate::metrics::global().connection_refused("body_timeout");
                Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The error of a [`DeadlineBody`] whose deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
struct BodyTimedOut;

/// The HTTP/2 connection preface, which version detection waits for whole.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const PREFACE_LEN: usize = PREFACE.len();

type Timer = std::pin::Pin<Box<tokio::time::Sleep>>;

/// A connection with deadlines on its reads and writes, each optional:
/// - the preface deadline: reads fail with `TimedOut` while what was sent so far is a strict
///   prefix of the HTTP/2 preface (nothing at all included) past it. Once the bytes differ
///   from the preface (HTTP/1.1, whose heads hyper times itself) or complete it, reads pass
///   through;
/// - the write timeout: writes fail with `TimedOut` once one has been blocked that long (the
///   peer stopped reading). Its clock runs only while a write is pending.
///
/// Timers are made lazily: a connection whose reads and writes never wait allocates none.
#[derive(Debug)]
struct Deadlines<T> {
    io: T,
    /// `None` once the preface question is settled (or when not asked).
    preface_by: Option<tokio::time::Instant>,
    read: usize,
    read_timer: Option<Timer>,
    write_timeout: Option<Duration>,
    write_timer: Option<Timer>,
    /// A write is blocked and the write timer runs for it.
    blocked: bool,
}

impl<T> Deadlines<T> {
    fn new(io: T) -> Self {
        Self {
            io,
            preface_by: None,
            read: 0,
            read_timer: None,
            write_timeout: None,
            write_timer: None,
            blocked: false,
        }
    }

    fn preface_by(mut self, deadline: tokio::time::Instant) -> Self {
        self.preface_by = Some(deadline);
        self
    }

    fn write_within(mut self, timeout: Duration) -> Self {
        self.write_timeout = Some(timeout);
        self
    }

    /// Passes a write's outcome through; a pending write starts (or checks) the clock.
    fn watch_write<R>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        outcome: std::task::Poll<std::io::Result<R>>,
    ) -> std::task::Poll<std::io::Result<R>> {
        let Some(timeout) = self.write_timeout else {
            return outcome;
        };
        if outcome.is_ready() {
            self.blocked = false;
            return outcome;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.blocked {
            timer.as_mut().reset(deadline);
            self.blocked = true;
        }
        expired(timer, cx, "write_timeout", "the peer stopped reading")
    }
}

/// `TimedOut` (counted as a refusal for `reason`) once `timer` has fired, else pending.
fn expired<R>(
    timer: &mut Timer,
    cx: &mut std::task::Context<'_>,
    reason: &'static str,
    message: &'static str,
) -> std::task::Poll<std::io::Result<R>> {
    use std::future::Future;
    match timer.as_mut().poll(cx) {
        std::task::Poll::Ready(()) => {
            crate::metrics::global().connection_refused(reason);
            std::task::Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                message,
            )))
        }
        std::task::Poll::Pending => std::task::Poll::Pending,
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Deadlines<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let outcome = std::pin::Pin::new(&mut this.io).poll_read(cx, buf);
        let Some(deadline) = this.preface_by else {
            return outcome;
        };
        if outcome.is_ready() {
            let new = &buf.filled()[before..];
            let at = this.read.min(PREFACE_LEN);
            let n = new.len().min(PREFACE_LEN - at);
            let still_preface = new[..n] == PREFACE[at..at + n];
            this.read += new.len();
            if !still_preface || this.read >= PREFACE_LEN {
                this.preface_by = None;
                this.read_timer = None;
            }
            return outcome;
        }
        let timer = this
            .read_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        expired(timer, cx, "idle", "the request did not start in time")
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Deadlines<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch_write(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch_write(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_flush(cx);
        self.watch_write(cx, outcome)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch_write(cx, outcome)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::Deadlines;

    /// What the server's side of a connection that sent `sent` reads after `wait`.
    async fn read_after(sent: &[u8], wait: Duration) -> std::io::Result<usize> {
        let (mut client, server) = tokio::io::duplex(1024);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut server = Deadlines::new(server).preface_by(deadline);
        client.write_all(sent).await.unwrap();
        let mut buf = [0u8; 64];
        let first = server.read(&mut buf).await.unwrap();
        assert_eq!(first, sent.len());
        match tokio::time::timeout(wait, server.read(&mut buf)).await {
            Ok(result) => result,
            Err(_) => Ok(usize::MAX), // still waiting
        }
    }

    #[tokio::test(start_paused = true)]
    async fn part_of_the_http2_preface_is_cut_at_the_deadline() {
        let e = read_after(b"PRI * HTTP/2.0\r\n", Duration::from_secs(11))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    }

    #[tokio::test(start_paused = true)]
    async fn a_short_http1_request_is_not_cut_while_its_answer_runs() {
        // 18 bytes, fewer than the preface's 24: hyper's next read waits for the next
        // request (or EOF) while a long answer streams, and must not fail.
        let read = read_after(b"GET / HTTP/1.0\r\n\r\n", Duration::from_secs(60)).await;
        assert_eq!(read.unwrap(), usize::MAX, "still waiting, no error");
    }
}
