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
//! - Each request carries its connection's [`PeerAddr`](crate::limits::PeerAddr) (per-caller bounds key on it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

mod connection;
mod deadlines;
mod gather;
mod head_timer;
mod http2;
mod refuse;
mod service;
mod sniff;
mod tls;

use connection::{Accepted, Builders};
pub(crate) use deadlines::DeadlineBody;
use refuse::{REFUSAL_BUDGET, REFUSALS_AT_ONCE, refuse};
use service::App;
pub use tls::Tls;

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

/// How a server serves, besides what: until `shutdown` resolves, then letting open
/// connections finish for up to `drain`; within `limits`; over TLS when `tls` is given
/// (every connection's handshake within the head timeout).
pub(crate) struct Serving<F> {
    pub(crate) shutdown: F,
    pub(crate) drain: Duration,
    pub(crate) limits: ConnectionLimits,
    pub(crate) tls: Option<Tls>,
}

/// Serves `app` on `listener` as `serving` says.
pub(crate) async fn serve_connections<F>(
    listener: TcpListener,
    app: impl App,
    serving: Serving<F>,
) -> std::io::Result<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    // Two types of application, so the loop is built for each (tower's `Either` would turn
    // the application's `Infallible` error into a boxed one).
    match serving.limits.max_in_flight {
        Some(n) => {
            let bound = Arc::new(Semaphore::new(n));
            let limit = axum::middleware::from_fn_with_state(bound, limit_in_flight);
            accept(listener, tower::Layer::layer(&limit, app), serving).await
        }
        None => accept(listener, app, serving).await,
    }
}

/// [`serve_connections`] once its application is complete.
async fn accept<F>(listener: TcpListener, app: impl App, serving: Serving<F>) -> std::io::Result<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let Serving {
        shutdown,
        drain,
        limits,
        tls,
    } = serving;
    let builders = Arc::new(Builders::new(&limits));
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
                let (tls, builders) = (tls.clone(), builders.clone());
                let budget = limits.header_read_timeout.min(REFUSAL_BUDGET);
                tokio::spawn(async move {
                    let _slot = slot;
                    let _ = tokio::time::timeout(budget, refuse(tcp, tls, &builders.detect)).await;
                });
            }
            continue;
        };
        let accepted = Accepted {
            tcp,
            peer,
            app: app.clone(),
            builders: builders.clone(),
            watcher: graceful.watcher(),
            first_bytes: limits.header_read_timeout,
            write_timeout: limits.write_timeout,
        };
        let tls = tls.clone();
        tokio::spawn(async move {
            let _permit = permit;
            accepted.serve(tls).await;
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
