//! [`A2aServer`]: the shortest way from an [`AgentExecutor`] to a served agent.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_types::AgentCard;
use axum::Router;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

use crate::handler::RequestHandler;
use crate::router::{ServeOptions, agent_routes, serve_with_drain};
use a2a_runtime::AgentExecutor;
use a2a_runtime::TaskRuntime;

/// Binds the first of `addr`'s addresses that can be bound; an error names them.
async fn bind(addr: impl ToSocketAddrs) -> std::io::Result<TcpListener> {
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(addr).await?.collect();
    let mut last = None;
    for a in &addrs {
        match TcpListener::bind(a).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some((a, e)),
        }
    }
    Err(match last {
        Some((a, e)) => {
            let why = match e.kind() {
                std::io::ErrorKind::AddrInUse => {
                    "the address is in use (another server listens there; choose another port)"
                        .to_owned()
                }
                _ => e.to_string(),
            };
            std::io::Error::new(e.kind(), format!("cannot listen on {a}: {why}"))
        }
        None => std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "cannot listen: the address resolved to nothing",
        ),
    })
}

/// One agent served over HTTP: JSON-RPC (v1.0 and v0.3 methods), HTTP+JSON, gRPC (HTTP/2
/// on the same port; feature `grpc`), SSE streaming and its cards, at the root of the server
/// or under a path.
///
/// ```no_run
/// # use a2a_server::{A2aServer, AgentExecutor};
/// # async fn run(agent: impl AgentExecutor) -> std::io::Result<()> {
/// let card = a2a_server::types::AgentCard::new("Upper", "Answers in capitals");
/// A2aServer::new(agent, card).serve("127.0.0.1:3000").await
/// # }
/// ```
///
/// [`serve`](Self::serve) runs until Ctrl-C or SIGTERM, then shuts down gracefully: running
/// tasks are canceled (their agents' cancellation tokens fire; an agent that ignores it is
/// aborted after the runtime's cancel grace), open streams get their last event, and it
/// returns once every execution has ended.
#[derive(Debug, Clone)]
pub struct A2aServer {
    handler: RequestHandler,
    path: String,
    options: ServeOptions,
    drain: Duration,
}

impl A2aServer {
    /// `executor` described by `card`, with tasks kept in memory. The card's interfaces and
    /// unset capabilities are filled in by the server (see [`RequestHandler::new`]).
    pub fn new(executor: impl AgentExecutor, card: AgentCard) -> Self {
        Self::from_handler(crate::in_memory_handler(Arc::new(executor), card))
    }

    /// Serves a handler built by hand (another store or bus, handler settings, an extended
    /// card).
    pub fn from_handler(handler: RequestHandler) -> Self {
        Self {
            handler,
            path: String::new(),
            options: ServeOptions::default(),
            drain: Duration::from_secs(10),
        }
    }

    /// Mounts the agent under `path` (like `/a2a/upper`) instead of the root.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets how the agent is exposed (public URL, card compatibility, JSON-RPC limits).
    pub fn with_options(mut self, options: ServeOptions) -> Self {
        self.options = options;
        self
    }

    /// How long open connections may take to finish after shutdown begins (default 10 s).
    pub fn with_drain(mut self, drain: Duration) -> Self {
        self.drain = drain;
        self
    }

    /// The handler (for its runtime or cards).
    pub fn handler(&self) -> &RequestHandler {
        &self.handler
    }

    /// The agent's routes, to merge into a larger axum application.
    pub fn router(&self) -> Router {
        let mut router = agent_routes(Arc::new(self.handler.clone()), &self.path, &self.options);
        // Signed cards name this key set in their `jku`: it is served with them.
        if let Some(signer) = &self.options.card_signer {
            router = router.merge(crate::router::jwks_routes(signer.clone()));
        }
        router = router.merge(crate::router::health_routes(vec![
            self.handler.runtime().store().clone(),
        ]));
        if self.options.metrics {
            router.merge(crate::router::metrics_routes())
        } else {
            router
        }
    }

    /// Binds `addr` and serves until Ctrl-C or SIGTERM, then shuts down gracefully. Says
    /// where it listens (a `tracing` event when a subscriber is installed, else a line on
    /// stderr), and names the address when it cannot bind it.
    pub async fn serve(self, addr: impl ToSocketAddrs) -> std::io::Result<()> {
        let listener = bind(addr).await?;
        let url = format!(
            "http://{}{}",
            listener.local_addr()?,
            self.path.trim_end_matches('/')
        );
        if tracing::dispatcher::has_been_set() {
            tracing::info!(%url, agent = %self.handler.card().name, "serving A2A agent");
        } else {
            eprintln!(
                "serving {} at {url} (card: {url}/.well-known/agent-card.json); Ctrl-C stops",
                self.handler.card().name
            );
        }
        self.serve_on(listener, shutdown_signal()).await
    }

    /// Serves on `listener` until `shutdown` resolves, then cancels the running tasks,
    /// lets open connections finish (up to the drain period) and waits for every execution
    /// to end.
    pub async fn serve_on(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let runtime = self.handler.runtime().clone();
        let stop = runtime.clone();
        let on_shutdown = async move {
            shutdown.await;
            stop.shutdown();
        };
        let served = serve_with_drain(listener, self.router(), on_shutdown, self.drain).await;
        runtime.shutdown();
        runtime.stopped().await;
        served
    }

    /// Serves on a free port of 127.0.0.1 in the background (for tests and examples).
    pub async fn spawn_local(self) -> std::io::Result<LocalServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let stop = CancellationToken::new();
        let shutdown = stop.clone().cancelled_owned();
        let runtime = self.handler.runtime().clone();
        let url = format!("http://{addr}{}", self.path.trim_end_matches('/'));
        let task = tokio::spawn(self.serve_on(listener, shutdown));
        Ok(LocalServer {
            addr,
            url,
            stop,
            task,
            runtime,
        })
    }
}

/// A server started by [`A2aServer::spawn_local`].
#[derive(Debug)]
pub struct LocalServer {
    addr: SocketAddr,
    url: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    runtime: TaskRuntime,
}

impl LocalServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The runtime of the served agent.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.runtime
    }

    /// The agent's URL, like `http://127.0.0.1:41000` (plus the mount path, if any).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Shuts it down gracefully and waits until it has stopped.
    pub async fn shutdown(self) -> std::io::Result<()> {
        self.stop.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Resolves on Ctrl-C or (on Unix) SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
