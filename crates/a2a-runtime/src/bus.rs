//! Fan-out of task events to the streams and waiters that follow a task.
//!
//! The bus carries every record appended to a task's log, plus direct message replies (which
//! are not logged). Publishing never blocks: subscribers read through bounded buffers, and a
//! subscriber that falls behind is told it lagged and catches up from the store's log.
//! Cross-replica buses (for example PostgreSQL LISTEN/NOTIFY) feed a local bus like this one.

use std::sync::Arc;

use a2a_types::{Message, TaskState};
use tokio::sync::broadcast;

use crate::registry::{Registered, WeakRegistry};
use crate::store::TaskEventRecord;

/// What travels on the bus for one task.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum BusEvent {
    /// A record appended to the task's log.
    Record(Arc<TaskEventRecord>),
    /// The agent answered with a direct message instead of a task.
    Reply(Arc<Message>),
    /// The task's execution ended without its last events written, because the store
    /// failed: nothing more follows until the store is back (then the task is failed, or,
    /// if it was never created, nothing at all). Local to the process that ran it.
    StoreFailed,
    /// Another process appended to the task's log, which now ends at `seq` in `state`:
    /// the events themselves are read from the shared store. Carried by buses that span
    /// processes ([`EventBus::spans_processes`]).
    Appended {
        /// The log's last sequence number.
        seq: u64,
        /// The task's state after it.
        state: TaskState,
    },
}

/// Why [`BusSubscription::recv`] returned no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecvError {
    /// Events were dropped because the subscriber was too slow: re-read the log.
    #[error("subscriber lagged by {0} events")]
    Lagged(u64),
    /// The bus is gone.
    #[error("bus closed")]
    Closed,
}

/// Publishes and subscribes to per-task events.
///
/// Contract: `publish` never blocks and never fails; every subscription taken before a
/// `publish` call receives that event (or a [`RecvError::Lagged`]), in publish order.
pub trait EventBus: Send + Sync + std::fmt::Debug + 'static {
    /// Sends `event` to the current subscribers of `task_id` (none: dropped).
    fn publish(&self, task_id: &str, event: BusEvent);

    /// Follows `task_id` from now on.
    fn subscribe(&self, task_id: &str) -> BusSubscription;

    /// True when this bus also delivers [`BusEvent::Appended`] for what other processes
    /// write to a shared store. The runtime then watches each execution it runs, so that a
    /// cancel carried out by another process stops it here.
    fn spans_processes(&self) -> bool {
        false
    }
}

/// A subscription to one task's events. Dropping it unsubscribes.
#[derive(Debug)]
pub struct BusSubscription {
    rx: broadcast::Receiver<BusEvent>,
    _guard: Guard,
    _counted: crate::metrics::GaugeHold,
}

/// What a subscription keeps alive until it is dropped.
enum Guard {
    /// The in-process bus's channel entry (removed with its last subscription).
    Channel(#[allow(dead_code)] Arc<Registered<broadcast::Sender<BusEvent>>>),
    /// Whatever another bus needs.
    Other(#[allow(dead_code)] Box<dyn std::any::Any + Send + Sync>),
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Guard")
    }
}

impl BusSubscription {
    /// A subscription fed by `rx`, for an [`EventBus`] outside this crate; `guard` is dropped
    /// with it (to unregister the subscriber, say).
    pub fn new(rx: broadcast::Receiver<BusEvent>, guard: impl Send + Sync + 'static) -> Self {
        Self {
            rx,
            _guard: Guard::Other(Box::new(guard)),
            _counted: crate::metrics::global().subscriber(),
        }
    }

    /// The next event.
    pub async fn recv(&mut self) -> Result<BusEvent, RecvError> {
        self.rx.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => RecvError::Lagged(n),
            broadcast::error::RecvError::Closed => RecvError::Closed,
        })
    }
}

/// The in-process bus: a broadcast channel per followed task, created on the first
/// subscription and dropped with the last one, so tasks nobody follows cost nothing.
#[derive(Debug, Clone)]
pub struct InProcessBus {
    channels: Arc<WeakRegistry<broadcast::Sender<BusEvent>>>,
    capacity: usize,
}

impl Default for InProcessBus {
    /// Subscribers buffer 16 events: the channel's slots are allocated with it, for every
    /// followed task, and a subscriber that falls further behind catches up from the store.
    fn default() -> Self {
        Self::new(16)
    }
}

impl InProcessBus {
    /// A bus whose subscribers buffer up to `capacity` events before lagging.
    pub fn new(capacity: usize) -> Self {
        Self {
            channels: Arc::new(WeakRegistry::default()),
            capacity: capacity.max(1),
        }
    }

    /// Number of tasks with at least one subscriber.
    pub fn followed_tasks(&self) -> usize {
        self.channels.len()
    }
}

impl EventBus for InProcessBus {
    fn publish(&self, task_id: &str, event: BusEvent) {
        if let Some(tx) = self.channels.get(task_id) {
            // An error only means every receiver is gone.
            let _ = tx.send(event);
        }
    }

    fn subscribe(&self, task_id: &str) -> BusSubscription {
        let capacity = self.capacity;
        let channel = self
            .channels
            .get_or_insert_with(task_id, || broadcast::channel(capacity).0);
        BusSubscription {
            rx: channel.subscribe(),
            _guard: Guard::Channel(channel),
            _counted: crate::metrics::global().subscriber(),
        }
    }
}
