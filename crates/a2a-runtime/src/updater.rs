//! [`TaskUpdater`]: how an executor reports progress, results and the end of its turn.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use a2a_types::{
    Artifact, Message, Part, Role, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

use crate::bus::{BusEvent, EventBus};
use crate::runtime::active::ActiveRef;
use crate::store::{StoreError, TaskEvent, TaskEventRecord, TaskStore};

/// The future of one update ([`TaskUpdater::update_status`] and the like). Boxed: an
/// agent awaiting an update holds a pointer to it, not the update's whole state, which its
/// future would otherwise reserve for as long as the agent runs (about 1.4 KB, in every task
/// that waits on a timer, a model or a client).
pub type Update<'a> = Pin<Box<dyn Future<Output = Result<(), UpdaterError>> + Send + 'a>>;

/// Why an update was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdaterError {
    /// The task is terminal (completed, failed, canceled, rejected): nothing can follow.
    #[error("task is already {0}; nothing can follow a terminal state")]
    TaskClosed(TaskState),
    /// The agent already answered with a direct message; the turn is over.
    #[error("a direct reply was already sent")]
    AlreadyReplied,
    /// A direct message reply is only possible before a task exists.
    #[error("cannot reply with a message: the task already exists (use a status message)")]
    TaskExists,
    /// The artifact's last chunk was already sent.
    #[error("artifact {0} is closed: its last chunk was already sent")]
    ArtifactClosed(String),
    /// The store refused the write.
    #[error(transparent)]
    Store(StoreError),
}

/// What one execution (turn) has done so far; read by the request that waits on it.
#[derive(Debug, Default)]
pub struct Turn {
    /// The task exists in the store (created by this turn or before it).
    pub task_exists: bool,
    /// The direct message reply, if the agent answered with one.
    pub reply: Option<Message>,
    /// This execution moved the task to a terminal or interrupted state, or replied.
    pub ended: bool,
    /// A write of this execution failed in the store (not a lifecycle refusal or a
    /// conflict): why, as the store said.
    pub store_failed: Option<Arc<str>>,
    /// Creating the task failed in the store: nothing more is written by this execution
    /// (the client message it was created with is gone with the failed write).
    pub(crate) creation_failed: bool,
}

#[derive(Debug)]
struct Inner {
    task_id: String,
    context_id: String,
    active: ActiveRef,
    store: Arc<dyn TaskStore>,
    bus: Arc<dyn EventBus>,
    /// The client message a new task is created with (taken when the task is created).
    initial_message: Mutex<Option<Message>>,
    /// Who owns a task this updater creates (the authenticated caller).
    owner: Option<Arc<str>>,
    turn: Mutex<Turn>,
    /// Signalled whenever `turn` changes, for a request waiting on this execution.
    turn_changed: tokio::sync::Notify,
}

/// Publishes status and artifact events for one task, enforcing the lifecycle.
///
/// The task is created by the first update (in `TASK_STATE_SUBMITTED`, with the client's
/// message in its history), unless the agent answers with [`reply`](Self::reply) instead.
/// Nothing is accepted after a terminal state. An artifact sent with `append` extends the
/// artifact with the same id; its `last_chunk` closes it. Cloning is cheap: clones update the
/// same task.
#[derive(Debug, Clone)]
pub struct TaskUpdater {
    inner: Arc<Inner>,
}

impl TaskUpdater {
    pub(crate) fn new(
        task_id: String,
        context_id: String,
        active: ActiveRef,
        store: Arc<dyn TaskStore>,
        bus: Arc<dyn EventBus>,
        initial_message: Option<Message>,
        owner: Option<Arc<str>>,
    ) -> Self {
        let task_exists = initial_message.is_none();
        let updater = Self {
            inner: Arc::new(Inner {
                task_id,
                context_id,
                active,
                store,
                bus,
                initial_message: Mutex::new(initial_message),
                owner,
                turn: Mutex::new(Turn::default()),
                turn_changed: tokio::sync::Notify::new(),
            }),
        };
        updater.turn().task_exists = task_exists;
        updater
    }

