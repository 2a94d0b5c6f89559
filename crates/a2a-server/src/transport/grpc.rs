//! The gRPC binding, spec §10: service `lf.a2a.v1.A2AService` from the normative
//! `a2a.proto`, unary and server-streaming methods, service parameters as lowercase
//! metadata (`a2a-version`, `a2a-extensions`), errors as statuses with `ErrorInfo` details.
//!
//! gRPC has one path per method for the whole server, so the agents of a server share one
//! endpoint and a request's `tenant` field picks the agent: each agent's card lists its
//! gRPC interface with that tenant (the agent's path without its leading `/`, so the
//! `tenant` of `/a2a/echo` is `a2a/echo`; empty for the agent at the root). Every operation
//! goes to the same [`RequestHandler`] as the other bindings; this module only translates.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use a2a_grpc::encode::{SendMessageResponseRef, grpc_message};
use a2a_grpc::pb;
use a2a_grpc::status::to_status;
use a2a_runtime::store::TaskView;
use a2a_types::projection::TaskRef;
use a2a_types::{A2aError, Artifact, Message, ProtocolVersion, StreamResponseRef, Task};
use axum::Router;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use super::grpc_unary::{SendsEncoded, UnaryFirst};
use super::http_request::call_context;
use super::version::negotiate_version;
use crate::handler::{RequestHandler, SendAnswer, TaskAnswer};
use a2a_runtime::CallContext;
use a2a_runtime::TaskEventStream;

/// The agents served over gRPC on one server, by tenant.
#[derive(Debug, Clone, Default)]
pub struct GrpcEndpoint {
    agents: HashMap<String, Arc<RequestHandler>>,
    max_message_bytes: Option<usize>,
}

impl GrpcEndpoint {
    /// An endpoint with no agents.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `handler` for requests whose `tenant` is the tenant of an agent mounted at
    /// `path` (see [`tenant_of`]).
    pub fn agent(mut self, path: &str, handler: Arc<RequestHandler>) -> Self {
        self.agents.insert(tenant_of(path), handler);
        self
    }

    /// Largest accepted request message, in bytes (tonic's default otherwise: 4 MiB).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = Some(bytes);
        self
    }

    /// Whether no agent is served.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// The routes of the service (`/lf.a2a.v1.A2AService/{method}`), to merge into the
    /// server's router. HTTP/2 must be enabled on the server (it is, with `axum::serve`).
    pub fn routes(self) -> Router {
        let limit = self.max_message_bytes;
        let service = UnaryFirst::new(self, limit);
        Router::new().route_service(&format!("/{}/{{*method}}", a2a_grpc::SERVICE_NAME), service)
    }

    /// `SendMessage`, up to the handler's answer (the tonic path and the encoded one).
    async fn send(&self, request: Request<pb::SendMessageRequest>) -> Result<SendAnswer, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let req = req.try_into().map_err(|e| to_status(&e))?;
        handler
            .send_message_answer(req, call)
            .await
            .map_err(|e| to_status(&e))
    }

    fn handler(&self, tenant: &str) -> Result<&RequestHandler, Status> {
        match self.agents.get(tenant) {
            Some(h) => Ok(h),
            None => {
                let mut known: Vec<&str> = self.agents.keys().map(String::as_str).collect();
                known.sort_unstable();
                Err(Status::not_found(format!(
                    "no agent for tenant {tenant:?} on this server (tenants: {known:?})"
                )))
            }
        }
    }
}

/// The gRPC tenant of the agent mounted at `path`: the path without its slashes at either
/// end (`/a2a/echo` → `a2a/echo`; the root → empty).
pub fn tenant_of(path: &str) -> String {
    path.trim_matches('/').to_owned()
}

/// The call's context from its metadata, once the caller is authenticated (when the agent
/// requires it) and its `a2a-version` allows v1.0.
async fn admit(
    handler: &RequestHandler,
    metadata: MetadataMap,
    extensions: &tonic::Extensions,
    tenant: &str,
) -> Result<Arc<CallContext>, Status> {
    let headers = metadata.into_headers();
    let peer = extensions.get::<crate::limits::PeerAddr>().map(|p| p.0);
    let principal = match handler.authenticator() {
        Some(auth) => match crate::auth::authenticate(&**auth, &headers).await {
            Ok(p) => Some(p),
            Err(e) => {
                crate::metrics::global().connection_refused("unauthenticated");
                return Err(to_status(&e));
            }
        },
        None => None,
    };
    match negotiate_version(&headers, None) {
        Ok(ProtocolVersion::V1) => {
            let mut call = call_context(
                a2a_runtime::Binding::Grpc,
                ProtocolVersion::V1,
                headers,
                (peer, principal),
            );
            if !tenant.is_empty()
                && let Some(c) = Arc::get_mut(&mut call)
            {
                c.tenant = Some(tenant.to_owned());
            }
            Ok(call)
        }
        Ok(_) => Err(to_status(&A2aError::VersionNotSupported {
            version: "0.3 (no a2a-version metadata; send \"a2a-version: 1.0\" for this binding)"
                .into(),
        })),
        Err(e) => Err(to_status(&e)),
    }
}

