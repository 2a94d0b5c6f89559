//! Shared helpers: a scripted test agent, servers on 127.0.0.1:0, JSON-RPC and SSE calls.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use a2a_server::{
    AgentError, AgentExecutor, ConnectionLimits, HandlerConfig, InMemoryTaskStore, InProcessBus,
    RequestContext, RequestHandler, RuntimeConfig, ServeOptions, TaskRuntime, TaskUpdater, Tls,
    agent_routes,
};
use a2a_types::{AgentCapabilities, AgentCard, Artifact, Message, Part, Role, TaskState};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

/// A test agent whose behaviour is the first word of the message text.
#[derive(Debug, Default)]
pub struct ScriptAgent;

#[async_trait]
impl AgentExecutor for ScriptAgent {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let text = ctx.user_text();
        let word = text.split_whitespace().next().unwrap_or("");
        match word {
            "reply" => {
                u.reply(Message::new(
                    Role::Agent,
                    vec![Part::text(format!("re: {text}"))],
                ))
                .await?
            }
            "complete" => {
                u.start_work(None).await?;
                u.add_artifact(Artifact::new("out", vec![Part::text("result")]).with_name("out"))
                    .await?;
                u.complete(Some(u.agent_text("done"))).await?;
            }
            "input" => {
                if ctx.task.is_some() {
                    u.add_artifact(Artifact::new("answer", vec![Part::text(text.clone())]))
                        .await?;
                    u.complete(None).await?;
                } else {
                    u.require_input(Some(u.agent_text("more please"))).await?;
                }
            }
            "auth" => {
                if ctx.task.is_some() {
                    u.complete(Some(u.agent_text("authenticated"))).await?;
                } else {
                    u.require_auth(None).await?;
                }
            }
            "chunks" => {
                u.start_work(None).await?;
                for (i, c) in ["a", "b", "c"].iter().enumerate() {
                    u.artifact_chunk(Artifact::new("doc", vec![Part::text(*c)]), i > 0, i == 2)
                        .await?;
                }
                u.add_artifact(Artifact::new("second", vec![Part::text("2")]))
                    .await?;
                u.complete(None).await?;
            }
            "sleep" => {
                let secs: f64 = text
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(5.0);
                u.start_work(None).await?;
                u.add_artifact(Artifact::new("progress", vec![Part::text("started")]))
                    .await?;
                tokio::select! {
                    () = ctx.cancellation.cancelled() => return Ok(()),
                    () = tokio::time::sleep(Duration::from_secs_f64(secs)) => {}
                }
                u.add_artifact(Artifact::new("result", vec![Part::text("finished")]))
                    .await?;
                u.complete(None).await?;
            }
            "panic" => {
                u.start_work(None).await?;
                panic!("boom in the agent");
            }
            "panic-early" => panic!("boom before anything"),
            "error" => {
                u.start_work(None).await?;
                return Err("the model is down".into());
            }
            "return" => {
                u.start_work(None).await?;
            }
            "nothing" => {}
            "after-terminal" => {
                u.complete(None).await?;
                let err = u.start_work(None).await.unwrap_err();
                // Record what the updater said, for the test to check.
                tracing::info!("refused: {err}");
            }
            "closed-chunk" => {
                u.artifact_chunk(Artifact::new("x", vec![Part::text("1")]), false, true)
                    .await?;
                let refused = u
                    .artifact_chunk(Artifact::new("x", vec![Part::text("2")]), true, false)
                    .await
                    .is_err();
                u.complete(Some(u.agent_text(format!("refused={refused}"))))
                    .await?;
            }
            "many" => {
                let n: usize = text
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(200);
                u.start_work(None).await?;
                for i in 0..n {
                    u.artifact_chunk(
                        Artifact::new("big", vec![Part::text(format!("{i},"))]),
                        i > 0,
                        i + 1 == n,
                    )
                    .await?;
                }
                u.complete(None).await?;
            }
            "state" => {
                let state = match text.split_whitespace().nth(1) {
                    Some("failed") => TaskState::Failed,
                    Some("rejected") => TaskState::Rejected,
                    _ => TaskState::Completed,
                };
                u.update_status(state, None).await?;
            }
            _ => {
                u.complete(Some(u.agent_text(format!("echo: {text}"))))
                    .await?
            }
        }
        Ok(())
    }
}

pub fn card(streaming: bool) -> AgentCard {
    let mut card = AgentCard::default();
    card.name = "Script".into();
    card.description = "test agent".into();
    card.version = "1".into();
    let mut caps = AgentCapabilities::default();
    caps.streaming = Some(streaming);
    card.capabilities = caps;
    card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    card.default_output_modes = vec!["text/plain".into()];
    card
}

/// A running test server.
pub struct TestServer {
    pub base: String,
    pub url: String,
    pub handler: Arc<RequestHandler>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

pub struct Setup {
    pub executor: Arc<dyn AgentExecutor>,
    pub card: AgentCard,
    pub runtime: RuntimeConfig,
    pub handler: HandlerConfig,
    pub options: ServeOptions,
    pub store: InMemoryTaskStore,
    pub path: &'static str,
    /// The listener's limits (deadlines, connections).
    pub limits: ConnectionLimits,
    /// HTTPS (HTTP/2 and HTTP/1.1 by ALPN) instead of plain HTTP.
    pub tls: Option<Tls>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            executor: Arc::new(ScriptAgent),
            card: card(true),
            runtime: RuntimeConfig::default(),
            handler: HandlerConfig::default(),
            options: ServeOptions::default(),
            store: InMemoryTaskStore::default(),
            path: "",
            limits: ConnectionLimits::default(),
            tls: None,
        }
    }
}

