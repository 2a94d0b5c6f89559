//! Who may use the console's host-side operations: the callers the host's authenticator
//! accepts, with the credentials they would send to the agents themselves. The console's
//! settings (`/inspector/api/config`) are public, so that it knows whether to ask for them.

use std::sync::Arc;

use a2a_server::auth::Principal;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::InspectorConfig;

/// What the host-side operations share.
pub(crate) struct Shared {
    pub(crate) config: InspectorConfig,
    /// Calls other agents (and this host, for the relay): only what the policy allows.
    pub(crate) client: reqwest::Client,
    /// The relay's policy: the push policy, plus this host's own base URL.
    pub(crate) policy: a2a_server::push::PushPolicy,
}

impl Shared {
    pub(crate) fn new(config: InspectorConfig) -> Self {
        let mut policy = config.policy.clone();
        policy
            .allowed_prefixes
            .push(format!("{}/", config.base_url));
        let client = a2a_server::push::guard::guarded_client(&policy, None)
            .unwrap_or_else(|_| reqwest::Client::new());
        Self {
            config,
            client,
            policy,
        }
    }

    /// The caller, when the host's authenticator accepts the request's credentials (`None`
    /// without authentication); else the answer to give: 401 with a challenge per scheme.
    pub(crate) async fn admit(&self, headers: &HeaderMap) -> Result<Option<Principal>, Response> {
        let Some(auth) = &self.config.auth else {
            return Ok(None);
        };
        match auth.authenticate(headers).await {
            Ok(p) => Ok(Some(p)),
            Err(e) => {
                let mut resp = (
                    StatusCode::UNAUTHORIZED,
                    Json(json!({"error": {
                        "code": 401,
                        "status": "UNAUTHENTICATED",
                        "message": format!("the console needs the credentials this host accepts: {e}"),
                    }})),
                )
                    .into_response();
                for c in auth.challenges() {
                    resp.headers_mut().append(header::WWW_AUTHENTICATE, c);
                }
                Err(resp)
            }
        }
    }
}

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(&format!("{}/api/config", crate::PATH), get(config))
        .route(&format!("{}/api/whoami", crate::PATH), get(whoami))
        .with_state(shared)
}

/// The console's settings: whether credentials are needed (and which kinds), the trace link,
/// and which of the host's features it can show.
async fn config(State(shared): State<Arc<Shared>>) -> Response {
    let c = &shared.config;
    let schemes: Vec<serde_json::Value> = match &c.auth {
        None => Vec::new(),
        Some(auth) => auth
            .schemes()
            .0
            .into_iter()
            .map(|(name, scheme)| json!({"name": name, "scheme": scheme}))
            .collect(),
    };
    Json(json!({
        "base": c.base_url,
        "auth": {"required": c.auth.is_some(), "schemes": schemes},
        "traceUrl": c.trace_url,
        "metrics": c.metrics,
        "push": c.push,
        "version": env!("CARGO_PKG_VERSION"),
    }))
    .into_response()
}

/// Who the credentials sent are, or 401.
async fn whoami(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match shared.admit(&headers).await {
        Ok(p) => Json(json!({"principal": p.map(|p| p.id().to_owned())})).into_response(),
        Err(refused) => refused,
    }
}
