//! Replicas that start at the same moment on an empty PostgreSQL database take turns
//! migrating it; both come up.

use a2a_store_sql::SqlTaskStore;

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[tokio::test]
async fn concurrent_first_starts_both_succeed() {
    let Some(url) = a2a_store_sql::test_util::postgres_schema_url().await else {
        return;
    };
    let (a, b, c) = tokio::join!(
        SqlTaskStore::connect(&url),
        SqlTaskStore::connect(&url),
        SqlTaskStore::connect(&url)
    );
    for store in [a, b, c] {
        store.expect("every replica starts");
    }
}
