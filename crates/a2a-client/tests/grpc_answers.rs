//! What the gRPC transport makes of a unary call's answer, however a server shapes it, from a
//! raw HTTP/2 server scripted per call: a message split over DATA frames reads like one sent
//! whole; an error status after data, a trailers-only error, a missing status, a compressed
//! or oversized message, bytes that are not protobuf, and an HTTP error each come back as
//! the error tonic's client gave for them.

use a2a_client::{A2aClient, Binding, ClientError, ProtocolVersion};
use a2a_grpc::pb;
use a2a_host::AgentHost;
use a2a_server::ServeOptions;
use a2a_types::{A2aError, AgentCard};
use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Response};
use prost::Message;

/// `message` with its gRPC prefix: the compression flag, then the declared length.
fn framed(flag: u8, declared_len: u32, message: &[u8]) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_u8(flag);
    buf.put_u32(declared_len);
    buf.extend_from_slice(message);
    buf.freeze()
}

fn task(id: &str) -> Vec<u8> {
    pb::Task {
        id: id.to_owned(),
        context_id: "ctx".into(),
        status: Some(pb::TaskStatus {
            state: pb::TaskState::Completed as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

fn trailers(status: &str, message: Option<&str>) -> HeaderMap {
    let mut t = HeaderMap::new();
    t.insert("grpc-status", HeaderValue::from_str(status).unwrap());
    if let Some(m) = message {
        t.insert("grpc-message", HeaderValue::from_str(m).unwrap());
    }
    t
}

/// How the server answers a `GetTask` for task `id`: the HTTP status, extra headers, the
/// DATA frames, the trailers (none: the stream ends with the last frame, or with the
/// headers when there are no frames).
fn script(id: &str) -> (u16, HeaderMap, Vec<Bytes>, Option<HeaderMap>) {
    let message = task(id);
    let len = message.len() as u32;
    let whole = framed(0, len, &message);
    let ok = Some(trailers("0", None));
    let none = HeaderMap::new;
    match id {
        "whole" => (200, none(), vec![whole], ok),
        "split" => (
            200,
            none(),
            vec![whole.slice(..2), whole.slice(2..7), whole.slice(7..)],
            ok,
        ),
        "error-after-data" => (
            200,
            none(),
            vec![whole],
            Some(trailers("5", Some("no%20such%20task"))),
        ),
        "trailers-only" => (200, trailers("13", Some("boom")), vec![], None),
        "no-status" => (200, none(), vec![whole], None),
        "gzip" => {
            let mut h = HeaderMap::new();
            h.insert("grpc-encoding", HeaderValue::from_static("gzip"));
            (200, h, vec![framed(1, len, &message)], ok)
        }
        "compressed-flag" => (200, none(), vec![framed(1, len, &message)], ok),
        "too-large" => (200, none(), vec![framed(0, 100 << 20, &message)], ok),
        "not-protobuf" => (200, none(), vec![framed(0, 3, &[0xff, 0xff, 0xff])], ok),
        "cut-short" => (200, none(), vec![framed(0, len + 10, &message)], ok),
        "http-503" => (503, none(), vec![], None),
        other => panic!("no script for {other}"),
    }
}

/// A raw HTTP/2 server answering every `GetTask` by [`script`]; its address.
async fn scripted_server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut conn = h2::server::handshake(tcp).await.unwrap();
                while let Some(Ok((req, mut respond))) = conn.accept().await {
                    tokio::spawn(async move {
                        let mut body = req.into_body();
                        let mut read = BytesMut::new();
                        while let Some(Ok(data)) = body.data().await {
                            let _ = body.flow_control().release_capacity(data.len());
                            read.extend_from_slice(&data);
                        }
                        let id = pb::GetTaskRequest::decode(&read[5..]).unwrap().id;
                        let (status, headers, frames, end) = script(&id);
                        let mut response = Response::builder()
                            .status(status)
                            .header("content-type", "application/grpc")
                            .body(())
                            .unwrap();
                        response.headers_mut().extend(headers);
                        let ends_here = frames.is_empty() && end.is_none();
                        let mut send = respond.send_response(response, ends_here).unwrap();
                        let last = frames.len().saturating_sub(1);
                        for (i, frame) in frames.into_iter().enumerate() {
                            send.send_data(frame, i == last && end.is_none()).unwrap();
                        }
                        if let Some(end) = end {
                            send.send_trailers(end).unwrap();
                        }
                    });
                }
            });
        }
    });
    addr
}

