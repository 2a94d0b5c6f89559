//! The SQLite store passes the shared store conformance suite.

mod common;

a2a_server::task_store_conformance!(async { common::dyn_store(common::sqlite().await) });
