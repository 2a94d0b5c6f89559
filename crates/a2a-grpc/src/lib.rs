//! The A2A v1.0 protobuf types and gRPC stubs, generated at build time from the normative
//! `a2a.proto` (package `lf.a2a.v1`), and conversions between them and the ProtoJSON types
//! of [`a2a_types`].

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
pub mod status;

pub use pb::a2a_service_client::A2aServiceClient;
pub use pb::a2a_service_server::{A2aService, A2aServiceServer};

/// The gRPC service name, as in request paths (`/lf.a2a.v1.A2AService/SendMessage`).
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";
