//! Counters, gauges and histogram cells spread over cache lines, one stripe per thread.
//!
//! Every request adds to the same few series (requests answered, their latency, tasks by
//! state, store append time). With one atomic per series, each addition takes the cache line
//! away from the other cores, and on a busy server the lines of a handful of series go from
//! core to core on every request. Here a thread adds to its own stripe (a line of its own);
//! reading sums the stripes. Threads get stripes in turn, so threads that outnumber the
//! stripes share them, which is still correct, just slower.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// One cache line of eight 64-bit cells.
#[repr(align(64))]
#[derive(Debug, Default)]
pub(crate) struct Line(pub(crate) [AtomicU64; 8]);

/// How many stripes every striped value has: twice the cores (rounded up to a power of
/// two), so that the worker threads rarely share one, at most 16 (a series then takes 1 KiB,
/// a histogram 16 times its cells).
pub(crate) fn stripes() -> usize {
    static STRIPES: OnceLock<usize> = OnceLock::new();
    *STRIPES.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores * 2).next_power_of_two().min(16)
    })
}

/// This thread's stripe, in `0..stripes()`.
#[inline]
pub(crate) fn stripe() -> usize {
    // A `const` thread local without a destructor is one load, with no check of whether it
    // was initialized; the first call on a thread takes the next stripe.
    thread_local! {
        static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    let s = STRIPE.get();
    if s != usize::MAX {
        return s;
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let s = NEXT.fetch_add(1, Ordering::Relaxed) % stripes();
    STRIPE.set(s);
    s
}

/// The wrapping sum of `cells` (one per stripe): a striped value as read.
pub(crate) fn sum<'a>(cells: impl Iterator<Item = &'a AtomicU64>) -> u64 {
    cells
        .map(|c| c.load(Ordering::Relaxed))
        .fold(0, u64::wrapping_add)
}

/// A 64-bit value kept as one cell per stripe, each on its own cache line: the value of a
/// [`Counter`](prometheus_client::metrics::counter::Counter) or a
/// [`Gauge`](prometheus_client::metrics::gauge::Gauge) whose additions from different
/// threads do not meet. The value is the wrapping sum of the cells (a gauge's decrements are
/// added as two's complement). What the `Atomic` methods return is this thread's cell before
/// the change, not the whole value (nothing here reads it); `set` is not atomic with respect
/// to additions made while it runs.
///
/// A read adds the stripes one after the other, so it is not a snapshot: while requests come
/// and go, a gauge whose increment and decrement fell on different stripes (a task that moved
/// to another thread) can read a value it never had, such as -1 requests in flight. Once
/// changes stop, it reads exact.
pub struct Striped(Box<[Line]>);

impl std::fmt::Debug for Striped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Striped").field(&self.sum()).finish()
    }
}

impl Default for Striped {
    fn default() -> Self {
        Self((0..stripes()).map(|_| Line::default()).collect())
    }
}

impl Striped {
    #[inline]
    fn add(&self, v: u64) -> u64 {
        self.0[stripe()].0[0].fetch_add(v, Ordering::Relaxed)
    }

    fn sum(&self) -> u64 {
        sum(self.0.iter().map(|line| &line.0[0]))
    }
}

impl prometheus_client::metrics::counter::Atomic<u64> for Striped {
    fn inc(&self) -> u64 {
        self.add(1)
    }

    fn inc_by(&self, v: u64) -> u64 {
        self.add(v)
    }

    fn get(&self) -> u64 {
        self.sum()
    }
}

impl prometheus_client::metrics::gauge::Atomic<i64> for Striped {
    fn inc(&self) -> i64 {
        self.add(1) as i64
    }

    fn inc_by(&self, v: i64) -> i64 {
        self.add(v as u64) as i64
    }

    fn dec(&self) -> i64 {
        self.add(1u64.wrapping_neg()) as i64
    }

    fn dec_by(&self, v: i64) -> i64 {
        self.add(v.wrapping_neg() as u64) as i64
    }

    fn set(&self, v: i64) -> i64 {
        let before = self.sum() as i64;
        for (i, line) in self.0.iter().enumerate() {
            line.0[0].store(if i == 0 { v as u64 } else { 0 }, Ordering::Relaxed);
        }
        before
    }

    fn get(&self) -> i64 {
        self.sum() as i64
    }
}

/// A counter whose increments from different threads do not meet (see [`Striped`]).
pub type StripedCounter = prometheus_client::metrics::counter::Counter<u64, Striped>;

/// A gauge whose changes from different threads do not meet (see [`Striped`]).
pub type StripedGauge = prometheus_client::metrics::gauge::Gauge<i64, Striped>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_threads_stripe() {
        let counter = StripedCounter::default();
        let gauge = StripedGauge::default();
        std::thread::scope(|s| {
            for _ in 0..(stripes() * 2 + 1) {
                s.spawn(|| {
                    for _ in 0..1000 {
                        counter.inc();
                        gauge.inc();
                        gauge.inc();
                        gauge.dec();
                    }
                    gauge.dec_by(2000);
                });
            }
        });
        let threads = (stripes() * 2 + 1) as u64;
        assert_eq!(counter.get(), threads * 1000);
        // Every thread ended at -1000: a negative sum of wrapped cells.
        assert_eq!(gauge.get(), -1000 * threads as i64);
        gauge.set(7);
        assert_eq!(gauge.get(), 7);
    }
}
