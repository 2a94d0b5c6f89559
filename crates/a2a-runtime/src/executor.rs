//! The agent side: what an agent implements and what it is given.

use std::future::Future;
use std::sync::Arc;

use a2a_types::{Message, SendMessageConfiguration, Task};
use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::call::CallContext;
use crate::updater::TaskUpdater;

/// An error an agent returns; it fails the task with its text as the reason.
pub type AgentError = Box<dyn std::error::Error + Send + Sync>;

/// What an executor gets for one incoming message.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestContext {
    /// The task this message runs in (new or continued).
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The client's message (with `taskId` and `contextId` filled in).
    pub message: Message,
    /// The task when the message continues one (its state before this message). Boxed, as
    /// the configuration: an agent's future holds its context for as long as it runs.
    pub task: Option<Box<Task>>,
    /// `SendMessageRequest.configuration`.
    pub configuration: Option<Box<SendMessageConfiguration>>,
    /// `SendMessageRequest.metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// Transport-level information.
    pub call: Arc<CallContext>,
    /// Cancelled when the task is canceled (`CancelTask`) or the server shuts down.
    /// Long-running agents should watch it (`token.cancelled().await`) and stop.
    pub cancellation: CancellationToken,
    /// Where [`thread`](Self::thread) reads the conversation from.
    pub(crate) store: Option<Arc<dyn crate::store::TaskStore>>,
    /// The principal that owns the task (see [`owner`](Self::owner)).
    pub(crate) owner: Option<Arc<str>>,
}

impl RequestContext {
    /// The qualified id of the principal that owns the task ([`Principal::id`]), when the
    /// agent requires authentication.
    ///
    /// A `contextId` names a conversation within its owner's tasks: another principal naming
    /// the same `contextId` (or `thread_id`) has a conversation of its own under that id. An
    /// agent that keeps its own state per conversation keys it by `(owner, context_id)`.
    ///
    /// [`Principal::id`]: crate::Principal::id
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// The conversation so far (this `contextId`'s earlier tasks of the same owner, oldest
    /// first, then this task's own earlier messages): every message of their histories and
    /// each task's last status message. Up to the 100 most recent tasks of the context; read
    /// from the store when called, so agents that do not need it pay nothing. Tasks of other
    /// principals are never part of it, whatever `contextId` they share.
    pub async fn thread(&self) -> Result<Vec<Message>, crate::store::StoreError> {
        let mut out = Vec::new();
        if let Some(store) = &self.store {
            let mut query = crate::store::TaskQuery::default();
            query.context_id = Some(self.context_id.clone());
            query.owner = self.owner.clone();
            query.page_size = 100;
            let mut tasks = store.list(&query).await?.tasks;
            // Listed newest first.
            tasks.reverse();
            for task in tasks.into_iter().filter(|t| t.id != self.task_id) {
                out.extend(task.history);
                out.extend(task.status.message);
            }
        }
        if let Some(task) = &self.task {
            out.extend(task.history.iter().cloned());
            out.extend(task.status.message.iter().cloned());
        }
        Ok(out)
    }

    /// The text of the client's message (text parts joined).
    pub fn user_text(&self) -> String {
        self.message.text_content()
    }

    /// True once the task has been canceled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Runs `work` unless the task is canceled first, in which case `work` is dropped and
    /// the answer is [`Canceled`]: return it with `?`, and the runtime records the task
    /// CANCELED.
    pub async fn unless_canceled<F: Future>(&self, work: F) -> Result<F::Output, Canceled> {
        tokio::select! {
            biased;
            () = self.cancellation.cancelled() => Err(Canceled),
            out = work => Ok(out),
        }
    }
}

/// The task was canceled while the agent waited (see [`RequestContext::unless_canceled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the task was canceled")]
pub struct Canceled;

/// What an executor gets when its task is canceled.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CancelContext {
    /// The task as it was when the cancel request arrived.
    pub task: Task,
    /// `CancelTaskRequest.metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// Transport-level information.
    pub call: Arc<CallContext>,
}

/// An agent.
///
/// `execute` runs once per incoming message, detached from the HTTP request that carried it:
/// a client that disconnects or times out does not stop it. It reports progress through the
/// [`TaskUpdater`] and must end its turn in one of these ways:
/// - a direct reply with [`TaskUpdater::reply`] (no task is created), or
/// - a terminal state (complete, fail, reject, cancel), or
/// - an interrupted state (input required, auth required); the next message for the task
///   runs `execute` again with [`RequestContext::task`] set.
///
/// Returning without any of these fails the task with a reason; returning `Err` fails it with
/// the error's text; a panic fails it too and never takes the server down.
///
/// `cancel` is called by `CancelTask` first, before anything else happens to the task. The
/// default does nothing; an agent that must refuse returns `Err` (the caller gets
/// `TaskNotCancelableError`, and the task goes on). Once `cancel` agrees, the cancellation
/// token of every running `execute` of the task fires and the runtime records the task
/// canceled; a running `execute` that ignores its token is aborted after a grace period.
#[async_trait]
pub trait AgentExecutor: Send + Sync + 'static {
    /// Handles one message.
    async fn execute(&self, ctx: RequestContext, updater: TaskUpdater) -> Result<(), AgentError>;

    /// Handles a cancel request for a task of this agent.
    async fn cancel(&self, ctx: CancelContext, updater: TaskUpdater) -> Result<(), AgentError> {
        let _ = (ctx, updater);
        Ok(())
    }

    /// True when running a message again, after the process running it died mid-task, does
    /// no harm (the agent's effects are idempotent). A task abandoned that way is then re-run
    /// on a live process from its last client message ([`RequestContext::task`] set, the
    /// events already logged kept), instead of failed. Default: `false`.
    fn safe_to_retry(&self) -> bool {
        false
    }
}
