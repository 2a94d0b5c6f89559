//! Agent2Agent (A2A) agent host: many agents in one process, each at `/a2a/{agent_id}` with
//! its own card, their tasks kept where you say (an SQLite file, PostgreSQL shared by
//! replicas, or memory) — everything `a2a serve` does, as a library.
//!
//! - [`HostBuilder`]: agents from code or a config file, the store and the event bus that
//!   goes with it, leases, retention, push delivery, authentication, TLS, connection limits,
//!   metrics, graceful shutdown.
//! - [`config`]: the TOML config file (`builtin`, `exec`, `llm` and `remote` agents).
//! - [`exec`], [`llm`], [`remote`]: agents that run a command per message, talk to an
//!   OpenAI-compatible model, or forward to another A2A agent; [`builtin`]: the demo agents.
//! - [`telemetry`]: the log lines and OTLP trace export `a2a serve` installs.
//! - The inspector (`a2a-inspector`), a web console at `/inspector/`, on unless
//!   [`HostBuilder::inspector`] turns it off.
//!
//! Two agents whose tasks survive the process (`examples/durable_host.rs`):
//!
//! ```no_run
//! use std::sync::Arc;
//! use a2a_host::{HostBuilder, builtin::builtin, config::ConfiguredAgent};
//! use a2a_server::prelude::*;
//!
//! struct Greeter;
//!
//! #[async_trait]
//! impl AgentExecutor for Greeter {
//!     async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
//!         let hello = u.agent_text(format!("Hello, {}!", ctx.user_text()));
//!         Ok(u.complete(Some(hello)).await?)
//!     }
//! }
//!
//! # async fn demo() -> Result<(), a2a_host::HostError> {
//! let card = AgentCard::new("Greeter", "Greets whoever you name");
//! let host = HostBuilder::new()
//!     .agent(ConfiguredAgent::new("greeter", Arc::new(Greeter), card))
//!     .agent(builtin("slow").expect("a built-in agent"))
//!     .store("sqlite:durable.db")
//!     .bind("127.0.0.1:41242")
//!     .await?;
//! host.serve(a2a_server::shutdown_signal()).await
//! # }
//! ```

pub mod builtin;
pub mod config;
pub mod exec;
mod host;
mod inspect;
pub mod llm;
pub mod remote;
mod serve;
pub mod telemetry;
pub mod upkeep;

pub use host::{AgentHost, HostAgent};
pub use serve::{BoundHost, HostBuilder, HostError, redacted};
