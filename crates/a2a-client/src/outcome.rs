//! Following an interaction to its end: the typed [`Outcome`], artifact assembly, stream
//! listeners and deadlines.

use std::time::Duration;

use a2a_types::{
    Artifact, Message, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};

use crate::client::A2aClient;
use crate::error::ClientError;
use crate::stream::StreamEvent;

/// A task paused for the client (input or authentication required).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Interrupted {
    /// The task, with every artifact received so far.
    pub task: Task,
}

impl Interrupted {
    /// The task id to continue with.
    pub fn task_id(&self) -> &str {
        &self.task.id
    }

    /// The context id to continue in.
    pub fn context_id(&self) -> &str {
        &self.task.context_id
    }

    /// The agent's prompt (its status message).
    pub fn prompt(&self) -> Option<&Message> {
        self.task.status.message.as_ref()
    }

    /// The text of the agent's prompt.
    pub fn prompt_text(&self) -> String {
        self.prompt().map(Message::text_content).unwrap_or_default()
    }
}

/// Why listening stopped before the task finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The listener asked to stop.
    Listener,
    /// The deadline passed.
    Deadline,
}

/// Listening stopped early; the task itself was **not** canceled.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Stopped {
    /// Why.
    pub reason: StopReason,
    /// The task as received so far (artifacts assembled), if one was started.
    pub task: Option<Task>,
    /// The answer: the listener's own, or the text of the artifacts received so far.
    pub answer: String,
}

impl Stopped {
    /// The task id, to cancel or resume with.
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_ref().map(|t| t.id.as_str())
    }
}

/// How an interaction with an agent ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// The agent answered with a message and no task.
    Message(Message),
    /// The task completed; its artifacts are the result.
    Completed(Task),
    /// The agent needs more input: send it with the same task id.
    InputRequired(Interrupted),
    /// The agent needs authentication (credentials usually travel out of band).
    AuthRequired(Interrupted),
    /// The task failed; see [`Outcome::reason`].
    Failed(Task),
    /// The agent rejected the task; see [`Outcome::reason`].
    Rejected(Task),
    /// The task was canceled.
    Canceled(Task),
    /// The task is still running (a non-blocking send, or a server that returned early).
    Pending(Task),
    /// Listening stopped before the task finished (listener decision or deadline).
    Stopped(Stopped),
}

impl Outcome {
    /// The outcome of a task in the state it is in.
    pub fn from_task(task: Task) -> Self {
        match task.status.state {
            TaskState::Completed => Self::Completed(task),
            TaskState::InputRequired => Self::InputRequired(Interrupted { task }),
            TaskState::AuthRequired => Self::AuthRequired(Interrupted { task }),
            TaskState::Failed => Self::Failed(task),
            TaskState::Rejected => Self::Rejected(task),
            TaskState::Canceled => Self::Canceled(task),
            _ => Self::Pending(task),
        }
    }

    /// The outcome of a non-streaming send.
    pub fn from_response(resp: SendMessageResponse) -> Self {
        match resp {
            SendMessageResponse::Message(m) => Self::Message(m),
            SendMessageResponse::Task(t) => Self::from_task(t),
            _ => Self::Pending(Task::default()),
        }
    }

    /// The task, if there is one.
    pub fn task(&self) -> Option<&Task> {
        match self {
            Self::Message(_) => None,
            Self::Completed(t)
            | Self::Failed(t)
            | Self::Rejected(t)
            | Self::Canceled(t)
            | Self::Pending(t) => Some(t),
            Self::InputRequired(i) | Self::AuthRequired(i) => Some(&i.task),
            Self::Stopped(s) => s.task.as_ref(),
        }
    }

    /// The task id, if there is a task.
    pub fn task_id(&self) -> Option<&str> {
        self.task().map(|t| t.id.as_str())
    }

    /// The context id (from the task or the message).
    pub fn context_id(&self) -> Option<&str> {
        match self {
            Self::Message(m) => m.context_id.as_deref(),
            other => other
                .task()
                .map(|t| t.context_id.as_str())
                .filter(|c| !c.is_empty()),
        }
    }

    /// Every artifact, in order (appended chunks already joined).
    pub fn artifacts(&self) -> &[Artifact] {
        self.task().map_or(&[], |t| t.artifacts.as_slice())
    }

