//! Agent2Agent (A2A) server runtime.
//!
//! - [`AgentExecutor`]: what an agent implements (`execute`, `cancel`), given a
//!   [`RequestContext`] and a [`TaskUpdater`] to report status, artifacts and replies.
//! - [`TaskRuntime`]: runs executors detached from requests, owns the per-task append-only
//!   event log (through a [`TaskStore`]) and fans events out (through an [`EventBus`]);
//!   enforces the task lifecycle and carries out cancellation.
//! - [`RequestHandler`]: the protocol semantics of one agent, shared by every binding.
//! - [`A2aServer`]: one agent served in a few lines, with graceful shutdown.
//! - [`transport`]: JSON-RPC 2.0 (v1.0 and v0.3 methods on one endpoint), HTTP+JSON, gRPC
//!   (the `grpc` feature, on by default), SSE streaming, agent cards; [`router`] assembles
//!   them into an axum router and serves it (HTTP/1.1 and HTTP/2 on one port).

pub mod auth;
mod bindings;
pub mod card_signing;
mod handler;
pub mod limits;
mod listen;
pub mod metrics;
pub mod push;
pub mod router;
mod server;
pub mod telemetry;
pub mod transport;

/// The task runtime's event bus (see [`a2a_runtime::bus`]).
pub use a2a_runtime::bus;
/// Task stores (see [`a2a_runtime::store`]).
pub use a2a_runtime::store;
/// The store conformance suite (feature `test-util`).
#[cfg(feature = "test-util")]
pub use a2a_runtime::task_store_conformance;
pub use a2a_runtime::{
    AgentError, AgentExecutor, ArtifactWriter, Binding, CallContext, CancelContext, Canceled,
    EventBus, InMemoryTaskStore, InMemoryTaskStoreConfig, InProcessBus, Principal, Recovery,
    RequestContext, RuntimeConfig, StreamItem, StreamPayload, TaskEventStream, TaskRuntime,
    TaskStore, TaskUpdater, Update, UpdaterError,
};
pub use handler::{DEFAULT_PAGE_SIZE, HandlerConfig, RequestHandler, SendAnswer, TaskAnswer};
pub use limits::{CallerKeying, CallerRate, CallerStreams, PeerAddr};
pub use listen::{ConnectionLimits, Tls, open_file_limit, raise_open_file_limit};
pub use router::{
    Bindings, ServeOptions, agent_routes, agent_rpc_routes, card_routes, grpc_routes,
    metrics_routes, serve, serve_with_drain, serve_with_limits, serve_with_tls, spawn_local,
};
pub use server::{A2aServer, LocalServer, shutdown_signal};
pub use transport::card::CardCompat;

pub use a2a_types as types;

/// What an agent needs, in one import: `use a2a_server::prelude::*;`.
pub mod prelude {
    pub use crate::types::{AgentCard, AgentSkill, Artifact, Message, Part, TaskState};
    pub use crate::{
        A2aServer, AgentError, AgentExecutor, CancelContext, RequestContext, TaskUpdater,
        async_trait,
    };
}
/// The attribute agents implement [`AgentExecutor`] with, re-exported so that they need not
/// depend on `async-trait` themselves: `#[a2a_server::async_trait]`.
pub use async_trait::async_trait;

use std::sync::Arc;

/// Builds a [`RequestHandler`] for `executor` with the in-memory store and bus.
pub fn in_memory_handler(
    executor: Arc<dyn AgentExecutor>,
    card: a2a_types::AgentCard,
) -> RequestHandler {
    in_memory_handler_with(executor, card, HandlerConfig::default())
}

/// The same, with a handler configuration of its own (push delivery, limits, …).
pub fn in_memory_handler_with(
    executor: Arc<dyn AgentExecutor>,
    card: a2a_types::AgentCard,
    config: HandlerConfig,
) -> RequestHandler {
    let runtime = TaskRuntime::new(
        executor,
        Arc::new(InMemoryTaskStore::default()),
        Arc::new(InProcessBus::default()),
        RuntimeConfig::default(),
    );
    RequestHandler::new(runtime, card, config)
}
