//! The gRPC transport's connection, seen from the wire through a recording TCP proxy: a
//! call's request (HEADERS and its message) leaves in one write, a connection the other
//! side ended is made again by the next call, messages larger than HTTP/2's windows go both
//! ways, and headers HTTP/2 forbids are left out.

use a2a_client::{A2aClient, Binding, ClientBuilder, ProtocolVersion};
use a2a_host::AgentHost;
use a2a_server::ServeOptions;
use a2a_types::{AgentCard, Message, SendMessageRequest};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener as StdTcpListener, TcpStream as StdTcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// A proxy in front of `upstream` on threads of its own, so that it reads what the client
/// writes as soon as it arrives (a second write a moment later is a second read), recording
/// each read; it can end the connections it carries.
struct Proxy {
    addr: std::net::SocketAddr,
    /// Every read from the client, in order, on every connection.
    reads: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Connections accepted.
    accepted: Arc<AtomicUsize>,
    /// Both sockets of each connection carried.
    carried: Arc<Mutex<Vec<(StdTcpStream, StdTcpStream)>>>,
    /// Notified when a client closes its connection.
    client_closed: Arc<Notify>,
}

impl Proxy {
    fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = StdTcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let proxy = Self {
            addr,
            reads: Arc::default(),
            accepted: Arc::default(),
            carried: Arc::default(),
            client_closed: Arc::default(),
        };
        let (reads, accepted) = (proxy.reads.clone(), proxy.accepted.clone());
        let (carried, client_closed) = (proxy.carried.clone(), proxy.client_closed.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                accepted.fetch_add(1, Ordering::SeqCst);
                let server = StdTcpStream::connect(upstream).unwrap();
                let pair = (client.try_clone().unwrap(), server.try_clone().unwrap());
                carried.lock().unwrap().push(pair);
                let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (reads, client_closed) = (reads.clone(), client_closed.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n @ 1..) = from.read(&mut buf) {
                        reads.lock().unwrap().push(buf[..n].to_vec());
                        let _ = to.write_all(&buf[..n]);
                    }
                    client_closed.notify_one();
                });
                let (mut from, mut to) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(Shutdown::Write);
                });
            }
        });
        proxy
    }

    /// Ends every connection carried: closed towards the server, and towards the client
    /// (which then sees the end of its connection).
    fn cut(&self) {
        for (client, server) in self.carried.lock().unwrap().drain(..) {
            let _ = server.shutdown(Shutdown::Both);
            let _ = client.shutdown(Shutdown::Write);
        }
    }
}

/// A gRPC client for the conformance agent of a new agent host, reaching it through a new
/// proxy: the agent's card, read directly, with its gRPC address replaced by the proxy's.
async fn through_proxy() -> (Proxy, A2aClient) {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let server = a2a_server::spawn_local(host.router()).await.unwrap();
    let proxy = Proxy::start(server);
    let client = client_at(server, proxy.addr).await;
    (proxy, client)
}

/// A gRPC client for the conformance agent served at `server`, sending to `to` instead.
async fn client_at(server: std::net::SocketAddr, to: std::net::SocketAddr) -> A2aClient {
    grpc_builder().with_card(card_at(server, to).await).unwrap()
}

fn grpc_builder() -> ClientBuilder {
    A2aClient::builder()
        .protocol_version(ProtocolVersion::V1)
        .binding(Binding::Grpc)
}

