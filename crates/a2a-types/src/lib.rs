//! Wire model of the Agent2Agent (A2A) protocol.
//!
//! The root of this crate is A2A **v1.0** in ProtoJSON form (the normative shapes of
//! `a2a.proto`): camelCase field names out, camelCase or snake_case in; enums as their proto
//! names out, names or numbers in; `oneof`s keyed by member name; base64 `raw` bytes;
//! RFC 3339 UTC timestamps; unknown fields ignored. [`validate::Validate`] checks REQUIRED
//! fields with errors that name the field.
//!
//! [`v03`] holds the v0.3 JSON shapes and conversions both ways, for peers that still speak
//! it. [`error::A2aError`] is the binding-independent error model with its JSON-RPC, HTTP and
//! gRPC mappings. There is no I/O and no async code here.

mod card;
pub mod error;
mod event;
pub mod jcs;
pub mod jsonrpc;
mod message;
pub mod projection;
mod proto_enum;
mod push;
mod request;
mod serde_util;
mod task;
pub mod v03;
pub mod validate;
mod version;

pub use card::binding::Binding;
pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, HttpAuthSecurityScheme,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlow, OAuthFlows,
    OpenIdConnectSecurityScheme, SecurityRequirement, SecurityScheme, StringList, binding,
};
pub use error::{A2aError, ErrorCode, FieldViolation};
pub use event::{
    SendMessageResponse, StreamResponse, StreamResponseRef, TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
};
pub use message::{Message, Part, PartContent, Role, join_text};
pub use push::{AuthenticationInfo, TaskPushNotificationConfig, notification_body_digest};
pub use request::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfigRequest,
};
pub use serde_util::{format_timestamp, parse_timestamp};
pub use task::{Artifact, Task, TaskState, TaskStatus};
pub use version::ProtocolVersion;

/// The protocol version this crate implements, as sent in `A2A-Version`.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The legacy protocol version also understood.
pub const PROTOCOL_VERSION_V03: &str = "0.3";

/// The service-parameter (HTTP header) carrying the protocol version.
pub const VERSION_HEADER: &str = "A2A-Version";

/// The service-parameter (HTTP header) listing requested extensions.
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// The header of a push notification carrying the config's `token`.
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// The header of a push notification carrying the agent's signature: a JWT (ES256) whose
/// claims bind the request body (`request_body_sha256`, hex), the webhook (`aud`), the task
/// (`task_id`) and a time window (`iat`, `exp`), signed with the key the agent publishes in
/// its JWK Set (the header's `kid`, and `jku` when the agent knows its public address).
pub const NOTIFICATION_SIGNATURE_HEADER: &str = "X-A2A-Notification-Signature";

/// A new unique id, for messages, tasks, contexts and artifacts: a UUID v7, whose leading
/// bits are the creation time, so ids made one after another sort together. Stores index
/// tasks by id; time-ordered ids land on the same few index pages instead of a random page
/// each, which makes every commit of a durable store several times smaller.
///
/// Each thread orders its own ids (a counter per thread, seeded at random each millisecond):
/// `Uuid::now_v7` orders them across the whole process through one global mutex, which every
/// new task, context and message took, and whose cache line went from core to core on every
/// send. Ids made on different threads within one millisecond tell apart by their other 74
/// bits instead: a counter seeded at random each millisecond, then fresh random bits (73
/// random bits in all).
pub fn new_id() -> String {
    use uuid::timestamp::context::{ContextV7, ThreadLocalContext};
    thread_local! {
        static CONTEXT_V7: ContextV7 = const { ContextV7::new() };
    }
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let now = uuid::Timestamp::now(ThreadLocalContext::new(&CONTEXT_V7));
    uuid::Uuid::new_v7(now)
        .hyphenated()
        .encode_lower(&mut buf)
        .to_owned()
}
