//! One module per subcommand.

pub(crate) mod bench;
mod bench_conn;
pub(crate) mod chat;
pub(crate) mod client;
pub(crate) mod common;
pub(crate) mod floor;
pub(crate) mod otlp_sink;
pub(crate) mod push;
pub(crate) mod serve;
