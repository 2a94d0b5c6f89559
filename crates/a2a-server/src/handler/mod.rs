//! Protocol semantics of one agent, independent of the transport: validation, the
//! contextId/taskId rules, capability checks, blocking and streaming sends, history length.
//! JSON-RPC (v1.0 and v0.3) and any other binding translate to and from these calls.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use futures::future::Either;

use a2a_types::validate::Validate;
use a2a_types::{
    A2aError, AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    Message, PartContent, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
    TaskState,
};

use crate::metrics::{RequestSeriesCache, SharedName};
use crate::telemetry;
use a2a_runtime::CallContext;
use a2a_runtime::store::{StoreError, TaskEvent, TaskEventRecord, TaskQuery, TaskView};
use a2a_runtime::{StartRequest, TaskEventStream, TaskRuntime, store_failure, terminal_task};

mod push;

/// A task to answer with: owned, or lent from the store's log.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskAnswer {
    /// An owned snapshot.
    Task(Box<Task>),
    /// The task's log, projected when serialized (see [`TaskView`]).
    Log {
        /// The records, from the task's creation.
        log: Vec<Arc<TaskEventRecord>>,
        /// History messages to keep.
        history: Option<usize>,
    },
}

impl TaskAnswer {
    /// The task, owned.
    pub fn into_task(self) -> Task {
        match self {
            Self::Task(t) => *t,
            Self::Log { log, history } => TaskView::new(&log, history)
                .map(|v| v.to_task())
                .unwrap_or_default(),
        }
    }
}

impl serde::Serialize for TaskAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Task(t) => t.serialize(s),
            Self::Log { log, history } => match TaskView::new(log, *history) {
                Some(v) => v.serialize(s),
                None => Task::default().serialize(s),
            },
        }
    }
}

/// The result of `SendMessage`: a direct reply, or the task.
#[derive(Debug)]
#[non_exhaustive]
pub enum SendAnswer {
    /// The agent replied with a message.
    Message(Message),
    /// The task.
    Task(TaskAnswer),
}

impl SendAnswer {
    /// As the wire type.
    pub fn into_response(self) -> SendMessageResponse {
        match self {
            Self::Message(m) => SendMessageResponse::Message(m),
            Self::Task(t) => SendMessageResponse::Task(t.into_task()),
        }
    }
}

impl serde::Serialize for SendAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // The `SendMessageResponse` oneof: `{"task": …}` or `{"message": …}`.
        let mut m = s.serialize_map(Some(1))?;
        match self {
            Self::Message(msg) => m.serialize_entry("message", msg)?,
            Self::Task(t) => m.serialize_entry("task", t)?,
        }
        m.end()
    }
}

/// Default `pageSize` of `ListTasks`.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// Settings of a [`RequestHandler`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HandlerConfig {
    /// History messages returned when a request does not say (`None`: all).
    pub default_history_length: Option<usize>,
    /// Upper bound on returned history messages, whatever the request asks (`None`: none).
    pub max_history_length: Option<usize>,
    /// Bound on the streams one caller holds open at once (`None`: no bound); share one
    /// counter between the agents of a server.
    pub streams_per_caller: Option<Arc<crate::limits::CallerStreams>>,
    /// Bound on each caller's request rate (`None`: none); share one between the agents of a
    /// server.
    pub rate_per_caller: Option<Arc<crate::limits::CallerRate>>,
    /// Delivers push notifications (`None`: the push-config operations answer
    /// `PushNotificationNotSupported`); share one between the agents of a server.
    pub push: Option<crate::push::PushDelivery>,
    /// Checks every request's credentials (`None`: anyone may call, and every caller sees
    /// every task); the card declares its schemes.
    pub auth: Option<Arc<dyn crate::auth::Authenticator>>,
}

/// Handles the A2A operations of one agent. Cheap to clone: clones share the runtime and
/// the cards.
#[derive(Debug, Clone)]
pub struct RequestHandler {
    runtime: TaskRuntime,
    card: Arc<AgentCard>,
    extended_card: Option<Arc<AgentCard>>,
    config: HandlerConfig,
    /// The agent's request metrics.
    request_metrics: Arc<RequestSeriesCache>,
}

