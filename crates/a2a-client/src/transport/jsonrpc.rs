//! JSON-RPC 2.0 over HTTP, with SSE for streams: [`JsonRpcV1`] (PascalCase methods, v1.0
//! types on the wire) and [`JsonRpcV03`] (`message/send`, `kind` discriminators), on one
//! shared HTTP core.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse, method};
use a2a_types::{
    AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    ProtocolVersion, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, v03,
};
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{EventSource, Transport, WireEvent};
use crate::error::ClientError;
use crate::sse::sse_stream;

/// What both JSON-RPC versions share: the endpoint, the headers of every request, request
/// ids.
#[derive(Debug)]
struct Http {
    http: reqwest::Client,
    endpoint: String,
    headers: HeaderMap,
    timeout: Option<Duration>,
    version: ProtocolVersion,
    next_id: AtomicU64,
}

impl Http {
    fn request(&self, body: &impl Serialize) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .header(a2a_types::VERSION_HEADER, self.version.as_str())
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in crate::trace::headers() {
            req = req.header(name, value);
        }
        req.json(body)
    }

    fn body<'a, P: Serialize>(&self, method: &'a str, params: &'a P) -> JsonRpcRequest<'a, &'a P> {
        JsonRpcRequest::new(self.next_id.fetch_add(1, Ordering::Relaxed), method, params)
    }

    /// One call.
    async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        let mut req = self
            .request(&self.body(method, params))
            .header(ACCEPT, "application/json");
        if let Some(t) = self.timeout {
            req = req.timeout(t);
        }
        let url = &self.endpoint;
        let resp = req.send().await.map_err(|e| ClientError::http(url, e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| ClientError::http(url, e))?;
        parse_response(url, status.as_u16(), &bytes)
    }

    /// A streaming call: its events, decoded by `decode`.
    async fn call_stream<P: Serialize>(
        &self,
        method: &str,
        params: &P,
        last_event_id: Option<&str>,
        decode: fn(&str) -> Result<(StreamResponse, bool), ClientError>,
    ) -> Result<EventSource, ClientError> {
        let mut req = self
            .request(&self.body(method, params))
            .header(ACCEPT, "text/event-stream")
            .header("Cache-Control", "no-store");
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let url = &self.endpoint;
        let resp = req.send().await.map_err(|e| ClientError::http(url, e))?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && (200..300).contains(&status) {
            return Ok(events(resp, url.clone(), decode));
        }
        // Errors before the stream starts come back as plain JSON-RPC responses.
        let bytes = resp.bytes().await.map_err(|e| ClientError::http(url, e))?;
        match parse_response::<serde_json::Value>(url, status, &bytes) {
            Err(e) => Err(e),
            Ok(_) => Err(ClientError::InvalidResponse(
                "expected an event stream".into(),
            )),
        }
    }
}

/// The SSE events of `resp`, each frame's JSON-RPC result decoded by `decode`.
fn events(
    resp: reqwest::Response,
    url: String,
    decode: fn(&str) -> Result<(StreamResponse, bool), ClientError>,
) -> EventSource {
    Box::pin(sse_stream(resp.bytes_stream()).filter_map(move |item| {
        futures::future::ready(match item {
            Ok(sse) if sse.data.trim().is_empty() => None,
            Ok(sse) => Some(
                decode(&sse.data)
                    .map(|(response, marked_final)| WireEvent::new(sse.id, response, marked_final)),
            ),
            Err(e) => Some(Err(ClientError::http(&url, e))),
        })
    }))
}

/// The `result` of one JSON-RPC response frame, or its error.
fn decode_result<R: DeserializeOwned>(data: &str) -> Result<R, ClientError> {
    let r: JsonRpcResponse<R> = serde_json::from_str(data)
        .map_err(|e| ClientError::InvalidResponse(format!("stream event: {e}")))?;
    if let Some(err) = r.error {
        return Err(ClientError::from_jsonrpc(err));
    }
    r.result
        .ok_or_else(|| ClientError::InvalidResponse("empty stream event".into()))
}

fn decode_v1(data: &str) -> Result<(StreamResponse, bool), ClientError> {
    Ok((decode_result::<StreamResponse>(data)?, false))
}

fn decode_v03(data: &str) -> Result<(StreamResponse, bool), ClientError> {
    decode_result::<v03::StreamEvent>(data)?
        .into_v1()
        .map_err(|e| ClientError::InvalidResponse(e.to_string()))
}

/// Reads a JSON-RPC response body: the result, or the error as [`ClientError::Protocol`].
fn parse_response<R: DeserializeOwned>(
    url: &str,
    status: u16,
    bytes: &[u8],
) -> Result<R, ClientError> {
    match serde_json::from_slice::<JsonRpcResponse<R>>(bytes) {
        Ok(JsonRpcResponse {
            error: Some(err), ..
        }) => Err(ClientError::from_jsonrpc(err)),
        Ok(JsonRpcResponse {
            result: Some(r), ..
        }) if (200..300).contains(&status) => Ok(r),
        Ok(_) if !(200..300).contains(&status) => Err(ClientError::status(url, status, bytes)),
        Ok(_) => Err(ClientError::InvalidResponse(
            "response has neither result nor error".into(),
        )),
        Err(e) if (200..300).contains(&status) => {
            // Distinguish a wrong result shape from a body that is not JSON-RPC at all.
            match serde_json::from_slice::<JsonRpcResponse<serde_json::Value>>(bytes) {
                Ok(_) => Err(ClientError::InvalidResponse(format!(
                    "unexpected result: {e}"
                ))),
                Err(_) => Err(ClientError::status(url, status, bytes)),
            }
        }
        Err(_) => Err(ClientError::status(url, status, bytes)),
    }
}

