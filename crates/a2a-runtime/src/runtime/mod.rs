//! The task runtime: runs executors detached from requests, owns the write path of every
//! task, fans events out and carries out cancellation.

pub(crate) mod active;
mod errors;
mod execution;
mod remote_cancel;
mod stream;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use a2a_types::{A2aError, Message, SendMessageConfiguration, Task, TaskState};
use futures::FutureExt;
use futures::future::{AbortHandle, Abortable};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

pub use self::errors::{StoreFailure, store_failure, task_not_created, terminal_task};
pub use stream::{StreamItem, StreamPayload, TaskEventStream};

use self::active::{ActiveRef, ActiveTask, Ended, ExecutionSlot};
pub use self::execution::Execution;
use self::stream::ClosePolicy;
use crate::bus::{BusEvent, EventBus};
use crate::call::CallContext;
use crate::executor::{AgentError, AgentExecutor, CancelContext, RequestContext};
use crate::metrics::RunOutcome;
use crate::registry::WeakRegistry;
use crate::store::{StoreError, TaskEvent, TaskSnapshot, TaskStore};
use crate::updater::{TaskUpdater, UpdaterError};

type ExecutionFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Settings of the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeConfig {
    /// How long a canceled execution may keep running before it is aborted.
    pub cancel_grace: Duration,
    /// Close streams on `TASK_STATE_AUTH_REQUIRED` (default) or keep them open while the
    /// credentials arrive out of band.
    pub close_stream_on_auth_required: bool,
    /// With a store that several processes share, events another process writes reach the
    /// subscribers here only through the store: streams read the log at this interval while
    /// the in-process bus is quiet. `None` (default): the bus carries every event.
    pub store_poll: Option<Duration>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            cancel_grace: Duration::from_secs(5),
            close_stream_on_auth_required: true,
            store_poll: None,
        }
    }
}

/// Everything [`TaskRuntime::start`] needs to run one message (a request handler fills it in
/// once it has validated the message and resolved its task and context).
#[derive(Debug)]
pub struct StartRequest {
    /// The task (new, or the one continued).
    pub task_id: String,
    /// Its context.
    pub context_id: String,
    /// The client message, ids filled in.
    pub message: Message,
    /// The task being continued, if any. Boxed, as the configuration (as in
    /// [`RequestContext`]): each is 200–330 bytes that a new task's send would copy twice
    /// as `None`, into this request's box and out of it.
    pub existing: Option<Box<Task>>,
    /// `SendMessageRequest.configuration`.
    pub configuration: Option<Box<SendMessageConfiguration>>,
    /// `SendMessageRequest.metadata`.
    pub metadata: Option<Map<String, Value>>,
    /// The call.
    pub call: Arc<CallContext>,
}

/// A started execution.
#[derive(Debug)]
pub struct Started {
    /// When following: the task's events, subscribed before the executor ran.
    pub events: Option<TaskEventStream>,
    /// For a continued task: the snapshot right after the client message was logged.
    pub snapshot: Option<TaskSnapshot>,
    /// The execution (already spawned when following; else to be driven by the caller).
    pub execution: Execution,
}

#[derive(Debug)]
struct Shared {
    executor: Arc<dyn AgentExecutor>,
    store: Arc<dyn TaskStore>,
    bus: Arc<dyn EventBus>,
    active: WeakRegistry<ActiveTask>,
    config: RuntimeConfig,
    next_execution: AtomicU64,
    shutdown: CancellationToken,
    /// Set with `shutdown`, for the check each execution's start makes: a token's
    /// `is_cancelled` takes its lock, and this one is shared by every execution of the runtime.
    shutting_down: AtomicBool,
    /// Every execution, wherever it is polled, so that shutdown can wait for them.
    executions: TaskTracker,
    /// Executions to stop when another process ends their task (a bus that spans processes).
    remote_cancels: remote_cancel::RemoteCancels,
}

