//! Streaming events and the response wrappers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::Message;
use crate::serde_util;
use crate::task::{Artifact, Task, TaskStatus};

/// A change of a task's status.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatusUpdateEvent {
    /// The task.
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub task_id: String,
    /// The task's context.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub context_id: String,
    /// The new status.
    #[serde(default)]
    pub status: TaskStatus,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl TaskStatusUpdateEvent {
    /// A status update for `task_id` in `context_id`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            status,
            metadata: None,
        }
    }
}

/// A new artifact, a replacement, or a chunk appended to an artifact.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub task_id: String,
    /// The task's context.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub context_id: String,
    /// The artifact (or the chunk of it).
    #[serde(default)]
    pub artifact: Artifact,
    /// `true`: add these parts to the artifact already sent with the same id.
    #[serde(
        default,
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "serde_util::boolean::deserialize"
    )]
    pub append: bool,
    /// `true`: this is the final chunk of the artifact.
    #[serde(
        default,
        alias = "last_chunk",
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "serde_util::boolean::deserialize"
    )]
    pub last_chunk: bool,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl TaskArtifactUpdateEvent {
    /// An artifact update for `task_id` in `context_id`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact,
            append,
            last_chunk,
            metadata: None,
        }
    }
}

/// One event of a stream (`SendStreamingMessage`, `SubscribeToTask`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StreamResponse {
    /// A task snapshot.
    Task(Task),
    /// A direct message reply.
    Message(Message),
    /// A status change.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// A borrowed [`StreamResponse`], serialized identically; lets servers write events without
/// cloning them.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StreamResponseRef<'a> {
    /// A task snapshot.
    Task(&'a Task),
    /// A direct message reply.
    Message(&'a Message),
    /// A status change.
    StatusUpdate(&'a TaskStatusUpdateEvent),
    /// An artifact update.
    ArtifactUpdate(&'a TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// Borrows this event.
    pub fn as_ref(&self) -> StreamResponseRef<'_> {
        match self {
            Self::Task(t) => StreamResponseRef::Task(t),
            Self::Message(m) => StreamResponseRef::Message(m),
            Self::StatusUpdate(s) => StreamResponseRef::StatusUpdate(s),
            Self::ArtifactUpdate(a) => StreamResponseRef::ArtifactUpdate(a),
        }
    }

    /// The task id this event is about, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Self::Task(t) => Some(&t.id),
            Self::Message(m) => m.task_id.as_deref(),
            Self::StatusUpdate(s) => Some(&s.task_id),
            Self::ArtifactUpdate(a) => Some(&a.task_id),
        }
    }
}

/// The result of `SendMessage`: a task or a direct message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SendMessageResponse {
    /// The task that handles the message.
    Task(Task),
    /// A direct reply.
    Message(Message),
}
