//! Conversions between the v0.3 shapes and the v1.0 model.

use serde_json::{Map, Value};

use super::{
    Artifact, ArtifactUpdateKind, FileContent, Message, MessageKind, MessageSendConfiguration,
    MessageSendParams, Part, PushNotificationAuthenticationInfo, PushNotificationConfig, Role,
    StatusUpdateKind, StreamEvent, Task, TaskArtifactUpdateEvent, TaskKind, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use crate as v1;
use crate::error::A2aError;
use crate::serde_util::base64_bytes;
use crate::{
    AuthenticationInfo, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, StreamResponseRef, TaskPushNotificationConfig,
};

/// v1.0 state to v0.3 state.
pub fn state_to_v03(s: v1::TaskState) -> TaskState {
    match s {
        v1::TaskState::Submitted => TaskState::Submitted,
        v1::TaskState::Working => TaskState::Working,
        v1::TaskState::Completed => TaskState::Completed,
        v1::TaskState::Failed => TaskState::Failed,
        v1::TaskState::Canceled => TaskState::Canceled,
        v1::TaskState::InputRequired => TaskState::InputRequired,
        v1::TaskState::Rejected => TaskState::Rejected,
        v1::TaskState::AuthRequired => TaskState::AuthRequired,
        _ => TaskState::Unknown,
    }
}

/// v0.3 state to v1.0 state.
pub fn state_from_v03(s: TaskState) -> v1::TaskState {
    match s {
        TaskState::Submitted => v1::TaskState::Submitted,
        TaskState::Working => v1::TaskState::Working,
        TaskState::Completed => v1::TaskState::Completed,
        TaskState::Failed => v1::TaskState::Failed,
        TaskState::Canceled => v1::TaskState::Canceled,
        TaskState::InputRequired => v1::TaskState::InputRequired,
        TaskState::Rejected => v1::TaskState::Rejected,
        TaskState::AuthRequired => v1::TaskState::AuthRequired,
        TaskState::Unknown => v1::TaskState::Unspecified,
    }
}

fn non_empty(v: Vec<String>) -> Option<Vec<String>> {
    if v.is_empty() { None } else { Some(v) }
}

// ---- parts ----

impl From<&v1::Part> for Part {
    fn from(p: &v1::Part) -> Self {
        let metadata = p.metadata.clone();
        match &p.content {
            v1::PartContent::Text(t) => Part::Text {
                text: t.clone(),
                metadata,
            },
            v1::PartContent::Raw(b) => Part::File {
                file: FileContent {
                    bytes: Some(base64_bytes::encode(b)),
                    uri: None,
                    mime_type: p.media_type.clone(),
                    name: p.filename.clone(),
                },
                metadata,
            },
            v1::PartContent::Url(u) => Part::File {
                file: FileContent {
                    bytes: None,
                    uri: Some(u.clone()),
                    mime_type: p.media_type.clone(),
                    name: p.filename.clone(),
                },
                metadata,
            },
            v1::PartContent::Data(d) => {
                // v0.3 data parts must be objects; wrap anything else.
                let data = if d.is_object() {
                    d.clone()
                } else {
                    let mut m = Map::new();
                    m.insert("value".into(), d.clone());
                    Value::Object(m)
                };
                Part::Data { data, metadata }
            }
        }
    }
}

impl TryFrom<Part> for v1::Part {
    type Error = A2aError;

    fn try_from(p: Part) -> Result<Self, A2aError> {
        Ok(match p {
            Part::Text { text, metadata } => {
                let mut out = v1::Part::text(text);
                out.metadata = metadata;
                out
            }
            Part::File { file, metadata } => {
                let content = match (file.bytes, file.uri) {
                    (Some(b), _) => {
                        v1::PartContent::Raw(base64_bytes::decode(&b).ok_or_else(|| {
                            A2aError::invalid_field("file.bytes", "is not valid base64")
                        })?)
                    }
                    (None, Some(u)) => v1::PartContent::Url(u),
                    (None, None) => {
                        return Err(A2aError::invalid_field("file", "needs bytes or uri"));
                    }
                };
                let mut out = v1::Part::new(content);
                out.metadata = metadata;
                out.media_type = file.mime_type;
                out.filename = file.name;
                out
            }
            Part::Data { data, metadata } => {
                let mut out = v1::Part::data(data);
                out.metadata = metadata;
                out.media_type = Some("application/json".into());
                out
            }
        })
    }
}

fn parts_from_v03(parts: Vec<Part>) -> Result<Vec<v1::Part>, A2aError> {
    parts.into_iter().map(v1::Part::try_from).collect()
}

// ---- messages ----

impl From<&v1::Message> for Message {
    fn from(m: &v1::Message) -> Self {
        Message {
            kind: MessageKind,
            message_id: m.message_id.clone(),
            context_id: m.context_id.clone(),
            task_id: m.task_id.clone(),
            role: match m.role {
                v1::Role::Agent => Role::Agent,
                _ => Role::User,
            },
            parts: m.parts.iter().map(Part::from).collect(),
            metadata: m.metadata.clone(),
            extensions: non_empty(m.extensions.clone()),
            reference_task_ids: non_empty(m.reference_task_ids.clone()),
        }
    }
}

impl TryFrom<Message> for v1::Message {
    type Error = A2aError;

    fn try_from(m: Message) -> Result<Self, A2aError> {
        Ok(v1::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: match m.role {
                Role::Agent => v1::Role::Agent,
                Role::User => v1::Role::User,
            },
            parts: parts_from_v03(m.parts)?,
            metadata: m.metadata,
            extensions: m.extensions.unwrap_or_default(),
            reference_task_ids: m.reference_task_ids.unwrap_or_default(),
        })
    }
}

