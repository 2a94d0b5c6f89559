//! Task persistence: the per-task append-only event log and its snapshot projection.
//!
//! Every task is a log of [`TaskEvent`]s with strictly increasing sequence numbers starting
//! at 1. The snapshot (status, artifacts, history) is the projection of the log by
//! [`apply_event`]; stores keep it up to date on every append instead of rewriting whole
//! tasks. Appends carry the sequence number the writer last saw (`expected_seq`), so two
//! writers can never silently overwrite each other.

pub mod codec;
#[cfg(feature = "test-util")]
pub mod conformance;
mod memory;
mod view;

use std::sync::Arc;

use a2a_types::{
    Message, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState,
    TaskStatusUpdateEvent,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

pub use memory::{InMemoryTaskStore, InMemoryTaskStoreConfig};
pub use view::TaskView;

/// One entry of a task's log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskEvent {
    /// The task was created with this initial snapshot (always the first event).
    Created(Task),
    /// The status changed.
    Status(TaskStatusUpdateEvent),
    /// An artifact was added, replaced or extended.
    Artifact(TaskArtifactUpdateEvent),
    /// A client message continued the task (added to the history).
    UserMessage(Message),
    /// The authenticated principal that created the task and owns it (logged right after
    /// [`TaskEvent::Created`] when the agent requires authentication; never shown to clients).
    Owner(Arc<str>),
}

/// A logged event with its sequence number and the task state after it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskEventRecord {
    /// Position in the task's log, from 1.
    pub seq: u64,
    /// The task state once this event is applied.
    pub state: TaskState,
    /// The event.
    pub event: TaskEvent,
}

impl TaskEventRecord {
    /// A record.
    pub fn new(seq: u64, state: TaskState, event: TaskEvent) -> Self {
        Self { seq, state, event }
    }
}

/// A task snapshot together with the sequence number of the last event it reflects.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskSnapshot {
    /// The projection.
    pub task: Task,
    /// The last applied sequence number.
    pub seq: u64,
    /// Who owns the task ([`TaskEvent::Owner`]), if anyone.
    pub owner: Option<Arc<str>>,
}

impl TaskSnapshot {
    /// A snapshot of `task` as of event `seq` (for stores outside this crate).
    pub fn new(task: Task, seq: u64) -> Self {
        Self {
            task,
            seq,
            owner: None,
        }
    }

    /// Owned by `owner`.
    pub fn with_owner(mut self, owner: Option<Arc<str>>) -> Self {
        self.owner = owner;
        self
    }
}

/// The owner a task's log names: its [`TaskEvent::Owner`], which follows the creation.
pub fn owner_in<'a>(mut log: impl Iterator<Item = &'a TaskEvent>) -> Option<&'a Arc<str>> {
    log.by_ref().take(3).find_map(|e| match e {
        TaskEvent::Owner(o) => Some(o),
        _ => None,
    })
}

/// Filters, order and page of a task listing.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this time.
    pub status_timestamp_after: Option<DateTime<Utc>>,
    /// Page size (already validated, 1..=100).
    pub page_size: usize,
    /// Resume after this cursor (from a previous page's `next_page_token`).
    pub page_token: Option<String>,
    /// Keep at most this many history messages per task (`None`: all).
    pub history_length: Option<usize>,
    /// Keep artifacts.
    pub include_artifacts: bool,
    /// Only tasks owned by this principal (`None`: every task).
    pub owner: Option<Arc<str>>,
}

/// One page of tasks.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks, newest status first.
    pub tasks: Vec<Task>,
    /// Cursor of the next page, empty on the last one.
    pub next_page_token: String,
    /// Number of tasks matching the filters.
    pub total_size: usize,
}

impl TaskPage {
    /// A page (for stores outside this crate).
    pub fn new(tasks: Vec<Task>, next_page_token: String, total_size: usize) -> Self {
        Self {
            tasks,
            next_page_token,
            total_size,
        }
    }
}

