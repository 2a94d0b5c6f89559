//! Operation requests and responses (the `params` and `result` of each method).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::Message;
use crate::push::TaskPushNotificationConfig;
use crate::serde_util;
use crate::task::{Task, TaskState};

/// `SendMessage` / `SendStreamingMessage` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SendMessageRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl SendMessageRequest {
    /// A request carrying `message` with default options.
    pub fn new(message: Message) -> Self {
        Self {
            tenant: None,
            message,
            configuration: None,
            metadata: None,
        }
    }

    /// Sets the options.
    pub fn with_configuration(mut self, configuration: SendMessageConfiguration) -> Self {
        self.configuration = Some(configuration);
        self
    }

    /// Sets the request metadata.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// `configuration.returnImmediately`.
    pub fn return_immediately(&self) -> bool {
        self.configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately)
    }

    /// `configuration.historyLength`.
    pub fn history_length(&self) -> Option<i32> {
        self.configuration.as_ref().and_then(|c| c.history_length)
    }
}

/// Options of `SendMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SendMessageConfiguration {
    /// Media types the client accepts.
    #[serde(
        default,
        alias = "accepted_output_modes",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook for this task.
    #[serde(
        default,
        alias = "task_push_notification_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How many recent history messages to return.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub history_length: Option<i32>,
    /// Return once the task exists instead of waiting for a final state.
    #[serde(
        default,
        alias = "return_immediately",
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "serde_util::boolean::deserialize"
    )]
    pub return_immediately: bool,
}

/// `GetTask` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub id: String,
    /// How many recent history messages to return.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub history_length: Option<i32>,
}

impl GetTaskRequest {
    /// A request for task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            tenant: None,
            id: id.into(),
            history_length: None,
        }
    }
}

/// `ListTasks` parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(
        default,
        alias = "context_id",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Page size, 1 to 100 (default 50).
    #[serde(
        default,
        alias = "page_size",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub page_size: Option<i32>,
    /// Cursor from a previous page.
    #[serde(
        default,
        alias = "page_token",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub page_token: Option<String>,
    /// How many recent history messages to return per task.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed at or after this time.
    #[serde(
        default,
        alias = "status_timestamp_after",
        skip_serializing_if = "Option::is_none",
        with = "serde_util::timestamp"
    )]
    pub status_timestamp_after: Option<DateTime<Utc>>,
    /// Include artifacts (default false).
    #[serde(
        default,
        alias = "include_artifacts",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
}

/// `ListTasks` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResponse {
    /// The page, newest status first.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub tasks: Vec<Task>,
    /// Cursor of the next page, `""` on the last page (always present).
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(default, alias = "page_size")]
    pub page_size: i32,
    /// Number of tasks matching the filter.
    #[serde(default, alias = "total_size")]
    pub total_size: i32,
}

/// `CancelTask` parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelTaskRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub id: String,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl CancelTaskRequest {
    /// A request to cancel task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            tenant: None,
            id: id.into(),
            metadata: None,
        }
    }
}

/// `SubscribeToTask` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscribeToTaskRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub id: String,
}

impl SubscribeToTaskRequest {
    /// A request to follow task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            tenant: None,
            id: id.into(),
        }
    }
}

/// `GetTaskPushNotificationConfig` / `DeleteTaskPushNotificationConfig` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskPushNotificationConfigRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub task_id: String,
    /// Config id.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub id: String,
}

impl TaskPushNotificationConfigRequest {
    /// Config `id` of task `task_id`.
    pub fn new(task_id: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            tenant: None,
            task_id: task_id.into(),
            id: id.into(),
        }
    }
}

/// `ListTaskPushNotificationConfigs` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub task_id: String,
    /// Page size.
    #[serde(
        default,
        alias = "page_size",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_i32::deserialize"
    )]
    pub page_size: Option<i32>,
    /// Cursor.
    #[serde(
        default,
        alias = "page_token",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub page_token: Option<String>,
}

impl ListTaskPushNotificationConfigsRequest {
    /// The configs of task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            ..Self::default()
        }
    }
}

/// `ListTaskPushNotificationConfigs` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor of the next page.
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
}

/// `GetExtendedAgentCard` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetExtendedAgentCardRequest {
    /// Tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
}
