//! `remote` agents: every message is forwarded to another A2A agent through this project's
//! client (any binding, v1.0 or v0.3), its events streamed through as this task's own, and
//! a cancel of this task cancels the remote one.

use std::collections::{HashMap, VecDeque};
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
    /// Our task id → the remote task id, while the task can still be continued; our
    /// conversation (its owner and context id, see [`conversation`]) → the remote context id
    /// (so a continued task or conversation continues over there too). Both bounded: the
    /// oldest entries go first.
    tasks: Mutex<BoundedMap>,
    contexts: Mutex<BoundedMap>,
}

/// How many task and context mappings a remote agent keeps.
const MAPPINGS_KEPT: usize = 10_000;

/// A map that forgets its oldest entries beyond [`MAPPINGS_KEPT`].
#[derive(Debug, Default)]
struct BoundedMap {
    map: HashMap<String, String>,
    order: VecDeque<String>,
}

impl BoundedMap {
    fn get(&self, key: &str) -> Option<String> {
        self.map.get(key).cloned()
    }

    fn insert(&mut self, key: &str, value: &str) {
        if self.map.insert(key.to_owned(), value.to_owned()).is_none() {
            self.order.push_back(key.to_owned());
            while self.order.len() > MAPPINGS_KEPT {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    fn remove(&mut self, key: &str) {
        // The key stays in `order` until it comes round; removing it from there is O(n).
        self.map.remove(key);
    }
}

impl RemoteAgent {
    /// Forwards to `url` (its card decides the binding unless `binding` pins one).
    pub fn new(url: String, binding: Option<Binding>) -> Self {
        Self {
            url,
            binding,
            version: None,
            client: OnceCell::new(),
            tasks: Mutex::new(BoundedMap::default()),
            contexts: Mutex::new(BoundedMap::default()),
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
        // `ours.1` is a conversation key (see [`conversation`]).
        if let Some(t) = theirs.0 {
            self.tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(ours.0, t);
        }
        if let Some(c) = theirs.1 {
            self.contexts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(ours.1, c);
        }
    }
}

/// Our conversation: its owner and context id. Two principals naming one `contextId` have
/// two conversations here, and so over there.
fn conversation(ctx: &RequestContext) -> String {
    format!("{}\u{0}{}", ctx.owner().unwrap_or_default(), ctx.context_id)
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
            .get(&ctx.task_id);
        let conversation = conversation(&ctx);
        message.context_id = self
            .contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&conversation);
        let mut req = SendMessageRequest::new(message);
        req.metadata = ctx.metadata.clone();
        let mut stream = client
            .stream(req)
            .await
            .map_err(|e| AgentError::from(format!("{}: {e}", self.url)))?;
        let mut remote_task: Option<String> = None;
        let mut last_state: Option<TaskState> = None;
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
                        (&ctx.task_id, &conversation),
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
                            (&ctx.task_id, &conversation),
                            (Some(&s.task_id), Some(&s.context_id)),
                        );
                        remote_task = Some(s.task_id.clone());
                    }
                    last_state = Some(s.status.state);
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
                // A finished task cannot be continued: forget it (an interrupted one stays).
                if last_state.is_some_and(TaskState::is_terminal) {
                    self.tasks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&ctx.task_id);
                }
                return Ok(());
            }
        }
        Err(AgentError::from(format!(
            "{} ended its stream before the task ended",
            self.url
        )))
    }
}
