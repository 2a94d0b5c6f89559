//! The live side of one task: its single writer and its running executions.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use a2a_telemetry::AttrValue;
use a2a_types::TaskState;
use futures::future::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::{BusEvent, EventBus};
use crate::registry::Registered;
use crate::store::{StoreError, TaskEvent, TaskEventRecord, TaskStore};
use crate::telemetry;

/// Most records a writer keeps of a task's log (see [`WriterState::log`]).
const MAX_KEPT_LOG: usize = 64;

/// A task that is being written to or executed on this replica.
#[derive(Debug)]
pub(crate) struct ActiveTask {
    /// Serializes every write of the task on this replica, so that the log order, the
    /// lifecycle checks and the publish order agree. Held across the store append on purpose.
    pub(crate) writer: tokio::sync::Mutex<WriterState>,
    /// Executions running for the task (usually one).
    pub(crate) executions: Mutex<Vec<ExecutionSlot>>,
}

impl ActiveTask {
    /// A task that does not exist yet; with `keep_log`, its log is kept while it is
    /// written here (see [`WriterState::log`]).
    pub(crate) fn new_task(keep_log: bool) -> Self {
        Self::with_state(WriterState {
            loaded: true,
            keep_log,
            ..WriterState::default()
        })
    }

    /// A task that exists in the store; its position is read on first write.
    pub(crate) fn existing() -> Self {
        Self::with_state(WriterState::default())
    }

