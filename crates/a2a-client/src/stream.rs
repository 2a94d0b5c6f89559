//! [`TaskStream`]: the events of one task, read from SSE, resumed after dropped connections.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::{GetTaskRequest, StreamResponse, SubscribeToTaskRequest, TaskState};
use futures::{Stream, StreamExt};
use tracing::Instrument;

use crate::error::ClientError;
use crate::transport::{EventSource, Transport};

/// One event of a task stream.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamEvent {
    /// The SSE event id (the server's log position), for resuming.
    pub id: Option<String>,
    /// The event.
    pub response: StreamResponse,
    /// The stream ends after this event (a message, or a terminal or interrupted state).
    pub is_final: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// `SendStreamingMessage`: a leading task snapshot is the state being answered.
    Send,
    /// `SubscribeToTask`: a leading task snapshot is the current state.
    Subscribe,
}

const RESUME_ATTEMPTS: u32 = 3;

/// The events of a streamed send or a subscription, until a terminal or interrupted state.
///
/// If the connection drops before that, the stream resubscribes to the task (from the last
/// event id, so nothing is missed on v1.0 servers); if the task finished meanwhile, its final
/// state is fetched and delivered as a last task event. Dropping a `TaskStream` only stops
/// listening: the task keeps running on the agent.
pub struct TaskStream {
    transport: Arc<dyn Transport>,
    tenant: Option<String>,
    events: EventSource,
    kind: StreamKind,
    task_id: Option<String>,
    last_id: Option<String>,
    first: bool,
    done: bool,
    resumes_left: u32,
    /// The span of the call that opened the stream: resumes run inside it, and it ends
    /// with the stream.
    span: tracing::Span,
}

impl std::fmt::Debug for TaskStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStream")
            .field("task_id", &self.task_id)
            .field("last_id", &self.last_id)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl TaskStream {
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        tenant: Option<String>,
        events: EventSource,
        kind: StreamKind,
        task_id: Option<String>,
        span: tracing::Span,
    ) -> Self {
        Self {
            span,
            transport,
            tenant,
            events,
            kind,
            task_id,
            last_id: None,
            first: true,
            done: false,
            resumes_left: RESUME_ATTEMPTS,
        }
    }

    /// The task followed, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The id of the last event received (pass to
    /// [`A2aClient::subscribe_after`](crate::A2aClient::subscribe_after)).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn is_final(&self, ev: &StreamResponse, marked_final: bool) -> bool {
        match ev {
            StreamResponse::Message(_) => true,
            StreamResponse::StatusUpdate(s) => marked_final || s.status.state.is_final(),
            StreamResponse::ArtifactUpdate(_) => false,
            StreamResponse::Task(t) => {
                let s = t.status.state;
                s.is_terminal()
                    || (self.first && self.kind == StreamKind::Subscribe && s.is_final())
            }
            _ => false,
        }
    }

    /// The next event; `None` once the stream is over.
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        if self.span.is_disabled() {
            return self.next_event().await;
        }
        let span = self.span.clone();
        let knew_task = self.task_id.is_some();
        let next = self.next_event().instrument(span).await;
        match &next {
            Some(Ok(ev)) if ev.is_final || (!knew_task && self.task_id.is_some()) => {
                let (context, state) = match &ev.response {
                    StreamResponse::Task(t) => (Some(t.context_id.as_str()), Some(t.status.state)),
                    StreamResponse::StatusUpdate(u) => {
                        (Some(u.context_id.as_str()), Some(u.status.state))
                    }
                    StreamResponse::Message(m) => (m.context_id.as_deref(), None),
                    _ => (None, None),
                };
                crate::trace::record_task(&self.span, self.task_id.as_deref(), context, state);
            }
            Some(Err(e)) => crate::trace::record_error(&self.span, e),
            _ => {}
        }
        next
    }

    async fn next_event(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        loop {
            if self.done {
                return None;
            }
            match self.events.next().await {
                Some(Ok(event)) => {
                    let response = event.response;
                    if let Some(id) = &event.id {
                        self.last_id = Some(id.clone());
                    }
                    if self.task_id.is_none() {
                        self.task_id = match &response {
                            StreamResponse::Message(_) => None,
                            other => other.task_id().map(str::to_owned),
                        };
                    }
                    let is_final = self.is_final(&response, event.marked_final);
                    self.first = false;
                    self.done = is_final;
                    return Some(Ok(StreamEvent {
                        id: event.id,
                        response,
                        is_final,
                    }));
                }
                // The connection failed: resume where it stopped.
                Some(Err(err @ ClientError::Http { .. })) => match self.resume().await {
                    Some(Ok(Some(ev))) => return Some(Ok(ev)),
                    Some(Ok(None)) => continue,
                    Some(Err(_)) | None => {
                        self.done = true;
                        return Some(Err(err));
                    }
                },
                // An event that could not be read: the stream cannot be trusted further.
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => match self.resume().await {
                    Some(Ok(Some(ev))) => return Some(Ok(ev)),
                    Some(Ok(None)) => continue,
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                    None => {
                        self.done = true;
                        return None;
                    }
                },
            }
        }
    }

    /// After the connection ended early: resubscribe (`Ok(None)`: continue reading), or
    /// deliver the final task if it finished meanwhile (`Ok(Some(event))`). `None`: nothing to
    /// resume (no task yet, or attempts exhausted).
    async fn resume(&mut self) -> Option<Result<Option<StreamEvent>, ClientError>> {
        let task_id = self.task_id.clone()?;
        if self.resumes_left == 0 {
            return None;
        }
        let attempt = RESUME_ATTEMPTS - self.resumes_left;
        self.resumes_left -= 1;
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
        }
        let mut req = SubscribeToTaskRequest::new(task_id.as_str());
        req.tenant.clone_from(&self.tenant);
        match self
            .transport
            .subscribe_to_task(req, self.last_id.as_deref())
            .await
        {
            Ok(events) => {
                tracing::debug!(task_id, last_id = ?self.last_id, "stream resumed");
                self.events = events;
                // A resubscription without a cursor starts with the current task.
                self.kind = StreamKind::Subscribe;
                self.first = self.last_id.is_none();
                Some(Ok(None))
            }
            Err(ClientError::Protocol { .. }) => {
                // Terminal tasks cannot be subscribed to: fetch the final state instead.
                let mut req = GetTaskRequest::new(task_id.as_str());
                req.tenant.clone_from(&self.tenant);
                match self.transport.get_task(req).await {
                    Ok(task) => {
                        let is_final = task.status.state.is_final()
                            || task.status.state == TaskState::Unspecified;
                        self.done = is_final;
                        Some(Ok(Some(StreamEvent {
                            id: None,
                            response: StreamResponse::Task(task),
                            is_final,
                        })))
                    }
                    Err(e) => Some(Err(e)),
                }
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// This stream as a `futures::Stream`.
    pub fn into_stream(self) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send {
        futures::stream::unfold(self, |mut s| async move { s.next().await.map(|e| (e, s)) })
    }
}