impl std::fmt::Debug for dyn AgentExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentExecutor")
    }
}

impl std::fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskStore")
    }
}

/// Runs one agent's tasks. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TaskRuntime {
    shared: Arc<Shared>,
}

impl TaskRuntime {
    /// A runtime for `executor` over `store` and `bus`.
    pub fn new(
        executor: Arc<dyn AgentExecutor>,
        store: Arc<dyn TaskStore>,
        bus: Arc<dyn EventBus>,
        config: RuntimeConfig,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                executor,
                store,
                bus,
                active: WeakRegistry::default(),
                config,
                next_execution: AtomicU64::new(1),
                shutdown: CancellationToken::new(),
                shutting_down: AtomicBool::new(false),
                executions: TaskTracker::new(),
                remote_cancels: remote_cancel::RemoteCancels::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.shared.store
    }

    /// Cancels every running execution (server shutdown); later ones start canceled. Each
    /// has [`RuntimeConfig::cancel_grace`] to end, then it is aborted; a task whose agent
    /// ends without a final state is recorded CANCELED, so its streams get a last event.
    /// [`stopped`](Self::stopped) waits for all of them.
    pub fn shutdown(&self) {
        // Before the walk below: an execution registered after the walk passed its task
        // (see `launch`) reads the flag after taking a lock the walk took after this store.
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        self.shared.shutdown.cancel();
        let grace = self.shared.config.cancel_grace;
        for task in self.shared.active.values() {
            for slot in task.slots().iter() {
                slot.cancel.cancel();
                let slot = slot.clone();
                tokio::spawn(async move { slot.end_within(grace).await });
            }
        }
    }

    /// Waits until no execution is running: after [`shutdown`](Self::shutdown), at most
    /// about the cancel grace period.
    pub async fn stopped(&self) {
        self.shared.executions.close();
        self.shared.executions.wait().await;
    }

    /// Number of tasks being written or executed on this replica.
    pub fn active_tasks(&self) -> usize {
        self.shared.active.len()
    }

    fn policy(&self) -> ClosePolicy {
        ClosePolicy {
            on_interrupted: true,
            on_auth_required: self.shared.config.close_stream_on_auth_required,
        }
    }

    /// The in-process state of a task the store holds.
    fn active(&self, task_id: &str) -> ActiveRef {
        self.shared
            .active
            .get_or_insert_with(task_id, ActiveTask::existing)
    }

    /// Logs the message (for a continued task) and starts the executor. With `follow`, the
    /// task's events are subscribed first and the executor is spawned; without, the caller
    /// drives the execution (see [`Execution`]).
    pub async fn start(&self, req: Box<StartRequest>, follow: bool) -> Result<Started, A2aError> {
        let sh = &self.shared;
        let sub = follow.then(|| sh.bus.subscribe(&req.task_id));
        let exists = req.existing.is_some();
        let active = if exists {
            self.active(&req.task_id)
        } else {
            // A blocking send answers from the log written here (see `WriterState::log`);
            // a stream has no use for it.
            let keep_log = !follow;
            sh.active
                .get_or_insert_with(&req.task_id, || ActiveTask::new_task(keep_log))
        };
        let (cursor, snapshot) = if exists {
            // Boxed: its state (the writer's guard, the store's futures, the snapshot) would
            // otherwise be in every start's future, a new task's too, which its caller holds
            // within its own (a send's, itself boxed).
            Box::pin(self.log_continuation(&active, &req.task_id, &req.message)).await?
        } else {
            (0, None)
        };

        let req = *req;
        let owner = req.call.principal.as_ref().map(|p| p.shared_id().clone());
        let ctx = RequestContext {
            task_id: req.task_id,
            context_id: req.context_id,
            message: req.message,
            task: req.existing,
            configuration: req.configuration,
            metadata: req.metadata,
            call: req.call,
            cancellation: CancellationToken::new(),
            store: Some(sh.store.clone()),
            owner,
        };
        let task_id = ctx.task_id.clone();
        let (fut, updater) = self.launch(&active, ctx, !exists);
        let (events, execution) = match sub {
            Some(sub) => {
                tokio::spawn(fut);
                let policy = self.policy();
                let events = TaskEventStream::new(task_id, sh.store.clone(), sub, cursor, policy)
                    .with_poll(sh.config.store_poll);
                (Some(events), Execution::new(None, updater))
            }
            None => (None, Execution::new(Some(fut), updater)),
        };
        Ok(Started {
            events,
            snapshot,
            execution,
        })
    }

