//! Agent host: serves many agents from one process (`/a2a/{agent_id}`), each with its own
//! card, plus the built-in demo agents.

pub mod builtin;
mod host;
pub mod upkeep;

pub use host::{AgentHost, HostAgent};
