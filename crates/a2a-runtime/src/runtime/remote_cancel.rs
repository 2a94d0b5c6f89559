//! Stops an execution here when another process ends its task (a cancel sent to another
//! replica), with a bus that spans processes
//! ([`EventBus::spans_processes`](crate::bus::EventBus::spans_processes)).
//!
//! Most executions end within milliseconds (a blocking send that completes at once), so
//! none is watched from its start: a spawned watcher with its own subscription was about
//! 4 % of the server's profile samples under blocking sends on PostgreSQL, for tasks that
//! were done before it first ran. [`RemoteCancels::watch`] only queues the execution; one
//! sweeper per runtime wakes when the oldest queued execution is [`WATCH_AFTER`] old (plus
//! [`SWEEP_SLACK`], so that one wake-up takes several), and takes up the queued executions
//! at least that old that still run; younger ones stay queued for a later sweep. (Taking
//! them too made the blocking sends queued just before each sweep, a few percent of them
//! under load, pay for a watcher and a store read.) For each, it subscribes to the task's
//! events, then reads the task from the store: a cancel that landed before the
//! subscription is seen there, and every later one on the bus. A remote cancel thus
//! reaches an execution younger than [`WATCH_AFTER`] up to that much (and the slack) later,
//! and an older one as soon as it is notified.
//!
//! The sweeper, and the watchers it starts, run on the Tokio runtime that launched the
//! first execution; if that runtime is shut down while this task runtime lives on, the next
//! launch starts another sweeper on its own.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::Shared;
use super::active::{ActiveRef, ExecutionSlot};
use crate::bus::{BusEvent, BusSubscription, RecvError};
use crate::store::TaskStore;

/// How long an execution may run before it is watched.
const WATCH_AFTER: Duration = Duration::from_millis(50);

/// How much longer than [`WATCH_AFTER`] the oldest queued execution waits, so that under load
/// a sweep takes the executions of this span at once rather than waking for each.
const SWEEP_SLACK: Duration = Duration::from_millis(10);

/// An execution waiting to be watched.
struct Pending {
    task_id: String,
    slot: ExecutionSlot,
    queued: Instant,
}

/// The executions of one runtime waiting to be watched, and its sweeper.
#[derive(Default)]
pub(super) struct RemoteCancels {
    queue: Arc<Queue>,
}

/// What the sweeper holds while it waits: not the runtime, which it would keep alive.
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    /// Wakes the sweeper when the queue stops being empty, or the runtime is dropped.
    woken: Notify,
}

#[derive(Default)]
struct QueueState {
    /// In the order queued (so by [`Pending::queued`]).
    pending: Vec<Pending>,
    /// The sweeper's task, started on first use, and again if the Tokio runtime it ran on
    /// was shut down while this task runtime lived on.
    sweeper: Option<JoinHandle<()>>,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for RemoteCancels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCancels").finish_non_exhaustive()
    }
}

impl RemoteCancels {
    /// Queues `slot`, an execution of `task_id` that just started, to be watched if it still
    /// runs after [`WATCH_AFTER`]. Starts the runtime's sweeper on first use.
    pub(super) fn watch(&self, shared: &Arc<Shared>, task_id: &str, slot: ExecutionSlot) {
        let wake = {
            let mut state = self.queue.lock();
            let new_sweeper = state.sweeper.as_ref().is_none_or(JoinHandle::is_finished);
            if new_sweeper {
                let sweeper = sweep(self.queue.clone(), Arc::downgrade(shared));
                state.sweeper = Some(tokio::spawn(sweeper));
            }
            state.pending.push(Pending {
                task_id: task_id.to_owned(),
                slot,
                // Taken under the lock, so the queue stays in this order.
                queued: Instant::now(),
            });
            // A new sweeper waits for a wake-up even if executions are queued already.
            new_sweeper || state.pending.len() == 1
        };
        if wake {
            self.queue.woken.notify_one();
        }
    }
}

impl Drop for RemoteCancels {
    fn drop(&mut self) {
        // The runtime is gone: the sweeper wakes to find it so, and ends.
        self.queue.woken.notify_one();
    }
}

