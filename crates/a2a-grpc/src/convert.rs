//! Conversions between the generated protobuf types ([`pb`]) and the ProtoJSON types of
//! [`a2a_types`], both ways. They move strings and vectors rather than copying them.
//!
//! Protobuf has no "absent" for scalar strings: an empty string becomes `None` on the way
//! in, and `None` an empty string on the way out. Enums arrive as numbers; a number this
//! crate does not know becomes the `UNSPECIFIED` value, which validation then refuses.

use std::collections::BTreeMap;

use a2a_types as t;
use chrono::{DateTime, Utc};
use prost_types::value::Kind;
use serde_json::{Map, Value};

use crate::pb;

fn opt(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn or_empty(s: Option<String>) -> String {
    s.unwrap_or_default()
}

/// A JSON value as a `google.protobuf.Value`.
pub fn value_to_pb(v: Value) -> prost_types::Value {
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.into_iter().map(value_to_pb).collect(),
        }),
        Value::Object(o) => Kind::StructValue(struct_to_pb(o)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A `google.protobuf.Value` as JSON. Whole numbers come back as integers (protobuf
/// carries every number as a double).
pub fn value_from_pb(v: prost_types::Value) -> Value {
    match v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::NumberValue(n)) => {
            if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
            }
        }
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.into_iter().map(value_from_pb).collect()),
        Some(Kind::StructValue(s)) => Value::Object(struct_from_pb(s)),
    }
}

/// A JSON object as a `google.protobuf.Struct`.
pub fn struct_to_pb(m: Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: m.into_iter().map(|(k, v)| (k, value_to_pb(v))).collect(),
    }
}

/// A `google.protobuf.Struct` as a JSON object.
pub fn struct_from_pb(s: prost_types::Struct) -> Map<String, Value> {
    s.fields
        .into_iter()
        .map(|(k, v)| (k, value_from_pb(v)))
        .collect()
}

fn meta_to_pb(m: Option<Map<String, Value>>) -> Option<prost_types::Struct> {
    m.map(struct_to_pb)
}

fn meta_from_pb(s: Option<prost_types::Struct>) -> Option<Map<String, Value>> {
    s.map(struct_from_pb)
}

/// A time as a `google.protobuf.Timestamp`.
pub fn timestamp_to_pb(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

/// A `google.protobuf.Timestamp` as a time (`None` when out of range).
pub fn timestamp_from_pb(t: prost_types::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).ok()?)
}

fn state_from_pb(n: i32) -> t::TaskState {
    t::TaskState::from_number(i64::from(n)).unwrap_or_default()
}

// ---- messages and parts ----

impl From<t::Part> for pb::Part {
    fn from(p: t::Part) -> Self {
        use pb::part::Content;
        // A kind of content added to a2a-types later has no field here: left unset.
        let content = match p.content {
            t::PartContent::Text(s) => Some(Content::Text(s)),
            t::PartContent::Raw(b) => Some(Content::Raw(b)),
            t::PartContent::Url(u) => Some(Content::Url(u)),
            t::PartContent::Data(d) => Some(Content::Data(value_to_pb(d))),
            _ => None,
        };
        Self {
            metadata: meta_to_pb(p.metadata),
            filename: or_empty(p.filename),
            media_type: or_empty(p.media_type),
            content,
        }
    }
}

impl From<pb::Part> for t::Part {
    fn from(p: pb::Part) -> Self {
        use pb::part::Content;
        let content = match p.content {
            Some(Content::Text(s)) => t::PartContent::Text(s),
            Some(Content::Raw(b)) => t::PartContent::Raw(b),
            Some(Content::Url(u)) => t::PartContent::Url(u),
            Some(Content::Data(d)) => t::PartContent::Data(value_from_pb(d)),
            None => t::PartContent::Text(String::new()),
        };
        let mut part = t::Part::new(content);
        part.metadata = meta_from_pb(p.metadata);
        part.filename = opt(p.filename);
        part.media_type = opt(p.media_type);
        part
    }
}

impl From<t::Message> for pb::Message {
    fn from(m: t::Message) -> Self {
        Self {
            message_id: m.message_id,
            context_id: or_empty(m.context_id),
            task_id: or_empty(m.task_id),
            role: m.role.number(),
            parts: m.parts.into_iter().map(Into::into).collect(),
            metadata: meta_to_pb(m.metadata),
            extensions: m.extensions,
            reference_task_ids: m.reference_task_ids,
        }
    }
}

