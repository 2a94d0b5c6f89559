//! [`A2aClient`]: one agent, all operations, both protocol versions.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::{
    AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
};
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use tracing::Instrument;

use crate::card::{self, Binding, ProtocolVersion};
use crate::error::ClientError;
use crate::stream::{StreamKind, TaskStream};
use crate::trace;
use crate::transport::{EventSource, JsonRpcV1, JsonRpcV03, RestV1, Transport};

/// Builds an [`A2aClient`].
#[derive(Debug, Clone, Default)]
pub struct ClientBuilder {
    headers: HeaderMap,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    version: Option<ProtocolVersion>,
    binding: Option<Binding>,
    http: Option<reqwest::Client>,
    roots: Vec<reqwest::Certificate>,
    /// The same roots as PEM, for the gRPC transport's TLS.
    roots_pem: Vec<Vec<u8>>,
    /// Invalid header names or values.
    errors: Vec<String>,
    /// Why root certificates given could not be read.
    bad_certificates: Option<String>,
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

    /// Speaks only this binding (default: JSON-RPC, then gRPC, then HTTP+JSON, as the card
    /// offers).
    pub fn binding(mut self, binding: Binding) -> Self {
        self.binding = Some(binding);
        self
    }

    /// Also trusts the certificates in `pem` (a server with a private or self-signed
    /// certificate) for HTTPS and gRPC over TLS.
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Self {
        match reqwest::Certificate::from_pem_bundle(pem) {
            Ok(certs) if !certs.is_empty() => {
                self.roots.extend(certs);
                self.roots_pem.push(pem.to_vec());
            }
            Ok(_) => self.bad_certificates = Some("no certificate in the PEM".into()),
            Err(e) => self.bad_certificates = Some(e.to_string()),
        }
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
        if let Some(reason) = &self.bad_certificates {
            return Err(ClientError::InvalidCertificate(reason.clone()));
        }
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
        for cert in &self.roots {
            b = b.add_root_certificate(cert.clone());
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
        let (iface, version, binding) = card::select_interface(&card, self.version, self.binding)?;
        let (url, headers, timeout) = (iface.url, self.headers, self.timeout);
        let transport: Arc<dyn Transport> = match (binding, version) {
            #[cfg(feature = "grpc")]
            (Binding::Grpc, _) => Arc::new(crate::transport::GrpcV1::new(
                &grpc_target(&url, &card),
                iface.tenant.clone(),
                headers,
                timeout,
                self.connect_timeout,
                &self.roots_pem,
            )?),
            (Binding::HttpJson, _) => Arc::new(RestV1::new(http, &url, headers, timeout)?),
            (_, ProtocolVersion::V03) => Arc::new(JsonRpcV03::new(http, url, headers, timeout)),
            _ => Arc::new(JsonRpcV1::new(http, url, headers, timeout)),
        };
        Ok(A2aClient::with_transport(card, transport, iface.tenant))
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
            return Err(ClientError::status(card_url.as_str(), status, &bytes));
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
    card: AgentCard,
    transport: Arc<dyn Transport>,
    tenant: Option<String>,
}

/// A client for one agent. Cheap to clone.
///
/// Every call sends `A2A-Version` and the configured auth headers. v1.0 is used when the card
/// offers it, v0.3 otherwise; the API is the same (v1.0 types) either way: the version and
/// binding live in the [`Transport`].
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

    /// A client for the agent `card` describes, over `transport` (for a binding of your own,
    /// or one configured by hand); `tenant` is stamped on requests that carry none.
    pub fn with_transport(
        card: AgentCard,
        transport: Arc<dyn Transport>,
        tenant: Option<String>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                card,
                transport,
                tenant,
            }),
        }
    }

    /// The agent card.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The endpoint in use.
    pub fn endpoint(&self) -> &str {
        self.inner.transport.endpoint()
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.transport.protocol_version()
    }

    /// The binding in use, as cards name it (`JSONRPC`, `HTTP+JSON`).
    pub fn binding(&self) -> &'static str {
        self.inner.transport.binding()
    }

    /// Whether the agent declares streaming.
    pub fn supports_streaming(&self) -> bool {
        self.inner.card.capabilities.streaming == Some(true)
    }

    fn tenant(&self, tenant: &mut Option<String>) {
        if tenant.is_none() {
            tenant.clone_from(&self.inner.tenant);
        }
    }

    /// `SendMessage`: the agent's direct reply or the task (final unless
    /// `returnImmediately`).
    pub async fn send(
        &self,
        mut req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        self.tenant(&mut req.tenant);
        let span = self.span("SendMessage");
        let result = in_span(&span, self.inner.transport.send_message(req)).await;
        match &result {
            Ok(SendMessageResponse::Task(t)) => trace::record_task(
                &span,
                Some(&t.id),
                Some(&t.context_id),
                Some(t.status.state),
            ),
            Ok(SendMessageResponse::Message(m)) => {
                trace::record_task(&span, m.task_id.as_deref(), m.context_id.as_deref(), None);
            }
            _ => {}
        }
        result
    }

    /// The span of one call.
    fn span(&self, method: &'static str) -> tracing::Span {
        let transport = &self.inner.transport;
        trace::call_span(method, transport.binding(), transport.endpoint())
    }

    /// Runs a call (about `task_id`, if any) inside a span of its own.
    async fn traced<T>(
        &self,
        method: &'static str,
        task_id: Option<&str>,
        call: impl std::future::Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        let span = self.span(method);
        trace::record_task(&span, task_id, None, None);
        in_span(&span, call).await
    }

    /// `SendStreamingMessage`: the reply as a stream of events, ending after a terminal or
    /// interrupted state. Dropping the stream stops listening; it does **not** cancel the
    /// task (use [`cancel_task`](Self::cancel_task)).
    pub async fn stream(&self, mut req: SendMessageRequest) -> Result<TaskStream, ClientError> {
        if !self.supports_streaming() {
            return Err(ClientError::Unsupported(
                "streaming (capabilities.streaming is not true)".into(),
            ));
        }
        self.tenant(&mut req.tenant);
        let span = self.span("SendStreamingMessage");
        let events = in_span(&span, self.inner.transport.send_streaming_message(req)).await?;
        Ok(self.task_stream(events, StreamKind::Send, None, span))
    }

    fn task_stream(
        &self,
        events: EventSource,
        kind: StreamKind,
        task_id: Option<String>,
        span: tracing::Span,
    ) -> TaskStream {
        TaskStream::new(
            self.inner.transport.clone(),
            self.inner.tenant.clone(),
            events,
            kind,
            task_id,
            span,
        )
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Task, ClientError> {
        let mut req = GetTaskRequest::new(id);
        req.history_length = history_length;
        self.tenant(&mut req.tenant);
        self.traced("GetTask", Some(id), self.inner.transport.get_task(req))
            .await
            .map_err(|e| e.about_task(id))
    }

    /// `ListTasks` (v1.0 only).
    pub async fn list_tasks(
        &self,
        mut req: ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        self.tenant(&mut req.tenant);
        self.traced("ListTasks", None, self.inner.transport.list_tasks(req))
            .await
    }

    /// `CancelTask`: asks the agent to stop the task; returns the task as the agent left it.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, ClientError> {
        let mut req = CancelTaskRequest::new(id);
        self.tenant(&mut req.tenant);
        self.traced(
            "CancelTask",
            Some(id),
            self.inner.transport.cancel_task(req),
        )
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
        let mut req = SubscribeToTaskRequest::new(id);
        self.tenant(&mut req.tenant);
        let span = self.span("SubscribeToTask");
        trace::record_task(&span, Some(id), None, None);
        let events = in_span(
            &span,
            self.inner.transport.subscribe_to_task(req, last_event_id),
        )
        .await
        .map_err(|e| e.about_task(id))?;
        Ok(self.task_stream(events, StreamKind::Subscribe, Some(id.to_owned()), span))
    }

    /// `GetExtendedAgentCard` (v0.3: `agent/getAuthenticatedExtendedCard`).
    pub async fn extended_card(&self) -> Result<AgentCard, ClientError> {
        self.traced(
            "GetExtendedAgentCard",
            None,
            self.inner.transport.get_extended_agent_card(),
        )
        .await
    }

    /// `CreateTaskPushNotificationConfig`: registers `config`'s webhook for the task
    /// `task_id`; the answer carries the config's id.
    pub async fn create_push_config(
        &self,
        task_id: &str,
        mut config: a2a_types::TaskPushNotificationConfig,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        config.task_id = Some(task_id.to_owned());
        self.traced(
            "CreateTaskPushNotificationConfig",
            Some(task_id),
            self.inner.transport.create_push_config(config),
        )
        .await
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        self.traced(
            "GetTaskPushNotificationConfig",
            Some(task_id),
            self.inner.transport.get_push_config(task_id, id),
        )
        .await
    }

    /// `ListTaskPushNotificationConfigs`.
    pub async fn push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, ClientError> {
        self.traced(
            "ListTaskPushNotificationConfigs",
            Some(task_id),
            self.inner.transport.list_push_configs(task_id),
        )
        .await
    }

    /// `DeleteTaskPushNotificationConfig` (deleting an absent config succeeds).
    pub async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        self.traced(
            "DeleteTaskPushNotificationConfig",
            Some(task_id),
            self.inner.transport.delete_push_config(task_id, id),
        )
        .await
    }
}

/// Runs `call` inside `span`, marking the span when the call fails.
async fn in_span<T>(
    span: &tracing::Span,
    call: impl std::future::Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    let result = call.instrument(span.clone()).await;
    if let Err(e) = &result {
        trace::record_error(span, e);
    }
    result
}

/// Where to reach a gRPC interface: its `host:port` (the proto's form) over TLS when the
/// agent's other interfaces are `https` (a server behind TLS serves gRPC on it too), else
/// the URL as given.
#[cfg(feature = "grpc")]
fn grpc_target(url: &str, card: &AgentCard) -> String {
    let tls = card
        .supported_interfaces
        .iter()
        .any(|i| i.url.starts_with("https://"));
    if !url.contains("://") && tls {
        format!("https://{url}")
    } else {
        url.to_owned()
    }
}
