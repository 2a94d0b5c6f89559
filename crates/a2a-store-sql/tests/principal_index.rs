//! The principal index holds owned tasks only: an agent without authentication pays for no
//! entry of it, and an authenticated listing (`principal = ?`) still reads it.

use std::sync::Arc;

use a2a_runtime::store::{TaskEvent, TaskQuery, TaskStore};
use a2a_types::{Task, TaskState};

const LISTING: &str = "SELECT id, status_ms FROM a2a_tasks WHERE agent_id = ?1 AND principal = ?2
    ORDER BY status_ms DESC, id DESC LIMIT 10";

#[tokio::test]
async fn only_owned_tasks_are_indexed_and_owned_listings_use_the_index() {
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
    let plan: Vec<String> = db
        .prepare(&format!("EXPLAIN QUERY PLAN {LISTING}"))
        .unwrap()
        .query_map(["agent", "token:alice"], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|step| step.contains("a2a_tasks_by_principal")),
        "{plan:?}"
    );
}
