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

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use a2a_grpc::{A2aService, A2aServiceServer};
use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{HeaderMap, Request, Response};
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::Status;

/// The largest request message tonic accepts unless told otherwise.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A gRPC message's prefix: a compression flag and the message's length (big-endian u32).
const PREFIX_BYTES: usize = 5;

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

impl<S: A2aService> UnaryFirst<S> {
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

impl<S: A2aService> tower::Service<Request<Body>> for UnaryFirst<S> {
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
                Unary::SendMessage => unary(parts, message, |r| s.send_message(r)).await,
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

impl<S: A2aService> UnaryFirst<S> {
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
        Ok(answer) => one_answer(answer),
        Err(status) => status.into_http(),
    }
}

/// A successful answer: the metadata as headers, the message in one DATA frame, then
/// `grpc-status: 0`.
fn one_answer<M: Message>(answer: tonic::Response<M>) -> Response<Body> {
    let (metadata, message, _) = answer.into_parts();
    let len = message.encoded_len();
    let Ok(prefix_len) = u32::try_from(len) else {
        return Status::resource_exhausted("the answer is larger than a gRPC message can be")
            .into_http();
    };
    let mut buf = BytesMut::with_capacity(PREFIX_BYTES + len);
    buf.put_u8(0);
    buf.put_u32(prefix_len);
    if let Err(e) = message.encode(&mut buf) {
        return Status::internal(e.to_string()).into_http();
    }
    let mut trailers = HeaderMap::with_capacity(1);
    trailers.insert(Status::GRPC_STATUS, HeaderValue::from_static("0"));
    let mut response = Response::new(Body::new(OneMessage {
        data: Some(buf.freeze()),
        trailers: Some(trailers),
    }));
    *response.headers_mut() = metadata.into_headers();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    response
}

/// The request's one message, without its prefix; or, when the body is anything else, the
/// body again (what was read, then the rest) for tonic to answer.
async fn one_message(mut body: Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, Body> {
    let mut read = Replay::default();
    if headers
        .get("grpc-encoding")
        .is_some_and(|v| v.as_bytes() != b"identity")
    {
        return Err(read.then(body));
    }
    let mut len = 0;
    loop {
        match body.frame().await {
            None => break,
            Some(Ok(frame)) => {
                let is_data = frame.is_data();
                if let Some(data) = frame.data_ref() {
                    len += data.len();
                }
                read.frames.push_back(Ok(frame));
                // Trailers, a message over the limit or a second one: tonic's to answer.
                if !is_data
                    || read
                        .declared()
                        .is_some_and(|d| d > limit || len > PREFIX_BYTES + d)
                {
                    return Err(read.then(body));
                }
            }
            Some(Err(e)) => {
                read.frames.push_back(Err(e));
                return Err(read.ended());
            }
        }
    }
    match read.declared() {
        Some(declared) if len == PREFIX_BYTES + declared && read.compression_flag() == Some(0) => {
            Ok(read.message())
        }
        _ => Err(read.ended()),
    }
}

/// Frames read from a request body, to be read again.
#[derive(Default)]
struct Replay {
    frames: VecDeque<Result<Frame<Bytes>, axum::Error>>,
    rest: Option<Body>,
}

impl Replay {
    /// The data read so far, whole when it is one frame (the usual case), else copied.
    fn data(&self) -> Bytes {
        let mut data = self
            .frames
            .iter()
            .filter_map(|f| f.as_ref().ok()?.data_ref());
        match (data.next(), data.next()) {
            (None, _) => Bytes::new(),
            (Some(one), None) => one.clone(),
            (Some(first), Some(second)) => {
                let mut all = BytesMut::from(&first[..]);
                all.extend_from_slice(second);
                for more in data {
                    all.extend_from_slice(more);
                }
                all.freeze()
            }
        }
    }

    /// The message's length as its prefix declares it, once the prefix is read.
    fn declared(&self) -> Option<usize> {
        let data = self.data();
        let len = u32::from_be_bytes(data.get(1..PREFIX_BYTES)?.try_into().ok()?);
        usize::try_from(len).ok()
    }

    fn compression_flag(&self) -> Option<u8> {
        self.data().first().copied()
    }

    /// The message without its prefix.
    fn message(&self) -> Bytes {
        self.data().slice(PREFIX_BYTES..)
    }

    /// What was read, then the rest of `body`.
    fn then(mut self, body: Body) -> Body {
        self.rest = Some(body);
        Body::new(self)
    }

    /// What was read, the whole body.
    fn ended(self) -> Body {
        Body::new(self)
    }
}

impl http_body::Body for Replay {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Some(frame) = self.frames.pop_front() {
            return Poll::Ready(Some(frame));
        }
        match self.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty() && self.rest.as_ref().is_none_or(|r| r.is_end_stream())
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
