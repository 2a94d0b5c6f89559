//! Assembling agents into an axum router and serving it.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;

pub use crate::bindings::Bindings;
use crate::handler::RequestHandler;
use crate::listen::{ConnectionLimits, DeadlineBody};
use crate::transport::card::{self, CardCompat, CardEndpoint};
use crate::transport::jsonrpc::{self, JsonRpcConfig, JsonRpcEndpoint};
use crate::transport::rest::{RestEndpoint, rest_routes};

/// How agents are exposed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// Public base URL (`https://agents.example.com`) to advertise in cards; default: the
    /// address clients use to reach the server.
    pub public_url: Option<String>,
    /// Which card `/.well-known/agent-card.json` serves.
    pub card_compat: CardCompat,
    /// JSON-RPC limits (HTTP+JSON and gRPC requests have the same size limit).
    pub jsonrpc: JsonRpcConfig,
    /// Which bindings are served and listed in the cards.
    pub bindings: Bindings,
    /// The `host:port` to advertise for gRPC (default: the host and port of the public URL,
    /// or of the address clients use). Set it when gRPC is served on a port of its own.
    pub grpc_address: Option<String>,
    /// Serve the process's metrics at `GET /metrics` (Prometheus text format; on by default).
    pub metrics: bool,
    /// Sign the served cards (spec §8.4) and publish the key at
    /// [`JWKS_PATH`](crate::card_signing::JWKS_PATH) (see [`jwks_routes`]).
    pub card_signer: Option<Arc<crate::card_signing::CardSigner>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            public_url: None,
            card_compat: CardCompat::default(),
            jsonrpc: JsonRpcConfig::default(),
            bindings: Bindings::default(),
            grpc_address: None,
            metrics: true,
            card_signer: None,
        }
    }
}

/// `GET /.well-known/jwks.json`: the key that signs the cards.
pub fn jwks_routes(signer: Arc<crate::card_signing::CardSigner>) -> Router {
    let body = signer.jwks().to_string();
    Router::new().route(
        crate::card_signing::JWKS_PATH,
        get(move || {
            let body = body.clone();
            async move {
                (
                    [
                        (axum::http::header::CONTENT_TYPE, "application/jwk-set+json"),
                        (axum::http::header::CACHE_CONTROL, "public, max-age=300"),
                    ],
                    body,
                )
            }
        }),
    )
}

/// `GET /metrics`: the process's [metrics](crate::metrics) in the Prometheus text format.
pub fn metrics_routes() -> Router {
    Router::new().route("/metrics", get(metrics))
}

async fn metrics() -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )],
        crate::metrics::global().encode(),
    )
        .into_response()
}

/// `GET /healthz` (liveness: the process answers, always 200) and `GET /readyz` (readiness:
/// 200 while every store of `stores` is [reachable](a2a_runtime::store::TaskStore::reachable), else
/// 503 naming what is not), for load balancers and orchestrators. Both are plain text.
pub fn health_routes(stores: Vec<Arc<dyn a2a_runtime::store::TaskStore>>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let ready = stores.iter().all(|s| s.reachable());
                async move {
                    if ready {
                        (axum::http::StatusCode::OK, "ready\n").into_response()
                    } else {
                        (
                            axum::http::StatusCode::SERVICE_UNAVAILABLE,
                            [(axum::http::header::RETRY_AFTER, "1")],
                            "not ready: the task store cannot be reached\n",
                        )
                            .into_response()
                    }
                }
            }),
        )
}

