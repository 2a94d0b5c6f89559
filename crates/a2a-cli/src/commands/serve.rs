//! `a2a serve`: host the built-in agents.

use std::net::SocketAddr;
use std::sync::Arc;

use a2a_host::builtin::{self, NAMES, SOLO_NAMES};
use a2a_host::config::{ConfiguredAgent, HostConfig};
use a2a_host::{AgentHost, HostAgent};
use a2a_server::store::{InMemoryTaskStore, InMemoryTaskStoreConfig, TaskStore};
use a2a_server::transport::jsonrpc::JsonRpcConfig;
use a2a_server::{
    Bindings, CardCompat, EventBus, HandlerConfig, InProcessBus, RequestHandler, RuntimeConfig,
    ServeOptions, TaskRuntime,
};
use a2a_store_sql::{LeaseConfig, NotifyHub, RetentionConfig, SqlTaskStore};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

mod policy;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CardCompatArg {
    /// Strict v1.0 card.
    Strict,
    /// v1.0 card plus the v0.3 fields.
    #[value(name = "v0.3")]
    V03,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The agents to serve, and host settings, from a TOML file (see `examples/agents.toml`);
    /// command-line options override its `[host]` settings.
    #[arg(long, value_name = "FILE", conflicts_with = "agent")]
    config: Option<std::path::PathBuf>,
    /// Address to listen on [default: 127.0.0.1].
    #[arg(long, env = "A2A_HOST")]
    host: Option<String>,
    /// Port to listen on (0 picks a free one) [default: 41241].
    #[arg(long, env = "A2A_PORT")]
    port: Option<u16>,
    /// Serve only this built-in agent, at the root (`/`).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(NAMES.iter().chain(&SOLO_NAMES)))]
    agent: Option<String>,
    /// Public base URL to advertise in agent cards (default: the address clients use).
    #[arg(long, env = "A2A_PUBLIC_URL")]
    public_url: Option<String>,
    /// Which card `/.well-known/agent-card.json` serves.
    #[arg(long, value_enum, default_value = "strict")]
    card_compat: CardCompatArg,
    /// Largest accepted request body, in bytes [default: 10485760].
    #[arg(long)]
    max_body_bytes: Option<usize>,
    /// Where tasks are kept: `sqlite:PATH` (a file, created on first start), `postgres://…`
    /// (several replicas can share it), or `memory` (lost on exit) [default: sqlite:a2a.db].
    #[arg(long, env = "A2A_STORE", value_name = "URL")]
    store: Option<String>,
    /// Seconds without a heartbeat after which a process is considered stopped and its
    /// SUBMITTED / WORKING tasks are failed (SQL stores).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    lease_expiry: f64,
    /// SQL stores: seconds a finished task is kept after its last change (0: forever).
    #[arg(long, default_value_t = 7.0 * 24.0 * 3600.0, value_name = "SECONDS")]
    retention: f64,
    /// Seconds a task may wait for input or authentication before it is canceled as
    /// expired (0: forever).
    #[arg(long, default_value_t = 24.0 * 3600.0, value_name = "SECONDS")]
    idle_expiry: f64,
    /// SQL stores: seconds between reads of the store by a quiet stream, to pick up what
    /// other processes wrote (0: never). On PostgreSQL, LISTEN/NOTIFY delivers those events
    /// at once and this read only covers notices lost while reconnecting.
    #[arg(long, value_name = "SECONDS")]
    store_poll: Option<f64>,
    /// With `--store memory`: terminal tasks kept per agent before the oldest are evicted.
    #[arg(long, default_value_t = 10_000)]
    max_terminal_tasks: usize,
    /// History messages returned when a request does not set historyLength (default: all).
    #[arg(long)]
    default_history_length: Option<usize>,
    /// Most history messages ever returned, whatever a request asks.
    #[arg(long)]
    max_history_length: Option<usize>,
    /// Bindings to serve and list in the cards, comma-separated: `jsonrpc`, `rest`, `grpc`
    /// [default: jsonrpc,rest,grpc].
    #[arg(long, value_name = "LIST")]
    bindings: Option<String>,
    /// Serve gRPC on this port instead of on `--port` (where it shares the port with HTTP,
    /// over HTTP/2); 0 picks a free one.
    #[arg(long, value_name = "PORT")]
    grpc_port: Option<u16>,
    /// The `host:port` the cards give for gRPC (default: the public URL's host, or the
    /// listen address, with the gRPC port).
    #[arg(long, value_name = "HOST:PORT")]
    grpc_address: Option<String>,
    /// Seconds to let open requests and streams finish after SIGINT/SIGTERM.
    #[arg(long, default_value_t = 10.0)]
    drain_seconds: f64,
    /// Seconds a connection has to send its first byte, its first 24 bytes (an HTTP/2
    /// preface), and each whole HTTP/1.1 request head (idle and half-sent connections are
    /// closed).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    header_read_timeout: f64,
    /// Seconds a request body has to arrive whole (a trickle is cut).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    body_read_timeout: f64,
    /// Seconds a blocked write may wait for the peer to read; a client that stops reading
    /// a stream is disconnected after it (the task goes on).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    write_timeout: f64,
    /// Seconds between HTTP/2 keep-alive pings; a peer that does not answer within as long
    /// again is dropped.
    #[arg(long, default_value_t = 20.0, value_name = "SECONDS")]
    http2_keepalive: f64,
    /// Most connections open at once; beyond it, new ones get 503 with Retry-After [default:
    /// the open-file limit, raised to its hard limit at start, less 64].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Largest request head (request line and headers) accepted, in bytes; beyond it HTTP/1.1
    /// answers 431.
    #[arg(long, default_value_t = 65536, value_name = "BYTES")]
    max_header_bytes: usize,
    /// Most requests handled at once; beyond it, new ones get 503 with Retry-After [default:
    /// no bound]. A blocking send counts until its task ends, a stream until it starts.
    #[arg(long, value_name = "N")]
    max_in_flight: Option<usize>,
    /// Most streams (SSE or gRPC) one caller (its principal, else its network: see
    /// --caller-ipv6-prefix) holds open at once; beyond it, a new stream gets a
    /// RESOURCE_EXHAUSTED error (HTTP 429) [default: no bound, since callers behind one
    /// proxy or NAT share an address].
    #[arg(long, value_name = "N")]
    max_streams_per_caller: Option<usize>,
    /// Most requests a second one caller (its principal, else its network: see
    /// --caller-ipv6-prefix) may make on average; beyond it, RESOURCE_EXHAUSTED (HTTP 429)
    /// [default: no bound].
    #[arg(long, value_name = "N")]
    rate_per_caller: Option<f64>,
    /// Unauthenticated IPv6 callers are told apart by this many leading bits of their
    /// address for the per-caller bounds (one host commonly holds a whole /64); IPv4
    /// callers by their address.
    #[arg(long, value_name = "BITS", default_value_t = 64)]
    caller_ipv6_prefix: u8,
    /// Requests one caller may make at once before --rate-per-caller applies [default: the
    /// rate, at least 1].
    #[arg(long, value_name = "N", requires = "rate_per_caller")]
    rate_burst: Option<f64>,
    /// Require a bearer token: `PRINCIPAL=TOKEN` accepts `Authorization: Bearer TOKEN` as
    /// PRINCIPAL, who then sees only its own tasks (repeat, or separate with commas; also
    /// `A2A_AUTH_TOKENS`). Without any credential, every caller sees every task.
    #[arg(
        long,
        value_name = "PRINCIPAL=TOKEN",
        value_delimiter = ',',
        env = "A2A_AUTH_TOKENS",
        hide_env_values = true
    )]
    auth_token: Vec<String>,
    /// Accept an API key: `PRINCIPAL=KEY` accepts `X-API-Key: KEY` as PRINCIPAL (repeat, or
    /// separate with commas; also `A2A_AUTH_API_KEYS`).
    #[arg(
        long,
        value_name = "PRINCIPAL=KEY",
        value_delimiter = ',',
        env = "A2A_AUTH_API_KEYS",
        hide_env_values = true
    )]
    auth_api_key: Vec<String>,
    /// Accept JWTs signed by a key of this JWK Set (`Authorization: Bearer <JWT>`); the
    /// token's `sub` is the principal.
    #[arg(long, value_name = "URL", env = "A2A_AUTH_JWKS_URL")]
    auth_jwks_url: Option<String>,
    /// The `iss` a JWT must carry.
    #[arg(long, value_name = "ISSUER", requires = "auth_jwks_url")]
    auth_jwt_issuer: Option<String>,
    /// The `aud` a JWT must carry.
    #[arg(long, value_name = "AUDIENCE", requires = "auth_jwks_url")]
    auth_jwt_audience: Option<String>,
    /// Clock skew allowed for a JWT's `exp` and `nbf`.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    auth_jwt_leeway: u64,
    /// Serve HTTPS (and gRPC over TLS) with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Sign every served agent card (JCS + JWS, ES256) and every push notification (a JWT
    /// in X-A2A-Notification-Signature) with this P-256 private key (PKCS#8 PEM); the public
    /// key is served at /.well-known/jwks.json, which each signature's `jku` names.
    #[arg(long, value_name = "FILE", alias = "card-signing-key")]
    signing_key: Option<std::path::PathBuf>,
    /// The key id (`kid`) of --signing-key.
    #[arg(
        long,
        value_name = "KID",
        default_value = "card-key-1",
        requires = "signing_key",
        alias = "card-signing-kid"
    )]
    signing_kid: String,
    /// Do not send push notifications (the agents' cards then say `pushNotifications:
    /// false`, and the push-config operations answer PushNotificationNotSupported).
    #[arg(long)]
    no_push: bool,
    /// A webhook host (name or address, as in its URL) push notifications may reach even
    /// though it is, or resolves to, a loopback, private or link-local address; repeat or
    /// separate with commas.
    #[arg(long, value_name = "HOST", value_delimiter = ',')]
    push_allow: Vec<String>,
    /// Let push notifications reach every private address (a network where every receiver
    /// is trusted).
    #[arg(long)]
    push_allow_private: bool,
    /// Do not serve `GET /metrics` (Prometheus text format: requests, latency, tasks by
    /// state, open streams, store and executor timings).
    #[arg(long)]
    no_metrics: bool,
}

