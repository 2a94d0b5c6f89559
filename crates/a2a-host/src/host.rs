//! Mounting several agents in one router.

use std::collections::BTreeMap;
use std::sync::Arc;

use a2a_server::transport::card::{self, CardEndpoint};
use a2a_server::{
    AgentExecutor, RequestHandler, ServeOptions, agent_rpc_routes, card_routes, grpc_routes,
    in_memory_handler,
};
use a2a_types::AgentCard;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::json;

/// An agent to host.
#[derive(Clone)]
pub struct HostAgent {
    /// URL segment (`/a2a/{id}`).
    pub id: String,
    /// The agent's request handler.
    pub handler: Arc<RequestHandler>,
}

impl std::fmt::Debug for HostAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostAgent")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl HostAgent {
    /// An agent with the in-memory store.
    pub fn in_memory(
        id: impl Into<String>,
        executor: Arc<dyn AgentExecutor>,
        card: AgentCard,
    ) -> Self {
        Self {
            id: id.into(),
            handler: Arc::new(in_memory_handler(executor, card)),
        }
    }
}

impl From<crate::builtin::BuiltinAgent> for HostAgent {
    /// A built-in agent with the in-memory store.
    fn from(agent: crate::builtin::BuiltinAgent) -> Self {
        let mut handler = in_memory_handler(agent.executor, agent.card);
        if let Some(extended) = agent.extended_card {
            handler = handler.with_extended_card(extended);
        }
        Self {
            id: agent.id.to_owned(),
            handler: Arc::new(handler),
        }
    }
}

/// Many agents in one process: each at `/a2a/{id}` (JSON-RPC) with its cards at
/// `/a2a/{id}/.well-known/agent-card.json` and `/.well-known/agent-card.json?assistant_id={id}`;
/// `GET /` lists them. One agent can also be served at the root.
#[derive(Debug, Default)]
pub struct AgentHost {
    agents: Vec<HostAgent>,
    root: Option<HostAgent>,
    options: ServeOptions,
    inspector: Option<a2a_inspector::InspectorConfig>,
}

#[derive(Debug)]
struct Index {
    cards: BTreeMap<String, Arc<CardEndpoint>>,
    root_card: Option<Arc<CardEndpoint>>,
    /// Browsers asking `/` for a page get the inspector.
    inspector: bool,
}

impl AgentHost {
    /// A host with the given serving options.
    pub fn new(options: ServeOptions) -> Self {
        Self {
            agents: Vec::new(),
            root: None,
            options,
            inspector: None,
        }
    }

    /// Serves the inspector (the web console) at `/inspector/`, and to browsers asking `/`
    /// for a page.
    pub fn inspector(mut self, config: a2a_inspector::InspectorConfig) -> Self {
        self.inspector = Some(config);
        self
    }

    /// Hosts `agent` at `/a2a/{id}`.
    pub fn agent(mut self, agent: HostAgent) -> Self {
        self.agents.push(agent);
        self
    }

    /// Hosts every built-in agent (in memory) at `/a2a/{id}`.
    pub fn with_builtin_agents(mut self) -> Self {
        for name in crate::builtin::NAMES {
            if let Some(agent) = crate::builtin::builtin(name) {
                self = self.agent(agent.into());
            }
        }
        self
    }

    /// Serves `agent` at the root (`/` and `/.well-known/agent-card.json`).
    pub fn root(mut self, agent: HostAgent) -> Self {
        self.root = Some(agent);
        self
    }

    /// The handlers, by agent id (for shutdown and metrics).
    pub fn handlers(&self) -> Vec<Arc<RequestHandler>> {
        self.agents
            .iter()
            .chain(self.root.iter())
            .map(|a| a.handler.clone())
            .collect()
    }

    /// The handlers keyed by agent id.
    pub fn handlers_by_id(&self) -> BTreeMap<String, Arc<RequestHandler>> {
        self.agents
            .iter()
            .chain(self.root.iter())
            .map(|a| (a.id.clone(), a.handler.clone()))
            .collect()
    }

    /// Every route: the HTTP bindings and cards ([`http_router`](Self::http_router)) and
    /// gRPC ([`grpc_router`](Self::grpc_router)), on one port.
    pub fn router(&self) -> Router {
        self.http_router().merge(self.grpc_router())
    }

    /// The gRPC service for every agent (empty when the options switch gRPC off): each agent
    /// is the tenant `a2a/{id}`, the root agent the empty tenant.
    pub fn grpc_router(&self) -> Router {
        let agents = self
            .agents
            .iter()
            .map(|a| (format!("/a2a/{}", a.id), a.handler.clone()))
            .chain(self.root.iter().map(|a| (String::new(), a.handler.clone())))
            .collect::<Vec<_>>();
        grpc_routes(
            agents.iter().map(|(p, h)| (p.as_str(), h.clone())),
            &self.options,
        )
    }