impl RequestHandler {
    /// A handler for the agent described by `card` (its capabilities and input modes are
    /// enforced) running on `runtime`.
    ///
    /// Capabilities the card leaves unset are filled in with what this server does: streaming
    /// on, push notifications when [`HandlerConfig::push`] delivers them, no extended card (until
    /// [`with_extended_card`](Self::with_extended_card)). A capability the card sets is kept,
    /// so an agent can still turn streaming off.
    pub fn new(runtime: TaskRuntime, mut card: AgentCard, config: HandlerConfig) -> Self {
        let caps = &mut card.capabilities;
        caps.streaming.get_or_insert(true);
        caps.push_notifications.get_or_insert(config.push.is_some());
        caps.extended_agent_card.get_or_insert(false);
        if let Some(auth) = &config.auth {
            crate::auth::declare(&mut card, &**auth);
        }
        let request_metrics = Arc::new(RequestSeriesCache::new(SharedName(Arc::from(
            card.name.as_str(),
        ))));
        Self {
            runtime,
            card: Arc::new(card),
            extended_card: None,
            config,
            request_metrics,
        }
    }

    /// Labels this agent's request metrics with `id` (a host's agent id, as in its URL)
    /// instead of the card's name, which is for people and need not be unique.
    pub fn with_metrics_label(mut self, id: &str) -> Self {
        self.request_metrics = Arc::new(RequestSeriesCache::new(SharedName(Arc::from(id))));
        self
    }

    /// Serves `card` to `GetExtendedAgentCard`, and declares that in the public card's
    /// `capabilities.extendedAgentCard`.
    pub fn with_extended_card(mut self, card: AgentCard) -> Self {
        Arc::make_mut(&mut self.card)
            .capabilities
            .extended_agent_card = Some(true);
        self.extended_card = Some(Arc::new(card));
        self
    }

    /// The most history messages this agent answers with, whatever a request asks
    /// ([`HandlerConfig::max_history_length`]).
    pub fn max_history_length(&self) -> Option<usize> {
        self.config.max_history_length
    }

    /// The public card (interfaces are filled in by the transport that serves it).
    pub fn card(&self) -> &Arc<AgentCard> {
        &self.card
    }

