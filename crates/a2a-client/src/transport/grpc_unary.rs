//! Unary gRPC calls without tonic's streaming codec: the request is encoded once into the
//! buffer h2 sends, and an answer of one plain message and `grpc-status: 0` is read whole
//! and decoded with prost.
//!
//! Why: tonic's generated client sends a unary call as a one-item stream (an `EncodeBody`,
//! which the channel then collects) and reads its answer through a `Streaming` decoder, its
//! futures large and moved at each step. Under `a2a bench --binding grpc` that was about a
//! fifth of the client's CPU per call, which shares the machine with the server.
//!
//! Only the common answer is taken here: HTTP 200, no `grpc-encoding` (or `identity`), one
//! uncompressed message within the size limit, then trailers with `grpc-status: 0`. Any
//! other answer (an error status, trailers-only, a compressed or oversized message, a body
//! that fails) is read by tonic's own decoder, with the frames already read replayed in
//! front of the rest, so what a caller sees for it is what tonic gives.

use a2a_grpc::replay::{PREFIX_BYTES, RESERVED_HEADERS, Replay, encode_message};
use http::header::{CONTENT_TYPE, HeaderValue, TE};
use http::uri::PathAndQuery;
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::codec::{Codec, Streaming};
use tonic::{Code, Status};

use super::h2_channel::{H2Channel, RecvBody};

/// Calls the unary method at `path` with `message` and `headers` (the call's metadata), on
/// `channel`, taking answers up to `max_message_bytes`.
pub(crate) async fn call<Req, Resp>(
    channel: &H2Channel,
    path: &'static str,
    headers: HeaderMap,
    message: &Req,
    max_message_bytes: usize,
) -> Result<Resp, Status>
where
    Req: Message,
    Resp: Message + Default + Send + 'static,
{
    let data = encode_message(message)?;
    let mut request = Request::new(());
    *request.method_mut() = Method::POST;
    *request.uri_mut() = Uri::from(PathAndQuery::from_static(path));
    *request.version_mut() = http::Version::HTTP_2;
    *request.headers_mut() = headers;
    let h = request.headers_mut();
    // As tonic's client: names gRPC itself sets are not taken from the caller's metadata.
    for reserved in RESERVED_HEADERS {
        h.remove(reserved);
    }
    h.insert(TE, HeaderValue::from_static("trailers"));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    let (parts, ()) = request.into_parts();
    let response = channel.send(parts, data).await?;
    answer(response, max_message_bytes).await
}

/// The answer's message, read here when it is the common one, else by tonic.
async fn answer<Resp>(response: http::Response<RecvBody>, limit: usize) -> Result<Resp, Status>
where
    Resp: Message + Default + Send + 'static,
{
    let (head, mut body) = response.into_parts();
    let mut read = Replay::<RecvBody>::default();
    let plain = head.status == StatusCode::OK
        && !head.headers.contains_key(Status::GRPC_STATUS)
        && head
            .headers
            .get("grpc-encoding")
            .is_none_or(|v| v.as_bytes() == b"identity");
    if plain {
        while let Some(frame) = body.frame().await {
            let is_data = frame.as_ref().is_ok_and(Frame::is_data);
            let ok = frame
                .as_ref()
                .ok()
                .and_then(Frame::trailers_ref)
                .and_then(|t| t.get(Status::GRPC_STATUS))
                .is_some_and(|s| s.as_bytes() == b"0");
            read.record(frame);
            if is_data {
                if read
                    .declared()
                    .is_some_and(|d| d > limit || read.data_len() > PREFIX_BYTES + d)
                {
                    break;
                }
                continue;
            }
            if ok && read.frames() >= 2 && read.is_one_plain_message() {
                // As tonic's prost codec words a decode error.
                return Resp::decode(read.message()).map_err(|e| Status::internal(e.to_string()));
            }
            break;
        }
    }
    by_tonic(head, read.then(body), limit).await
}

/// What tonic's generated client does with a unary answer: refuses a `grpc-encoding` it
/// does not speak, takes a trailers-only status, reads the first message, then the trailers.
async fn by_tonic<Resp>(
    head: http::response::Parts,
    body: Replay<RecvBody>,
    limit: usize,
) -> Result<Resp, Status>
where
    Resp: Message + Default + Send + 'static,
{
    if let Some(encoding) = head.headers.get("grpc-encoding")
        && encoding.as_bytes() != b"identity"
    {
        let encoding = String::from_utf8_lossy(encoding.as_bytes());
        return Err(Status::unimplemented(format!(
            "Content is compressed with `{encoding}` which isn't supported"
        )));
    }
    let decoder = tonic_prost::ProstCodec::<(), Resp>::default().decoder();
    let mut stream = match Status::from_header_map(&head.headers) {
        Some(status) if status.code() != Code::Ok => return Err(status),
        Some(_) => Streaming::new_empty(decoder, body),
        None => Streaming::new_response(decoder, body, head.status, None, Some(limit)),
    };
    let message = stream
        .message()
        .await?
        .ok_or_else(|| Status::internal("Missing response message."))?;
    stream.trailers().await?;
    Ok(message)
}
