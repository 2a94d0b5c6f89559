//! How a task follows from its events, and how a task looks on the wire, each written once.
//!
//! A task is projected in three places: an owned [`Task`] folds status and artifact updates
//! (stores, clients assembling a stream), and a server answers from a view that borrows from
//! the logged events so that it copies no message or artifact. Both implement
//! [`TaskProjection`]'s few primitives; the rules (which events move the status message into
//! the history, how metadata merges, when an artifact is appended to, replaced or added)
//! live only in [`project_status`], [`project_artifact`] and [`project_user_message`].
//!
//! Likewise [`TaskRef`] is the one definition of a task's JSON: [`Task`] serializes through
//! it, and so does any borrowed view.

use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::event::{TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use crate::message::Message;
use crate::serde_util::with_timestamp_text;
use crate::task::{Artifact, Task, TaskState, TaskStatus};

/// A task being projected from its events: by value (a [`Task`]) or by reference (a view of
/// a log). `'a` is how long the events outlive the projection.
pub trait TaskProjection<'a> {
    /// Moves the current status message, if there is one, to the end of the history.
    fn move_status_message_to_history(&mut self);
    /// Merges `metadata` into the task's.
    fn merge_metadata(&mut self, metadata: &'a Map<String, Value>);
    /// Replaces the status.
    fn set_status(&mut self, status: &'a TaskStatus);
    /// Appends a message to the history.
    fn push_history(&mut self, message: &'a Message);
    /// The position of the artifact with this id (ids are unique in a task). Implementations
    /// search from the end: a stream's chunks extend its newest artifact, which is then found
    /// at once however many came before.
    fn artifact_index(&self, artifact_id: &str) -> Option<usize>;
    /// Extends the artifact at `index` with `chunk` (see [`Artifact::append_chunk`]).
    fn append_to_artifact(&mut self, index: usize, chunk: &'a Artifact);
    /// Replaces the artifact at `index`.
    fn replace_artifact(&mut self, index: usize, artifact: &'a Artifact);
    /// Adds an artifact at the end.
    fn push_artifact(&mut self, artifact: &'a Artifact);
}

/// A status update: the previous status message moves into the history (the reference SDK's
/// convention), the event's metadata merges into the task's, and the status is replaced.
pub fn project_status<'a>(task: &mut impl TaskProjection<'a>, e: &'a TaskStatusUpdateEvent) {
    task.move_status_message_to_history();
    if let Some(md) = &e.metadata {
        task.merge_metadata(md);
    }
    task.set_status(&e.status);
}

/// An artifact update: with `append`, the parts extend the artifact with the same id (name,
/// description and metadata updated when given); otherwise the artifact replaces the one with
/// the same id, or is added.
pub fn project_artifact<'a>(task: &mut impl TaskProjection<'a>, e: &'a TaskArtifactUpdateEvent) {
    match task.artifact_index(&e.artifact.artifact_id) {
        Some(i) if e.append => task.append_to_artifact(i, &e.artifact),
        Some(i) => task.replace_artifact(i, &e.artifact),
        None => task.push_artifact(&e.artifact),
    }
}

/// A client message continuing the task: the status message, then the client's message,
/// join the history.
pub fn project_user_message<'a>(task: &mut impl TaskProjection<'a>, message: &'a Message) {
    task.move_status_message_to_history();
    task.push_history(message);
}

impl Task {
    /// Applies an artifact update: `append` adds the parts to the artifact with the same id
    /// (name, description and metadata updated when given); otherwise the artifact is added,
    /// or replaces the one with the same id.
    pub fn apply_artifact_update(&mut self, e: &crate::TaskArtifactUpdateEvent) {
        project_artifact(self, e);
    }

    /// Applies a status update: the previous status message moves into the history (the
    /// reference SDK's convention) and the event's metadata merges into the task's.
    pub fn apply_status_update(&mut self, e: &crate::TaskStatusUpdateEvent) {
        project_status(self, e);
    }
}

impl<'a> TaskProjection<'a> for Task {
    fn move_status_message_to_history(&mut self) {
        if let Some(m) = self.status.message.take() {
            self.history.push(m);
        }
    }

    fn merge_metadata(&mut self, metadata: &'a Map<String, Value>) {
        self.metadata
            .get_or_insert_with(Map::new)
            .extend(metadata.clone());
    }

    fn set_status(&mut self, status: &'a TaskStatus) {
        self.status = status.clone();
    }

    fn push_history(&mut self, message: &'a Message) {
        self.history.push(message.clone());
    }

    fn artifact_index(&self, artifact_id: &str) -> Option<usize> {
        self.artifacts
            .iter()
            .rposition(|a| a.artifact_id == artifact_id)
    }

    fn append_to_artifact(&mut self, index: usize, chunk: &'a Artifact) {
        self.artifacts[index].append_chunk(chunk);
    }

    fn replace_artifact(&mut self, index: usize, artifact: &'a Artifact) {
        self.artifacts[index] = artifact.clone();
    }

    fn push_artifact(&mut self, artifact: &'a Artifact) {
        self.artifacts.push(artifact.clone());
    }
}

/// A task by reference: the one definition of its JSON (ProtoJSON `Task`). `A` and `M` are
/// how the artifacts and history messages are held (owned, borrowed, copy-on-write); each
/// serializes as an [`Artifact`] and a [`Message`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRef<'t, A, M> {
    /// The id.
    pub id: &'t str,
    /// The context (omitted when empty).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub context_id: &'t str,
    /// The status.
    pub status: TaskStatusRef<'t>,
    /// The artifacts (omitted when none).
    #[serde(skip_serializing_if = "is_empty")]
    pub artifacts: &'t [A],
    /// The history (omitted when empty).
    #[serde(skip_serializing_if = "is_empty")]
    pub history: &'t [M],
    /// The metadata (omitted when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'t Map<String, Value>>,
}

/// A task status by reference (see [`TaskRef`]).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusRef<'t> {
    /// The state.
    pub state: TaskState,
    /// The status message (omitted when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'t Message>,
    /// When the status was recorded (omitted when unknown).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "timestamp")]
    pub timestamp: Option<&'t DateTime<Utc>>,
}

fn is_empty<T>(items: &&[T]) -> bool {
    items.is_empty()
}

fn timestamp<S: Serializer>(t: &Option<&DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => with_timestamp_text(t, |text| s.serialize_str(text)),
        None => s.serialize_none(),
    }
}

impl<'t> From<&'t TaskStatus> for TaskStatusRef<'t> {
    fn from(status: &'t TaskStatus) -> Self {
        // Every field named: a field added to `TaskStatus` does not compile until it is here.
        let TaskStatus {
            state,
            message,
            timestamp,
        } = status;
        Self {
            state: *state,
            message: message.as_ref(),
            timestamp: timestamp.as_ref(),
        }
    }
}

impl Serialize for TaskStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TaskStatusRef::from(self).serialize(s)
    }
}

impl<'t> From<&'t Task> for TaskRef<'t, Artifact, Message> {
    fn from(task: &'t Task) -> Self {
        // Every field named: a field added to `Task` does not compile until it is here.
        let Task {
            id,
            context_id,
            status,
            artifacts,
            history,
            metadata,
        } = task;
        Self {
            id,
            context_id,
            status: status.into(),
            artifacts,
            history,
            metadata: metadata.as_ref(),
        }
    }
}

impl Serialize for Task {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TaskRef::from(self).serialize(s)
    }
}
