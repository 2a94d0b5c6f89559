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
    /// `None` when it could not be built with its guard: then nothing is called.
    client: Option<reqwest::Client>,
    /// The relay's policy: the push policy, plus this host's own base URL.
    pub(crate) policy: a2a_server::push::PushPolicy,
}

/// Longest a card or a key set may take to arrive.
const FETCH_TIME: std::time::Duration = std::time::Duration::from_secs(10);

impl Shared {
    pub(crate) fn new(config: InspectorConfig) -> Self {
        let mut policy = config.policy.clone();
        policy
            .allowed_prefixes
            .push(format!("{}/", config.base_url));
        let client = match a2a_server::push::guard::guarded_client(&policy, None) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %e, "inspector: no guarded HTTP client; it calls no agent");
                None
            }
        };
        Self {
            config,
            client,
            policy,
        }
    }

    /// The client for `url`, if the console may call it: where the push policy allows (this
    /// host's own base URL included), never the console's own paths, and elsewhere than
    /// this host only when [`InspectorConfig::reach_out`] allows.
    pub(crate) fn target(&self, url: &str) -> Result<(reqwest::Url, &reqwest::Client), String> {
        let Some(client) = &self.client else {
            return Err(
                "the console cannot call other agents here (no guarded HTTP client)".into(),
            );
        };
        let parsed = self.policy.check_url(url).map_err(|e| e.to_string())?;
        // Whatever the name of the host, the console does not call itself.
        if parsed.path().starts_with(&format!("{}/", crate::PATH)) {
            return Err("the console's own paths are not relayed".into());
        }
        let own = parsed
            .as_str()
            .starts_with(&format!("{}/", self.config.base_url));
        if !own && !self.config.reach_out {
            return Err("this host reaches other agents for the console only with authentication on, or when it listens on loopback (else it would be an open proxy)".into());
        }
        Ok((parsed, client))
    }

    /// The JSON at `url` (allowed by [`target`](Self::target)), at most `cap` bytes, within
    /// [`FETCH_TIME`].
    pub(crate) async fn fetch_json(
        &self,
        url: &str,
        cap: usize,
    ) -> Result<serde_json::Value, String> {
        let (target, client) = self.target(url)?;
        let read = async {
            let mut resp = client
                .get(target)
                .send()
                .await
                .map_err(|e| format!("{url}: {}", a2a_client::describe_http_error(&e)))?;
            if !resp.status().is_success() {
                return Err(format!("{url}: HTTP {}", resp.status()));
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| format!("{url}: {}", a2a_client::describe_http_error(&e)))?
            {
                if body.len() + chunk.len() > cap {
                    return Err(format!("{url}: larger than {cap} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
        };
        tokio::time::timeout(FETCH_TIME, read)
            .await
            .unwrap_or_else(|_| Err(format!("{url}: no answer within {FETCH_TIME:?}")))
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
                let mut resp = error(
                    StatusCode::UNAUTHORIZED,
                    format!("the console needs the credentials this host accepts: {e}"),
                );
                for c in auth.challenges() {
                    resp.headers_mut().append(header::WWW_AUTHENTICATE, c);
                }
                Err(resp)
            }
        }
    }
}

/// An answer of the console's own: `{"error": {"code", "message"}}` with `status`.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({"error": {"code": status.as_u16(), "message": message.into()}})),
    )
        .into_response()
}

/// [`error`] for a call the host could not make for the console (the relay's or gRPC's own
/// failure, not the target's answer), marked `X-Relay-Error` so the console tells them apart.
pub(crate) fn relay_error(status: StatusCode, message: impl Into<String>) -> Response {
    let mut resp = error(status, message);
    resp.headers_mut()
        .insert("x-relay-error", http::HeaderValue::from_static("1"));
    resp
}

/// Headers never sent on: they describe the hop to the host, not the call to the target.
const HOP_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
    "cookie",
];

/// The headers the console asks the host to send to an agent for it: `X-Relay-Headers`, a
/// JSON object of names and values, less the [`HOP_HEADERS`] and those in `also_skip` (lower
/// case: what the call sets itself).
pub(crate) fn relayed_headers(
    headers: &HeaderMap,
    also_skip: &[&str],
) -> Result<HeaderMap, String> {
    let mut out = HeaderMap::new();
    let Some(json) = headers.get("x-relay-headers").and_then(|v| v.to_str().ok()) else {
        return Ok(out);
    };
    let Ok(map) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json) else {
        return Err("X-Relay-Headers must be a JSON object of header names and values".into());
    };
    for (name, value) in map {
        let (Ok(n), Some(Ok(v))) = (
            http::HeaderName::try_from(name.as_str()),
            value.as_str().map(http::HeaderValue::from_str),
        ) else {
            return Err(format!("invalid header {name:?}"));
        };
        if !HOP_HEADERS.contains(&n.as_str()) && !also_skip.contains(&n.as_str()) {
            out.append(n, v);
        }
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(json: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-relay-headers", json.parse().unwrap());
        headers
    }

    #[test]
    fn relayed_headers_leave_the_hop_behind_for_every_call() {
        let asked = asking(
            r#"{"Authorization": "Bearer t", "TE": "trailers", "Connection": "close", "Cookie": "s=1", "A2A-Version": "1.0"}"#,
        );
        let relayed = relayed_headers(&asked, &[]).unwrap();
        let mut names: Vec<_> = relayed.keys().map(|n| n.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["a2a-version", "authorization"]);
        // A call that sets some headers itself (gRPC) skips those too, and still the hop's.
        let relayed = relayed_headers(&asked, &["a2a-version"]).unwrap();
        let names: Vec<_> = relayed.keys().map(|n| n.as_str()).collect();
        assert_eq!(names, ["authorization"]);
    }

    #[test]
    fn relayed_headers_refuse_what_they_cannot_send() {
        assert!(
            relayed_headers(&asking("[1]"), &[])
                .unwrap_err()
                .contains("JSON object")
        );
        let err = relayed_headers(&asking(r#"{"bad name": "x"}"#), &[]).unwrap_err();
        assert!(err.contains("bad name"), "{err}");
        assert!(relayed_headers(&HeaderMap::new(), &[]).unwrap().is_empty());
    }
}