/// Errors of a [`TaskStore`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The task does not exist.
    #[error("task {0} not found")]
    NotFound(String),
    /// The task already exists (create with `expected_seq == 0`).
    #[error("task {0} already exists")]
    AlreadyExists(String),
    /// Another writer appended first.
    #[error("task {task_id}: expected sequence {expected}, store is at {actual}")]
    Conflict {
        /// The task.
        task_id: String,
        /// What the writer expected.
        expected: u64,
        /// Where the log is.
        actual: u64,
    },
    /// The first event of a new task must be [`TaskEvent::Created`].
    #[error("task {0}: the first event must be Created")]
    NotCreated(String),
    /// A page token that this store did not issue.
    #[error("invalid page token")]
    InvalidPageToken,
    /// Encoding or decoding failed.
    #[error("could not encode or decode a task event: {0}")]
    Serialization(serde_json::Error),
    /// This store does not keep what was asked of it (push notification configs, say).
    #[error("this task store does not support {0}")]
    Unsupported(&'static str),
    /// The backend cannot serve the call right now (connection lost, database restarting,
    /// disk full, busy); the same call may succeed later. An append that fails so is not
    /// known to have failed (a connection may break during its commit): the next append
    /// finds out through its sequence check.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
    /// The backend failed.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

/// The [`TaskStore::push_delivered`] position meaning "everything delivered, the task ended".
pub const PUSH_DELIVERY_DONE: u64 = i64::MAX as u64;

/// Durable storage of task logs and snapshots.
///
/// Contract (checked by the shared conformance suite, `store::conformance` with the
/// `test-util` feature; run it with `a2a_runtime::task_store_conformance!`):
/// - `append` with `expected_seq == 0` creates the task; its first event must be
///   [`TaskEvent::Created`]; an existing task gives [`StoreError::AlreadyExists`].
/// - `append` with `expected_seq > 0` succeeds only when the log's last sequence number is
///   exactly `expected_seq`, else [`StoreError::Conflict`]; events get `expected_seq + 1`,
///   `+ 2`, … and the snapshot is updated with [`apply_event`] in the same atomic step.
/// - The records returned are the ones stored, with the state after each event.
/// - `events_after(id, n)` returns the records with `seq > n` in order.
/// - `list` orders by status timestamp, newest first (ties by task id, descending), and
///   pages with opaque cursors that stay valid while tasks are added.
/// - A task's [`TaskEvent::Owner`], when it has one, comes in the append that creates it,
///   right after [`TaskEvent::Created`]; `get` reports it, and `list` with
///   [`TaskQuery::owner`] returns only that owner's tasks (stores that serve many callers
///   index it).
/// - Implementations may evict old terminal tasks (documented per implementation); they
///   never evict a task that is not terminal. A task's push notification configs go with it.
/// - `put_push_config` stores a config under its `id` (replacing one with the same id) for
///   an existing task, else [`StoreError::NotFound`]; `push_configs` lists a task's configs
///   in the order they were first stored; `delete_push_config` of an absent config succeeds.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Appends `events` to the log of `task_id` after `expected_seq`.
    async fn append(
        &self,
        task_id: &str,
        expected_seq: u64,
        events: Vec<TaskEvent>,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError>;

    /// The current snapshot, with at most `history_length` recent history messages.
    async fn get(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<Option<TaskSnapshot>, StoreError>;

    /// The records with `seq > after_seq`, in order.
    async fn events_after(
        &self,
        task_id: &str,
        after_seq: u64,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError>;

    /// A page of tasks.
    async fn list(&self, query: &TaskQuery) -> Result<TaskPage, StoreError>;

    /// Stores `config` (its `id` set) for `task_id`. The default keeps none.
    async fn put_push_config(
        &self,
        task_id: &str,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let _ = (task_id, config);
        Err(StoreError::Unsupported("push notification configs"))
    }

    /// The push notification configs of `task_id` (none for an unknown task).
    async fn push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let _ = task_id;
        Err(StoreError::Unsupported("push notification configs"))
    }

    /// Records that every event of `task_id` up to `seq` has been delivered to (or given
    /// up for) the webhook of config `id`; [`PUSH_DELIVERY_DONE`] when the task ended and
    /// its last event was delivered. A store that outlives its process keeps this, with the
    /// process delivering, so that another process can resume deliveries the first left
    /// unfinished; a store that dies with its process may record nothing (the default).
    async fn push_delivered(&self, task_id: &str, id: &str, seq: u64) -> Result<(), StoreError> {
        let _ = (task_id, id, seq);
        Ok(())
    }

    /// Removes the config `id` of `task_id`, if there is one.
    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), StoreError> {
        let _ = (task_id, id);
        Err(StoreError::Unsupported("push notification configs"))
    }

    /// False while the backend is known to be unreachable (its last operations failed with
    /// [`StoreError::Unavailable`] and none has succeeded since); readiness checks report it.
    /// Default: always reachable.
    fn reachable(&self) -> bool {
        true
    }

    /// False while no other process is known to write to this store. Streams read the log
    /// now and then for such writes ([`RuntimeConfig::store_poll`](crate::RuntimeConfig::store_poll))
    /// only while this holds; a store whose processes learn of each other late (a heartbeat)
    /// may answer `false` for that long. Default: `true` (another process may write).
    fn may_have_peers(&self) -> bool {
        true
    }
}

/// Applies one event to a snapshot. Shared by every store so that all of them project the
/// log the same way.
///
/// History follows the reference SDK: when the status changes or a client message arrives,
/// the previous status message moves into the history.
pub fn apply_event(task: &mut Task, event: &TaskEvent) {
    use a2a_types::projection::{project_artifact, project_status, project_user_message};
    match event {
        TaskEvent::Created(t) => *task = t.clone(),
        TaskEvent::Status(e) => project_status(task, e),
        TaskEvent::Artifact(e) => project_artifact(task, e),
        TaskEvent::UserMessage(m) => project_user_message(task, m),
        TaskEvent::Owner(_) => {}
    }
}

/// The task a log describes (`events` from the first, which must be [`TaskEvent::Created`]),
/// with at most `history_length` recent history messages; `None` for a log that does not
/// start with the task's creation.
pub fn project<'a>(
    events: impl IntoIterator<Item = &'a TaskEvent>,
    history_length: Option<usize>,
) -> Option<Task> {
    let mut events = events.into_iter();
    let Some(TaskEvent::Created(first)) = events.next() else {
        return None;
    };
    let mut task = first.clone();
    for e in events {
        apply_event(&mut task, e);
    }
    if let Some(n) = history_length {
        task.truncate_history(n);
    }
    Some(task)
}

