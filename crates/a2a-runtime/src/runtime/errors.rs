//! How the runtime's failures reach callers: store failures (an unreachable store is
//! `UNAVAILABLE`, anything else an internal error with its cause logged) and the lifecycle
//! refusals every caller words the same way.

use std::sync::atomic::Ordering;

use a2a_types::{A2aError, TaskState};

use crate::store::StoreError;
use crate::updater::UpdaterError;

/// A failure of the store, as the runtime meets it (directly, or through an updater).
pub trait StoreFailure: std::fmt::Display {
    /// The store cannot be reached right now (a retry may succeed).
    fn unavailable(&self) -> bool;
}

impl StoreFailure for StoreError {
    fn unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

impl StoreFailure for UpdaterError {
    fn unavailable(&self) -> bool {
        matches!(self, Self::Store(e) if e.unavailable())
    }
}

/// A store failure as the caller sees it, without server details: an unreachable store is
/// `Unavailable` (retry later; logged at most once a second, since an outage fails every
/// request), anything else an internal error (logged with its cause).
pub fn store_failure(e: impl StoreFailure) -> A2aError {
    if e.unavailable() {
        static LAST_LOGGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if LAST_LOGGED.swap(now, Ordering::Relaxed) != now {
            tracing::warn!(error = %e, "the task store is unavailable");
        }
        return A2aError::Unavailable {
            detail: "the task store cannot be reached right now; retry later".into(),
        };
    }
    tracing::error!(error = %e, "task store failure");
    A2aError::internal("the task store failed; see server logs")
}

/// The answer to a send whose task could not be created because the store failed (the
/// cause is in the server's log): nothing was done that a retry would repeat.
pub fn task_not_created() -> A2aError {
    A2aError::Unavailable {
        detail:
            "the task could not be created: the task store cannot be reached right now; retry later"
                .into(),
    }
}

/// How a stream ends when its task's events cannot be written (`never_created`: the task
/// does not exist).
pub(crate) fn events_not_written(never_created: bool) -> A2aError {
    if never_created {
        return task_not_created();
    }
    A2aError::Unavailable {
        detail: "the task's events cannot be written: the task store cannot be reached right now; the task will be failed once it is back (subscribe again later)".into(),
    }
}

/// A message sent to a task that ended.
pub fn terminal_task(task_id: &str, state: TaskState) -> A2aError {
    A2aError::unsupported(format!(
        "task {task_id} is in terminal state {state} and cannot accept further messages"
    ))
}
