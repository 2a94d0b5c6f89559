//! The in-memory store passes the shared conformance suite, and stays bounded.

use std::sync::Arc;

use a2a_server::store::{InMemoryTaskStore, InMemoryTaskStoreConfig, TaskEvent, TaskStore};
use a2a_types::{Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

a2a_server::task_store_conformance!(async {
    Arc::new(InMemoryTaskStore::default()) as Arc<dyn TaskStore>
});

#[tokio::test]
async fn evicts_old_terminal_tasks_only() {
    let store =
        InMemoryTaskStore::new(InMemoryTaskStoreConfig::default().with_max_terminal_tasks(64));
    store
        .append(
            "running",
            0,
            vec![TaskEvent::Created(Task::new(
                "running",
                "c",
                TaskState::Working,
            ))],
        )
        .await
        .unwrap();
    for i in 0..5_000 {
        let id = format!("t{i}");
        store
            .append(
                &id,
                0,
                vec![TaskEvent::Created(Task::new(
                    &id,
                    "c",
                    TaskState::Submitted,
                ))],
            )
            .await
            .unwrap();
        let done = TaskStatusUpdateEvent::new(&id, "c", TaskStatus::new(TaskState::Completed));
        store
            .append(&id, 1, vec![TaskEvent::Status(done)])
            .await
            .unwrap();
    }
    // Each of the 16 shards keeps its share (64 / 16 = 4) of terminal tasks.
    assert!(store.len() <= 64 + 1, "store holds {} tasks", store.len());
    assert!(
        store.get("running", None).await.unwrap().is_some(),
        "running tasks are never evicted"
    );
    assert!(
        store.get("t4999", None).await.unwrap().is_some(),
        "recent tasks stay"
    );
    assert!(
        store.get("t0", None).await.unwrap().is_none(),
        "old terminal tasks go"
    );
}
