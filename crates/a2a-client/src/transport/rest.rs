//! HTTP+JSON (REST), A2A v1.0 (spec §11): [`RestV1`].

use std::time::Duration;

use a2a_types::{
    A2aError, AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    ProtocolVersion, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task,
};
use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{EventSource, Transport, WireEvent};
use crate::error::ClientError;
use crate::sse::sse_stream;

/// HTTP+JSON, A2A v1.0: resources under the interface URL (`{url}/message:send`, …).
#[derive(Debug)]
pub struct RestV1 {
    http: reqwest::Client,
    base: Url,
    endpoint: String,
    headers: HeaderMap,
    timeout: Option<Duration>,
}

impl RestV1 {
    /// Calls the resources under `base` with `http`, sending `headers` (and
    /// `A2A-Version: 1.0`) with every request; non-streaming calls are limited to `timeout`.
    pub fn new(
        http: reqwest::Client,
        base: &str,
        headers: HeaderMap,
        timeout: Option<Duration>,
    ) -> Result<Self, ClientError> {
        let endpoint = base.trim_end_matches('/').to_owned();
        let base = Url::parse(&endpoint).map_err(|_| ClientError::InvalidUrl(base.to_owned()))?;
        Ok(Self {
            http,
            base,
            endpoint,
            headers,
            timeout,
        })
    }

    /// `{base}/{segments…}`, each segment percent-encoded (task ids may hold anything).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .request(method, url)
            .headers(self.headers.clone())
            .header(a2a_types::VERSION_HEADER, ProtocolVersion::V1.as_str());
        for (name, value) in crate::trace::headers() {
            req = req.header(name, value);
        }
        req
    }

    async fn call<R: DeserializeOwned>(
        &self,
        method: Method,
        url: Url,
        body: Option<&impl Serialize>,
    ) -> Result<R, ClientError> {
        let mut req = self
            .request(method, url.clone())
            .header(ACCEPT, "application/json");
        if let Some(body) = body {
            req = req.json(body);
        }
        if let Some(t) = self.timeout {
            req = req.timeout(t);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ClientError::http(url.as_str(), e))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| ClientError::http(url.as_str(), e))?;
        if (200..300).contains(&status) {
            return serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::InvalidResponse(format!("{url}: {e}")));
        }
        Err(error_of(url.as_str(), status, &bytes))
    }

    async fn call_stream(
        &self,
        url: Url,
        body: &impl Serialize,
        last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError> {
        let mut req = self
            .request(Method::POST, url.clone())
            .header(ACCEPT, "text/event-stream")
            .header("Cache-Control", "no-store")
            .json(body);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ClientError::http(url.as_str(), e))?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && (200..300).contains(&status) {
            let url = url.to_string();
            return Ok(Box::pin(sse_stream(resp.bytes_stream()).filter_map(
                move |item| {
                    futures::future::ready(match item {
                        Ok(sse) if sse.data.trim().is_empty() => None,
                        Ok(sse) => {
                            Some(decode(&sse.data).map(|r| WireEvent::new(sse.id, r, false)))
                        }
                        Err(e) => Some(Err(ClientError::http(&url, e))),
                    })
                },
            )));
        }
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| ClientError::http(url.as_str(), e))?;
        if (200..300).contains(&status) {
            return Err(ClientError::InvalidResponse(
                "expected an event stream".into(),
            ));
        }
        Err(error_of(url.as_str(), status, &bytes))
    }
}

/// One SSE event's data: a `StreamResponse`, or a `google.rpc.Status` error.
fn decode(data: &str) -> Result<StreamResponse, ClientError> {
    let value: Value = serde_json::from_str(data)
        .map_err(|e| ClientError::InvalidResponse(format!("stream event: {e}")))?;
    if value.get("error").is_some() {
        return Err(protocol_error(&value)
            .unwrap_or_else(|| ClientError::InvalidResponse(format!("stream error: {data}"))));
    }
    serde_json::from_value(value)
        .map_err(|e| ClientError::InvalidResponse(format!("stream event: {e}")))
}

fn protocol_error(body: &Value) -> Option<ClientError> {
    let error = A2aError::from_rest_body(body)?;
    let message = body["error"]["message"]
        .as_str()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map_or_else(|| error.to_string(), str::to_owned);
    Some(ClientError::Protocol { error, message })
}

/// An error response: the A2A error its body names, else the HTTP status.
fn error_of(url: &str, status: u16, bytes: &[u8]) -> ClientError {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|body| protocol_error(&body))
        .unwrap_or_else(|| ClientError::status(url, status, bytes))
}

/// `ListTasksRequest` as query parameters (camelCase names, scalar values).
fn list_query(req: &ListTasksRequest) -> Vec<(String, String)> {
    let Ok(Value::Object(fields)) = serde_json::to_value(req) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter(|(k, _)| k != "tenant")
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k, s)),
            Value::Number(n) => Some((k, n.to_string())),
            Value::Bool(b) => Some((k, b.to_string())),
            _ => None,
        })
        .collect()
}

#[async_trait::async_trait]
impl Transport for RestV1 {
    fn protocol_version(&self) -> ProtocolVersion {
        ProtocolVersion::V1
    }

    fn binding(&self) -> &'static str {
        a2a_types::binding::HTTP_JSON
    }

    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        self.call(Method::POST, self.url(&["message:send"]), Some(&req))
            .await
    }

    async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventSource, ClientError> {
        self.call_stream(self.url(&["message:stream"]), &req, None)
            .await
    }

    async fn get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError> {
        let mut url = self.url(&["tasks", &req.id]);
        if let Some(n) = req.history_length {
            url.query_pairs_mut()
                .append_pair("historyLength", &n.to_string());
        }
        self.call(Method::GET, url, None::<&()>).await
    }

    async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, ClientError> {
        let mut url = self.url(&["tasks"]);
        let query = list_query(&req);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        self.call(Method::GET, url, None::<&()>).await
    }

    async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, ClientError> {
        let url = self.url(&["tasks", &format!("{}:cancel", req.id)]);
        self.call(Method::POST, url, Some(&req)).await
    }

    async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError> {
        let url = self.url(&["tasks", &format!("{}:subscribe", req.id)]);
        self.call_stream(url, &req, last_event_id).await
    }

    async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        self.call(Method::GET, self.url(&["extendedAgentCard"]), None::<&()>)
            .await
    }

    async fn create_push_config(
        &self,
        config: a2a_types::TaskPushNotificationConfig,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let task_id = config.task_id.clone().unwrap_or_default();
        let url = self.url(&["tasks", &task_id, "pushNotificationConfigs"]);
        self.call(Method::POST, url, Some(&config)).await
    }

    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let url = self.url(&["tasks", task_id, "pushNotificationConfigs", id]);
        self.call(Method::GET, url, None::<&()>).await
    }

    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, ClientError> {
        let url = self.url(&["tasks", task_id, "pushNotificationConfigs"]);
        let page: a2a_types::ListTaskPushNotificationConfigsResponse =
            self.call(Method::GET, url, None::<&()>).await?;
        Ok(page.configs)
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let url = self.url(&["tasks", task_id, "pushNotificationConfigs", id]);
        let _: Value = self.call(Method::DELETE, url, None::<&()>).await?;
        Ok(())
    }
}
