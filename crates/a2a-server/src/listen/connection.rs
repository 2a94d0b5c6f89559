//! One accepted connection: its protocol told (see `sniff.rs`), its TLS handshake made, and
//! served until it ends or the server drains.
//!
//! A connection's task holds its state for as long as it is open (10 000 SSE streams: 10 000
//! tasks), and a future is as large as the largest state it can be in: the common case, a
//! plaintext HTTP/1.1 connection, is served inline by hyper's HTTP/1 connection alone, while
//! HTTP/2 and TLS (larger states, for fewer connections) are boxed.

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::Watcher;
use tokio::net::TcpStream;

use super::ConnectionLimits;
use super::deadlines::Deadlines;
use super::gather::gathered;
use super::head_timer::HeadTimer;
use super::http2::{OneTask, StreamQueue};
use super::service::{App, ConnectionService};
use super::sniff::{self, Protocol};
use super::tls::Tls;

/// The connection builders, configured alike: one that tells the version itself (TLS
/// without ALPN, refusals) and one for each version, when it is known. HTTP/2's is made
/// for each connection, whose streams it queues for the connection's task (`http2.rs`);
/// HTTP/1.1's is copied for each connection, whose head deadlines share one clock
/// (`head_timer.rs`).
#[derive(Debug)]
pub(super) struct Builders {
    pub(super) detect: auto::Builder<TokioExecutor>,
    http1: hyper::server::conn::http1::Builder,
    http2_keep_alive_interval: Duration,
    max_header_list_size: u32,
}

impl Builders {
    pub(super) fn new(limits: &ConnectionLimits) -> Self {
        let max_head = limits.max_header_bytes.max(8192);
        let max_header_list_size = u32::try_from(max_head).unwrap_or(u32::MAX);
        let mut detect = auto::Builder::new(TokioExecutor::new());
        detect
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .max_buf_size(max_head);
        detect
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(Some(limits.http2_keep_alive_interval))
            .keep_alive_timeout(limits.http2_keep_alive_interval)
            .max_header_list_size(max_header_list_size);
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .header_read_timeout(limits.header_read_timeout)
            .max_buf_size(max_head);
        Self {
            detect,
            http1,
            http2_keep_alive_interval: limits.http2_keep_alive_interval,
            max_header_list_size,
        }
    }

    /// The HTTP/1.1 builder of one connection: `http1` with the connection's own clock for
    /// its head deadlines.
    fn http1(&self) -> hyper::server::conn::http1::Builder {
        let mut http1 = self.http1.clone();
        http1.timer(HeadTimer::default());
        http1
    }

    /// The HTTP/2 builder of one connection, configured as `detect`'s HTTP/2 half, whose
    /// streams go to `streams`.
    fn http2(&self, streams: StreamQueue) -> hyper::server::conn::http2::Builder<StreamQueue> {
        let mut http2 = hyper::server::conn::http2::Builder::new(streams);
        http2
            .timer(TokioTimer::new())
            .keep_alive_interval(Some(self.http2_keep_alive_interval))
            .keep_alive_timeout(self.http2_keep_alive_interval)
            .max_header_list_size(self.max_header_list_size);
        http2
    }
}

/// A connection the accept loop took, with what serving it needs.
pub(super) struct Accepted<S> {
    pub(super) tcp: TcpStream,
    pub(super) peer: std::net::SocketAddr,
    pub(super) app: S,
    pub(super) builders: std::sync::Arc<Builders>,
    pub(super) watcher: Watcher,
    /// Time for the first bytes (and the TLS handshake).
    pub(super) first_bytes: Duration,
    pub(super) write_timeout: Duration,
}

type ConnError = Box<dyn std::error::Error + Send + Sync>;

impl<S: App> Accepted<S> {
    /// Serves the connection, plaintext or over `tls`, until it ends.
    pub(super) async fn serve(self, tls: Option<Tls>) {
        let result = match tls {
            None => self.serve_plain().await,
            Some(tls) => Box::pin(self.serve_tls(tls)).await,
        };
        if let Err(e) = result {
            tracing::trace!(error = %e, "connection ended with an error");
        }
    }

    async fn serve_plain(self) -> Result<(), ConnError> {
        // Version detection has no deadline of its own: a connection that sends nothing, or
        // only part of the HTTP/2 preface, is closed here.
        let deadline = tokio::time::Instant::now() + self.first_bytes;
        let Some(protocol) = sniff::protocol(&self.tcp, deadline).await else {
            crate::metrics::global().connection_refused("idle");
            return Ok(());
        };
        let io = Deadlines::new(self.tcp).write_within(self.write_timeout);
        match protocol {
            Protocol::Http1 => {
                let service = ConnectionService::new(self.app, self.peer, false);
                let conn = self
                    .builders
                    .http1()
                    .serve_connection(TokioIo::new(io), service);
                Ok(self.watcher.watch(conn).await?)
            }
            Protocol::Http2 => {
                let service = (self.app, self.peer, false);
                serve_http2(&self.builders, self.watcher, io, service).await
            }
        }
    }

    async fn serve_tls(self, tls: Tls) -> Result<(), ConnError> {
        let mut first = [0u8; 1];
        match tokio::time::timeout(self.first_bytes, self.tcp.peek(&mut first)).await {
            Ok(Ok(n)) if n > 0 => {}
            Ok(_) => return Ok(()),
            Err(_) => {
                crate::metrics::global().connection_refused("idle");
                return Ok(());
            }
        }
        // Writes are timed under TLS (its records are what waits); the preface is read
        // above it.
        let io = Deadlines::new(self.tcp).write_within(self.write_timeout);
        let handshake = tokio::time::timeout(self.first_bytes, tls.0.accept(io)).await;
        let Ok(Ok(stream)) = handshake else {
            crate::metrics::global().connection_refused("tls_handshake");
            return Ok(());
        };
        let protocol = sniff::negotiated(&stream);
        if protocol == Some(Protocol::Http1) {
            let service = ConnectionService::new(self.app, self.peer, true);
            let conn = self
                .builders
                .http1()
                .serve_connection(TokioIo::new(stream), service);
            return Ok(self.watcher.watch(conn).await?);
        }
        // The application bytes get their own clock: the handshake took some.
        let stream =
            Deadlines::new(stream).preface_by(tokio::time::Instant::now() + self.first_bytes);
        if protocol == Some(Protocol::Http2) {
            let service = (self.app, self.peer, true);
            return serve_http2(&self.builders, self.watcher, stream, service).await;
        }
        let service = ConnectionService::new(self.app, self.peer, true);
        let conn = self
            .builders
            .detect
            .serve_connection(TokioIo::new(stream), service);
        self.watcher.watch(conn.into_owned()).await
    }
}

/// Serves HTTP/2 on `io` until the connection ends: the connection and its streams in this
/// one task (`http2.rs`), what each of its polls writes gathered into one write
/// (`gather.rs`), with [`ConnectionService`]`::new(app, peer, secure)`. The task stays small:
/// the connection's state is boxed in it.
async fn serve_http2<T, S: App>(
    builders: &Builders,
    watcher: Watcher,
    io: T,
    (app, peer, secure): (S, std::net::SocketAddr, bool),
) -> Result<(), ConnError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (io, writes) = gathered(io);
    let streams = StreamQueue::default();
    let conn = builders
        .http2(streams.clone())
        .serve_connection(TokioIo::new(io), ConnectionService::new(app, peer, secure));
    Ok(OneTask::new(watcher.watch(conn), streams, writes).await?)
}
