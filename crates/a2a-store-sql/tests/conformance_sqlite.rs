//! The SQLite store passes the shared store conformance suite.

mod common;

a2a_runtime::task_store_conformance!(async {
    common::dyn_store(a2a_store_sql::test_util::sqlite().await)
});
