//! gRPC, A2A v1.0 (spec §10): [`GrpcV1`], over HTTP/2 to the interface's `host:port`.

use std::sync::Arc;
use std::time::Duration;

use a2a_grpc::A2aServiceClient;
use a2a_grpc::pb;
use a2a_grpc::status::from_status;
use a2a_types::{
    AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    ProtocolVersion, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task,
};
use futures::StreamExt;
use reqwest::header::HeaderMap;
use tonic::codec::Streaming;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};
use tonic_types::StatusExt;

use super::grpc_unary;
use super::h2_channel::H2Channel;
use super::{EventSource, Transport, WireEvent};
use crate::error::ClientError;

/// gRPC, A2A v1.0: `lf.a2a.v1.A2AService` at `host:port`, service parameters and the
/// client's headers as metadata.
#[derive(Debug)]
pub struct GrpcV1 {
    /// For streaming calls; unary ones go through `grpc_unary` on `channel`.
    client: A2aServiceClient<H2Channel>,
    channel: H2Channel,
    endpoint: String,
    metadata: MetadataMap,
    tenant: String,
    timeout: Option<Duration>,
}

impl GrpcV1 {
    /// Talks to `address` (`host:port`, or a `http://` / `https://` URL), sending `headers`
    /// as metadata (and `a2a-version: 1.0`) with every call; non-streaming calls are limited
    /// to `timeout`. `tenant` (the interface's) goes in requests that carry no other
    /// (`GetExtendedAgentCard`). An `https://` address is reached over TLS, trusting the
    /// Web PKI roots and the certificates of `roots_pem`. Connects on first use.
    pub fn new(
        address: &str,
        tenant: Option<String>,
        headers: HeaderMap,
        timeout: Option<Duration>,
        connect_timeout: Option<Duration>,
        roots_pem: &[Vec<u8>],
    ) -> Result<Self, ClientError> {
        let uri = if address.contains("://") {
            address.to_owned()
        } else {
            format!("http://{address}")
        };
        let invalid = || ClientError::InvalidUrl(address.to_owned());
        let uri: http::Uri = uri.parse().map_err(|_| invalid())?;
        let tls = match uri.scheme_str() {
            Some("https") => Some(tls_config(roots_pem).map_err(|e| ClientError::Tls {
                url: address.to_owned(),
                source: e.into(),
            })?),
            Some("http") => None,
            _ => return Err(invalid()),
        };
        let channel = H2Channel::new(&uri, tls, connect_timeout).map_err(|_| invalid())?;
        let mut metadata = MetadataMap::from_headers(http2_headers(headers));
        metadata.insert(
            "a2a-version",
            MetadataValue::from_static(ProtocolVersion::V1.as_str()),
        );
        Ok(Self {
            client: A2aServiceClient::new(channel.clone())
                .max_decoding_message_size(MAX_ANSWER_BYTES),
            channel,
            endpoint: address.to_owned(),
            metadata,
            tenant: tenant.unwrap_or_default(),
            timeout,
        })
    }

    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(message);
        *req.metadata_mut() = self.metadata.clone();
        for (name, value) in crate::trace::headers() {
            if let Ok(value) = MetadataValue::try_from(value) {
                req.metadata_mut().insert(name, value);
            }
        }
        req
    }

    /// Calls the unary `method` with `message` within the timeout, mapping its status.
    async fn unary<Req, Resp>(
        &self,
        method: &'static str,
        message: Req,
    ) -> Result<Resp, ClientError>
    where
        Req: prost::Message,
        Resp: prost::Message + Default + Send + 'static,
    {
        let mut headers = self.metadata.clone().into_headers();
        for (name, value) in crate::trace::headers() {
            if let Ok(value) = http::HeaderValue::try_from(value) {
                headers.insert(name, value);
            }
        }
        let call = grpc_unary::call(&self.channel, method, headers, &message, MAX_ANSWER_BYTES);
        let result = match self.timeout {
            Some(t) => tokio::time::timeout(t, call)
                .await
                .unwrap_or_else(|_| Err(Status::deadline_exceeded("the call timed out"))),
            None => call.await,
        };
        result.map_err(|s| self.error(s))
    }

    fn error(&self, status: Status) -> ClientError {
        client_error(&self.endpoint, status, false)
    }

    fn events(&self, stream: Streaming<pb::StreamResponse>) -> EventSource {
        let endpoint = self.endpoint.clone();
        Box::pin(stream.map(move |item| {
            match item {
                Ok(ev) => StreamResponse::try_from(ev)
                    .map(|r| WireEvent::new(None, r, false))
                    .map_err(|e| ClientError::InvalidResponse(e.to_string())),
                Err(status) => Err(client_error(&endpoint, status, true)),
            }
        }))
    }
}