    /// The runtime.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.runtime
    }

    fn history_limit(&self, requested: Option<i32>) -> Option<usize> {
        let n = requested
            .map(|n| usize::try_from(n).unwrap_or(0))
            .or(self.config.default_history_length);
        match (n, self.config.max_history_length) {
            (Some(n), Some(max)) => Some(n.min(max)),
            (None, Some(max)) => Some(max),
            (n, None) => n,
        }
    }

    /// The rules every operation but `GetExtendedAgentCard` applies before anything else,
    /// whatever the binding: a call must opt in to each extension the card marks as
    /// required.
    /// The authenticator every request must pass, if any.
    pub fn authenticator(&self) -> Option<&Arc<dyn crate::auth::Authenticator>> {
        self.config.auth.as_ref()
    }

    /// A slot for one more stream of the caller, within the configured bound.
    fn stream_slot(
        &self,
        call: &CallContext,
    ) -> Result<Option<crate::limits::StreamSlot>, A2aError> {
        match &self.config.streams_per_caller {
            Some(streams) => streams.acquire(call),
            None => Ok(None),
        }
    }

    fn admit(&self, call: &CallContext) -> Result<(), A2aError> {
        if let Some(rate) = &self.config.rate_per_caller {
            rate.admit(call)?;
        }
        for ext in &self.card.capabilities.extensions {
            if ext.required && !call.extensions.iter().any(|e| e == &ext.uri) {
                return Err(A2aError::ExtensionSupportRequired {
                    uri: ext.uri.clone(),
                });
            }
        }
        Ok(())
    }

    /// Runs one operation inside its request span and records it: the span's conversation
    /// and outcome, the request metrics and the debug log line. `ids` reads the task an
    /// answer is about, and its conversation when not recorded yet; `task_id` is the one the
    /// request named, if any.
    ///
    /// A combinator rather than an `async fn`, so that `operation` is held once: an `async
    /// fn` keeps its argument and the future it awaits side by side, and each operation's
    /// future (several KB for a send) is copied whenever the request's future is boxed.
    ///
    /// `call` is borrowed, or owned (an `Arc`) when the returned future must not borrow it.
    fn observed<'a, T, F, C>(
        &'a self,
        method: &'static str,
        call: C,
        task_id: Option<&'a str>,
        ids: for<'b> fn(&'b T) -> (Option<&'b str>, Option<&'b str>),
        operation: F,
    ) -> impl Future<Output = Result<T, A2aError>> + 'a
    where
        F: Future<Output = Result<T, A2aError>> + 'a,
        T: 'a,
        C: std::ops::Deref<Target = CallContext> + 'a,
    {
        let started = Instant::now();
        let in_flight = crate::metrics::global().request_started();
        let span = telemetry::request_span(&self.card.name, method, &call, task_id);
        span.run(operation).map(move |result| {
            let _in_flight = in_flight;
            let elapsed = started.elapsed();
            let (answered_task, context_id) = match &result {
                Ok(v) => ids(v),
                Err(_) => (None, None),
            };
            let task_id = answered_task.or(task_id);
            if let Some(c) = context_id {
                telemetry::record_conversation(&span, c);
            }
            if let Err(e) = &result {
                telemetry::record_error(&span, e);
            }
            let outcome = match &result {
                Ok(_) => Ok(()),
                Err(e) => Err(e.reason()),
            };
            self.request_metrics
                .record(call.binding, method, outcome, elapsed);
            self.log_request(method, &call, task_id, &result);
            result
        })
    }

    /// One line per request (`A2A_LOG=debug`): the agent, the operation, the task and how
    /// it ended. Free when debug logging is off.
    fn log_request<T>(
        &self,
        method: &'static str,
        call: &CallContext,
        task_id: Option<&str>,
        result: &Result<T, A2aError>,
    ) {
        match result {
            Ok(_) => tracing::debug!(
                agent = %self.card.name,
                method,
                version = call.protocol_version.as_str(),
                task_id = task_id.unwrap_or(""),
                outcome = "ok",
                "request"
            ),
            Err(e) => tracing::debug!(
                agent = %self.card.name,
                method,
                version = call.protocol_version.as_str(),
                task_id = task_id.unwrap_or(""),
                outcome = "error",
                code = e.code().0,
                error = %e,
                "request"
            ),
        }
    }

    fn check_streaming(&self) -> Result<(), A2aError> {
        if self.card.capabilities.streaming == Some(true) {
            Ok(())
        } else {
            Err(A2aError::unsupported(
                "streaming is not supported by this agent",
            ))
        }
    }

    /// Rejects parts whose media type the agent does not accept.
    fn check_content_types(&self, message: &Message) -> Result<(), A2aError> {
        for part in &message.parts {
            let media_type = match (&part.media_type, &part.content) {
                (Some(t), _) => t.as_str(),
                (None, PartContent::Text(_)) => "text/plain",
                (None, PartContent::Data(_)) => "application/json",
                (None, _) => continue,
            };
            if !self.accepts(media_type) {
                return Err(A2aError::ContentTypeNotSupported {
                    media_type: media_type.to_owned(),
                });
            }
        }
        Ok(())
    }

    fn accepts(&self, media_type: &str) -> bool {
        let card = &*self.card;
        if card.default_input_modes.is_empty() {
            return true;
        }
        let skill_modes = card.skills.iter().flat_map(|s| s.input_modes.iter());
        card.default_input_modes
            .iter()
            .chain(skill_modes)
            .any(|m| media_type_matches(m, media_type))
    }

    /// Validates a send and resolves its task and context. Only continuations wait on the
    /// store; they do so in their own boxed future, which keeps the future of every send small
    /// (and this is no `async fn`, which would hold the request besides).
    fn prepare(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> impl Future<Output = Result<Box<StartRequest>, A2aError>> + '_ {
        if req.message.task_id.is_none() {
            return Either::Left(std::future::ready(self.prepare_with(req, call, None)));
        }
        Either::Right(Box::pin(async move {
            let task_id = req.message.task_id.clone().unwrap_or_default();
            let existing = self
                .existing_task(task_id, req.message.context_id.as_deref(), &call)
                .await?;
            self.prepare_with(req, call, Some(existing))
        }))
    }

    fn prepare_with(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
        existing: Option<Box<Task>>,
    ) -> Result<Box<StartRequest>, A2aError> {
        req.validate()?;
        self.check_content_types(&req.message)?;
        let SendMessageRequest {
            message: mut m,
            configuration,
            metadata,
            ..
        } = req;
        let (task_id, context_id) = match &existing {
            Some(t) => (t.id.clone(), t.context_id.clone()),
            None => (
                a2a_types::new_id(),
                m.context_id
                    .clone()
                    .or_else(|| {
                        thread_id(metadata.as_ref()).or_else(|| thread_id(m.metadata.as_ref()))
                    })
                    .unwrap_or_else(a2a_types::new_id),
            ),
        };
        m.task_id = Some(task_id.clone());
        m.context_id = Some(context_id.clone());
        // The request span (current here) learns its task and conversation as soon as they
        // are resolved, so a send that is then streamed still carries them.
        telemetry::record_current_ids(&task_id, &context_id);
        Ok(Box::new(StartRequest {
            task_id,
            context_id,
            message: m,
            existing,
            configuration: configuration.map(Box::new),
            metadata,
            call,
        }))
    }

    /// The task a message continues: it must exist, not be terminal, and be in the message's
    /// context (when the message names one).
    async fn existing_task(
        &self,
        task_id: String,
        context_id: Option<&str>,
        call: &CallContext,
    ) -> Result<Box<Task>, A2aError> {
        let task = Box::new(self.visible_snapshot(&task_id, None, call).await?.task);
        if task.status.state.is_terminal() {
            return Err(terminal_task(&task_id, task.status.state));
        }
        if context_id.is_some_and(|c| c != task.context_id) {
            return Err(A2aError::invalid_field(
                "message.contextId",
                format!("does not match the context of task {task_id}"),
            ));
        }
        Ok(task)
    }

    /// The snapshot of `task_id` with at most `history` messages, if the caller may see the
    /// task (with authentication, only the principal that created a task sees it; without,
    /// everyone sees every task); else (or when there is no such task) `TaskNotFound`.
    pub(crate) async fn visible_snapshot(
        &self,
        task_id: &str,
        history: Option<usize>,
        call: &CallContext,
    ) -> Result<a2a_runtime::store::TaskSnapshot, A2aError> {
        self.runtime
            .owned_snapshot(task_id, history, call.principal.as_ref().map(|p| p.id()))
            .await
    }

    /// The task to answer with, read as a snapshot.
    /// With `call`, only a task its caller may see is answered (see [`Self::visible_snapshot`]);
    /// without, the task is the sender's own.
    async fn answer(
        &self,
        task_id: &str,
        history: Option<usize>,
        call: Option<&CallContext>,
    ) -> Result<TaskAnswer, A2aError> {
        Ok(TaskAnswer::Task(Box::new(match call {
            Some(call) => self.visible_snapshot(task_id, history, call).await?.task,
            None => self.runtime.snapshot(task_id, history).await?.task,
        })))
    }

    /// `SendMessage`: runs the message and, unless `returnImmediately`, waits until the task
    /// is terminal or interrupted. A client that goes away does not stop the task.
    pub async fn send_message(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> Result<SendMessageResponse, A2aError> {
        Ok(self.send_message_answer(req, call).await?.into_response())
    }

    /// [`send_message`](Self::send_message), answering with a task the transport can serialize
    /// without copying it.
    ///
    /// Not an `async fn`: one would hold the observed send as its own state, built there on
    /// its first poll and moved in. The send itself (about 2 KB of future) is boxed where it
    /// is made, so that the wrappers around it, and the callers, move a pointer.
    pub fn send_message_answer(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> impl Future<Output = Result<SendAnswer, A2aError>> + '_ {
        self.observed(
            "SendMessage",
            call.clone(),
            None,
            send_answer_ids,
            Box::pin(self.send_message_inner(req, call)),
        )
    }

    async fn send_message_inner(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> Result<SendAnswer, A2aError> {
        self.admit(&call)?;
        let history = self.history_limit(req.history_length());
        let return_immediately = req.return_immediately();
        let push = self.inline_push_config(&req, &call)?;
        let start = self.prepare(req, call).await?;
        if let Some(config) = push {
            self.follow_inline(&start, config).await?;
        }
        let task_id = start.task_id.clone();
        let started = self.runtime.start(start, false).await?;
        let mut execution = started.execution;
        if return_immediately {
            if let Some(snap) = started.snapshot {
                execution.detach();
                let mut task = snap.task;
                if let Some(n) = history {
                    task.truncate_history(n);
                }
                return Ok(SendAnswer::Task(TaskAnswer::Task(Box::new(task))));
            }
            execution.drive_until(|t| t.task_exists || t.ended).await;
        } else {
            execution.drive_until(|t| t.ended).await;
        }
        // Whatever the agent still does after this point runs detached.
        execution.detach();
        if let Some(reply) = execution.updater().take_reply() {
            return Ok(SendAnswer::Message(reply));
        }
        // The store failed before the task existed: nothing was done that a retry repeats.
        let unwritten = execution
            .updater()
            .with_turn(|t| t.store_failed.clone().filter(|_| !t.task_exists));
        if unwritten.is_some() {
            return Err(a2a_runtime::task_not_created());
        }
        // A task this process wrote all of: answer from what was written, not a read.
        if let Some(log) = execution.updater().written_log().await
            && matches!(log.first().map(|r| &r.event), Some(TaskEvent::Created(_)))
        {
            return Ok(SendAnswer::Task(TaskAnswer::Log { log, history }));
        }
        Ok(SendAnswer::Task(
            self.answer(&task_id, history, None).await?,
        ))
    }

    /// `SendStreamingMessage`: a single message event, or the task followed by its updates
    /// until a terminal or interrupted state.
    pub async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> Result<TaskEventStream, A2aError> {
        self.observed(
            "SendStreamingMessage",
            call.clone(),
            None,
            stream_ids,
            self.send_streaming_inner(req, call),
        )
        .await
    }

    async fn send_streaming_inner(
        &self,
        req: SendMessageRequest,
        call: Arc<CallContext>,
    ) -> Result<TaskEventStream, A2aError> {
        self.admit(&call)?;
        self.check_streaming()?;
        let slot = self.stream_slot(&call)?;
        let history = self.history_limit(req.history_length());
        let push = self.inline_push_config(&req, &call)?;
        let start = self.prepare(req, call).await?;
        if let Some(config) = push {
            self.follow_inline(&start, config).await?;
        }
        let started = self.runtime.start(start, true).await?;
        let events = started
            .events
            .ok_or_else(|| A2aError::internal("stream not subscribed"))?;
        Ok(match started.snapshot {
            // A continued task starts with its snapshot; its (interrupted) state is the
            // one being answered, so it does not end the stream.
            Some(snap) => {
                let mut task = snap.task;
                if let Some(n) = history {
                    task.truncate_history(n);
                }
                events.with_snapshot(task, snap.seq, false)
            }
            None => events,
        }
        .with_guard(slot.map(|s| Box::new(s) as _)))
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        req: GetTaskRequest,
        call: &CallContext,
    ) -> Result<Task, A2aError> {
        Ok(self.get_task_answer(req, call).await?.into_task())
    }

    /// [`get_task`](Self::get_task), answering with a task the transport can serialize without
    /// copying it.
    pub async fn get_task_answer(
        &self,
        req: GetTaskRequest,
        call: &CallContext,
    ) -> Result<TaskAnswer, A2aError> {
        let operation = async {
            self.admit(call)?;
            req.validate()?;
            self.answer(&req.id, self.history_limit(req.history_length), Some(call))
                .await
        };
        self.observed("GetTask", call, Some(&req.id), answer_ids, operation)
            .await
    }

    /// `ListTasks`.
    pub async fn list_tasks(
        &self,
        req: ListTasksRequest,
        call: &CallContext,
    ) -> Result<ListTasksResponse, A2aError> {
        self.observed(
            "ListTasks",
            call,
            None,
            no_ids,
            self.list_tasks_inner(req, call),
        )
        .await
    }

    async fn list_tasks_inner(
        &self,
        req: ListTasksRequest,
        call: &CallContext,
    ) -> Result<ListTasksResponse, A2aError> {
        self.admit(call)?;
        req.validate()?;
        let page_size = req.page_size.map_or(DEFAULT_PAGE_SIZE, |n| n as usize);
        let mut query = TaskQuery::default();
        query.context_id = req.context_id;
        query.status = req.status.filter(|s| *s != TaskState::Unspecified);
        query.status_timestamp_after = req.status_timestamp_after;
        query.page_size = page_size;
        query.page_token = req.page_token;
        query.history_length = self.history_limit(req.history_length);
        query.include_artifacts = req.include_artifacts.unwrap_or(false);
        query.owner = call.principal.as_ref().map(|p| p.shared_id().clone());
        let page = self
            .runtime
            .store()
            .list(&query)
            .await
            .map_err(|e| match e {
                StoreError::InvalidPageToken => {
                    A2aError::invalid_field("pageToken", "is not a token issued by this server")
                }
                e => store_failure(e),
            })?;
        let mut resp = ListTasksResponse::default();
        resp.tasks = page.tasks;
        resp.next_page_token = page.next_page_token;
        resp.page_size = page_size as i32;
        resp.total_size = i32::try_from(page.total_size).unwrap_or(i32::MAX);
        Ok(resp)
    }

    /// `CancelTask`.
    pub async fn cancel_task(
        &self,
        req: CancelTaskRequest,
        call: Arc<CallContext>,
    ) -> Result<Task, A2aError> {
        let id = req.id.clone();
        let operation = async {
            self.admit(&call)?;
            req.validate()?;
            self.runtime
                .cancel(
                    &req.id,
                    req.metadata,
                    call.clone(),
                    self.history_limit(None),
                    call.principal.as_ref().map(|p| p.id()),
                )
                .await
        };
        self.observed("CancelTask", &*call, Some(&id), task_ids, operation)
            .await
    }

    /// `SubscribeToTask`; the call's [`last_event_id`](CallContext::last_event_id) resumes
    /// after that event.
    pub async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        call: &CallContext,
    ) -> Result<TaskEventStream, A2aError> {
        let operation = async {
            self.admit(call)?;
            self.check_streaming()?;
            req.validate()?;
            let slot = self.stream_slot(call)?;
            Ok(self
                .runtime
                .subscribe(
                    &req.id,
                    call.last_event_id,
                    self.history_limit(None),
                    call.principal.as_ref().map(|p| p.id()),
                )
                .await?
                .with_guard(slot.map(|s| Box::new(s) as _)))
        };
        self.observed(
            "SubscribeToTask",
            call,
            Some(&req.id),
            stream_ids,
            operation,
        )
        .await
    }

    /// `GetExtendedAgentCard`.
    pub fn get_extended_agent_card(&self) -> Result<Arc<AgentCard>, A2aError> {
        if self.card.capabilities.extended_agent_card != Some(true) {
            return Err(A2aError::unsupported(
                "this agent has no extended agent card",
            ));
        }
        self.extended_card
            .clone()
            .ok_or(A2aError::ExtendedAgentCardNotConfigured)
    }
}

