//! Bindings: thin adapters between the wire and [`RequestHandler`](crate::RequestHandler).

pub mod card;
mod envelope;
pub mod jsonrpc;
mod sse;
mod version;

pub use version::{ProtocolVersion, negotiate_version};
