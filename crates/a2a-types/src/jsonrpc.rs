//! JSON-RPC 2.0 envelopes and the A2A method names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `jsonrpc` member value.
pub const VERSION: &str = "2.0";

/// A2A method names.
pub mod method {
    /// v1.0 `SendMessage`.
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// v1.0 `SendStreamingMessage`.
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// v1.0 `GetTask`.
    pub const GET_TASK: &str = "GetTask";
    /// v1.0 `ListTasks`.
    pub const LIST_TASKS: &str = "ListTasks";
    /// v1.0 `CancelTask`.
    pub const CANCEL_TASK: &str = "CancelTask";
    /// v1.0 `SubscribeToTask`.
    pub const SUBSCRIBE_TO_TASK: &str = "SubscribeToTask";
    /// v1.0 `CreateTaskPushNotificationConfig`.
    pub const CREATE_PUSH_CONFIG: &str = "CreateTaskPushNotificationConfig";
    /// v1.0 `GetTaskPushNotificationConfig`.
    pub const GET_PUSH_CONFIG: &str = "GetTaskPushNotificationConfig";
    /// v1.0 `ListTaskPushNotificationConfigs`.
    pub const LIST_PUSH_CONFIGS: &str = "ListTaskPushNotificationConfigs";
    /// v1.0 `DeleteTaskPushNotificationConfig`.
    pub const DELETE_PUSH_CONFIG: &str = "DeleteTaskPushNotificationConfig";
    /// v1.0 `GetExtendedAgentCard`.
    pub const GET_EXTENDED_AGENT_CARD: &str = "GetExtendedAgentCard";

    /// v0.3 method names.
    pub mod v03 {
        /// `message/send`.
        pub const MESSAGE_SEND: &str = "message/send";
        /// `message/stream`.
        pub const MESSAGE_STREAM: &str = "message/stream";
        /// `tasks/get`.
        pub const TASKS_GET: &str = "tasks/get";
        /// `tasks/list` (not in v0.3 itself; some servers offer it).
        pub const TASKS_LIST: &str = "tasks/list";
        /// `tasks/cancel`.
        pub const TASKS_CANCEL: &str = "tasks/cancel";
        /// `tasks/resubscribe`.
        pub const TASKS_RESUBSCRIBE: &str = "tasks/resubscribe";
        /// `tasks/pushNotificationConfig/set`.
        pub const PUSH_CONFIG_SET: &str = "tasks/pushNotificationConfig/set";
        /// `tasks/pushNotificationConfig/get`.
        pub const PUSH_CONFIG_GET: &str = "tasks/pushNotificationConfig/get";
        /// `tasks/pushNotificationConfig/list`.
        pub const PUSH_CONFIG_LIST: &str = "tasks/pushNotificationConfig/list";
        /// `tasks/pushNotificationConfig/delete`.
        pub const PUSH_CONFIG_DELETE: &str = "tasks/pushNotificationConfig/delete";
        /// `agent/getAuthenticatedExtendedCard`.
        pub const GET_AUTHENTICATED_EXTENDED_CARD: &str = "agent/getAuthenticatedExtendedCard";
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcError {
    /// Error code.
    pub code: i32,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// Details (A2A v1.0: an array of `Any` objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A JSON-RPC request, as a client writes it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct JsonRpcRequest<'a, P> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// Request id.
    pub id: Value,
    /// Method name.
    pub method: &'a str,
    /// Parameters.
    pub params: P,
}

impl<'a, P> JsonRpcRequest<'a, P> {
    /// A request with the given id, method and params.
    pub fn new(id: impl Into<Value>, method: &'a str, params: P) -> Self {
        Self {
            jsonrpc: VERSION,
            id: id.into(),
            method,
            params,
        }
    }
}

/// A JSON-RPC response, as a client reads it.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct JsonRpcResponse<R> {
    /// Request id.
    #[serde(default)]
    pub id: Value,
    /// The result, on success.
    #[serde(default = "none")]
    pub result: Option<R>,
    /// The error, on failure.
    #[serde(default)]
    pub error: Option<JsonRpcError>,
}

fn none<R>() -> Option<R> {
    None
}

/// A successful JSON-RPC response, as a server writes it (borrowing the result).
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct JsonRpcSuccess<'a, R: Serialize> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// Request id, echoed.
    pub id: &'a Value,
    /// The result.
    pub result: R,
}

impl<'a, R: Serialize> JsonRpcSuccess<'a, R> {
    /// A success response for `id`.
    pub fn new(id: &'a Value, result: R) -> Self {
        Self {
            jsonrpc: VERSION,
            id,
            result,
        }
    }
}

/// A JSON-RPC error response, as a server writes it.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct JsonRpcFailure<'a> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// Request id, echoed (`null` when it could not be read).
    pub id: &'a Value,
    /// The error.
    pub error: JsonRpcError,
}

impl<'a> JsonRpcFailure<'a> {
    /// An error response for `id`.
    pub fn new(id: &'a Value, error: JsonRpcError) -> Self {
        Self {
            jsonrpc: VERSION,
            id,
            error,
        }
    }
}
