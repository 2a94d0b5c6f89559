//! The PostgreSQL store passes the shared store conformance suite (each test in its own
//! schema of `A2A_TEST_POSTGRES_URL`).

mod common;

a2a_runtime::task_store_conformance!(
    #[cfg_attr(not(a2a_postgres), ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL")]
    optional async { a2a_store_sql::test_util::postgres().await.map(common::dyn_store) }
);
