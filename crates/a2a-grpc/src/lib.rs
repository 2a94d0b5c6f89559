//! The A2A v1.0 gRPC binding's building blocks: the protobuf types and `A2AService` stubs,
//! generated at build time from the normative `a2a.proto` (package `lf.a2a.v1`) by a
//! pure-Rust protobuf compiler (no `protoc` needed), conversions between them and the
//! ProtoJSON types of [`a2a_types`], protobuf written straight from those types by reference
//! ([`encode`]), and A2A errors as gRPC statuses ([`status`]). The server
//! (`a2a-server`) and client (`a2a-client`) speak gRPC through this crate; use it directly for
//! a gRPC-only peer of your own.
//!
//! ```
//! use a2a_grpc::pb;
//!
//! // A v1.0 message, as the ProtoJSON model and as the protobuf type.
//! let message = a2a_types::Message::user_text("hello");
//! let wire: pb::Message = message.clone().into();
//! assert_eq!(wire.parts.len(), 1);
//! assert_eq!(a2a_types::Message::from(wire).text_content(), "hello");
//! ```

/// The generated types (`lf.a2a.v1`): messages, the `A2AService` server and client stubs.
#[allow(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    rust_2018_idioms
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
}

pub mod convert;
pub mod encode;
pub mod replay;
pub mod status;

pub use pb::a2a_service_client::A2aServiceClient;
pub use pb::a2a_service_server::{A2aService, A2aServiceServer};

/// The encoded `FileDescriptorSet` of the vendored `a2a.proto` and what it imports
/// (`google/api/*`, `google/protobuf/*`): the normative definition, for reading or checking
/// messages by reflection (field behaviours such as `REQUIRED` included).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptor_set.bin"));

/// The gRPC service name, as in request paths (`/lf.a2a.v1.A2AService/SendMessage`).
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";
