//! Agent host: serves many agents from one process (`/a2a/{agent_id}`), each with its own
//! card, plus the built-in demo agents.

pub mod builtin;
pub mod config;
pub mod exec;
mod host;
pub mod llm;
pub mod remote;
mod serve;
pub mod telemetry;
pub mod upkeep;

pub use host::{AgentHost, HostAgent};
pub use serve::{BoundHost, HostBuilder, HostError, redacted};
