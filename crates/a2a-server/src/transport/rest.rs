//! The HTTP+JSON (REST) binding, spec §11: resource URLs under the agent's path, request
//! and response bodies as ProtoJSON, streams as SSE of bare `StreamResponse`s, and errors as
//! `google.rpc.Status` bodies with the spec's HTTP status and an `ErrorInfo` detail.
//!
//! Every operation goes to the same [`RequestHandler`] as JSON-RPC does, so the protocol
//! rules are the same by construction; this module only maps URLs, bodies and statuses.

use std::sync::Arc;

use a2a_types::{
    A2aError, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, ProtocolVersion, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfig, TaskPushNotificationConfigRequest,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::http_request::{Known, Peer, call_context, read_body, unsupported_content_type};
use super::jsonrpc::JsonRpcConfig;
use super::sse::{Framing, sse_response};
use super::version::negotiate_version;
use crate::handler::RequestHandler;
use a2a_runtime::CallContext;

/// One agent's HTTP+JSON endpoint (the axum state).
#[derive(Debug)]
pub struct RestEndpoint {
    handler: Arc<RequestHandler>,
    config: JsonRpcConfig,
}

impl RestEndpoint {
    /// An endpoint for `handler`, with the same limits as its JSON-RPC endpoint.
    pub fn new(handler: Arc<RequestHandler>, config: JsonRpcConfig) -> Self {
        Self { handler, config }
    }
}

/// The routes of one agent's HTTP+JSON binding under `path` (`""` for the root).
pub fn rest_routes(ep: Arc<RestEndpoint>, path: &str) -> Router {
    let path = path.trim_end_matches('/');
    let configs = format!("{path}/tasks/{{id}}/pushNotificationConfigs");
    Router::new()
        .route(&format!("{path}/message:send"), post(send))
        .route(&format!("{path}/message:stream"), post(stream))
        .route(&format!("{path}/tasks"), get(list))
        // `{id}`, `{id}:cancel` and `{id}:subscribe` share a path segment.
        .route(
            &format!("{path}/tasks/{{id}}"),
            get(task_get).post(task_post),
        )
        .route(&configs, get(push_list).post(push_create))
        .route(
            &format!("{configs}/{{config_id}}"),
            get(push_get).delete(push_delete),
        )
        .route(&format!("{path}/extendedAgentCard"), get(extended_card))
        .with_state(ep)
}

/// A `google.rpc.Status` error response.
fn fail(err: &A2aError) -> Response {
    let status = StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    json(status, &err.to_rest_body())
}

fn json(status: StatusCode, body: &impl Serialize) -> Response {
    match a2a_json::to_vec(body) {
        Ok(bytes) => {
            // Built directly, not with `into_response`, which would first insert an
            // `application/octet-stream` content type to be replaced.
            let mut resp = Response::new(axum::body::Body::from(bytes));
            *resp.status_mut() = status;
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp
        }
        Err(e) => {
            tracing::error!(error = %e, "could not serialize a response");
            fail(&A2aError::internal("could not serialize the response"))
        }
    }
}

/// `result` as a response: its value as JSON, or its error.
fn reply<T: Serialize>(result: Result<T, A2aError>) -> Response {
    match result {
        Ok(body) => ok(&body),
        Err(e) => fail(&e),
    }
}

fn ok(body: &impl Serialize) -> Response {
    json(StatusCode::OK, body)
}

/// The call's context, once its `A2A-Version` allows the v1.0 operations served here.
fn admit(headers: HeaderMap, uri: &Uri, peer: Peer) -> Result<Arc<CallContext>, A2aError> {
    match negotiate_version(&headers, uri.query())? {
        ProtocolVersion::V1 => Ok(call_context(
            a2a_runtime::Binding::HttpJson,
            ProtocolVersion::V1,
            headers,
            peer.0,
        )),
        _ => Err(A2aError::VersionNotSupported {
            version: "0.3 (no A2A-Version header; send \"A2A-Version: 1.0\" for this binding)"
                .into(),
        }),
    }
}

/// The call's context, for the handlers without a body: extracting it negotiates the
/// `A2A-Version` (a request in another version is answered with the error) and names the
/// caller, as [`admit`] does.
struct RestCall(Arc<CallContext>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for RestCall {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Response> {
        let peer = Peer(super::http_request::caller_of(&parts.extensions));
        admit(parts.headers.clone(), &parts.uri, peer)
            .map(Self)
            .map_err(|e| fail(&e))
    }
}

/// The JSON body of a POST, as `T` (`None` when empty), with the call's context.
async fn body<T: DeserializeOwned>(
    ep: &RestEndpoint,
    request: Request,
) -> Result<(Option<T>, Arc<CallContext>), Response> {
    let (parts, body) = request.into_parts();
    let known = Known::of(&parts.headers);
    if let Some(media_type) = unsupported_content_type(known.content_type) {
        let err = A2aError::ContentTypeNotSupported { media_type };
        return Err(json(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &err.to_rest_body(),
        ));
    }
    let bytes: Bytes = read_body(body, known.content_length, ep.config.max_body_bytes)
        .await
        .map_err(|(status, err)| json(status, &err.to_rest_body()))?;
    let peer = Peer(super::http_request::caller_of(&parts.extensions));
    let call = admit(parts.headers, &parts.uri, peer).map_err(|e| fail(&e))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((None, call));
    }
    let value = serde_json::from_slice(&bytes)
        .map_err(|e| fail(&A2aError::invalid_params(format!("request body: {e}"))))?;
    Ok((Some(value), call))
}

/// The body of a send: a `SendMessageRequest`, required.
async fn send_request(
    ep: &RestEndpoint,
    request: Request,
) -> Result<(SendMessageRequest, Arc<CallContext>), Response> {
    match body(ep, request).await? {
        (Some(req), call) => Ok((req, call)),
        (None, _) => Err(fail(&A2aError::invalid_field(
            "message",
            "is required (the body is a SendMessageRequest)",
        ))),
    }
}

async fn send(State(ep): State<Arc<RestEndpoint>>, request: Request) -> Response {
    let (req, call) = match send_request(&ep, request).await {
        Ok(x) => x,
        Err(resp) => return resp,
    };
    match ep.handler.send_message_answer(req, call).await {
        Ok(answer) => ok(&answer),
        Err(e) => fail(&e),
    }
}

async fn stream(State(ep): State<Arc<RestEndpoint>>, request: Request) -> Response {
    let (req, call) = match send_request(&ep, request).await {
        Ok(x) => x,
        Err(resp) => return resp,
    };
    match Box::pin(ep.handler.send_streaming_message(req, call)).await {
        Ok(events) => sse_response(events, Framing::Rest, ep.config.keep_alive),
        Err(e) => fail(&e),
    }
}

/// The query string as a JSON object for `T`: numbers and booleans where `T` wants them
/// (`pageSize=50`, `includeArtifacts=true`), strings otherwise.
fn query_object<T: DeserializeOwned>(uri: &Uri, path_id: Option<&str>) -> Result<T, A2aError> {
    let Query(pairs): Query<Vec<(String, String)>> = Query::try_from_uri(uri)
        .map_err(|e| A2aError::invalid_params(format!("query string: {e}")))?;
    let mut object = Map::new();
    if let Some(id) = path_id {
        object.insert("id".into(), id.into());
    }
    for (key, value) in pairs {
        if key.eq_ignore_ascii_case("a2a-version") {
            continue;
        }
        let typed = match key.as_str() {
            "pageSize" | "historyLength" => value
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| A2aError::invalid_field(key.clone(), "must be an integer"))?,
            "includeArtifacts" => value
                .parse::<bool>()
                .map(Value::from)
                .map_err(|_| A2aError::invalid_field(key.clone(), "must be true or false"))?,
            _ => Value::from(value),
        };
        object.insert(key, typed);
    }
    serde_json::from_value(Value::Object(object))
        .map_err(|e| A2aError::invalid_params(format!("query string: {e}")))
}

