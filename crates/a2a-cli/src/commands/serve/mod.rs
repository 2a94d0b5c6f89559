//! `a2a serve`: host the built-in agents.

use std::net::SocketAddr;

use a2a_host::builtin::{self, NAMES, SOLO_NAMES};
use a2a_host::config::{ConfiguredAgent, HostConfig};
use a2a_host::{BoundHost, HostBuilder, HostError};
use a2a_server::transport::jsonrpc::JsonRpcConfig;
use a2a_server::{Bindings, CardCompat, ServeOptions};
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
    /// Address to listen on [default: 127.0.0.1].
    #[arg(help_heading = "Listening", long, env = "A2A_HOST")]
    host: Option<String>,
    /// Port to listen on (0 picks a free one) [default: 41241].
    #[arg(help_heading = "Listening", long, env = "A2A_PORT")]
    port: Option<u16>,
    /// Public base URL to advertise in agent cards (default: the address clients use).
    #[arg(help_heading = "Listening", long, env = "A2A_PUBLIC_URL")]
    public_url: Option<String>,
    /// Bindings to serve and list in the cards, comma-separated: `jsonrpc`, `rest`, `grpc`
    /// [default: jsonrpc,rest,grpc].
    #[arg(help_heading = "Listening", long, value_name = "LIST")]
    bindings: Option<String>,
    /// Serve gRPC on this port instead of on `--port` (where it shares the port with HTTP,
    /// over HTTP/2); 0 picks a free one.
    #[arg(help_heading = "Listening", long, value_name = "PORT")]
    grpc_port: Option<u16>,
    /// The `host:port` the cards give for gRPC (default: the public URL's host, or the
    /// listen address, with the gRPC port).
    #[arg(help_heading = "Listening", long, value_name = "HOST:PORT")]
    grpc_address: Option<String>,
    /// The agents to serve, and host settings, from a TOML file (see `examples/agents.toml`);
    /// command-line options override its `[host]` settings.
    #[arg(
        help_heading = "Agents and cards",
        long,
        value_name = "FILE",
        conflicts_with = "agent"
    )]
    config: Option<std::path::PathBuf>,
    /// Serve only this built-in agent, at the root (`/`).
    #[arg(help_heading = "Agents and cards", long, value_parser = clap::builder::PossibleValuesParser::new(NAMES.iter().chain(&SOLO_NAMES)))]
    agent: Option<String>,
    /// Which card `/.well-known/agent-card.json` serves.
    #[arg(
        help_heading = "Agents and cards",
        long,
        value_enum,
        default_value = "strict"
    )]
    card_compat: CardCompatArg,
    /// Sign every served agent card (JCS + JWS, ES256) and every push notification (a JWT
    /// in X-A2A-Notification-Signature) with this P-256 private key (PKCS#8 PEM); the public
    /// key is served at /.well-known/jwks.json, which each signature's `jku` names.
    #[arg(
        help_heading = "Agents and cards",
        long,
        value_name = "FILE",
        alias = "card-signing-key"
    )]
    signing_key: Option<std::path::PathBuf>,
    /// The key id (`kid`) of --signing-key.
    #[arg(
        help_heading = "Agents and cards",
        long,
        value_name = "KID",
        default_value = "card-key-1",
        requires = "signing_key",
        alias = "card-signing-kid"
    )]
    signing_kid: String,
    /// History messages returned when a request does not set historyLength (default: all).
    #[arg(help_heading = "Agents and cards", long)]
    default_history_length: Option<usize>,
    /// Most history messages ever returned, whatever a request asks.
    #[arg(help_heading = "Agents and cards", long)]
    max_history_length: Option<usize>,
    /// Where tasks are kept: `sqlite:PATH` (a file, created on first start), `postgres://…`
    /// (several replicas can share it), or `memory` (lost on exit) [default: sqlite:a2a.db].
    #[arg(help_heading = "Store", long, env = "A2A_STORE", value_name = "URL")]
    store: Option<String>,
    /// Seconds without a heartbeat after which a process is considered stopped and its
    /// SUBMITTED / WORKING tasks are failed (SQL stores).
    #[arg(
        help_heading = "Store",
        long,
        default_value_t = 10.0,
        value_name = "SECONDS"
    )]
    lease_expiry: f64,
    /// SQL stores: seconds a finished task is kept after its last change (0: forever).
    #[arg(help_heading = "Store", long, default_value_t = 7.0 * 24.0 * 3600.0, value_name = "SECONDS")]
    retention: f64,
    /// Seconds a task may wait for input or authentication before it is canceled as
    /// expired (0: forever).
    #[arg(help_heading = "Store", long, default_value_t = 24.0 * 3600.0, value_name = "SECONDS")]
    idle_expiry: f64,
    /// SQL stores: seconds between reads of the store by a quiet stream, to pick up what
    /// other processes wrote (0: never). On PostgreSQL, LISTEN/NOTIFY delivers those events
    /// at once and this read only covers notices lost while reconnecting.
    #[arg(help_heading = "Store", long, value_name = "SECONDS")]
    store_poll: Option<f64>,
    /// With `--store memory`: terminal tasks kept per agent before the oldest are evicted.
    #[arg(help_heading = "Store", long, default_value_t = 10_000)]
    max_terminal_tasks: usize,
    /// Largest accepted request body, in bytes [default: 10485760].
    #[arg(help_heading = "Limits and timeouts", long)]
    max_body_bytes: Option<usize>,
    /// Seconds to let open requests and streams finish after SIGINT/SIGTERM.
    #[arg(help_heading = "Limits and timeouts", long, default_value_t = 10.0)]
    drain_seconds: f64,
    /// Seconds a connection has to send its first byte, its first 24 bytes (an HTTP/2
    /// preface), and each whole HTTP/1.1 request head (idle and half-sent connections are
    /// closed).
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        default_value_t = 10.0,
        value_name = "SECONDS"
    )]
    header_read_timeout: f64,
    /// Seconds a request body has to arrive whole (a trickle is cut).
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        default_value_t = 30.0,
        value_name = "SECONDS"
    )]
    body_read_timeout: f64,
    /// Seconds a blocked write may wait for the peer to read; a client that stops reading
    /// a stream is disconnected after it (the task goes on).
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        default_value_t = 30.0,
        value_name = "SECONDS"
    )]
    write_timeout: f64,
    /// Seconds between HTTP/2 keep-alive pings; a peer that does not answer within as long
    /// again is dropped.
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        default_value_t = 20.0,
        value_name = "SECONDS"
    )]
    http2_keepalive: f64,
    /// Most connections open at once; beyond it, new ones get 503 with Retry-After [default:
    /// the open-file limit, raised to its hard limit at start, less 64].
    #[arg(help_heading = "Limits and timeouts", long, value_name = "N")]
    max_connections: Option<usize>,
    /// Largest request head (request line and headers) accepted, in bytes; beyond it HTTP/1.1
    /// answers 431.
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        default_value_t = 65536,
        value_name = "BYTES"
    )]
    max_header_bytes: usize,
    /// Most requests handled at once; beyond it, new ones get 503 with Retry-After [default:
    /// no bound]. A blocking send counts until its task ends, a stream until it starts.
    #[arg(help_heading = "Limits and timeouts", long, value_name = "N")]
    max_in_flight: Option<usize>,
    /// Most streams (SSE or gRPC) one caller (its principal, else its network: see
    /// --caller-ipv6-prefix) holds open at once; beyond it, a new stream gets a
    /// RESOURCE_EXHAUSTED error (HTTP 429) [default: no bound, since callers behind one
    /// proxy or NAT share an address].
    #[arg(help_heading = "Limits and timeouts", long, value_name = "N")]
    max_streams_per_caller: Option<usize>,
    /// Most requests a second one caller (its principal, else its network: see
    /// --caller-ipv6-prefix) may make on average; beyond it, RESOURCE_EXHAUSTED (HTTP 429)
    /// [default: no bound].
    #[arg(help_heading = "Limits and timeouts", long, value_name = "N")]
    rate_per_caller: Option<f64>,
    /// Requests one caller may make at once before --rate-per-caller applies [default: the
    /// rate, at least 1].
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        value_name = "N",
        requires = "rate_per_caller"
    )]
    rate_burst: Option<f64>,
    /// Unauthenticated IPv6 callers are told apart by this many leading bits of their
    /// address for the per-caller bounds (one host commonly holds a whole /64); IPv4
    /// callers by their address.
    #[arg(
        help_heading = "Limits and timeouts",
        long,
        value_name = "BITS",
        default_value_t = 64
    )]
    caller_ipv6_prefix: u8,
    /// Require a bearer token: `PRINCIPAL=TOKEN` accepts `Authorization: Bearer TOKEN` as
    /// PRINCIPAL, who then sees only its own tasks (repeat, or separate with commas; also
    /// `A2A_AUTH_TOKENS`). Without any credential, every caller sees every task.
    #[arg(
        help_heading = "Authentication and TLS",
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
        help_heading = "Authentication and TLS",
        long,
        value_name = "PRINCIPAL=KEY",
        value_delimiter = ',',
        env = "A2A_AUTH_API_KEYS",
        hide_env_values = true
    )]
    auth_api_key: Vec<String>,
    /// Accept JWTs signed by a key of this JWK Set (`Authorization: Bearer <JWT>`); the
    /// token's `sub` is the principal.
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "URL",
        env = "A2A_AUTH_JWKS_URL"
    )]
    auth_jwks_url: Option<String>,
    /// The `iss` a JWT must carry.
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "ISSUER",
        requires = "auth_jwks_url"
    )]
    auth_jwt_issuer: Option<String>,
    /// The `aud` a JWT must carry.
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "AUDIENCE",
        requires = "auth_jwks_url"
    )]
    auth_jwt_audience: Option<String>,
    /// Clock skew allowed for a JWT's `exp` and `nbf`.
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "SECONDS",
        default_value_t = 60
    )]
    auth_jwt_leeway: u64,
    /// Serve HTTPS (and gRPC over TLS) with this certificate chain (PEM); needs --tls-key.
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "FILE",
        requires = "tls_key"
    )]
    tls_cert: Option<std::path::PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(
        help_heading = "Authentication and TLS",
        long,
        value_name = "FILE",
        requires = "tls_cert"
    )]
    tls_key: Option<std::path::PathBuf>,
    /// Do not send push notifications (the agents' cards then say `pushNotifications:
    /// false`, and the push-config operations answer PushNotificationNotSupported).
    #[arg(help_heading = "Push notifications", long)]
    no_push: bool,
    /// A webhook host (name or address, as in its URL) push notifications may reach even
    /// though it is, or resolves to, a loopback, private or link-local address; repeat or
    /// separate with commas.
    #[arg(
        help_heading = "Push notifications",
        long,
        value_name = "HOST",
        value_delimiter = ','
    )]
    push_allow: Vec<String>,
    /// Let push notifications reach every private address (a network where every receiver
    /// is trusted).
    #[arg(help_heading = "Push notifications", long)]
    push_allow_private: bool,
    /// Do not serve `GET /metrics` (Prometheus text format: requests, latency, tasks by
    /// state, open streams, store and executor timings).
    #[arg(help_heading = "Telemetry and logging", long)]
    no_metrics: bool,
    /// Do not serve the inspector, the web console at /inspector/ (also what a browser gets
    /// at /).
    #[arg(help_heading = "Inspector", long)]
    no_inspector: bool,
    /// In the inspector, link each request's trace: a URL with {trace_id} in it (say
    /// http://localhost:16686/trace/{trace_id} for Jaeger).
    #[arg(help_heading = "Inspector", long, value_name = "TEMPLATE")]
    trace_url: Option<String>,
}

