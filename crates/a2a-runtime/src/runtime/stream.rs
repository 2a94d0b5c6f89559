//! A task's events as a stream: backlog from the log, then live events from the bus.

use std::collections::VecDeque;
use std::sync::Arc;

use a2a_types::{A2aError, Message, StreamResponseRef, Task, TaskState};

use crate::bus::{BusEvent, BusSubscription, RecvError};
use crate::store::{StoreError, TaskEvent, TaskEventRecord, TaskStore};

/// What an item that is never made would show (an owner record is never streamed).
/// How much longer a stream waits between checks while its store has no other process.
const ALONE_POLL_FACTOR: u32 = 8;

static EMPTY_TASK: std::sync::LazyLock<Task> = std::sync::LazyLock::new(Task::default);

/// The content of one stream event.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StreamPayload {
    /// A logged event (task creation, status or artifact update).
    Record(Arc<TaskEventRecord>),
    /// A task snapshot (first event of a subscription or continuation).
    Snapshot(Box<Task>),
    /// A direct message reply.
    Reply(Arc<Message>),
}

/// One event of a task stream.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StreamItem {
    /// Log position (the SSE event id); 0 for a direct reply.
    pub seq: u64,
    /// The event.
    pub payload: StreamPayload,
    /// The stream ends after this event.
    pub is_final: bool,
}

impl StreamItem {
    /// The event as a (borrowed) `StreamResponse`.
    pub fn response(&self) -> StreamResponseRef<'_> {
        match &self.payload {
            StreamPayload::Snapshot(t) => StreamResponseRef::Task(t),
            StreamPayload::Reply(m) => StreamResponseRef::Message(m),
            StreamPayload::Record(r) => match &r.event {
                TaskEvent::Created(t) => StreamResponseRef::Task(t),
                TaskEvent::Status(s) => StreamResponseRef::StatusUpdate(s),
                TaskEvent::Artifact(a) => StreamResponseRef::ArtifactUpdate(a),
                // Never turned into an item (see `TaskEventStream::item`).
                TaskEvent::UserMessage(m) => StreamResponseRef::Message(m),
                TaskEvent::Owner(_) => StreamResponseRef::Task(&EMPTY_TASK),
            },
        }
    }
}

/// Which states end a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClosePolicy {
    /// Close on the interrupted states: a `SendStreamingMessage` stream answers one message,
    /// so it ends when the agent waits for the next one. A `SubscribeToTask` stream follows
    /// the task until a terminal state (spec §3.1.6), so it stays open through them.
    pub(crate) on_interrupted: bool,
    /// With `on_interrupted`: close on `TASK_STATE_AUTH_REQUIRED` too (the spec's streaming
    /// guide), or keep the stream open while credentials arrive out of band (§7.6.1).
    pub(crate) on_auth_required: bool,
}

impl ClosePolicy {
    /// Only terminal states end the stream (subscriptions).
    pub(crate) const TERMINAL_ONLY: Self = Self {
        on_interrupted: false,
        on_auth_required: false,
    };

    pub(crate) fn closes(self, state: TaskState) -> bool {
        state.is_terminal()
            || (self.on_interrupted
                && (state == TaskState::InputRequired
                    || (state == TaskState::AuthRequired && self.on_auth_required)))
    }
}

/// Follows one task: yields an optional first item, then the log from a cursor, then live
/// events, never losing or repeating one. A subscriber that lags behind the bus re-reads
/// the log, so a slow reader never blocks the agent.
#[derive(Debug)]
pub struct TaskEventStream {
    task_id: String,
    store: Arc<dyn TaskStore>,
    sub: BusSubscription,
    cursor: u64,
    first: Option<StreamItem>,
    backlog: VecDeque<Arc<TaskEventRecord>>,
    policy: ClosePolicy,
    /// Read the log at this interval while the bus is quiet (a store shared by processes).
    poll: Option<std::time::Duration>,
    /// Read the log once before waiting (the caller does not know whether it is behind).
    catch_up_first: bool,
    done: bool,
    _open: crate::metrics::GaugeHold,
    /// The caller's stream slot, given back with the stream.
    /// Whatever the caller keeps alive while the stream is open (a per-caller stream slot).
    _guard: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl TaskEventStream {
    pub(crate) fn new(
        task_id: String,
        store: Arc<dyn TaskStore>,
        sub: BusSubscription,
        cursor: u64,
        policy: ClosePolicy,
    ) -> Self {
        Self {
            task_id,
            store,
            sub,
            cursor,
            first: None,
            backlog: VecDeque::new(),
            policy,
            poll: None,
            catch_up_first: false,
            done: false,
            _open: crate::metrics::global().stream_opened(),
            _guard: None,
        }
    }

    /// Holds `slot` for as long as the stream lives.
    /// Keeps `guard` alive until the stream is dropped (a per-caller stream slot, say).
    pub fn with_guard(mut self, guard: Option<Box<dyn std::any::Any + Send + Sync>>) -> Self {
        self._guard = guard;
        self
    }

    /// Also reads the log every `poll` while no event arrives on the bus.
    pub(crate) fn with_poll(mut self, poll: Option<std::time::Duration>) -> Self {
        self.poll = poll;
        self
    }

    /// Starts with a task snapshot; `closes` says whether the stream ends right after it.
    pub fn with_snapshot(mut self, task: Task, seq: u64, closes: bool) -> Self {
        self.first = Some(StreamItem {
            seq,
            payload: StreamPayload::Snapshot(Box::new(task)),
            is_final: closes,
        });
        self
    }

    /// Replays these records before live events.
    /// Reads the log after the cursor before waiting for live events: for a stream that
    /// starts at a position of the caller's, which the log may have passed already (events
    /// published before it subscribed are not on the bus).
    pub(crate) fn catching_up_first(mut self) -> Self {
        self.catch_up_first = true;
        self
    }

    pub(crate) fn with_backlog(mut self, records: Vec<Arc<TaskEventRecord>>) -> Self {
        self.backlog.extend(records);
        self
    }

    /// The task followed.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    fn item(&mut self, r: Arc<TaskEventRecord>) -> Option<StreamItem> {
        if r.seq <= self.cursor {
            return None;
        }
        self.cursor = r.seq;
        let is_final = match r.event {
            TaskEvent::Created(_) | TaskEvent::Status(_) => self.policy.closes(r.state),
            TaskEvent::Artifact(_) => false,
            TaskEvent::UserMessage(_) | TaskEvent::Owner(_) => return None,
        };
        Some(StreamItem {
            seq: r.seq,
            payload: StreamPayload::Record(r),
            is_final,
        })
    }