async fn list(State(ep): State<Arc<RestEndpoint>>, RestCall(call): RestCall, uri: Uri) -> Response {
    let result = async {
        let req: ListTasksRequest = query_object(&uri, None)?;
        Box::pin(ep.handler.list_tasks(req, &call)).await
    }
    .await;
    reply(result)
}

/// `GET /tasks/{id}` (or `GET /tasks/{id}:subscribe`, which some clients use).
async fn task_get(
    State(ep): State<Arc<RestEndpoint>>,
    Path(segment): Path<String>,
    RestCall(call): RestCall,
    uri: Uri,
) -> Response {
    if let Some(id) = segment.strip_suffix(":subscribe") {
        return subscribe(&ep, id, &call).await;
    }
    let result = async {
        let req: GetTaskRequest = query_object(&uri, Some(&segment))?;
        ep.handler.get_task_answer(req, &call).await
    }
    .await;
    reply(result)
}

/// `POST /tasks/{id}:cancel` and `POST /tasks/{id}:subscribe`.
async fn task_post(
    State(ep): State<Arc<RestEndpoint>>,
    Path(segment): Path<String>,
    request: Request,
) -> Response {
    if let Some(id) = segment.strip_suffix(":cancel") {
        let id = id.to_owned();
        let (req, call): (Option<CancelTaskRequest>, _) = match body(&ep, request).await {
            Ok(x) => x,
            Err(resp) => return resp,
        };
        let mut req = req.unwrap_or_else(|| CancelTaskRequest::new(id.as_str()));
        req.id = id;
        return match Box::pin(ep.handler.cancel_task(req, call)).await {
            Ok(task) => ok(&task),
            Err(e) => fail(&e),
        };
    }
    if let Some(id) = segment.strip_suffix(":subscribe") {
        let id = id.to_owned();
        return match body::<Value>(&ep, request).await {
            Ok((_, call)) => subscribe(&ep, &id, &call).await,
            Err(resp) => resp,
        };
    }
    fail(&A2aError::MethodNotFound {
        method: format!("POST /tasks/{segment} (use :cancel or :subscribe)"),
    })
}

