//! The JSON-RPC 2.0 binding: v1.0 methods (`SendMessage`, …) and the v0.3 methods
//! (`message/send`, …) on the same endpoint, dispatched by method name.

use std::borrow::Cow;
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
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::envelope::{error_body, success_body};
use super::http_request::{call_context, read_body, unsupported_content_type};
use super::sse::{Framing, sse_error, sse_response};
use super::version::{ProtocolVersion, negotiate_version};
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
    let mut resp = (status, body).into_response();
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

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    /// Request metadata some v0.3 clients send beside `params` instead of inside it.
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

fn first_byte(s: &[u8]) -> Option<u8> {
    s.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// A request that is not a valid JSON-RPC request, with its `id` when that much was readable
/// (JSON-RPC 2.0 §5: the error answers with the request's id if it could be determined).
#[derive(Debug)]
struct EnvelopeError<'a> {
    id: Option<&'a RawValue>,
    error: A2aError,
}

impl From<A2aError> for EnvelopeError<'_> {
    fn from(error: A2aError) -> Self {
        Self { id: None, error }
    }
}

#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

fn is_valid_id(id: &RawValue) -> bool {
    let raw = id.get();
    match first_byte(raw.as_bytes()) {
        // Echoed as sent, so it must be a string a JSON parser takes back: escapes such as a
        // lone surrogate (`"\ud800"`) are not.
        Some(b'"') => !raw.contains('\\') || serde_json::from_str::<String>(raw).is_ok(),
        // Likewise a number a parser can hold (not `1e400`); short integers need no check.
        Some(b'-' | b'0'..=b'9') => {
            (raw.len() <= 18 && raw.bytes().all(|b| b.is_ascii_digit()))
                || serde_json::from_str::<serde_json::Number>(raw).is_ok()
        }
        Some(b'n') => true,
        _ => false,
    }
}

fn parse_envelope(body: &[u8]) -> Result<Envelope<'_>, EnvelopeError<'_>> {
    let parsed: Result<Envelope<'_>, _> = match first_byte(body) {
        Some(b'{') => serde_json::from_slice(body),
        _ => {
            // Valid JSON that is not an object (a batch, a string…) is an invalid request.
            return Err(
                match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                    Ok(_) => A2aError::InvalidRequest {
                        detail: "the request must be a JSON object (batches are not supported)"
                            .into(),
                    },
                    Err(e) => A2aError::Parse {
                        detail: e.to_string(),
                    },
                }
                .into(),
            );
        }
    };
    let env = parsed.map_err(|e| {
        match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Err(syntax) => A2aError::Parse {
                detail: syntax.to_string(),
            }
            .into(),
            Ok(_) => EnvelopeError {
                // Valid JSON with a member of the wrong type: answer with the id if it is one.
                id: serde_json::from_slice::<IdOnly<'_>>(body)
                    .ok()
                    .and_then(|i| i.id)
                    .filter(|id| is_valid_id(id)),
                error: A2aError::InvalidRequest {
                    detail: e.to_string(),
                },
            },
        }
    })?;
    if let Some(id) = env.id
        && !is_valid_id(id)
    {
        return Err(A2aError::InvalidRequest {
            detail: "\"id\" must be a string, a number or null".into(),
        }
        .into());
    }
    // From here on the id is known, so the error carries it.
    let invalid = |detail: &str| EnvelopeError {
        id: env.id,
        error: A2aError::InvalidRequest {
            detail: detail.into(),
        },
    };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    if env.method.as_deref().is_none_or(str::is_empty) {
        return Err(invalid("\"method\" is required"));
    }
    Ok(env)
}

fn params<T: DeserializeOwned>(raw: Option<&RawValue>) -> Result<T, A2aError> {
    let raw = raw.ok_or_else(|| A2aError::invalid_field("params", "is required"))?;
    if first_byte(raw.get().as_bytes()) != Some(b'{') {
        return Err(A2aError::invalid_field("params", "must be an object"));
    }
    serde_json::from_str(raw.get()).map_err(|e| A2aError::invalid_params(e.to_string()))
}

fn optional_params<T: DeserializeOwned + Default>(raw: Option<&RawValue>) -> Result<T, A2aError> {
    match raw {
        None => Ok(T::default()),
        Some(r) if r.get() == "null" => Ok(T::default()),
        r => params(r),
    }
}

/// The axum handler of a JSON-RPC endpoint.
pub async fn handle(State(ep): State<Arc<JsonRpcEndpoint>>, request: Request) -> Response {
    // Take the request apart rather than extracting headers and URI (which clones them).
    let (parts, body) = request.into_parts();
    let (uri, headers) = (parts.uri, parts.headers);
    let caller = super::http_request::caller_of(&parts.extensions);
    // The media type decides how the body is read, so it is checked before the body is.
    if let Some(media_type) = unsupported_content_type(&headers) {
        let err = A2aError::ContentTypeNotSupported { media_type };
        return json_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error_body(None, &err, ProtocolVersion::V1),
        );
    }
    let bytes = match read_body(body, &headers, ep.config.max_body_bytes).await {
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
    let version = match negotiate_version(&headers, uri.query()) {
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
        env.params,
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
    raw: Option<&RawValue>,
    call: Arc<CallContext>,
) -> Response {
    let h = &*ep.handler;
    let result: Result<Response, A2aError> = async {
        Ok(match method {
            method::SEND_MESSAGE => {
                let req: SendMessageRequest = params(raw)?;
                // Boxed: the send future is several KB; keeping it out of this one keeps the
                // per-request future that hyper and tower move around small.
                ok(id, Box::pin(h.send_message_answer(req, call)).await?)
            }
            method::SEND_STREAMING_MESSAGE => {
                let req: SendMessageRequest = params(raw)?;
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
                let resp = Box::pin(h.send_message(req, call)).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::ErrorCode;

    fn error_of(body: &[u8]) -> (Option<String>, A2aError) {
        let e = parse_envelope(body).err().expect("an invalid envelope");
        (e.id.map(|i| i.get().to_owned()), e.error)
    }

    #[test]
    fn envelope_errors() {
        let cases: &[(&[u8], Option<&str>, ErrorCode)] = &[
            (b"{not json", None, ErrorCode::PARSE_ERROR),
            (b"[1,2]", None, ErrorCode::INVALID_REQUEST),
            (b"\"x\"", None, ErrorCode::INVALID_REQUEST),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#,
                Some("1"),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#,
                None,
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":5}"#,
                Some("\"a\""),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":7}"#,
                Some("7"),
                ErrorCode::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":2,"id":[1],"method":"GetTask"}"#,
                None,
                ErrorCode::INVALID_REQUEST,
            ),
        ];
        for (body, id, code) in cases {
            let (got_id, err) = error_of(body);
            assert_eq!(got_id.as_deref(), *id, "{}", String::from_utf8_lossy(body));
            assert_eq!(err.code(), *code, "{}", String::from_utf8_lossy(body));
        }
        let env =
            parse_envelope(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"x"}}"#)
                .unwrap();
        assert_eq!(env.id.unwrap().get(), "\"a\"");
        assert_eq!(env.method.as_deref(), Some("GetTask"));
    }
}