/// A gRPC client of the conformance agent's card, its gRPC address changed to `to`.
async fn client_for(to: std::net::SocketAddr) -> A2aClient {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let server = a2a_server::spawn_local(host.router()).await.unwrap();
    let builder = || {
        A2aClient::builder()
            .protocol_version(ProtocolVersion::V1)
            .binding(Binding::Grpc)
    };
    let direct = builder()
        .connect(&format!("http://{server}/a2a/conformance"))
        .await
        .unwrap();
    let mut card: AgentCard = direct.card().clone();
    for iface in &mut card.supported_interfaces {
        iface.url = iface.url.replace(&server.to_string(), &to.to_string());
    }
    builder().with_card(card).unwrap()
}

/// The error's kind and text: `protocol <A2A error>: <message>` or `http: <cause>`.
fn outcome(e: &ClientError) -> String {
    match e {
        ClientError::Protocol { error, message } => format!("protocol {error:?}: {message}"),
        ClientError::Http { cause, .. } => format!("http: {cause}"),
        other => format!("other: {other}"),
    }
}

#[tokio::test]
async fn answers_are_read_as_tonic_read_them() {
    let client = client_for(scripted_server().await).await;

    for id in ["whole", "split"] {
        let task = client.get_task(id, None).await.unwrap();
        assert_eq!(task.id, id);
        assert_eq!(task.status.state, a2a_types::TaskState::Completed);
    }

    let not_found = client.get_task("error-after-data", None).await.unwrap_err();
    assert!(
        matches!(
            &not_found,
            ClientError::Protocol { error: A2aError::TaskNotFound { .. }, message } if message == "no such task"
        ),
        "{not_found:?}"
    );
    // As tonic's generated client gave them, word for word (checked against it).
    let expected = [
        (
            "trailers-only",
            r#"protocol Internal { detail: "boom" }: boom"#,
        ),
        (
            "no-status",
            "http: protocol error: missing grpc-status trailer, stream was terminated without a final status (possible truncation by a proxy or load balancer)",
        ),
        (
            "gzip",
            r#"protocol MethodNotFound { method: "Content is compressed with `gzip` which isn't supported" }: Content is compressed with `gzip` which isn't supported"#,
        ),
        (
            "compressed-flag",
            r#"protocol Internal { detail: "protocol error: received message with compressed-flag but no grpc-encoding was specified" }: protocol error: received message with compressed-flag but no grpc-encoding was specified"#,
        ),
        (
            "too-large",
            r#"protocol Other { code: ErrorCode(-32603), message: "gRPC OutOfRange: Error, decoded message length too large: found 104857600 bytes, the limit is: 67108864 bytes", data: None }: Error, decoded message length too large: found 104857600 bytes, the limit is: 67108864 bytes"#,
        ),
        (
            "not-protobuf",
            r#"protocol Internal { detail: "failed to decode Protobuf message: invalid varint" }: failed to decode Protobuf message: invalid varint"#,
        ),
        (
            "cut-short",
            r#"protocol Internal { detail: "Missing response message." }: Missing response message."#,
        ),
        (
            "http-503",
            "http: grpc-status header missing, mapped from HTTP status code 503",
        ),
    ];
    for (id, want) in expected {
        let got = outcome(&client.get_task(id, None).await.unwrap_err());
        assert_eq!(got, want, "{id}");
    }
}
