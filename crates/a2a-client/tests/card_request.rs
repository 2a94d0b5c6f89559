//! The card request is a request like any other: it announces `A2A-Version`; and a 404 keeps
//! what the server said.

use std::sync::{Arc, Mutex};

use a2a_client::{A2aClient, ClientError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that answers every request with a 404 JSON body and records the request heads.
async fn recording_404() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 1024];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf).to_lowercase());
            let body = r#"{"error":{"code":404,"message":"no agent \"x\" here","agents":["alpha","beta"]}}"#;
            let resp = format!(
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
        }
    });
    (format!("http://{addr}/a2a/x"), heads)
}

#[tokio::test]
async fn card_requests_send_the_version_and_404s_keep_the_hint() {
    let (url, heads) = recording_404().await;
    let err = A2aClient::connect(&url).await.unwrap_err();
    let ClientError::CardNotFound { hint, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        hint.as_deref(),
        Some("no agent \"x\" here (agents here: alpha, beta)")
    );
    let heads = heads.lock().unwrap();
    assert!(!heads.is_empty());
    for head in heads.iter() {
        assert!(head.contains("a2a-version: 1.0"), "{head}");
    }
}