    fn turn(&self) -> MutexGuard<'_, Turn> {
        self.inner.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }

    /// The context id.
    pub fn context_id(&self) -> &str {
        &self.inner.context_id
    }

    /// An agent message in this task with the given parts.
    pub fn agent_message(&self, parts: Vec<Part>) -> Message {
        Message::new(Role::Agent, parts)
            .with_context_id(self.inner.context_id.clone())
            .with_task_id(self.inner.task_id.clone())
    }

    /// An agent message in this task with one text part.
    pub fn agent_text(&self, text: impl Into<String>) -> Message {
        self.agent_message(vec![Part::text(text)])
    }

    /// Moves the task to `TASK_STATE_SUBMITTED` (creating it).
    pub fn submit(&self) -> Update<'_> {
        self.update_status(TaskState::Submitted, None)
    }

    /// Moves the task to `TASK_STATE_WORKING`.
    pub fn start_work(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::Working, message)
    }

    /// Asks the client for more input (`TASK_STATE_INPUT_REQUIRED`); ends the turn.
    pub fn require_input(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::InputRequired, message)
    }

    /// Asks the client to authenticate (`TASK_STATE_AUTH_REQUIRED`); ends the turn. The spec
    /// requires a status message here; a generic one is used when `message` is `None`.
    pub fn require_auth(&self, message: Option<Message>) -> Update<'_> {
        let message = message.or_else(|| Some(self.agent_text("Authentication required")));
        self.update_status(TaskState::AuthRequired, message)
    }

    /// Completes the task.
    pub fn complete(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::Completed, message)
    }

    /// Fails the task; `message` should say why.
    pub fn fail(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::Failed, message)
    }

    /// Rejects the task; `message` should say why.
    pub fn reject(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::Rejected, message)
    }

    /// Marks the task canceled.
    pub fn cancel(&self, message: Option<Message>) -> Update<'_> {
        self.update_status(TaskState::Canceled, message)
    }

    /// Sets any status, with an optional agent message.
    pub fn update_status(&self, state: TaskState, message: Option<Message>) -> Update<'_> {
        let status = TaskStatus::with_message(state, message.map(|m| self.own(m)));
        let event = TaskStatusUpdateEvent::new(
            self.inner.task_id.clone(),
            self.inner.context_id.clone(),
            status,
        );
        Box::pin(self.write(TaskEvent::Status(event)))
    }

    /// Adds an artifact, or replaces the one with the same id.
    pub fn add_artifact(&self, artifact: Artifact) -> Update<'_> {
        self.artifact_chunk(artifact, false, false)
    }

    /// Appends `artifact.parts` to the artifact with the same id (created if new);
    /// `last_chunk` closes it.
    pub fn append_artifact(&self, artifact: Artifact, last_chunk: bool) -> Update<'_> {
        self.artifact_chunk(artifact, true, last_chunk)
    }

    /// Sends an artifact update with explicit `append` and `last_chunk` flags.
    pub fn artifact_chunk(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Update<'_> {
        let event = TaskArtifactUpdateEvent::new(
            self.inner.task_id.clone(),
            self.inner.context_id.clone(),
            artifact,
            append,
            last_chunk,
        );
        Box::pin(self.write(TaskEvent::Artifact(event)))
    }

    /// An artifact to send in chunks: each chunk extends the same artifact (its id is made
    /// once, here), and the last one closes it, as the protocol's `append` and `lastChunk`
    /// intend. For a whole artifact at once, use [`add_artifact`](Self::add_artifact).
    ///
    /// ```no_run
    /// # async fn run(task: a2a_runtime::TaskUpdater) -> Result<(), a2a_runtime::UpdaterError> {
    /// let mut answer = task.artifact_writer("answer");
    /// for token in ["Hel", "lo"] {
    ///     answer.append_text(token).await?;
    /// }
    /// answer.last_text("!").await?; // one artifact, "Hello!"
    /// # Ok(()) }
    /// ```
    pub fn artifact_writer(&self, name: impl Into<String>) -> ArtifactWriter {
        ArtifactWriter {
            updater: self.clone(),
            artifact_id: a2a_types::new_id(),
            name: Some(name.into()),
            started: false,
        }
    }

    /// Answers with a direct message instead of a task. Only possible before the task
    /// exists (the first thing the agent does for a new message); ends the turn.
    pub async fn reply(&self, message: Message) -> Result<(), UpdaterError> {
        let w = self.inner.active.writer.lock().await;
        if w.created || !w.loaded {
            return Err(UpdaterError::TaskExists);
        }
        let mut message = self.own(message);
        message.task_id = None;
        {
            let mut turn = self.turn();
            if turn.reply.is_some() {
                return Err(UpdaterError::AlreadyReplied);
            }
            turn.reply = Some(message.clone());
            turn.ended = true;
        }
        self.inner
            .bus
            .publish(&self.inner.task_id, BusEvent::Reply(Arc::new(message)));
        drop(w);
        self.inner.turn_changed.notify_one();
        Ok(())
    }

    /// Reads what this execution has done so far.
    pub fn with_turn<R>(&self, f: impl FnOnce(&Turn) -> R) -> R {
        f(&self.turn())
    }

    /// The task's whole log, when this process wrote all of it (see `WriterState::log`).
    pub async fn written_log(&self) -> Option<Vec<Arc<TaskEventRecord>>> {
        self.inner.active.writer.lock().await.log.clone()
    }

    /// Takes the direct reply, if any.
    pub fn take_reply(&self) -> Option<Message> {
        self.turn().reply.take()
    }

    /// True once this execution ended its turn (reply, terminal or interrupted state).
    pub(crate) fn turn_ended(&self) -> bool {
        self.turn().ended
    }

    /// Waits until the turn state changes (or returns at once if it changed since the last
    /// wait).
    pub(crate) async fn turn_changed(&self) {
        self.inner.turn_changed.notified().await;
    }

    /// Records that a write failed in the store (`creating`: the write that creates the task);
    /// the error to return.
    fn store_failed(&self, e: StoreError, creating: bool) -> UpdaterError {
        {
            let mut turn = self.turn();
            turn.store_failed = Some(Arc::from(e.to_string()));
            turn.creation_failed |= creating;
        }
        UpdaterError::Store(e)
    }

    /// Fills in the ids and role of an agent message.
    fn own(&self, mut m: Message) -> Message {
        if m.role == Role::Unspecified {
            m.role = Role::Agent;
        }
        if m.message_id.is_empty() {
            m.message_id = a2a_types::new_id();
        }
        if m.context_id.is_none() {
            m.context_id = Some(self.inner.context_id.clone());
        }
        if m.task_id.is_none() {
            m.task_id = Some(self.inner.task_id.clone());
        }
        m
    }

    fn initial_task(&self) -> Task {
        let mut task = Task::new(
            self.inner.task_id.clone(),
            self.inner.context_id.clone(),
            TaskState::Submitted,
        );
        let initial = self
            .inner
            .initial_message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        task.history.extend(initial);
        task
    }

    async fn write(&self, event: TaskEvent) -> Result<(), UpdaterError> {
        {
            let turn = self.turn();
            if turn.reply.is_some() {
                return Err(UpdaterError::AlreadyReplied);
            }
            if turn.creation_failed {
                let why = turn.store_failed.as_deref().unwrap_or_default();
                return Err(UpdaterError::Store(StoreError::Unavailable(format!(
                    "the task could not be created: {why}"
                ))));
            }
        }
        let inner = &*self.inner;
        let mut w = inner.active.writer.lock().await;
        if !w.loaded {
            match w.load(&*inner.store, &inner.task_id).await {
                Ok(()) => {}
                Err(e @ StoreError::NotFound(_)) => return Err(UpdaterError::Store(e)),
                Err(e) => return Err(self.store_failed(e, false)),
            }
        }
        if w.state.is_terminal() {
            return Err(UpdaterError::TaskClosed(w.state));
        }
        if let TaskEvent::Artifact(a) = &event
            && a.append
            && w.closed_artifacts.contains(&a.artifact.artifact_id)
        {
            return Err(UpdaterError::ArtifactClosed(a.artifact.artifact_id.clone()));
        }
        let batch = if w.created {
            vec![event]
        } else {
            // Room for all three from the start: grown from one, the batch was reallocated
            // twice on every new task (about 500 instructions).
            let mut batch = Vec::with_capacity(3);
            batch.push(TaskEvent::Created(self.initial_task()));
            batch.extend(inner.owner.clone().map(TaskEvent::Owner));
            match &event {
                // Creating the task already puts it in SUBMITTED.
                TaskEvent::Status(s)
                    if s.status.state == TaskState::Submitted && s.status.message.is_none() => {}
                _ => batch.push(event),
            }
            batch
        };
        let creating = !w.created;
        if let Err(e) = w
            .append(&*inner.store, &*inner.bus, &inner.task_id, batch)
            .await
        {
            let refused = matches!(e, StoreError::Conflict { .. } | StoreError::NotFound(_));
            let e = if refused {
                UpdaterError::Store(e)
            } else {
                self.store_failed(e, creating)
            };
            drop(w);
            self.inner.turn_changed.notify_one();
            return Err(e);
        }
        let ended = w.state.is_final();
        drop(w);
        {
            let mut turn = self.turn();
            turn.task_exists = true;
            turn.ended |= ended;
        }
        self.inner.turn_changed.notify_one();
        Ok(())
    }
}

