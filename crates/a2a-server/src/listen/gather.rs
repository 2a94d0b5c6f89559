//! An HTTP/2 connection's writes, gathered and written once per poll of its task.
//!
//! h2 writes a frame's payload on its own when it is larger than 256 bytes (it chains the
//! payload instead of copying it), and flushes before it queues the frame after it. A gRPC
//! answer is HEADERS, DATA and trailers: two writes (two system calls, two TCP segments)
//! per unary call whose message exceeds 256 bytes, where HTTP/1 makes one. Here what h2
//! writes in one poll of the connection's task is copied into one buffer, h2's flushes
//! only end its turn, and the task ([`super::http2::OneTask`]) writes the buffer once at the
//! end of its poll. Nothing waits longer than the poll that produced it.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Gathered bytes at which a write first waits for the connection to take them all: the
/// peer is slower than the answers. No write is taken past it.
const BACKPRESSURE_AT: usize = 64 * 1024;

/// A buffer's capacity kept between polls; a larger one (a burst) is freed once written.
const KEPT_CAPACITY: usize = 16 * 1024;

/// A connection whose writes are gathered: hyper's side of it. Reads pass through.
#[derive(Debug)]
pub(super) struct Gathered<T>(Arc<Mutex<Shared<T>>>);

/// The task's side: writes what was gathered ([`WriteOut::write_out`]).
#[derive(Debug)]
pub(super) struct Gatherer<T>(Arc<Mutex<Shared<T>>>);

#[derive(Debug)]
struct Shared<T> {
    io: T,
    out: Vec<u8>,
    /// Bytes of `out` already written (a partial write).
    written: usize,
    /// The error a write of the gathered bytes met, for hyper's next read or write.
    failed: Option<io::Error>,
    /// `io`'s flush did not finish: bytes may wait inside it (TLS records rustls took
    /// while the socket was full), so the next write-out flushes again, gathered bytes
    /// or not.
    flushing: bool,
}

/// `io` with its writes gathered, and the handle that writes them.
pub(super) fn gathered<T>(io: T) -> (Gathered<T>, Gatherer<T>) {
    let shared = Arc::new(Mutex::new(Shared {
        io,
        out: Vec::new(),
        written: 0,
        failed: None,
        flushing: false,
    }));
    (Gathered(shared.clone()), Gatherer(shared))
}

fn lock<T>(shared: &Mutex<Shared<T>>) -> MutexGuard<'_, Shared<T>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T> Shared<T> {
    /// The error a write-out met, once, for whichever side of the connection comes next.
    fn take_failure(&mut self) -> io::Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<T: AsyncWrite + Unpin> Shared<T> {
    /// Writes what was gathered (pending while the peer does not take it), then flushes
    /// `io` (TLS keeps records of its own).
    fn poll_write_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.out.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.out[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        if self.out.capacity() > KEPT_CAPACITY {
            self.out = Vec::new();
        } else {
            self.out.clear();
        }
        self.written = 0;
        self.flushing = true;
        ready!(Pin::new(&mut self.io).poll_flush(cx))?;
        self.flushing = false;
        Poll::Ready(Ok(()))
    }

    /// Whether a write-out has anything to do.
    fn idle(&self) -> bool {
        self.out.is_empty() && !self.flushing
    }

    /// Keeps a write-out's error for hyper's next read or write, and drops what can no
    /// longer be written. Whether it is the first (the one to wake the task for).
    fn fail(&mut self, e: io::Error) -> bool {
        self.out = Vec::new();
        self.written = 0;
        self.flushing = false;
        let first = self.failed.is_none();
        self.failed = Some(e);
        first
    }

    /// How many more bytes one write may add before the backpressure mark: all of a small
    /// write, a part of a large one (h2 writes a whole DATA frame at once, up to the
    /// peer's maximum frame size, and takes a partial write). Never 0 once `poll_room`
    /// is ready.
    fn room(&self) -> usize {
        BACKPRESSURE_AT.saturating_sub(self.out.len()).max(1)
    }

    /// Ready to gather more: below the backpressure mark with no write under way, or
    /// once all that was gathered is written (a slow peer drains the whole buffer before
    /// more is taken, rather than a little at a time).
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.take_failure()?;
        if self.written > 0 || self.out.len() >= BACKPRESSURE_AT {
            ready!(self.poll_write_out(cx))?;
        }
        Poll::Ready(Ok(()))
    }
}

