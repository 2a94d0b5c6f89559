//! Which HTTP version a connection speaks, told from its first bytes before hyper reads them.
//!
//! hyper-util's version detection reads the first 24 bytes into a buffer of its own and hands
//! them to the HTTP/1 connection first: that 24-byte read makes hyper's read buffer grow
//! from 8 to 16 KiB on the next read, and every HTTP/1 connection keeps the larger buffer
//! for its life (10 000 open SSE streams: 80 MB more). Peeked here instead (plaintext) or
//! read off ALPN (TLS), the version picks a connection builder for that protocol alone,
//! whose first read takes the request as it comes.

use std::time::Duration;

use tokio::net::TcpStream;

use super::deadlines::PREFACE;

/// The protocol of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    Http1,
    Http2,
}

/// How long to wait for more bytes when those sent so far begin the HTTP/2 preface but do
/// not complete it (a client that splits its first 24 bytes across packets).
const PARTIAL_PREFACE_RETRY: Duration = Duration::from_millis(1);

/// The protocol `tcp` speaks, from bytes peeked (left for hyper to read): HTTP/2 once the
/// whole connection preface is there, HTTP/1.1 as soon as the bytes differ from it. `None`
/// when the peer closes first or `deadline` passes while what it sent is still a strict
/// prefix of the preface (nothing at all included).
pub(super) async fn protocol(tcp: &TcpStream, deadline: tokio::time::Instant) -> Option<Protocol> {
    let mut buf = [0u8; PREFACE.len()];
    loop {
        let n = match tokio::time::timeout_at(deadline, tcp.peek(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => n,
            Ok(_) | Err(_) => return None,
        };
        if buf[..n] != PREFACE[..n] {
            return Some(Protocol::Http1);
        }
        if n == PREFACE.len() {
            return Some(Protocol::Http2);
        }
        // `peek` answers at once while any byte waits, so it cannot wait for the next one.
        if tokio::time::Instant::now() + PARTIAL_PREFACE_RETRY >= deadline {
            return None;
        }
        tokio::time::sleep(PARTIAL_PREFACE_RETRY).await;
    }
}

/// The protocol a TLS client chose by ALPN, if it chose one.
pub(super) fn negotiated<IO>(stream: &tokio_rustls::server::TlsStream<IO>) -> Option<Protocol> {
    match stream.get_ref().1.alpn_protocol()? {
        b"h2" => Some(Protocol::Http2),
        b"http/1.1" => Some(Protocol::Http1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (client, server)
    }

    fn soon() -> tokio::time::Instant {
        tokio::time::Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn a_request_line_is_http1_and_stays_unread() {
        let (mut client, server) = pair().await;
        client.write_all(b"POST / HTTP/1.1\r\n").await.unwrap();
        assert_eq!(protocol(&server, soon()).await, Some(Protocol::Http1));
        let mut buf = [0u8; 4];
        assert_eq!(server.peek(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf, b"POST");
    }

    #[tokio::test]
    async fn the_preface_in_pieces_is_http2() {
        let (mut client, server) = pair().await;
        client.write_all(&PREFACE[..5]).await.unwrap();
        let rest = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            client.write_all(&PREFACE[5..]).await.unwrap();
            client
        });
        assert_eq!(protocol(&server, soon()).await, Some(Protocol::Http2));
        drop(rest.await.unwrap());
    }

    #[tokio::test]
    async fn a_preface_left_unfinished_times_out() {
        let (mut client, server) = pair().await;
        client.write_all(&PREFACE[..18]).await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(100);
        assert_eq!(protocol(&server, deadline).await, None);
        drop(client);
    }

    #[tokio::test]
    async fn silence_then_close_is_nothing() {
        let (client, server) = pair().await;
        drop(client);
        assert_eq!(protocol(&server, soon()).await, None);
    }
}