/// The largest answer a call takes.
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The paths of the service's unary methods.
mod method {
    pub(super) const SEND_MESSAGE: &str = "/lf.a2a.v1.A2AService/SendMessage";
    pub(super) const GET_TASK: &str = "/lf.a2a.v1.A2AService/GetTask";
    pub(super) const LIST_TASKS: &str = "/lf.a2a.v1.A2AService/ListTasks";
    pub(super) const CANCEL_TASK: &str = "/lf.a2a.v1.A2AService/CancelTask";
    pub(super) const GET_EXTENDED_AGENT_CARD: &str = "/lf.a2a.v1.A2AService/GetExtendedAgentCard";
    pub(super) const CREATE_PUSH_CONFIG: &str =
        "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig";
    pub(super) const GET_PUSH_CONFIG: &str = "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig";
    pub(super) const LIST_PUSH_CONFIGS: &str =
        "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs";
    pub(super) const DELETE_PUSH_CONFIG: &str =
        "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig";
}

/// Request headers HTTP/2 forbids (RFC 9113 §8.2.2), which h2 refuses to send.
const CONNECTION_HEADERS: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The caller's headers as every call sends them: without those HTTP/2 forbids (left out,
/// as hyper did, so that a `Connection: keep-alive` meant for every binding does not fail
/// every call), and with the `user-agent` our push client sends unless the caller set one.
/// Done once, here, where the caller's headers come in, not on every call.
fn http2_headers(mut headers: HeaderMap) -> HeaderMap {
    for name in CONNECTION_HEADERS {
        headers.remove(name);
    }
    headers
        .entry(http::header::USER_AGENT)
        .or_insert(http::HeaderValue::from_static(concat!(
            "a2a-rust/",
            env!("CARGO_PKG_VERSION")
        )));
    headers
}

