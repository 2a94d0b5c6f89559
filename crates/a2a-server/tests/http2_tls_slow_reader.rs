//! HTTP/2 over TLS to a client that reads slowly, from a small receive buffer. The server
//! gathers what a connection's poll writes and hands it to rustls, which takes it even when
//! the socket is full and keeps the records until a later write or flush gets them out; a
//! 9 MiB answer (more than the kernel's largest send buffer) must still arrive whole and
//! end, with no keep-alive PING (set 10 minutes apart here) to push a stuck tail out. The
//! unit test `an_unfinished_flush_is_finished_by_the_next_write_out` (listen/gather.rs)
//! pins the flush rule itself, which this race does not reliably reach.

mod common;

use std::sync::Arc;
use std::time::Duration;

use a2a_server::{ConnectionLimits, Tls};
use common::*;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../a2a-cli/tests/fixtures");

/// A TLS server (the test certificate for 127.0.0.1) whose keep-alive PINGs are 10 minutes
/// apart.
async fn tls_server() -> TestServer {
    let tls = Tls::from_pem_files(
        format!("{FIXTURES}/tls-cert.pem").as_ref(),
        format!("{FIXTURES}/tls-key.pem").as_ref(),
    )
    .unwrap();
    let mut limits = ConnectionLimits::default();
    limits.http2_keep_alive_interval = Duration::from_secs(600);
    start(Setup {
        limits,
        tls: Some(tls),
        ..Setup::default()
    })
    .await
}

/// An HTTP/2 connection over TLS (ALPN `h2`) from a socket with a small receive buffer.
async fn slow_h2_client(
    addr: std::net::SocketAddr,
) -> hyper::client::conn::http2::SendRequest<Full<bytes::Bytes>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(format!("{FIXTURES}/tls-ca.pem")).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(16 * 1024).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(16 << 20)
        .initial_connection_window_size(16 << 20)
        .handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

#[tokio::test]
async fn a_slow_reader_gets_every_byte_of_a_large_answer_over_tls() {
    let s = tls_server().await;
    let addr: std::net::SocketAddr = s.base.trim_start_matches("https://").parse().unwrap();
    let mut client = slow_h2_client(addr).await;
    let text = format!("reply {}", "z".repeat(9 << 20));
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": user(&text)},
    });
    let request = hyper::Request::post(format!("https://{addr}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(Full::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(60), async {
        let response = client.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        // Drains slowly: the server's socket and rustls fill up behind it.
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.unwrap().into_data() {
                bytes.extend_from_slice(&data);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        bytes
    })
    .await
    .expect("the end of the answer never arrived");
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let got = answer["result"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", &answer.to_string()[..200]));
    assert_eq!(got.len(), text.len() + "re: ".len());
    assert!(got == format!("re: {text}"), "the answer was corrupted");
}