/// The HTTP binding routes of one agent mounted at `path` (`""` for the root, else like
/// `/a2a/echo`): JSON-RPC at the path itself (with or without a trailing slash) and HTTP+JSON
/// under it (`path/message:send`, …); and the endpoint that serves its cards.
///
/// gRPC has one path per method for the whole server, so its routes are not here: add
/// [`grpc_routes`] for all agents at once ([`A2aServer`](crate::A2aServer) and the host do).
pub fn agent_rpc_routes(
    handler: Arc<RequestHandler>,
    path: &str,
    opts: &ServeOptions,
) -> (Router, Arc<CardEndpoint>) {
    let path = path.trim_end_matches('/');
    let card = Arc::new(
        CardEndpoint::new(
            handler.card().clone(),
            path,
            opts.public_url.clone(),
            opts.card_compat,
        )
        .with_bindings(opts.bindings, opts.grpc_address.clone())
        .with_signer(opts.card_signer.clone()),
    );
    let auth = handler.authenticator().cloned();
    let mut router = Router::new();
    if opts.bindings.jsonrpc {
        let rpc = Arc::new(JsonRpcEndpoint::new(handler.clone(), opts.jsonrpc));
        let endpoint = || post(jsonrpc::handle).get(post_only);
        let mut routes = Router::new().route(&format!("{path}/"), endpoint());
        if !path.is_empty() {
            routes = routes.route(path, endpoint());
        }
        router = router.merge(routes.with_state(rpc));
    }
    if opts.bindings.http_json {
        let rest = Arc::new(RestEndpoint::new(handler, opts.jsonrpc));
        let mut routes = rest_routes(rest, path);
        if let Some(auth) = auth {
            // Credentials are checked before a body is read; cards stay public. (The
            // JSON-RPC endpoint checks them itself.)
            let gate = Arc::new(crate::auth::Gate { auth });
            routes = routes.layer(crate::auth::GateLayer(gate));
        }
        router = router.merge(routes);
    }
    (router, card)
}

/// The gRPC service for every agent of a server, each given with the path it is mounted at
/// (its gRPC `tenant` is that path without slashes; see [`grpc::tenant_of`]). Empty when
/// `opts` switches gRPC off or the `grpc` feature is not built.
///
/// [`grpc::tenant_of`]: crate::transport::grpc::tenant_of
pub fn grpc_routes<'a>(
    agents: impl IntoIterator<Item = (&'a str, Arc<RequestHandler>)>,
    opts: &ServeOptions,
) -> Router {
    #[cfg(feature = "grpc")]
    if opts.bindings.grpc {
        let mut endpoint = crate::transport::grpc::GrpcEndpoint::new()
            .max_message_bytes(opts.jsonrpc.max_body_bytes);
        for (path, handler) in agents {
            endpoint = endpoint.agent(path, handler);
        }
        return endpoint.routes();
    }
    let _ = (agents.into_iter().count(), opts);
    Router::new()
}

/// The card routes under `path`: `path/.well-known/agent-card.json` (v1.0, or merged) and
/// the legacy `path/.well-known/agent.json` (v0.3).
pub fn card_routes(card: Arc<CardEndpoint>, path: &str) -> Router {
    let path = path.trim_end_matches('/');
    Router::new()
        .route(
            &format!("{path}/.well-known/agent-card.json"),
            get(card::agent_card),
        )
        .route(
            &format!("{path}/.well-known/agent.json"),
            get(card::legacy_agent_card),
        )
        .with_state(card)
}

/// Every route of one agent mounted at `path`: its bindings (gRPC included) and its cards.
/// To serve several agents on one server, combine [`agent_rpc_routes`] and [`card_routes`]
/// of each with one [`grpc_routes`] for all: gRPC paths belong to the whole server.
pub fn agent_routes(handler: Arc<RequestHandler>, path: &str, opts: &ServeOptions) -> Router {
    let (rpc, card) = agent_rpc_routes(handler.clone(), path, opts);
    rpc.merge(card_routes(card, path))
        .merge(grpc_routes([(path, handler)], opts))
}