impl From<pb::Message> for t::Message {
    fn from(m: pb::Message) -> Self {
        let mut out = t::Message::default();
        out.message_id = m.message_id;
        out.context_id = opt(m.context_id);
        out.task_id = opt(m.task_id);
        out.role = t::Role::from_number(i64::from(m.role)).unwrap_or_default();
        out.parts = m.parts.into_iter().map(Into::into).collect();
        out.metadata = meta_from_pb(m.metadata);
        out.extensions = m.extensions;
        out.reference_task_ids = m.reference_task_ids;
        out
    }
}

// ---- tasks ----

impl From<t::TaskStatus> for pb::TaskStatus {
    fn from(s: t::TaskStatus) -> Self {
        Self {
            state: s.state.number(),
            message: s.message.map(Into::into),
            timestamp: s.timestamp.map(timestamp_to_pb),
        }
    }
}

impl From<pb::TaskStatus> for t::TaskStatus {
    fn from(s: pb::TaskStatus) -> Self {
        let mut out = t::TaskStatus::default();
        out.state = state_from_pb(s.state);
        out.message = s.message.map(Into::into);
        out.timestamp = s.timestamp.and_then(timestamp_from_pb);
        out
    }
}

impl From<t::Artifact> for pb::Artifact {
    fn from(a: t::Artifact) -> Self {
        Self {
            artifact_id: a.artifact_id,
            name: or_empty(a.name),
            description: or_empty(a.description),
            parts: a.parts.into_iter().map(Into::into).collect(),
            metadata: meta_to_pb(a.metadata),
            extensions: a.extensions,
        }
    }
}

impl From<pb::Artifact> for t::Artifact {
    fn from(a: pb::Artifact) -> Self {
        let mut out = t::Artifact::default();
        out.artifact_id = a.artifact_id;
        out.name = opt(a.name);
        out.description = opt(a.description);
        out.parts = a.parts.into_iter().map(Into::into).collect();
        out.metadata = meta_from_pb(a.metadata);
        out.extensions = a.extensions;
        out
    }
}

impl From<t::Task> for pb::Task {
    fn from(task: t::Task) -> Self {
        Self {
            id: task.id,
            context_id: task.context_id,
            status: Some(task.status.into()),
            artifacts: task.artifacts.into_iter().map(Into::into).collect(),
            history: task.history.into_iter().map(Into::into).collect(),
            metadata: meta_to_pb(task.metadata),
        }
    }
}

impl From<pb::Task> for t::Task {
    fn from(task: pb::Task) -> Self {
        let mut out = t::Task::default();
        out.id = task.id;
        out.context_id = task.context_id;
        out.status = task.status.map(Into::into).unwrap_or_default();
        out.artifacts = task.artifacts.into_iter().map(Into::into).collect();
        out.history = task.history.into_iter().map(Into::into).collect();
        out.metadata = meta_from_pb(task.metadata);
        out
    }
}

// ---- events and responses ----

impl From<t::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(e: t::TaskStatusUpdateEvent) -> Self {
        Self {
            task_id: e.task_id,
            context_id: e.context_id,
            status: Some(e.status.into()),
            metadata: meta_to_pb(e.metadata),
        }
    }
}

impl From<pb::TaskStatusUpdateEvent> for t::TaskStatusUpdateEvent {
    fn from(e: pb::TaskStatusUpdateEvent) -> Self {
        let mut out = t::TaskStatusUpdateEvent::new(
            e.task_id,
            e.context_id,
            e.status.map(Into::into).unwrap_or_default(),
        );
        out.metadata = meta_from_pb(e.metadata);
        out
    }
}

impl From<t::TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    fn from(e: t::TaskArtifactUpdateEvent) -> Self {
        Self {
            task_id: e.task_id,
            context_id: e.context_id,
            artifact: Some(e.artifact.into()),
            append: e.append,
            last_chunk: e.last_chunk,
            metadata: meta_to_pb(e.metadata),
        }
    }
}

impl From<pb::TaskArtifactUpdateEvent> for t::TaskArtifactUpdateEvent {
    fn from(e: pb::TaskArtifactUpdateEvent) -> Self {
        let mut out = t::TaskArtifactUpdateEvent::new(
            e.task_id,
            e.context_id,
            e.artifact.map(Into::into).unwrap_or_default(),
            e.append,
            e.last_chunk,
        );
        out.metadata = meta_from_pb(e.metadata);
        out
    }
}

