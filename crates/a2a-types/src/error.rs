//! Protocol errors: the A2A error model and its JSON-RPC / HTTP / gRPC mappings.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::task::TaskState;

/// A JSON-RPC error code. A newtype rather than an enum, so codes from peers that this
/// crate does not know stay representable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// Not a valid JSON-RPC request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// Unknown method.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// Internal server error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// `TaskNotFoundError`.
    pub const TASK_NOT_FOUND: Self = Self(-32001);
    /// `TaskNotCancelableError`.
    pub const TASK_NOT_CANCELABLE: Self = Self(-32002);
    /// `PushNotificationNotSupportedError`.
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: Self = Self(-32003);
    /// `UnsupportedOperationError`.
    pub const UNSUPPORTED_OPERATION: Self = Self(-32004);
    /// `ContentTypeNotSupportedError`.
    pub const CONTENT_TYPE_NOT_SUPPORTED: Self = Self(-32005);
    /// `InvalidAgentResponseError`.
    pub const INVALID_AGENT_RESPONSE: Self = Self(-32006);
    /// `ExtendedAgentCardNotConfiguredError` (v0.3: `AuthenticatedExtendedCardNotConfiguredError`).
    pub const EXTENDED_AGENT_CARD_NOT_CONFIGURED: Self = Self(-32007);
    /// `ExtensionSupportRequiredError`.
    pub const EXTENSION_SUPPORT_REQUIRED: Self = Self(-32008);
    /// `VersionNotSupportedError`.
    pub const VERSION_NOT_SUPPORTED: Self = Self(-32009);
    /// A limit of the server was reached (streams per caller, say): retry later. Not an A2A
    /// error of the specification: an implementation-defined server error (JSON-RPC reserves
    /// -32000 to -32099 for them), carried as HTTP 429 and gRPC `RESOURCE_EXHAUSTED`.
    pub const RESOURCE_EXHAUSTED: Self = Self(-32090);
    /// The request carries no valid credentials for a scheme the agent card requires. An
    /// implementation-defined server error like [`Self::RESOURCE_EXHAUSTED`], carried as
    /// HTTP 401 (with `WWW-Authenticate`) and gRPC `UNAUTHENTICATED`.
    pub const UNAUTHENTICATED: Self = Self(-32091);
    /// The server cannot serve the request right now (its task store is unreachable, say)
    /// and nothing was done that a retry would repeat wrongly: retry later. An
    /// implementation-defined server error, carried as HTTP 503 and gRPC `UNAVAILABLE`.
    pub const UNAVAILABLE: Self = Self(-32092);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The domain of `google.rpc.ErrorInfo` details for A2A errors.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// One invalid field of a request (`google.rpc.BadRequest.FieldViolation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldViolation {
    /// Path of the field, for example `message.parts`.
    pub field: String,
    /// What is wrong.
    pub description: String,
}

impl FieldViolation {
    /// A violation of `field`.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            description: description.into(),
        }
    }
}

