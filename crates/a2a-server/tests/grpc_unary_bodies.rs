//! A unary gRPC call's request body, however it arrives, over a raw HTTP/2 client: a
//! message split over several DATA frames is answered like one sent whole, and bodies that
//! are not one plain message within the limit get tonic's answers (compressed, over the
//! limit, cut short, empty, two messages, a `grpc-encoding` the server does not speak).

mod common;

use a2a_grpc::pb;
use bytes::{BufMut, Bytes, BytesMut};
use common::*;
use prost::Message;

/// What came back: the `grpc-status` (from the trailers, or the headers of a trailers-only
/// answer), the `grpc-message`, and the body's bytes.
struct Answer {
    status: String,
    message: String,
    body: Bytes,
}

/// Sends `frames` as the DATA frames of a `SendMessage` call, with `headers` added.
async fn call(s: &TestServer, headers: &[(&str, &str)], frames: Vec<Bytes>) -> Answer {
    let authority = s.base.trim_start_matches("http://").to_owned();
    let tcp = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let (sender, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(conn);
    let mut sender = sender.ready().await.unwrap();
    let mut req = http::Request::post(format!(
        "http://{authority}/lf.a2a.v1.A2AService/SendMessage"
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .header("a2a-version", "1.0");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let (response, mut stream) = sender
        .send_request(req.body(()).unwrap(), frames.is_empty())
        .unwrap();
    let last = frames.len().saturating_sub(1);
    for (i, frame) in frames.into_iter().enumerate() {
        stream.send_data(frame, i == last).unwrap();
    }
    let response = response.await.unwrap();
    assert_eq!(response.status(), 200);
    let head = response.headers().clone();
    let mut recv = response.into_body();
    let mut body = BytesMut::new();
    while let Some(data) = recv.data().await {
        let data = data.unwrap();
        let _ = recv.flow_control().release_capacity(data.len());
        body.extend_from_slice(&data);
    }
    let trailers = recv.trailers().await.unwrap().unwrap_or_default();
    let field = |name: &str| {
        trailers
            .get(name)
            .or_else(|| head.get(name))
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    Answer {
        status: field("grpc-status"),
        message: field("grpc-message"),
        body: body.freeze(),
    }
}

/// `message` with its gRPC prefix: the compression flag, then the length.
fn framed(flag: u8, declared_len: u32, message: &[u8]) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_u8(flag);
    buf.put_u32(declared_len);
    buf.extend_from_slice(message);
    buf.freeze()
}

fn request() -> Vec<u8> {
    send_req("complete").encode_to_vec()
}

fn completed(answer: &Answer) -> pb::Task {
    assert_eq!(answer.status, "0", "{}", answer.message);
    assert_eq!(answer.body[0], 0, "an uncompressed answer");
    let len = u32::from_be_bytes(answer.body[1..5].try_into().unwrap()) as usize;
    assert_eq!(answer.body.len(), 5 + len, "one message");
    let sent = pb::SendMessageResponse::decode(&answer.body[5..]).unwrap();
    let Some(pb::send_message_response::Payload::Task(task)) = sent.payload else {
        panic!("{sent:?}")
    };
    assert_eq!(
        task.status.as_ref().unwrap().state,
        pb::TaskState::Completed as i32
    );
    task
}

#[tokio::test]
async fn a_message_whole_or_split_over_frames_is_answered_alike() {
    let s = server().await;
    let message = request();
    let whole = framed(0, message.len() as u32, &message);

    let one = call(&s, &[], vec![whole.clone()]).await;
    completed(&one);

    // The prefix cut in two, the message in three.
    let split = vec![
        whole.slice(..3),
        whole.slice(3..9),
        whole.slice(9..20),
        whole.slice(20..),
    ];
    let task = completed(&call(&s, &[], split).await);
    assert_eq!(task.artifacts[0].name, "out");

    // A byte a frame: the prefix is picked out as it comes, the message put together once.
    let bytes = (0..whole.len()).map(|i| whole.slice(i..=i)).collect();
    completed(&call(&s, &[], bytes).await);

    let identity = call(&s, &[("grpc-encoding", "identity")], vec![whole]).await;
    completed(&identity);
}

#[tokio::test]
async fn other_bodies_get_tonics_answers() {
    let s = server().await;
    let message = request();
    let len = message.len() as u32;

    let empty = call(&s, &[], vec![]).await;
    assert_eq!(
        (empty.status.as_str(), empty.message.as_str()),
        ("13", "Missing%20request%20message.")
    );

    let compressed_flag = call(&s, &[], vec![framed(1, len, &message)]).await;
    assert_eq!(compressed_flag.status, "13", "{}", compressed_flag.message);
    assert!(compressed_flag.message.contains("compressed-flag"));

    let gzip = call(
        &s,
        &[("grpc-encoding", "gzip")],
        vec![framed(1, len, &message)],
    )
    .await;
    assert_eq!(gzip.status, "12", "{}", gzip.message);

    // Declares 64 MiB, over the limit (the server's body limit, 10 MiB by default): refused
    // before it is read.
    let over = call(&s, &[], vec![framed(0, 64 * 1024 * 1024, &message)]).await;
    assert_eq!(over.status, "11", "{}", over.message);
    assert!(over.message.contains("too%20large"), "{}", over.message);

    let cut_short = call(&s, &[], vec![framed(0, len + 10, &message)]).await;
    assert_eq!(cut_short.status, "13", "{}", cut_short.message);
    assert!(cut_short.message.contains("EOF"), "{}", cut_short.message);

    let mut two = framed(0, len, &message).to_vec();
    two.extend_from_slice(&framed(0, len, &message));
    // tonic answers a unary call's first message (it reads and drops the rest).
    completed(&call(&s, &[], vec![Bytes::from(two)]).await);

    let not_protobuf = call(&s, &[], vec![framed(0, 3, &[0xff, 0xff, 0xff])]).await;
    assert_eq!(not_protobuf.status, "13", "{}", not_protobuf.message);
}