fn invalid(e: a2a_types::A2aError) -> ClientError {
    ClientError::InvalidResponse(e.to_string())
}

/// JSON-RPC, A2A v1.0.
#[derive(Debug)]
pub struct JsonRpcV1(Http);

/// JSON-RPC, A2A v0.3.
#[derive(Debug)]
pub struct JsonRpcV03(Http);

impl JsonRpcV1 {
    /// Calls `endpoint` with `http`, sending `headers` (and `A2A-Version: 1.0`) with every
    /// request; non-streaming calls are limited to `timeout`.
    pub fn new(
        http: reqwest::Client,
        endpoint: impl Into<String>,
        headers: HeaderMap,
        timeout: Option<Duration>,
    ) -> Self {
        Self(Http {
            http,
            endpoint: endpoint.into(),
            headers,
            timeout,
            version: ProtocolVersion::V1,
            next_id: AtomicU64::new(1),
        })
    }
}

impl JsonRpcV03 {
    /// Like [`JsonRpcV1::new`], speaking v0.3.
    pub fn new(
        http: reqwest::Client,
        endpoint: impl Into<String>,
        headers: HeaderMap,
        timeout: Option<Duration>,
    ) -> Self {
        Self(Http {
            http,
            endpoint: endpoint.into(),
            headers,
            timeout,
            version: ProtocolVersion::V03,
            next_id: AtomicU64::new(1),
        })
    }
}

#[async_trait::async_trait]
impl Transport for JsonRpcV1 {
    fn protocol_version(&self) -> ProtocolVersion {
        ProtocolVersion::V1
    }

    fn binding(&self) -> &'static str {
        a2a_types::binding::JSONRPC
    }

    fn endpoint(&self) -> &str {
        &self.0.endpoint
    }

    async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        self.0.call(method::SEND_MESSAGE, &req).await
    }

    async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventSource, ClientError> {
        self.0
            .call_stream(method::SEND_STREAMING_MESSAGE, &req, None, decode_v1)
            .await
    }

    async fn get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError> {
        self.0.call(method::GET_TASK, &req).await
    }

    async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, ClientError> {
        self.0.call(method::LIST_TASKS, &req).await
    }

    async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, ClientError> {
        self.0.call(method::CANCEL_TASK, &req).await
    }

    async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError> {
        self.0
            .call_stream(method::SUBSCRIBE_TO_TASK, &req, last_event_id, decode_v1)
            .await
    }

    async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        self.0
            .call(method::GET_EXTENDED_AGENT_CARD, &serde_json::json!({}))
            .await
    }

    async fn create_push_config(
        &self,
        config: a2a_types::TaskPushNotificationConfig,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        self.0.call(method::CREATE_PUSH_CONFIG, &config).await
    }

    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let params = a2a_types::TaskPushNotificationConfigRequest::new(task_id, id);
        self.0.call(method::GET_PUSH_CONFIG, &params).await
    }

    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, ClientError> {
        let params = a2a_types::ListTaskPushNotificationConfigsRequest::new(task_id);
        let page: a2a_types::ListTaskPushNotificationConfigsResponse =
            self.0.call(method::LIST_PUSH_CONFIGS, &params).await?;
        Ok(page.configs)
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let params = a2a_types::TaskPushNotificationConfigRequest::new(task_id, id);
        let _: serde_json::Value = self.0.call(method::DELETE_PUSH_CONFIG, &params).await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl Transport for JsonRpcV03 {
    fn protocol_version(&self) -> ProtocolVersion {
        ProtocolVersion::V03
    }

    fn binding(&self) -> &'static str {
        a2a_types::binding::JSONRPC
    }

    fn endpoint(&self) -> &str {
        &self.0.endpoint
    }

    async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        let params = v03::MessageSendParams::from(&req);
        let result: v03::SendMessageResult =
            self.0.call(method::v03::MESSAGE_SEND, &params).await?;
        SendMessageResponse::try_from(result).map_err(invalid)
    }

    async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventSource, ClientError> {
        let params = v03::MessageSendParams::from(&req);
        self.0
            .call_stream(method::v03::MESSAGE_STREAM, &params, None, decode_v03)
            .await
    }

    async fn get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError> {
        let mut p = v03::TaskQueryParams::default();
        p.id = req.id;
        p.history_length = req.history_length;
        let t: v03::Task = self.0.call(method::v03::TASKS_GET, &p).await?;
        Task::try_from(t).map_err(invalid)
    }

    async fn list_tasks(&self, _: ListTasksRequest) -> Result<ListTasksResponse, ClientError> {
        Err(ClientError::Unsupported(
            "ListTasks does not exist in A2A v0.3".into(),
        ))
    }

    async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, ClientError> {
        let mut p = v03::TaskIdParams::default();
        p.id = req.id;
        let t: v03::Task = self.0.call(method::v03::TASKS_CANCEL, &p).await?;
        Task::try_from(t).map_err(invalid)
    }

    /// v0.3's `tasks/resubscribe` has no cursor: `last_event_id` is not sent.
    async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        _last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError> {
        let mut p = v03::TaskIdParams::default();
        p.id = req.id;
        self.0
            .call_stream(method::v03::TASKS_RESUBSCRIBE, &p, None, decode_v03)
            .await
    }

    async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        let card: v03::AgentCard = self
            .0
            .call(
                method::v03::GET_AUTHENTICATED_EXTENDED_CARD,
                &serde_json::json!({}),
            )
            .await?;
        Ok(card.to_v1())
    }
}