/// The card of the conformance agent served at `server`, its addresses changed to `to`.
async fn card_at(server: std::net::SocketAddr, to: std::net::SocketAddr) -> AgentCard {
    let direct = grpc_builder()
        .connect(&format!("http://{server}/a2a/conformance"))
        .await
        .unwrap();
    let mut card = direct.card().clone();
    for iface in &mut card.supported_interfaces {
        iface.url = iface.url.replace(&server.to_string(), &to.to_string());
    }
    card
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

/// The HTTP/2 frames of `bytes` (after the connection preface when present), each as
/// (type, stream id, where it starts).
fn frames(bytes: &[u8]) -> Vec<(u8, u32, usize)> {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let mut at = if bytes.starts_with(PREFACE) {
        PREFACE.len()
    } else {
        0
    };
    let mut out = Vec::new();
    while at + 9 <= bytes.len() {
        let len = u32::from_be_bytes([0, bytes[at], bytes[at + 1], bytes[at + 2]]) as usize;
        let kind = bytes[at + 3];
        let stream = u32::from_be_bytes(bytes[at + 5..at + 9].try_into().unwrap()) & 0x7fff_ffff;
        out.push((kind, stream, at));
        at += 9 + len;
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_calls_headers_and_message_reach_the_server_in_one_read() {
    let (proxy, client) = through_proxy().await;
    for i in 0..20 {
        client
            .send(send(&format!("tck-complete-task {i}")))
            .await
            .unwrap();
    }
    // Which read carried each byte of the client's side of the connection.
    let reads = proxy.reads.lock().unwrap().clone();
    let mut read_of = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        read_of.extend(std::iter::repeat_n(i, r.len()));
    }
    let wire: Vec<u8> = reads.concat();
    let frames = frames(&wire);
    let mut calls = 0;
    for &(kind, stream, at) in &frames {
        // HEADERS of a request: its DATA frame must have come in the same read.
        if kind == 0x1 && stream != 0 {
            let data = frames
                .iter()
                .find(|(k, s, _)| *k == 0x0 && *s == stream)
                .expect("each call sends its message");
            assert_eq!(
                read_of[at], read_of[data.2],
                "stream {stream}: HEADERS and DATA came in separate reads"
            );
            calls += 1;
        }
    }
    assert_eq!(calls, 20, "every call seen on the wire");
}

#[tokio::test]
async fn a_connection_the_other_side_ended_is_made_again() {
    let (proxy, client) = through_proxy().await;
    client.send(send("tck-complete-task 1")).await.unwrap();
    proxy.cut();
    // Awaited: the client has seen its connection end (and closed it).
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        proxy.client_closed.notified(),
    )
    .await
    .expect("the client closes a connection the other side ended");
    client.send(send("tck-complete-task 2")).await.unwrap();
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn nothing_listening_is_said_plainly() {
    let listener = StdTcpListener::bind("127.0.0.1:0").unwrap();
    let nothing = listener.local_addr().unwrap();
    drop(listener);
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let server = a2a_server::spawn_local(host.router()).await.unwrap();
    let client = client_at(server, nothing).await;
    let err = client.send(send("tck-complete-task")).await.unwrap_err();
    assert!(
        err.to_string().contains("connection refused"),
        "unexpected error: {err}"
    );
}

#[tokio::test]
async fn messages_larger_than_the_windows_go_both_ways() {
    let (proxy, client) = through_proxy().await;
    // 3 MiB: past h2's first 64 KiB window going out, and the 2 MiB stream window coming
    // back (the answer's task holds the message in its history).
    let text = "x".repeat(3 * 1024 * 1024);
    let task = match client.send(send(&text)).await.unwrap() {
        a2a_types::SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    };
    let echoed =
        task.history.iter().flat_map(|m| &m.parts).any(
            |p| matches!(&p.content, a2a_types::PartContent::Text(t) if t.len() == text.len()),
        );
    assert!(echoed, "the task's history holds the whole message");
    let sent: usize = proxy.reads.lock().unwrap().iter().map(Vec::len).sum();
    assert!(sent > text.len(), "the message went through the proxy");
}

#[tokio::test]
async fn headers_http2_forbids_are_left_out() {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let server = a2a_server::spawn_local(host.router()).await.unwrap();
    // A header a caller may set for every binding; HTTP/2 forbids it (h2 refuses to send it).
    let client = grpc_builder()
        .header("Connection", "keep-alive")
        .with_card(card_at(server, server).await)
        .unwrap();
    client.send(send("tck-complete-task")).await.unwrap();
}
