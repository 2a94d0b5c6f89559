//! [`A2aClient`]: one agent, all operations, both protocol versions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse, method};
use a2a_types::v03;
use a2a_types::{
    A2aError, AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::card::{self, ProtocolVersion};
use crate::error::ClientError;
use crate::stream::{StreamKind, TaskStream};

/// Builds an [`A2aClient`].
#[derive(Debug, Clone, Default)]
pub struct ClientBuilder {
    headers: HeaderMap,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    version: Option<ProtocolVersion>,
    http: Option<reqwest::Client>,
    errors: Vec<String>,
}

impl ClientBuilder {
    /// Sends `Authorization: Bearer {token}` on every request.
    pub fn bearer_token(self, token: &str) -> Self {
        self.header(AUTHORIZATION.as_str(), &format!("Bearer {token}"))
    }

    /// Sends an API key in `header` on every request.
    pub fn api_key(self, header: &str, key: &str) -> Self {
        self.header(header, key)
    }

    /// Sends a header on every request.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(n), Ok(v)) => {
                self.headers.append(n, v);
            }
            _ => self.errors.push(name.to_owned()),
        }
        self
    }

    /// Time limit of each non-streaming call (streams are not limited; see
    /// [`A2aClient::run_with_deadline`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Time limit for establishing a connection.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Speaks only this protocol version (default: v1.0 when the card offers it, else v0.3).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// Uses this HTTP client (its own default headers and timeouts apply too).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// The headers sent with every request.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    fn http(&self) -> Result<reqwest::Client, ClientError> {
        if let Some(name) = self.errors.first() {
            return Err(ClientError::InvalidHeader(name.clone()));
        }
        if let Some(http) = &self.http {
            return Ok(http.clone());
        }
        let mut b = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(1024);
        if let Some(t) = self.connect_timeout {
            b = b.connect_timeout(t);
        }
        b.build()
            .map_err(|e| ClientError::http("(client setup)", e))
    }

    /// Resolves the agent card at `url` (the agent's base URL or the card's own URL) and
    /// connects to the best interface it offers.
    pub async fn connect(self, url: &str) -> Result<A2aClient, ClientError> {
        let http = self.http()?;
        let version = self.version.unwrap_or(ProtocolVersion::V1);
        let card = fetch_card_as(&http, &self.headers, url, version).await?;
        self.build(http, card)
    }

    /// Connects with an already known card.
    pub fn with_card(self, card: AgentCard) -> Result<A2aClient, ClientError> {
        let http = self.http()?;
        self.build(http, card)
    }

    fn build(self, http: reqwest::Client, card: AgentCard) -> Result<A2aClient, ClientError> {
        let (iface, version) = card::select_interface(&card, self.version)?;
        Ok(A2aClient {
            inner: Arc::new(Inner {
                http,
                endpoint: iface.url,
                tenant: iface.tenant,
                version,
                card,
                headers: self.headers,
                timeout: self.timeout,
                next_id: AtomicU64::new(1),
            }),
        })
    }

    /// Talks JSON-RPC to `endpoint` without reading a card (the agent is assumed to stream).
    pub fn endpoint(
        self,
        endpoint: &str,
        version: ProtocolVersion,
    ) -> Result<A2aClient, ClientError> {
        let http = self.http()?;
        let mut card = AgentCard::default();
        card.name = endpoint.to_owned();
        card.capabilities.streaming = Some(true);
        card.supported_interfaces = vec![a2a_types::AgentInterface::new(
            endpoint,
            a2a_types::binding::JSONRPC,
            version.as_str(),
        )];
        self.protocol_version(version).build(http, card)
    }
}

/// Fetches and parses the agent card for `url`, trying `/.well-known/agent-card.json` and then
/// the legacy `/.well-known/agent.json`.
pub async fn fetch_card(
    http: &reqwest::Client,
    headers: &HeaderMap,
    url: &str,
) -> Result<AgentCard, ClientError> {
    fetch_card_as(http, headers, url, ProtocolVersion::V1).await
}

/// [`fetch_card`], announcing `version` in `A2A-Version` like every other request.
async fn fetch_card_as(
    http: &reqwest::Client,
    headers: &HeaderMap,
    url: &str,
    version: ProtocolVersion,
) -> Result<AgentCard, ClientError> {
    let mut hint = None;
    for card_url in card::card_urls(url)? {
        let resp = http
            .get(card_url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "application/json")
            .header(a2a_types::VERSION_HEADER, version.as_str())
            .send()
            .await
            .map_err(|e| ClientError::http(card_url.as_str(), e))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| ClientError::http(card_url.as_str(), e))?;
        if (200..300).contains(&status) {
            let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
                ClientError::InvalidResponse(format!("agent card at {card_url}: {e}"))
            })?;
            return card::parse_card(json, &card_url);
        }
        if status != 404 {
            return Err(status_error(card_url.as_str(), status, &bytes));
        }
        // Keep the first 404's explanation: the legacy path rarely says more.
        hint = hint.or_else(|| not_found_hint(&bytes));
    }
    Err(ClientError::CardNotFound {
        url: url.to_owned(),
        hint,
    })
}

