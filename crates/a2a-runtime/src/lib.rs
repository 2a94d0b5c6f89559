//! Agent2Agent (A2A) task runtime, with no HTTP stack: what runs agents and keeps their tasks,
//! for servers (`a2a-server` puts the protocol bindings on top) and for stores (which
//! implement [`TaskStore`] and [`EventBus`] against this crate alone).
//!
//! - [`AgentExecutor`]: what an agent implements (`execute`, `cancel`), given a
//!   [`RequestContext`] and a [`TaskUpdater`] to report status, artifacts and replies.
//! - [`TaskRuntime`]: runs executors detached from requests, owns the per-task append-only
//!   event log (through a [`TaskStore`]) and fans events out (through an [`EventBus`]);
//!   enforces the task lifecycle and carries out cancellation.
//! - [`store`]: the [`TaskStore`] contract, the in-memory store, and (feature `test-util`)
//!   the conformance suite every store runs.
//! - [`CallContext`], [`Binding`], [`Principal`]: what a call carries into the runtime.
//!
//! ```
//! use std::sync::Arc;
//! use a2a_runtime::{AgentError, AgentExecutor, InMemoryTaskStore, InProcessBus, RequestContext,
//!     RuntimeConfig, TaskRuntime, TaskUpdater, async_trait};
//!
//! struct Echo;
//!
//! #[async_trait]
//! impl AgentExecutor for Echo {
//!     async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
//!         u.complete(Some(u.agent_text(ctx.user_text()))).await?;
//!         Ok(())
//!     }
//! }
//!
//! let runtime = TaskRuntime::new(
//!     Arc::new(Echo),
//!     Arc::new(InMemoryTaskStore::default()),
//!     Arc::new(InProcessBus::default()),
//!     RuntimeConfig::default(),
//! );
//! assert_eq!(runtime.active_tasks(), 0);
//! ```

pub mod bus;
mod call;
mod executor;
pub mod metrics;
mod registry;
mod runtime;
pub mod store;
pub mod telemetry;
mod updater;

pub use a2a_types::Binding;
pub use bus::{EventBus, InProcessBus};
pub use call::{CallContext, Principal};
pub use executor::{AgentError, AgentExecutor, CancelContext, Canceled, RequestContext};
pub use runtime::{
    Execution, Recovery, RuntimeConfig, StartRequest, Started, StoreFailure, StreamItem,
    StreamPayload, TaskEventStream, TaskRuntime, store_failure, task_not_created, terminal_task,
};
pub use store::{InMemoryTaskStore, InMemoryTaskStoreConfig, TaskStore};
pub use updater::{ArtifactWriter, TaskUpdater, Turn, Update, UpdaterError};

pub use a2a_types as types;
/// The attribute agents implement [`AgentExecutor`] with.
pub use async_trait::async_trait;
