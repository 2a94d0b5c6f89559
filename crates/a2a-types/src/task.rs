//! Tasks, their status and artifacts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::{Message, Part};
use crate::proto_enum::proto_enum;
use crate::serde_util;

proto_enum! {
    /// The lifecycle state of a task. Numbers are proto numbers, not lifecycle order.
    pub enum TaskState {
        /// Invalid / not set.
        #[default]
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED" | "unknown",
        /// Created and acknowledged.
        Submitted = 1 => "TASK_STATE_SUBMITTED" | "submitted",
        /// Being processed.
        Working = 2 => "TASK_STATE_WORKING" | "working",
        /// Finished successfully (terminal).
        Completed = 3 => "TASK_STATE_COMPLETED" | "completed",
        /// Finished with an error (terminal).
        Failed = 4 => "TASK_STATE_FAILED" | "failed",
        /// Canceled before completion (terminal).
        Canceled = 5 => "TASK_STATE_CANCELED" | "canceled" | "TASK_STATE_CANCELLED" | "cancelled",
        /// Waiting for more input from the user (interrupted).
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED" | "input-required",
        /// The agent declined the task (terminal).
        Rejected = 7 => "TASK_STATE_REJECTED" | "rejected",
        /// Waiting for authentication (interrupted).
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED" | "auth-required",
    }
}

impl TaskState {
    /// Completed, failed, canceled or rejected: nothing can follow.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Input required or auth required: the task waits for the client.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// Terminal or interrupted: a blocking send returns and a stream closes.
    pub const fn is_final(self) -> bool {
        self.is_terminal() || self.is_interrupted()
    }
}

/// The status of a task at a point in time. Serialized through
/// [`TaskStatusRef`](crate::projection::TaskStatusRef).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatus {
    /// The state.
    #[serde(default)]
    pub state: TaskState,
    /// An agent message that goes with the state (a prompt, a reason, progress).
    #[serde(default)]
    pub message: Option<Message>,
    /// When the status was recorded.
    #[serde(default, deserialize_with = "serde_util::timestamp::deserialize")]
    pub timestamp: Option<DateTime<Utc>>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Utc::now()),
        }
    }

    /// A status in `state` with an agent message, stamped now.
    pub fn with_message(state: TaskState, message: Option<Message>) -> Self {
        Self {
            state,
            message,
            timestamp: Some(Utc::now()),
        }
    }
}

/// A unit of work with a lifecycle, its outputs (artifacts) and history. Serialized through
/// [`TaskRef`](crate::projection::TaskRef).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Server-generated unique id.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub id: String,
    /// The conversation this task belongs to.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub context_id: String,
    /// Current status.
    #[serde(default)]
    pub status: TaskStatus,
    /// Outputs, in the order they were first produced.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub artifacts: Vec<Artifact>,
    /// Messages exchanged while working on the task.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub history: Vec<Message>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

impl Task {
    /// A new task in `state` with no artifacts or history.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, state: TaskState) -> Self {
        Self {
            id: id.into(),
            context_id: context_id.into(),
            status: TaskStatus::new(state),
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
        }
    }

    /// Keeps only the `n` most recent history messages (`0` drops the history).
    pub fn truncate_history(&mut self, n: usize) {
        let len = self.history.len();
        if n < len {
            self.history.drain(..len - n);
        }
    }

    /// The text of every artifact, in order, joined with newlines.
    pub fn artifacts_text(&self) -> String {
        self.artifacts
            .iter()
            .map(Artifact::text_content)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Looks an artifact up by id.
    pub fn artifact(&self, artifact_id: &str) -> Option<&Artifact> {
        // From the end, as projection looks artifacts up: with a duplicated id (a task built
        // elsewhere), the one found is the one appended to.
        self.artifacts
            .iter()
            .rev()
            .find(|a| a.artifact_id == artifact_id)
    }
}

/// An output of a task, made of parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Artifact {
    /// Unique within the task.
    #[serde(
        default,
        alias = "artifact_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub name: Option<String>,
    /// Human-readable description.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub description: Option<String>,
    /// The content (at least one part).
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs that contributed to this artifact.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with the given id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self {
            artifact_id: artifact_id.into(),
            parts,
            ..Self::default()
        }
    }

    /// An artifact with a generated id, a name and one text part. Each call makes a new
    /// artifact (a new id): to send one artifact in chunks, use the server's
    /// `TaskUpdater::artifact_writer`, which keeps the id and sets `append` and `lastChunk`.
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(crate::new_id(), vec![Part::text(text)]).with_name(name)
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The concatenation of the text parts.
    pub fn text_content(&self) -> String {
        crate::message::join_text(&self.parts)
    }

    /// Appends a chunk sent with `append: true`: its parts are added; its name, description
    /// and metadata update this artifact's when given.
    pub fn append_chunk(&mut self, chunk: &Artifact) {
        self.parts.extend(chunk.parts.iter().cloned());
        if let Some(md) = &chunk.metadata {
            self.metadata
                .get_or_insert_with(Default::default)
                .extend(md.clone());
        }
        if chunk.name.is_some() {
            self.name.clone_from(&chunk.name);
        }
        if chunk.description.is_some() {
            self.description.clone_from(&chunk.description);
        }
    }
}