/// An A2A protocol error, independent of the binding that carries it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The body is not valid JSON.
    #[error("Invalid JSON payload: {detail}")]
    Parse {
        /// Parser message.
        detail: String,
    },
    /// The JSON is not a valid request object.
    #[error("Request payload validation error: {detail}")]
    InvalidRequest {
        /// What is wrong.
        detail: String,
    },
    /// Unknown method.
    #[error("Method not found: {method}")]
    MethodNotFound {
        /// The method asked for.
        method: String,
    },
    /// Invalid parameters.
    #[error("Invalid parameters: {detail}")]
    InvalidParams {
        /// Summary.
        detail: String,
        /// The fields at fault.
        violations: Vec<FieldViolation>,
    },
    /// Internal failure; the detail is safe to show (no internals).
    #[error("Internal error: {detail}")]
    Internal {
        /// Summary.
        detail: String,
    },
    /// No such task (or not visible to the caller).
    #[error("Task not found: {task_id}")]
    TaskNotFound {
        /// The id asked for.
        task_id: String,
    },
    /// The task cannot be canceled in its state.
    #[error("Task cannot be canceled: {task_id} is in state {state}")]
    TaskNotCancelable {
        /// The task.
        task_id: String,
        /// Its state.
        state: TaskState,
    },
    /// The agent does not support push notifications.
    #[error("Push notifications are not supported by this agent")]
    PushNotificationNotSupported,
    /// The operation (or this use of it) is not supported.
    #[error("Unsupported operation: {detail}")]
    UnsupportedOperation {
        /// What is not supported.
        detail: String,
    },
    /// A media type of the request is not supported.
    #[error("Content type not supported: {media_type}")]
    ContentTypeNotSupported {
        /// The media type.
        media_type: String,
    },
    /// The agent produced a response that breaks the protocol.
    #[error("Invalid agent response: {detail}")]
    InvalidAgentResponse {
        /// What was wrong.
        detail: String,
    },
    /// The extended card is declared but not configured.
    #[error("Extended agent card is not configured")]
    ExtendedAgentCardNotConfigured,
    /// A required extension was not requested by the client.
    #[error("Extension support required: {uri}")]
    ExtensionSupportRequired {
        /// The extension.
        uri: String,
    },
    /// The requested protocol version is not supported.
    #[error("Protocol version not supported: {version} (supported: 1.0, 0.3)")]
    VersionNotSupported {
        /// The version asked for.
        version: String,
    },
    /// A limit of the server was reached; the caller may retry later.
    #[error("Resource exhausted: {detail}")]
    ResourceExhausted {
        /// Which limit.
        detail: String,
    },
    /// The request's credentials are missing or not valid.
    #[error("Authentication required: {detail}")]
    Unauthenticated {
        /// What was wrong (never whether a task exists).
        detail: String,
    },
    /// The server cannot serve the request right now; the caller may retry later.
    #[error("Service unavailable: {detail}")]
    Unavailable {
        /// Why (never server internals).
        detail: String,
    },
    /// An error with a code this crate does not know (from a peer).
    #[error("Error {code}: {message}")]
    Other {
        /// The code.
        code: ErrorCode,
        /// The peer's message.
        message: String,
        /// The peer's data.
        data: Option<Value>,
    },
}

