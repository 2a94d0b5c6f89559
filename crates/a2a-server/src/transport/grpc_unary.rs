//! Unary gRPC calls answered without tonic's streaming codec: the request's one message is
//! read whole, decoded with prost, handed to the service's method, and its answer written
//! as one DATA frame and the `grpc-status: 0` trailers.
//!
//! Why: tonic serves a unary call through the machinery of a stream (a `Streaming` decoder
//! over the body, an `EncodeBody` over a one-item stream, each boxed and polled through the
//! generated service's futures). On blocking sends that machinery was about a tenth of the
//! server's CPU per gRPC call. What a unary call needs is simpler: the body is one
//! length-prefixed message.
//!
//! Only the common case is taken here: no `grpc-encoding` (or `identity`), one uncompressed
//! message within the size limit, then the end of the body. Anything else (a compressed or
//! oversized message, a second message, trailers, a body that fails, a streaming method,
//! an unknown one) goes to tonic's generated service with the frames already read replayed
//! in front of the rest of the body, so its answers, errors included, are tonic's own.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use a2a_grpc::replay::{PREFIX_BYTES, RESERVED_HEADERS, Replay, encode_message};
use a2a_grpc::{A2aService, A2aServiceServer, pb};
use axum::body::Body;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use http::{HeaderMap, Request, Response};
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::Status;

/// The largest request message tonic accepts unless told otherwise.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The service's unary methods.
#[derive(Debug, Clone, Copy)]
enum Unary {
    SendMessage,
    GetTask,
    ListTasks,
    CancelTask,
    CreatePushConfig,
    GetPushConfig,
    ListPushConfigs,
    GetExtendedCard,
    DeletePushConfig,
}

impl Unary {
    /// The unary method at `path` (`/lf.a2a.v1.A2AService/{method}`), if it is one.
    fn at(path: &str) -> Option<Self> {
        let method = path
            .strip_prefix('/')?
            .strip_prefix(a2a_grpc::SERVICE_NAME)?
            .strip_prefix('/')?;
        Some(match method {
            "SendMessage" => Self::SendMessage,
            "GetTask" => Self::GetTask,
            "ListTasks" => Self::ListTasks,
            "CancelTask" => Self::CancelTask,
            "CreateTaskPushNotificationConfig" => Self::CreatePushConfig,
            "GetTaskPushNotificationConfig" => Self::GetPushConfig,
            "ListTaskPushNotificationConfigs" => Self::ListPushConfigs,
            "GetExtendedAgentCard" => Self::GetExtendedCard,
            "DeleteTaskPushNotificationConfig" => Self::DeletePushConfig,
            _ => return None,
        })
    }
}

/// A service whose `SendMessage` answer is written as protobuf straight from what its
/// handler answered (see `a2a_grpc::encode`), without its `pb` message built first.
pub(crate) trait SendsEncoded: A2aService {
    /// `SendMessage`, answered with one gRPC message (its prefix included).
    fn send_message_encoded(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> impl Future<Output = Result<Bytes, Status>> + Send;
}

/// `service` as a tower service: unary calls answered here, the rest by tonic's generated
/// server for it.
pub(crate) struct UnaryFirst<S> {
    service: Arc<S>,
    tonic: A2aServiceServer<S>,
    max_message_bytes: usize,
}

impl<S> Clone for UnaryFirst<S> {
    fn clone(&self) -> Self {
        Self {
            service: self.service.clone(),
            tonic: self.tonic.clone(),
            max_message_bytes: self.max_message_bytes,
        }
    }
}

impl<S: SendsEncoded> UnaryFirst<S> {
    /// Serves `service`, refusing request messages over `max_message_bytes` (tonic's
    /// default, 4 MiB, when `None`) as tonic does.
    pub(crate) fn new(service: S, max_message_bytes: Option<usize>) -> Self {
        let service = Arc::new(service);
        let mut tonic = A2aServiceServer::from_arc(service.clone());
        if let Some(bytes) = max_message_bytes {
            tonic = tonic.max_decoding_message_size(bytes);
        }
        Self {
            service,
            tonic,
            max_message_bytes: max_message_bytes.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES),
        }
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl<S: SendsEncoded> tower::Service<Request<Body>> for UnaryFirst<S> {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Answer {
        let me = self.clone();
        let Some(method) = Unary::at(req.uri().path()) else {
            return Box::pin(me.by_tonic(req));
        };
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let message = match one_message(body, &parts.headers, me.max_message_bytes).await {
                Ok(message) => message,
                Err(replayed) => return me.by_tonic(Request::from_parts(parts, replayed)).await,
            };
            let s = &*me.service;
            Ok(match method {
                Unary::SendMessage => {
                    answered(parts, message, |r| s.send_message_encoded(r), one_encoded).await
                }
                Unary::GetTask => unary(parts, message, |r| s.get_task(r)).await,
                Unary::ListTasks => unary(parts, message, |r| s.list_tasks(r)).await,
                Unary::CancelTask => unary(parts, message, |r| s.cancel_task(r)).await,
                Unary::CreatePushConfig => {
                    unary(parts, message, |r| {
                        s.create_task_push_notification_config(r)
                    })
                    .await
                }
                Unary::GetPushConfig => {
                    unary(parts, message, |r| s.get_task_push_notification_config(r)).await
                }
                Unary::ListPushConfigs => {
                    unary(parts, message, |r| s.list_task_push_notification_configs(r)).await
                }
                Unary::GetExtendedCard => {
                    unary(parts, message, |r| s.get_extended_agent_card(r)).await
                }
                Unary::DeletePushConfig => {
                    unary(parts, message, |r| {
                        s.delete_task_push_notification_config(r)
                    })
                    .await
                }
            })
        })
    }
}