// ---- tasks ----

impl From<&v1::TaskStatus> for TaskStatus {
    fn from(s: &v1::TaskStatus) -> Self {
        TaskStatus {
            state: state_to_v03(s.state),
            message: s.message.as_ref().map(Message::from),
            timestamp: s.timestamp,
        }
    }
}

impl TryFrom<TaskStatus> for v1::TaskStatus {
    type Error = A2aError;

    fn try_from(s: TaskStatus) -> Result<Self, A2aError> {
        Ok(v1::TaskStatus {
            state: state_from_v03(s.state),
            message: s.message.map(v1::Message::try_from).transpose()?,
            timestamp: s.timestamp,
        })
    }
}

impl From<&v1::Artifact> for Artifact {
    fn from(a: &v1::Artifact) -> Self {
        Artifact {
            artifact_id: a.artifact_id.clone(),
            name: a.name.clone(),
            description: a.description.clone(),
            parts: a.parts.iter().map(Part::from).collect(),
            metadata: a.metadata.clone(),
            extensions: non_empty(a.extensions.clone()),
        }
    }
}

impl TryFrom<Artifact> for v1::Artifact {
    type Error = A2aError;

    fn try_from(a: Artifact) -> Result<Self, A2aError> {
        let mut out = v1::Artifact::new(a.artifact_id, parts_from_v03(a.parts)?);
        out.name = a.name;
        out.description = a.description;
        out.metadata = a.metadata;
        out.extensions = a.extensions.unwrap_or_default();
        Ok(out)
    }
}

impl From<&v1::Task> for Task {
    fn from(t: &v1::Task) -> Self {
        Task {
            kind: TaskKind,
            id: t.id.clone(),
            context_id: t.context_id.clone(),
            status: TaskStatus::from(&t.status),
            artifacts: if t.artifacts.is_empty() {
                None
            } else {
                Some(t.artifacts.iter().map(Artifact::from).collect())
            },
            history: if t.history.is_empty() {
                None
            } else {
                Some(t.history.iter().map(Message::from).collect())
            },
            metadata: t.metadata.clone(),
        }
    }
}

impl TryFrom<Task> for v1::Task {
    type Error = A2aError;

    fn try_from(t: Task) -> Result<Self, A2aError> {
        Ok(v1::Task {
            id: t.id,
            context_id: t.context_id,
            status: v1::TaskStatus::try_from(t.status)?,
            artifacts: t
                .artifacts
                .unwrap_or_default()
                .into_iter()
                .map(v1::Artifact::try_from)
                .collect::<Result<_, _>>()?,
            history: t
                .history
                .unwrap_or_default()
                .into_iter()
                .map(v1::Message::try_from)
                .collect::<Result<_, _>>()?,
            metadata: t.metadata,
        })
    }
}

// ---- events ----

impl TaskStatusUpdateEvent {
    /// Converts a v1.0 status update; `is_final` marks the last event of the stream.
    pub fn from_v1(e: &v1::TaskStatusUpdateEvent, is_final: bool) -> Self {
        TaskStatusUpdateEvent {
            kind: StatusUpdateKind,
            task_id: e.task_id.clone(),
            context_id: e.context_id.clone(),
            status: TaskStatus::from(&e.status),
            is_final,
            metadata: e.metadata.clone(),
        }
    }
}

impl From<&v1::TaskArtifactUpdateEvent> for TaskArtifactUpdateEvent {
    fn from(e: &v1::TaskArtifactUpdateEvent) -> Self {
        TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: e.task_id.clone(),
            context_id: e.context_id.clone(),
            artifact: Artifact::from(&e.artifact),
            append: e.append.then_some(true),
            last_chunk: e.last_chunk.then_some(true),
            metadata: e.metadata.clone(),
        }
    }
}