impl From<t::StreamResponse> for pb::StreamResponse {
    fn from(r: t::StreamResponse) -> Self {
        use pb::stream_response::Payload;
        let payload = match r {
            t::StreamResponse::Task(x) => Some(Payload::Task(x.into())),
            t::StreamResponse::Message(x) => Some(Payload::Message(x.into())),
            t::StreamResponse::StatusUpdate(x) => Some(Payload::StatusUpdate(x.into())),
            t::StreamResponse::ArtifactUpdate(x) => Some(Payload::ArtifactUpdate(x.into())),
            _ => None,
        };
        Self { payload }
    }
}

impl TryFrom<pb::StreamResponse> for t::StreamResponse {
    type Error = t::A2aError;

    fn try_from(r: pb::StreamResponse) -> Result<Self, Self::Error> {
        use pb::stream_response::Payload;
        Ok(match r.payload {
            Some(Payload::Task(x)) => Self::Task(x.into()),
            Some(Payload::Message(x)) => Self::Message(x.into()),
            Some(Payload::StatusUpdate(x)) => Self::StatusUpdate(x.into()),
            Some(Payload::ArtifactUpdate(x)) => Self::ArtifactUpdate(x.into()),
            None => {
                return Err(t::A2aError::InvalidAgentResponse {
                    detail: "a StreamResponse with no payload".into(),
                });
            }
        })
    }
}

impl From<t::SendMessageResponse> for pb::SendMessageResponse {
    fn from(r: t::SendMessageResponse) -> Self {
        use pb::send_message_response::Payload;
        let payload = match r {
            t::SendMessageResponse::Task(x) => Some(Payload::Task(x.into())),
            t::SendMessageResponse::Message(x) => Some(Payload::Message(x.into())),
            _ => None,
        };
        Self { payload }
    }
}

impl TryFrom<pb::SendMessageResponse> for t::SendMessageResponse {
    type Error = t::A2aError;

    fn try_from(r: pb::SendMessageResponse) -> Result<Self, Self::Error> {
        use pb::send_message_response::Payload;
        match r.payload {
            Some(Payload::Task(x)) => Ok(Self::Task(x.into())),
            Some(Payload::Message(x)) => Ok(Self::Message(x.into())),
            None => Err(t::A2aError::InvalidAgentResponse {
                detail: "a SendMessageResponse with neither task nor message".into(),
            }),
        }
    }
}

// ---- requests ----

impl From<t::AuthenticationInfo> for pb::AuthenticationInfo {
    fn from(a: t::AuthenticationInfo) -> Self {
        Self {
            scheme: a.scheme,
            credentials: or_empty(a.credentials),
        }
    }
}

impl From<pb::AuthenticationInfo> for t::AuthenticationInfo {
    fn from(a: pb::AuthenticationInfo) -> Self {
        let mut out = t::AuthenticationInfo::default();
        out.scheme = a.scheme;
        out.credentials = opt(a.credentials);
        out
    }
}

impl From<t::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(c: t::TaskPushNotificationConfig) -> Self {
        Self {
            tenant: or_empty(c.tenant),
            id: or_empty(c.id),
            task_id: or_empty(c.task_id),
            url: c.url,
            token: or_empty(c.token),
            authentication: c.authentication.map(Into::into),
        }
    }
}

impl From<pb::TaskPushNotificationConfig> for t::TaskPushNotificationConfig {
    fn from(c: pb::TaskPushNotificationConfig) -> Self {
        let mut out = t::TaskPushNotificationConfig::default();
        out.tenant = opt(c.tenant);
        out.id = opt(c.id);
        out.task_id = opt(c.task_id);
        out.url = c.url;
        out.token = opt(c.token);
        out.authentication = c.authentication.map(Into::into);
        out
    }
}

impl From<t::SendMessageConfiguration> for pb::SendMessageConfiguration {
    fn from(c: t::SendMessageConfiguration) -> Self {
        Self {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.task_push_notification_config.map(Into::into),
            history_length: c.history_length,
            return_immediately: c.return_immediately,
        }
    }
}