    fn with_state(state: WriterState) -> Self {
        Self {
            writer: tokio::sync::Mutex::new(state),
            executions: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn slots(&self) -> std::sync::MutexGuard<'_, Vec<ExecutionSlot>> {
        self.executions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running `execute` call.
#[derive(Debug, Clone)]
pub(crate) struct ExecutionSlot {
    pub(crate) id: u64,
    /// Fired by `CancelTask`.
    pub(crate) cancel: CancellationToken,
    /// Fired when the execution ends (normally or aborted).
    pub(crate) done: Ended,
    /// Aborts the execution (wherever it is being polled).
    pub(crate) abort: AbortHandle,
}

impl ExecutionSlot {
    /// Once canceled: waits up to `grace` for the execution to end, then aborts it.
    pub(crate) async fn end_within(&self, grace: std::time::Duration) {
        tokio::select! {
            () = self.done.wait() => {}
            () = tokio::time::sleep(grace) => {
                tracing::warn!("aborting an execution that ignored its cancellation");
                self.abort.abort();
            }
        }
    }
}

/// Fired once, when an execution ends; waited for by a cancel's grace period and by the
/// remote-cancel watcher. Not a `CancellationToken`, whose every clone and drop takes its
/// node's lock (and whose cancel walks its children): every execution makes one, and hardly
/// any is waited for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ended(Arc<EndedInner>);

#[derive(Debug, Default)]
struct EndedInner {
    fired: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Ended {
    pub(crate) fn fire(&self) {
        self.0.fired.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub(crate) fn has_fired(&self) -> bool {
        self.0.fired.load(Ordering::SeqCst)
    }

    /// Returns once [`fire`](Self::fire) was called, before or after.
    pub(crate) async fn wait(&self) {
        // A `Notified` made before `notify_waiters` is woken by it, polled or not: made
        // first, it cannot miss a fire that the check below does not see.
        let notified = self.0.notify.notified();
        if self.has_fired() {
            return;
        }
        notified.await;
    }
}

/// What the writer knows about the task's log.
#[derive(Debug, Default)]
pub(crate) struct WriterState {
    /// `seq` and `state` reflect the store.
    pub(crate) loaded: bool,
    /// The task exists in the store.
    pub(crate) created: bool,
    /// Last sequence number.
    pub(crate) seq: u64,
    /// Current state.
    pub(crate) state: TaskState,
    /// Artifacts whose last chunk was sent.
    pub(crate) closed_artifacts: Vec<String>,
    /// The whole log, when this writer created the task for a blocking send and made every
    /// append since, and the store does not keep logs in memory itself: the send answers
    /// from it instead of reading the task back. `None` once another writer's append is
    /// seen. A stream does not keep it (it would hold every event as long as the stream
    /// runs, for nobody).
    pub(crate) log: Option<Vec<Arc<TaskEventRecord>>>,
    /// Keep [`log`](Self::log) from the creation on.
    pub(crate) keep_log: bool,
    /// This process wrote a terminal state (not one it read back from the store after
    /// another process wrote it): a terminal task in the store is then not news from
    /// elsewhere (`remote_cancel.rs`).
    pub(crate) ended_here: bool,
}

impl WriterState {
    /// Reads the task's position from the store.
    pub(crate) async fn load(
        &mut self,
        store: &dyn TaskStore,
        task_id: &str,
    ) -> Result<(), StoreError> {
        let snap = store
            .get(task_id, Some(0))
            .await?
            .ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
        self.seq = snap.seq;
        self.state = snap.task.status.state;
        self.created = true;
        self.loaded = true;
        Ok(())
    }

    /// Appends `events` (the caller has checked the lifecycle), publishes the records and
    /// advances the position.
    pub(crate) async fn append(
        &mut self,
        store: &dyn TaskStore,
        bus: &dyn EventBus,
        task_id: &str,
        events: Vec<TaskEvent>,
    ) -> Result<Vec<Arc<TaskEventRecord>>, StoreError> {
        let creating = !self.created;
        let started = std::time::Instant::now();
        let appended = store.append(task_id, self.seq, events).await;
        let metrics = crate::metrics::global();
        metrics.store_append(started.elapsed());
        let records = match appended {
            Ok(r) => r,
            Err(e @ StoreError::Conflict { .. }) => {
                // Another replica wrote; re-read so the next write starts from the truth.
                self.log = None;
                self.load(store, task_id).await?;
                return Err(e);
            }
            Err(e) => {
                // The append may or may not have been committed (a connection can break
                // during the commit): the next write re-reads where the log stands.
                self.log = None;
                self.loaded = false;
                return Err(e);
            }
        };
        if creating && self.keep_log {
            self.log = Some(Vec::with_capacity(records.len() + 2));
        }
        if let Some(log) = &mut self.log {
            log.extend(records.iter().cloned());
            if log.len() > MAX_KEPT_LOG {
                // A long task: its log is read back when needed instead of held here.
                self.log = None;
            }
        }
        for r in &records {
            if let TaskEvent::Artifact(a) = &r.event
                && a.last_chunk
                && !self.closed_artifacts.contains(&a.artifact.artifact_id)
            {
                self.closed_artifacts.push(a.artifact.artifact_id.clone());
            }
            let created = matches!(r.event, TaskEvent::Created(_));
            if r.state != self.state || created {
                // One line per committed transition (`A2A_LOG=debug`); free when filtered out.
                tracing::debug!(task_id, seq = r.seq, state = r.state.as_str(), "task state");
                metrics.transition((!created).then_some(self.state), r.state);
                telemetry::span_event("a2a.task.status", || {
                    vec![("a2a.state", AttrValue::Static(r.state.as_str()))]
                });
                if r.state.is_terminal() || r.state.is_interrupted() {
                    telemetry::record_state(r.state);
                }
            }
            if let TaskEvent::Artifact(a) = &r.event {
                telemetry::span_event("a2a.task.artifact", || {
                    vec![
                        ("a2a.artifact_id", a.artifact.artifact_id.clone().into()),
                        ("a2a.append", a.append.into()),
                        ("a2a.last_chunk", a.last_chunk.into()),
                    ]
                });
            }
            self.seq = r.seq;
            self.state = r.state;
            self.ended_here |= r.state.is_terminal();
            bus.publish(task_id, BusEvent::Record(r.clone()));
        }
        self.created = true;
        Ok(records)
    }
}

/// Shorthand for the registry entry of an active task.
pub(crate) type ActiveRef = Arc<Registered<ActiveTask>>;
