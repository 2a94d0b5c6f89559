//! Stores for tests, as trait objects, and the events tests append.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use a2a_runtime::store::{TaskEvent, TaskStore};
use a2a_store_sql::SqlTaskStore;
use a2a_types::{Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

/// Task `id` created, submitted.
pub fn created(id: &str) -> TaskEvent {
    TaskEvent::Created(Task::new(id, "ctx", TaskState::Submitted))
}

/// Task `id` moved to `state`.
pub fn status(id: &str, state: TaskState) -> TaskEvent {
    TaskEvent::Status(TaskStatusUpdateEvent::new(
        id,
        "ctx",
        TaskStatus::new(state),
    ))
}

/// As a trait object.
pub fn dyn_store(s: SqlTaskStore) -> Arc<dyn TaskStore> {
    Arc::new(s)
}

/// SQLite's plan for `sql` with `args` bound (as many as it takes), its steps joined by "; ".
pub fn query_plan(db: &rusqlite::Connection, sql: &str, args: &[&str]) -> String {
    let mut stmt = db.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let params = stmt.parameter_count();
    stmt.query_map(rusqlite::params_from_iter(&args[..params]), |r| {
        r.get::<_, String>(3)
    })
    .unwrap()
    .collect::<Result<Vec<_>, _>>()
    .unwrap()
    .join("; ")
}
