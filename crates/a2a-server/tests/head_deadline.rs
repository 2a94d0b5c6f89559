//! Each HTTP/1.1 request head on a kept-alive connection has the whole head timeout to
//! arrive, counted from when the server starts waiting for it; a connection left idle is
//! closed at its head's deadline. The connection's head deadlines share one clock, armed for
//! an earlier head (`listen/head_timer.rs`): a head that comes after that earlier deadline,
//! but within its own, is answered.

mod common;

use std::time::{Duration, Instant};

use a2a_server::ConnectionLimits;
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Long enough that a slow machine's scheduling (server and client share one test runtime)
/// does not decide the outcome: the checks leave a quarter of it or more either side.
const HEAD_TIMEOUT: Duration = Duration::from_secs(4);

const CARD_REQUEST: &[u8] =
    b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: test\r\nConnection: keep-alive\r\n\r\n";

async fn limited_server() -> TestServer {
    let mut limits = ConnectionLimits::default();
    limits.header_read_timeout = HEAD_TIMEOUT;
    start(Setup {
        limits,
        ..Setup::default()
    })
    .await
}

/// Reads one whole response (head and a `content-length` body); its status line. `None`
/// when the server closed the connection first.
async fn response(conn: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + length {
                return head.lines().next().map(str::to_owned);
            }
        }
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A connection to `s`.
async fn connect(s: &TestServer) -> TcpStream {
    TcpStream::connect(s.base.trim_start_matches("http://"))
        .await
        .unwrap()
}

/// Asks for the agent card on `conn`; the answer's status line (`None`: closed first).
async fn card(conn: &mut TcpStream) -> Option<String> {
    conn.write_all(CARD_REQUEST).await.ok()?;
    response(conn).await
}

const OK: Option<&str> = Some("http/1.1 200 ok");

/// Whether the server closes `conn` within `within` (nothing else arrives meanwhile).
async fn closed_within(conn: &mut TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(within, conn.read(&mut byte)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test]
async fn a_head_after_an_earlier_heads_deadline_but_within_its_own_is_answered() {
    let s = limited_server().await;
    let mut conn = connect(&s).await;
    assert_eq!(card(&mut conn).await.as_deref(), OK);
    // The server now waits for the second head: its deadline is 4 s from here.
    let waiting_since = Instant::now();
    tokio::time::sleep(HEAD_TIMEOUT * 6 / 10).await;
    assert_eq!(card(&mut conn).await.as_deref(), OK);
    // The third head comes after the second head's deadline (4 s after `waiting_since`),
    // but 2.8 s into its own 4 s.
    tokio::time::sleep(HEAD_TIMEOUT * 7 / 10).await;
    assert!(waiting_since.elapsed() > HEAD_TIMEOUT);
    assert_eq!(
        card(&mut conn).await.as_deref(),
        OK,
        "the connection was closed at an earlier head's deadline"
    );
}

#[tokio::test]
async fn a_kept_alive_connection_left_idle_or_half_sent_is_closed_at_its_heads_deadline() {
    let s = limited_server().await;
    for rest in [&b""[..], b"GET /.well-known/agent-card.json HTTP/1.1\r\nHo"] {
        let mut conn = connect(&s).await;
        assert_eq!(card(&mut conn).await.as_deref(), OK);
        // A second request, 2 s in: the clock is now armed for the first wait's deadline.
        tokio::time::sleep(HEAD_TIMEOUT / 2).await;
        assert_eq!(card(&mut conn).await.as_deref(), OK);
        conn.write_all(rest).await.unwrap();
        let waiting_since = Instant::now();
        // Open past the earlier deadline (2 s in), closed by its own (4 s in): not later
        // than 5.5 s, before a clock armed anew from the earlier deadline (6 s) would fire.
        assert!(
            !closed_within(&mut conn, HEAD_TIMEOUT * 3 / 4).await,
            "closed before its deadline"
        );
        assert!(
            closed_within(&mut conn, HEAD_TIMEOUT / 4 + HEAD_TIMEOUT * 3 / 8).await,
            "still open {:?} after the server began waiting for its head",
            waiting_since.elapsed()
        );
    }
}