    /// The JSON-RPC and HTTP+JSON routes and the cards, without gRPC (to serve gRPC on a
    /// port of its own).
    pub fn http_router(&self) -> Router {
        let mut router = Router::new();
        let mut cards = BTreeMap::new();
        for agent in &self.agents {
            let path = format!("/a2a/{}", agent.id);
            let (rpc, card) = agent_rpc_routes(agent.handler.clone(), &path, &self.options);
            router = router.merge(rpc).merge(card_routes(card.clone(), &path));
            cards.insert(agent.id.clone(), card);
        }
        let mut root_card = None;
        if let Some(agent) = &self.root {
            let (rpc, card) = agent_rpc_routes(agent.handler.clone(), "", &self.options);
            // `/.well-known/agent-card.json` is served by `card_by_query` below, which falls
            // back to the root agent's card.
            let legacy = Router::new()
                .route("/.well-known/agent.json", get(card::legacy_agent_card))
                .with_state(card.clone());
            router = router.merge(rpc).merge(legacy);
            root_card = Some(card);
        }
        let index = Arc::new(Index {
            cards,
            root_card,
            inspector: self.inspector.is_some(),
        });
        let mut index_routes =
            Router::new().route("/.well-known/agent-card.json", get(card_by_query));
        index_routes = index_routes.route("/agents", get(list_agents));
        if index.root_card.is_none() {
            index_routes = index_routes.route("/", get(index_page));
        }
        if !index.cards.is_empty() {
            // Unknown agent ids get a 404 that names the agents that are here (the hosted
            // agents' own routes are static, so they take precedence over these).
            for p in [
                "/a2a/{id}",
                "/a2a/{id}/",
                "/a2a/{id}/.well-known/agent-card.json",
                "/a2a/{id}/.well-known/agent.json",
            ] {
                index_routes = index_routes.route(p, any(unknown_agent));
            }
        }
        let mut router = router.merge(index_routes.with_state(index));
        if let Some(config) = &self.inspector {
            router = router.merge(a2a_inspector::router(config.clone()));
        }
        if let Some(signer) = &self.options.card_signer {
            router = router.merge(a2a_server::router::jwks_routes(signer.clone()));
        }
        let stores = self
            .handlers()
            .iter()
            .map(|h| h.runtime().store().clone())
            .collect();
        router = router.merge(a2a_server::router::health_routes(stores));
        if self.options.metrics {
            router.merge(a2a_server::router::metrics_routes())
        } else {
            router
        }
    }
}

#[derive(serde::Deserialize)]
struct CardQuery {
    assistant_id: Option<String>,
    agent_id: Option<String>,
}

async fn card_by_query(
    State(index): State<Arc<Index>>,
    Query(q): Query<CardQuery>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let endpoint = match q.assistant_id.or(q.agent_id) {
        Some(id) => index.cards.get(&id).cloned(),
        None => index.root_card.clone(),
    };
    match endpoint {
        Some(ep) => card::agent_card(State(ep), uri, headers).await,
        None => {
            let agents: Vec<&String> = index.cards.keys().collect();
            let body = json!({
                "error": {
                    "code": 404,
                    "status": "NOT_FOUND",
                    "message": "no such agent; use /a2a/{id}/.well-known/agent-card.json or ?assistant_id={id}",
                    "agents": agents,
                }
            });
            (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
        }
    }
}

async fn unknown_agent(
    State(index): State<Arc<Index>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    let agents: Vec<&String> = index.cards.keys().collect();
    let body = json!({
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": format!("no agent {id:?} here; agents are served at /a2a/{{id}}"),
            "agents": agents,
        }
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

/// `/`: the inspector for a browser that asks for a page, the agent list for API clients.
async fn index_page(State(index): State<Arc<Index>>, headers: HeaderMap) -> Response {
    if index.inspector && a2a_inspector::wants_html(&headers) {
        return axum::response::Redirect::to("/inspector/").into_response();
    }
    list_agents(State(index)).await
}

async fn list_agents(State(index): State<Arc<Index>>) -> Response {
    let agents: Vec<_> = index
        .cards
        .keys()
        .map(|id| {
            json!({
                "id": id,
                "url": format!("/a2a/{id}"),
                "card": format!("/a2a/{id}/.well-known/agent-card.json"),
            })
        })
        .collect();
    axum::Json(json!({ "agents": agents })).into_response()
}
