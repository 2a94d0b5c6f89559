//! A2A v0.3 JSON shapes (`kind` discriminators, lowercase enums, file parts, `final` flag)
//! and conversions to and from the v1.0 model.
//!
//! v0.3 is still spoken by many deployed clients and servers; servers accept it on the same
//! endpoint, and clients fall back to it when a card offers nothing newer.

mod card;
mod convert;
mod error;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use card::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, OAuthFlowsV03, SecuritySchemeV03,
    merged_card_json,
};
pub use convert::{state_from_v03, state_to_v03};
pub use error::{jsonrpc_error, v03_state_names};

use crate::serde_util;

/// The protocol version string of v0.3 cards.
pub const PROTOCOL_VERSION: &str = "0.3.0";

macro_rules! kind_marker {
    ($(#[$m:meta])* $name:ident = $lit:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                if s == $lit {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        concat!("expected kind \"", $lit, "\", found {:?}"),
                        s
                    )))
                }
            }
        }
    };
}

kind_marker!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
kind_marker!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
kind_marker!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
kind_marker!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);

/// v0.3 task state (lowercase names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TaskState {
    /// `submitted`.
    Submitted,
    /// `working`.
    Working,
    /// `input-required`.
    InputRequired,
    /// `completed`.
    Completed,
    /// `canceled`.
    Canceled,
    /// `failed`.
    Failed,
    /// `rejected`.
    Rejected,
    /// `auth-required`.
    AuthRequired,
    /// `unknown`.
    #[default]
    Unknown,
}

/// v0.3 role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// `user`.
    #[default]
    User,
    /// `agent`.
    Agent,
}

/// v0.3 file content: inline bytes or a URI.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileContent {
    /// Base64 content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// URI of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// File name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// v0.3 part, discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Part {
    /// `{"kind":"text","text":…}`.
    Text {
        /// The text.
        text: String,
        /// Metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// `{"kind":"file","file":{…}}`.
    File {
        /// The file.
        file: FileContent,
        /// Metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// `{"kind":"data","data":{…}}`.
    Data {
        /// The data (an object in v0.3).
        data: Value,
        /// Metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
}

/// v0.3 message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// Always `message`.
    #[serde(default)]
    pub kind: MessageKind,
    /// Id.
    #[serde(default)]
    pub message_id: String,
    /// Context.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub context_id: Option<String>,
    /// Task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub task_id: Option<String>,
    /// Sender.
    pub role: Role,
    /// Parts.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Referenced tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
}

/// v0.3 task status.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatus {
    /// State.
    pub state: TaskState,
    /// Agent message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// Timestamp.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_util::timestamp"
    )]
    pub timestamp: Option<DateTime<Utc>>,
}

/// v0.3 artifact.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Artifact {
    /// Id.
    #[serde(default)]
    pub artifact_id: String,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Parts.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
}

/// v0.3 task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Always `task`.
    #[serde(default)]
    pub kind: TaskKind,
    /// Id.
    pub id: String,
    /// Context.
    #[serde(default)]
    pub context_id: String,
    /// Status.
    pub status: TaskStatus,
    /// Artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// History.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3 status update event.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatusUpdateEvent {
    /// Always `status-update`.
    #[serde(default)]
    pub kind: StatusUpdateKind,
    /// Task.
    pub task_id: String,
    /// Context.
    #[serde(default)]
    pub context_id: String,
    /// Status.
    pub status: TaskStatus,
    /// Last event of the stream.
    #[serde(default, rename = "final")]
    pub is_final: bool,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3 artifact update event.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskArtifactUpdateEvent {
    /// Always `artifact-update`.
    #[serde(default)]
    pub kind: ArtifactUpdateKind,
    /// Task.
    pub task_id: String,
    /// Context.
    #[serde(default)]
    pub context_id: String,
    /// Artifact.
    pub artifact: Artifact,
    /// Append to the artifact with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Final chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Result of `message/send`: a bare task or message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SendMessageResult {
    /// A task.
    Task(Task),
    /// A message.
    Message(Message),
}

/// One event of a v0.3 stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A task.
    Task(Task),
    /// A message.
    Message(Message),
    /// A status update.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// v0.3 push notification authentication.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PushNotificationAuthenticationInfo {
    /// Schemes.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// Credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// v0.3 push notification config.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PushNotificationConfig {
    /// Id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Webhook URL.
    pub url: String,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

/// v0.3 `TaskPushNotificationConfig`: the params of `tasks/pushNotificationConfig/set` and
/// the results of set, get and list.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskPushNotificationConfig {
    /// The task.
    #[serde(default)]
    pub task_id: String,
    /// The webhook.
    #[serde(default)]
    pub push_notification_config: PushNotificationConfig,
}

/// v0.3 params of `tasks/pushNotificationConfig/get`, `…/list` and `…/delete`: the task
/// (`id`) and, for get and delete, the config.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PushNotificationConfigParams {
    /// The task.
    #[serde(default)]
    pub id: String,
    /// The config (get: optional, the task's first config when absent; delete: required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3 `MessageSendConfiguration`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MessageSendConfiguration {
    /// Accepted output media types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// History length.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub history_length: Option<i32>,
    /// Push config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
    /// Wait for a final state (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
}

/// v0.3 `MessageSendParams` (`message/send`, `message/stream`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MessageSendParams {
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3 `TaskQueryParams` (`tasks/get`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskQueryParams {
    /// Task id.
    #[serde(default)]
    pub id: String,
    /// History length.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub history_length: Option<i32>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3 `TaskIdParams` (`tasks/cancel`, `tasks/resubscribe`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// Task id.
    #[serde(default)]
    pub id: String,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}
