//! [`Transport`]: how requests reach an agent, one implementation per binding and protocol
//! version. [`A2aClient`](crate::A2aClient) speaks v1.0 types to a transport and adds what
//! does not depend on the wire (tenants, outcomes, stream resumption); the transport encodes,
//! sends and decodes.
//!
//! Implemented: JSON-RPC 2.0 in v1.0 ([`JsonRpcV1`]) and v0.3 ([`JsonRpcV03`]),
//! HTTP+JSON in v1.0 ([`RestV1`]), and gRPC in v1.0 ([`GrpcV1`], the `grpc` feature).

#[cfg(feature = "grpc")]
mod grpc;
#[cfg(feature = "grpc")]
mod grpc_unary;
#[cfg(feature = "grpc")]
mod h2_channel;
mod jsonrpc;
mod rest;

use std::pin::Pin;

use a2a_types::{
    AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    ProtocolVersion, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task,
};
use futures::Stream;

#[cfg(feature = "grpc")]
pub use grpc::GrpcV1;
pub use jsonrpc::{JsonRpcV1, JsonRpcV03};
pub use rest::RestV1;

use crate::error::ClientError;

/// One event as a transport decoded it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WireEvent {
    /// The event id the server gave it (its log position), for resuming.
    pub id: Option<String>,
    /// The event, in v1.0 types.
    pub response: StreamResponse,
    /// The binding itself marked the event as the last one (v0.3's `final`).
    pub marked_final: bool,
}

impl WireEvent {
    /// An event.
    pub fn new(id: Option<String>, response: StreamResponse, marked_final: bool) -> Self {
        Self {
            id,
            response,
            marked_final,
        }
    }
}

/// The events of one streaming call, as they arrive. A connection that fails yields a
/// [`ClientError::Http`] (the client then resumes the stream); any other error ends it.
pub type EventSource = Pin<Box<dyn Stream<Item = Result<WireEvent, ClientError>> + Send>>;

/// One binding of one protocol version. Requests and answers are v1.0 types whatever the
/// wire speaks; an operation the wire does not have answers [`ClientError::Unsupported`].
#[async_trait::async_trait]
pub trait Transport: Send + Sync + std::fmt::Debug + 'static {
    /// The protocol version spoken.
    fn protocol_version(&self) -> ProtocolVersion;

    /// The binding's name as cards write it (`JSONRPC`, `HTTP+JSON`, …).
    fn binding(&self) -> &'static str;

    /// Where requests go.
    fn endpoint(&self) -> &str;

    /// `SendMessage`.
    async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError>;

    /// `SendStreamingMessage`.
    async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventSource, ClientError>;

    /// `GetTask`.
    async fn get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError>;

    /// `ListTasks`.
    async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, ClientError>;

    /// `CancelTask`.
    async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, ClientError>;

    /// `SubscribeToTask`, resuming after `last_event_id` where the wire can.
    async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError>;

    /// `GetExtendedAgentCard`.
    async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError>;

    /// `CreateTaskPushNotificationConfig` (its `taskId` set).
    async fn create_push_config(
        &self,
        config: a2a_types::TaskPushNotificationConfig,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let _ = config;
        Err(no_push_configs(self.binding()))
    }

    /// `GetTaskPushNotificationConfig`.
    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let _ = (task_id, id);
        Err(no_push_configs(self.binding()))
    }

    /// `ListTaskPushNotificationConfigs`.
    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, ClientError> {
        let _ = task_id;
        Err(no_push_configs(self.binding()))
    }

    /// `DeleteTaskPushNotificationConfig`.
    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let _ = (task_id, id);
        Err(no_push_configs(self.binding()))
    }
}

fn no_push_configs(binding: &str) -> ClientError {
    ClientError::Unsupported(format!(
        "push notification configs are not available through this client's {binding} transport"
    ))
}