impl<S: SendsEncoded> UnaryFirst<S> {
    async fn by_tonic(mut self, req: Request<Body>) -> Result<Response<Body>, Infallible> {
        let response = tower::Service::call(&mut self.tonic, req).await?;
        Ok(response.map(Body::new))
    }
}

/// Decodes `message` as `Req`, calls the method with it (and the request's metadata and
/// extensions), and writes its answer.
async fn unary<Req, Resp, Fut>(
    parts: http::request::Parts,
    message: Bytes,
    call: impl FnOnce(tonic::Request<Req>) -> Fut,
) -> Response<Body>
where
    Req: Message + Default,
    Resp: Message,
    Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
{
    answered(parts, message, call, one_answer).await
}

/// Decodes `message` as `Req`, calls the method with it (and the request's metadata and
/// extensions), and writes what it answers with `answer`, or its status.
async fn answered<Req, Out, Fut>(
    parts: http::request::Parts,
    message: Bytes,
    call: impl FnOnce(tonic::Request<Req>) -> Fut,
    answer: impl FnOnce(Out) -> Response<Body>,
) -> Response<Body>
where
    Req: Message + Default,
    Fut: Future<Output = Result<Out, Status>>,
{
    let message = match Req::decode(message) {
        Ok(message) => message,
        // As tonic's prost codec words it.
        Err(e) => return Status::internal(e.to_string()).into_http(),
    };
    match call(tonic::Request::from_http(Request::from_parts(
        parts, message,
    )))
    .await
    {
        Ok(out) => answer(out),
        Err(status) => status.into_http(),
    }
}

/// A successful answer of a message already encoded (its prefix included), with no
/// metadata.
fn one_encoded(data: Bytes) -> Response<Body> {
    let mut headers = HeaderMap::with_capacity(1);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    answer_of(data, headers, http::Extensions::new())
}

/// A successful answer: the metadata as headers, the message in one DATA frame, then
/// `grpc-status: 0`.
fn one_answer<M: Message>(answer: tonic::Response<M>) -> Response<Body> {
    let (metadata, message, extensions) = answer.into_parts();
    let data = match encode_message(&message) {
        Ok(data) => data,
        Err(status) => return status.into_http(),
    };
    // As tonic's `Response::into_http`: the metadata without the names gRPC itself sets.
    let mut headers = metadata.into_headers();
    for reserved in RESERVED_HEADERS {
        headers.remove(reserved);
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    answer_of(data, headers, extensions)
}

/// The answer of `data` (one encoded message) under `headers`, then `grpc-status: 0`.
fn answer_of(data: Bytes, headers: HeaderMap, extensions: http::Extensions) -> Response<Body> {
    let mut trailers = HeaderMap::with_capacity(1);
    trailers.insert(Status::GRPC_STATUS, HeaderValue::from_static("0"));
    let mut response = Response::new(Body::new(OneMessage {
        data: Some(data),
        trailers: Some(trailers),
    }));
    *response.headers_mut() = headers;
    *response.extensions_mut() = extensions;
    response
}

/// The request's one message, without its prefix; or, when the body is anything else, the
/// body again (what was read, then the rest) for tonic to answer.
async fn one_message(mut body: Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, Body> {
    let mut read = Replay::<Body>::default();
    // A name made once: one given as `&str` is checked and lowered on every lookup.
    static GRPC_ENCODING: HeaderName = HeaderName::from_static("grpc-encoding");
    if headers
        .get(&GRPC_ENCODING)
        .is_some_and(|v| v.as_bytes() != b"identity")
    {
        return Err(Body::new(read.then(body)));
    }
    while let Some(frame) = body.frame().await {
        let is_data = frame.as_ref().is_ok_and(Frame::is_data);
        read.record(frame);
        // Trailers, an error, a message over the limit or a second one: tonic's to answer.
        if !is_data
            || read
                .declared()
                .is_some_and(|d| d > limit || read.data_len() > PREFIX_BYTES + d)
        {
            return Err(Body::new(read.then(body)));
        }
    }
    if read.is_one_plain_message() {
        Ok(read.message())
    } else {
        Err(Body::new(read.then(body)))
    }
}

/// One answer's body: its message, then its trailers.
struct OneMessage {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl http_body::Body for OneMessage {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }
}