/// `secs` as a duration; 0, negative or not a number mean "no limit".
fn positive_seconds(secs: f64) -> Option<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
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
    let mut builder = HostBuilder::new()
        .store(&set.store)
        .limits(limits)
        .history_length(args.default_history_length, args.max_history_length)
        .max_terminal_tasks(args.max_terminal_tasks)
        .inspector(!args.no_inspector)
        .trace_url(args.trace_url.clone())
        .drain(std::time::Duration::from_secs_f64(
            args.drain_seconds.max(0.0),
        ));
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        builder = builder
            .tls(a2a_server::Tls::from_pem_files(cert, key).context("--tls-cert / --tls-key")?);
    }
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
    if let Some(port) = set.grpc_port {
        let listener = tokio::net::TcpListener::bind((set.listen_host.as_str(), port))
            .await
            .with_context(|| format!("cannot listen for gRPC on {}:{port}", set.listen_host))?;
        builder = builder.grpc_listener(listener);
    }
    options.grpc_address = args.grpc_address.clone();
    builder = builder.options(options);
    builder = policy::apply(builder, &args)?;

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
    for agent in agents {
        builder = builder.agent(agent);
    }
    if args.agent.is_some() {
        builder = builder.at_root();
    }
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
    let host = builder.bind_on(listener).await.map_err(|e| match e {
        HostError::Store { .. } => anyhow::Error::new(e).context("cannot start"),
        e => anyhow::Error::new(e),
    })?;
    print_banner(&host, args.agent.as_deref(), !args.no_inspector);
    host.serve(async {
        a2a_server::shutdown_signal().await;
        eprintln!("a2a: shutting down: canceling running tasks, draining connections");
    })
    .await?;
    Ok(())
}

/// Writes the banner (what is served where) without panicking if nobody reads stdout any
/// more.
fn print_banner(host: &BoundHost, root_agent: Option<&str>, inspector: bool) {
    let base = host.base_url();
    let urls = host.agent_urls();
    let mut banner = match root_agent {
        Some(name) => format!(
            "a2a: serving agent {name} at {base}/ (tasks in {})\n",
            host.store()
        ),
        None => format!(
            "a2a: serving {} agents on {base} (tasks in {})\n",
            urls.len(),
            host.store()
        ),
    };
    if let Some(address) = host.grpc_address() {
        banner.push_str(&format!("a2a: gRPC at {address}\n"));
    }
    if root_agent.is_none() {
        for (name, url) in &urls {
            banner.push_str(&format!("  {name:<12} {url}\n"));
        }
        if inspector {
            banner.push_str(&format!(
                "a2a: inspector (web console) at {base}/inspector/\n"
            ));
        }
    }
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_stay_out_of_banners() {
        assert_eq!(
            a2a_host::redacted("postgres://app:s3cret@db:5432/a2a"),
            "postgres://app:***@db:5432/a2a"
        );
        assert_eq!(a2a_host::redacted("sqlite:a2a.db"), "sqlite:a2a.db");
    }
}
