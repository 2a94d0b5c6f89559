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

/// A finished task is kept in its stored form: it reads back as it was written (snapshot,
/// records with their numbers and states, owner), and listings still find it by context and
/// owner.
#[tokio::test]
async fn a_finished_task_reads_back_as_written() {
    use a2a_server::store::{TaskQuery, codec, project};
    use a2a_types::{Artifact, Message, Part, TaskArtifactUpdateEvent};

    let store = InMemoryTaskStore::default();
    let mut task = Task::new("t", "ctx-1", TaskState::Submitted);
    task.history.push(Message::user_text("hello \"quoted\" ✓"));
    let events = vec![
        TaskEvent::Created(task),
        TaskEvent::Owner("token:alice".into()),
        TaskEvent::Status(TaskStatusUpdateEvent::new(
            "t",
            "ctx-1",
            TaskStatus::with_message(TaskState::Working, Some(Message::agent_text("working"))),
        )),
        TaskEvent::Artifact(TaskArtifactUpdateEvent::new(
            "t",
            "ctx-1",
            Artifact::new("a", vec![Part::text("out")]),
            false,
            true,
        )),
    ];
    let mut written = store.append("t", 0, events).await.unwrap();
    let done = TaskStatusUpdateEvent::new(
        "t",
        "ctx-1",
        TaskStatus::with_message(TaskState::Completed, Some(Message::agent_text("done"))),
    );
    written.extend(
        store
            .append("t", 4, vec![TaskEvent::Status(done)])
            .await
            .unwrap(),
    );
    // Another context's task, finished too, that the listing must leave out.
    store
        .append(
            "u",
            0,
            vec![TaskEvent::Created(Task::new(
                "u",
                "ctx-2",
                TaskState::Completed,
            ))],
        )
        .await
        .unwrap();

    // Compared in their stored (wire) form: timestamps keep millisecond precision.
    let wire = |t: &Task| serde_json::to_value(t).unwrap();
    let expected = project(written.iter().map(|r| &r.event), None).unwrap();
    let snap = store.get("t", None).await.unwrap().expect("kept");
    assert_eq!(wire(&snap.task), wire(&expected));
    assert_eq!(snap.seq, 5);
    assert_eq!(snap.owner.as_deref(), Some("token:alice"));
    assert_eq!(snap.task.status.state, TaskState::Completed);

    let read = store.events_after("t", 0).await.unwrap();
    assert_eq!(read.len(), written.len());
    for (r, w) in read.iter().zip(&written) {
        assert_eq!((r.seq, r.state), (w.seq, w.state));
        assert_eq!(
            codec::encode(&r.event).unwrap(),
            codec::encode(&w.event).unwrap()
        );
    }
    let tail = store.events_after("t", 3).await.unwrap();
    assert_eq!(
        tail.iter().map(|r| (r.seq, r.state)).collect::<Vec<_>>(),
        [(4, TaskState::Working), (5, TaskState::Completed)]
    );

    let mut query = TaskQuery::default();
    query.page_size = 10;
    query.context_id = Some("ctx-1".into());
    let page = store.list(&query).await.unwrap();
    assert_eq!(page.tasks.len(), 1, "the listing by context finds it");
    assert_eq!(page.tasks[0].id, "t");
    query.context_id = None;
    query.owner = Some("token:alice".into());
    let page = store.list(&query).await.unwrap();
    assert_eq!(page.tasks.iter().map(|t| &*t.id).collect::<Vec<_>>(), ["t"]);
    query.owner = Some("token:bob".into());
    assert_eq!(store.list(&query).await.unwrap().total_size, 0);
}
