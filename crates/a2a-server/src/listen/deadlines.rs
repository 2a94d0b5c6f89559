//! Deadlines on a connection's phases: a request body that must arrive whole in time, and a
//! connection whose HTTP/2 preface and blocked writes are timed.

use std::time::Duration;

/// A request body that must arrive whole by a deadline (a body trickled in byte by byte is
/// cut). No timer is armed for a body already received when it is first read.
#[derive(Debug)]
pub(crate) struct DeadlineBody {
    body: axum::body::Body,
    deadline: tokio::time::Instant,
    timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl DeadlineBody {
    pub(crate) fn new(body: axum::body::Body, within: Duration) -> Self {
        Self {
            body,
            deadline: tokio::time::Instant::now() + within,
            timer: None,
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use std::future::Future;
        use std::task::Poll;
        let this = &mut *self;
        if let Poll::Ready(frame) = std::pin::Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                crate::metrics::global().connection_refused("body_timeout");
                Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The error of a [`DeadlineBody`] whose deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
struct BodyTimedOut;

/// The HTTP/2 connection preface, which version detection waits for whole.
pub(super) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const PREFACE_LEN: usize = PREFACE.len();

type Timer = std::pin::Pin<Box<tokio::time::Sleep>>;

/// A connection with deadlines on its reads and writes, each optional:
/// - the preface deadline: reads fail with `TimedOut` while what was sent so far is a strict
///   prefix of the HTTP/2 preface (nothing at all included) past it. Once the bytes differ
///   from the preface (HTTP/1.1, whose heads hyper times itself) or complete it, reads pass
///   through;
/// - the write timeout: writes fail with `TimedOut` once one has been blocked that long (the
///   peer stopped reading). Its clock runs only while a write is pending.
///
/// Timers are made lazily: a connection whose reads and writes never wait allocates none.
#[derive(Debug)]
pub(super) struct Deadlines<T> {
    io: T,
    /// `None` once the preface question is settled (or when not asked).
    preface_by: Option<tokio::time::Instant>,
    read: usize,
    read_timer: Option<Timer>,
    write_timeout: Option<Duration>,
    write_timer: Option<Timer>,
    /// A write is blocked and the write timer runs for it.
    blocked: bool,
}

impl<T> Deadlines<T> {
    pub(super) fn new(io: T) -> Self {
        Self {
            io,
            preface_by: None,
            read: 0,
            read_timer: None,
            write_timeout: None,
            write_timer: None,
            blocked: false,
        }
    }

    pub(super) fn preface_by(mut self, deadline: tokio::time::Instant) -> Self {
        self.preface_by = Some(deadline);
        self
    }

    pub(super) fn write_within(mut self, timeout: Duration) -> Self {
        self.write_timeout = Some(timeout);
        self
    }

    /// Passes a write's outcome through; a pending write starts (or checks) the clock.
    fn watch_write<R>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        outcome: std::task::Poll<std::io::Result<R>>,
    ) -> std::task::Poll<std::io::Result<R>> {
        let Some(timeout) = self.write_timeout else {
            return outcome;
        };
        if outcome.is_ready() {
            self.blocked = false;
            return outcome;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.blocked {
            timer.as_mut().reset(deadline);
            self.blocked = true;
        }
        expired(timer, cx, "write_timeout", "the peer stopped reading")
    }
}

/// `TimedOut` (counted as a refusal for `reason`) once `timer` has fired, else pending.
fn expired<R>(
    timer: &mut Timer,
    cx: &mut std::task::Context<'_>,
    reason: &'static str,
    message: &'static str,
) -> std::task::Poll<std::io::Result<R>> {
    use std::future::Future;
    match timer.as_mut().poll(cx) {
        std::task::Poll::Ready(()) => {
            crate::metrics::global().connection_refused(reason);
            std::task::Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                message,
            )))
        }
        std::task::Poll::Pending => std::task::Poll::Pending,
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Deadlines<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let outcome = std::pin::Pin::new(&mut this.io).poll_read(cx, buf);
        let Some(deadline) = this.preface_by else {
            return outcome;
        };
        if outcome.is_ready() {
            let new = &buf.filled()[before..];
            let at = this.read.min(PREFACE_LEN);
            let n = new.len().min(PREFACE_LEN - at);
            let still_preface = new[..n] == PREFACE[at..at + n];
            this.read += new.len();
            if !still_preface || this.read >= PREFACE_LEN {
                this.preface_by = None;
                this.read_timer = None;
            }
            return outcome;
        }
        let timer = this
            .read_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        expired(timer, cx, "idle", "the request did not start in time")
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Deadlines<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch_write(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch_write(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_flush(cx);
        self.watch_write(cx, outcome)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let outcome = std::pin::Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch_write(cx, outcome)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::Deadlines;

    /// What the server's side of a connection that sent `sent` reads after `wait`.
    async fn read_after(sent: &[u8], wait: Duration) -> std::io::Result<usize> {
        let (mut client, server) = tokio::io::duplex(1024);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut server = Deadlines::new(server).preface_by(deadline);
        client.write_all(sent).await.unwrap();
        let mut buf = [0u8; 64];
        let first = server.read(&mut buf).await.unwrap();
        assert_eq!(first, sent.len());
        match tokio::time::timeout(wait, server.read(&mut buf)).await {
            Ok(result) => result,
            Err(_) => Ok(usize::MAX), // still waiting
        }
    }

    #[tokio::test(start_paused = true)]
    async fn part_of_the_http2_preface_is_cut_at_the_deadline() {
        let e = read_after(b"PRI * HTTP/2.0\r\n", Duration::from_secs(11))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    }

    #[tokio::test(start_paused = true)]
    async fn a_short_http1_request_is_not_cut_while_its_answer_runs() {
        // 18 bytes, fewer than the preface's 24: hyper's next read waits for the next
        // request (or EOF) while a long answer streams, and must not fail.
        let read = read_after(b"GET / HTTP/1.0\r\n\r\n", Duration::from_secs(60)).await;
        assert_eq!(read.unwrap(), usize::MAX, "still waiting, no error");
    }
}
