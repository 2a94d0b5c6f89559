//! Bindings: thin adapters between the wire and [`RequestHandler`](crate::RequestHandler).

pub mod card;
mod envelope;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "grpc")]
mod grpc_unary;
mod http_request;
pub mod jsonrpc;
mod jsonrpc_request;
pub mod rest;
mod sse;
mod version;

pub use version::{ProtocolVersion, negotiate_version};