    /// Logs the client message of a continued task, which must not be terminal. Returns the
    /// log's sequence number after it, and the task's snapshot with it.
    async fn log_continuation(
        &self,
        active: &ActiveRef,
        task_id: &str,
        message: &Message,
    ) -> Result<(u64, Option<TaskSnapshot>), A2aError> {
        let sh = &self.shared;
        let mut w = active.writer.lock().await;
        if !w.loaded {
            w.load(&*sh.store, task_id).await.map_err(store_failure)?;
        }
        if w.state.is_terminal() {
            return Err(terminal_task(task_id, w.state));
        }
        let event = TaskEvent::UserMessage(message.clone());
        w.append(&*sh.store, &*sh.bus, task_id, vec![event])
            .await
            .map_err(store_failure)?;
        let cursor = w.seq;
        let snapshot = sh.store.get(task_id, None).await.map_err(store_failure)?;
        Ok((cursor, snapshot))
    }

    /// Registers an execution of `ctx` on `active` (its cancellation token, abort handle and
    /// end signal) and returns it, not yet running, with its updater. With `creates`, the
    /// updater's first write creates the task from `ctx.message`.
    fn launch(
        &self,
        active: &ActiveRef,
        ctx: RequestContext,
        creates: bool,
    ) -> (ExecutionFuture, TaskUpdater) {
        let sh = &self.shared;
        let done = Ended::default();
        let id = sh.next_execution.fetch_add(1, Ordering::Relaxed);
        let updater = TaskUpdater::new(
            ctx.task_id.clone(),
            ctx.context_id.clone(),
            active.clone(),
            sh.store.clone(),
            sh.bus.clone(),
            creates.then(|| ctx.message.clone()),
            ctx.owner.clone(),
        );
        let (abort, registration) = AbortHandle::new_pair();
        let slot = ExecutionSlot {
            id,
            cancel: ctx.cancellation.clone(),
            done: done.clone(),
            abort,
        };
        if sh.bus.spans_processes() {
            sh.remote_cancels.watch(sh, &ctx.task_id, slot.clone());
        }
        active.slots().push(slot);
        // Checked once the slot is in place: a shutdown either finds the slot or was
        // flagged before this (checked before, a shutdown in between would miss both).
        if sh.shutting_down.load(Ordering::SeqCst) {
            ctx.cancellation.cancel();
        }
        let guard = ExecutionGuard {
            active: active.clone(),
            id,
            done,
        };
        let span = crate::telemetry::task_span(&ctx.task_id, &ctx.context_id);
        // Boxed, the context (330 bytes) takes a pointer's room in this execution's future,
        // which lives as long as the agent runs; it moves on into the agent's own future.
        let run = run_execution(self.clone(), Box::new(ctx), updater.clone(), guard);
        let run = Abortable::new(run, registration)
            .map(|_| ())
            .instrument(span);
        let fut: ExecutionFuture = Box::pin(sh.executions.track_future(run));
        (fut, updater)
    }