/// `secs` as a duration; 0, negative or not a number mean "no limit".
fn positive_seconds(secs: f64) -> Option<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
}

/// How often a quiet stream reads a shared SQLite file for events other processes wrote.
const SQLITE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// The same on PostgreSQL, where LISTEN/NOTIFY carries those events and this read only
/// covers notices lost while the listener reconnects.
const POSTGRES_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// `url` without a password, for logs and banners.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// The database every agent's store lives in, with its cross-process bus on PostgreSQL
/// (`None`: memory).
async fn open_store(url: &str) -> anyhow::Result<Option<(SqlTaskStore, Option<NotifyHub>)>> {
    if url == "memory" {
        return Ok(None);
    }
    let opening = || format!("cannot open the task store {}", redacted(url));
    let db = SqlTaskStore::connect(url).await.with_context(opening)?;
    let hub = db.notify_hub().await.with_context(opening)?;
    Ok(Some((db, hub)))
}

/// The handler of one agent, and its store when that is in memory (for upkeep).
fn handler_for(
    agent: &ConfiguredAgent,
    db: Option<&(SqlTaskStore, Option<NotifyHub>)>,
    args: &ServeArgs,
    shared: policy::Shared,
) -> (Arc<RequestHandler>, Option<Arc<InMemoryTaskStore>>) {
    let mut in_memory = None;
    let store: Arc<dyn TaskStore> = match db {
        Some((db, _)) => Arc::new(db.scoped(&agent.id)),
        None => {
            let store = Arc::new(InMemoryTaskStore::new(
                InMemoryTaskStoreConfig::default().with_max_terminal_tasks(args.max_terminal_tasks),
            ));
            in_memory = Some(store.clone());
            store
        }
    };
    let mut config = RuntimeConfig::default();
    let bus: Arc<dyn EventBus> = match db {
        Some((_, Some(hub))) => {
            config.store_poll = Some(POSTGRES_POLL);
            Arc::new(hub.bus(&agent.id))
        }
        Some((_, None)) => {
            // Other processes may share the file: follow their events through it.
            config.store_poll = Some(SQLITE_POLL);
            Arc::new(InProcessBus::default())
        }
        None => Arc::new(InProcessBus::default()),
    };
    if db.is_some()
        && let Some(secs) = args.store_poll
    {
        config.store_poll = positive_seconds(secs);
    }
    let runtime = TaskRuntime::new(agent.executor.clone(), store, bus, config);
    let mut config = HandlerConfig::default();
    config.default_history_length = args.default_history_length;
    config.max_history_length = args.max_history_length;
    config.streams_per_caller = shared.streams;
    config.rate_per_caller = shared.rate;
    config.push = shared.push;
    config.auth = shared.auth;
    let mut handler = RequestHandler::new(runtime, agent.card.clone(), config);
    if let Some(extended) = &agent.extended_card {
        handler = handler.with_extended_card(extended.clone());
    }
    (Arc::new(handler), in_memory)
}

