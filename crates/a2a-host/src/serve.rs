//! Everything `a2a serve` does, as a library: [`HostBuilder`] takes agents (from code or a
//! config file) and settings, [`HostBuilder::bind`] opens the store and the port, and
//! [`BoundHost::serve`] serves until told to stop, then shuts down in order.
//!
//! ```no_run
//! # async fn demo() -> Result<(), a2a_host::HostError> {
//! let host = a2a_host::HostBuilder::new()
//!     .builtin_agents()
//!     .store("sqlite:a2a.db")
//!     .bind("127.0.0.1:41241")
//!     .await?;
//! println!("serving on {}", host.base_url());
//! host.serve(a2a_server::shutdown_signal()).await
//! # }
//! ```
//!
//! The store URL picks the rest: `sqlite:PATH` (a file; other processes on the file are
//! followed by polling it), `postgres://…` (several replicas; events cross them through
//! `LISTEN/NOTIFY`), `memory`. With a database, each process beats a lease so that another
//! fails (or re-runs) its tasks if it dies, resumes the push deliveries it left, expires tasks
//! left waiting for input and deletes finished tasks past their retention.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_server::auth::Authenticator;
use a2a_server::push::{PushDelivery, PushSettings, PushSigner};
use a2a_server::store::{InMemoryTaskStore, InMemoryTaskStoreConfig, TaskStore};
use a2a_server::{
    CallerKeying, CallerRate, CallerStreams, ConnectionLimits, EventBus, HandlerConfig,
    InProcessBus, RequestHandler, RuntimeConfig, ServeOptions, TaskRuntime, Tls,
};
use a2a_store_sql::{LeaseConfig, NotifyHub, RetentionConfig, SqlTaskStore};
use tokio::net::TcpListener;

use crate::config::ConfiguredAgent;
use crate::{AgentHost, HostAgent};

/// How often a quiet stream reads a shared SQLite file for events other processes wrote.
const SQLITE_POLL: Duration = Duration::from_millis(250);