    /// Cancels a task: asks the executor, fires the cancellation token of its running
    /// executions, records `TASK_STATE_CANCELED` and returns the task. With `owned_by`, a
    /// task someone else owns answers `TaskNotFound`, as one that does not exist.
    pub async fn cancel(
        &self,
        task_id: &str,
        metadata: Option<Map<String, Value>>,
        call: Arc<CallContext>,
        history_length: Option<usize>,
        owned_by: Option<&str>,
    ) -> Result<Task, A2aError> {
        let sh = &self.shared;
        let snap = self.owned_snapshot(task_id, Some(0), owned_by).await?;
        let state = snap.task.status.state;
        if state.is_terminal() {
            return Err(A2aError::TaskNotCancelable {
                task_id: task_id.to_owned(),
                state,
            });
        }
        let active = self.active(task_id);
        let updater = TaskUpdater::new(
            task_id.to_owned(),
            snap.task.context_id.clone(),
            active.clone(),
            sh.store.clone(),
            sh.bus.clone(),
            None,
            None,
        );
        let ctx = CancelContext {
            task: snap.task,
            metadata,
            call,
        };
        let refused = match AssertUnwindSafe(sh.executor.cancel(ctx, updater.clone()))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("the agent panicked while canceling".to_owned()),
        };
        if let Some(reason) = refused {
            tracing::info!(task_id, %reason, "agent refused to cancel");
            let state = self.snapshot(task_id, Some(0)).await?.task.status.state;
            return Err(A2aError::TaskNotCancelable {
                task_id: task_id.to_owned(),
                state,
            });
        }
        let slots: Vec<ExecutionSlot> = active.slots().clone();
        for slot in &slots {
            slot.cancel.cancel();
        }
        match updater.cancel(None).await {
            Ok(()) | Err(UpdaterError::TaskClosed(TaskState::Canceled)) => {}
            Err(UpdaterError::TaskClosed(state)) => {
                return Err(A2aError::TaskNotCancelable {
                    task_id: task_id.to_owned(),
                    state,
                });
            }
            Err(e) => return Err(store_failure(e)),
        }
        let grace = sh.config.cancel_grace;
        for slot in slots {
            tokio::spawn(async move { slot.end_within(grace).await });
        }
        let snap = self.snapshot(task_id, history_length).await?;
        Ok(snap.task)
    }

    /// The task's snapshot with at most `history_length` history messages;
    /// `TaskNotFoundError` when there is none.
    pub async fn snapshot(
        &self,
        task_id: &str,
        history_length: Option<usize>,
    ) -> Result<TaskSnapshot, A2aError> {
        self.shared
            .store
            .get(task_id, history_length)
            .await
            .map_err(store_failure)?
            .ok_or_else(|| A2aError::task_not_found(task_id))
    }

    /// [`snapshot`](Self::snapshot), refusing a task not owned by `owned_by` (when set) as
    /// `TaskNotFound`.
    pub async fn owned_snapshot(
        &self,
        task_id: &str,
        history_length: Option<usize>,
        owned_by: Option<&str>,
    ) -> Result<TaskSnapshot, A2aError> {
        let snap = self.snapshot(task_id, history_length).await?;
        match owned_by {
            Some(o) if snap.owner.as_deref() != Some(o) => Err(A2aError::task_not_found(task_id)),
            _ => Ok(snap),
        }
    }

    /// Fails a task whose execution was lost with the process that ran it (a store's lease
    /// sweep finds such tasks), publishing the failure to its subscribers. Does nothing, and
    /// returns `false`, when an execution of the task runs in this process or the task is no
    /// longer SUBMITTED or WORKING.
    pub async fn fail_abandoned(&self, task_id: &str, reason: &str) -> Result<bool, A2aError> {
        let running = |s: TaskState| matches!(s, TaskState::Submitted | TaskState::Working);
        self.close_from_outside(task_id, running, TaskState::Failed, reason)
            .await
    }

    /// Takes over a task whose execution was lost with the process that ran it: re-runs it
    /// here from its last client message when the agent is [safe to
    /// retry](AgentExecutor::safe_to_retry), else fails it (see
    /// [`fail_abandoned`](Self::fail_abandoned)). `reason` says what happened; subscribers
    /// see it as the status message of the re-run's WORKING state or of the failure.
    pub async fn recover_abandoned(
        &self,
        task_id: &str,
        reason: &str,
    ) -> Result<Recovery, A2aError> {
        let fail = async {
            Ok(match self.fail_abandoned(task_id, reason).await? {
                true => Recovery::Failed,
                false => Recovery::NotNeeded,
            })
        };
        if !self.shared.executor.safe_to_retry() {
            return fail.await;
        }
        let snap = self.snapshot(task_id, None).await?;
        let owner = snap.owner;
        let task = snap.task;
        if !matches!(task.status.state, TaskState::Submitted | TaskState::Working) {
            return Ok(Recovery::NotNeeded);
        }
        let Some(message) = task
            .history
            .iter()
            .rev()
            .find(|m| m.role == a2a_types::Role::User)
            .cloned()
        else {
            // Nothing to re-run from.
            return fail.await;
        };
        let active = self.active(task_id);
        if !active.slots().is_empty() {
            return Ok(Recovery::NotNeeded);
        }
        let ctx = RequestContext {
            task_id: task_id.to_owned(),
            context_id: task.context_id.clone(),
            message,
            task: Some(Box::new(task)),
            configuration: None,
            metadata: None,
            call: Arc::new(CallContext::new(a2a_types::ProtocolVersion::V1)),
            cancellation: CancellationToken::new(),
            store: Some(self.store().clone()),
            owner,
        };
        let (fut, updater) = self.launch(&active, ctx, false);
        // Claim the task first: of two processes recovering it, one appends, the other
        // conflicts and leaves it.
        let note = updater.agent_text(format!("re-running: {reason}"));
        match updater.start_work(Some(note)).await {
            Ok(()) => {
                tokio::spawn(fut);
                Ok(Recovery::Rerun)
            }
            Err(UpdaterError::TaskClosed(_) | UpdaterError::Store(StoreError::Conflict { .. })) => {
                drop(fut); // unregisters the execution
                Ok(Recovery::NotNeeded)
            }
            Err(e) => Err(store_failure(e)),
        }
    }

    /// Cancels a task left waiting for input or authentication for too long (a store's
    /// retention sweep finds them), with `reason` as the status message, publishing it to
    /// subscribers. Returns `false` when the task is no longer waiting.
    pub async fn expire_interrupted(&self, task_id: &str, reason: &str) -> Result<bool, A2aError> {
        self.close_from_outside(
            task_id,
            TaskState::is_interrupted,
            TaskState::Canceled,
            reason,
        )
        .await
    }

    /// Moves a task that no execution here is running, and whose state `applies`, to the
    /// terminal state `to` with `reason` as the status message, through an updater (so
    /// subscribers hear it). `false` when it does not apply or someone else moved it first.
    async fn close_from_outside(
        &self,
        task_id: &str,
        applies: impl Fn(TaskState) -> bool,
        to: TaskState,
        reason: &str,
    ) -> Result<bool, A2aError> {
        let sh = &self.shared;
        let snap = self.snapshot(task_id, Some(0)).await?;
        if !applies(snap.task.status.state) {
            return Ok(false);
        }
        let active = self.active(task_id);
        if !active.slots().is_empty() {
            return Ok(false);
        }
        let updater = TaskUpdater::new(
            task_id.to_owned(),
            snap.task.context_id.clone(),
            active,
            sh.store.clone(),
            sh.bus.clone(),
            None,
            None,
        );
        match updater
            .update_status(to, Some(updater.agent_text(reason)))
            .await
        {
            Ok(()) => Ok(true),
            Err(UpdaterError::TaskClosed(_) | UpdaterError::Store(StoreError::Conflict { .. })) => {
                Ok(false)
            }
            Err(e) => Err(store_failure(e)),
        }
    }

    /// The events of `task_id` after `after_seq`, then live ones until a terminal state;
    /// the task need not exist yet (with `after_seq == 0`, the stream waits for it).
    pub fn follow_from(&self, task_id: &str, after_seq: u64) -> TaskEventStream {
        let sh = &self.shared;
        let sub = sh.bus.subscribe(task_id);
        let stream = TaskEventStream::new(
            task_id.to_owned(),
            sh.store.clone(),
            sub,
            after_seq,
            ClosePolicy::TERMINAL_ONLY,
        );
        // With a durable store the log may be ahead of `after_seq` (written before this
        // subscription, or by another process): read it once rather than wait for a poll,
        // which a store alone on its database skips.
        match sh.config.store_poll {
            Some(_) => stream.with_poll(sh.config.store_poll).catching_up_first(),
            None => stream,
        }
    }

    /// Follows an existing task: the current snapshot first (or, with `after_seq`, the
    /// events logged after it), then live events until a terminal state. Interrupted states
    /// do not end a subscription (spec §3.1.6): the task goes on when its input arrives.
    /// With `owned_by`, a task someone else owns answers `TaskNotFound`, as one that does
    /// not exist.
    pub async fn subscribe(
        &self,
        task_id: &str,
        after_seq: Option<u64>,
        history_length: Option<usize>,
        owned_by: Option<&str>,
    ) -> Result<TaskEventStream, A2aError> {
        let sh = &self.shared;
        // Subscribe before reading, so nothing falls between the read and the first event.
        let sub = sh.bus.subscribe(task_id);
        let snap = self
            .owned_snapshot(task_id, history_length, owned_by)
            .await?;
        let state = snap.task.status.state;
        match after_seq {
            Some(after) if after < snap.seq => {
                let backlog = sh
                    .store
                    .events_after(task_id, after)
                    .await
                    .map_err(store_failure)?;
                Ok(TaskEventStream::new(
                    task_id.to_owned(),
                    sh.store.clone(),
                    sub,
                    after,
                    ClosePolicy::TERMINAL_ONLY,
                )
                .with_poll(sh.config.store_poll)
                .with_backlog(backlog))
            }
            // Resumed at the latest event of a running task: nothing to restate, only what
            // comes next (a snapshot would repeat what the subscriber has seen).
            Some(after) if after >= snap.seq && !state.is_terminal() => Ok(TaskEventStream::new(
                task_id.to_owned(),
                sh.store.clone(),
                sub,
                snap.seq,
                ClosePolicy::TERMINAL_ONLY,
            )
            .with_poll(sh.config.store_poll)),
            _ => {
                if state.is_terminal() {
                    return Err(A2aError::unsupported(format!(
                        "task {task_id} is in terminal state {state}; a finished task cannot be subscribed to (GetTask returns it)"
                    )));
                }
                Ok(TaskEventStream::new(
                    task_id.to_owned(),
                    sh.store.clone(),
                    sub,
                    snap.seq,
                    ClosePolicy::TERMINAL_ONLY,
                )
                .with_poll(sh.config.store_poll)
                .with_snapshot(snap.task, snap.seq, false))
            }
        }
    }
}

