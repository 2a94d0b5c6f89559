//! An HTTP/2 connection served as one task, its streams included.
//!
//! hyper runs each HTTP/2 stream as a task of its own by default: every request then crosses
//! from the connection's task to its stream's task and back, two cross-task wake-ups per
//! call (about a tenth of a unary gRPC call's samples were the scheduler's). Over HTTP/1 the
//! handler runs inside the connection's task. Here hyper's executor for the connection
//! queues the streams it starts ([`StreamQueue`]), and [`OneTask`] polls them beside the
//! connection, so a stream's wake-up, and the connection's after a stream answered, stay in
//! one task.
//!
//! What this changes: a connection's streams share one thread at a time, as an HTTP/1
//! connection's requests do. The work a request starts elsewhere (an agent's run is a task
//! of its own) is not affected, and handlers do not block. A stream that panics (a response
//! body, which the router's panic layer does not cover) ends alone, as its own task did:
//! the others on its connection go on.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::stream::FuturesUnordered;
use futures::{FutureExt as _, StreamExt as _};

use super::gather::WriteOut;

type StreamFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// hyper's executor for one HTTP/2 connection: what it starts (the connection's streams) is
/// queued for the connection's own task, [`OneTask`], instead of spawned.
#[derive(Clone, Default)]
pub(super) struct StreamQueue(Arc<Mutex<Vec<StreamFuture>>>);

impl std::fmt::Debug for StreamQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamQueue").finish_non_exhaustive()
    }
}

impl StreamQueue {
    fn take(&self) -> Vec<StreamFuture> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl<F> hyper::rt::Executor<F> for StreamQueue
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::pin(AssertUnwindSafe(fut).catch_unwind().map(drop)));
    }
}

/// A connection future and the streams it started on its [`StreamQueue`], polled in one
/// task, whose gathered writes are written at the end of each poll (`gather.rs`). It ends
/// with the connection's outcome once the connection and every stream have ended (a stream
/// outliving its connection ends as it would have in a task of its own).
pub(super) struct OneTask<C: Future, W> {
    connection: Option<Pin<Box<C>>>,
    outcome: Option<C::Output>,
    queue: StreamQueue,
    streams: FuturesUnordered<StreamFuture>,
    writes: W,
}

impl<C: Future, W: WriteOut> OneTask<C, W> {
    pub(super) fn new(connection: C, queue: StreamQueue, writes: W) -> Self {
        Self {
            connection: Some(Box::pin(connection)),
            outcome: None,
            queue,
            streams: FuturesUnordered::new(),
            writes,
        }
    }

    /// Polls the connection (while it runs), takes up the streams it started, and polls
    /// the streams that were woken; whether one of them ended.
    fn poll_once(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(connection) = &mut self.connection
            && let Poll::Ready(outcome) = connection.as_mut().poll(cx)
        {
            self.outcome = Some(outcome);
            self.connection = None;
        }
        self.streams.extend(self.queue.take());
        let mut ended = false;
        while let Poll::Ready(Some(())) = self.streams.poll_next_unpin(cx) {
            ended = true;
        }
        ended
    }
}

impl<C: Future, W> Unpin for OneTask<C, W> {}

impl<C: Future, W> Drop for OneTask<C, W> {
    fn drop(&mut self) {
        // Queued futures hold the queue (hyper's executor): dropped with the task, not
        // left in a cycle.
        drop(self.queue.take());
    }
}

impl<C: Future, W: WriteOut> Future for OneTask<C, W> {
    type Output = C::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = &mut *self;
        // A stream that ended has usually just queued its last frames: the connection is
        // polled again at once to write them, rather than on the wake-up it was sent.
        if this.poll_once(cx) && this.connection.is_some() {
            this.poll_once(cx);
        }
        // hyper starts futures from inside a stream's poll too (an upgraded connection's):
        // they are polled on the next turn, which is asked for here, as nothing else would.
        let late = this.queue.take();
        if !late.is_empty() {
            this.streams.extend(late);
            cx.waker().wake_by_ref();
        }
        this.writes.write_out(cx);
        if this.connection.is_none()
            && this.streams.is_empty()
            && let Some(outcome) = this.outcome.take()
        {
            return Poll::Ready(outcome);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::Context;

    use hyper::rt::Executor as _;

    use super::{OneTask, StreamQueue};
    use crate::listen::gather::WriteOut;

    struct NoWrites;

    impl WriteOut for NoWrites {
        fn write_out(&mut self, _: &mut Context<'_>) {}
    }

    #[tokio::test]
    async fn a_stream_that_panics_ends_alone() {
        let queue = StreamQueue::default();
        let finished = Arc::new(AtomicBool::new(false));
        queue.execute(async { panic!("a response body panicked") });
        let flag = finished.clone();
        queue.execute(async move {
            tokio::task::yield_now().await;
            flag.store(true, Ordering::SeqCst);
        });
        // The connection has ended; the task ends once its streams have.
        let outcome = OneTask::new(async { "connection done" }, queue, NoWrites).await;
        assert_eq!(outcome, "connection done");
        assert!(
            finished.load(Ordering::SeqCst),
            "the other stream ran to its end"
        );
    }

    /// A waker that records whether it was woken.
    #[derive(Default)]
    struct Woken(AtomicBool);

    impl std::task::Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_future_started_from_inside_a_stream_is_polled_on_a_turn_the_task_asks_for() {
        use futures::FutureExt as _;

        let queue = StreamQueue::default();
        // Streams that wait: the one that starts a future is then not the only one polled,
        // and nothing but the task itself asks for another turn.
        let (_never, idle) = tokio::sync::watch::channel(());
        for _ in 0..3 {
            let mut idle = idle.clone();
            queue.execute(async move {
                let _ = idle.changed().await;
            });
        }
        // As hyper does for an upgraded connection: a stream starts another future.
        let ran = Arc::new(AtomicBool::new(false));
        let (go, gone) = tokio::sync::oneshot::channel::<()>();
        let (inner_queue, flag) = (queue.clone(), ran.clone());
        queue.execute(async move {
            let _ = gone.await;
            inner_queue.execute(async move { flag.store(true, Ordering::SeqCst) });
            std::future::pending::<()>().await;
        });
        let mut task = OneTask::new(std::future::pending::<()>(), queue, NoWrites);
        let woken = Arc::new(Woken::default());
        let waker = std::task::Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(task.poll_unpin(&mut cx).is_pending());
        // The starting stream is woken from outside, alone.
        go.send(()).unwrap();
        while !ran.load(Ordering::SeqCst) {
            assert!(
                woken.0.swap(false, Ordering::SeqCst),
                "a future is left queued with nothing to poll it"
            );
            assert!(task.poll_unpin(&mut cx).is_pending());
        }
    }
}
