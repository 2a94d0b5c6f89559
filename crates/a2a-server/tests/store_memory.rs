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

/// A task that left its terminal state (the store takes any event its caller appends) is
/// not evicted by the queue entry it got when it first finished.
#[tokio::test]
async fn a_task_no_longer_terminal_is_not_evicted() {
    // One terminal task kept per shard: every task finishing in `a`'s shard pops its entry.
    let store =
        InMemoryTaskStore::new(InMemoryTaskStoreConfig::default().with_max_terminal_tasks(16));
    let created = |id: &str| TaskEvent::Created(Task::new(id, "c", TaskState::Submitted));
    let status = |id: &str, state| {
        TaskEvent::Status(TaskStatusUpdateEvent::new(id, "c", TaskStatus::new(state)))
    };
    store.append("a", 0, vec![created("a")]).await.unwrap();
    store
        .append("a", 1, vec![status("a", TaskState::Completed)])
        .await
        .unwrap();
    store
        .append("a", 2, vec![status("a", TaskState::Working)])
        .await
        .unwrap();
    for i in 0..2_000 {
        let id = format!("t{i}");
        store.append(&id, 0, vec![created(&id)]).await.unwrap();
        store
            .append(&id, 1, vec![status(&id, TaskState::Completed)])
            .await
            .unwrap();
    }
    let a = store.get("a", None).await.unwrap();
    assert_eq!(
        a.map(|s| s.task.status.state),
        Some(TaskState::Working),
        "a working task was evicted"
    );
    assert!(store.len() <= 16 + 1, "store holds {} tasks", store.len());
}
