//! The gRPC transport's connection, seen from the wire through a recording TCP proxy: a
//! call's request (HEADERS and its message) leaves in one write, and a connection the
//! other side ended is made again by the next call.

use a2a_client::{A2aClient, Binding, ProtocolVersion};
use a2a_host::AgentHost;
use a2a_server::ServeOptions;
use a2a_types::{Message, SendMessageRequest};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};

/// A proxy in front of `upstream` that records what each read from the client returned,
/// and can end the connection it carries.
struct Proxy {
    addr: std::net::SocketAddr,
    /// Every read from the client, in order, on every connection.
    reads: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Connections accepted.
    accepted: Arc<Mutex<usize>>,
    /// Ends the current connection: the proxy closes its side to the server and to the
    /// client, then reports once the client has closed its own.
    cut: mpsc::Sender<Arc<Notify>>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let reads = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(Mutex::new(0));
        let (cut, mut cuts) = mpsc::channel::<Arc<Notify>>(1);
        let (r, a) = (reads.clone(), accepted.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                *a.lock().unwrap() += 1;
                let mut server = TcpStream::connect(upstream).await.unwrap();
                let (mut from_client, mut to_server) = (vec![0u8; 64 * 1024], true);
                let mut from_server = vec![0u8; 64 * 1024];
                loop {
                    tokio::select! {
                        n = client.read(&mut from_client) => {
                            let n = n.unwrap_or(0);
                            if n == 0 { break; }
                            r.lock().unwrap().push(from_client[..n].to_vec());
                            if to_server && server.write_all(&from_client[..n]).await.is_err() {
                                to_server = false;
                            }
                        }
                        n = server.read(&mut from_server), if to_server => {
                            let n = n.unwrap_or(0);
                            if n == 0 || client.write_all(&from_server[..n]).await.is_err() {
                                break;
                            }
                        }
                        Some(done) = cuts.recv() => {
                            let _ = server.shutdown().await;
                            let _ = client.shutdown().await;
                            // Whatever the client still sends, until it closes.
                            while client.read(&mut from_client).await.unwrap_or(0) > 0 {}
                            done.notify_one();
                            break;
                        }
                    }
                }
            }
        });
        Self {
            addr,
            reads,
            accepted,
            cut,
        }
    }
}

/// A gRPC client for the conformance agent of a new agent host, reaching it through a new
/// proxy: the agent's card, read directly, with its gRPC address replaced by the proxy's.
async fn through_proxy() -> (Proxy, A2aClient) {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let server = a2a_server::spawn_local(host.router()).await.unwrap();
    let proxy = Proxy::start(server).await;
    let client = client_at(server, proxy.addr).await;
    (proxy, client)
}

/// A gRPC client for the conformance agent served at `server`, sending to `to` instead.
async fn client_at(server: std::net::SocketAddr, to: std::net::SocketAddr) -> A2aClient {
    let direct = A2aClient::builder()
        .binding(Binding::Grpc)
        .connect(&format!("http://{server}/a2a/conformance"))
        .await
        .unwrap();
    let mut card = direct.card().clone();
    for iface in &mut card.supported_interfaces {
        iface.url = iface.url.replace(&server.to_string(), &to.to_string());
    }
    A2aClient::builder()
        .protocol_version(ProtocolVersion::V1)
        .binding(Binding::Grpc)
        .with_card(card)
        .unwrap()
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

#[tokio::test]
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
    let mut calls = 0;
    for (kind, stream, at) in frames(&wire) {
        // HEADERS of a request: its DATA frame must have come in the same read.
        if kind == 0x1 && stream != 0 {
            let data = frames(&wire)
                .into_iter()
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
    let closed = Arc::new(Notify::new());
    proxy.cut.send(closed.clone()).await.unwrap();
    // Awaited: the client has seen its connection end (and closed it).
    closed.notified().await;
    client.send(send("tck-complete-task 2")).await.unwrap();
    assert_eq!(*proxy.accepted.lock().unwrap(), 2);
}

#[tokio::test]
async fn nothing_listening_is_said_plainly() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
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