/// What a 404 body says, for a person: `error.message` (or `message`), and the agents the
/// server lists, if it does.
fn not_found_hint(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let err = v.get("error").unwrap_or(&v);
    let message = err
        .get("message")
        .or_else(|| v.get("message"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let agents: Vec<&str> = err
        .get("agents")
        .or_else(|| v.get("agents"))
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().or_else(|| x.get("id")?.as_str()))
                .collect()
        })
        .unwrap_or_default();
    match (message, agents.is_empty()) {
        (Some(m), true) => Some(m),
        (Some(m), false) => Some(format!("{m} (agents here: {})", agents.join(", "))),
        (None, false) => Some(format!("agents here: {}", agents.join(", "))),
        (None, true) => None,
    }
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    endpoint: String,
    tenant: Option<String>,
    version: ProtocolVersion,
    card: AgentCard,
    headers: HeaderMap,
    timeout: Option<Duration>,
    next_id: AtomicU64,
}

/// A client for one agent. Cheap to clone.
///
/// Every call sends `A2A-Version` and the configured auth headers. v1.0 is used when the card
/// offers it, v0.3 otherwise; the API is the same (v1.0 types) either way.
#[derive(Debug, Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
}

impl A2aClient {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Resolves the card at `url` and connects with default settings.
    pub async fn connect(url: &str) -> Result<Self, ClientError> {
        Self::builder().connect(url).await
    }

    /// The agent card.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The JSON-RPC endpoint in use.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// Whether the agent declares streaming.
    pub fn supports_streaming(&self) -> bool {
        self.inner.card.capabilities.streaming == Some(true)
    }

    fn is_v03(&self) -> bool {
        self.inner.version == ProtocolVersion::V03
    }

    fn request(&self, body: &impl Serialize) -> reqwest::RequestBuilder {
        let inner = &*self.inner;
        inner
            .http
            .post(&inner.endpoint)
            .headers(inner.headers.clone())
            .header(a2a_types::VERSION_HEADER, inner.version.as_str())
            .header(CONTENT_TYPE, "application/json")
            .json(body)
    }

    fn next_id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// One JSON-RPC call.
    pub(crate) async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        let body = JsonRpcRequest::new(self.next_id(), method, params);
        let mut req = self.request(&body).header(ACCEPT, "application/json");
        if let Some(t) = self.inner.timeout {
            req = req.timeout(t);
        }
        let url = &self.inner.endpoint;
        let resp = req.send().await.map_err(|e| ClientError::http(url, e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| ClientError::http(url, e))?;
        parse_response(url, status.as_u16(), &bytes)
    }

