//! The JSON-RPC 2.0 binding: v1.0 methods (`SendMessage`, …) and the v0.3 methods
//! (`message/send`, …) on the same endpoint, dispatched by method name.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::jsonrpc::method;
use a2a_types::v03;
use a2a_types::{
    A2aError, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRequest,
};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use serde_json::value::RawValue;

use super::envelope::{error_body, success_body};
use super::http_request::{Known, call_context, read_body, unsupported_content_type};
use super::jsonrpc_request::{optional_params, params, parse_envelope, send_params};
use super::sse::{Framing, sse_error, sse_response};
use super::version::{ProtocolVersion, negotiate};
use crate::handler::RequestHandler;
use a2a_runtime::CallContext;

/// Limits and timings of the JSON-RPC endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonRpcConfig {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Interval of SSE keep-alive comments.
    pub keep_alive: Duration,
}

impl Default for JsonRpcConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 10 * 1024 * 1024,
            keep_alive: Duration::from_secs(15),
        }
    }
}

/// One agent's JSON-RPC endpoint (the axum state).
#[derive(Debug)]
pub struct JsonRpcEndpoint {
    handler: Arc<RequestHandler>,
    config: JsonRpcConfig,
}

impl JsonRpcEndpoint {
    /// An endpoint for `handler`.
    pub fn new(handler: Arc<RequestHandler>, config: JsonRpcConfig) -> Self {
        Self { handler, config }
    }
}