/// TLS for `https://` addresses: the Web PKI roots and the certificates of `roots_pem`, with
/// ALPN `h2` (gRPC needs HTTP/2).
fn tls_config(roots_pem: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for pem in roots_pem {
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("a root certificate: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("a root certificate: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// A status as a client error: an A2A error when it carries one (or its code says which
/// one), a connection failure ([`ClientError::Http`], which streams resume from) when the
/// transport failed. A broken stream surfaces as `INTERNAL` (an HTTP/2 reset); a unary call's
/// own timeout as `DEADLINE_EXCEEDED`.
fn client_error(endpoint: &str, status: Status, mid_stream: bool) -> ClientError {
    let from_transport = status.get_details_error_info().is_none()
        && match status.code() {
            Code::Unavailable | Code::Unknown | Code::Cancelled => true,
            Code::Internal => mid_stream,
            Code::DeadlineExceeded => !mid_stream,
            _ => false,
        };
    if from_transport {
        let cause = match status.code() {
            Code::DeadlineExceeded => "timed out".to_owned(),
            // A status that carries no transport error says what happened in its message.
            _ if std::error::Error::source(&status).is_none() => status.message().to_owned(),
            _ => crate::error::describe_http_error(&status),
        };
        return ClientError::Http {
            url: endpoint.to_owned(),
            cause,
            error: Box::new(status),
        };
    }
    let error = from_status(&status);
    let message = match status.message().trim() {
        "" => error.to_string(),
        m => m.to_owned(),
    };
    ClientError::Protocol { error, message }
}

#[async_trait::async_trait]
impl Transport for GrpcV1 {
    fn protocol_version(&self) -> ProtocolVersion {
        ProtocolVersion::V1
    }

    fn binding(&self) -> &'static str {
        a2a_types::binding::GRPC
    }

    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        let answer = self
            .unary::<pb::SendMessageRequest, pb::SendMessageResponse>(
                method::SEND_MESSAGE,
                req.into(),
            )
            .await?;
        answer
            .try_into()
            .map_err(|e: a2a_types::A2aError| ClientError::InvalidResponse(e.to_string()))
    }

    async fn send_streaming_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventSource, ClientError> {
        let mut client = self.client.clone();
        let stream = client
            .send_streaming_message(self.request(req.into()))
            .await
            .map_err(|s| self.error(s))?;
        Ok(self.events(stream.into_inner()))
    }

    async fn get_task(&self, req: GetTaskRequest) -> Result<Task, ClientError> {
        Ok(self
            .unary::<pb::GetTaskRequest, pb::Task>(method::GET_TASK, req.into())
            .await?
            .into())
    }

    async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, ClientError> {
        Ok(self
            .unary::<pb::ListTasksRequest, pb::ListTasksResponse>(method::LIST_TASKS, req.into())
            .await?
            .into())
    }

    async fn cancel_task(&self, req: CancelTaskRequest) -> Result<Task, ClientError> {
        Ok(self
            .unary::<pb::CancelTaskRequest, pb::Task>(method::CANCEL_TASK, req.into())
            .await?
            .into())
    }

    async fn subscribe_to_task(
        &self,
        req: SubscribeToTaskRequest,
        last_event_id: Option<&str>,
    ) -> Result<EventSource, ClientError> {
        let mut request = self.request(req.into());
        // gRPC events carry no ids, so this is only ever set by a caller that knows one.
        if let Some(id) = last_event_id.and_then(|id| MetadataValue::try_from(id).ok()) {
            request.metadata_mut().insert("last-event-id", id);
        }
        let mut client = self.client.clone();
        let stream = client
            .subscribe_to_task(request)
            .await
            .map_err(|s| self.error(s))?;
        Ok(self.events(stream.into_inner()))
    }

    async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        let req = pb::GetExtendedAgentCardRequest {
            tenant: self.tenant.clone(),
        };
        Ok(self
            .unary::<_, pb::AgentCard>(method::GET_EXTENDED_AGENT_CARD, req)
            .await?
            .into())
    }

    async fn create_push_config(
        &self,
        config: a2a_types::TaskPushNotificationConfig,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let mut req: pb::TaskPushNotificationConfig = config.into();
        req.tenant = self.tenant.clone();
        Ok(self
            .unary::<_, pb::TaskPushNotificationConfig>(method::CREATE_PUSH_CONFIG, req)
            .await?
            .into())
    }

    async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<a2a_types::TaskPushNotificationConfig, ClientError> {
        let req = pb::GetTaskPushNotificationConfigRequest {
            tenant: self.tenant.clone(),
            task_id: task_id.to_owned(),
            id: id.to_owned(),
        };
        Ok(self
            .unary::<_, pb::TaskPushNotificationConfig>(method::GET_PUSH_CONFIG, req)
            .await?
            .into())
    }

    async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Vec<a2a_types::TaskPushNotificationConfig>, ClientError> {
        let req = pb::ListTaskPushNotificationConfigsRequest {
            tenant: self.tenant.clone(),
            task_id: task_id.to_owned(),
            page_size: 0,
            page_token: String::new(),
        };
        let page = self
            .unary::<_, pb::ListTaskPushNotificationConfigsResponse>(method::LIST_PUSH_CONFIGS, req)
            .await?;
        Ok(page.configs.into_iter().map(Into::into).collect())
    }

    async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let req = pb::DeleteTaskPushNotificationConfigRequest {
            tenant: self.tenant.clone(),
            task_id: task_id.to_owned(),
            id: id.to_owned(),
        };
        self.unary::<_, ()>(method::DELETE_PUSH_CONFIG, req).await?;
        Ok(())
    }
}