    /// A streaming JSON-RPC call.
    pub(crate) async fn call_stream<P: Serialize>(
        &self,
        method: &str,
        params: &P,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let body = JsonRpcRequest::new(self.next_id(), method, params);
        let mut req = self
            .request(&body)
            .header(ACCEPT, "text/event-stream")
            .header("Cache-Control", "no-store");
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let url = &self.inner.endpoint;
        let resp = req.send().await.map_err(|e| ClientError::http(url, e))?;
        let status = resp.status().as_u16();
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if is_sse && (200..300).contains(&status) {
            return Ok(resp);
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

    fn with_tenant(&self, mut req: SendMessageRequest) -> SendMessageRequest {
        if req.tenant.is_none() {
            req.tenant.clone_from(&self.inner.tenant);
        }
        req
    }

    /// `SendMessage`: the agent's direct reply or the task (final unless
    /// `returnImmediately`).
    pub async fn send(&self, req: SendMessageRequest) -> Result<SendMessageResponse, ClientError> {
        let req = self.with_tenant(req);
        if self.is_v03() {
            let params = v03::MessageSendParams::from(&req);
            let result: v03::SendMessageResult =
                self.call(method::v03::MESSAGE_SEND, &params).await?;
            return SendMessageResponse::try_from(result).map_err(invalid);
        }
        self.call(method::SEND_MESSAGE, &req).await
    }

    /// `SendStreamingMessage`: the reply as a stream of events, ending after a terminal or
    /// interrupted state. Dropping the stream stops listening; it does **not** cancel the
    /// task (use [`cancel_task`](Self::cancel_task)).
    pub async fn stream(&self, req: SendMessageRequest) -> Result<TaskStream, ClientError> {
        if !self.supports_streaming() {
            return Err(ClientError::Unsupported(
                "streaming (capabilities.streaming is not true)".into(),
            ));
        }
        let req = self.with_tenant(req);
        let resp = if self.is_v03() {
            let params = v03::MessageSendParams::from(&req);
            self.call_stream(method::v03::MESSAGE_STREAM, &params, None)
                .await?
        } else {
            self.call_stream(method::SEND_STREAMING_MESSAGE, &req, None)
                .await?
        };
        Ok(TaskStream::new(self.clone(), resp, StreamKind::Send, None))
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Task, ClientError> {
        if self.is_v03() {
            let mut p = v03::TaskQueryParams::default();
            p.id = id.to_owned();
            p.history_length = history_length;
            let t: v03::Task = self
                .call(method::v03::TASKS_GET, &p)
                .await
                .map_err(|e| e.about_task(id))?;
            return Task::try_from(t).map_err(invalid);
        }
        let mut req = GetTaskRequest::new(id);
        req.history_length = history_length;
        req.tenant.clone_from(&self.inner.tenant);
        self.call(method::GET_TASK, &req)
            .await
            .map_err(|e| e.about_task(id))
    }

    /// `ListTasks` (v1.0 only).
    pub async fn list_tasks(
        &self,
        mut req: ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        if self.is_v03() {
            return Err(ClientError::Unsupported(
                "ListTasks does not exist in A2A v0.3".into(),
            ));
        }
        if req.tenant.is_none() {
            req.tenant.clone_from(&self.inner.tenant);
        }
        self.call(method::LIST_TASKS, &req).await
    }

    /// `CancelTask`: asks the agent to stop the task; returns the task as the agent left it.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, ClientError> {
        if self.is_v03() {
            let mut p = v03::TaskIdParams::default();
            p.id = id.to_owned();
            let t: v03::Task = self
                .call(method::v03::TASKS_CANCEL, &p)
                .await
                .map_err(|e| e.about_task(id))?;
            return Task::try_from(t).map_err(invalid);
        }
        let mut req = CancelTaskRequest::new(id);
        req.tenant.clone_from(&self.inner.tenant);
        self.call(method::CANCEL_TASK, &req)
            .await
            .map_err(|e| e.about_task(id))
    }

    /// `SubscribeToTask`: the task's current state, then its events until it is terminal or
    /// interrupted. A dropped connection is resumed from the last event id (v1.0).
    pub async fn subscribe(&self, id: &str) -> Result<TaskStream, ClientError> {
        self.subscribe_after(id, None).await
    }

    /// Like [`subscribe`](Self::subscribe), resuming after event `last_event_id`.
    pub async fn subscribe_after(
        &self,
        id: &str,
        last_event_id: Option<&str>,
    ) -> Result<TaskStream, ClientError> {
        let resp = self.open_subscription(id, last_event_id).await?;
        Ok(TaskStream::new(
            self.clone(),
            resp,
            StreamKind::Subscribe,
            Some(id.to_owned()),
        ))
    }

    pub(crate) async fn open_subscription(
        &self,
        id: &str,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        if self.is_v03() {
            let mut p = v03::TaskIdParams::default();
            p.id = id.to_owned();
            return self
                .call_stream(method::v03::TASKS_RESUBSCRIBE, &p, None)
                .await
                .map_err(|e| e.about_task(id));
        }
        let mut req = SubscribeToTaskRequest::new(id);
        req.tenant.clone_from(&self.inner.tenant);
        self.call_stream(method::SUBSCRIBE_TO_TASK, &req, last_event_id)
            .await
            .map_err(|e| e.about_task(id))
    }

    /// `GetExtendedAgentCard` (v0.3: `agent/getAuthenticatedExtendedCard`).
    pub async fn extended_card(&self) -> Result<AgentCard, ClientError> {
        if self.is_v03() {
            let card: v03::AgentCard = self
                .call(
                    method::v03::GET_AUTHENTICATED_EXTENDED_CARD,
                    &serde_json::json!({}),
                )
                .await?;
            return Ok(card.to_v1());
        }
        self.call(method::GET_EXTENDED_AGENT_CARD, &serde_json::json!({}))
            .await
    }
}

fn invalid(e: A2aError) -> ClientError {
    ClientError::InvalidResponse(e.to_string())
}

/// Reads a JSON-RPC response body: the result, or the error as [`ClientError::Protocol`].
pub(crate) fn parse_response<R: DeserializeOwned>(
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
        Ok(_) if !(200..300).contains(&status) => Err(status_error(url, status, bytes)),
        Ok(_) => Err(ClientError::InvalidResponse(
            "response has neither result nor error".into(),
        )),
        Err(e) if (200..300).contains(&status) => {
            // Distinguish a wrong result shape from a body that is not JSON-RPC at all.
            match serde_json::from_slice::<JsonRpcResponse<serde_json::Value>>(bytes) {
                Ok(_) => Err(ClientError::InvalidResponse(format!(
                    "unexpected result: {e}"
                ))),
                Err(_) => Err(status_error(url, status, bytes)),
            }
        }
        Err(_) => Err(status_error(url, status, bytes)),
    }
}

fn status_error(url: &str, status: u16, bytes: &[u8]) -> ClientError {
    let body = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
    ClientError::Status {
        url: url.to_owned(),
        status,
        body,
    }
}