    async fn catch_up(&mut self) -> Result<(), A2aError> {
        let records = match self.store.events_after(&self.task_id, self.cursor).await {
            Ok(records) => records,
            // A stream opened for a task being created polls before the creation is
            // committed when the store is slow: nothing to read yet.
            Err(StoreError::NotFound(_)) if self.cursor == 0 => return Ok(()),
            Err(e) => return Err(super::errors::store_failure(e)),
        };
        self.backlog.extend(records);
        Ok(())
    }

    /// The next event, `None` once the stream is over.
    pub async fn next(&mut self) -> Option<Result<StreamItem, A2aError>> {
        if self.done {
            return None;
        }
        if let Some(first) = self.first.take() {
            self.done = first.is_final;
            return Some(Ok(first));
        }
        if std::mem::take(&mut self.catch_up_first)
            && let Err(e) = self.catch_up().await
        {
            self.done = true;
            return Some(Err(e));
        }
        loop {
            while let Some(r) = self.backlog.pop_front() {
                if let Some(item) = self.item(r) {
                    self.done = item.is_final;
                    return Some(Ok(item));
                }
            }
            let received = match self.poll {
                None => self.sub.recv().await,
                // Alone on the store, nobody else writes: the log is not read (10 000 quiet
                // streams polling every 250 ms made 40 000 reads a second), only whether
                // that still holds, now and then.
                Some(every) if !self.store.may_have_peers() => {
                    match tokio::time::timeout(every * ALONE_POLL_FACTOR, self.sub.recv()).await {
                        Ok(received) => received,
                        Err(_) => continue,
                    }
                }
                Some(every) => match tokio::time::timeout(every, self.sub.recv()).await {
                    Ok(received) => received,
                    Err(_) => {
                        // Quiet: another process may have written; read the log.
                        if let Err(e) = self.catch_up().await {
                            self.done = true;
                            return Some(Err(e));
                        }
                        continue;
                    }
                },
            };
            match received {
                Ok(BusEvent::Record(r)) => {
                    if r.seq > self.cursor + 1 {
                        // Published before we subscribed or skipped: fill the gap from the log.
                        if let Err(e) = self.catch_up().await {
                            self.done = true;
                            return Some(Err(e));
                        }
                        continue;
                    }
                    if let Some(item) = self.item(r) {
                        self.done = item.is_final;
                        return Some(Ok(item));
                    }
                }
                Ok(BusEvent::Appended { seq, .. }) => {
                    // Another process wrote: read what this stream has not seen yet.
                    if seq > self.cursor
                        && let Err(e) = self.catch_up().await
                    {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                Ok(BusEvent::Reply(m)) => {
                    self.done = true;
                    return Some(Ok(StreamItem {
                        seq: 0,
                        payload: StreamPayload::Reply(m),
                        is_final: true,
                    }));
                }
                Ok(BusEvent::StoreFailed) => {
                    self.done = true;
                    return Some(Err(super::errors::events_not_written(self.cursor == 0)));
                }
                Err(RecvError::Lagged(_)) => {
                    if let Err(e) = self.catch_up().await {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    return None;
                }
            }
        }
    }

    /// This stream as a `futures::Stream`.
    pub fn into_stream(self) -> impl futures::Stream<Item = Result<StreamItem, A2aError>> + Send {
        futures::stream::unfold(self, |mut s| async move { s.next().await.map(|i| (i, s)) })
    }
}