impl SendsEncoded for GrpcEndpoint {
    async fn send_message_encoded(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Bytes, Status> {
        let answer = self.send(request).await?;
        encode_send_answer(&answer)
    }
}

/// `answer` as a `SendMessageResponse` in one gRPC message, written from the answer by
/// reference: a task answered from its log is not copied into an owned task first.
fn encode_send_answer(answer: &SendAnswer) -> Result<Bytes, Status> {
    type Owned<'a> = SendMessageResponseRef<'a, Artifact, Message>;
    match answer {
        SendAnswer::Message(m) => grpc_message(&Owned::Message(m)),
        SendAnswer::Task(TaskAnswer::Task(task)) => {
            grpc_message(&Owned::Task(TaskRef::from(&**task)))
        }
        SendAnswer::Task(TaskAnswer::Log { log, history }) => match TaskView::new(log, *history) {
            Some(view) => grpc_message(&SendMessageResponseRef::Task(view.task_ref())),
            // As `TaskAnswer::into_task`.
            None => grpc_message(&Owned::Task(TaskRef::from(&Task::default()))),
        },
    }
}

/// A stream event as protobuf.
fn event_to_pb(r: StreamResponseRef<'_>) -> pb::StreamResponse {
    use pb::stream_response::Payload;
    let payload = match r {
        StreamResponseRef::Task(t) => Some(Payload::Task(t.clone().into())),
        StreamResponseRef::Message(m) => Some(Payload::Message(m.clone().into())),
        StreamResponseRef::StatusUpdate(s) => Some(Payload::StatusUpdate(s.clone().into())),
        StreamResponseRef::ArtifactUpdate(a) => Some(Payload::ArtifactUpdate(a.clone().into())),
        _ => None,
    };
    pb::StreamResponse { payload }
}

/// The server stream of a task's events.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::StreamResponse, Status>> + Send>>;

fn event_stream(events: TaskEventStream) -> EventStream {
    Box::pin(events.into_stream().map(|item| match item {
        Ok(item) => Ok(event_to_pb(item.response())),
        Err(e) => Err(to_status(&e)),
    }))
}

#[tonic::async_trait]
impl a2a_grpc::A2aService for GrpcEndpoint {
    async fn send_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let answer = self.send(request).await?;
        Ok(Response::new(answer.into_response().into()))
    }

    type SendStreamingMessageStream = EventStream;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let req = req.try_into().map_err(|e| to_status(&e))?;
        let events = Box::pin(handler.send_streaming_message(req, call))
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(event_stream(events)))
    }

    async fn get_task(
        &self,
        request: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let task = handler
            .get_task(req.into(), &call)
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(task.into()))
    }

    async fn list_tasks(
        &self,
        request: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let page = Box::pin(handler.list_tasks(req.into(), &call))
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(page.into()))
    }

    async fn cancel_task(
        &self,
        request: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let task = Box::pin(handler.cancel_task(req.into(), call))
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(task.into()))
    }

    type SubscribeToTaskStream = EventStream;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let events = Box::pin(handler.subscribe_to_task(req.into(), &call))
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(event_stream(events)))
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let config = handler
            .create_push_config(req.into(), &call)
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(config.into()))
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let get = a2a_types::TaskPushNotificationConfigRequest::new(req.task_id, req.id);
        let config = handler
            .get_push_config(get, &call)
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(config.into()))
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let list = a2a_types::ListTaskPushNotificationConfigsRequest::new(req.task_id);
        let page = handler
            .list_push_configs(list, &call)
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(pb::ListTaskPushNotificationConfigsResponse {
            configs: page.configs.into_iter().map(Into::into).collect(),
            next_page_token: page.next_page_token,
        }))
    }

    async fn get_extended_agent_card(
        &self,
        request: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        admit(handler, metadata, &extensions, &req.tenant).await?;
        let card = handler
            .get_extended_agent_card()
            .map_err(|e| to_status(&e))?;
        Ok(Response::new((*card).clone().into()))
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        let (metadata, extensions, req) = request.into_parts();
        let handler = self.handler(&req.tenant)?;
        let call = admit(handler, metadata, &extensions, &req.tenant).await?;
        let delete = a2a_types::TaskPushNotificationConfigRequest::new(req.task_id, req.id);
        handler
            .delete_push_config(delete, &call)
            .await
            .map_err(|e| to_status(&e))?;
        Ok(Response::new(()))
    }
}