impl From<pb::SendMessageConfiguration> for t::SendMessageConfiguration {
    fn from(c: pb::SendMessageConfiguration) -> Self {
        let mut out = t::SendMessageConfiguration::default();
        out.accepted_output_modes = c.accepted_output_modes;
        out.task_push_notification_config = c.task_push_notification_config.map(Into::into);
        out.history_length = c.history_length;
        out.return_immediately = c.return_immediately;
        out
    }
}

impl From<t::SendMessageRequest> for pb::SendMessageRequest {
    fn from(r: t::SendMessageRequest) -> Self {
        Self {
            tenant: or_empty(r.tenant),
            message: Some(r.message.into()),
            configuration: r.configuration.map(Into::into),
            metadata: meta_to_pb(r.metadata),
        }
    }
}

impl TryFrom<pb::SendMessageRequest> for t::SendMessageRequest {
    type Error = t::A2aError;

    fn try_from(r: pb::SendMessageRequest) -> Result<Self, Self::Error> {
        let message = r
            .message
            .ok_or_else(|| t::A2aError::invalid_field("message", "is required"))?;
        let mut out = t::SendMessageRequest::new(message.into());
        out.tenant = opt(r.tenant);
        out.configuration = r.configuration.map(Into::into);
        out.metadata = meta_from_pb(r.metadata);
        Ok(out)
    }
}

impl From<t::GetTaskRequest> for pb::GetTaskRequest {
    fn from(r: t::GetTaskRequest) -> Self {
        Self {
            tenant: or_empty(r.tenant),
            id: r.id,
            history_length: r.history_length,
        }
    }
}

impl From<pb::GetTaskRequest> for t::GetTaskRequest {
    fn from(r: pb::GetTaskRequest) -> Self {
        let mut out = t::GetTaskRequest::default();
        out.tenant = opt(r.tenant);
        out.id = r.id;
        out.history_length = r.history_length;
        out
    }
}

impl From<t::ListTasksRequest> for pb::ListTasksRequest {
    fn from(r: t::ListTasksRequest) -> Self {
        Self {
            tenant: or_empty(r.tenant),
            context_id: or_empty(r.context_id),
            status: r.status.unwrap_or_default().number(),
            page_size: r.page_size,
            page_token: or_empty(r.page_token),
            history_length: r.history_length,
            status_timestamp_after: r.status_timestamp_after.map(timestamp_to_pb),
            include_artifacts: r.include_artifacts,
        }
    }
}

impl From<pb::ListTasksRequest> for t::ListTasksRequest {
    fn from(r: pb::ListTasksRequest) -> Self {
        let mut out = t::ListTasksRequest::default();
        out.tenant = opt(r.tenant);
        out.context_id = opt(r.context_id);
        out.status = (r.status != 0).then(|| state_from_pb(r.status));
        out.page_size = r.page_size;
        out.page_token = opt(r.page_token);
        out.history_length = r.history_length;
        out.status_timestamp_after = r.status_timestamp_after.and_then(timestamp_from_pb);
        out.include_artifacts = r.include_artifacts;
        out
    }
}

impl From<t::ListTasksResponse> for pb::ListTasksResponse {
    fn from(r: t::ListTasksResponse) -> Self {
        Self {
            tasks: r.tasks.into_iter().map(Into::into).collect(),
            next_page_token: r.next_page_token,
            page_size: r.page_size,
            total_size: r.total_size,
        }
    }
}

impl From<pb::ListTasksResponse> for t::ListTasksResponse {
    fn from(r: pb::ListTasksResponse) -> Self {
        let mut out = t::ListTasksResponse::default();
        out.tasks = r.tasks.into_iter().map(Into::into).collect();
        out.next_page_token = r.next_page_token;
        out.page_size = r.page_size;
        out.total_size = r.total_size;
        out
    }
}

impl From<t::CancelTaskRequest> for pb::CancelTaskRequest {
    fn from(r: t::CancelTaskRequest) -> Self {
        Self {
            tenant: or_empty(r.tenant),
            id: r.id,
            metadata: meta_to_pb(r.metadata),
        }
    }
}

impl From<pb::CancelTaskRequest> for t::CancelTaskRequest {
    fn from(r: pb::CancelTaskRequest) -> Self {
        let mut out = t::CancelTaskRequest::new(r.id);
        out.tenant = opt(r.tenant);
        out.metadata = meta_from_pb(r.metadata);
        out
    }
}