impl A2aError {
    /// Invalid params with one field violation.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        let v = FieldViolation::new(field, description);
        Self::InvalidParams {
            detail: format!("{}: {}", v.field, v.description),
            violations: vec![v],
        }
    }

    /// Invalid params without a known field.
    pub fn invalid_params(detail: impl Into<String>) -> Self {
        Self::InvalidParams {
            detail: detail.into(),
            violations: Vec::new(),
        }
    }

    /// Unsupported operation.
    pub fn unsupported(detail: impl Into<String>) -> Self {
        Self::UnsupportedOperation {
            detail: detail.into(),
        }
    }

    /// Internal error.
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::Internal {
            detail: detail.into(),
        }
    }

    /// Task not found.
    pub fn task_not_found(task_id: impl Into<String>) -> Self {
        Self::TaskNotFound {
            task_id: task_id.into(),
        }
    }

    /// The JSON-RPC code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Parse { .. } => ErrorCode::PARSE_ERROR,
            Self::InvalidRequest { .. } => ErrorCode::INVALID_REQUEST,
            Self::MethodNotFound { .. } => ErrorCode::METHOD_NOT_FOUND,
            Self::InvalidParams { .. } => ErrorCode::INVALID_PARAMS,
            Self::Internal { .. } => ErrorCode::INTERNAL_ERROR,
            Self::TaskNotFound { .. } => ErrorCode::TASK_NOT_FOUND,
            Self::TaskNotCancelable { .. } => ErrorCode::TASK_NOT_CANCELABLE,
            Self::PushNotificationNotSupported => ErrorCode::PUSH_NOTIFICATION_NOT_SUPPORTED,
            Self::UnsupportedOperation { .. } => ErrorCode::UNSUPPORTED_OPERATION,
            Self::ContentTypeNotSupported { .. } => ErrorCode::CONTENT_TYPE_NOT_SUPPORTED,
            Self::InvalidAgentResponse { .. } => ErrorCode::INVALID_AGENT_RESPONSE,
            Self::ExtendedAgentCardNotConfigured => ErrorCode::EXTENDED_AGENT_CARD_NOT_CONFIGURED,
            Self::ExtensionSupportRequired { .. } => ErrorCode::EXTENSION_SUPPORT_REQUIRED,
            Self::VersionNotSupported { .. } => ErrorCode::VERSION_NOT_SUPPORTED,
            Self::ResourceExhausted { .. } => ErrorCode::RESOURCE_EXHAUSTED,
            Self::Unauthenticated { .. } => ErrorCode::UNAUTHENTICATED,
            Self::Unavailable { .. } => ErrorCode::UNAVAILABLE,
            Self::Other { code, .. } => *code,
        }
    }

    /// The `ErrorInfo.reason` (A2A errors) or a name for the standard JSON-RPC errors.
    pub fn reason(&self) -> &'static str {
        match self.code() {
            ErrorCode::PARSE_ERROR => "PARSE_ERROR",
            ErrorCode::INVALID_REQUEST => "INVALID_REQUEST",
            ErrorCode::METHOD_NOT_FOUND => "METHOD_NOT_FOUND",
            ErrorCode::INVALID_PARAMS => "INVALID_PARAMS",
            ErrorCode::INTERNAL_ERROR => "INTERNAL_ERROR",
            ErrorCode::TASK_NOT_FOUND => "TASK_NOT_FOUND",
            ErrorCode::TASK_NOT_CANCELABLE => "TASK_NOT_CANCELABLE",
            ErrorCode::PUSH_NOTIFICATION_NOT_SUPPORTED => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ErrorCode::UNSUPPORTED_OPERATION => "UNSUPPORTED_OPERATION",
            ErrorCode::CONTENT_TYPE_NOT_SUPPORTED => "CONTENT_TYPE_NOT_SUPPORTED",
            ErrorCode::INVALID_AGENT_RESPONSE => "INVALID_AGENT_RESPONSE",
            ErrorCode::EXTENDED_AGENT_CARD_NOT_CONFIGURED => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ErrorCode::EXTENSION_SUPPORT_REQUIRED => "EXTENSION_SUPPORT_REQUIRED",
            ErrorCode::VERSION_NOT_SUPPORTED => "VERSION_NOT_SUPPORTED",
            ErrorCode::RESOURCE_EXHAUSTED => "RESOURCE_EXHAUSTED",
            ErrorCode::UNAUTHENTICATED => "UNAUTHENTICATED",
            ErrorCode::UNAVAILABLE => "UNAVAILABLE",
            _ => "UNKNOWN",
        }
    }

    /// The HTTP status of the HTTP+JSON binding.
    pub fn http_status(&self) -> u16 {
        match self.code() {
            ErrorCode::TASK_NOT_FOUND => 404,
            ErrorCode::INTERNAL_ERROR | ErrorCode::INVALID_AGENT_RESPONSE => 500,
            ErrorCode::METHOD_NOT_FOUND => 404,
            ErrorCode::RESOURCE_EXHAUSTED => 429,
            ErrorCode::UNAUTHENTICATED => 401,
            ErrorCode::UNAVAILABLE => 503,
            ErrorCode(c) if (-32099..=-32000).contains(&c) => 400,
            ErrorCode(c) if (-32700..=-32600).contains(&c) => 400,
            _ => 500,
        }
    }

    /// The gRPC status name.
    pub fn grpc_status(&self) -> &'static str {
        match self.code() {
            ErrorCode::TASK_NOT_FOUND => "NOT_FOUND",
            ErrorCode::CONTENT_TYPE_NOT_SUPPORTED
            | ErrorCode::INVALID_PARAMS
            | ErrorCode::INVALID_REQUEST
            | ErrorCode::PARSE_ERROR => "INVALID_ARGUMENT",
            ErrorCode::METHOD_NOT_FOUND => "UNIMPLEMENTED",
            ErrorCode::INTERNAL_ERROR | ErrorCode::INVALID_AGENT_RESPONSE => "INTERNAL",
            ErrorCode::RESOURCE_EXHAUSTED => "RESOURCE_EXHAUSTED",
            ErrorCode::UNAUTHENTICATED => "UNAUTHENTICATED",
            ErrorCode::UNAVAILABLE => "UNAVAILABLE",
            ErrorCode(c) if (-32099..=-32000).contains(&c) => "FAILED_PRECONDITION",
            _ => "UNKNOWN",
        }
    }

    /// Metadata for the `ErrorInfo` detail.
    fn info_metadata(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match self {
            Self::TaskNotFound { task_id } => {
                m.insert("taskId".into(), task_id.clone().into());
            }
            Self::TaskNotCancelable { task_id, state } => {
                m.insert("taskId".into(), task_id.clone().into());
                m.insert("state".into(), state.as_str().into());
            }
            Self::MethodNotFound { method } => {
                m.insert("method".into(), method.clone().into());
            }
            Self::ContentTypeNotSupported { media_type } => {
                m.insert("mediaType".into(), media_type.clone().into());
            }
            Self::ExtensionSupportRequired { uri } => {
                m.insert("extension".into(), uri.clone().into());
            }
            Self::VersionNotSupported { version } => {
                m.insert("version".into(), version.clone().into());
                m.insert("supportedVersions".into(), "1.0,0.3".into());
            }
            _ => {}
        }
        m
    }

    /// The error details: an `ErrorInfo` (and `BadRequest` for validation errors), as
    /// ProtoJSON `Any` objects.
    pub fn details(&self) -> Vec<Value> {
        if let Self::Other { data, .. } = self {
            return match data {
                Some(Value::Array(a)) => a.clone(),
                Some(v) => vec![v.clone()],
                None => Vec::new(),
            };
        }
        let mut out = vec![json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason(),
            "domain": ERROR_DOMAIN,
            "metadata": self.info_metadata(),
        })];
        if let Self::InvalidParams { violations, .. } = self
            && !violations.is_empty()
        {
            out.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": violations,
            }));
        }
        out
    }

    /// The message to put on the wire.
    pub fn message(&self) -> String {
        match self {
            Self::Other { message, .. } => message.clone(),
            _ => self.to_string(),
        }
    }

    /// This error as a JSON-RPC error object.
    pub fn to_jsonrpc(&self) -> crate::jsonrpc::JsonRpcError {
        crate::jsonrpc::JsonRpcError {
            code: self.code().0,
            message: self.message(),
            data: Some(Value::Array(self.details())),
        }
    }

    /// This error as a REST `google.rpc.Status` body.
    pub fn to_rest_body(&self) -> Value {
        json!({
            "error": {
                "code": self.http_status(),
                "status": self.grpc_status(),
                "message": self.message(),
                "details": self.details(),
            }
        })
    }

    /// Rebuilds a typed error from an HTTP+JSON error body (`google.rpc.Status`): the
    /// `ErrorInfo` reason says which A2A error it is. `None` when the body carries no A2A
    /// reason this crate knows.
    pub fn from_rest_body(body: &Value) -> Option<Self> {
        let error = body.get("error")?;
        let info = error.get("details")?.as_array()?.iter().find(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
        })?;
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Self::from_error_info(
            info.get("reason").and_then(Value::as_str)?,
            message,
            info.get("metadata").and_then(Value::as_object),
        )
    }

    /// Rebuilds a typed error from the parts of a `google.rpc.ErrorInfo` as any binding
    /// carries them (a REST body's detail, a gRPC status detail): its `reason`, the error's
    /// message and the info's metadata. `None` for a reason this crate does not know.
    pub fn from_error_info(
        reason: &str,
        message: &str,
        metadata: Option<&Map<String, Value>>,
    ) -> Option<Self> {
        let code = [
            ErrorCode::PARSE_ERROR,
            ErrorCode::INVALID_REQUEST,
            ErrorCode::METHOD_NOT_FOUND,
            ErrorCode::INVALID_PARAMS,
            ErrorCode::INTERNAL_ERROR,
            ErrorCode::TASK_NOT_FOUND,
            ErrorCode::TASK_NOT_CANCELABLE,
            ErrorCode::PUSH_NOTIFICATION_NOT_SUPPORTED,
            ErrorCode::UNSUPPORTED_OPERATION,
            ErrorCode::CONTENT_TYPE_NOT_SUPPORTED,
            ErrorCode::INVALID_AGENT_RESPONSE,
            ErrorCode::EXTENDED_AGENT_CARD_NOT_CONFIGURED,
            ErrorCode::EXTENSION_SUPPORT_REQUIRED,
            ErrorCode::VERSION_NOT_SUPPORTED,
            ErrorCode::RESOURCE_EXHAUSTED,
            ErrorCode::UNAUTHENTICATED,
            ErrorCode::UNAVAILABLE,
        ]
        .into_iter()
        .find(|c| {
            Self::Other {
                code: *c,
                message: String::new(),
                data: None,
            }
            .reason()
                == reason
        })?;
        let info = json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": ERROR_DOMAIN,
            "metadata": metadata.cloned().unwrap_or_default(),
        });
        Some(Self::from_jsonrpc(crate::jsonrpc::JsonRpcError {
            code: code.0,
            message: message.to_owned(),
            data: Some(Value::Array(vec![info])),
        }))
    }

    /// Rebuilds a typed error from a JSON-RPC error object received from a peer.
    pub fn from_jsonrpc(err: crate::jsonrpc::JsonRpcError) -> Self {
        let crate::jsonrpc::JsonRpcError {
            code,
            message,
            data,
        } = err;
        let meta = |key: &str| -> Option<String> {
            let infos = match &data {
                Some(Value::Array(a)) => a.iter().collect::<Vec<_>>(),
                Some(v) => vec![v],
                None => Vec::new(),
            };
            infos.iter().find_map(|i| {
                i.get("metadata")
                    .and_then(|m| m.get(key))
                    .and_then(Value::as_str)
                    .map(String::from)
            })
        };
        match ErrorCode(code) {
            ErrorCode::TASK_NOT_FOUND => Self::TaskNotFound {
                task_id: meta("taskId").unwrap_or_default(),
            },
            ErrorCode::TASK_NOT_CANCELABLE => Self::TaskNotCancelable {
                task_id: meta("taskId").unwrap_or_default(),
                state: meta("state")
                    .and_then(|s| TaskState::from_name(&s))
                    .unwrap_or_default(),
            },
            ErrorCode::PUSH_NOTIFICATION_NOT_SUPPORTED => Self::PushNotificationNotSupported,
            ErrorCode::UNSUPPORTED_OPERATION => Self::UnsupportedOperation { detail: message },
            ErrorCode::CONTENT_TYPE_NOT_SUPPORTED => Self::ContentTypeNotSupported {
                media_type: meta("mediaType").unwrap_or(message),
            },
            ErrorCode::INVALID_AGENT_RESPONSE => Self::InvalidAgentResponse { detail: message },
            ErrorCode::RESOURCE_EXHAUSTED => Self::ResourceExhausted { detail: message },
            ErrorCode::UNAUTHENTICATED => Self::Unauthenticated { detail: message },
            ErrorCode::UNAVAILABLE => Self::Unavailable { detail: message },
            ErrorCode::EXTENDED_AGENT_CARD_NOT_CONFIGURED => Self::ExtendedAgentCardNotConfigured,
            ErrorCode::VERSION_NOT_SUPPORTED => Self::VersionNotSupported {
                version: meta("version").unwrap_or_default(),
            },
            ErrorCode::INVALID_PARAMS => Self::InvalidParams {
                detail: message,
                violations: Vec::new(),
            },
            ErrorCode::METHOD_NOT_FOUND => Self::MethodNotFound {
                method: meta("method").unwrap_or(message),
            },
            code => Self::Other {
                code,
                message,
                data,
            },
        }
    }
}
