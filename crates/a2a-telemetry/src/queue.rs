//! Finished spans waiting for export: a bounded lock-free queue (the threads that close
//! spans never wait for each other or for the exporter).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;
use tokio::sync::Notify;

use crate::record::SpanRecord;

/// The queue of finished spans.
#[derive(Debug)]
pub(crate) struct Queue {
    pub(crate) spans: ArrayQueue<SpanRecord>,
    pub(crate) batch: usize,
    /// The exporter has been woken for a full batch and has not taken it yet.
    pub(crate) woken: AtomicBool,
    pub(crate) wake: Notify,
    pub(crate) stopping: AtomicBool,
    pub(crate) dropped: AtomicU64,
}

impl Queue {
    pub(crate) fn new(max: usize, batch: usize) -> Self {
        let max = max.max(1);
        Self {
            spans: ArrayQueue::new(max),
            batch: batch.clamp(1, max),
            woken: AtomicBool::new(false),
            wake: Notify::new(),
            stopping: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues a finished span; drops it (and counts it) when the queue is full.
    pub(crate) fn push(&self, span: SpanRecord) {
        if self.spans.push(span).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        if self.spans.len() >= self.batch
            && !self.woken.load(Ordering::Relaxed)
            && !self.woken.swap(true, Ordering::AcqRel)
        {
            self.wake.notify_one();
        }
    }

    /// Moves the next batch (at most `batch` spans) into `into`.
    pub(crate) fn take(&self, into: &mut Vec<SpanRecord>) {
        self.woken.store(false, Ordering::Release);
        while into.len() < self.batch {
            match self.spans.pop() {
                Some(span) => into.push(span),
                None => break,
            }
        }
    }
}