impl From<t::SubscribeToTaskRequest> for pb::SubscribeToTaskRequest {
    fn from(r: t::SubscribeToTaskRequest) -> Self {
        Self {
            tenant: or_empty(r.tenant),
            id: r.id,
        }
    }
}

impl From<pb::SubscribeToTaskRequest> for t::SubscribeToTaskRequest {
    fn from(r: pb::SubscribeToTaskRequest) -> Self {
        let mut out = t::SubscribeToTaskRequest::new(r.id);
        out.tenant = opt(r.tenant);
        out
    }
}

// ---- agent cards ----

fn strings_to_pb(m: BTreeMap<String, String>) -> std::collections::HashMap<String, String> {
    m.into_iter().collect()
}

impl From<t::AgentInterface> for pb::AgentInterface {
    fn from(i: t::AgentInterface) -> Self {
        Self {
            url: i.url,
            protocol_binding: i.protocol_binding,
            tenant: or_empty(i.tenant),
            protocol_version: i.protocol_version,
        }
    }
}

impl From<pb::AgentInterface> for t::AgentInterface {
    fn from(i: pb::AgentInterface) -> Self {
        let mut out = t::AgentInterface::new(i.url, i.protocol_binding, i.protocol_version);
        out.tenant = opt(i.tenant);
        out
    }
}

impl From<t::SecurityRequirement> for pb::SecurityRequirement {
    fn from(r: t::SecurityRequirement) -> Self {
        Self {
            schemes: r
                .schemes
                .into_iter()
                .map(|(k, v)| (k, pb::StringList { list: v.list }))
                .collect(),
        }
    }
}

impl From<pb::SecurityRequirement> for t::SecurityRequirement {
    fn from(r: pb::SecurityRequirement) -> Self {
        let mut out = t::SecurityRequirement::default();
        out.schemes = r
            .schemes
            .into_iter()
            .map(|(k, v)| {
                let mut list = t::StringList::default();
                list.list = v.list;
                (k, list)
            })
            .collect();
        out
    }
}

impl From<t::AgentSkill> for pb::AgentSkill {
    fn from(s: t::AgentSkill) -> Self {
        Self {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security_requirements: s
                .security_requirements
                .into_iter()
                .map(Into::into)
                .collect(),
        }
    }
}

impl From<pb::AgentSkill> for t::AgentSkill {
    fn from(s: pb::AgentSkill) -> Self {
        let mut out = t::AgentSkill::new(s.id, s.name, s.description, s.tags);
        out.examples = s.examples;
        out.input_modes = s.input_modes;
        out.output_modes = s.output_modes;
        out.security_requirements = s
            .security_requirements
            .into_iter()
            .map(Into::into)
            .collect();
        out
    }
}

impl From<t::AgentExtension> for pb::AgentExtension {
    fn from(e: t::AgentExtension) -> Self {
        Self {
            uri: e.uri,
            description: or_empty(e.description),
            required: e.required,
            params: meta_to_pb(e.params),
        }
    }
}

impl From<pb::AgentExtension> for t::AgentExtension {
    fn from(e: pb::AgentExtension) -> Self {
        let mut out = t::AgentExtension::default();
        out.uri = e.uri;
        out.description = opt(e.description);
        out.required = e.required;
        out.params = meta_from_pb(e.params);
        out
    }
}

impl From<t::AgentCapabilities> for pb::AgentCapabilities {
    fn from(c: t::AgentCapabilities) -> Self {
        Self {
            streaming: c.streaming,
            push_notifications: c.push_notifications,
            extensions: c.extensions.into_iter().map(Into::into).collect(),
            extended_agent_card: c.extended_agent_card,
        }
    }
}

impl From<pb::AgentCapabilities> for t::AgentCapabilities {
    fn from(c: pb::AgentCapabilities) -> Self {
        let mut out = t::AgentCapabilities::default();
        out.streaming = c.streaming;
        out.push_notifications = c.push_notifications;
        out.extensions = c.extensions.into_iter().map(Into::into).collect();
        out.extended_agent_card = c.extended_agent_card;
        out
    }
}