async fn subscribe(ep: &RestEndpoint, id: &str, call: &CallContext) -> Response {
    match Box::pin(
        ep.handler
            .subscribe_to_task(SubscribeToTaskRequest::new(id), call),
    )
    .await
    {
        Ok(events) => sse_response(events, Framing::Rest, ep.config.keep_alive),
        Err(e) => fail(&e),
    }
}

/// `POST /tasks/{id}/pushNotificationConfigs`: the body is the config (its `taskId` is the
/// path's).
async fn push_create(
    State(ep): State<Arc<RestEndpoint>>,
    Path(task_id): Path<String>,
    request: Request,
) -> Response {
    let (config, call) = match body::<TaskPushNotificationConfig>(&ep, request).await {
        Ok(x) => x,
        Err(resp) => return resp,
    };
    let mut config = config.unwrap_or_default();
    config.task_id = Some(task_id);
    reply(ep.handler.create_push_config(config, &call).await)
}

/// `GET /tasks/{id}/pushNotificationConfigs`.
async fn push_list(
    State(ep): State<Arc<RestEndpoint>>,
    Path(task_id): Path<String>,
    RestCall(call): RestCall,
) -> Response {
    let req = ListTaskPushNotificationConfigsRequest::new(task_id);
    reply(ep.handler.list_push_configs(req, &call).await)
}

/// `GET /tasks/{id}/pushNotificationConfigs/{configId}`.
async fn push_get(
    State(ep): State<Arc<RestEndpoint>>,
    Path((task_id, id)): Path<(String, String)>,
    RestCall(call): RestCall,
) -> Response {
    let req = TaskPushNotificationConfigRequest::new(task_id, id);
    reply(ep.handler.get_push_config(req, &call).await)
}

/// `DELETE /tasks/{id}/pushNotificationConfigs/{configId}`: an empty object.
async fn push_delete(
    State(ep): State<Arc<RestEndpoint>>,
    Path((task_id, id)): Path<(String, String)>,
    RestCall(call): RestCall,
) -> Response {
    let req = TaskPushNotificationConfigRequest::new(task_id, id);
    let result = ep.handler.delete_push_config(req, &call).await;
    reply(result.map(|()| serde_json::json!({})))
}

async fn extended_card(State(ep): State<Arc<RestEndpoint>>, _: RestCall) -> Response {
    match ep.handler.get_extended_agent_card() {
        Ok(card) => ok(&*card),
        Err(e) => fail(&e),
    }
}