/// A `thread_id` string in request or message metadata: a client that names its thread
/// this way (as hosted agent servers let it) gets that thread as the `contextId` of a new
/// conversation, so that its next message with the same `thread_id` continues it.
fn thread_id(metadata: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<String> {
    metadata?
        .get("thread_id")?
        .as_str()
        .filter(|t| !t.is_empty() && t.len() <= 256)
        .map(str::to_owned)
}

/// `image/*` matches `image/png`; `*/*` and `*` match anything; parameters are ignored;
/// case is not significant. Compared in place: every part of every send is checked against
/// the card's modes, and lowercased copies cost two allocations a comparison.
fn media_type_matches(pattern: &str, media_type: &str) -> bool {
    fn essence(s: &str) -> &str {
        s.split(';').next().unwrap_or("").trim()
    }
    // The common case, a part's type written as the card writes it, needs no parsing.
    if pattern == media_type {
        return true;
    }
    let (p, t) = (essence(pattern), essence(media_type));
    if p == "*" || p == "*/*" || p.eq_ignore_ascii_case(t) {
        return true;
    }
    match p.strip_suffix("/*") {
        Some(major) => t
            .split('/')
            .next()
            .is_some_and(|m| m.eq_ignore_ascii_case(major)),
        None => false,
    }
}

/// The task a send answered with; its conversation was recorded when the send was prepared.
fn send_answer_ids(answer: &SendAnswer) -> (Option<&str>, Option<&str>) {
    let task_id = match answer {
        SendAnswer::Message(m) => m.task_id.as_deref(),
        SendAnswer::Task(t) => answer_ids(t).0,
    };
    (task_id, None)
}

fn answer_ids(answer: &TaskAnswer) -> (Option<&str>, Option<&str>) {
    match answer {
        TaskAnswer::Task(t) => task_ids(t),
        TaskAnswer::Log { log, .. } => match log.first().map(|r| &r.event) {
            Some(TaskEvent::Created(t)) => task_ids(t),
            _ => (None, None),
        },
    }
}

fn task_ids(task: &Task) -> (Option<&str>, Option<&str>) {
    (Some(&task.id), Some(&task.context_id))
}

fn stream_ids(stream: &TaskEventStream) -> (Option<&str>, Option<&str>) {
    (Some(stream.task_id()), None)
}

fn no_ids<T>(_: &T) -> (Option<&str>, Option<&str>) {
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Idle;

    #[async_trait::async_trait]
    impl crate::AgentExecutor for Idle {
        async fn execute(
            &self,
            _: crate::RequestContext,
            _: crate::TaskUpdater,
        ) -> Result<(), crate::AgentError> {
            Ok(())
        }
    }

    /// The observed send holds its operation once: every request's future is boxed (by
    /// axum, and around the send), and a box copies the whole future, so a wrapper that
    /// kept the operation twice cost several KB of copying per request.
    #[test]
    fn an_observed_operation_is_held_once() {
        let handler = crate::in_memory_handler(Arc::new(Idle), a2a_types::AgentCard::default());
        let call = Arc::new(CallContext::new(a2a_types::ProtocolVersion::V1));
        let req = || SendMessageRequest::new(a2a_types::Message::user_text("x"));
        let operation = std::mem::size_of_val(&handler.send_message_inner(req(), call.clone()));
        let observed = std::mem::size_of_val(&handler.send_message_answer(req(), call));
        assert!(
            observed < operation + 1024,
            "observed send {observed} bytes, its operation {operation}"
        );
    }

    #[test]
    fn media_types() {
        assert!(media_type_matches(
            "text/plain",
            "text/plain; charset=utf-8"
        ));
        assert!(media_type_matches("image/*", "image/png"));
        assert!(media_type_matches("*/*", "application/pdf"));
        assert!(!media_type_matches("text/plain", "image/png"));
        assert!(!media_type_matches("image/*", "text/plain"));
        // Case is not significant, in the pattern or the type.
        assert!(media_type_matches("Text/Plain", "text/PLAIN"));
        assert!(media_type_matches("IMAGE/*", "image/png"));
        assert!(media_type_matches("image/*", "Image/PNG;q=1"));
        assert!(!media_type_matches("image/*", "imagery/png"));
        assert!(!media_type_matches("text/plain", "text/plainer"));
    }
}
