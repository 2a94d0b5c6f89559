//! The listing indexes: ascending, so that a new task's entries are appended at their end,
//! and read backwards for the newest-first order of a listing, with no sort; the principal
//! index holds owned tasks only (an agent without authentication pays for no entry of it),
//! and an authenticated listing (`principal = ?`) still reads it.

mod common;

use std::sync::Arc;

use a2a_runtime::store::{TaskEvent, TaskQuery, TaskStore};
use a2a_types::{Task, TaskState};

/// The shapes of `SqlTaskStore::list`'s page query, and the index each must read.
const LISTINGS: [(&str, &str); 4] = [
    ("agent_id = ?1", "a2a_tasks_by_status"),
    (
        "agent_id = ?1 AND (status_ms < ?2 OR (status_ms = ?2 AND id < ?3))",
        "a2a_tasks_by_status",
    ),
    ("agent_id = ?1 AND context_id = ?2", "a2a_tasks_by_context"),
    ("agent_id = ?1 AND principal = ?2", "a2a_tasks_by_principal"),
];

fn plan(db: &rusqlite::Connection, filter: &str) -> String {
    let sql = format!(
        "SELECT id, status_ms FROM a2a_tasks WHERE {filter} ORDER BY status_ms DESC, id DESC LIMIT 10"
    );
    common::query_plan(db, &sql, &["agent", "x", "y"])
}

#[tokio::test]
async fn listings_read_their_indexes_backwards_and_only_owned_tasks_are_indexed_by_owner() {
    let url = a2a_store_sql::test_util::sqlite_url();
    let store = a2a_store_sql::SqlTaskStore::connect(&url)
        .await
        .unwrap()
        .scoped("agent");
    for i in 0..6 {
        let id = format!("t{i}");
        let mut events = vec![TaskEvent::Created(Task::new(
            &id,
            "c",
            TaskState::Submitted,
        ))];
        if i % 2 == 0 {
            events.push(TaskEvent::Owner(Arc::from("token:alice")));
        }
        store.append(&id, 0, events).await.unwrap();
    }

    let mut query = TaskQuery::default();
    query.owner = Some(Arc::from("token:alice"));
    query.page_size = 10;
    let page = store.list(&query).await.unwrap();
    let mut ids: Vec<_> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["t0", "t2", "t4"]);

    let db = rusqlite::Connection::open(url.trim_start_matches("sqlite:")).unwrap();
    let definition: String = db
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'a2a_tasks_by_principal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        definition.ends_with("WHERE principal IS NOT NULL"),
        "{definition}"
    );
    for (filter, index) in LISTINGS {
        let plan = plan(&db, filter);
        assert!(plan.contains(index), "{filter}: {plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{filter} sorts: {plan}");
    }
    for index in [
        "a2a_tasks_by_status",
        "a2a_tasks_by_context",
        "a2a_tasks_by_principal",
    ] {
        let definition: String = db
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [index],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!definition.contains("DESC"), "{definition}");
    }
}