fn json_response(status: StatusCode, body: String) -> Response {
    // Built directly: `(status, body).into_response()` would first insert a `text/plain`
    // content type, hashed and then replaced (164 instructions a send).
    let mut resp = Response::new(axum::body::Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn ok<R: Serialize>(id: Option<&RawValue>, result: R) -> Response {
    json_response(StatusCode::OK, success_body(id, result))
}

fn fail(id: Option<&RawValue>, err: &A2aError, version: ProtocolVersion) -> Response {
    // JSON-RPC errors travel in a 200 response, like every JSON-RPC peer expects.
    json_response(StatusCode::OK, error_body(id, err, version))
}

/// The axum handler of a JSON-RPC endpoint. When the handler has an
/// [authenticator](RequestHandler::authenticator), a request's credentials are checked
/// before anything else is read, and a refusal is a 401 with a JSON-RPC error.
pub async fn handle(State(ep): State<Arc<JsonRpcEndpoint>>, request: Request) -> Response {
    // Take the request apart rather than extracting headers and URI (which clones them).
    let (parts, body) = request.into_parts();
    let (uri, headers) = (parts.uri, parts.headers);
    // Credentials are checked before anything else is read. Here rather than by a layer
    // around the route: a layer cost a boxed service clone and a boxed future a request
    // (1 200 instructions a JWT send, with the principal's trip through the extensions).
    let principal = match ep.handler.authenticator() {
        None => None,
        Some(auth) => match crate::auth::admit(&**auth, &headers, true).await {
            Ok(principal) => Some(principal),
            Err(refusal) => return refusal,
        },
    };
    let caller = (super::http_request::peer_of(&parts.extensions), principal);
    let known = Known::of(&headers);
    // The media type decides how the body is read, so it is checked before the body is.
    if let Some(media_type) = unsupported_content_type(known.content_type) {
        let err = A2aError::ContentTypeNotSupported { media_type };
        return json_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error_body(None, &err, ProtocolVersion::V1),
        );
    }
    let bytes = match read_body(body, known.content_length, ep.config.max_body_bytes).await {
        Ok(b) => b,
        Err((status, err)) => {
            return json_response(status, error_body(None, &err, ProtocolVersion::V1));
        }
    };
    let env = match parse_envelope(&bytes) {
        Ok(env) => env,
        Err(e) => return fail(e.id, &e.error, ProtocolVersion::V1),
    };
    let id = env.id;
    let method = env.method.as_deref().unwrap_or_default();
    // v0.3 methods have slashes (`message/send`); v1.0's are PascalCase.
    let wire = if method.contains('/') {
        ProtocolVersion::V03
    } else {
        ProtocolVersion::V1
    };
    let version = match negotiate(known.version, uri.query()) {
        Ok(v) => v,
        Err(e) => return fail(id, &e, wire),
    };
    if wire == ProtocolVersion::V03 {
        let call = call_context(
            a2a_runtime::Binding::JsonRpc,
            ProtocolVersion::V03,
            headers,
            caller.clone(),
        );
        return dispatch_v03(&ep, id, method, (env.params, env.metadata), call).await;
    }
    if version != ProtocolVersion::V1 {
        let err = A2aError::VersionNotSupported {
            version: "0.3 (no A2A-Version header; send \"A2A-Version: 1.0\" to call v1.0 methods)"
                .into(),
        };
        return fail(id, &err, ProtocolVersion::V1);
    }
    dispatch_v1(
        &ep,
        id,
        method,
        (env.params, env.send),
        call_context(
            a2a_runtime::Binding::JsonRpc,
            ProtocolVersion::V1,
            headers,
            caller,
        ),
    )
    .await
}

async fn dispatch_v1(
    ep: &JsonRpcEndpoint,
    id: Option<&RawValue>,
    method: &str,
    (raw, send): (Option<&RawValue>, Option<Box<SendMessageRequest>>),
    call: Arc<CallContext>,
) -> Response {
    let h = &*ep.handler;
    let result: Result<Response, A2aError> = async {
        Ok(match method {
            method::SEND_MESSAGE => {
                let req = send_params(send, raw)?;
                // The send's future is boxed inside (several KB), so this one stays small.
                ok(id, h.send_message_answer(req, call).await?)
            }
            method::SEND_STREAMING_MESSAGE => {
                let req = send_params(send, raw)?;
                let events = Box::pin(h.send_streaming_message(req, call)).await?;
                sse_response(
                    events,
                    Framing::JsonRpc {
                        id: id.map(ToOwned::to_owned),
                        version: ProtocolVersion::V1,
                    },
                    ep.config.keep_alive,
                )
            }
            method::GET_TASK => ok(
                id,
                h.get_task_answer(params::<GetTaskRequest>(raw)?, &call)
                    .await?,
            ),
            method::LIST_TASKS => ok(
                id,
                Box::pin(h.list_tasks(optional_params::<ListTasksRequest>(raw)?, &call)).await?,
            ),
            method::CANCEL_TASK => ok(
                id,
                Box::pin(h.cancel_task(params::<CancelTaskRequest>(raw)?, call)).await?,
            ),
            method::SUBSCRIBE_TO_TASK => {
                let req: SubscribeToTaskRequest = params(raw)?;
                let events = Box::pin(h.subscribe_to_task(req, &call)).await?;
                sse_response(
                    events,
                    Framing::JsonRpc {
                        id: id.map(ToOwned::to_owned),
                        version: ProtocolVersion::V1,
                    },
                    ep.config.keep_alive,
                )
            }
            // The push-config operations are boxed like the others: rare, and inline they
            // would make every request's future (which axum boxes, so copies) larger.
            method::CREATE_PUSH_CONFIG => {
                let config = params::<TaskPushNotificationConfig>(raw)?;
                ok(id, Box::pin(h.create_push_config(config, &call)).await?)
            }
            method::GET_PUSH_CONFIG => {
                let req = params::<TaskPushNotificationConfigRequest>(raw)?;
                ok(id, Box::pin(h.get_push_config(req, &call)).await?)
            }
            method::DELETE_PUSH_CONFIG => {
                let req = params::<TaskPushNotificationConfigRequest>(raw)?;
                Box::pin(h.delete_push_config(req, &call)).await?;
                ok(id, serde_json::json!({}))
            }
            method::LIST_PUSH_CONFIGS => {
                let req = params::<ListTaskPushNotificationConfigsRequest>(raw)?;
                ok(id, Box::pin(h.list_push_configs(req, &call)).await?)
            }
            method::GET_EXTENDED_AGENT_CARD => ok(id, &*h.get_extended_agent_card()?),
            other => {
                return Err(A2aError::MethodNotFound {
                    method: other.to_owned(),
                });
            }
        })
    }
    .await;
    result.unwrap_or_else(|e| fail(id, &e, ProtocolVersion::V1))
}

/// A v0.3 send's request: `params`, with the envelope's top-level `metadata` as the request
/// metadata when `params` has none.
fn v03_send_request(
    raw: Option<&RawValue>,
    top_metadata: Option<&RawValue>,
) -> Result<SendMessageRequest, A2aError> {
    let mut req = SendMessageRequest::try_from(params::<v03::MessageSendParams>(raw)?)?;
    if req.metadata.is_none()
        && let Some(m) = top_metadata
    {
        req.metadata = serde_json::from_str(m.get()).ok();
    }
    Ok(req)
}

async fn dispatch_v03(
    ep: &JsonRpcEndpoint,
    id: Option<&RawValue>,
    method: &str,
    (raw, top_metadata): (Option<&RawValue>, Option<&RawValue>),
    call: Arc<CallContext>,
) -> Response {
    use method::v03 as m;
    let h = &*ep.handler;
    let result: Result<Response, A2aError> = async {
        Ok(match method {
            m::MESSAGE_SEND => {
                let req = v03_send_request(raw, top_metadata)?;
                // Not boxed here: the send's future is boxed inside.
                let resp = h.send_message(req, call).await?;
                ok(id, v03::SendMessageResult::from(&resp))
            }
            m::MESSAGE_STREAM => {
                let req = v03_send_request(raw, top_metadata)?;
                let events = match Box::pin(h.send_streaming_message(req, call)).await {
                    Ok(events) => events,
                    Err(e) => return Ok(sse_error(id, &e, ProtocolVersion::V03)),
                };
                sse_response(
                    events,
                    Framing::JsonRpc {
                        id: id.map(ToOwned::to_owned),
                        version: ProtocolVersion::V03,
                    },
                    ep.config.keep_alive,
                )
            }
            m::TASKS_GET => {
                let p: v03::TaskQueryParams = params(raw)?;
                let mut req = GetTaskRequest::new(p.id);
                req.history_length = p.history_length;
                ok(id, v03::Task::from(&h.get_task(req, &call).await?))
            }
            m::TASKS_CANCEL => {
                let p: v03::TaskIdParams = params(raw)?;
                let mut req = CancelTaskRequest::new(p.id);
                req.metadata = p.metadata;
                ok(
                    id,
                    v03::Task::from(&Box::pin(h.cancel_task(req, call)).await?),
                )
            }
            m::TASKS_RESUBSCRIBE => {
                let p: v03::TaskIdParams = params(raw)?;
                let events = match h
                    .subscribe_to_task(SubscribeToTaskRequest::new(p.id), &call)
                    .await
                {
                    Ok(events) => events,
                    Err(e) => return Ok(sse_error(id, &e, ProtocolVersion::V03)),
                };
                sse_response(
                    events,
                    Framing::JsonRpc {
                        id: id.map(ToOwned::to_owned),
                        version: ProtocolVersion::V03,
                    },
                    ep.config.keep_alive,
                )
            }
            // The same configs as the v1.0 methods, in v0.3 shapes; notifications are v1.0
            // `StreamResponse`s whichever version registered the webhook (as the Python
            // SDK sends them).
            // v0.3 servers (the reference SDK) give a config set without an id the task's
            // id, and answer get with the task's config of that id or else its first one.
            m::PUSH_CONFIG_SET => {
                let mut p: v03::TaskPushNotificationConfig = params(raw)?;
                if p.push_notification_config
                    .id
                    .as_deref()
                    .is_none_or(str::is_empty)
                {
                    p.push_notification_config.id = Some(p.task_id.clone());
                }
                let created = Box::pin(h.create_push_config(p.into(), &call)).await?;
                ok(id, v03::TaskPushNotificationConfig::from(&created))
            }
            m::PUSH_CONFIG_GET => {
                let p: v03::PushNotificationConfigParams = params(raw)?;
                let configs = Box::pin(
                    h.list_push_configs(ListTaskPushNotificationConfigsRequest::new(&p.id), &call),
                )
                .await?
                .configs;
                let wanted = p.push_notification_config_id.as_deref();
                let config = configs
                    .iter()
                    .find(|c| wanted.is_some() && c.id.as_deref() == wanted)
                    .or(configs.first())
                    .ok_or_else(|| A2aError::task_not_found(&p.id))?;
                ok(id, v03::TaskPushNotificationConfig::from(config))
            }
            m::PUSH_CONFIG_LIST => {
                let p: v03::PushNotificationConfigParams = params(raw)?;
                let configs = Box::pin(
                    h.list_push_configs(ListTaskPushNotificationConfigsRequest::new(&p.id), &call),
                )
                .await?
                .configs;
                let configs: Vec<_> = configs
                    .iter()
                    .map(v03::TaskPushNotificationConfig::from)
                    .collect();
                ok(id, configs)
            }
            m::PUSH_CONFIG_DELETE => {
                let p: v03::PushNotificationConfigParams = params(raw)?;
                let config_id = p.push_notification_config_id.ok_or_else(|| {
                    A2aError::invalid_field("pushNotificationConfigId", "is required")
                })?;
                let req = TaskPushNotificationConfigRequest::new(&p.id, config_id);
                Box::pin(h.delete_push_config(req, &call)).await?;
                ok(id, serde_json::Value::Null)
            }
            m::GET_AUTHENTICATED_EXTENDED_CARD => {
                let card = h.get_extended_agent_card()?;
                ok(id, v03::AgentCard::from_v1(&card))
            }
            other => {
                return Err(A2aError::MethodNotFound {
                    method: other.to_owned(),
                });
            }
        })
    }
    .await;
    result.unwrap_or_else(|e| fail(id, &e, ProtocolVersion::V03))
}