pub async fn start(setup: Setup) -> TestServer {
    let runtime = TaskRuntime::new(
        setup.executor,
        Arc::new(setup.store),
        Arc::new(InProcessBus::default()),
        setup.runtime,
    );
    let handler = Arc::new(RequestHandler::new(runtime, setup.card, setup.handler));
    let router = agent_routes(handler.clone(), setup.path, &setup.options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let scheme = if setup.tls.is_some() { "https" } else { "http" };
    tokio::spawn(a2a_server::serve_with_tls(
        listener,
        router,
        async move {
            let _ = rx.await;
        },
        Duration::from_secs(10),
        setup.limits,
        setup.tls,
    ));
    let base = format!("{scheme}://{addr}");
    let url = format!(
        "{base}{}",
        if setup.path.is_empty() {
            "/"
        } else {
            setup.path
        }
    );
    TestServer {
        base,
        url,
        handler,
        shutdown: Some(tx),
    }
}

pub async fn server() -> TestServer {
    start(Setup::default()).await
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

pub fn user(text: &str) -> Value {
    json!({"messageId": a2a_types::new_id(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// POSTs a JSON body with an optional `A2A-Version`; returns the JSON answer.
pub async fn post_json(url: &str, version: Option<&str>, body: &Value) -> Value {
    let mut req = http().post(url).json(body);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    req.send().await.unwrap().json().await.unwrap()
}

/// GETs a JSON document.
pub async fn get_json(url: &str) -> Value {
    http().get(url).send().await.unwrap().json().await.unwrap()
}

/// A v1.0 JSON-RPC call; returns the whole response object.
pub async fn rpc(url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post_json(url, Some("1.0"), &body).await
}

/// A v0.3 JSON-RPC call (no version header).
pub async fn rpc03(url: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": "x", "method": method, "params": params});
    post_json(url, None, &body).await
}

/// `SendMessage` with a text; returns `result`.
pub async fn send(url: &str, text: &str) -> Value {
    let r = rpc(url, "SendMessage", json!({"message": user(text)})).await;
    assert!(r.get("error").is_none(), "unexpected error: {r}");
    r["result"].clone()
}

#[derive(Debug, Clone)]
pub struct SseEvent {
    pub id: Option<String>,
    pub data: Value,
}

/// Reads an SSE response event by event (with the client's parser: the workspace has one).
pub struct SseReader {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: a2a_client::sse::SseParser,
    ready: std::collections::VecDeque<a2a_client::sse::SseEvent>,
}

impl SseReader {
    pub fn new(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), 200);
        let ct = resp
            .headers()
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        assert!(ct.starts_with("text/event-stream"), "content-type {ct}");
        Self {
            body: Box::pin(resp.bytes_stream()),
            parser: a2a_client::sse::SseParser::new(),
            ready: std::collections::VecDeque::new(),
        }
    }

    /// The next event, `None` once the server closed the stream.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                if ev.data.is_empty() {
                    continue;
                }
                return Some(SseEvent {
                    id: ev.id,
                    data: serde_json::from_str(&ev.data).unwrap(),
                });
            }
            let chunk = self.body.next().await?.unwrap();
            self.ready.extend(self.parser.feed(&chunk));
        }
    }

    /// Every remaining event, until the server closes the stream.
    pub async fn rest(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let read = async {
            while let Some(ev) = self.next().await {
                events.push(ev);
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("stream did not end");
        events
    }
}

/// Reads a whole SSE response (the server closes it after the final event).
pub async fn read_sse(resp: reqwest::Response) -> Vec<SseEvent> {
    SseReader::new(resp).rest().await
}

/// Opens a v1.0 stream.
pub async fn stream(
    url: &str,
    method: &str,
    params: Value,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let mut req = http().post(url).header("A2A-Version", "1.0").json(&body);
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id);
    }
    req.send().await.unwrap()
}

/// `SendStreamingMessage` with a text, read to its end.
pub async fn stream_text(url: &str, text: &str) -> Vec<SseEvent> {
    read_sse(
        stream(
            url,
            "SendStreamingMessage",
            json!({"message": user(text)}),
            None,
        )
        .await,
    )
    .await
}

/// The kind of a v1.0 stream result: task, message, statusUpdate or artifactUpdate.
pub fn kind(result: &Value) -> &str {
    for k in ["task", "message", "statusUpdate", "artifactUpdate"] {
        if result.get(k).is_some() {
            return k;
        }
    }
    "?"
}

/// Waits for a task to finish by following it (`SubscribeToTask`), then returns it as
/// `GetTask` sees it. A task that already finished is read directly.
pub async fn finished(url: &str, task_id: &str) -> Value {
    let resp = stream(url, "SubscribeToTask", json!({"id": task_id}), None).await;
    let is_sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"));
    if is_sse {
        let events = read_sse(resp).await;
        assert!(!events.is_empty());
    }
    rpc(url, "GetTask", json!({"id": task_id})).await["result"].clone()
}

/// A gRPC request carrying `a2a-version: 1.0` metadata.
pub fn v1<T>(message: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    req
}

/// A gRPC `SendMessageRequest` of one user text part.
pub fn send_req(text: &str) -> a2a_grpc::pb::SendMessageRequest {
    use a2a_grpc::pb;
    pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: a2a_types::new_id(),
            role: pb::Role::User as i32,
            parts: vec![pb::Part {
                content: Some(pb::part::Content::Text(text.into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}