/// `GET` on a JSON-RPC endpoint: a JSON 405 that says what to do instead.
async fn post_only(uri: Uri) -> Response {
    let path = uri.path().trim_end_matches('/');
    let body = serde_json::json!({
        "error": {
            "code": 405,
            "status": "METHOD_NOT_ALLOWED",
            "message": format!(
                "this is an A2A JSON-RPC endpoint: POST a JSON-RPC request here; the agent card is at {path}/.well-known/agent-card.json"
            ),
        }
    });
    let mut resp = (StatusCode::METHOD_NOT_ALLOWED, axum::Json(body)).into_response();
    resp.headers_mut().insert(
        axum::http::header::ALLOW,
        axum::http::HeaderValue::from_static("POST"),
    );
    resp
}

/// A JSON 404 for unknown paths; for a gRPC request (one nothing serves here, or gRPC is
/// switched off), the gRPC answer `UNIMPLEMENTED`.
pub async fn not_found(uri: Uri, headers: axum::http::HeaderMap) -> Response {
    let is_grpc = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"));
    if is_grpc {
        return grpc_unimplemented(uri.path());
    }
    let body = serde_json::json!({
        "error": { "code": 404, "status": "NOT_FOUND", "message": format!("no A2A endpoint at {}", uri.path()) }
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

/// A trailers-only gRPC response with status 12 (`UNIMPLEMENTED`).
fn grpc_unimplemented(path: &str) -> Response {
    use axum::http::HeaderValue;
    let mut resp = StatusCode::OK.into_response();
    let h = resp.headers_mut();
    h.insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    h.insert("grpc-status", HeaderValue::from_static("12"));
    // `grpc-message` is percent-encoded; the path's own characters are all safe here.
    let message = format!("no gRPC method {path} on this server").replace(' ', "%20");
    if let Ok(v) = HeaderValue::from_str(&message) {
        h.insert("grpc-message", v);
    }
    resp
}

/// Serves `router` on `listener` with `TCP_NODELAY` on every connection, a JSON 404
/// fallback, panics turned into 500s, until `shutdown` resolves; then stops accepting and
/// lets open requests and streams finish for up to `drain` before returning.
pub async fn serve_with_drain(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    drain: std::time::Duration,
) -> std::io::Result<()> {
    serve_with_limits(
        listener,
        router,
        shutdown,
        drain,
        ConnectionLimits::default(),
    )
    .await
}

/// [`serve_with_drain`] within `limits`: deadlines on each phase of a connection, a bound on
/// open connections (see [`ConnectionLimits`]).
pub async fn serve_with_limits(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    drain: std::time::Duration,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    serve_with_tls(listener, router, shutdown, drain, limits, None).await
}

/// [`serve_with_limits`], over TLS when `tls` is given (HTTP/2 and HTTP/1.1 by ALPN, gRPC
/// included).
pub async fn serve_with_tls(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    drain: std::time::Duration,
    limits: ConnectionLimits,
    tls: Option<crate::listen::Tls>,
) -> std::io::Result<()> {
    let body_timeout = limits.body_read_timeout;
    // The panic guard and the body deadline wrap the router once, as the service every
    // request reaches first: `Router::layer` would wrap each route instead, a boxed service
    // and a boxed future more per layer on every request.
    let guarded = tower::ServiceBuilder::new()
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_response,
        ))
        .map_request(move |req: axum::http::Request<axum::body::Body>| {
            req.map(|body| axum::body::Body::new(DeadlineBody::new(body, body_timeout)))
        })
        .service(router.fallback(not_found));
    let serving = crate::listen::Serving {
        shutdown,
        drain,
        limits,
        tls,
    };
    crate::listen::serve_connections(listener, guarded, serving).await
}

/// Serves `router` on a free port of 127.0.0.1 in the background, until the runtime ends;
/// returns the address. For tests and examples.
pub async fn spawn_local(router: Router) -> std::io::Result<std::net::SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(serve(listener, router, std::future::pending()));
    Ok(addr)
}

/// [`serve_with_drain`] with a 10-second drain period.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with_drain(
        listener,
        router,
        shutdown,
        std::time::Duration::from_secs(10),
    )
    .await
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": null,
        "error": { "code": -32603, "message": "Internal error" }
    });
    (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
}