    /// The agent's reason for a failed or rejected task (its status message).
    pub fn reason(&self) -> Option<String> {
        match self {
            Self::Failed(t) | Self::Rejected(t) | Self::Canceled(t) => {
                t.status.message.as_ref().map(Message::text_content)
            }
            _ => None,
        }
    }

    /// The answer as text: the message, the artifacts of a completed task (all of them,
    /// joined), the prompt of an interrupted one, the reason of a failed one.
    pub fn text(&self) -> String {
        match self {
            Self::Message(m) => m.text_content(),
            Self::Completed(t) | Self::Pending(t) => {
                let text = t.artifacts_text();
                if text.is_empty() {
                    t.status
                        .message
                        .as_ref()
                        .map(Message::text_content)
                        .unwrap_or_default()
                } else {
                    text
                }
            }
            Self::InputRequired(i) | Self::AuthRequired(i) => i.prompt_text(),
            Self::Failed(_) | Self::Rejected(_) | Self::Canceled(_) => {
                self.reason().unwrap_or_default()
            }
            Self::Stopped(s) => s.answer.clone(),
        }
    }

    /// True for completed tasks and message replies.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Completed(_) | Self::Message(_))
    }
}

/// Rebuilds a task from stream events: snapshots replace it, status updates move it, artifact
/// updates are assembled by `artifactId` honouring `append` / `lastChunk`.
#[derive(Debug, Clone, Default)]
pub struct TaskAccumulator {
    task: Option<Task>,
    message: Option<Message>,
}

impl TaskAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// The task so far.
    pub fn task(&self) -> Option<&Task> {
        self.task.as_ref()
    }

    /// The direct message reply, if the agent sent one.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_ref()
    }

    fn task_for(&mut self, task_id: &str, context_id: &str) -> &mut Task {
        self.task
            .get_or_insert_with(|| Task::new(task_id, context_id, TaskState::Submitted))
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &StreamResponse) {
        match event {
            StreamResponse::Task(t) => {
                // A snapshot. Keep artifacts we assembled that a sparse snapshot left out.
                let mut t = t.clone();
                if let Some(old) = self.task.take()
                    && old.id == t.id
                {
                    for a in old.artifacts {
                        if t.artifact(&a.artifact_id).is_none() {
                            t.artifacts.push(a);
                        }
                    }
                }
                self.task = Some(t);
            }
            StreamResponse::Message(m) => self.message = Some(m.clone()),
            StreamResponse::StatusUpdate(s) => {
                self.task_for(&s.task_id, &s.context_id)
                    .apply_status_update(s);
            }
            StreamResponse::ArtifactUpdate(a) => {
                self.task_for(&a.task_id, &a.context_id)
                    .apply_artifact_update(a);
            }
            _ => {}
        }
    }

    /// The outcome once the stream ended.
    pub fn into_outcome(self) -> Result<Outcome, ClientError> {
        match (self.message, self.task) {
            (Some(m), None) => Ok(Outcome::Message(m)),
            (_, Some(t)) => Ok(Outcome::from_task(t)),
            (None, None) => Err(ClientError::InvalidResponse(
                "the stream ended without any event".into(),
            )),
        }
    }

    /// What arrived so far, as an [`Outcome::Stopped`]: for callers that stop listening on
    /// their own terms (a deadline of theirs, Ctrl-C). The task is not canceled.
    pub fn into_stopped(self, reason: StopReason) -> Outcome {
        self.stopped(reason, None)
    }

    fn stopped(self, reason: StopReason, answer: Option<String>) -> Outcome {
        let answer = answer.unwrap_or_else(|| {
            self.task
                .as_ref()
                .map(Task::artifacts_text)
                .unwrap_or_default()
        });
        Outcome::Stopped(Stopped {
            reason,
            task: self.task,
            answer,
        })
    }
}

/// What a [`StreamListener`] wants after an event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Keep listening.
    Continue,
    /// Stop listening and answer with this text.
    Stop(String),
    /// Stop listening and answer with the text of the artifacts received so far.
    StopWithArtifacts,
}

/// Sees every stream event and decides whether to keep listening.
///
/// Stopping only stops listening: the remote task keeps running, and its id is in the
/// outcome so the caller can cancel it ([`A2aClient::cancel_task`]) or come back to it.
pub trait StreamListener: Send {
    /// Called for each event, with the task as assembled so far.
    fn on_event(&mut self, event: &StreamEvent, task: Option<&Task>) -> Decision;
}

