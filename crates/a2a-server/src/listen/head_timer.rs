//! The clock of an HTTP/1.1 connection's head deadline ([`ConnectionLimits::header_read_timeout`](super::ConnectionLimits::header_read_timeout)),
//! armed once per connection instead of once per request.
//!
//! hyper times each request head with a sleep of its own, from when it starts waiting for the
//! head until the head is whole: on a kept-alive connection that is every request. With
//! `TokioTimer`, each one is a timer made, entered in tokio's timer wheel and taken out
//! again (a lock each way): about 2 % of a blocking send's CPU, although a head that
//! arrives in time never needs the timer to fire.
//!
//! Here a connection keeps one tokio sleep ([`HeadTimer`]). The sleep hyper asks for a head
//! ([`HeadSleep`]) only notes its deadline and polls the connection's sleep: a head that
//! arrives in time leaves that sleep armed, for an earlier head's deadline, and nothing else
//! happens. When it fires for a deadline that is not the current head's (that head arrived),
//! it is armed again for the current one, so it moves once per timeout at most, not once a
//! request. A head still not whole at its own deadline gets `Ready`, as with hyper's own
//! sleep. The one cost: a connection kept alive and idle past an earlier head's deadline
//! wakes once for it and does nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// The connection's one tokio sleep, made at the first head that waits.
type Armed = Arc<Mutex<Option<Pin<Box<Sleep>>>>>;

/// One connection's timer for hyper (`http1::Builder::timer`): every sleep it makes shares
/// the connection's one tokio sleep. Made for each connection.
#[derive(Debug, Default)]
pub(super) struct HeadTimer {
    armed: Armed,
}

impl hyper::rt::Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until((Instant::now() + duration).into_std())
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HeadSleep {
            armed: self.armed.clone(),
            deadline: deadline.into(),
        })
    }

    // tokio's clock, as `TokioTimer`'s: paused in tests like the sleeps.
    fn now(&self) -> std::time::Instant {
        Instant::now().into_std()
    }
}

/// A head's deadline, kept by the connection's sleep.
#[derive(Debug)]
struct HeadSleep {
    armed: Armed,
    deadline: Instant,
}

impl Future for HeadSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        // Only the connection's task polls its sleeps: the lock is never contended.
        let mut armed = self.armed.lock().unwrap_or_else(PoisonError::into_inner);
        let sleep = armed.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        // Armed for later than this head may wait (deadlines asked for out of order).
        if sleep.deadline() > deadline {
            sleep.as_mut().reset(deadline);
        }
        loop {
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if sleep.deadline() >= deadline {
                return Poll::Ready(());
            }
            // It fired for an earlier head, which arrived: arm it for this one. (A deadline
            // already past fires at once, and the next turn returns `Ready`.)
            sleep.as_mut().reset(deadline);
        }
    }
}

impl hyper::rt::Sleep for HeadSleep {}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hyper::rt::Timer;

    use super::*;

    /// Polls `sleep` once, with a waker that does nothing.
    fn ready(sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        sleep.as_mut().poll(&mut cx).is_ready()
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_not_whole_by_its_deadline_times_out_then_and_not_before() {
        let timer = HeadTimer::default();
        let mut head = timer.sleep(Duration::from_secs(10));
        assert!(!ready(&mut head));
        tokio::time::advance(Duration::from_millis(9_999)).await;
        assert!(!ready(&mut head));
        tokio::time::advance(Duration::from_millis(2)).await;
        assert!(ready(&mut head));
    }

    #[tokio::test(start_paused = true)]
    async fn each_head_gets_its_whole_timeout_although_an_earlier_one_armed_the_clock() {
        let timer = HeadTimer::default();
        // The first head waits, then arrives after 6 s (its sleep is dropped unfired).
        let mut first = timer.sleep(Duration::from_secs(10));
        assert!(!ready(&mut first));
        tokio::time::advance(Duration::from_secs(6)).await;
        drop(first);
        // The next head's deadline is 16 s; the clock is still armed for 10 s.
        let mut second = timer.sleep(Duration::from_secs(10));
        assert!(!ready(&mut second));
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(
            !ready(&mut second),
            "timed out at the first head's deadline"
        );
        tokio::time::advance(Duration::from_millis(4_999)).await;
        assert!(!ready(&mut second));
        tokio::time::advance(Duration::from_millis(2)).await;
        assert!(ready(&mut second));
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_polled_only_after_its_deadline_times_out_at_once() {
        let timer = HeadTimer::default();
        let mut first = timer.sleep(Duration::from_secs(10));
        assert!(!ready(&mut first));
        drop(first);
        let mut second = timer.sleep(Duration::from_secs(12));
        // Not polled until both deadlines have passed: the clock fired for the first.
        tokio::time::advance(Duration::from_secs(20)).await;
        assert!(ready(&mut second));
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_deadline_than_the_armed_one_is_kept() {
        let timer = HeadTimer::default();
        let mut late = timer.sleep(Duration::from_secs(30));
        assert!(!ready(&mut late));
        drop(late);
        let mut early = timer.sleep(Duration::from_secs(1));
        assert!(!ready(&mut early));
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(ready(&mut early));
    }
}
