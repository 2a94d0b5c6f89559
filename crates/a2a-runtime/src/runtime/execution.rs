//! An execution that runs on the caller's task until the caller stops waiting, then goes on
//! detached.
//!
//! A blocking `SendMessage` drives its agent inline: no spawn, no channel, no cross-thread
//! wake-up on the hot path. When the request stops waiting (the turn ended, or the client
//! went away and the request future was dropped), whatever is left of the execution is
//! spawned onto the runtime, so the agent's work never depends on the request.

use std::future::Future;
use std::pin::Pin;

use crate::updater::{TaskUpdater, Turn};

type ExecutionFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A started execution and the updater it writes through.
pub struct Execution {
    fut: Option<ExecutionFuture>,
    updater: TaskUpdater,
}

impl std::fmt::Debug for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("running_inline", &self.fut.is_some())
            .field("updater", &self.updater)
            .finish()
    }
}

impl Execution {
    /// An execution still to be driven (`fut`), or already spawned (`None`).
    pub(crate) fn new(fut: Option<ExecutionFuture>, updater: TaskUpdater) -> Self {
        Self { fut, updater }
    }

    /// The updater of the execution.
    pub fn updater(&self) -> &TaskUpdater {
        &self.updater
    }

    /// Drives the execution on the caller's task until `done` holds for its turn, or the
    /// execution finishes.
    pub async fn drive_until(&mut self, done: impl Fn(&Turn) -> bool) {
        loop {
            if self.updater.with_turn(&done) {
                return;
            }
            match self.fut.as_mut() {
                Some(fut) => {
                    tokio::select! {
                        biased;
                        () = fut => {
                            self.fut = None;
                            return;
                        }
                        () = self.updater.turn_changed() => {}
                    }
                }
                None => self.updater.turn_changed().await,
            }
        }
    }

    /// Lets the rest of the execution run on its own.
    pub fn detach(&mut self) {
        // Most agents return right after their final update: finish them here rather than
        // paying for a spawn (and a wake-up of another worker thread) per request.
        if let Some(fut) = self.fut.as_mut()
            && futures::FutureExt::now_or_never(fut).is_some()
        {
            self.fut = None;
        }
        if let Some(fut) = self.fut.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(fut);
                }
                Err(_) => tracing::warn!("no runtime to detach an execution onto; dropping it"),
            }
        }
    }
}

impl Drop for Execution {
    fn drop(&mut self) {
        self.detach();
    }
}