/// The status `event` sets, if it sets one: the new state and the status timestamp (what
/// listings sort on). Every store tracks a task's state and sort key with it.
pub fn status_set_by(event: &TaskEvent) -> Option<(TaskState, Option<DateTime<Utc>>)> {
    match event {
        TaskEvent::Created(t) => Some((t.status.state, t.status.timestamp)),
        TaskEvent::Status(s) => Some((s.status.state, s.status.timestamp)),
        _ => None,
    }
}

/// A status timestamp as the listing sort key: milliseconds since the epoch, 0 when unset.
pub fn sort_millis(at: Option<DateTime<Utc>>) -> i64 {
    at.map_or(0, |t| t.timestamp_millis())
}

/// Encodes a listing cursor: the sort key of the last task of a page.
pub fn encode_page_token(timestamp: Option<DateTime<Utc>>, task_id: &str) -> String {
    use base64::Engine;
    let millis = sort_millis(timestamp);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{millis}:{task_id}"))
}

/// Decodes a cursor made by [`encode_page_token`].
pub fn decode_page_token(token: &str) -> Result<(i64, String), StoreError> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| StoreError::InvalidPageToken)?;
    let s = String::from_utf8(raw).map_err(|_| StoreError::InvalidPageToken)?;
    let (millis, id) = s.split_once(':').ok_or(StoreError::InvalidPageToken)?;
    let millis = millis.parse().map_err(|_| StoreError::InvalidPageToken)?;
    Ok((millis, id.to_owned()))
}

/// Shapes a stored task for a listing: history cut, artifacts dropped unless asked for.
pub fn shape_for_listing(mut task: Task, query: &TaskQuery) -> Task {
    if let Some(n) = query.history_length {
        task.truncate_history(n);
    }
    if !query.include_artifacts {
        task.artifacts.clear();
    }
    task
}