/// The settings in effect: the command line's, else the config file's, else the defaults.
struct Settings {
    listen_host: String,
    port: u16,
    store: String,
    public_url: Option<String>,
    bindings: String,
    max_body_bytes: usize,
    grpc_port: Option<u16>,
}

impl Settings {
    fn resolve(args: &ServeArgs, file: Option<&HostConfig>) -> Self {
        let f = file.map(|c| c.host.clone()).unwrap_or_default();
        Self {
            listen_host: args
                .host
                .clone()
                .or(f.listen_host)
                .unwrap_or_else(|| "127.0.0.1".into()),
            port: args.port.or(f.port).unwrap_or(41241),
            store: args
                .store
                .clone()
                .or(f.store)
                .unwrap_or_else(|| "sqlite:a2a.db".into()),
            public_url: args.public_url.clone().or(f.public_url),
            bindings: args
                .bindings
                .clone()
                .or(f.bindings.map(|b| b.join(",")))
                .unwrap_or_else(|| "jsonrpc,rest,grpc".into()),
            max_body_bytes: args
                .max_body_bytes
                .or(f.max_body_bytes)
                .unwrap_or(10 * 1024 * 1024),
            grpc_port: args.grpc_port.or(f.grpc_port),
        }
    }
}

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let file = match &args.config {
        // The error names the file, the line and the reason; nothing to add.
        Some(path) => Some(HostConfig::load(path).map_err(|e| anyhow::anyhow!("{e}"))?),
        None => None,
    };
    let set = Settings::resolve(&args, file.as_ref());
    // Everything that can refuse the flags does so before the banner announces a server.
    let limits = policy::connection_limits(&args)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(a2a_server::Tls::from_pem_files(cert, key).context("--tls-cert / --tls-key")?)
        }
        _ => None,
    };
    let mut options = ServeOptions::default();
    options.public_url = set.public_url.clone();
    options.metrics = !args.no_metrics;
    if let Some(path) = &args.signing_key {
        let pem =
            std::fs::read(path).with_context(|| format!("--signing-key {}", path.display()))?;
        options.card_signer = Some(
            a2a_server::card_signing::CardSigner::from_ec_pem(&pem, &args.signing_kid)
                .with_context(|| format!("--signing-key {}", path.display()))?,
        );
    }
    options.card_compat = match args.card_compat {
        CardCompatArg::Strict => CardCompat::Strict,
        CardCompatArg::V03 => CardCompat::V03Merged,
    };
    let mut jsonrpc = JsonRpcConfig::default();
    jsonrpc.max_body_bytes = set.max_body_bytes;
    options.jsonrpc = jsonrpc;
    options.bindings = Bindings::parse_list(&set.bindings).with_context(|| {
        format!(
            "--bindings {:?}: name jsonrpc, rest and grpc, comma-separated",
            set.bindings
        )
    })?;
    if !(options.bindings.jsonrpc || options.bindings.http_json || options.bindings.grpc) {
        bail!("--bindings: serve at least one binding");
    }
    if set.grpc_port.is_some() && !options.bindings.grpc {
        bail!("--grpc-port: gRPC is switched off by --bindings");
    }
    // A separate gRPC port is bound before the cards are built, so that they can name it.
    let grpc_listener = match set.grpc_port {
        Some(port) => {
            let listener = tokio::net::TcpListener::bind((set.listen_host.as_str(), port))
                .await
                .with_context(|| format!("cannot listen for gRPC on {}:{port}", set.listen_host))?;
            let bound = listener.local_addr()?;
            let host = set
                .public_url
                .as_deref()
                .and_then(|u| u.parse::<http::Uri>().ok())
                .and_then(|u| u.host().map(str::to_owned))
                .unwrap_or_else(|| bound.ip().to_string());
            options.grpc_address = Some(format!("{host}:{}", bound.port()));
            Some(listener)
        }
        None => None,
    };
    if let Some(address) = &args.grpc_address {
        options.grpc_address = Some(address.clone());
    }
    let grpc_banner = grpc_listener.as_ref().and(options.grpc_address.clone());

    let db = open_store(&set.store).await?;
    let signing_key = options.card_signer.clone();
    let mut host = AgentHost::new(options);
    let agents: Vec<ConfiguredAgent> = match (&file, &args.agent) {
        (Some(config), _) => {
            let base = args
                .config
                .as_deref()
                .and_then(std::path::Path::parent)
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            let base = std::fs::canonicalize(if base.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                &base
            })?;
            config.build_agents(&base)
        }
        (None, Some(name)) => vec![builtin::builtin(name).context("unknown agent")?.into()],
        (None, None) => NAMES
            .iter()
            .filter_map(|n| builtin::builtin(n))
            .map(Into::into)
            .collect(),
    };
    if let Some(config) = &file {
        let off = config.switched_off();
        if !off.is_empty() {
            eprintln!("a2a: A2A is switched off for {}", off.join(", "));
        }
    }
    if agents.is_empty() && file.as_ref().is_none_or(|c| c.agents.is_empty()) {
        bail!("no agents to serve: the config file declares none ([[agents]])");
    }
    // Bound before the agents are built: push signatures name the address in `jku`.
    let addr: SocketAddr = format!("{}:{}", set.listen_host, set.port)
        .parse()
        .or_else(|_| {
            std::net::ToSocketAddrs::to_socket_addrs(&(set.listen_host.as_str(), set.port))
                .ok()
                .and_then(|mut a| a.next())
                .context("no address")
        })
        .with_context(|| format!("invalid listen address {}:{}", set.listen_host, set.port))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    let base = set.public_url.clone().unwrap_or_else(|| {
        let scheme = if args.tls_cert.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{local}")
    });
    let names: Vec<String> = agents.iter().map(|a| a.id.clone()).collect();
    let mut in_memory = Vec::new();
    // Notifications name where the key is only when the address is one a receiver can
    // reach (not 0.0.0.0 or [::]); else receivers take the key set the card's signature
    // names, or are given it.
    let reachable = set.public_url.is_some() || !local.ip().is_unspecified();
    let push_signer = signing_key.map(|key| {
        let jku = reachable.then(|| {
            format!(
                "{}{}",
                base.trim_end_matches('/'),
                a2a_server::card_signing::JWKS_PATH
            )
        });
        a2a_server::push::PushSigner::new(key, jku)
    });
    let shared = policy::shared(&args, push_signer)?;
    if let (Some((db, _)), Some(auth)) = (&db, &shared.auth) {
        // Tasks stored by a version that named owners without their source are given the
        // principal the configured credentials vouch for.
        let auth = auth.clone();
        db.qualify_legacy_owners(&move |name| {
            auth.legacy_principal(name).map(|p| p.id().to_owned())
        })
        .await
        .context("cannot qualify the owners of tasks stored by an earlier version")?;
    }
    for agent in &agents {
        let (handler, memory) = handler_for(agent, db.as_ref(), &args, shared.clone());
        in_memory.extend(memory.map(|store| (store, handler.clone())));
        let hosted = HostAgent {
            id: agent.id.clone(),
            handler,
        };
        host = if args.agent.is_some() {
            host.root(hosted)
        } else {
            host.agent(hosted)
        };
    }

    // Write the banner without panicking if nobody reads stdout any more.
    let mut banner = match &args.agent {
        Some(name) => format!(
            "a2a: serving agent {name} at {base}/ (tasks in {})\n",
            redacted(&set.store)
        ),
        None => format!(
            "a2a: serving {} agents on {base} (tasks in {})\n",
            names.len(),
            redacted(&set.store)
        ),
    };
    if let Some(address) = &grpc_banner {
        banner.push_str(&format!("a2a: gRPC at {address}\n"));
    }
    if args.agent.is_none() {
        for name in &names {
            banner.push_str(&format!("  {name:<12} {base}/a2a/{name}\n"));
        }
    }
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    }
    let upkeep = match &db {
        Some((db, _)) => {
            let expiry = std::time::Duration::try_from_secs_f64(args.lease_expiry)
                .ok()
                .filter(|d| !d.is_zero())
                .context("--lease-expiry must be a positive number of seconds")?;
            // Beat once before serving, so no task of ours is ever without a live owner.
            db.heartbeat()
                .await
                .context("cannot write to the task store")?;
            let mut retention = RetentionConfig::default();
            retention.terminal = positive_seconds(args.retention);
            retention.idle_interrupted = positive_seconds(args.idle_expiry);
            Some(a2a_host::upkeep::keep_store(
                db.clone(),
                host.handlers_by_id(),
                LeaseConfig::with_expiry(expiry),
                retention,
            ))
        }
        // In memory: only the bound on tasks left waiting for input needs a sweep.
        None => positive_seconds(args.idle_expiry)
            .map(|idle| a2a_host::upkeep::expire_idle_in_memory(in_memory, idle)),
    };
    let handlers = host.handlers();
    let runtimes: Vec<_> = handlers.iter().map(|h| h.runtime().clone()).collect();
    let on_signal = async move {
        a2a_server::shutdown_signal().await;
        eprintln!("a2a: shutting down: canceling running tasks, draining connections");
        // Running tasks end CANCELED, so open streams get a final event and close.
        for h in handlers {
            h.runtime().shutdown();
        }
    };
    let drain = std::time::Duration::from_secs_f64(args.drain_seconds.max(0.0));
    match grpc_listener {
        None => {
            a2a_server::serve_with_tls(listener, host.router(), on_signal, drain, limits, tls)
                .await?;
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
            http?;
            grpc?;
        }
    }
    // Canceled executions get their grace period, then are aborted: wait for them, so that
    // each task's last state is written before the process retires from the store.
    for runtime in &runtimes {
        runtime.shutdown();
        runtime.stopped().await;
    }
    if let Some(upkeep) = upkeep {
        upkeep.abort();
    }
    if let Some((db, _)) = &db {
        // A clean exit: our running tasks were canceled, so nothing of ours is abandoned.
        if let Err(e) = db.retire().await {
            tracing::warn!(error = %e, "could not retire this process from the task store");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_stay_out_of_banners() {
        assert_eq!(
            super::redacted("postgres://app:s3cret@db:5432/a2a"),
            "postgres://app:***@db:5432/a2a"
        );
        assert_eq!(super::redacted("sqlite:a2a.db"), "sqlite:a2a.db");
    }
}