/// What a connection's task does at the end of each poll.
pub(super) trait WriteOut {
    /// Writes what was gathered as far as the peer takes it. An error is kept for the
    /// connection's next read or write, and the task woken to meet it.
    fn write_out(&mut self, cx: &mut Context<'_>);
}

impl<T: AsyncWrite + Unpin> WriteOut for Gatherer<T> {
    fn write_out(&mut self, cx: &mut Context<'_>) {
        let mut shared = lock(&self.0);
        if shared.idle() {
            return;
        }
        if let Poll::Ready(Err(e)) = shared.poll_write_out(cx)
            && shared.fail(e)
        {
            cx.waker().wake_by_ref();
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Gathered<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut shared = lock(&self.0);
        shared.take_failure()?;
        Pin::new(&mut shared.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Gathered<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut shared = lock(&self.0);
        ready!(shared.poll_room(cx))?;
        let n = buf.len().min(shared.room());
        shared.out.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut shared = lock(&self.0);
        ready!(shared.poll_room(cx))?;
        let mut room = shared.room();
        let mut n = 0;
        for buf in bufs {
            let take = buf.len().min(room);
            shared.out.extend_from_slice(&buf[..take]);
            n += take;
            room -= take;
            if room == 0 {
                break;
            }
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        // Chained payloads are copied here once, not by h2 as well.
        true
    }

    /// Ends h2's turn: the bytes go out at the end of the task's poll.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(lock(&self.0).take_failure())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut shared = lock(&self.0);
        shared.take_failure()?;
        ready!(shared.poll_write_out(cx))?;
        Pin::new(&mut shared.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::{WriteOut as _, gathered};

    /// Runs `f` with a context, as a task's poll would.
    fn in_poll<R>(f: impl FnOnce(&mut std::task::Context<'_>) -> R) -> R {
        f(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    }

    #[tokio::test]
    async fn writes_wait_for_the_end_of_the_poll_and_go_out_as_one() {
        let (mut peer, ours) = tokio::io::duplex(1 << 20);
        let (mut io, mut gatherer) = gathered(ours);
        io.write_all(b"HEADERS").await.unwrap();
        io.flush().await.unwrap();
        io.write_all(b"DATA").await.unwrap();
        io.flush().await.unwrap();
        let mut buf = [0u8; 32];
        let early = in_poll(|cx| {
            use tokio::io::AsyncRead as _;
            std::pin::Pin::new(&mut peer).poll_read(cx, &mut tokio::io::ReadBuf::new(&mut buf))
        });
        assert!(
            early.is_pending(),
            "nothing is written before the poll ends"
        );
        in_poll(|cx| gatherer.write_out(cx));
        let n = peer.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"HEADERSDATA");
    }

    #[tokio::test]
    async fn a_peer_that_stops_reading_holds_writes_back_past_the_mark() {
        let (mut peer, ours) = tokio::io::duplex(1024);
        let (mut io, _gatherer) = gathered(ours);
        let chunk = vec![7u8; 16 * 1024];
        for _ in 0..4 {
            io.write_all(&chunk).await.unwrap();
        }
        let blocked = in_poll(|cx| {
            use tokio::io::AsyncWrite as _;
            std::pin::Pin::new(&mut io).poll_write(cx, &chunk)
        });
        assert!(
            blocked.is_pending(),
            "a write waits while 64 KiB are unread"
        );
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            peer.read_to_end(&mut all).await.map(|_| all.len())
        });
        io.write_all(&chunk).await.unwrap();
        io.shutdown().await.unwrap();
        assert!(reader.await.unwrap().unwrap() >= 5 * chunk.len());
    }

    /// A connection whose first flush does not finish (TLS with records left to send).
    struct FlushLater(std::sync::Arc<std::sync::atomic::AtomicUsize>);

    impl tokio::io::AsyncWrite for FlushLater {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let flushes = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if flushes == 1 {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(Ok(()))
            }
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn an_unfinished_flush_is_finished_by_the_next_write_out() {
        let flushes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (mut io, mut gatherer) = gathered(FlushLater(flushes.clone()));
        let count = || flushes.load(std::sync::atomic::Ordering::SeqCst);
        io.write_all(b"last frames").await.unwrap();
        in_poll(|cx| gatherer.write_out(cx));
        assert_eq!(count(), 1, "written, then flushed; the flush is pending");
        // Nothing new was gathered, but the bytes inside the connection still must go.
        in_poll(|cx| gatherer.write_out(cx));
        assert_eq!(count(), 2, "the next write-out flushes again");
        in_poll(|cx| gatherer.write_out(cx));
        assert_eq!(
            count(),
            2,
            "and once flushed, a write-out has nothing to do"
        );
    }

    #[test]
    fn one_write_takes_no_more_than_the_mark() {
        let (_peer, ours) = tokio::io::duplex(1024);
        let (mut io, _gatherer) = gathered(ours);
        let frame = vec![1u8; 1 << 20];
        let slices = [
            std::io::IoSlice::new(&frame[..9]),
            std::io::IoSlice::new(&frame),
        ];
        let taken = in_poll(|cx| {
            use tokio::io::AsyncWrite as _;
            std::pin::Pin::new(&mut io).poll_write_vectored(cx, &slices)
        });
        assert!(matches!(taken, std::task::Poll::Ready(Ok(n)) if n == super::BACKPRESSURE_AT));
        let taken = in_poll(|cx| {
            use tokio::io::AsyncWrite as _;
            std::pin::Pin::new(&mut io).poll_write(cx, &frame)
        });
        assert!(
            taken.is_pending(),
            "at the mark, a write waits for the peer"
        );
    }

    #[tokio::test]
    async fn a_failed_write_out_ends_the_next_read() {
        let (peer, ours) = tokio::io::duplex(1024);
        let (mut io, mut gatherer) = gathered(ours);
        drop(peer);
        io.write_all(b"late").await.unwrap();
        in_poll(|cx| gatherer.write_out(cx));
        let mut buf = [0u8; 4];
        assert!(io.read(&mut buf).await.is_err());
    }
}