impl<F> StreamListener for F
where
    F: FnMut(&StreamEvent, Option<&Task>) -> Decision + Send,
{
    fn on_event(&mut self, event: &StreamEvent, task: Option<&Task>) -> Decision {
        self(event, task)
    }
}

/// A listener that never stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct FollowToEnd;

impl StreamListener for FollowToEnd {
    fn on_event(&mut self, _: &StreamEvent, _: Option<&Task>) -> Decision {
        Decision::Continue
    }
}

impl A2aClient {
    /// Sends `req` and follows the interaction to its end: streamed when the agent streams
    /// (to a terminal or interrupted state, collecting every artifact), a blocking send
    /// otherwise.
    pub async fn run(&self, req: SendMessageRequest) -> Result<Outcome, ClientError> {
        self.run_with_listener(req, FollowToEnd).await
    }

    /// Like [`run`](Self::run), asking `listener` after every event whether to go on.
    pub async fn run_with_listener(
        &self,
        req: SendMessageRequest,
        listener: impl StreamListener,
    ) -> Result<Outcome, ClientError> {
        self.follow(req, listener, &mut TaskAccumulator::new())
            .await
    }

    /// Like [`run`](Self::run), but stops waiting after `deadline`: the outcome is then
    /// [`Outcome::Stopped`] with [`StopReason::Deadline`], the task id and what arrived, so the
    /// caller can cancel the task or come back to it. Timing out never cancels the task.
    pub async fn run_with_deadline(
        &self,
        req: SendMessageRequest,
        deadline: Duration,
    ) -> Result<Outcome, ClientError> {
        self.run_with_listener_and_deadline(req, FollowToEnd, deadline)
            .await
    }

    /// [`run_with_listener`](Self::run_with_listener) and
    /// [`run_with_deadline`](Self::run_with_deadline) together: whichever stops first, the
    /// listener or the deadline, the outcome carries the task id and what arrived.
    pub async fn run_with_listener_and_deadline(
        &self,
        req: SendMessageRequest,
        listener: impl StreamListener,
        deadline: Duration,
    ) -> Result<Outcome, ClientError> {
        let mut acc = TaskAccumulator::new();
        match tokio::time::timeout(deadline, self.follow(req, listener, &mut acc)).await {
            Ok(outcome) => outcome,
            Err(_) => Ok(acc.stopped(StopReason::Deadline, None)),
        }
    }

    /// Sends `req` and follows it, assembling into `acc` (which keeps what arrived if the
    /// caller stops waiting).
    async fn follow(
        &self,
        req: SendMessageRequest,
        mut listener: impl StreamListener,
        acc: &mut TaskAccumulator,
    ) -> Result<Outcome, ClientError> {
        if !self.supports_streaming() {
            let response = match self.send(req).await? {
                SendMessageResponse::Message(m) => StreamResponse::Message(m),
                SendMessageResponse::Task(t) => StreamResponse::Task(t),
                _ => return Err(ClientError::InvalidResponse("empty send response".into())),
            };
            acc.apply(&response);
            let event = StreamEvent {
                id: None,
                response,
                is_final: true,
            };
            return match listener.on_event(&event, acc.task()) {
                Decision::Stop(answer) => Ok(take(acc).stopped(StopReason::Listener, Some(answer))),
                _ => take(acc).into_outcome(),
            };
        }
        let mut stream = self.stream(req).await?;
        while let Some(event) = stream.next().await {
            let event = event?;
            acc.apply(&event.response);
            match listener.on_event(&event, acc.task()) {
                Decision::Continue => {}
                Decision::Stop(answer) => {
                    return Ok(take(acc).stopped(StopReason::Listener, Some(answer)));
                }
                // At the final event, what arrived is the whole outcome.
                Decision::StopWithArtifacts if event.is_final => return take(acc).into_outcome(),
                Decision::StopWithArtifacts => {
                    return Ok(take(acc).stopped(StopReason::Listener, None));
                }
            }
        }
        take(acc).into_outcome()
    }
}

fn take(acc: &mut TaskAccumulator) -> TaskAccumulator {
    std::mem::take(acc)
}
