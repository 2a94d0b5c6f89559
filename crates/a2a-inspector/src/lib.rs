//! The inspector: a web console, served by a host at `/inspector/`, to see, talk to and
//! debug any A2A agent (the host's own, or any other by URL).
//!
//! The console itself is static HTML, CSS and JavaScript ([`assets`]) that talks A2A to the
//! agents with the caller's own credentials, as any client would. What a browser cannot do
//! alone, the host does for it, under `/inspector/api/` and only for a caller the host's
//! authenticator accepts (everyone, when the host has no authentication):
//! - reach agents on other hosts ([`relay`]), with the same guard against inner addresses as
//!   push notifications, and speak gRPC for it ([`grpc`]);
//! - check a card against the normative proto ([`proto_check`]) and its signature
//!   ([`card_check`]);
//! - receive push notifications for the console's session and show them as they arrive
//!   ([`hooks`]);
//! - read the whole event log of a task of this host ([`task_log`]).
//!
//! ```no_run
//! # async fn run(listener: tokio::net::TcpListener) {
//! use a2a_inspector::{InspectorConfig, router};
//!
//! let app = router(InspectorConfig::new("http://127.0.0.1:41241"));
//! axum::serve(listener, app).await.unwrap();
//! # }
//! ```

use std::sync::Arc;

use a2a_server::auth::Authenticator;
use a2a_server::push::PushPolicy;
use axum::Router;
use axum::http::HeaderMap;

mod access;
pub mod assets;
pub mod card_check;
pub mod grpc;
pub mod hooks;
pub mod proto_check;
pub mod relay;
pub mod task_log;

pub use task_log::TaskLogs;

/// The path the console is served under.
pub const PATH: &str = "/inspector";

/// What the console's host side needs to know.
#[derive(Clone)]
#[non_exhaustive]
pub struct InspectorConfig {
    /// The host's own base URL (`http://127.0.0.1:41241`): where push notifications reach the
    /// console's receiver, and the one inner address the relay may call.
    pub base_url: String,
    /// The host's authenticator: the console's host-side operations are for callers it
    /// accepts (`None`: anyone, as the A2A endpoints).
    pub auth: Option<Arc<dyn Authenticator>>,
    /// Where the relay may reach: the push policy's allow-list (loopback, private and
    /// link-local addresses refused unless allowed).
    pub policy: PushPolicy,
    /// A link for a request's trace, with `{trace_id}` in it (a Jaeger URL, say).
    pub trace_url: Option<String>,
    /// The JWK Set of the key that signs this host's push notifications, to check what the
    /// console's receiver gets (notifications from elsewhere are checked with the key set
    /// their signature names).
    pub push_keys: Option<serde_json::Value>,
    /// Whether `GET /metrics` is served (the console's host view reads it).
    pub metrics: bool,
    /// Whether this host serves push notifications (the console then offers its receiver).
    pub push: bool,
    /// The logs of the host's tasks, for their full timelines.
    pub task_logs: Option<Arc<dyn TaskLogs>>,
    /// Whether the console may reach agents elsewhere than this host (the relay, gRPC,
    /// cards and key sets by URL). A host should allow it only when it authenticates its
    /// callers or listens on loopback: else anyone who reaches it has an open proxy.
    pub reach_out: bool,
}

impl std::fmt::Debug for InspectorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InspectorConfig")
            .field("base_url", &self.base_url)
            .field("auth", &self.auth.is_some())
            .field("policy", &self.policy)
            .field("trace_url", &self.trace_url)
            .field("metrics", &self.metrics)
            .field("push", &self.push)
            .field("reach_out", &self.reach_out)
            .finish_non_exhaustive()
    }
}

impl InspectorConfig {
    /// A console for the host at `base_url`, without authentication, metrics or push.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            auth: None,
            policy: PushPolicy::default(),
            trace_url: None,
            push_keys: None,
            metrics: false,
            push: false,
            task_logs: None,
            reach_out: false,
        }
    }

    /// The URL prefix of the console's push receiver.
    pub fn hooks_prefix(&self) -> String {
        format!("{}{PATH}/hooks/", self.base_url)
    }
}

/// The console's routes: the static files at `/inspector/`, its host-side operations under
/// `/inspector/api/`, and its push receiver under `/inspector/hooks/`.
pub fn router(config: InspectorConfig) -> Router {
    let shared = Arc::new(access::Shared::new(config));
    Router::new()
        .merge(assets::routes())
        .merge(access::routes(shared.clone()))
        .merge(relay::routes(shared.clone()))
        .merge(card_check::routes(shared.clone()))
        .merge(task_log::routes(shared.clone()))
        .merge(grpc::routes(shared.clone()))
        .merge(hooks::routes(shared))
}

/// Whether a request for `/` comes from a browser that wants a page (its `Accept` names
/// `text/html`), rather than from an API client that wants today's JSON.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}