impl StreamEvent {
    /// Converts a v1.0 stream event; `is_final` sets `final` on status updates.
    pub fn from_v1(e: StreamResponseRef<'_>, is_final: bool) -> Self {
        match e {
            StreamResponseRef::Task(t) => StreamEvent::Task(Task::from(t)),
            StreamResponseRef::Message(m) => StreamEvent::Message(Message::from(m)),
            StreamResponseRef::StatusUpdate(s) => {
                StreamEvent::StatusUpdate(TaskStatusUpdateEvent::from_v1(s, is_final))
            }
            StreamResponseRef::ArtifactUpdate(a) => {
                StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent::from(a))
            }
        }
    }

    /// Converts to a v1.0 stream event, returning the v0.3 `final` flag alongside.
    pub fn into_v1(self) -> Result<(StreamResponse, bool), A2aError> {
        Ok(match self {
            StreamEvent::Task(t) => (StreamResponse::Task(v1::Task::try_from(t)?), false),
            StreamEvent::Message(m) => (StreamResponse::Message(v1::Message::try_from(m)?), true),
            StreamEvent::StatusUpdate(s) => {
                let fin = s.is_final;
                let e = v1::TaskStatusUpdateEvent {
                    task_id: s.task_id,
                    context_id: s.context_id,
                    status: v1::TaskStatus::try_from(s.status)?,
                    metadata: s.metadata,
                };
                (StreamResponse::StatusUpdate(e), fin)
            }
            StreamEvent::ArtifactUpdate(a) => {
                let e = v1::TaskArtifactUpdateEvent {
                    task_id: a.task_id,
                    context_id: a.context_id,
                    artifact: v1::Artifact::try_from(a.artifact)?,
                    append: a.append.unwrap_or(false),
                    last_chunk: a.last_chunk.unwrap_or(false),
                    metadata: a.metadata,
                };
                (StreamResponse::ArtifactUpdate(e), false)
            }
        })
    }
}

impl From<&SendMessageResponse> for super::SendMessageResult {
    fn from(r: &SendMessageResponse) -> Self {
        match r {
            SendMessageResponse::Task(t) => super::SendMessageResult::Task(Task::from(t)),
            SendMessageResponse::Message(m) => super::SendMessageResult::Message(Message::from(m)),
        }
    }
}

impl TryFrom<super::SendMessageResult> for SendMessageResponse {
    type Error = A2aError;

    fn try_from(r: super::SendMessageResult) -> Result<Self, A2aError> {
        Ok(match r {
            super::SendMessageResult::Task(t) => SendMessageResponse::Task(v1::Task::try_from(t)?),
            super::SendMessageResult::Message(m) => {
                SendMessageResponse::Message(v1::Message::try_from(m)?)
            }
        })
    }
}

// ---- push configs ----

impl From<&TaskPushNotificationConfig> for PushNotificationConfig {
    fn from(c: &TaskPushNotificationConfig) -> Self {
        PushNotificationConfig {
            id: c.id.clone(),
            url: c.url.clone(),
            token: c.token.clone(),
            authentication: c
                .authentication
                .as_ref()
                .map(|a| PushNotificationAuthenticationInfo {
                    schemes: vec![a.scheme.clone()],
                    credentials: a.credentials.clone(),
                }),
        }
    }
}

impl From<PushNotificationConfig> for TaskPushNotificationConfig {
    fn from(c: PushNotificationConfig) -> Self {
        TaskPushNotificationConfig {
            tenant: None,
            id: c.id,
            task_id: None,
            url: c.url,
            token: c.token,
            authentication: c.authentication.map(|a| AuthenticationInfo {
                scheme: a.schemes.into_iter().next().unwrap_or_default(),
                credentials: a.credentials,
            }),
        }
    }
}

impl From<&TaskPushNotificationConfig> for super::TaskPushNotificationConfig {
    fn from(c: &TaskPushNotificationConfig) -> Self {
        super::TaskPushNotificationConfig {
            task_id: c.task_id.clone().unwrap_or_default(),
            push_notification_config: PushNotificationConfig::from(c),
        }
    }
}

impl From<super::TaskPushNotificationConfig> for TaskPushNotificationConfig {
    fn from(c: super::TaskPushNotificationConfig) -> Self {
        let mut config = TaskPushNotificationConfig::from(c.push_notification_config);
        config.task_id = Some(c.task_id);
        config
    }
}

// ---- requests ----

impl TryFrom<MessageSendParams> for SendMessageRequest {
    type Error = A2aError;

    fn try_from(p: MessageSendParams) -> Result<Self, A2aError> {
        let mut req = SendMessageRequest::new(v1::Message::try_from(p.message)?);
        req.metadata = p.metadata;
        if let Some(c) = p.configuration {
            req.configuration = Some(SendMessageConfiguration {
                accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
                history_length: c.history_length,
                // v0.3 blocks unless `blocking: false`.
                return_immediately: c.blocking == Some(false),
                task_push_notification_config: c
                    .push_notification_config
                    .map(TaskPushNotificationConfig::from),
            });
        }
        Ok(req)
    }
}

impl From<&SendMessageRequest> for MessageSendParams {
    fn from(r: &SendMessageRequest) -> Self {
        MessageSendParams {
            message: Message::from(&r.message),
            configuration: r.configuration.as_ref().map(|c| MessageSendConfiguration {
                accepted_output_modes: non_empty(c.accepted_output_modes.clone()),
                history_length: c.history_length,
                push_notification_config: c
                    .task_push_notification_config
                    .as_ref()
                    .map(PushNotificationConfig::from),
                blocking: Some(!c.return_immediately),
            }),
            metadata: r.metadata.clone(),
        }
    }
}
