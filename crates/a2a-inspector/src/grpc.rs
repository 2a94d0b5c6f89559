//! gRPC through the host: a browser cannot speak gRPC, so the console asks the host to make
//! the call with this project's client. `POST /inspector/api/grpc` with
//! `{"target": "host:port", "tenant": …, "op": "send" | "stream" | "get" | "list" |
//! "cancel" | "subscribe" | "extendedCard", "params": {…v1.0 request…}}` and the target's
//! metadata (credentials) as a JSON object in `X-Relay-Headers`; the answer is the v1.0
//! result as JSON, or, for `stream` and `subscribe`, server-sent events of `StreamResponse`s.
//! Agent errors come back as `{"error": {"code", "message"}}` with the JSON-RPC code.
//!
//! Only for a caller allowed to use the console, and only where the relay may go: the
//! target's name is resolved here, every address checked against the policy, and the call
//! made to an allowed address (so a name cannot be re-pointed at an inner one in between).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use a2a_client::ClientError;
use a2a_client::transport::{GrpcV1, Transport};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::{Shared, relay_error, relayed_headers};

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(&format!("{}/api/grpc", crate::PATH), post(call))
        .with_state(shared)
}

#[derive(Deserialize)]
struct GrpcCall {
    target: String,
    #[serde(default)]
    tenant: Option<String>,
    op: String,
    #[serde(default)]
    params: Value,
}

/// A v1.0 value as ProtoJSON.
fn json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// An agent's error, as JSON-RPC would carry it.
fn agent_error(e: &ClientError) -> Value {
    match e.protocol() {
        Some(err) => json!({"error": {"code": err.code().0, "message": e.to_string()}}),
        None => json!({"error": {"code": -32603, "message": e.to_string()}}),
    }
}

/// The address to call for `target` (`host:port`), if the policy allows it.
async fn checked_address(shared: &Shared, target: &str) -> Result<String, String> {
    let target = target
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/');
    let url = format!("http://{target}/");
    let (parsed, _) = shared.target(&url)?;
    let host = parsed.host_str().unwrap_or_default().to_owned();
    let port = parsed.port_or_known_default().unwrap_or(80);
    if shared.policy.allows_host(&host) || shared.policy.allows_prefix_of(&parsed) {
        return Ok(format!("{host}:{port}"));
    }
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("{host}: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| !a2a_server::push::guard::is_inner(a.ip()))
        .map(ToString::to_string)
        .ok_or_else(|| {
            format!("{host} resolves only to loopback, private or link-local addresses, which this host does not call")
        })
}

async fn call(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(req): Json<GrpcCall>,
) -> Response {
    if let Err(refusal) = shared.admit(&headers).await {
        return refusal;
    }
    let address = match checked_address(&shared, &req.target).await {
        Ok(a) => a,
        Err(why) => return relay_error(StatusCode::FORBIDDEN, why),
    };
    // What gRPC sets itself is not sent on (nor, as for the relay, the hop's headers).
    let metadata = match relayed_headers(&headers, &["content-type", "a2a-version", "accept"]) {
        Ok(h) => h,
        Err(why) => return relay_error(StatusCode::BAD_REQUEST, why),
    };
    let transport = match GrpcV1::new(
        &address,
        req.tenant.clone(),
        metadata,
        Some(Duration::from_secs(300)),
        Some(Duration::from_secs(10)),
        &[],
    ) {
        Ok(t) => t,
        Err(e) => return relay_error(StatusCode::BAD_GATEWAY, e.to_string()),
    };
    // The v1.0 request the operation takes, from `params`, or the answer to give.
    macro_rules! parsed {
        () => {
            match serde_json::from_value(req.params) {
                Ok(r) => r,
                Err(e) => return relay_error(StatusCode::BAD_REQUEST, format!("params: {e}")),
            }
        };
    }
    let answer = |result: Result<Value, ClientError>| match result {
        Ok(v) => Json(v).into_response(),
        Err(e) => Json(agent_error(&e)).into_response(),
    };
    match req.op.as_str() {
        "send" => answer(transport.send_message(parsed!()).await.map(json)),
        "get" => answer(transport.get_task(parsed!()).await.map(json)),
        "list" => answer(transport.list_tasks(parsed!()).await.map(json)),
        "cancel" => answer(transport.cancel_task(parsed!()).await.map(json)),
        "extendedCard" => answer(transport.get_extended_agent_card().await.map(json)),
        "stream" | "subscribe" => {
            let events = if req.op == "stream" {
                transport.send_streaming_message(parsed!()).await
            } else {
                transport.subscribe_to_task(parsed!(), None).await
            };
            match events {
                Err(e) => Json(agent_error(&e)).into_response(),
                Ok(events) => {
                    let stream = events.map(|ev| {
                        let data = match ev {
                            Ok(ev) => json(ev.response),
                            Err(e) => agent_error(&e),
                        };
                        Ok::<_, Infallible>(Event::default().data(data.to_string()))
                    });
                    Sse::new(stream)
                        .keep_alive(KeepAlive::default())
                        .into_response()
                }
            }
        }
        other => relay_error(
            StatusCode::BAD_REQUEST,
            format!("unknown operation {other:?}"),
        ),
    }
}