/// The same on PostgreSQL, where LISTEN/NOTIFY carries those events and this read only
/// covers notices lost while the listener reconnects.
const POSTGRES_POLL: Duration = Duration::from_secs(2);

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The task store could not be opened (its URL is given without a password).
    #[error("cannot open the task store {url}")]
    Store {
        /// The store URL, password redacted.
        url: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The address could not be listened on.
    #[error("cannot listen on {address}")]
    Listen {
        /// The address.
        address: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Push delivery could not be set up.
    #[error("cannot set up push delivery")]
    Push(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Serving failed.
    #[error("serving failed")]
    Serve(#[source] std::io::Error),
}

/// The settings of a host, and its agents. Every setting has the default `a2a serve` has.
#[derive(Debug)]
pub struct HostBuilder {
    agents: Vec<ConfiguredAgent>,
    at_root: bool,
    store: String,
    options: ServeOptions,
    limits: ConnectionLimits,
    tls: Option<Tls>,
    auth: Option<Arc<dyn Authenticator>>,
    push: Option<PushSettings>,
    streams_per_caller: Option<usize>,
    rate_per_caller: Option<(f64, f64)>,
    keying: CallerKeying,
    default_history_length: Option<usize>,
    max_history_length: Option<usize>,
    max_terminal_tasks: usize,
    leases: LeaseConfig,
    retention: RetentionConfig,
    store_poll: Option<Option<Duration>>,
    drain: Duration,
    grpc_listener: Option<TcpListener>,
    inspector: bool,
    trace_url: Option<String>,
}

impl Default for HostBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// `url` without a password, for logs and errors.
pub fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

impl HostBuilder {
    /// No agents yet; tasks in `sqlite:a2a.db`; push on; no authentication.
    pub fn new() -> Self {
        Self {
            agents: Vec::new(),
            at_root: false,
            store: "sqlite:a2a.db".to_owned(),
            options: ServeOptions::default(),
            limits: ConnectionLimits::default(),
            tls: None,
            auth: None,
            push: Some(PushSettings::default()),
            streams_per_caller: None,
            rate_per_caller: None,
            keying: CallerKeying::default(),
            default_history_length: None,
            max_history_length: None,
            max_terminal_tasks: 10_000,
            leases: LeaseConfig::default(),
            retention: RetentionConfig::default(),
            store_poll: None,
            drain: Duration::from_secs(10),
            grpc_listener: None,
            inspector: true,
            trace_url: None,
        }
    }

    /// Serves the inspector, the web console, at `/inspector/` (and to browsers asking `/`
    /// for a page): on by default.
    pub fn inspector(mut self, on: bool) -> Self {
        self.inspector = on;
        self
    }

    /// A link for each request's trace in the inspector: a URL with `{trace_id}` in it (a
    /// Jaeger UI, say `http://localhost:16686/trace/{trace_id}`).
    pub fn trace_url(mut self, template: Option<String>) -> Self {
        self.trace_url = template;
        self
    }

    /// Hosts `agent` at `/a2a/{id}` (a built-in agent, one from a config file, or your own:
    /// see [`ConfiguredAgent`]).
    pub fn agent(mut self, agent: impl Into<ConfiguredAgent>) -> Self {
        self.agents.push(agent.into());
        self
    }

    /// Hosts the built-in demo agents (`echo`, `slow`, `multi`, `conformance`).
    pub fn builtin_agents(mut self) -> Self {
        for name in crate::builtin::NAMES {
            if let Some(agent) = crate::builtin::builtin(name) {
                self.agents.push(agent.into());
            }
        }
        self
    }

    /// Serves the one agent at the root (`/`, `/.well-known/agent-card.json`) instead of
    /// under `/a2a/{id}`.
    pub fn at_root(mut self) -> Self {
        self.at_root = true;
        self
    }

    /// Where tasks are kept: `sqlite:PATH`, `postgres://…` or `memory`.
    pub fn store(mut self, url: impl Into<String>) -> Self {
        self.store = url.into();
        self
    }

    /// How agents are exposed (public URL, bindings, card compatibility, metrics, card
    /// signing).
    pub fn options(mut self, options: ServeOptions) -> Self {
        self.options = options;
        self
    }

    /// Connection timeouts and limits.
    pub fn limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves HTTPS (and gRPC over TLS).
    pub fn tls(mut self, tls: Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Requires every request to pass `auth`; each caller then sees only its own tasks.
    pub fn auth(mut self, auth: Arc<dyn Authenticator>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Push notification delivery settings; `None` switches push off.
    pub fn push(mut self, push: Option<PushSettings>) -> Self {
        self.push = push;
        self
    }

    /// At most `n` open streams per caller.
    pub fn streams_per_caller(mut self, n: usize) -> Self {
        self.streams_per_caller = Some(n);
        self
    }

    /// At most `rate` requests a second per caller, in bursts of `burst`.
    pub fn rate_per_caller(mut self, rate: f64, burst: f64) -> Self {
        self.rate_per_caller = Some((rate, burst));
        self
    }

    /// How anonymous callers are told apart by the per-caller bounds.
    pub fn caller_keying(mut self, keying: CallerKeying) -> Self {
        self.keying = keying;
        self
    }

    /// History messages returned by default, and at most.
    pub fn history_length(mut self, default: Option<usize>, max: Option<usize>) -> Self {
        self.default_history_length = default;
        self.max_history_length = max;
        self
    }

    /// In memory: finished tasks kept per agent before the oldest are evicted.
    pub fn max_terminal_tasks(mut self, n: usize) -> Self {
        self.max_terminal_tasks = n;
        self
    }

    /// With a database: how long a silent process keeps its tasks.
    pub fn leases(mut self, leases: LeaseConfig) -> Self {
        self.leases = leases;
        self
    }

    /// With a database: how long finished and idle tasks are kept.
    pub fn retention(mut self, retention: RetentionConfig) -> Self {
        self.retention = retention;
        self
    }

    /// With a database: how often a quiet stream reads the store for what other processes
    /// wrote (`None`: never) [default: 250 ms on SQLite, 2 s on PostgreSQL].
    pub fn store_poll(mut self, every: Option<Duration>) -> Self {
        self.store_poll = Some(every);
        self
    }

    /// How long open requests and streams may take to finish after shutdown begins.
    pub fn drain(mut self, drain: Duration) -> Self {
        self.drain = drain;
        self
    }

    /// Serves gRPC on this listener instead of on the HTTP port.
    pub fn grpc_listener(mut self, listener: TcpListener) -> Self {
        self.grpc_listener = Some(listener);
        self
    }

    /// Opens the store, binds `address` and builds every agent's handler: the host, ready to
    /// serve.
    pub async fn bind(
        self,
        address: impl tokio::net::ToSocketAddrs + std::fmt::Display,
    ) -> Result<BoundHost, HostError> {
        let shown = address.to_string();
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| HostError::Listen {
                address: shown,
                source,
            })?;
        self.bind_on(listener).await
    }

    /// The same on a listener of yours.
    pub async fn bind_on(mut self, listener: TcpListener) -> Result<BoundHost, HostError> {
        let local = listener.local_addr().map_err(HostError::Serve)?;
        let store_error = |url: &str| {
            let url = redacted(url);
            move |e: a2a_store_sql::SqlStoreError| HostError::Store {
                url,
                source: Box::new(e),
            }
        };
        let db = if self.store == "memory" {
            None
        } else {
            let db = SqlTaskStore::connect(&self.store)
                .await
                .map_err(store_error(&self.store))?;
            let hub = db.notify_hub().await.map_err(store_error(&self.store))?;
            Some((db, hub))
        };
        if let Some(grpc) = &self.grpc_listener
            && self.options.grpc_address.is_none()
            && let Ok(bound) = grpc.local_addr()
        {
            let host = self
                .options
                .public_url
                .as_deref()
                .and_then(|u| u.parse::<http::Uri>().ok())
                .and_then(|u| u.host().map(str::to_owned))
                .unwrap_or_else(|| bound.ip().to_string());
            self.options.grpc_address = Some(format!("{host}:{}", bound.port()));
        }
        let base = self.options.public_url.clone().unwrap_or_else(|| {
            let scheme = if self.tls.is_some() { "https" } else { "http" };
            format!("{scheme}://{local}")
        });
        let config = self.handler_config(&base, local)?;
        if let (Some((db, _)), Some(auth)) = (&db, &config.auth) {
            // Tasks stored by a version that named owners without their source are given the
            // principal the configured credentials vouch for.
            let auth = auth.clone();
            db.qualify_legacy_owners(&move |name| {
                auth.legacy_principal(name).map(|p| p.id().to_owned())
            })
            .await
            .map_err(|e| HostError::Store {
                url: redacted(&self.store),
                source: Box::new(e),
            })?;
        }
        let mut host = AgentHost::new(self.options.clone());
        let mut in_memory = Vec::new();
        let ids: Vec<String> = self.agents.iter().map(|a| a.id.clone()).collect();
        for agent in &self.agents {
            let (handler, memory) = self.handler_for(agent, db.as_ref(), config.clone());
            in_memory.extend(memory.map(|store| (store, handler.clone())));
            let hosted = HostAgent {
                id: agent.id.clone(),
                handler,
            };
            host = if self.at_root {
                host.root(hosted)
            } else {
                host.agent(hosted)
            };
        }
        if self.inspector {
            let inspector = self.inspector_config(&base, local, &config, &host);
            host = host.inspector(inspector);
        }
        let grpc_address = self
            .grpc_listener
            .as_ref()
            .and(self.options.grpc_address.clone());
        Ok(BoundHost {
            listener,
            grpc_address,
            grpc_listener: self.grpc_listener,
            host,
            db: db.map(|(db, _)| db),
            in_memory,
            base,
            ids,
            at_root: self.at_root,
            store: redacted(&self.store),
            limits: self.limits,
            tls: self.tls,
            drain: self.drain,
            leases: self.leases,
            retention: self.retention,
        })
    }

    /// The inspector's settings: the same authentication and the same reach as push.
    fn inspector_config(
        &self,
        base: &str,
        local: SocketAddr,
        config: &HandlerConfig,
        host: &AgentHost,
    ) -> a2a_inspector::InspectorConfig {
        let mut c = a2a_inspector::InspectorConfig::new(base);
        c.auth = config.auth.clone();
        c.policy = self
            .push
            .as_ref()
            .map(|p| p.policy.clone())
            .unwrap_or_default();
        c.trace_url = self.trace_url.clone();
        c.push_keys = self.options.card_signer.as_ref().map(|s| s.jwks());
        c.metrics = self.options.metrics;
        c.push = config.push.is_some();
        c.task_logs = Some(Arc::new(crate::inspect::HostTaskLogs::new(
            host.handlers_by_id(),
        )));
        // Reaching other agents for the console is an open proxy on a host that anyone can
        // reach without credentials.
        c.reach_out = config.auth.is_some() || local.ip().is_loopback();
        c
    }

    /// What every agent's handler shares: history lengths, per-caller bounds, push, auth.
    fn handler_config(&self, base: &str, local: SocketAddr) -> Result<HandlerConfig, HostError> {
        let mut config = HandlerConfig::default();
        config.default_history_length = self.default_history_length;
        config.max_history_length = self.max_history_length;
        config.streams_per_caller = self
            .streams_per_caller
            .map(|n| CallerStreams::with_keying(n, self.keying));
        config.rate_per_caller = self
            .rate_per_caller
            .map(|(rate, burst)| CallerRate::with_keying(rate, burst, self.keying));
        config.auth = self.auth.clone();
        config.push = match &self.push {
            None => None,
            Some(settings) => {
                let mut settings = settings.clone();
                if self.inspector {
                    // The console's push receiver is on this host's own address.
                    settings
                        .policy
                        .allowed_prefixes
                        .push(format!("{}/inspector/hooks/", base.trim_end_matches('/')));
                }
                if settings.signer.is_none()
                    && let Some(key) = &self.options.card_signer
                {
                    // Notifications name where the key is only when the address is one a
                    // receiver can reach (not 0.0.0.0 or [::]); else receivers take the key
                    // set the card's signature names, or are given it.
                    let reachable =
                        self.options.public_url.is_some() || !local.ip().is_unspecified();
                    let jku = reachable.then(|| {
                        format!(
                            "{}{}",
                            base.trim_end_matches('/'),
                            a2a_server::card_signing::JWKS_PATH
                        )
                    });
                    settings.signer = Some(PushSigner::new(key.clone(), jku));
                }
                Some(PushDelivery::new(settings).map_err(|e| HostError::Push(Box::new(e)))?)
            }
        };
        Ok(config)
    }

    /// The handler of one agent, and its store when that is in memory (for upkeep).
    fn handler_for(
        &self,
        agent: &ConfiguredAgent,
        db: Option<&(SqlTaskStore, Option<NotifyHub>)>,
        config: HandlerConfig,
    ) -> (Arc<RequestHandler>, Option<Arc<InMemoryTaskStore>>) {
        let mut in_memory = None;
        let store: Arc<dyn TaskStore> = match db {
            Some((db, _)) => Arc::new(db.scoped(&agent.id)),
            None => {
                let store = Arc::new(InMemoryTaskStore::new(
                    InMemoryTaskStoreConfig::default()
                        .with_max_terminal_tasks(self.max_terminal_tasks),
                ));
                in_memory = Some(store.clone());
                store
            }
        };
        let mut runtime_config = RuntimeConfig::default();
        let bus: Arc<dyn EventBus> = match db {
            Some((_, Some(hub))) => {
                runtime_config.store_poll = Some(POSTGRES_POLL);
                Arc::new(hub.bus(&agent.id))
            }
            Some((_, None)) => {
                // Other processes may share the file: follow their events through it.
                runtime_config.store_poll = Some(SQLITE_POLL);
                Arc::new(InProcessBus::default())
            }
            None => Arc::new(InProcessBus::default()),
        };
        if db.is_some()
            && let Some(poll) = self.store_poll
        {
            runtime_config.store_poll = poll;
        }
        let runtime = TaskRuntime::new(agent.executor.clone(), store, bus, runtime_config);
        let mut handler =
            RequestHandler::new(runtime, agent.card.clone(), config).with_metrics_label(&agent.id);
        if let Some(extended) = &agent.extended_card {
            handler = handler.with_extended_card(extended.clone());
        }
        (Arc::new(handler), in_memory)
    }
}

/// A host with its store open and its port bound, ready to serve.
#[derive(Debug)]
pub struct BoundHost {
    listener: TcpListener,
    grpc_address: Option<String>,
    grpc_listener: Option<TcpListener>,
    host: AgentHost,
    db: Option<SqlTaskStore>,
    in_memory: Vec<(Arc<InMemoryTaskStore>, Arc<RequestHandler>)>,
    base: String,
    ids: Vec<String>,
    at_root: bool,
    store: String,
    limits: ConnectionLimits,
    tls: Option<Tls>,
    drain: Duration,
    leases: LeaseConfig,
    retention: RetentionConfig,
}

impl BoundHost {
    /// The base URL agents are served under (the public URL, or the bound address).
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The address bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The URL of each agent, by id.
    pub fn agent_urls(&self) -> Vec<(String, String)> {
        self.ids
            .iter()
            .map(|id| {
                let url = if self.at_root {
                    format!("{}/", self.base)
                } else {
                    format!("{}/a2a/{id}", self.base)
                };
                (id.clone(), url)
            })
            .collect()
    }

    /// Where gRPC is served, when on a port of its own.
    pub fn grpc_address(&self) -> Option<&str> {
        self.grpc_address.as_deref()
    }

    /// The store, password redacted.
    pub fn store(&self) -> &str {
        &self.store
    }

    /// The handlers, by agent id.
    pub fn handlers(&self) -> std::collections::BTreeMap<String, Arc<RequestHandler>> {
        self.host.handlers_by_id()
    }

    /// Serves until `shutdown` resolves, then shuts down in order: running tasks are
    /// canceled (their streams get a last event), open connections get the drain period,
    /// every execution ends and its last state is written, and the process retires from the
    /// store (so nothing of it is taken for abandoned).
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HostError> {
        let Self {
            listener,
            grpc_listener,
            host,
            db,
            in_memory,
            limits,
            tls,
            drain,
            leases,
            retention,
            store,
            ..
        } = self;
        let upkeep = match &db {
            Some(db) => {
                // Beat once before serving, so no task of ours is ever without a live owner.
                db.heartbeat().await.map_err(|e| HostError::Store {
                    url: store,
                    source: Box::new(e),
                })?;
                Some(crate::upkeep::keep_store(
                    db.clone(),
                    host.handlers_by_id(),
                    leases,
                    retention,
                ))
            }
            // In memory: only the bound on tasks left waiting for input needs a sweep.
            None => retention
                .idle_interrupted
                .map(|idle| crate::upkeep::expire_idle_in_memory(in_memory, idle)),
        };
        let handlers = host.handlers();
        let runtimes: Vec<_> = handlers.iter().map(|h| h.runtime().clone()).collect();
        let on_signal = async move {
            shutdown.await;
            tracing::info!("shutting down: canceling running tasks, draining connections");
            // Running tasks end CANCELED, so open streams get a final event and close.
            for h in handlers {
                h.runtime().shutdown();
            }
        };
        let served = match grpc_listener {
            None => {
                a2a_server::serve_with_tls(listener, host.router(), on_signal, drain, limits, tls)
                    .await
            }
            Some(grpc_listener) => {
                let (stop, stopped) = tokio::sync::watch::channel(false);
                let signalled = async move {
                    on_signal.await;
                    let _ = stop.send(true);
                };
                let on_stop = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
                    let _ = rx.wait_for(|stopped| *stopped).await;
                };
                let http = a2a_server::serve_with_tls(
                    listener,
                    host.http_router(),
                    on_stop(stopped.clone()),
                    drain,
                    limits,
                    tls.clone(),
                );
                let grpc = a2a_server::serve_with_tls(
                    grpc_listener,
                    host.grpc_router(),
                    on_stop(stopped),
                    drain,
                    limits,
                    tls,
                );
                let (_, http, grpc) = tokio::join!(signalled, http, grpc);
                http.and(grpc)
            }
        };
        // Canceled executions get their grace period, then are aborted: wait for them, so
        // that each task's last state is written before the process retires from the store.
        for runtime in &runtimes {
            runtime.shutdown();
            runtime.stopped().await;
        }
        if let Some(upkeep) = upkeep {
            upkeep.abort();
        }
        if let Some(db) = &db
            && let Err(e) = db.retire().await
        {
            tracing::warn!(error = %e, "could not retire this process from the task store");
        }
        // SQLite: the write-ahead log goes into the database file, so that the file alone
        // (what users copy as a backup) holds every task.
        if let Some(db) = &db {
            match db.checkpoint().await {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    "the task store's write-ahead log could not be emptied at shutdown (a reader held it); the database file and its -wal file belong together"
                ),
                Err(e) => tracing::warn!(error = %e, "could not checkpoint the task store"),
            }
        }
        served.map_err(HostError::Serve)
    }
}
