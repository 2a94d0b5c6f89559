//! `remote` agents: every message is forwarded to another A2A agent through this project's
//! client (any binding, v1.0 or v0.3), its events streamed through as this task's own, and
//! a cancel of this task cancels the remote one.

use std::collections::HashMap;
use std::sync::Mutex;

use a2a_client::{A2aClient, Binding, ProtocolVersion};
use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater, async_trait};
use a2a_types::{Message, SendMessageRequest, StreamResponse, TaskState};
use tokio::sync::OnceCell;

/// Forwards to the agent at a URL.
#[derive(Debug)]
pub struct RemoteAgent {
    url: String,
    binding: Option<Binding>,
    version: Option<ProtocolVersion>,
    client: OnceCell<A2aClient>,
    /// Our task id → the remote task id; our context id → the remote context id (so a
    /// continued task or conversation continues over there too).
    tasks: Mutex<HashMap<String, String>>,
    contexts: Mutex<HashMap<String, String>>,
}

impl RemoteAgent {
    /// Forwards to `url` (its card decides the binding unless `binding` pins one).
    pub fn new(url: String, binding: Option<Binding>) -> Self {
        Self {
            url,
            binding,
            version: None,
            client: OnceCell::new(),
            tasks: Mutex::new(HashMap::new()),
            contexts: Mutex::new(HashMap::new()),
        }
    }

    /// Speaks only this protocol version (default: v1.0 when the card offers it).
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    async fn client(&self) -> Result<&A2aClient, AgentError> {
        self.client
            .get_or_try_init(|| async {
                let mut b = A2aClient::builder();
                if let Some(binding) = self.binding {
                    b = b.binding(binding);
                }
                if let Some(version) = self.version {
                    b = b.protocol_version(version);
                }
                b.connect(&self.url).await
            })
            .await
            .map_err(|e| AgentError::from(format!("cannot reach {}: {e}", self.url)))
    }

    fn remember(&self, ours: (&str, &str), theirs: (Option<&str>, Option<&str>)) {
        if let Some(t) = theirs.0 {
            self.tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(ours.0.to_owned(), t.to_owned());
        }
        if let Some(c) = theirs.1 {
            self.contexts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(ours.1.to_owned(), c.to_owned());
        }
    }
}

#[async_trait]
impl AgentExecutor for RemoteAgent {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let client = self.client().await?;
        let mut message = Message::new(ctx.message.role, ctx.message.parts.clone());
        message.metadata = ctx.message.metadata.clone();
        message.task_id = self
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&ctx.task_id)
            .cloned();
        message.context_id = self
            .contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&ctx.context_id)
            .cloned();
        let mut req = SendMessageRequest::new(message);
        req.metadata = ctx.metadata.clone();
        let mut stream = client
            .stream(req)
            .await
            .map_err(|e| AgentError::from(format!("{}: {e}", self.url)))?;
        let mut remote_task: Option<String> = None;
        loop {
            let next = tokio::select! {
                next = stream.next() => next,
                () = ctx.cancellation.cancelled() => {
                    if let Some(id) = &remote_task {
                        // Stopping to listen is not enough: the remote task is canceled too.
                        if let Err(e) = client.cancel_task(id).await {
                            tracing::warn!(task = %id, error = %e, "could not cancel the remote task");
                        }
                    }
                    return Ok(());
                }
            };
            let Some(event) = next else { break };
            let event = event.map_err(|e| AgentError::from(format!("{}: {e}", self.url)))?;
            match event.response {
                StreamResponse::Message(m) => {
                    u.reply(u.agent_message(m.parts)).await?;
                    return Ok(());
                }
                StreamResponse::Task(t) => {
                    self.remember(
                        (&ctx.task_id, &ctx.context_id),
                        (Some(&t.id), Some(&t.context_id)),
                    );
                    remote_task = Some(t.id);
                }
                StreamResponse::ArtifactUpdate(a) => {
                    u.artifact_chunk(a.artifact, a.append, a.last_chunk).await?;
                }
                StreamResponse::StatusUpdate(s) => {
                    if remote_task.is_none() {
                        self.remember(
                            (&ctx.task_id, &ctx.context_id),
                            (Some(&s.task_id), Some(&s.context_id)),
                        );
                        remote_task = Some(s.task_id.clone());
                    }
                    let message = s.status.message.map(|m| u.agent_message(m.parts));
                    match s.status.state {
                        TaskState::Working | TaskState::Submitted => u.start_work(message).await?,
                        TaskState::InputRequired => u.require_input(message).await?,
                        TaskState::AuthRequired => u.require_auth(message).await?,
                        TaskState::Completed => u.complete(message).await?,
                        TaskState::Failed => u.fail(message).await?,
                        TaskState::Canceled => u.cancel(message).await?,
                        TaskState::Rejected => u.reject(message).await?,
                        _ => {}
                    }
                }
                _ => {}
            }
            if event.is_final {
                return Ok(());
            }
        }
        Err(AgentError::from(format!(
            "{} ended its stream before the task ended",
            self.url
        )))
    }
}