/// What [`TaskRuntime::recover_abandoned`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// The task was no longer running, or another process took it over first.
    NotNeeded,
    /// The task failed, with the reason as its status message.
    Failed,
    /// The task runs again here.
    Rerun,
}

/// Removes the execution's slot and signals its end, whether it finished or was aborted.
struct ExecutionGuard {
    active: ActiveRef,
    id: u64,
    done: Ended,
}

impl ExecutionGuard {
    /// Whether the execution's cancellation token was fired (read from its slot, so that the
    /// execution's future holds no clone of the token: each clone and drop takes a lock).
    fn canceled(&self) -> bool {
        self.active
            .slots()
            .iter()
            .any(|s| s.id == self.id && s.cancel.is_cancelled())
    }
}

impl Drop for ExecutionGuard {
    fn drop(&mut self) {
        self.active.slots().retain(|s| s.id != self.id);
        self.done.fire();
    }
}

async fn run_execution(
    runtime: TaskRuntime,
    ctx: Box<RequestContext>,
    updater: TaskUpdater,
    guard: ExecutionGuard,
) {
    let started = std::time::Instant::now();
    let executor = runtime.shared.executor.clone();
    // Moved out by a function, so that the box is freed now, not when this future ends.
    let ctx = unbox(ctx);
    let result = AssertUnwindSafe(executor.execute(ctx, updater.clone()))
        .catch_unwind()
        .await;
    let outcome = match &result {
        Ok(Ok(())) => RunOutcome::Ok,
        Ok(Err(_)) => RunOutcome::Error,
        Err(_) => RunOutcome::Panic,
    };
    crate::metrics::global().executor_run(outcome, started.elapsed());
    // Most agents end their turn themselves; the state to end it for them (an update) is
    // boxed only when needed, so it takes no room in every execution's future.
    let unwritten =
        !updater.turn_ended() && Box::pin(finish(&updater, result, guard.canceled())).await;
    drop(guard);
    if unwritten {
        let task_id = updater.task_id().to_owned();
        // Its streams here end now, rather than wait for the store to come back.
        runtime.shared.bus.publish(&task_id, BusEvent::StoreFailed);
        tokio::spawn(fail_when_store_returns(runtime, task_id));
    }
}