#[allow(deprecated)] // the implicit and password flows are deprecated, and still carried
fn flows_to_pb(f: t::OAuthFlows) -> pb::OAuthFlows {
    use pb::o_auth_flows::Flow;
    let flow = match f {
        t::OAuthFlows::AuthorizationCode(f) => {
            Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
                authorization_url: or_empty(f.authorization_url),
                token_url: or_empty(f.token_url),
                refresh_url: or_empty(f.refresh_url),
                scopes: strings_to_pb(f.scopes),
                pkce_required: f.pkce_required,
            })
        }
        t::OAuthFlows::ClientCredentials(f) => {
            Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
                token_url: or_empty(f.token_url),
                refresh_url: or_empty(f.refresh_url),
                scopes: strings_to_pb(f.scopes),
            })
        }
        t::OAuthFlows::Implicit(f) => Flow::Implicit(pb::ImplicitOAuthFlow {
            authorization_url: or_empty(f.authorization_url),
            refresh_url: or_empty(f.refresh_url),
            scopes: strings_to_pb(f.scopes),
        }),
        t::OAuthFlows::Password(f) => Flow::Password(pb::PasswordOAuthFlow {
            token_url: or_empty(f.token_url),
            refresh_url: or_empty(f.refresh_url),
            scopes: strings_to_pb(f.scopes),
        }),
        t::OAuthFlows::DeviceCode(f) => Flow::DeviceCode(pb::DeviceCodeOAuthFlow {
            device_authorization_url: or_empty(f.device_authorization_url),
            token_url: or_empty(f.token_url),
            refresh_url: or_empty(f.refresh_url),
            scopes: strings_to_pb(f.scopes),
        }),
        _ => return pb::OAuthFlows { flow: None },
    };
    pb::OAuthFlows { flow: Some(flow) }
}

#[allow(deprecated)] // the implicit and password flows are deprecated, and still carried
fn flows_from_pb(f: pb::OAuthFlows) -> Option<t::OAuthFlows> {
    use pb::o_auth_flows::Flow;
    let mut out = t::OAuthFlow::default();
    Some(match f.flow? {
        Flow::AuthorizationCode(f) => {
            out.authorization_url = opt(f.authorization_url);
            out.token_url = opt(f.token_url);
            out.refresh_url = opt(f.refresh_url);
            out.scopes = f.scopes.into_iter().collect();
            out.pkce_required = f.pkce_required;
            t::OAuthFlows::AuthorizationCode(out)
        }
        Flow::ClientCredentials(f) => {
            out.token_url = opt(f.token_url);
            out.refresh_url = opt(f.refresh_url);
            out.scopes = f.scopes.into_iter().collect();
            t::OAuthFlows::ClientCredentials(out)
        }
        Flow::Implicit(f) => {
            out.authorization_url = opt(f.authorization_url);
            out.refresh_url = opt(f.refresh_url);
            out.scopes = f.scopes.into_iter().collect();
            t::OAuthFlows::Implicit(out)
        }
        Flow::Password(f) => {
            out.token_url = opt(f.token_url);
            out.refresh_url = opt(f.refresh_url);
            out.scopes = f.scopes.into_iter().collect();
            t::OAuthFlows::Password(out)
        }
        Flow::DeviceCode(f) => {
            out.device_authorization_url = opt(f.device_authorization_url);
            out.token_url = opt(f.token_url);
            out.refresh_url = opt(f.refresh_url);
            out.scopes = f.scopes.into_iter().collect();
            t::OAuthFlows::DeviceCode(out)
        }
    })
}

fn scheme_to_pb(s: t::SecurityScheme) -> Option<pb::SecurityScheme> {
    use pb::security_scheme::Scheme;
    let scheme = match s {
        t::SecurityScheme::ApiKeySecurityScheme(s) => {
            Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme {
                description: or_empty(s.description),
                location: s.location,
                name: s.name,
            })
        }
        t::SecurityScheme::HttpAuthSecurityScheme(s) => {
            Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme {
                description: or_empty(s.description),
                scheme: s.scheme,
                bearer_format: or_empty(s.bearer_format),
            })
        }
        t::SecurityScheme::Oauth2SecurityScheme(s) => {
            Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme {
                description: or_empty(s.description),
                flows: Some(flows_to_pb(s.flows)),
                oauth2_metadata_url: or_empty(s.oauth2_metadata_url),
            })
        }
        t::SecurityScheme::OpenIdConnectSecurityScheme(s) => {
            Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme {
                description: or_empty(s.description),
                open_id_connect_url: s.open_id_connect_url,
            })
        }
        t::SecurityScheme::MtlsSecurityScheme(s) => {
            Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme {
                description: or_empty(s.description),
            })
        }
        _ => return None,
    };
    Some(pb::SecurityScheme {
        scheme: Some(scheme),
    })
}