/// The sweeper: waits for queued executions, and watches those still running once they are
/// [`WATCH_AFTER`] old. Ends once the runtime is dropped.
async fn sweep(queue: Arc<Queue>, shared: Weak<Shared>) {
    loop {
        queue.woken.notified().await;
        // Woken by the runtime's drop, with nothing queued.
        if shared.strong_count() == 0 {
            return;
        }
        // Until the queue is empty: `watch` wakes this only when it stops being empty.
        loop {
            // (A statement of its own: a guard in a `while let` would live through the body.)
            let oldest = queue.lock().pending.first().map(|p| p.queued);
            let Some(oldest) = oldest else {
                break;
            };
            tokio::time::sleep_until(oldest + WATCH_AFTER + SWEEP_SLACK).await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let due = {
                let mut state = queue.lock();
                let now = Instant::now();
                let old = state
                    .pending
                    .partition_point(|p| now.duration_since(p.queued) >= WATCH_AFTER);
                state.pending.drain(..old).collect::<Vec<_>>()
            };
            for Pending { task_id, slot, .. } in due {
                if slot.done.has_fired() {
                    continue;
                }
                // The execution holds its task's entry while it runs.
                let Some(active) = shared.active.get(&task_id) else {
                    continue;
                };
                spawn_watcher(
                    shared.bus.subscribe(&task_id),
                    shared.store.clone(),
                    active,
                    task_id,
                    slot,
                    shared.config.cancel_grace,
                );
            }
        }
    }
}

/// Watches one execution from a subscription taken before: the store first (a cancel that
/// landed before the subscription), then the bus. Fires the execution's cancellation token
/// when another process ended the task, and aborts it if it ignores that for `grace`.
///
/// A subscription that lagged may have dropped the notice, so the store is asked then too.
/// A notice lost outright (a listener reconnecting) leaves the execution running until its
/// next write, which the store refuses because the task moved on.
fn spawn_watcher(
    mut sub: BusSubscription,
    store: Arc<dyn TaskStore>,
    active: ActiveRef,
    task_id: String,
    slot: ExecutionSlot,
    grace: Duration,
) {
    tokio::spawn(async move {
        let ended = tokio::select! {
            () = slot.done.wait() => false,
            ended = ended_remotely(&mut sub, &*store, &active, &task_id) => ended,
        };
        // The entry is not kept past the execution's end by this watcher.
        drop(active);
        if !ended {
            return;
        }
        slot.cancel.cancel();
        slot.end_within(grace).await;
        tracing::info!(
            task_id,
            "task ended by another process: its execution here stopped"
        );
    });
}

/// Whether another process ended the task: the store first, then the bus (the store again
/// after the subscription lagged, as it may have dropped the notice). `false` when the bus
/// closed.
async fn ended_remotely(
    sub: &mut BusSubscription,
    store: &dyn TaskStore,
    active: &ActiveRef,
    task_id: &str,
) -> bool {
    loop {
        if ended_elsewhere(store, active, task_id).await {
            return true;
        }
        loop {
            match sub.recv().await {
                Ok(BusEvent::Appended { state, .. }) if state.is_terminal() => return true,
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return false,
            }
        }
    }
}

/// First pause before a failed store read is retried, and the longest.
const STORE_RETRY: Duration = Duration::from_millis(100);
const STORE_RETRY_MAX: Duration = Duration::from_secs(5);

/// Whether the store holds the task in a terminal state that this process did not write
/// (it may have read it back, after a write of its own conflicted with it). A read that
/// fails is retried, with back-off, until one succeeds.
async fn ended_elsewhere(store: &dyn TaskStore, active: &ActiveRef, task_id: &str) -> bool {
    let mut retry = STORE_RETRY;
    loop {
        match store.get(task_id, Some(0)).await {
            Ok(Some(snap)) if snap.task.status.state.is_terminal() => {
                return !active.writer.lock().await.ended_here;
            }
            Ok(_) => return false,
            Err(e) => {
                tracing::debug!(task_id, error = %e, ?retry, "could not read the task to check for a cancel from elsewhere; retrying");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(STORE_RETRY_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime's drop wakes the sweeper with nothing queued: it ends rather than waiting
    /// for executions that will never come.
    #[tokio::test]
    async fn the_sweeper_ends_with_its_runtime() {
        let queue = Arc::new(Queue::default());
        let sweeper = tokio::spawn(sweep(queue.clone(), Weak::new()));
        queue.woken.notify_one();
        let ended = tokio::time::timeout(Duration::from_secs(10), sweeper).await;
        assert!(ended.is_ok(), "the sweeper outlived its runtime");
    }
}
