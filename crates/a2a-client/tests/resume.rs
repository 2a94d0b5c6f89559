//! A stream whose connection drops mid-way resumes from the last event id without loss.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use a2a_client::A2aClient;
use a2a_host::AgentHost;
use a2a_host::builtin;
use a2a_server::ServeOptions;
use a2a_types::{Message, SendMessageRequest, StreamResponse, TaskState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Forwards to `upstream`; the first event-stream response is cut after `events` SSE events.
async fn flaky_proxy(upstream: String, events: usize) -> (String, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let cut_done = Arc::new(AtomicBool::new(false));
    let cut = cut_done.clone();
    tokio::spawn(async move {
        loop {
            let Ok((down, _)) = listener.accept().await else {
                return;
            };
            let up = TcpStream::connect(&upstream).await.unwrap();
            let cut_done = cut_done.clone();
            tokio::spawn(async move {
                let (mut dr, mut dw) = down.into_split();
                let (mut ur, mut uw) = up.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut dr, &mut uw).await;
                });
                let mut seen = Vec::new();
                let mut buf = [0u8; 8192];
                loop {
                    let n = match ur.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let chunk = &buf[..n];
                    seen.extend_from_slice(chunk);
                    let text = String::from_utf8_lossy(&seen);
                    if text.contains("text/event-stream") && !cut_done.load(Ordering::SeqCst) {
                        let body_start = text.find("\r\n\r\n").map_or(0, |i| i + 4);
                        let ends: Vec<usize> = text[body_start..]
                            .match_indices("\n\n")
                            .map(|(i, _)| body_start + i + 2)
                            .collect();
                        if ends.len() >= events {
                            // Send up to the end of the n-th event, then drop the connection.
                            let already = seen.len() - n;
                            let upto = ends[events - 1].saturating_sub(already).min(n);
                            let _ = dw.write_all(&chunk[..upto]).await;
                            cut_done.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                    if dw.write_all(chunk).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), cut)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_stream_resumes_without_loss() {
    let agent = builtin::builtin("slow").unwrap();
    let host = AgentHost::new(ServeOptions::default()).root(agent.into());
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    let (proxy, cut) = flaky_proxy(addr.to_string(), 2).await;

    // The card advertises the server's own address; talk to the proxy instead.
    let client = A2aClient::builder()
        .endpoint(&format!("{proxy}/"), a2a_client::ProtocolVersion::V1)
        .unwrap();
    let mut stream = client
        .stream(SendMessageRequest::new(Message::user_text("0.3")))
        .await
        .unwrap();
    let mut ids = Vec::new();
    let mut last = None;
    while let Some(ev) = stream.next().await {
        let ev = ev.expect("the stream resumes instead of failing");
        ids.push(ev.id.clone().unwrap_or_default());
        last = Some(ev);
    }
    assert!(
        cut.load(Ordering::SeqCst),
        "the proxy dropped the first stream"
    );
    assert_eq!(ids, ["1", "2", "3", "4", "5"], "every event exactly once");
    let StreamResponse::StatusUpdate(s) = last.unwrap().response else {
        panic!("last event")
    };
    assert_eq!(s.status.state, TaskState::Completed);
}