#[allow(clippy::boxed_local)] // taking the box is the point: it is freed here
fn unbox<T>(boxed: Box<T>) -> T {
    *boxed
}

/// Fails a task whose turn could not be ended because its store was failing (the agent's
/// writes failed, and so did the failure that ends its turn), once the store is back: the
/// task does not stay WORKING, and its streams end. Retries with back-off until the store
/// answers or the runtime shuts down; a task that was never created, or that ended, is left.
async fn fail_when_store_returns(runtime: TaskRuntime, task_id: String) {
    const REASON: &str = "the task store could not be reached while this task ran: its remaining events were lost and it did not finish";
    let mut delay = Duration::from_millis(250);
    loop {
        tokio::select! {
            () = runtime.shared.shutdown.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        match runtime.fail_abandoned(&task_id, REASON).await {
            Ok(failed) => {
                if failed {
                    tracing::warn!(task_id, "failed a task whose events could not be written");
                }
                return;
            }
            Err(A2aError::TaskNotFound { .. }) => return,
            Err(_) => delay = (delay * 2).min(Duration::from_secs(10)),
        }
    }
}

/// Ends a turn the executor left open: a task always ends its turn in a terminal or
/// interrupted state, so waiters and streams never hang. True when that could not be
/// written because the store failed (the caller retries once the store is back).
async fn finish(
    updater: &TaskUpdater,
    result: Result<Result<(), AgentError>, Box<dyn std::any::Any + Send>>,
    canceled: bool,
) -> bool {
    let task_id = updater.task_id();
    let reason = match &result {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("agent error: {e}")),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Some(format!("agent panicked: {msg}"))
        }
    };
    if updater.turn_ended() {
        if let Some(reason) = reason {
            tracing::warn!(task_id, %reason, "agent failed after ending its turn");
        }
        return false;
    }
    let (state, text) = if canceled {
        (TaskState::Canceled, "task canceled".to_owned())
    } else {
        let text = reason.unwrap_or_else(|| {
            "agent returned without a final state (completed, failed, rejected, canceled, input or auth required)"
                .to_owned()
        });
        (TaskState::Failed, text)
    };
    if state == TaskState::Failed {
        tracing::warn!(task_id, reason = %text, "failing task");
    }
    match updater
        .update_status(state, Some(updater.agent_text(text)))
        .await
    {
        Ok(()) | Err(UpdaterError::TaskClosed(_)) => false,
        Err(e @ UpdaterError::Store(_)) => {
            tracing::warn!(task_id, error = %e, "could not end the task's turn; retrying once the store is back");
            true
        }
        Err(e) => {
            tracing::error!(task_id, error = %e, "could not end the task's turn");
            false
        }
    }
}