fn scheme_from_pb(s: pb::SecurityScheme) -> Option<t::SecurityScheme> {
    use pb::security_scheme::Scheme;
    Some(match s.scheme? {
        Scheme::ApiKeySecurityScheme(s) => {
            let mut out = t::ApiKeySecurityScheme::new(s.location, s.name);
            out.description = opt(s.description);
            t::SecurityScheme::ApiKeySecurityScheme(out)
        }
        Scheme::HttpAuthSecurityScheme(s) => {
            let mut out = t::HttpAuthSecurityScheme::new(s.scheme);
            out.description = opt(s.description);
            out.bearer_format = opt(s.bearer_format);
            t::SecurityScheme::HttpAuthSecurityScheme(out)
        }
        Scheme::Oauth2SecurityScheme(s) => {
            let flows = flows_from_pb(s.flows?)?;
            let mut out = t::OAuth2SecurityScheme::new(flows);
            out.description = opt(s.description);
            out.oauth2_metadata_url = opt(s.oauth2_metadata_url);
            t::SecurityScheme::Oauth2SecurityScheme(out)
        }
        Scheme::OpenIdConnectSecurityScheme(s) => {
            let mut out = t::OpenIdConnectSecurityScheme::default();
            out.description = opt(s.description);
            out.open_id_connect_url = s.open_id_connect_url;
            t::SecurityScheme::OpenIdConnectSecurityScheme(out)
        }
        Scheme::MtlsSecurityScheme(s) => {
            let mut out = t::MutualTlsSecurityScheme::default();
            out.description = opt(s.description);
            t::SecurityScheme::MtlsSecurityScheme(out)
        }
    })
}

impl From<t::AgentCard> for pb::AgentCard {
    fn from(c: t::AgentCard) -> Self {
        Self {
            name: c.name,
            description: c.description,
            supported_interfaces: c.supported_interfaces.into_iter().map(Into::into).collect(),
            provider: c.provider.map(|p| pb::AgentProvider {
                url: p.url,
                organization: p.organization,
            }),
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: Some(c.capabilities.into()),
            security_schemes: c
                .security_schemes
                .into_iter()
                .filter_map(|(k, v)| Some((k, scheme_to_pb(v)?)))
                .collect(),
            security_requirements: c
                .security_requirements
                .into_iter()
                .map(Into::into)
                .collect(),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: c.skills.into_iter().map(Into::into).collect(),
            signatures: c
                .signatures
                .into_iter()
                .map(|s| pb::AgentCardSignature {
                    protected: s.protected,
                    signature: s.signature,
                    header: meta_to_pb(s.header),
                })
                .collect(),
            icon_url: c.icon_url,
        }
    }
}

impl From<pb::AgentCard> for t::AgentCard {
    fn from(c: pb::AgentCard) -> Self {
        let mut out = t::AgentCard::default();
        out.name = c.name;
        out.description = c.description;
        out.supported_interfaces = c.supported_interfaces.into_iter().map(Into::into).collect();
        out.provider = c.provider.map(|p| {
            let mut provider = t::AgentProvider::default();
            provider.url = p.url;
            provider.organization = p.organization;
            provider
        });
        out.version = c.version;
        out.documentation_url = c.documentation_url;
        out.capabilities = c.capabilities.map(Into::into).unwrap_or_default();
        out.security_schemes = c
            .security_schemes
            .into_iter()
            .filter_map(|(k, v)| Some((k, scheme_from_pb(v)?)))
            .collect();
        out.security_requirements = c
            .security_requirements
            .into_iter()
            .map(Into::into)
            .collect();
        out.default_input_modes = c.default_input_modes;
        out.default_output_modes = c.default_output_modes;
        out.skills = c.skills.into_iter().map(Into::into).collect();
        out.signatures = c
            .signatures
            .into_iter()
            .map(|s| {
                let mut sig = t::AgentCardSignature::default();
                sig.protected = s.protected;
                sig.signature = s.signature;
                sig.header = meta_from_pb(s.header);
                sig
            })
            .collect();
        out.icon_url = c.icon_url;
        out
    }
}