/// One artifact sent in chunks, from [`TaskUpdater::artifact_writer`]: the first chunk
/// creates the artifact (with its name), every later one is appended to it, and
/// [`last`](Self::last) sends the chunk that closes it (nothing can be appended after that).
#[derive(Debug)]
pub struct ArtifactWriter {
    updater: TaskUpdater,
    artifact_id: String,
    name: Option<String>,
    started: bool,
}

impl ArtifactWriter {
    /// The artifact's id.
    pub fn artifact_id(&self) -> &str {
        &self.artifact_id
    }

    /// Sends `parts` as the next chunk.
    pub fn append(&mut self, parts: Vec<Part>) -> Update<'_> {
        self.chunk(parts, false)
    }

    /// Sends `text` as the next chunk.
    pub fn append_text(&mut self, text: impl Into<String>) -> Update<'_> {
        self.chunk(vec![Part::text(text)], false)
    }

    /// Sends `parts` as the last chunk, closing the artifact.
    pub fn last(&mut self, parts: Vec<Part>) -> Update<'_> {
        self.chunk(parts, true)
    }

    /// Sends `text` as the last chunk, closing the artifact.
    pub fn last_text(&mut self, text: impl Into<String>) -> Update<'_> {
        self.chunk(vec![Part::text(text)], true)
    }

    /// Sends `text` as the next chunk; with `last`, the one that closes the artifact.
    pub fn chunk_text(&mut self, text: impl Into<String>, last: bool) -> Update<'_> {
        self.chunk(vec![Part::text(text)], last)
    }

    /// Sends `parts` as the next chunk; with `last`, the one that closes the artifact.
    pub fn chunk(&mut self, parts: Vec<Part>, last: bool) -> Update<'_> {
        let mut artifact = Artifact::new(self.artifact_id.clone(), parts);
        // The name travels with the chunk that creates the artifact.
        artifact.name = self.name.take();
        let append = std::mem::replace(&mut self.started, true);
        self.updater.artifact_chunk(artifact, append, last)
    }
}
