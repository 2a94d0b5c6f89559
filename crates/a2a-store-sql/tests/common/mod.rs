//! Stores for tests, as trait objects.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use a2a_runtime::store::TaskStore;
use a2a_store_sql::SqlTaskStore;

/// As a trait object.
pub fn dyn_store(s: SqlTaskStore) -> Arc<dyn TaskStore> {
    Arc::new(s)
}
